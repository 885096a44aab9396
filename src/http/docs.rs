//! `GET /docs`: Swagger UI over this service's own `/openapi.json`, so people can read the API
//! and try it in a browser without any other tool.
//!
//! The UI's files are compiled into the binary (`utoipa-swagger-ui` with `vendored`): nothing is
//! downloaded at build time or by the browser. The page reads the document `/openapi.json`
//! serves, so the two cannot disagree, and the document lists no servers, so "Try it out" calls
//! this service (same origin) with the key given to "Authorize". Like `/openapi.json` the page
//! itself needs no key; it is not an API operation and is not in the document.

use axum::Router;
use utoipa_swagger_ui::{Config, SwaggerUi};

/// Where the page lives; `/docs` redirects to `/docs/`, its files are under `/docs/`.
pub const PATH: &str = "/docs";

/// The routes of the page and its files.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    let config = Config::new(["/openapi.json"])
        // Swagger UI would otherwise send the document to validator.swagger.io for a badge.
        .validator_url("none");
    Router::from(SwaggerUi::new(PATH).config(config))
}
