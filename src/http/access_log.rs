//! One log line and one set of metrics per request.
//!
//! The line carries the request id, the client's address ([`client_addr`]), the key's id (a
//! digest's head, never the key: [`crate::auth::Keys::log_ids`]), the route *template* (never
//! the raw path, which is caller text), the status, the latency in whole microseconds, and what
//! the lookup did (cache outcome, upstream outcome, upstream requests) when there was one.
//! Headers are never logged, so neither keys nor cookies can leak here. A request whose client
//! hangs up mid-way still gets its line and leaves the in-flight gauge, with status 499.
//! Probes and scrapes (`/healthz`, `/readyz`, `/metrics`) are logged at DEBUG, every other
//! request at INFO: a replica probed every few seconds would otherwise write mostly that.
//!
//! What the lookup did reaches the line on the response: the lookup handler hands its
//! [`LookupLog`] up as a response extension ([`LogCarrier`]), and this layer takes it off.
//! Nothing rides beside the request (no task-local), and it costs one small box per answer:
//! the handler reuses the extension map the router already allocated for the request, and
//! the request id is no longer put in that map for nobody to read.

use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::extract::{FromRequestParts, MatchedPath, Request};
use axum::http::request::Parts;
use axum::http::{self, Extensions, Method};
use axum::response::Response;
use futures_util::future::BoxFuture;
use opentelemetry::trace::TraceId;
use tower::{Layer, Service};
use tracing::Instrument;

use crate::auth::KeyId;
use crate::error::ApiError;
use crate::http::client_addr::{self, Peer, TrustedProxies};
use crate::http::request_id::{self, RequestId};
use crate::telemetry::{self, trace_context};

/// What a lookup handler did, handed up to this layer on its response ([`LogCarrier`]) to log.
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
    /// Who blame said the fetch's last refusal, failure or silence belongs to (`name`,
    /// `route`, `source`, `platform`, …), or `-`.
    pub blame: &'static str,
}

/// The request's extension map, which the lookup handler takes (as its last extractor: the
/// others have read what they need from it) to carry its [`LookupLog`] up on the response.
///
/// A response's own map would cost three allocations per answer (the map, its table and the
/// box of the value); the request's, emptied, keeps its table, so only the value's box is new.
#[derive(Debug)]
pub struct LogCarrier(Extensions);

impl<S: Send + Sync> FromRequestParts<S> for LogCarrier {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        let mut map = std::mem::take(&mut parts.extensions);
        // Emptied, not replaced: its allocation is what the answer reuses.
        map.clear();
        Ok(Self(map))
    }
}

impl LogCarrier {
    /// Puts `log` on `response`, where the access-log layer takes it off.
    pub fn carry(self, log: LookupLog, response: &mut Response) {
        let Self(mut map) = self;
        if response.extensions().is_empty() {
            map.insert(log);
            *response.extensions_mut() = map;
        } else {
            // The response has a map of its own already (an error's problem): add to it.
            response.extensions_mut().insert(log);
        }
    }
}

/// The layer that times each request, then logs and counts it ([`AccessLog`]).
#[derive(Clone, Debug, Default)]
pub struct AccessLogLayer {
    who: Arc<Who>,
}

/// What the layer needs to name a caller: whose `X-Forwarded-For` to believe, and each
/// configured key's id.
#[derive(Debug, Default)]
struct Who {
    trusted: TrustedProxies,
    key_ids: Vec<String>,
}

impl AccessLogLayer {
    /// The layer, believing `X-Forwarded-For` from `trusted` only, naming a key by its entry
    /// in `key_ids` (indexed by [`KeyId`]).
    pub fn new(trusted: TrustedProxies, key_ids: Vec<String>) -> Self {
        Self {
            who: Arc::new(Who { trusted, key_ids }),
        }
    }
}

impl<S> Layer<S> for AccessLogLayer {
    type Service = AccessLog<S>;

    fn layer(&self, inner: S) -> AccessLog<S> {
        AccessLog {
            inner,
            who: self.who.clone(),
        }
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
    who: Arc<Who>,
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
        let route = request.extensions().get::<MatchedPath>().cloned();
        let template = route
            .as_ref()
            .map_or(telemetry::UNMATCHED_ROUTE, MatchedPath::as_str);
        let client = request
            .extensions()
            .get::<Peer>()
            .map(|Peer(peer)| self.who.trusted.client(peer.ip(), request.headers()));
        let mut pending = Pending {
            started: Instant::now(),
            method: request.method().clone(),
            id: Some(RequestId(id.clone())),
            route: route.clone(),
            trace: TraceId::INVALID,
            server: tracing::Span::none(),
            client,
            key: None,
            who: self.who.clone(),
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
        // Inside the log's span, so log lines written under the trace's spans keep the id.
        let (server, trace, sampled) = span
            .in_scope(|| trace_context::server_span(request.method(), template, request.headers()));
        pending.trace = trace;
        pending.server = server.clone();
        let answer = self.inner.call(request).instrument(server);
        let answer = trace_context::scope(trace, sampled, answer).instrument(span);
        Box::pin(async move {
            let Ok(mut response) = answer.await;
            response
                .headers_mut()
                .insert(request_id::X_REQUEST_ID.clone(), id);
            let lookup = response.extensions_mut().remove::<LookupLog>();
            pending.key = response.extensions_mut().remove::<KeyId>();
            pending.finish(
                response.status().as_u16(),
                lookup,
                response.extensions().get::<ApiError>().map(ApiError::code),
            );
            Ok(response)
        })
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
    /// The trace the request belongs to, and its server span (disabled when traces are off).
    trace: TraceId,
    server: tracing::Span,
    /// The client's address (`None`: no connection's peer, as in a test on the router alone).
    client: Option<IpAddr>,
    /// The key the request was let in with, if it was.
    key: Option<KeyId>,
    who: Arc<Who>,
    done: bool,
}

/// The routes of probes and scrapes, logged at DEBUG.
const QUIET_ROUTES: [&str; 3] = ["/healthz", "/readyz", "/metrics"];

/// One access-log line at `$level` (a `tracing` macro), with its fields.
macro_rules! line {
    ($level:ident, $($fields:tt)*) => {
        tracing::$level!($($fields)*)
    };
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
        trace_context::finish(&self.server, status, code);
        let request_id = self
            .id
            .as_ref()
            .and_then(|i| i.0.to_str().ok())
            .unwrap_or("-");
        let client = client_addr::Shown(self.client);
        let key_id = self
            .key
            .and_then(|KeyId(i)| self.who.key_ids.get(i as usize))
            .map_or("-", String::as_str);
        let latency_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        let (cache, upstream) = (
            lookup.map_or("-", |l| l.cache),
            lookup.map_or("-", |l| l.upstream),
        );
        let upstream_requests = lookup.map_or(0, |l| l.upstream_requests);
        let (source, blame) = (
            lookup.map_or("-", |l| l.source),
            lookup.map_or("-", |l| l.blame),
        );
        let code = code.unwrap_or("-");
        let (method, trace_id) = (&self.method, self.trace);
        macro_rules! at {
            ($level:ident) => {
                line!($level, request_id, trace_id = %trace_id, client = %client, key_id,
                    method = %method, route = %route, status, latency_us, code, cache, upstream,
                    upstream_requests, source, blame, "request")
            };
        }
        if QUIET_ROUTES.contains(&route) {
            at!(debug);
        } else {
            at!(info);
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.finish(CLIENT_CLOSED_REQUEST, None, Some("client_closed_request"));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use axum::Router;
    use axum::body::Body;
    use axum::response::IntoResponse;
    use axum::routing::get;
    use serde_json::Value;
    use tower::ServiceExt;

    use super::*;

    /// The JSON log lines written while `app` answers one request to `path`, and what the
    /// caller got.
    fn lines_of(app: Router, path: &str) -> (Vec<Value>, Response) {
        lines_of_request(app, Request::get(path).body(Body::empty()).unwrap())
    }

    /// [`lines_of`] for a request of the test's making.
    fn lines_of_request(app: Router, request: Request) -> (Vec<Value>, Response) {
        let written = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = written.clone();
        let subscriber = tracing_subscriber::fmt()
            .json()
            .flatten_event(true)
            .with_max_level(tracing::Level::DEBUG)
            .with_writer(move || Sink(sink.clone()))
            .finish();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let response = tracing::subscriber::with_default(subscriber, || {
            runtime.block_on(app.oneshot(request)).unwrap()
        });
        let text = String::from_utf8(written.lock().unwrap().clone()).unwrap();
        let lines = text.lines().map(|l| serde_json::from_str(l).unwrap());
        (lines.collect(), response)
    }

    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    const LOG: LookupLog = LookupLog {
        cache: "stale",
        upstream: "blocked",
        upstream_requests: 3,
        source: "embed",
        blame: "-",
    };

    #[test]
    fn a_lookups_facts_reach_its_line_and_not_its_caller_on_an_answer_and_a_problem() {
        let app = Router::new()
            .route(
                "/answer/{name}",
                get(|log: LogCarrier| async move {
                    let mut response = "body".into_response();
                    log.carry(LOG, &mut response);
                    response
                }),
            )
            .route(
                "/problem/{name}",
                get(|log: LogCarrier| async move {
                    let mut response = ApiError::UpstreamUnavailable(None).into_response();
                    log.carry(LOG, &mut response);
                    response
                }),
            )
            .layer(AccessLogLayer::default());
        for (path, status, code) in [
            ("/answer/x", 200, "-"),
            ("/problem/x", 500, "upstream_unavailable"),
        ] {
            let (lines, response) = lines_of(app.clone(), path);
            let line = lines.iter().find(|l| l["message"] == "request").unwrap();
            assert_eq!(line["status"], status, "{line}");
            assert_eq!(line["code"], code, "{line}");
            assert_eq!(line["cache"], "stale", "{line}");
            assert_eq!(line["upstream"], "blocked", "{line}");
            assert_eq!(line["upstream_requests"], 3, "{line}");
            assert_eq!(line["source"], "embed", "{line}");
            assert_eq!(line["trace_id"].as_str().map(str::len), Some(32), "{line}");
            assert!(response.extensions().get::<LookupLog>().is_none());
        }
    }

    #[test]
    fn the_line_names_the_client_and_the_keys_id_never_the_key_and_whole_microseconds() {
        let trusted = TrustedProxies::new(vec!["10.0.0.0/8".parse().unwrap()]);
        let layer = AccessLogLayer::new(trusted, vec!["aaaa0000".into(), "1234abcd".into()]);
        let app = Router::new()
            .route(
                "/answer",
                get(|| async {
                    let mut response = "body".into_response();
                    response.extensions_mut().insert(KeyId(1));
                    response
                }),
            )
            .layer(layer);
        for (peer, forwarded, client) in [
            ("198.51.100.7:5000", "203.0.113.9", "198.51.100.7"),
            ("10.1.2.3:5000", "203.0.113.9", "203.0.113.9"),
        ] {
            let mut request = Request::get("/answer")
                .header("x-forwarded-for", forwarded)
                .body(Body::empty())
                .unwrap();
            request.extensions_mut().insert(Peer(peer.parse().unwrap()));
            let (lines, response) = lines_of_request(app.clone(), request);
            let line = lines.iter().find(|l| l["message"] == "request").unwrap();
            assert_eq!(line["client"], client, "{line}");
            assert_eq!(line["key_id"], "1234abcd", "{line}");
            assert!(line["latency_us"].is_u64(), "{line}");
            assert!(line.get("latency_ms").is_none(), "{line}");
            assert_eq!(line["level"], "INFO", "{line}");
            assert!(response.extensions().get::<KeyId>().is_none());
        }
    }

    #[test]
    fn probes_and_scrapes_are_debug_lines() {
        let app = Router::new()
            .route("/healthz", get(|| async { "ok" }))
            .route("/readyz", get(|| async { "ok" }))
            .route("/metrics", get(|| async { "ok" }))
            .route("/status", get(|| async { "ok" }))
            .layer(AccessLogLayer::default());
        for (path, level) in [
            ("/healthz", "DEBUG"),
            ("/readyz", "DEBUG"),
            ("/metrics", "DEBUG"),
            ("/status", "INFO"),
        ] {
            let (lines, _) = lines_of(app.clone(), path);
            let line = lines.iter().find(|l| l["message"] == "request").unwrap();
            assert_eq!(line["level"], level, "{path}: {line}");
            assert_eq!(line["client"], "-", "no connection here: {line}");
            assert_eq!(line["key_id"], "-", "{line}");
        }
    }

    #[test]
    fn a_request_no_lookup_answered_logs_no_lookup_facts() {
        let app = Router::new()
            .route("/plain", get(|| async { "ok" }))
            .layer(AccessLogLayer::default());
        let (lines, _) = lines_of(app, "/plain");
        let line = lines.iter().find(|l| l["message"] == "request").unwrap();
        assert_eq!(line["cache"], "-", "{line}");
        assert_eq!(line["upstream_requests"], 0, "{line}");
    }
}
