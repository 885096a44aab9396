//! The `x-request-id` of every request and response.
//!
//! A caller's own id is kept when it is sane (1 to 64 characters of letters, digits, `-`, `_`,
//! `.`, `:`), so it can follow a request through a load balancer; anything else is replaced by a
//! fresh UUID, so a hostile id can never reach a log line or a header unescaped.

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

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

/// Middleware: settles the id, exposes it to inner layers and sets it on the response.
pub async fn request_id(mut request: Request, next: Next) -> Response {
    let id = request
        .headers()
        .get(&X_REQUEST_ID)
        .filter(|v| is_sane(v))
        .cloned()
        .unwrap_or_else(|| {
            HeaderValue::from_str(&uuid::Uuid::new_v4().to_string())
                .unwrap_or(HeaderValue::from_static("unknown"))
        });
    request
        .headers_mut()
        .insert(X_REQUEST_ID.clone(), id.clone());
    request.extensions_mut().insert(RequestId(id.clone()));
    let mut response = next.run(request).await;
    response.headers_mut().insert(X_REQUEST_ID.clone(), id);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_sane_ids_only() {
        assert!(is_sane(&HeaderValue::from_static("abc-123_x.y:z")));
        assert!(!is_sane(&HeaderValue::from_static("")));
        assert!(!is_sane(&HeaderValue::from_static("has space")));
        assert!(!is_sane(&HeaderValue::from_str(&"a".repeat(65)).unwrap()));
        assert!(!is_sane(&HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap()));
    }
}
