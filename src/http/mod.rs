//! The edge: middleware and handlers, and the router that joins them.
//!
//! Layers, outermost first: sensitive headers marked (so nothing below can log a key) → request
//! id, access log and metrics ([`access_log`], one hand-written layer) → panic guard → handler.
//! A lookup handler first takes [`guard::Admitted`] (load shedding, auth, the per-key rate
//! limit), then its checked name ([`path_name::Name`]), and answers within the request
//! deadline. Operator endpoints (`/healthz`, `/readyz`, `/metrics`, `/openapi.json`, `/docs`)
//! are never shed: a replica busy up to `server.max_in_flight` must not look dead to its probes.

pub mod access_log;
pub mod docs;
pub mod guard;
pub mod handlers;
pub mod openapi;
pub mod path_name;
pub mod request_id;

use axum::Router;
use axum::http::header::{AUTHORIZATION, COOKIE, PROXY_AUTHORIZATION, SET_COOKIE};
use axum::response::IntoResponse;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::sensitive_headers::{
    SetSensitiveRequestHeadersLayer, SetSensitiveResponseHeadersLayer,
};
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::state::AppState;

/// The documented routes, each registered with its OpenAPI operation in one call: the one
/// list of what the API serves. The router, the document and the metrics' route labels all
/// come from it. Lookups first, operator endpoints second (they get different layers).
fn documented() -> (OpenApiRouter<AppState>, OpenApiRouter<AppState>) {
    let lookups = OpenApiRouter::new()
        .routes(routes!(handlers::short_video_profile))
        .routes(routes!(handlers::photo_share_profile));
    let operations = OpenApiRouter::new()
        .routes(routes!(handlers::healthz))
        .routes(routes!(handlers::readyz))
        .routes(routes!(handlers::metrics))
        .routes(routes!(openapi::serve));
    (lookups, operations)
}

/// The OpenAPI document: the root ([`openapi::ApiDoc`]: info, schemas, security, tags) and
/// every documented route.
pub fn document() -> utoipa::openapi::OpenApi {
    let (lookups, operations) = documented();
    let mut document = OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(lookups)
        .merge(operations)
        .into_openapi();
    openapi::state_username_rules(&mut document);
    document
}

/// The whole HTTP application for `state`.
pub fn router(state: AppState) -> Router {
    let (lookups, operations) = documented();
    let (routes, document) = lookups.merge(operations).split_for_parts();
    crate::telemetry::name_routes(document.paths.paths.keys().map(String::as_str));
    routes
        .merge(docs::router())
        .method_not_allowed_fallback(handlers::method_not_allowed)
        .fallback(handlers::not_found)
        .layer(
            ServiceBuilder::new()
                .layer(SetSensitiveRequestHeadersLayer::new([
                    AUTHORIZATION,
                    PROXY_AUTHORIZATION,
                    COOKIE,
                ]))
                .layer(SetSensitiveResponseHeadersLayer::new([SET_COOKIE]))
                .layer(access_log::AccessLogLayer)
                .layer(CatchPanicLayer::custom(|_| {
                    ApiError::Internal.into_response()
                })),
        )
        .with_state(state)
}
