//! Traces over OTLP/HTTP: the exporter, its bounded queue, and the flush at shutdown.
//!
//! The code's trace spans are ordinary `tracing` spans under one target ([`TARGET`]); the
//! `tracing-opentelemetry` layer turns them into OpenTelemetry spans only when an endpoint is
//! set. Without one the target is filtered off, so its spans are never built and cost a
//! callsite check.
//!
//! Exporting happens on the SDK's own thread (a batch processor), sending protobuf with
//! reqwest's blocking client, so a collector that is down, slow or refusing holds that thread
//! and never a request. What waits for it is bounded (`Bounded`): a span finished while
//! `telemetry.max_queued_spans` wait is dropped and counted ([`super::TRACE_SPANS_DROPPED`]).

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use opentelemetry::Context;
use opentelemetry::trace::{SpanId, SpanKind, TraceId, TracerProvider as _};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, Config, IdGenerator, SamplingDecision, SdkTracer,
    SdkTracerProvider, ShouldSample, Span, SpanData, SpanExporter, SpanProcessor,
};

use crate::config::TelemetryConfig;

/// The `tracing` target of every span meant for traces (and only for them: the log output
/// filters it off, so logs read as before).
pub const TARGET: &str = "profile_lookup::traces";

/// The service's name in traces unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` say
/// otherwise.
pub const SERVICE_NAME: &str = "profile-lookup";

/// The exporter while it runs: flushed and stopped by [`Traces::shutdown`].
#[derive(Debug)]
pub struct Traces {
    provider: SdkTracerProvider,
}

/// The standard variable naming the collector when `telemetry.otlp_endpoint` is empty.
pub const ENDPOINT_ENV: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

impl Traces {
    /// Starts exporting per `config` (or the standard `OTEL_*` variables), or `None` when no
    /// endpoint is set; `Err` says why a set endpoint cannot be used.
    pub fn start(config: &TelemetryConfig) -> Result<Option<(Self, SdkTracer)>, String> {
        let from_env = std::env::var(ENDPOINT_ENV).unwrap_or_default();
        if config.otlp_endpoint.is_empty() && from_env.trim().is_empty() {
            return Ok(None);
        }
        let timeout = Duration::from_millis(config.export_timeout_ms);
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_timeout(timeout);
        if !config.otlp_endpoint.is_empty() {
            let base = config.otlp_endpoint.trim_end_matches('/');
            exporter = exporter.with_endpoint(format!("{base}/v1/traces"));
        }
        // The drop counter needs the recorder, which may not be installed yet.
        let _ = super::metrics_handle();
        let exporter = exporter
            .build()
            .map_err(|e| format!("traces cannot be exported: {e}"))?;
        let limit = usize::try_from(config.max_queued_spans).unwrap_or(usize::MAX);
        let queued = Arc::new(AtomicUsize::new(0));
        let batch = BatchSpanProcessor::new(
            Releasing {
                inner: exporter,
                queued: queued.clone(),
            },
            BatchConfigBuilder::default()
                .with_max_queue_size(limit)
                .with_max_export_batch_size(limit.min(512))
                .with_scheduled_delay(Duration::from_secs(1))
                .build(),
        );
        let processor = Bounded {
            inner: batch,
            queued,
            limit,
            dropped: metrics::counter!(super::TRACE_SPANS_DROPPED),
        };
        // The sampler `OTEL_TRACES_SAMPLER` names, asked by the edge before any span is made
        // ([`sampled`]) and by the SDK as usual.
        let sampler = Config::default().sampler;
        let _ = EDGE_SAMPLER.set(sampler.clone());
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(resource())
            .with_sampler(sampler)
            .with_id_generator(EdgeIds)
            .build();
        let tracer = provider.tracer(SERVICE_NAME);
        Ok(Some((Self { provider }, tracer)))
    }

    /// Sends what is queued and stops, within `grace`: a collector that does not answer in time
    /// loses those spans, never the shutdown its time.
    pub async fn shutdown(self, grace: Duration) {
        let provider = self.provider;
        let flush = tokio::task::spawn_blocking(move || provider.shutdown_with_timeout(grace));
        match tokio::time::timeout(grace, flush).await {
            Ok(Ok(Ok(()))) => tracing::info!("traces flushed"),
            _ => tracing::warn!("traces not flushed within the shutdown grace period"),
        }
    }
}

/// The exporter's sampler, once traces are on.
static EDGE_SAMPLER: OnceLock<Box<dyn ShouldSample>> = OnceLock::new();

thread_local! {
    /// The trace id the next root span built on this thread takes ([`next_trace_id`]).
    static NEXT_TRACE_ID: Cell<Option<TraceId>> = const { Cell::new(None) };
}

/// Whether a request's server span named by `route` in trace `id` (continuing `caller`) is
/// sampled; never while traces are off.
pub fn sampled(caller: Option<&Context>, id: TraceId, route: &str) -> bool {
    EDGE_SAMPLER.get().is_some_and(|sampler| {
        let decision = sampler
            .should_sample(caller, id, route, &SpanKind::Server, &[], &[])
            .decision;
        decision == SamplingDecision::RecordAndSample
    })
}

/// Makes `id` the trace id of the next root span built on this thread (`None`: a random one
/// again): the edge decided it, and sampled by it, before the span was made.
pub fn next_trace_id(id: Option<TraceId>) {
    NEXT_TRACE_ID.with(|next| next.set(id));
}

/// Trace ids as the edge decided them ([`next_trace_id`]), else random; span ids random.
#[derive(Debug)]
struct EdgeIds;

impl IdGenerator for EdgeIds {
    fn new_trace_id(&self) -> TraceId {
        NEXT_TRACE_ID.with(Cell::take).unwrap_or_else(fresh)
    }

    fn new_span_id(&self) -> SpanId {
        SpanId::from(fastrand::u64(1..))
    }
}

/// A new random trace id (never the invalid all-zero one).
pub fn fresh() -> TraceId {
    let mut bytes = [0u8; 16];
    fastrand::fill(&mut bytes);
    bytes[15] |= 1;
    TraceId::from_bytes(bytes)
}

/// The service's resource: the SDK reads `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`;
/// the name defaults to [`SERVICE_NAME`] instead of `unknown_service`.
fn resource() -> Resource {
    let named = std::env::var_os("OTEL_SERVICE_NAME").is_some_and(|v| !v.is_empty())
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|v| v.contains("service.name="));
    let builder = Resource::builder();
    if named {
        builder.build()
    } else {
        builder.with_service_name(SERVICE_NAME).build()
    }
}

/// The batch processor behind a count of spans finished and not yet exported: past `limit`,
/// a span is dropped and counted here, so the batch's own queue (as long) never fills.
#[derive(Debug)]
struct Bounded {
    inner: BatchSpanProcessor,
    queued: Arc<AtomicUsize>,
    limit: usize,
    dropped: metrics::Counter,
}

impl SpanProcessor for Bounded {
    fn on_start(&self, span: &mut Span, cx: &Context) {
        self.inner.on_start(span, cx);
    }

    fn on_end(&self, span: SpanData) {
        if self.queued.fetch_add(1, Ordering::AcqRel) >= self.limit {
            self.queued.fetch_sub(1, Ordering::AcqRel);
            self.dropped.increment(1);
            return;
        }
        self.inner.on_end(span);
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// The exporter, giving back each batch's place in [`Bounded`]'s count once it is sent or
/// given up.
#[derive(Debug)]
struct Releasing<E> {
    inner: E,
    queued: Arc<AtomicUsize>,
}

/// Gives back `n` places when dropped, so an export that ends any way releases its spans.
struct Release<'a>(&'a AtomicUsize, usize);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(self.1, Ordering::AcqRel);
    }
}

impl<E: SpanExporter> SpanExporter for Releasing<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let _release = Release(&self.queued, batch.len());
        self.inner.export(batch).await
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}
