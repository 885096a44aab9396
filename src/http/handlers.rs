//! The handlers: the lookup of every platform (one generic handler, routed once per
//! registered platform) and the operator endpoints.

use std::pin::pin;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::auth::KeyId;
use crate::cache::Wants;
use crate::error::ApiError;
use crate::http::directives::Directives;
use crate::http::guard::Admitted;
use crate::http::lookup_answer::{CACHE_STATUS, answer_served, not_fetched};
use crate::http::path_name::Name;
use crate::platform::Site;
use crate::quota::RATELIMIT;
use crate::state::AppState;
use crate::username::Username;

/// `GET /{platform}/profile/{username}`: one lookup on site `S`, once [`Admitted`]: the name
/// checked (400 otherwise), then the cache or the one flight that fetches it, as fresh as the
/// caller's `Cache-Control` asks ([`Directives`]), within the request deadline. The OpenAPI
/// document describes it per platform ([`super::openapi::lookup_path`]).
pub async fn lookup<S: Site>(
    State(state): State<AppState>,
    admitted: Admitted,
    Directives(wants): Directives,
    name: Result<Name<S>, ApiError>,
) -> Response {
    let name = match name {
        Ok(Name { name, .. }) => name,
        Err(invalid) => {
            let answer = pin!(std::future::ready(invalid.into_response()));
            return admitted
                .answer(&state, answer, || ApiError::UpstreamUnavailable)
                .await;
        }
    };
    let late = || late_answer::<S>(&state, &name);
    let key = admitted.key();
    let looked_up = pin!(lookup_name::<S>(&state, &name, &wants, key));
    let mut response = admitted.answer(&state, looked_up, late).await;
    // Only an answer the deadline cut short has none: the lookup goes on without it.
    let headers = response.headers_mut();
    if !headers.contains_key(&CACHE_STATUS) {
        headers.insert(
            CACHE_STATUS.clone(),
            HeaderValue::from_static("profile-lookup; fwd=uri-miss; detail=deadline"),
        );
    }
    response
}

/// The answer of a caller whose deadline passed while the lookup of `name` goes on: the block
/// the platform last answered it (429 `upstream_blocked` with that block's wait), else 500
/// `upstream_unavailable`.
fn late_answer<S: Site>(state: &AppState, name: &Username) -> ApiError {
    match state.sources().of::<S>().last_words().block(name) {
        Some(block) => ApiError::UpstreamBlocked {
            retry_after: block.retry_after,
        },
        None => ApiError::UpstreamUnavailable,
    }
}

/// A checked name on site `S`: from the cache, or through the one flight that fetches it. A
/// fetch the caller forces costs `key` one more quota unit first.
async fn lookup_name<S: Site>(
    state: &AppState,
    name: &Username,
    wants: &Wants,
    key: KeyId,
) -> Response {
    // The fetch gets its own copy of the name from the cache, and only when it runs: a hit
    // copies nothing. While it runs, the platform's answers to it are kept for the callers
    // whose deadline passes first (`late_answer`).
    let flight = state.clone();
    let fetch = move |name: Username| async move {
        let source = flight.sources().of::<S>();
        let _listening = source.last_words().listen(&name);
        source.lookup(&name).await
    };
    // The forced fetch's quota answer; boxed, as it is rare: the slot is part of every hit's
    // future.
    let mut quota = None;
    let slot = &mut quota;
    let pay = move || async move {
        let checked = state.limiter().check_forced(key).await;
        let paid = checked.is_ok();
        *slot = Some(Box::new(checked));
        paid
    };
    let served = state.cache().lookup(name, wants, fetch, pay).await;
    let (mut response, log) = answer_served(served);
    match quota.map(|q| *q) {
        // The forced fetch's unit: the caller's quota as it now stands.
        Some(Ok(left)) => {
            response.headers_mut().insert(RATELIMIT.clone(), left);
        }
        // Unpaid: the quota's own 429, with its wait.
        Some(Err((over, left))) => {
            response = not_fetched(over, "profile-lookup; detail=quota");
            response.headers_mut().insert(RATELIMIT.clone(), left);
        }
        None => {}
    }
    log.record();
    response
}

/// The body of `/healthz` and `/readyz`.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Health {
    /// `ok` (healthz), `ready` or `draining` (readyz).
    pub status: String,
}

/// Liveness: the process is up and answering.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, description = "The process is up: `{\"status\":\"ok\"}`", content_type = "application/json", body = Health)))]
pub async fn healthz() -> Response {
    json_status(StatusCode::OK, r#"{"status":"ok"}"#)
}

/// Readiness: configuration loaded, client built, and not shutting down.
#[utoipa::path(get, path = "/readyz", tag = "operations",
    responses((status = 200, description = "Ready to serve: `{\"status\":\"ready\"}`", content_type = "application/json", body = Health),
              (status = 503, description = "Shutting down, drain this replica: `{\"status\":\"draining\"}`", content_type = "application/json", body = Health)))]
pub async fn readyz(State(state): State<AppState>) -> Response {
    if state.is_ready() {
        json_status(StatusCode::OK, r#"{"status":"ready"}"#)
    } else {
        json_status(StatusCode::SERVICE_UNAVAILABLE, r#"{"status":"draining"}"#)
    }
}

/// Prometheus metrics in the text exposition format.
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, description = "Prometheus text format", content_type = "text/plain", body = String)))]
pub async fn metrics() -> Response {
    crate::telemetry::record_resident_memory();
    let text = crate::telemetry::metrics_handle()
        .map(|h| h.render())
        .unwrap_or_else(|| "# metrics recorder unavailable\n".into());
    let mut response = Response::new(Body::from(text));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

/// Unknown routes: a problem document, not axum's empty 404.
pub async fn not_found() -> ApiError {
    ApiError::NotFound
}

/// Known routes with another method: a problem document with `Allow`.
pub async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}

fn json_status(status: StatusCode, body: &'static str) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
