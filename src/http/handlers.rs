//! The handlers: the lookup of every platform (one generic handler, routed once per
//! registered platform) and the operator endpoints.

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::cache::{Entry, Served, Stored};
use crate::error::ApiError;
use crate::header_text::{self, Part};
use crate::http::access_log::LookupLog;
use crate::http::guard::Admitted;
use crate::http::path_name::Name;
use crate::platform::Site;
use crate::state::AppState;
use crate::username::Username;

/// `GET /{platform}/profile/{username}`: one lookup on site `S`, once [`Admitted`]: the name
/// checked (400 otherwise), then the cache or the one flight that fetches it, within the
/// request deadline. The OpenAPI document describes it per platform
/// ([`super::openapi::lookup_path`]).
pub async fn lookup<S: Site>(
    State(state): State<AppState>,
    admitted: Admitted,
    name: Result<Name<S>, ApiError>,
) -> Response {
    let name = match name {
        Ok(Name { name, .. }) => name,
        Err(invalid) => {
            let answer = std::future::ready(invalid.into_response());
            return admitted
                .answer(&state, answer, || ApiError::UpstreamUnavailable)
                .await;
        }
    };
    let late = || late_answer::<S>(&state, &name);
    admitted
        .answer(&state, lookup_name::<S>(&state, &name), late)
        .await
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

/// A checked name on site `S`: from the cache, or through the one flight that fetches it.
async fn lookup_name<S: Site>(state: &AppState, name: &Username) -> Response {
    // The fetch gets its own copy of the name from the cache, and only when it runs: a hit
    // copies nothing. While it runs, the platform's answers to it are kept for the callers
    // whose deadline passes first (`late_answer`).
    let flight = state.clone();
    let served = state
        .cache()
        .get_or_fetch(name, move |name| async move {
            let source = flight.sources().of::<S>();
            let _listening = source.last_words().listen(&name);
            source.lookup(&name).await
        })
        .await;
    let (response, log) = match served {
        Served::Fresh {
            entry,
            fetched,
            max_age,
        } => {
            let log = LookupLog {
                cache: if fetched { "miss" } else { "hit" },
                upstream: if fetched {
                    outcome_label(&entry.value)
                } else {
                    "-"
                },
                upstream_requests: if fetched { entry.upstream_requests } else { 0 },
                source: entry.source.unwrap_or("-"),
            };
            (stored_response(&entry, max_age, log.cache), log)
        }
        Served::Stale { entry, failure } => {
            let log = LookupLog {
                cache: "stale",
                upstream: failure.failure.label(),
                upstream_requests: failure.upstream_requests,
                source: entry.source.unwrap_or("-"),
            };
            (stored_response(&entry, 0, "stale"), log)
        }
        Served::Failed(report) => {
            let log = LookupLog {
                cache: "miss",
                upstream: report.failure.label(),
                upstream_requests: report.upstream_requests,
                source: report.source.unwrap_or("-"),
            };
            let mut response = ApiError::from(report.failure).into_response();
            if let Some(source) = report.source {
                response
                    .headers_mut()
                    .insert(X_SOURCE.clone(), HeaderValue::from_static(source));
            }
            (response, log)
        }
    };
    log.record();
    response
}

fn outcome_label(stored: &Stored) -> &'static str {
    match stored {
        Stored::Found { private: true, .. } => "private",
        Stored::Found { .. } => "ok",
        Stored::NotFound => "not_found",
    }
}

/// The `x-cache` header: whether the answer came from the cache (`hit`, `miss`, `stale`).
static X_CACHE: HeaderName = HeaderName::from_static("x-cache");
/// The `x-source` header: the platform source whose answer this is (`page`, `json`, …).
static X_SOURCE: HeaderName = HeaderName::from_static("x-source");

/// Headers a lookup answer ends up with (content type, cache control, age, x-cache, x-source,
/// the two `RateLimit` headers, the request id): room for them up front, so the map is
/// allocated once instead of growing twice on every answer.
const ANSWER_HEADERS: usize = 9;

/// The answer a stored entry gives: the profile body with its freshness headers, or the 404.
fn stored_response(entry: &Entry, max_age: u64, cache: &'static str) -> Response {
    let source = entry.source.map(HeaderValue::from_static);
    let Stored::Found { body, .. } = &entry.value else {
        let mut response = ApiError::ProfileNotFound.into_response();
        if let Some(source) = source {
            response.headers_mut().insert(X_SOURCE.clone(), source);
        }
        return response;
    };
    let mut response = Response::new(Body::from(body.clone()));
    let headers = response.headers_mut();
    headers.reserve(ANSWER_HEADERS);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        seconds_value("private, max-age=", max_age),
    );
    headers.insert(
        header::AGE,
        seconds_value("", entry.stored_at.elapsed().as_secs()),
    );
    headers.insert(X_CACHE.clone(), HeaderValue::from_static(cache));
    if let Some(source) = source {
        headers.insert(X_SOURCE.clone(), source);
    }
    response
}

/// `prefix` then `seconds` in decimal, as a header value.
fn seconds_value(prefix: &str, seconds: u64) -> HeaderValue {
    header_text::joined(&[Part::Text(prefix), Part::Number(seconds)])
        .unwrap_or(HeaderValue::from_static("0"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_values_are_written_whole_up_to_the_largest_u64() {
        assert_eq!(seconds_value("", 0), "0");
        assert_eq!(
            seconds_value("private, max-age=", 599),
            "private, max-age=599"
        );
        assert_eq!(
            seconds_value("private, max-age=", u64::MAX),
            "private, max-age=18446744073709551615"
        );
    }
}
