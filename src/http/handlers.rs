//! The handlers: the lookup of every platform (one generic handler, routed once per
//! registered platform) and the operator endpoints.

use std::pin::pin;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::http::access_log::LogCarrier;
use crate::http::directives::Directives;
use crate::http::guard::Admitted;
use crate::http::lookup_answer::{self, CACHE_STATUS};
use crate::http::path_name::Name;
use crate::platform::Site;
use crate::state::AppState;

/// `GET /{platform}/profile/{username}`: one lookup on site `S`, once [`Admitted`]: the name
/// checked (400 otherwise), then [`crate::lookup::Lookups::look_up`], as fresh as the caller's
/// `Cache-Control` asks ([`Directives`]), within the request deadline; its answer as HTTP,
/// carrying what the lookup did to the access log ([`LogCarrier`], taken last). The OpenAPI
/// document describes it per platform ([`super::openapi::lookup_path`]).
pub async fn lookup<S: Site>(
    State(state): State<AppState>,
    admitted: Admitted,
    Directives(wants): Directives,
    name: Result<Name<S>, ApiError>,
    log: LogCarrier,
) -> Response {
    let name = match name {
        Ok(Name { name, .. }) => name,
        Err(invalid) => return admitted.stamp(&state, invalid.into_response(), None),
    };
    let lookups = state.lookups();
    let looked_up = pin!(lookups.look_up(&name, &wants, admitted.key()));
    let (response, quota) = match admitted.within(looked_up).await {
        Some(answer) => {
            let (mut response, lookup, quota) = lookup_answer::respond(answer);
            log.carry(lookup, &mut response);
            (response, quota)
        }
        // The deadline passed: the lookup goes on without this caller.
        None => {
            let mut late = lookups.late(&name).into_response();
            late.headers_mut().insert(
                CACHE_STATUS.clone(),
                HeaderValue::from_static("profile-lookup; fwd=uri-miss; detail=deadline"),
            );
            (late, None)
        }
    };
    admitted.stamp(&state, response, quota)
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

/// The body of `GET /`: where a newcomer goes next.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Index {
    /// The service's name.
    pub service: &'static str,
    /// The API explained, in a browser (Swagger UI).
    pub docs: &'static str,
    /// The canary's last verdicts and each source's standing.
    pub status: &'static str,
    /// The OpenAPI document.
    pub openapi: &'static str,
    /// The lookups, one per platform, each its method and route template
    /// (`GET /short-video/profile/{username}`; a bearer key required). The method comes first:
    /// a template is not a URL to follow, and a client (or a fuzzer) that follows every string
    /// starting with `/` would ask for a user called `{username}`.
    pub lookups: Vec<String>,
}

/// The index: a short JSON map of the service, so that `GET /` is not a bare 404.
#[utoipa::path(get, path = "/", tag = "operations", operation_id = "index",
    responses((status = 200, description = "Where to go next: `/docs`, `/status`, `/openapi.json` and the lookup routes", content_type = "application/json", body = Index)))]
pub async fn index() -> Response {
    let index = Index {
        service: super::SERVICE_NAME,
        docs: super::docs::PATH,
        status: "/status",
        openapi: "/openapi.json",
        lookups: crate::platform::Platform::ALL
            .iter()
            .map(|p| format!("GET /{p}/profile/{{username}}"))
            .collect(),
    };
    let mut response = axum::Json(index).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
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
