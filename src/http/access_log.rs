//! One log line and one set of metrics per request.
//!
//! The line carries the request id, the route *template* (never the raw path, which is caller
//! text), the status, the latency, and what the lookup did (cache outcome, upstream outcome,
//! upstream requests) when there was one. Headers are never logged, so neither keys nor cookies
//! can leak here. A request whose client hangs up mid-way still gets its line and leaves the
//! in-flight gauge, with status 499.

use std::cell::Cell;
use std::convert::Infallible;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::{self, Method};
use futures_util::future::BoxFuture;
use tower::{Layer, Service};
use tracing::Instrument;

use crate::error::ApiError;
use crate::http::request_id::{self, RequestId};
use crate::telemetry;

/// What a lookup handler did, handed to this layer with [`LookupLog::record`] to log.
#[derive(Clone, Copy, Debug)]
pub struct LookupLog {
    /// `hit`, `miss` or `stale`.
    pub cache: &'static str,
    /// The upstream outcome label (see [`crate::platform::Lookup::label`]), or `-` on a hit.
    pub upstream: &'static str,
    /// Upstream requests made for this response (0 on a hit).
    pub upstream_requests: u32,
    /// The platform source the answer came from (`x-source`), or `-`.
    pub source: &'static str,
}

tokio::task_local! {
    /// The [`LookupLog`] of the request this task is answering: a slot on the task rather
    /// than a response extension, whose map would cost three allocations per answer.
    static LOOKUP: Cell<Option<LookupLog>>;
}

impl LookupLog {
    /// Hands this to the access log of the request being answered (a no-op outside one).
    pub fn record(self) {
        let _ = LOOKUP.try_with(|slot| slot.set(Some(self)));
    }
}

/// The layer that times each request, then logs and counts it ([`AccessLog`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct AccessLogLayer;

impl<S> Layer<S> for AccessLogLayer {
    type Service = AccessLog<S>;

    fn layer(&self, inner: S) -> AccessLog<S> {
        AccessLog { inner }
    }
}

/// Middleware: times the request, then logs and counts it.
///
/// A hand-written service rather than `axum::middleware::from_fn`: every request passes here,
/// and `from_fn` clones the boxed inner service and boxes a future holding it per request;
/// this calls the inner service in place and boxes one future.
///
/// The accounting lives in a `Pending` guard, not after the `await`: when a client hangs up,
/// hyper drops this future mid-request, and the guard's drop still moves the in-flight gauge
/// back and writes the line, with status 499 (client closed request).
#[derive(Clone, Debug)]
pub struct AccessLog<S> {
    inner: S,
}

impl<S, B> Service<Request> for AccessLog<S>
where
    S: Service<Request, Response = http::Response<B>, Error = Infallible>,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = http::Response<B>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<http::Response<B>, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let id = request_id::settle(&mut request);
        let mut pending = Pending {
            started: Instant::now(),
            method: request.method().clone(),
            id: Some(RequestId(id.clone())),
            route: request.extensions().get::<MatchedPath>().cloned(),
            done: false,
        };
        telemetry::in_flight(1.0);
        // Everything logged while handling the request (the platform layer's warnings, a
        // flight it starts) carries its id.
        let span = tracing::info_span!(
            "request",
            request_id = pending
                .id
                .as_ref()
                .and_then(|i| i.0.to_str().ok())
                .unwrap_or("-")
        );
        let answer = self.inner.call(request).instrument(span);
        Box::pin(LOOKUP.scope(Cell::new(None), async move {
            let Ok(mut response) = answer.await;
            response
                .headers_mut()
                .insert(request_id::X_REQUEST_ID.clone(), id);
            pending.finish(
                response.status().as_u16(),
                LOOKUP.with(Cell::take),
                response.extensions().get::<ApiError>().map(ApiError::code),
            );
            Ok(response)
        }))
    }
}

/// The status logged for a request whose client went away before its answer (nginx's 499).
pub const CLIENT_CLOSED_REQUEST: u16 = 499;

/// One started request: ends in the gauge, the counters and the log exactly once, answered
/// or dropped.
struct Pending {
    started: Instant,
    method: Method,
    id: Option<RequestId>,
    /// The route template (`None`: no route matched).
    route: Option<MatchedPath>,
    done: bool,
}

impl Pending {
    fn finish(&mut self, status: u16, lookup: Option<LookupLog>, code: Option<&'static str>) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        telemetry::in_flight(-1.0);
        let elapsed = self.started.elapsed();
        let route = self
            .route
            .as_ref()
            .map_or(telemetry::UNMATCHED_ROUTE, MatchedPath::as_str);
        telemetry::request_done(route, status, elapsed);
        tracing::info!(
            request_id = self.id.as_ref().and_then(|i| i.0.to_str().ok()).unwrap_or("-"),
            method = %self.method,
            route = %route,
            status,
            latency_ms = elapsed.as_secs_f64() * 1000.0,
            code = code.unwrap_or("-"),
            cache = lookup.map_or("-", |l| l.cache),
            upstream = lookup.map_or("-", |l| l.upstream),
            upstream_requests = lookup.map_or(0, |l| l.upstream_requests),
            source = lookup.map_or("-", |l| l.source),
            "request"
        );
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.finish(CLIENT_CLOSED_REQUEST, None, Some("client_closed_request"));
    }
}
