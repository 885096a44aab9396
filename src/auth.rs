//! Bearer API keys: who is calling.
//!
//! Keys are kept only as SHA-256 digests. A presented token is hashed once and compared with
//! every configured digest in constant time, so neither the time taken nor the answer depends on
//! where a wrong key differs. The key is accepted only in the `Authorization` header (never a
//! query parameter, which ends up in logs), and exactly one such header must be present.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::config::{AuthConfig, parse_digest};
use crate::error::{ApiError, AuthFailure};

/// Longest token looked at; anything longer cannot be a configured key.
const MAX_TOKEN_BYTES: usize = 4096;

/// Which configured key authenticated a request: its position in the key list.
///
/// The rate limiter is keyed by this, never by the raw token, so random tokens cannot grow it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyId(pub u32);

/// The configured keys as digests.
#[derive(Clone, Debug, Default)]
pub struct Keys {
    digests: Vec<[u8; 32]>,
    /// Each key's id for logs and metrics, by [`KeyId`] (see [`Keys::log_ids`]).
    log_ids: Vec<String>,
}

impl Keys {
    /// Digests the plaintext keys and decodes the configured digests.
    pub fn new(auth: &AuthConfig) -> Self {
        let plain = auth.api_keys.iter().map(|k| sha256(k.as_bytes()));
        let hashed = auth.api_key_sha256.iter().filter_map(|d| parse_digest(d));
        let digests: Vec<[u8; 32]> = plain.chain(hashed).collect();
        let log_ids = digests
            .iter()
            .map(|d| d[..4].iter().map(|b| format!("{b:02x}")).collect())
            .collect();
        Self { digests, log_ids }
    }

    /// How many keys are configured (the quota keeps one state per key).
    pub fn count(&self) -> usize {
        self.digests.len()
    }

    /// The name of each key's quota in the fleet's Redis, indexed by [`KeyId`]: a one-way id
    /// of the key's digest, so that neither the key nor its digest is ever written there.
    pub fn fleet_ids(&self) -> Vec<String> {
        self.digests.iter().map(crate::fleet::key_id).collect()
    }

    /// Each key's id for the access log, indexed by [`KeyId`]: the first 8 hex digits of the
    /// key's SHA-256 (`printf %s "$KEY" | sha256sum | cut -c1-8`), never the key. 32 bits
    /// tell a handful of keys apart and say nothing usable about any.
    pub fn log_ids(&self) -> Vec<String> {
        self.log_ids.clone()
    }

    /// The id of `key` (see [`Keys::log_ids`]), `-` for one that is not configured.
    pub fn log_id(&self, key: KeyId) -> &str {
        self.log_ids.get(key.0 as usize).map_or("-", String::as_str)
    }

    /// The key id of a request's single `Authorization: Bearer <key>` header.
    pub fn authenticate(&self, headers: &HeaderMap) -> Result<KeyId, ApiError> {
        let mut values = headers.get_all(AUTHORIZATION).iter();
        let value = match (values.next(), values.next()) {
            (Some(value), None) => value,
            (None, _) => return Err(ApiError::Unauthorized(AuthFailure::Missing)),
            (Some(_), Some(_)) => return Err(ApiError::Unauthorized(AuthFailure::Duplicate)),
        };
        let token =
            bearer_token(value.as_bytes()).ok_or(ApiError::Unauthorized(AuthFailure::Malformed))?;
        let presented = sha256(token);
        let mut matched = None;
        for (index, digest) in self.digests.iter().enumerate() {
            if bool::from(digest.ct_eq(&presented)) {
                matched = Some(KeyId(index as u32));
            }
        }
        matched.ok_or(ApiError::Unauthorized(AuthFailure::Unknown))
    }
}

/// The token of `Bearer <token>`: scheme in any case, one or more spaces, a token of visible
/// ASCII. Tabs, empty tokens, inner spaces and oversized tokens are refused.
fn bearer_token(value: &[u8]) -> Option<&[u8]> {
    let space = value.iter().position(|b| *b == b' ')?;
    let (scheme, rest) = value.split_at(space);
    if !scheme.eq_ignore_ascii_case(b"bearer") {
        return None;
    }
    let token = rest.trim_ascii_start();
    let plausible = !token.is_empty()
        && token.len() <= MAX_TOKEN_BYTES
        && token.iter().all(|b| b.is_ascii_graphic())
        && rest.iter().take_while(|b| **b == b' ').count() == rest.len() - token.len();
    plausible.then_some(token)
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn keys() -> Keys {
        Keys::new(&AuthConfig {
            api_keys: vec!["k-one".into()],
            api_key_sha256: vec![
                // the digest of some other key
                "5dc2ef5d1e7b1b7e0df6b4b0f0d4e5d5e5c2b3f05e2fae1ca0aa4e2d5c9a3b16".into(),
            ],
        })
    }

    fn with(values: &[&[u8]]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(AUTHORIZATION, HeaderValue::from_bytes(v).unwrap());
        }
        headers
    }

    #[test]
    fn accepts_the_scheme_in_any_case() {
        for v in [
            &b"Bearer k-one"[..],
            b"bearer k-one",
            b"BEARER k-one",
            b"Bearer   k-one",
        ] {
            assert_eq!(keys().authenticate(&with(&[v])), Ok(KeyId(0)), "{v:?}");
        }
    }

    #[test]
    fn a_keys_log_id_is_the_head_of_its_sha256() {
        let digest = Sha256::digest(b"k-one");
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        let ids = keys().log_ids();
        assert_eq!(ids[0], hex[..8]);
        assert_eq!(ids[1], "5dc2ef5d");
    }

    #[test]
    fn accepts_digest_configured_keys() {
        let digest = Sha256::digest(b"k-two");
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        let keys = Keys::new(&AuthConfig {
            api_keys: vec![],
            api_key_sha256: vec![hex.to_uppercase()],
        });
        assert_eq!(keys.authenticate(&with(&[b"Bearer k-two"])), Ok(KeyId(0)));
    }

    #[test]
    fn refuses_everything_else_saying_which() {
        let malformed = Err(ApiError::Unauthorized(AuthFailure::Malformed));
        let unknown = Err(ApiError::Unauthorized(AuthFailure::Unknown));
        for (v, expected) in [
            (&b"Bearer"[..], &malformed),
            (b"Bearer ", &malformed),
            (b"Bearer\tk-one", &malformed),
            (b"Basic k-one", &malformed),
            (b"Token k-one", &malformed),
            (b"Bearer k-one ", &malformed),
            (b"Bearer k-on", &unknown),
            (b"Bearer k-one1", &unknown),
            (b"Bearer k-o e", &malformed),
            (b"k-one", &malformed),
        ] {
            assert_eq!(&keys().authenticate(&with(&[v])), expected, "{v:?}");
        }
        assert_eq!(
            keys().authenticate(&HeaderMap::new()),
            Err(ApiError::Unauthorized(AuthFailure::Missing))
        );
        let long = format!("Bearer {}", "a".repeat(8192));
        assert!(keys().authenticate(&with(&[long.as_bytes()])).is_err());
        assert!(keys().authenticate(&with(&[b"Bearer \xff\xfe"])).is_err());
    }

    #[test]
    fn refuses_two_authorization_headers_in_either_order() {
        for pair in [
            [&b"Bearer k-one"[..], b"Bearer wrong"],
            [b"Bearer wrong", b"Bearer k-one"],
        ] {
            assert_eq!(
                keys().authenticate(&with(&pair)),
                Err(ApiError::Unauthorized(AuthFailure::Duplicate))
            );
        }
    }
}
