//! The few kinds of HTTP answer every stand-in gives: an HTML page, a JSON document, and the
//! platforms' throttle.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

/// An HTML answer.
pub(crate) fn html(body: Bytes) -> Response {
    typed(body, "text/html; charset=utf-8")
}

/// A JSON answer.
pub(crate) fn json(body: Bytes) -> Response {
    typed(body, "application/json; charset=utf-8")
}

/// A script answer, as the photo-share profile query is served (`text/javascript`).
pub(crate) fn script(body: Bytes) -> Response {
    typed(body, "text/javascript; charset=utf-8")
}

fn typed(body: Bytes, content_type: &'static str) -> Response {
    let mut response = Response::new(Body::from(body));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// The platforms' throttle: 429 with a short `Retry-After`.
pub(crate) fn throttled() -> Response {
    (
        StatusCode::TOO_MANY_REQUESTS,
        // One second, so the demo's single retry waits briefly and the line answers at once.
        [(header::RETRY_AFTER, "1")],
        "Please wait a few minutes before you try again.",
    )
        .into_response()
}
