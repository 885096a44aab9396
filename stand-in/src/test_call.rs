//! One request to a router, for the stand-in's own tests: what came back, as text.

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::Method;
use tower::ServiceExt;

/// What a router answered: status, content type (empty when none) and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Answer {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

/// `router`'s answer to `method path`.
pub(crate) async fn call(router: &Router, method: Method, path: &str) -> Answer {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .body(Body::empty())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = axum::body::to_bytes(response.into_body(), 16 << 20)
        .await
        .unwrap();
    let body = String::from_utf8(body.to_vec()).unwrap();
    Answer {
        status,
        content_type,
        body,
    }
}

/// `router`'s answer to `GET path`.
pub(crate) async fn get(router: &Router, path: &str) -> Answer {
    call(router, Method::GET, path).await
}
