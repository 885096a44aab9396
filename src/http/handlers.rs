//! The handlers: the lookup of every platform (one generic handler, routed once per
//! registered platform) and the operator endpoints.

use std::pin::pin;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::auth::KeyId;
use crate::cache::{Entry, Forward, How, Served, Stored, Wants};
use crate::error::ApiError;
use crate::header_text::{self, Part};
use crate::http::access_log::LookupLog;
use crate::http::directives::Directives;
use crate::http::guard::Admitted;
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

/// The answer and the access-log fields of what the cache served.
fn answer_served(served: Served) -> (Response, LookupLog) {
    match served {
        Served::Stored { entry, how, ttl } => {
            // A fetch joined from another caller is logged as a hit (as `x-cache` says): its
            // upstream work is the caller's that started it.
            let own_fetch = matches!(
                how,
                How::Fetched {
                    collapsed: false,
                    ..
                }
            );
            let cache = if own_fetch { "miss" } else { "hit" };
            let log = LookupLog {
                cache,
                upstream: if own_fetch {
                    outcome_label(&entry.value)
                } else {
                    "-"
                },
                upstream_requests: if own_fetch {
                    entry.upstream_requests
                } else {
                    0
                },
                source: entry.source.unwrap_or("-"),
            };
            let status = status_of(&entry.value);
            let cache_status = match how {
                How::Hit => cache_status(&[Part::Text("hit")], Some(ttl)),
                How::Fetched {
                    forward,
                    collapsed,
                    stored,
                } => {
                    let mut parts = [Part::Text(""); 6];
                    parts[0] = Part::Text(forward_param(forward));
                    parts[1] = Part::Text("; fwd-status=");
                    parts[2] = Part::Number(u64::from(status.as_u16()));
                    let mut n = 3;
                    if stored {
                        parts[n] = Part::Text("; stored");
                        n += 1;
                    }
                    if collapsed {
                        parts[n] = Part::Text("; collapsed");
                        n += 1;
                    }
                    cache_status(&parts[..n], Some(ttl))
                }
            };
            (stored_response(&entry, ttl, cache, cache_status), log)
        }
        Served::Stale {
            entry,
            failure,
            ttl,
        } => {
            let log = LookupLog {
                cache: "stale",
                upstream: failure.failure.label(),
                upstream_requests: failure.upstream_requests,
                source: entry.source.unwrap_or("-"),
            };
            let status = ApiError::from(failure.failure).status();
            let cache_status = cache_status(
                &[
                    Part::Text(forward_param(Forward::Stale)),
                    Part::Text("; fwd-status="),
                    Part::Number(u64::from(status.as_u16())),
                    Part::Text("; detail=stale-if-error"),
                ],
                Some(ttl),
            );
            (stored_response(&entry, ttl, "stale", cache_status), log)
        }
        Served::Failed { report, forward } => {
            let log = LookupLog {
                cache: "miss",
                upstream: report.failure.label(),
                upstream_requests: report.upstream_requests,
                source: report.source.unwrap_or("-"),
            };
            let mut response = ApiError::from(report.failure).into_response();
            let status = response.status();
            let headers = response.headers_mut();
            if let Some(source) = report.source {
                headers.insert(X_SOURCE.clone(), HeaderValue::from_static(source));
            }
            headers.insert(
                CACHE_STATUS.clone(),
                cache_status(
                    &[
                        Part::Text(forward_param(forward)),
                        Part::Text("; fwd-status="),
                        Part::Number(u64::from(status.as_u16())),
                    ],
                    None,
                ),
            );
            (response, log)
        }
        Served::NotCached => (
            not_fetched(ApiError::NotCached, "profile-lookup; detail=only-if-cached"),
            NOT_FETCHED,
        ),
        // Answered from the quota's own refusal by `lookup_name`; this is its stand-in.
        Served::Unpaid => (
            not_fetched(
                ApiError::RateLimited {
                    retry_after: std::time::Duration::from_secs(1),
                },
                "profile-lookup; detail=quota",
            ),
            NOT_FETCHED,
        ),
    }
}

/// The access-log fields of a lookup that asked the platform nothing and served nothing.
const NOT_FETCHED: LookupLog = LookupLog {
    cache: "miss",
    upstream: "-",
    upstream_requests: 0,
    source: "-",
};

/// `error`'s answer with `cache_status`.
fn not_fetched(error: ApiError, cache_status: &'static str) -> Response {
    let mut response = error.into_response();
    response
        .headers_mut()
        .insert(CACHE_STATUS.clone(), HeaderValue::from_static(cache_status));
    response
}

fn outcome_label(stored: &Stored) -> &'static str {
    match stored {
        Stored::Found { private: true, .. } => "private",
        Stored::Found { .. } => "ok",
        Stored::NotFound => "not_found",
    }
}

/// The status a stored answer is given: 200, or 404 for a not-found.
fn status_of(stored: &Stored) -> StatusCode {
    match stored {
        Stored::Found { .. } => StatusCode::OK,
        Stored::NotFound => StatusCode::NOT_FOUND,
    }
}

/// RFC 9211's `fwd` parameter for why a lookup went to the platform.
fn forward_param(forward: Forward) -> &'static str {
    match forward {
        Forward::UriMiss => "fwd=uri-miss",
        Forward::Stale => "fwd=stale",
        Forward::Request => "fwd=request",
    }
}

/// `Cache-Status: profile-lookup; <params>` (RFC 9211), with `; ttl=<ttl>` last when given.
fn cache_status(params: &[Part<'_>], ttl: Option<i64>) -> HeaderValue {
    let mut parts = [Part::Text(""); 12];
    parts[0] = Part::Text("profile-lookup; ");
    let mut n = 1;
    for &param in params.iter().take(parts.len() - 4) {
        parts[n] = param;
        n += 1;
    }
    if let Some(ttl) = ttl {
        parts[n] = Part::Text(if ttl < 0 { "; ttl=-" } else { "; ttl=" });
        parts[n + 1] = Part::Number(ttl.unsigned_abs());
        n += 2;
    }
    header_text::joined(&parts[..n]).unwrap_or(HeaderValue::from_static("profile-lookup"))
}

/// The `Cache-Status` header (RFC 9211): how this cache handled the lookup.
static CACHE_STATUS: HeaderName = HeaderName::from_static("cache-status");
/// The `x-cache` header: whether the answer came from the cache (`hit`, `miss`, `stale`).
/// Deprecated: `Cache-Status` says the same and more; kept for one more release.
static X_CACHE: HeaderName = HeaderName::from_static("x-cache");
/// The `x-source` header: the platform source whose answer this is (`page`, `json`, …).
static X_SOURCE: HeaderName = HeaderName::from_static("x-source");

/// Headers a lookup answer ends up with (content type, cache control, age, cache status,
/// x-cache, x-source, the two `RateLimit` headers, the request id): room for them up front, so
/// the map is allocated once instead of growing twice on every answer.
const ANSWER_HEADERS: usize = 10;

/// The answer a stored entry gives: the profile body with its freshness headers, or the 404;
/// both with a true `Age` and their `Cache-Status`.
fn stored_response(
    entry: &Entry,
    ttl: i64,
    cache: &'static str,
    cache_status: HeaderValue,
) -> Response {
    let source = entry.source.map(HeaderValue::from_static);
    let age = seconds_value("", entry.stored_at.elapsed().as_secs());
    let Stored::Found { body, .. } = &entry.value else {
        let mut response = ApiError::ProfileNotFound.into_response();
        let headers = response.headers_mut();
        if let Some(source) = source {
            headers.insert(X_SOURCE.clone(), source);
        }
        headers.insert(header::AGE, age);
        headers.insert(CACHE_STATUS.clone(), cache_status);
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
        seconds_value("private, max-age=", u64::try_from(ttl).unwrap_or(0)),
    );
    headers.insert(header::AGE, age);
    headers.insert(CACHE_STATUS.clone(), cache_status);
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
