//! The edge: middleware and handlers, and the router that joins them.
//!
//! Layers, outermost first: sensitive headers marked (so nothing below can log a key) →
//! request id → access log and metrics → panic guard → (lookup routes only) load shedding and
//! the request deadline → [`guard`]: auth, then the per-key rate limit → handler. Operator
//! endpoints (`/healthz`, `/readyz`, `/metrics`, `/openapi.json`, `/docs`) are never shed: a
//! replica busy up to `server.max_in_flight` must not look dead to its probes.

pub mod access_log;
pub mod docs;
pub mod guard;
pub mod openapi;
pub mod request_id;
pub mod routes;
pub mod shed;

use axum::Router;
use axum::http::header::{AUTHORIZATION, COOKIE, PROXY_AUTHORIZATION, SET_COOKIE};
use axum::middleware::{from_fn, from_fn_with_state};
use axum::response::IntoResponse;
use axum::routing::get;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::sensitive_headers::{
    SetSensitiveRequestHeadersLayer, SetSensitiveResponseHeadersLayer,
};

use crate::error::ApiError;
use crate::state::AppState;

/// The whole HTTP application for `state`.
pub fn router(state: AppState) -> Router {
    let lookups = Router::new()
        .route(
            "/short-video/profile/{username}",
            get(routes::short_video_profile),
        )
        .route(
            "/photo-share/profile/{username}",
            get(routes::photo_share_profile),
        )
        .route_layer(from_fn_with_state(
            state.clone(),
            guard::authenticate_and_limit,
        ))
        // Only lookups are shed: a busy replica must still answer its probes, scrapes and docs.
        .route_layer(from_fn_with_state(state.clone(), shed::shed_and_deadline));
    let open = Router::new()
        .route("/healthz", get(routes::healthz))
        .route("/readyz", get(routes::readyz))
        .route("/metrics", get(routes::metrics))
        .route("/openapi.json", get(openapi::serve))
        .merge(docs::router());
    lookups
        .merge(open)
        .method_not_allowed_fallback(routes::method_not_allowed)
        .fallback(routes::not_found)
        .layer(
            ServiceBuilder::new()
                .layer(SetSensitiveRequestHeadersLayer::new([
                    AUTHORIZATION,
                    PROXY_AUTHORIZATION,
                    COOKIE,
                ]))
                .layer(SetSensitiveResponseHeadersLayer::new([SET_COOKIE]))
                .layer(from_fn(request_id::request_id))
                .layer(access_log::AccessLogLayer)
                .layer(CatchPanicLayer::custom(|_| {
                    ApiError::Internal.into_response()
                })),
        )
        .with_state(state)
}
