//! `[auth]`: the API keys, in plaintext or as SHA-256 digests so the config holds no secret.
//!
//! Both lists are read by the private `secret_list` module, whose errors never show a value,
//! and no message here shows one either: a bad entry is named by its position.

use serde::{Deserialize, Serialize};

use super::Section;
use super::secret_list::{self, MAX_KEY_BYTES, fits_bearer};

/// `[auth]`: keys in plaintext, or as hex SHA-256 digests so the config holds no secret.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// Plaintext keys.
    #[serde(deserialize_with = "secret_list::api_keys")]
    pub api_keys: Vec<String>,
    /// Hex SHA-256 digests of keys.
    #[serde(deserialize_with = "secret_list::api_key_sha256")]
    pub api_key_sha256: Vec<String>,
}

impl Section for AuthConfig {
    fn check(&self) -> Result<(), String> {
        if let Some(at) = self
            .api_key_sha256
            .iter()
            .position(|d| parse_digest(d).is_none())
        {
            return Err(format!(
                "auth.api_key_sha256[{at}] must be 64 hex digits, the output of \
                 `printf %s \"$KEY\" | sha256sum` (the value is not shown)"
            ));
        }
        if let Some(at) = self.api_keys.iter().position(|k| !fits_bearer(k)) {
            return Err(format!(
                "auth.api_keys[{at}] can never be sent as `Authorization: Bearer <key>`: a key \
                 is 1 to {MAX_KEY_BYTES} visible ASCII characters, without spaces (the key is \
                 not shown)"
            ));
        }
        Ok(())
    }
}

impl AuthConfig {
    /// The rules of a served API: at least one key, each of at least [`MIN_KEY_CHARS`]
    /// (`profile-lookup serve` checks them; the other commands need no key).
    pub fn check_for_serve(&self) -> Result<(), String> {
        if self.api_keys.is_empty() && self.api_key_sha256.is_empty() {
            return Err(
                "no API key is configured: set auth.api_keys or auth.api_key_sha256 \
                        (or PROFILE_LOOKUP__AUTH__API_KEYS)"
                    .into(),
            );
        }
        if let Some(at) = self.api_keys.iter().position(|k| k.len() < MIN_KEY_CHARS) {
            return Err(format!(
                "auth.api_keys[{at}] is shorter than {MIN_KEY_CHARS} characters: a served key \
                 must not be guessable; make one with `openssl rand -hex 16` (the key is not \
                 shown)"
            ));
        }
        Ok(())
    }
}

/// The fewest characters a plaintext key of a served API has (`openssl rand -hex 16` makes
/// 32): a shorter one could be guessed, and a one-character key is a placeholder left in.
pub const MIN_KEY_CHARS: usize = 16;

/// Decodes a 64-hex-digit SHA-256 digest (either case): the format of `auth.api_key_sha256`,
/// checked here when the settings are validated and decoded by [`crate::auth::Keys`].
pub fn parse_digest(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        *byte = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_hex_digests_strictly() {
        assert!(parse_digest(&"0".repeat(64)).is_some());
        assert!(parse_digest(&"0".repeat(63)).is_none());
        assert!(parse_digest(&"g".repeat(64)).is_none());
    }
}
