//! The trace a request belongs to: the caller's (W3C `traceparent`/`tracestate`) or a new one,
//! with traces exported or not, so the access log line and a problem document always name it.
//!
//! A malformed `traceparent` starts a new trace; it is never an error. Nothing here ever writes
//! a trace header: requests to the platforms carry none (no propagator is installed).

use axum::http::{HeaderMap, Method};
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{TraceContextExt, TraceId};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::traces::{self, TARGET};

tokio::task_local! {
    /// The trace of the request being answered: for the problem documents built inside it, and
    /// for the trace spans, which are made only when it is sampled.
    static CURRENT: Current;
}

/// The trace a task works for.
#[derive(Clone, Copy, Debug)]
struct Current {
    id: TraceId,
    sampled: bool,
}

/// The trace id of the request this task answers, if any, as 32 lowercase hex digits (as the
/// log line writes it: `TraceId`'s `Display`).
pub fn current() -> Option<String> {
    CURRENT.try_with(|c| c.id.to_string()).ok()
}

/// Whether the trace this task works for is sampled. Outside any trace (a background task's
/// Redis calls, say) no span is made: only requests, flights, refreshes and canary probes
/// have traces.
pub fn sampled_now() -> bool {
    CURRENT.try_with(|c| c.sampled).unwrap_or(false)
}

/// Makes the root span of a trace of its own (`make`): the exporter's sampler decides it.
pub fn root_span(make: impl FnOnce() -> tracing::Span) -> tracing::Span {
    let own = Current {
        id: TraceId::INVALID,
        sampled: true,
    };
    CURRENT.sync_scope(own, make)
}

/// Runs `answer` in the trace `id` ([`current`]), sampled or not ([`sampled_now`]).
pub fn scope<F: Future>(id: TraceId, sampled: bool, answer: F) -> impl Future<Output = F::Output> {
    CURRENT.scope(Current { id, sampled }, answer)
}

/// Runs `task` (spawned apart from the request that starts it) in that request's trace; one
/// that is a trace of its own (`own`: a refresh, a canary probe) is the sampler's to decide.
pub fn carry<F: Future>(own: bool, task: F) -> impl Future<Output = F::Output> {
    let current = CURRENT.try_with(|c| *c).unwrap_or(Current {
        id: TraceId::INVALID,
        sampled: false,
    });
    let sampled = own || current.sampled;
    CURRENT.scope(Current { sampled, ..current }, task)
}

/// The server span of a request (named by its route template, never its path), its trace id
/// (the caller's when its `traceparent` is valid, else a new one) and whether it is sampled.
///
/// The exporter's sampler decides here, before any span is made ([`traces::sampled`]): a
/// request not sampled makes no span at all, so traces sampled at 0 % cost what traces off
/// cost. A sampled request's span gets the very trace id decided here.
pub fn server_span(
    method: &Method,
    route: &str,
    headers: &HeaderMap,
) -> (tracing::Span, TraceId, bool) {
    let caller = caller_context(headers);
    let id = caller
        .as_ref()
        .map_or_else(traces::fresh, |c| c.span().span_context().trace_id());
    if !traces::sampled(caller.as_ref(), id, route) {
        return (tracing::Span::none(), id, false);
    }
    let span = root_span(|| {
        tracing::info_span!(
            target: TARGET,
            "request",
            otel.name = %format_args!("{method} {route}"),
            otel.kind = "server",
            otel.status_code = tracing::field::Empty,
            http.request.method = %method,
            http.route = route,
            http.response.status_code = tracing::field::Empty,
            profile_lookup.key_id = tracing::field::Empty,
            profile_lookup.problem_code = tracing::field::Empty,
            error.type = tracing::field::Empty,
        )
    });
    if span.is_disabled() {
        return (span, id, false);
    }
    // Built now, with the id decided above: the caller's, or the new one given to the SDK.
    match caller {
        Some(caller) => drop(span.set_parent(caller)),
        None => traces::next_trace_id(Some(id)),
    }
    let _ = span.context();
    traces::next_trace_id(None);
    (span, id, true)
}

/// The span of a flight: a caller's is part of the lookup that started it; a background
/// refresh is a trace of its own (sampled by itself), linked to that lookup.
pub fn flight_span(refresh: bool, platform: &'static str) -> tracing::Span {
    if !refresh {
        return tracing::info_span!(target: TARGET, "flight", profile_lookup.platform = platform);
    }
    let current = CURRENT.try_with(|c| *c).ok();
    let span = root_span(|| {
        tracing::info_span!(
            target: TARGET,
            parent: None,
            "refresh",
            profile_lookup.platform = platform,
        )
    });
    if !span.is_disabled() && current.is_some_and(|c| c.sampled) {
        let started_by = tracing::Span::current().context();
        span.add_link(started_by.span().span_context().clone());
    }
    span
}

/// Records how the request ended on its server span.
pub fn finish(span: &tracing::Span, status: u16, code: Option<&'static str>) {
    span.record("http.response.status_code", status);
    if let Some(code) = code {
        span.record("profile_lookup.problem_code", code);
        if status >= 500 {
            span.record("error.type", code);
            span.record("otel.status_code", "error");
        }
    }
}

/// The caller's context from its `traceparent` (and `tracestate`), when it sent one that is
/// valid; parsed by the SDK's W3C propagator.
fn caller_context(headers: &HeaderMap) -> Option<opentelemetry::Context> {
    if !headers.contains_key("traceparent") {
        return None;
    }
    let cx = TraceContextPropagator::new().extract(&Headers(headers));
    cx.span().span_context().is_valid().then_some(cx)
}

/// The request's headers as the propagator reads them.
struct Headers<'a>(&'a HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(traceparent: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("traceparent", traceparent.parse().unwrap());
        headers
    }

    #[test]
    fn a_valid_traceparent_is_continued_and_a_malformed_one_starts_a_new_trace() {
        let valid = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        let (_, id, _) = server_span(&Method::GET, "/x", &with(valid));
        assert_eq!(id.to_string(), "0af7651916cd43dd8448eb211c80319c");
        for bad in [
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "zz-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "garbage",
        ] {
            let (_, id, _) = server_span(&Method::GET, "/x", &with(bad));
            assert_ne!(id, TraceId::INVALID, "{bad}");
            assert_ne!(id.to_string(), "0af7651916cd43dd8448eb211c80319c", "{bad}");
        }
        let (_, a, _) = server_span(&Method::GET, "/x", &HeaderMap::new());
        let (_, b, _) = server_span(&Method::GET, "/x", &HeaderMap::new());
        assert_ne!(a, b);
        assert_eq!(a.to_string().len(), 32);
    }
}
