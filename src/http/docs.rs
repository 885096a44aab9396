//! `GET /docs`: Swagger UI over this service's own `/openapi.json`, so people can read the API
//! and try it in a browser without any other tool.
//!
//! The UI's files are compiled into the binary (`utoipa-swagger-ui` with `vendored`): nothing is
//! downloaded at build time or by the browser. The page reads the document `/openapi.json`
//! serves, so the two cannot disagree, and the document lists no servers, so "Try it out" calls
//! this service (same origin) with the key given to "Authorize". Like `/openapi.json` the page
//! itself needs no key; it is not an API operation and is not in the document. The page is
//! titled with the service's name ([`TITLE`]) instead of the UI's own "Swagger UI", so a
//! browser tab or bookmark says whose API it is.

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use utoipa_swagger_ui::{Config, SwaggerUi};

/// Where the page lives; `/docs` redirects to `/docs/`, its files are under `/docs/`.
pub const PATH: &str = "/docs";

/// The page's `<title>`.
pub const TITLE: &str = concat!(env!("CARGO_PKG_NAME"), " API");

/// The title the vendored page comes with.
const UI_TITLE: &str = "<title>Swagger UI</title>";

/// The longest page whose title is replaced; the vendored index is well under it.
const MAX_PAGE_BYTES: usize = 64 * 1024;

/// The routes of the page and its files.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    let config = Config::new(["/openapi.json"])
        // Swagger UI would otherwise send the document to validator.swagger.io for a badge.
        .validator_url("none");
    Router::from(SwaggerUi::new(PATH).config(config)).layer(axum::middleware::map_response(titled))
}

/// The page with [`TITLE`] in place of the UI's own; every other file as it is.
async fn titled(response: Response) -> Response {
    let html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    let encoded = response.headers().contains_key(header::CONTENT_ENCODING);
    if !html || encoded {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_PAGE_BYTES).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let page =
        String::from_utf8_lossy(&bytes).replace(UI_TITLE, &format!("<title>{TITLE}</title>"));
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    Response::from_parts(parts, Body::from(page))
}
