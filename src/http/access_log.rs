//! One log line and one set of metrics per request.
//!
//! The line carries the request id, the route *template* (never the raw path, which is caller
//! text), the status, the latency, and what the lookup did (cache outcome, upstream outcome,
//! upstream requests) when there was one. Headers are never logged, so neither keys nor cookies
//! can leak here.

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;

use crate::error::ApiError;
use crate::http::request_id::RequestId;
use crate::telemetry;

/// What a lookup handler did, attached to its response for this layer to log.
#[derive(Clone, Copy, Debug)]
pub struct LookupLog {
    /// `hit`, `miss` or `stale`.
    pub cache: &'static str,
    /// The upstream outcome label (see [`crate::platform::Lookup::label`]), or `-` on a hit.
    pub upstream: &'static str,
    /// Upstream requests made for this response (0 on a hit).
    pub upstream_requests: u32,
}

/// Middleware: times the request, then logs and counts it.
pub async fn access_log(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_owned();
    let method = request.method().clone();
    let id = request.extensions().get::<RequestId>().cloned();
    telemetry::in_flight(1.0);
    let response = next.run(request).await;
    telemetry::in_flight(-1.0);
    let elapsed = started.elapsed();
    let status = response.status().as_u16();
    telemetry::request_done(&route, status, elapsed);
    let lookup = response.extensions().get::<LookupLog>().copied();
    let code = response.extensions().get::<ApiError>().map(ApiError::code);
    tracing::info!(
        request_id = id.as_ref().and_then(|i| i.0.to_str().ok()).unwrap_or("-"),
        method = %method,
        route = %route,
        status,
        latency_ms = elapsed.as_secs_f64() * 1000.0,
        code = code.unwrap_or("-"),
        cache = lookup.map_or("-", |l| l.cache),
        upstream = lookup.map_or("-", |l| l.upstream),
        upstream_requests = lookup.map_or(0, |l| l.upstream_requests),
        "request"
    );
    response
}
