//! Allocations per cached lookup: the whole app router (every layer a request passes) called
//! in process with `tower::ServiceExt::oneshot`, the demo's sample upstream behind it, the
//! cache warmed first; a counting global allocator (here, not in the library) counts what the
//! requests after that allocate.
//!
//! ```text
//! cargo bench --bench cached_lookup_allocs
//! PROFILE_LOOKUP_BENCH_REDIS=redis://127.0.0.1:PORT/0 cargo bench --bench cached_lookup_allocs
//! PROFILE_LOOKUP_BENCH_TRACES=1 cargo bench --bench cached_lookup_allocs
//! ```
//!
//! Prints allocations and bytes per request for `/healthz` (the floor every request pays) and
//! for a cached lookup, with logs at `warn` (as `scripts/load.sh` runs) and at `info` (the
//! default: one access-log line per request, written to a sink here). With the variable set,
//! also for a replica of a fleet on that Redis (the quota then goes through Redis). With
//! `PROFILE_LOOKUP_BENCH_TRACES=1`, traces are on and sampled at 0 %.
//! Counts only allocations made on the bench's thread (a current-thread runtime runs every
//! task there), so the metrics upkeep thread does not blur them.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use profile_lookup::AppState;
use profile_lookup::commands::demo;
use profile_lookup::config::Settings;
use tower::ServiceExt;

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    /// `BENCH_ALLOC_TRACE=1`: where each allocation of one request comes from.
    static TRACING: Cell<bool> = const { Cell::new(false) };
    static IN_TRACE: Cell<bool> = const { Cell::new(false) };
    static TRACES: std::cell::RefCell<Vec<(usize, String)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

fn count(size: usize) {
    if COUNTING.with(Cell::get) {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(size as u64, Ordering::Relaxed);
    }
    if TRACING.with(Cell::get) && !IN_TRACE.with(Cell::get) {
        IN_TRACE.with(|t| t.set(true));
        let trace = std::backtrace::Backtrace::force_capture().to_string();
        TRACES.with(|t| t.borrow_mut().push((size, trace)));
        IN_TRACE.with(|t| t.set(false));
    }
}

/// Prints where one request to `path` allocates: the first frames outside the allocator.
async fn trace(app: &axum::Router, path: &str) {
    let r = request(path);
    TRACING.with(|t| t.set(true));
    let response = app.clone().oneshot(r).await.expect("infallible");
    TRACING.with(|t| t.set(false));
    drop(response);
    let traces = TRACES.with(|t| std::mem::take(&mut *t.borrow_mut()));
    println!("--- {path}: {} allocations", traces.len());
    for (size, trace) in traces {
        let frames: Vec<&str> = trace
            .lines()
            .filter(|l| !l.trim_start().starts_with("at "))
            .map(|l| l.split_once(": ").map_or(l, |(_, f)| f).trim())
            .filter(|f| {
                !(f.starts_with("std::")
                    || f.starts_with("alloc::")
                    || f.starts_with("core::")
                    || f.starts_with("cached_lookup_allocs::")
                    || f.starts_with("__rust")
                    || f.starts_with("<alloc::")
                    || f.starts_with("<core::")
                    || f.contains("Counting"))
            })
            .take(4)
            .collect();
        println!("{size:>6} B  {}", frames.join("  <  "));
    }
}

// SAFETY: every call goes to `System` unchanged; the counting touches no allocation.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const KEY: &str = "bench-key-0123456789abcdef";
const NAME: &str = "sunny.kitchen.lab";
const REQUESTS: usize = 20_000;

fn request(path: &str) -> Request<Body> {
    Request::get(path)
        .header("authorization", format!("Bearer {KEY}"))
        .header("host", "127.0.0.1")
        .header("user-agent", "bench")
        .body(Body::empty())
        .expect("a request")
}

/// Allocations and bytes per request of `REQUESTS` requests to `path`.
async fn measure(app: &axum::Router, path: &str) -> (f64, f64) {
    let requests: Vec<_> = (0..REQUESTS).map(|_| request(path)).collect();
    let mut responses = Vec::with_capacity(REQUESTS);
    ALLOCS.store(0, Ordering::Relaxed);
    BYTES.store(0, Ordering::Relaxed);
    COUNTING.with(|c| c.set(true));
    for r in requests {
        let response = app.clone().oneshot(r).await.expect("infallible");
        responses.push(response);
    }
    COUNTING.with(|c| c.set(false));
    for r in &responses {
        assert_eq!(r.status(), StatusCode::OK, "{path}: {:?}", r.headers());
    }
    drop(responses);
    let n = REQUESTS as f64;
    (
        ALLOCS.load(Ordering::Relaxed) as f64 / n,
        BYTES.load(Ordering::Relaxed) as f64 / n,
    )
}

async fn app(redis: Option<&str>) -> axum::Router {
    let stand_ins = demo::spawn_stand_ins().await.expect("sample upstreams");
    let mut base = Settings::default();
    base.rate_limit.per_key_per_minute = 1_000_000_000;
    base.rate_limit.burst = 1_000_000;
    if let Some(url) = redis {
        base.redis.url = url.to_owned();
        base.redis.key_prefix = format!("bench-{}:", std::process::id());
    }
    let settings = demo::settings(
        base,
        "127.0.0.1:0".parse().expect("an address"),
        &stand_ins,
        KEY.to_owned(),
    );
    let state = AppState::new(settings).expect("state");
    let app = profile_lookup::app(state);
    let path = format!("/short-video/profile/{NAME}");
    for _ in 0..2 {
        let response = app.clone().oneshot(request(&path)).await.expect("answer");
        assert_eq!(response.status(), StatusCode::OK);
    }
    app
}

/// With `PROFILE_LOOKUP_BENCH_TRACES=1`: the service's trace exporter, sampling no trace (its
/// collector is a closed loopback port, which nothing sampled at 0 % ever reaches).
fn traces_sampled_at_zero() -> Option<(
    profile_lookup::telemetry::Traces,
    opentelemetry_sdk::trace::SdkTracer,
)> {
    std::env::var_os("PROFILE_LOOKUP_BENCH_TRACES")?;
    // SAFETY: set before any thread of this process starts (the runtime is current-thread and
    // the metrics upkeep thread starts in `Traces::start`, below).
    unsafe {
        std::env::set_var("OTEL_TRACES_SAMPLER", "traceidratio");
        std::env::set_var("OTEL_TRACES_SAMPLER_ARG", "0");
    }
    let mut telemetry = Settings::default().telemetry;
    telemetry.otlp_endpoint = "http://127.0.0.1:9".to_owned();
    profile_lookup::telemetry::Traces::start(&telemetry).expect("an exporter")
}

/// A log writer that drops what it is given, so `info` costs the formatting, not a terminal.
struct Sink;
impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let redis = std::env::var("PROFILE_LOOKUP_BENCH_REDIS").ok();
    let lookup = format!("/short-video/profile/{NAME}");
    let print = |label: &str, (allocs, bytes): (f64, f64)| {
        println!("{label:<44} {allocs:>7.2} allocations  {bytes:>9.1} bytes per request");
    };
    let traces = traces_sampled_at_zero();
    runtime.block_on(async {
        use tracing_subscriber::filter::{FilterExt, LevelFilter, Targets};
        use tracing_subscriber::prelude::*;
        let (filter, handle) = tracing_subscriber::reload::Layer::new(LevelFilter::WARN);
        // As the service filters its logs: the trace spans' target never reaches them.
        let no_trace_spans = Targets::new()
            .with_default(LevelFilter::TRACE)
            .with_target(profile_lookup::telemetry::traces::TARGET, LevelFilter::OFF);
        let logs = tracing_subscriber::fmt::layer()
            .compact()
            .fmt_fields(profile_lookup::telemetry::EscapedFields)
            .with_writer(|| Sink)
            .with_ansi(false)
            .with_filter(filter.and(no_trace_spans));
        let traced = traces
            .as_ref()
            .map(|(_, tracer)| profile_lookup::telemetry::trace_layer(tracer.clone()));
        tracing_subscriber::registry()
            .with(logs)
            .with(traced)
            .init();
        if traces.is_some() {
            println!("(traces on, sampled at 0 %)");
        }
        let local = app(None).await;
        if std::env::var_os("BENCH_ALLOC_TRACE").is_some() {
            trace(&local, "/healthz").await;
            trace(&local, &lookup).await;
            return;
        }
        print("healthz (log warn)", measure(&local, "/healthz").await);
        print("cached lookup (log warn)", measure(&local, &lookup).await);
        let _ = handle.modify(|f| *f = tracing_subscriber::filter::LevelFilter::INFO);
        print("healthz (log info)", measure(&local, "/healthz").await);
        print("cached lookup (log info)", measure(&local, &lookup).await);
        let _ = handle.modify(|f| *f = tracing_subscriber::filter::LevelFilter::WARN);
        if let Some(url) = redis.as_deref() {
            let fleet = app(Some(url)).await;
            print(
                "cached lookup, fleet on Redis (log warn)",
                measure(&fleet, &lookup).await,
            );
        } else {
            println!("(PROFILE_LOOKUP_BENCH_REDIS unset: no fleet figure)");
        }
    });
}
