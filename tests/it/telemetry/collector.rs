//! A loopback OTLP/HTTP collector: decodes the protobuf the exporter posts to `/v1/traces`
//! and keeps every span, or refuses (503), or answers only after 30 s, as a collector in
//! trouble would.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::http::StatusCode;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use prost::Message;

/// How the collector answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Keeps the spans, 200.
    Accept,
    /// 503 to every export.
    Refuse,
    /// Answers 200 after 30 s.
    Slow,
}

/// One span as it arrived.
#[derive(Clone, Debug)]
pub struct Span {
    pub trace_id: String,
    pub span_id: String,
    /// Empty for a root span.
    pub parent: String,
    pub name: String,
    pub attributes: BTreeMap<String, String>,
    /// The trace ids of the spans it links to.
    pub links: Vec<String>,
    /// The service name of its resource.
    pub service: String,
    /// When it started (Unix ns): children are drawn in this order.
    pub start: u64,
}

impl Span {
    /// The attribute `key` as text, "" when absent.
    pub fn attr(&self, key: &str) -> &str {
        self.attributes.get(key).map_or("", String::as_str)
    }
}

/// A running collector and what it has received.
#[derive(Clone)]
pub struct Collector {
    pub addr: SocketAddr,
    spans: Arc<Mutex<Vec<Span>>>,
}

impl Collector {
    /// Starts a collector answering as `mode` on a free loopback port.
    pub async fn start(mode: Mode) -> Self {
        let spans: Arc<Mutex<Vec<Span>>> = Arc::default();
        let keep = spans.clone();
        let router = Router::new().route(
            "/v1/traces",
            post(move |body: Bytes| {
                let keep = keep.clone();
                async move {
                    match mode {
                        Mode::Refuse => return StatusCode::SERVICE_UNAVAILABLE,
                        Mode::Slow => tokio::time::sleep(Duration::from_secs(30)).await,
                        Mode::Accept => {}
                    }
                    let request = ExportTraceServiceRequest::decode(body).expect("OTLP protobuf");
                    keep.lock().unwrap().extend(spans_of(request));
                    StatusCode::OK
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        Self { addr, spans }
    }

    /// The base URL to give `OTEL_EXPORTER_OTLP_ENDPOINT` or `telemetry.otlp_endpoint`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Span> {
        self.spans.lock().unwrap().clone()
    }

    /// The spans of the trace of the first span that satisfies `root`, once they stop
    /// arriving (waits up to 15 s for it).
    pub async fn trace(&self, root: impl Fn(&Span) -> bool) -> Vec<Span> {
        let started = Instant::now();
        let mut seen = 0;
        loop {
            let spans = self.spans();
            if let Some(top) = spans.iter().find(|s| root(s)) {
                let trace: Vec<Span> = spans
                    .iter()
                    .filter(|s| s.trace_id == top.trace_id)
                    .cloned()
                    .collect();
                // One more batch may still be on its way (the flight ends after the answer).
                if trace.len() == seen {
                    return trace;
                }
                seen = trace.len();
            }
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "no such trace arrived; spans: {spans:#?}"
            );
            tokio::time::sleep(Duration::from_millis(1200)).await;
        }
    }
}

/// The span tree of `trace` as indented text: each span's name and its attributes, children
/// in start order under their parent (a span whose parent is elsewhere counts as a root).
pub fn tree(trace: &[Span]) -> String {
    fn walk(trace: &[Span], span: &Span, depth: usize, out: &mut String) {
        let attributes: Vec<String> = span
            .attributes
            .iter()
            .filter(|(k, _)| {
                !k.starts_with("code.")
                    && !k.starts_with("thread.")
                    && *k != "busy_ns"
                    && *k != "idle_ns"
                    && !k.starts_with("target")
            })
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let _ = writeln!(
            out,
            "{}{} [{}]",
            "  ".repeat(depth),
            span.name,
            attributes.join(" ")
        );
        let mut children: Vec<&Span> = trace.iter().filter(|s| s.parent == span.span_id).collect();
        children.sort_by_key(|s| s.start);
        for child in children {
            walk(trace, child, depth + 1, out);
        }
    }
    let ids: Vec<&str> = trace.iter().map(|s| s.span_id.as_str()).collect();
    let mut out = String::new();
    for root in trace.iter().filter(|s| !ids.contains(&s.parent.as_str())) {
        walk(trace, root, 0, &mut out);
    }
    out
}

/// The spans of one export, flattened.
fn spans_of(request: ExportTraceServiceRequest) -> Vec<Span> {
    let mut out = Vec::new();
    for resource in request.resource_spans {
        let service = resource
            .resource
            .iter()
            .flat_map(|r| r.attributes.iter())
            .find(|kv| kv.key == "service.name")
            .map(|kv| text(kv.value.as_ref().and_then(|v| v.value.as_ref())))
            .unwrap_or_default();
        for scope in resource.scope_spans {
            for span in scope.spans {
                let attributes = span
                    .attributes
                    .iter()
                    .map(|kv| {
                        let value = text(kv.value.as_ref().and_then(|v| v.value.as_ref()));
                        (kv.key.clone(), value)
                    })
                    .collect();
                out.push(Span {
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent: hex(&span.parent_span_id),
                    name: span.name,
                    attributes,
                    links: span.links.iter().map(|l| hex(&l.trace_id)).collect(),
                    service: service.clone(),
                    start: span.start_time_unix_nano,
                });
            }
        }
    }
    out
}

fn text(value: Option<&Value>) -> String {
    match value {
        Some(Value::StringValue(s)) => s.clone(),
        Some(Value::BoolValue(b)) => b.to_string(),
        Some(Value::IntValue(i)) => i.to_string(),
        Some(Value::DoubleValue(d)) => d.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
