//! The `x-request-id` of every request and response.
//!
//! A caller's own id is kept when it is sane (1 to 64 characters of letters, digits, `-`, `_`,
//! `.`, `:`), so it can follow a request through a load balancer; anything else is replaced by a
//! fresh UUID, so a hostile id can never reach a log line or a header unescaped.

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue};

/// The header name.
pub static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The id of the current request, for the access log.
#[derive(Clone, Debug)]
pub struct RequestId(pub HeaderValue);

/// Whether an incoming id may be reused as is.
pub fn is_sane(value: &HeaderValue) -> bool {
    let bytes = value.as_bytes();
    (1..=64).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

/// A new random (version 4) UUID.
///
/// Drawn from a fast non-cryptographic generator: an id must be unique, not secret, and asking
/// the kernel for randomness on every request is a system call the hot path does not need.
pub fn fresh_id() -> HeaderValue {
    let mut bytes = [0u8; 16];
    fastrand::fill(&mut bytes);
    let id = uuid::Builder::from_random_bytes(bytes).into_uuid();
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    HeaderValue::from_str(id.hyphenated().encode_lower(&mut text))
        .unwrap_or(HeaderValue::from_static("unknown"))
}

/// Settles the id of `request`: the caller's when sane, else a fresh one; sets it on the
/// request's headers for the layers and handlers inside, and returns it for the response and
/// the log line (the access-log layer does both ends).
pub fn settle(request: &mut Request) -> HeaderValue {
    let id = request
        .headers()
        .get(&X_REQUEST_ID)
        .filter(|v| is_sane(v))
        .cloned()
        .unwrap_or_else(fresh_id);
    request
        .headers_mut()
        .insert(X_REQUEST_ID.clone(), id.clone());
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_ids_are_distinct_v4_uuids() {
        let a = fresh_id();
        let b = fresh_id();
        assert_ne!(a, b);
        let parsed = uuid::Uuid::parse_str(a.to_str().unwrap()).unwrap();
        assert_eq!(parsed.get_version_num(), 4);
        assert!(is_sane(&a));
    }

    #[test]
    fn keeps_sane_ids_only() {
        assert!(is_sane(&HeaderValue::from_static("abc-123_x.y:z")));
        assert!(!is_sane(&HeaderValue::from_static("")));
        assert!(!is_sane(&HeaderValue::from_static("has space")));
        assert!(!is_sane(&HeaderValue::from_str(&"a".repeat(65)).unwrap()));
        assert!(!is_sane(&HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap()));
    }
}
