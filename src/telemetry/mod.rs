//! Logs, metrics and traces: the tracing subscriber (with the trace exporter, [`traces`], when
//! one is set), and every metric name in one place.
//!
//! The Prometheus recorder is process-global, so it is installed at most once ([`metrics_handle`])
//! however many times the app is built (tests build it many times). Series of closed label sets
//! are registered at 0 when it is installed (`zero`), so dashboards and alerts read 0, not
//! nothing.

use std::sync::OnceLock;
use std::time::Duration;

use metrics::{SharedString, counter, gauge, histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use opentelemetry_sdk::trace::SdkTracer;
use tracing_subscriber::EnvFilter;

use crate::config::{LogConfig, LogFormat, TelemetryConfig};
use crate::registry::Platform;

pub mod canary;
mod escaped_fields;
pub mod trace_context;
pub mod traces;
mod zero;

pub use escaped_fields::EscapedFields;
pub use traces::Traces;

/// Counter: requests answered, by `route` template and `status`.
pub const HTTP_REQUESTS: &str = "profile_lookup_http_requests_total";
/// Histogram: request latency in seconds, by `route` template.
pub const HTTP_LATENCY: &str = "profile_lookup_http_request_duration_seconds";
/// Gauge: requests being handled now.
pub const HTTP_IN_FLIGHT: &str = "profile_lookup_http_requests_in_flight";
/// Counter: upstream lookups by `platform` and `outcome` (ok, not_found, private, blocked,
/// region_locked, restricted, extraction_failed, unavailable, overloaded): one count per lookup, at its end.
pub const UPSTREAM_LOOKUPS: &str = "profile_lookup_upstream_lookups_total";
/// Counter: WAF challenges met on the way, by `platform` (the lookup's end is counted apart).
pub const UPSTREAM_CHALLENGES: &str = "profile_lookup_upstream_challenges_total";
/// Counter: upstream HTTP requests sent, by `platform`.
pub const UPSTREAM_REQUESTS: &str = "profile_lookup_upstream_requests_total";
/// Counter: upstream requests that got no answer, by `platform` and `cause`
/// ([`FAILURE_CAUSES`]).
pub const UPSTREAM_FAILURES: &str = "profile_lookup_upstream_failures_total";
/// The `cause` labels of [`UPSTREAM_FAILURES`]: the labels of `upstream::Cause`, a closed set
/// (a test there holds the two equal; named here so that telemetry needs nothing of upstream).
pub const FAILURE_CAUSES: [&str; 7] = [
    "dns", "refused", "reset", "tls", "timeout", "proxy", "other",
];
/// Counter: requests each API key was let in with or refused for its quota, by `key_id` (the
/// head of the key's SHA-256) and `result` (`admitted`, `rate_limited`); only with
/// `rate_limit.key_id_metrics`, so its series are bounded by the configured keys.
pub const KEY_REQUESTS: &str = "profile_lookup_key_requests_total";
/// Counter: retries of upstream requests, by `platform` and `reason`.
pub const UPSTREAM_RETRIES: &str = "profile_lookup_upstream_retries_total";
/// Counter: documents the platform refused, by `platform`, `source` (the document: `page`,
/// `embed`, `json`) and `reason` (`http_429`, `captcha`, `stateless_shell`, …): one count per
/// document whose request (retries done) ended blocked, whatever the lookup then came to.
pub const UPSTREAM_BLOCKS: &str = "profile_lookup_upstream_blocks_total";
/// Counter: lookups a source answered (a profile or a not-found), by `platform` and `source`:
/// how the plan's order (the canary moves a `changed` source last) shows in who answers.
pub const SOURCE_ANSWERS: &str = "profile_lookup_source_answers_total";
/// Counter: query ids learned from the platform's own documents, by `platform`, `query` (the
/// source that posts it) and `from` (`page`): the ids the platform rotates, replacing a seed.
pub const QUERY_IDS_LEARNED: &str = "profile_lookup_query_ids_learned_total";
/// Counter: answers saying a query changed (its id retired, or its variables moved), by
/// `platform`, `query` and `part` (`document_not_found`, `execution_error`).
pub const QUERY_CHANGED: &str = "profile_lookup_query_changed_total";
/// Counter: post counts asked of a complementing document (the photo-share embed page), by
/// `platform` and `result` (`read`, `withheld`).
pub const COMPLEMENTS: &str = "profile_lookup_complements_total";
/// Counter: who each refusal, failure or silence was blamed on, by `platform`, `party`
/// (`name`, `route`, `proxy`, `source`, `platform`, `nobody`, `unknown`) and `signal` (the
/// block's reason, or what failed).
pub const BLAME: &str = "profile_lookup_blame_total";
/// Counter: cache lookups by `platform` and `result` (hit, miss, stale).
pub const CACHE_LOOKUPS: &str = "profile_lookup_cache_lookups_total";
/// The `result` labels of [`CACHE_LOOKUPS`].
const CACHE_RESULTS: [&str; 3] = ["hit", "miss", "stale"];
/// Gauge: circuit breaker state by `platform` (0 closed, 1 open, 2 half-open).
pub const BREAKER_STATE: &str = "profile_lookup_breaker_state";
/// Counter: upstream requests sent through each route, by `platform` and `proxy` (the
/// proxy's position in its list, `"0"`, `"1"`, …, or `"direct"`; never its URL).
pub const PROXY_REQUESTS: &str = "profile_lookup_proxy_requests_total";
/// Counter: block signals and proxy failures met on each route, by `platform` and `proxy`.
pub const PROXY_BLOCKS: &str = "profile_lookup_proxy_blocks_total";
/// Gauge: 1 while a proxy rests (as of the platform's last lookup), by `platform` and `proxy`.
pub const PROXY_RESTING: &str = "profile_lookup_proxy_resting";
/// `profile_lookup_source_standing{platform,source,standing}`: 1 for each source's standing by
/// the evidence (`preferred`, `refused`, `demoted`), 0 for the others.
pub const SOURCE_STANDING: &str = "profile_lookup_source_standing";
/// Counter: gateway sessions started (each a new session id, so a new exit address), by
/// `platform` and `proxy` (the gateway's position; never its URL or a session id).
pub const GATEWAY_SESSIONS_STARTED: &str = "profile_lookup_gateway_sessions_started_total";
/// Counter: gateway sessions retired, by `platform`, `proxy` and `reason` (`blocked`,
/// `silent`, `used_up`, `aged`).
pub const GATEWAY_SESSIONS_RETIRED: &str = "profile_lookup_gateway_sessions_retired_total";
/// Counter: rests of a gateway as a whole, by `platform`, `proxy` and `reason`
/// (`proxy_failed`: it failed as a proxy; `pool_refused`: `upstream.gateway_block_threshold`
/// fresh sessions in a row were refused; `silent`).
pub const GATEWAY_RESTS: &str = "profile_lookup_gateway_rests_total";
/// Gauge: 1 for each route, by `platform`, `proxy` and `kind` (`fixed`, `gateway`, `direct`):
/// tells a gateway apart from a fixed proxy.
pub const PROXY_INFO: &str = "profile_lookup_proxy_info";
/// Counter: finished trace spans dropped because `telemetry.max_queued_spans` were already
/// waiting to be exported (a collector down or slow); 0 while traces are off.
pub const TRACE_SPANS_DROPPED: &str = "profile_lookup_trace_spans_dropped_total";
/// Resident memory of the process, in bytes (the conventional Prometheus name, so the shipped
/// alert "RSS near its bound" and dashboards find it).
pub const RESIDENT_MEMORY: &str = "process_resident_memory_bytes";

static PROMETHEUS: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// The process's Prometheus handle, installing the recorder on first use.
///
/// `None` if another recorder was installed first (then `/metrics` says so).
pub fn metrics_handle() -> Option<PrometheusHandle> {
    PROMETHEUS
        .get_or_init(|| {
            let buckets = [
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                10.0, 30.0,
            ];
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Full(HTTP_LATENCY.into()), &buckets)
                .ok()?
                .install_recorder()
                .ok()?;
            describe();
            zero::register();
            spawn_upkeep(recorder.clone());
            Some(recorder)
        })
        .clone()
}

/// How often the recorder folds pending histogram samples into its buckets.
pub const UPKEEP_INTERVAL: Duration = Duration::from_secs(5);

/// Runs the recorder's upkeep for the life of the process.
///
/// `install_recorder` starts no upkeep of its own: without it, every histogram sample is kept
/// until the next scrape, so a replica nobody scrapes grows by a few bytes per request for
/// ever (measured: about 18 bytes). A plain thread keeps this independent of any runtime.
fn spawn_upkeep(handle: PrometheusHandle) {
    let _ = std::thread::Builder::new()
        .name("metrics-upkeep".into())
        .spawn(move || {
            loop {
                std::thread::sleep(UPKEEP_INTERVAL);
                handle.run_upkeep();
                record_resident_memory();
            }
        });
}

fn describe() {
    metrics::describe_counter!(
        HTTP_REQUESTS,
        "Requests answered, by route template and status"
    );
    metrics::describe_histogram!(
        HTTP_LATENCY,
        metrics::Unit::Seconds,
        "Request latency by route template"
    );
    metrics::describe_gauge!(HTTP_IN_FLIGHT, "Requests being handled now");
    metrics::describe_gauge!(RESIDENT_MEMORY, "Resident memory of the process, in bytes");
    metrics::describe_counter!(UPSTREAM_LOOKUPS, "Upstream lookups by platform and outcome");
    metrics::describe_counter!(
        TRACE_SPANS_DROPPED,
        "Finished trace spans dropped because the export queue was full"
    );
    metrics::describe_counter!(
        UPSTREAM_CHALLENGES,
        "WAF challenges met on the way to an answer, by platform"
    );
    metrics::describe_counter!(
        UPSTREAM_REQUESTS,
        "HTTP requests sent upstream, by platform"
    );
    metrics::describe_counter!(UPSTREAM_RETRIES, "Upstream retries by platform and reason");
    metrics::describe_counter!(
        KEY_REQUESTS,
        "Requests by API key id (a digest's head) and result, with rate_limit.key_id_metrics"
    );
    metrics::describe_counter!(
        UPSTREAM_FAILURES,
        "Upstream requests that got no answer, by platform and cause"
    );
    metrics::describe_counter!(
        UPSTREAM_BLOCKS,
        "Documents the platform refused, by platform, source and reason"
    );
    metrics::describe_counter!(
        SOURCE_ANSWERS,
        "Lookups answered (a profile or a not-found) by each source, by platform and source"
    );
    metrics::describe_counter!(CACHE_LOOKUPS, "Cache lookups by platform and result");
    metrics::describe_counter!(
        BLAME,
        "Who each refusal, failure or silence was blamed on, by platform, party and signal"
    );
    metrics::describe_counter!(
        QUERY_IDS_LEARNED,
        "Query ids learned from the platform's documents, by platform, query and where"
    );
    metrics::describe_counter!(
        QUERY_CHANGED,
        "Answers saying a query changed (id retired or variables moved), by platform, query and part"
    );
    metrics::describe_counter!(
        COMPLEMENTS,
        "Fields asked of a complementing document (the photo-share post count), by platform and result"
    );
    metrics::describe_counter!(
        PROXY_REQUESTS,
        "Upstream requests sent through each route, by platform and proxy position"
    );
    metrics::describe_counter!(
        PROXY_BLOCKS,
        "Block signals and proxy failures per route, by platform and proxy position"
    );
    metrics::describe_gauge!(
        PROXY_RESTING,
        "1 while a proxy rests after a block or a failure, by platform and proxy position"
    );
    metrics::describe_gauge!(
        SOURCE_STANDING,
        "1 for each source's standing by the evidence (preferred, refused on every route, demoted), by platform and source"
    );
    metrics::describe_gauge!(
        PROXY_INFO,
        "1 per route, by platform, proxy position and kind (fixed, gateway, direct)"
    );
    metrics::describe_counter!(
        GATEWAY_SESSIONS_STARTED,
        "Gateway sessions started (new exit addresses), by platform and gateway position"
    );
    metrics::describe_counter!(
        GATEWAY_SESSIONS_RETIRED,
        "Gateway sessions retired, by platform, gateway position and reason"
    );
    metrics::describe_counter!(
        GATEWAY_RESTS,
        "Rests of a whole gateway, by platform, gateway position and reason"
    );
    metrics::describe_gauge!(
        BREAKER_STATE,
        "Circuit breaker: 0 closed, 1 open, 2 half-open"
    );
    canary::describe();
}

/// The metrics of one route template the router knows: its label, built once, and the
/// handles of its series, looked up in the registry once each.
struct RouteMetrics {
    label: SharedString,
    requests: [OnceLock<metrics::Counter>; STATUSES.len()],
    latency: OnceLock<metrics::Histogram>,
}

/// The routes the router serves, named once by [`name_routes`].
static ROUTES: OnceLock<Box<[RouteMetrics]>> = OnceLock::new();
/// The label of a request no route matched.
pub const UNMATCHED_ROUTE: &str = "unmatched";

/// Names the route templates the router serves, once per process (every router of a process
/// serves the same routes): their labels are built here, not per request.
pub fn name_routes<'a>(templates: impl Iterator<Item = &'a str>) {
    ROUTES.get_or_init(|| {
        templates
            .map(|t| SharedString::from(std::sync::Arc::<str>::from(t)))
            .chain([SharedString::const_str(UNMATCHED_ROUTE)])
            .map(|label| RouteMetrics {
                label,
                requests: [const { OnceLock::new() }; STATUSES.len()],
                latency: OnceLock::new(),
            })
            .collect()
    });
}

/// Statuses the service answers with, as label text.
const STATUSES: [(u16, &str); 12] = [
    (200, "200"),
    (400, "400"),
    (401, "401"),
    (404, "404"),
    (405, "405"),
    (408, "408"),
    (413, "413"),
    (429, "429"),
    (431, "431"),
    (500, "500"),
    (503, "503"),
    (504, "504"),
];

/// Records one answered request.
///
/// Every request passes here, so the handles of the known routes and statuses are looked up
/// in the registry once (on their first use, so no series appears before it has a count) and
/// kept: a request then costs no label allocation and no registry hashing.
pub fn request_done(route: &str, status: u16, elapsed: Duration) {
    let seconds = elapsed.as_secs_f64();
    let known = ROUTES
        .get()
        .and_then(|routes| routes.iter().find(|r| r.label.as_ref() == route));
    let s = STATUSES.iter().position(|(code, _)| *code == status);
    if let Some(known) = known {
        let route = known.label.clone();
        match s {
            Some(s) => known.requests[s]
                .get_or_init(|| {
                    let _ = metrics_handle();
                    let status = SharedString::const_str(STATUSES[s].1);
                    counter!(HTTP_REQUESTS, "route" => route.clone(), "status" => status)
                })
                .increment(1),
            None => {
                counter!(HTTP_REQUESTS, "route" => route.clone(), "status" => status.to_string())
                    .increment(1)
            }
        }
        known
            .latency
            .get_or_init(|| {
                let _ = metrics_handle();
                histogram!(HTTP_LATENCY, "route" => route)
            })
            .record(seconds);
        return;
    }
    let route = SharedString::from(route.to_owned());
    let status: SharedString = match s {
        Some(s) => SharedString::const_str(STATUSES[s].1),
        None => SharedString::from(status.to_string()),
    };
    counter!(HTTP_REQUESTS, "route" => route.clone(), "status" => status).increment(1);
    histogram!(HTTP_LATENCY, "route" => route).record(seconds);
}

/// Moves the in-flight gauge by `delta` (its handle is taken once).
pub fn in_flight(delta: f64) {
    static GAUGE: OnceLock<metrics::Gauge> = OnceLock::new();
    GAUGE
        .get_or_init(|| {
            let _ = metrics_handle();
            gauge!(HTTP_IN_FLIGHT)
        })
        .increment(delta);
}

/// Records how one upstream lookup ended.
pub fn lookup_outcome(platform: &'static str, outcome: &'static str) {
    counter!(UPSTREAM_LOOKUPS, "platform" => platform, "outcome" => outcome).increment(1);
}

/// Records a WAF challenge met during a lookup (the lookup's outcome is recorded at its end).
pub fn challenge(platform: &'static str) {
    counter!(UPSTREAM_CHALLENGES, "platform" => platform).increment(1);
}

/// Records one HTTP request sent upstream.
pub fn upstream_request(platform: &'static str) {
    counter!(UPSTREAM_REQUESTS, "platform" => platform).increment(1);
}

/// Counts one upstream request of `platform` that got no answer, by its `cause` (one of
/// [`FAILURE_CAUSES`]).
pub fn upstream_failure(platform: &'static str, cause: &'static str) {
    counter!(UPSTREAM_FAILURES, "platform" => platform, "cause" => cause).increment(1);
}

/// Counts one request of the key whose id is `key_id`, `admitted` or `rate_limited`.
pub fn key_request(key_id: &str, result: &'static str) {
    counter!(KEY_REQUESTS, "key_id" => key_id.to_owned(), "result" => result).increment(1);
}

/// Records one retry and why.
pub fn retry(platform: &'static str, reason: &'static str) {
    counter!(UPSTREAM_RETRIES, "platform" => platform, "reason" => reason).increment(1);
}

/// Records one document the platform refused, by its source and the block's reason.
pub fn upstream_block(platform: &'static str, source: &'static str, reason: &'static str) {
    counter!(UPSTREAM_BLOCKS, "platform" => platform, "source" => source, "reason" => reason)
        .increment(1);
}

/// Records who an outcome was blamed on.
pub fn blame(platform: &'static str, party: &'static str, signal: &'static str) {
    counter!(BLAME, "platform" => platform, "party" => party, "signal" => signal).increment(1);
}

/// Records a query id learned from the platform's documents.
pub fn query_id_learned(platform: &'static str, query: &'static str, from: &'static str) {
    counter!(QUERY_IDS_LEARNED, "platform" => platform, "query" => query, "from" => from)
        .increment(1);
}

/// Records an answer saying `query` changed (`part`: what moved).
pub fn query_changed(platform: &'static str, query: &'static str, part: &'static str) {
    counter!(QUERY_CHANGED, "platform" => platform, "query" => query, "part" => part).increment(1);
}

/// Records a complement asked: `read` when it gave the field, `withheld` when it could not.
pub fn complement(platform: &'static str, result: &'static str) {
    counter!(COMPLEMENTS, "platform" => platform, "result" => result).increment(1);
}

/// Records a lookup that `source` answered.
pub fn source_answer(platform: &'static str, source: &'static str) {
    counter!(SOURCE_ANSWERS, "platform" => platform, "source" => source).increment(1);
}

/// The standings [`source_standing`] reports, one series each.
pub const STANDINGS: [&str; 3] = ["preferred", "refused", "demoted"];

/// Shows `source` of `platform` in `standing` (one of [`STANDINGS`]).
pub fn source_standing(platform: &'static str, source: &'static str, standing: &'static str) {
    for s in STANDINGS {
        let on = if s == standing { 1.0 } else { 0.0 };
        gauge!(SOURCE_STANDING, "platform" => platform, "source" => source, "standing" => s)
            .set(on);
    }
}

/// Records a cache lookup result.
///
/// Every cached answer passes here, so the six counters are looked up in the registry once and
/// kept, instead of hashing their labels on each hit.
pub fn cache(platform: Platform, result: &'static str) {
    static COUNTERS: OnceLock<Vec<metrics::Counter>> = OnceLock::new();
    let counters = COUNTERS.get_or_init(|| {
        // The recorder must exist before handles are taken, or they would count nowhere.
        let _ = metrics_handle();
        Platform::ALL
            .iter()
            .flat_map(|p| {
                CACHE_RESULTS
                    .iter()
                    .map(move |r| counter!(CACHE_LOOKUPS, "platform" => p.as_str(), "result" => *r))
            })
            .collect()
    });
    match CACHE_RESULTS.iter().position(|r| *r == result) {
        Some(r) => counters[platform.index() * CACHE_RESULTS.len() + r].increment(1),
        None => counter!(CACHE_LOOKUPS, "platform" => platform.as_str(), "result" => result)
            .increment(1),
    }
}

/// The requests and blocks counters and the resting gauge of one route, taken once when the
/// route is built (`label` is a position or `"direct"`, never a URL).
pub fn proxy_handles(
    platform: &'static str,
    label: &str,
) -> (metrics::Counter, metrics::Counter, metrics::Gauge) {
    let proxy = SharedString::from(label.to_owned());
    (
        counter!(PROXY_REQUESTS, "platform" => platform, "proxy" => proxy.clone()),
        counter!(PROXY_BLOCKS, "platform" => platform, "proxy" => proxy.clone()),
        gauge!(PROXY_RESTING, "platform" => platform, "proxy" => proxy),
    )
}

/// The started-sessions counter of gateway `label`.
pub fn gateway_sessions_started(platform: &'static str, label: &str) -> metrics::Counter {
    counter!(GATEWAY_SESSIONS_STARTED, "platform" => platform, "proxy" => label.to_owned())
}

/// The retired-sessions counter of gateway `label` for `reason`.
pub fn gateway_sessions_retired(
    platform: &'static str,
    label: &str,
    reason: &'static str,
) -> metrics::Counter {
    counter!(GATEWAY_SESSIONS_RETIRED, "platform" => platform, "proxy" => label.to_owned(), "reason" => reason)
}

/// Counts `n` rests of gateway `label` for `reason` (0 registers the series, so that a
/// dashboard or an alert reads 0 before the first rest).
pub fn gateway_rests(platform: &'static str, label: &str, reason: &'static str, n: u64) {
    counter!(GATEWAY_RESTS, "platform" => platform, "proxy" => label.to_owned(), "reason" => reason)
        .increment(n);
}

/// Marks route `label` as a `kind` of route (`fixed`, `gateway`, `direct`).
pub fn proxy_kind(platform: &'static str, label: &str, kind: &'static str) {
    gauge!(PROXY_INFO, "platform" => platform, "proxy" => label.to_owned(), "kind" => kind)
        .set(1.0);
}

/// Sets the breaker gauge.
pub fn breaker_state(platform: &'static str, state: u8) {
    gauge!(BREAKER_STATE, "platform" => platform).set(f64::from(state));
}

/// Installs the tracing subscriber per `[log]`; a second call is a no-op.
///
/// `RUST_LOG`, when set, overrides `log.level`.
pub fn init_logging(log: &LogConfig) {
    let builder = tracing_subscriber::fmt()
        .with_env_filter(log_filter(log))
        .with_writer(std::io::stderr)
        .with_ansi(colour_wanted(
            std::io::IsTerminal::is_terminal(&std::io::stderr()),
            std::env::var_os("NO_COLOR").as_deref(),
        ));
    let _ = match log.format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .try_init(),
        LogFormat::Pretty => builder.compact().fmt_fields(EscapedFields).try_init(),
    };
}

/// Installs the subscriber per `[log]` and, when an endpoint is set, starts exporting traces
/// (`[telemetry]`, [`traces`]): the log lines are the same either way. The exporter is
/// returned to be flushed at shutdown; `Err` says why a set endpoint cannot be used.
pub fn init(log: &LogConfig, telemetry: &TelemetryConfig) -> Result<Option<Traces>, String> {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let Some((traces, tracer)) = Traces::start(telemetry)? else {
        init_logging(log);
        return Ok(None);
    };
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(colour_wanted(
            std::io::IsTerminal::is_terminal(&std::io::stderr()),
            std::env::var_os("NO_COLOR").as_deref(),
        ));
    let logs = match log.format {
        LogFormat::Json => layer
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .boxed(),
        LogFormat::Pretty => layer.compact().fmt_fields(EscapedFields).boxed(),
    };
    let _ = tracing_subscriber::registry()
        .with(logs.with_filter(log_filter(log)))
        .with(trace_layer(tracer))
        .try_init();
    Ok(Some(traces))
}

/// The layer that makes OpenTelemetry spans of the trace spans ([`traces::TARGET`]) for
/// `tracer`, and of nothing else (no log event becomes a span event).
pub fn trace_layer<S>(tracer: SdkTracer) -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::filter::FilterExt as _;
    // The trace spans of sampled traces only: one not sampled makes no span (see
    // `trace_context::server_span`). Asked at every span, never cached per callsite (a plain
    // `filter_fn` is: the first request's sampling would decide every later one's).
    let spans = tracing_subscriber::filter::Targets::new()
        .with_target(traces::TARGET, tracing::Level::TRACE)
        .and(tracing_subscriber::filter::dynamic_filter_fn(|_, _| {
            trace_context::sampled_now()
        }));
    // Only what the spans say: no source locations, threads, timings or target, which cost
    // allocations per span and tell an operator nothing about the lookup.
    tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_tracked_inactivity(false)
        .with_target(false)
        .with_filter(spans)
}

/// The log lines' filter: `RUST_LOG`, else `log.level`; never the trace spans' target.
pub fn log_filter(log: &LogConfig) -> EnvFilter {
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&log.level))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    match format!("{}=off", traces::TARGET).parse() {
        Ok(directive) => filter.add_directive(directive),
        Err(_) => filter,
    }
}

/// Whether log lines get ANSI colours: only on a terminal, and never when `NO_COLOR` is set to
/// anything but the empty string (<https://no-color.org>). Piped or redirected logs stay plain.
fn colour_wanted(stderr_is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    stderr_is_terminal && no_color.is_none_or(std::ffi::OsStr::is_empty)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn resident_memory_is_read_from_the_status_text() {
        let status = "Name:\tx\nVmPeak:\t  9000 kB\nVmRSS:\t   4321 kB\nThreads:\t3\n";
        assert_eq!(super::resident_bytes(status), Some(4321 * 1024));
        assert_eq!(super::resident_bytes("VmRSS: lots kB"), None);
        assert_eq!(super::resident_bytes(""), None);
        let own = std::fs::read_to_string("/proc/self/status").unwrap();
        assert!(super::resident_bytes(&own).unwrap() > 1024 * 1024);
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        use super::colour_wanted;
        assert!(colour_wanted(true, None));
        assert!(colour_wanted(true, Some("".as_ref())));
        assert!(!colour_wanted(true, Some("1".as_ref())));
        assert!(!colour_wanted(false, None));
    }

    #[test]
    fn installing_the_recorder_starts_its_upkeep() {
        let _ = super::metrics_handle();
        let upkeep_running = || {
            std::fs::read_dir("/proc/self/task")
                .unwrap()
                .filter_map(Result::ok)
                .filter_map(|task| std::fs::read_to_string(task.path().join("comm")).ok())
                .any(|name| name.trim() == "metrics-upkeep")
        };
        // A new thread names itself once it runs: allow it a moment.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while !upkeep_running() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(
            upkeep_running(),
            "histogram samples would pile up until a scrape"
        );
    }
}

/// Sets [`RESIDENT_MEMORY`] from `/proc/self/status` (Linux; elsewhere nothing is recorded).
/// Called by the recorder's upkeep and before each scrape, so the gauge is never stale.
pub fn record_resident_memory() {
    if let Some(bytes) = std::fs::read_to_string("/proc/self/status")
        .ok()
        .as_deref()
        .and_then(resident_bytes)
    {
        metrics::gauge!(RESIDENT_MEMORY).set(bytes as f64);
    }
}

/// The `VmRSS:` line of a `/proc/PID/status` text, in bytes.
fn resident_bytes(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}
