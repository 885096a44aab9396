//! Traces (docs/operations.md, Traces): the real binary (`serve`) exporting to a loopback OTLP
//! collector ([`super::collector`]) that decodes what arrives. Each lookup is one trace whose
//! span tree says what it did; a caller's `traceparent` is continued and never passed on to a
//! platform; no span names a username, a key or a credential; and a collector that is down,
//! slow or refusing costs a lookup nothing (its spans are dropped and counted instead).

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use stand_in::{photo_share as ps, short_video as sv};

use super::collector::{Collector, Mode, Span, tree};
use crate::support::replica_process::{self, ReplicaProcess};
use crate::support::{KEY, PhotoShare, ShortVideo, Upstream, closed_port, profile_path};
use crate::support::{routers, spawn_upstream, test_redis};

/// The short-video stand-in, and photo-share's whose JSON endpoint refuses every name (its
/// page answers): a lookup there falls through from a blocked source to the next.
async fn upstream() -> Upstream {
    let photo_share = crate::platform::fall_through::retired_json();
    spawn_upstream(routers::split("/@", sv::router(), photo_share)).await
}

/// A replica on `upstream` exporting to `collector` (no Redis unless `redis`).
fn traced(
    upstream: &Upstream,
    endpoint: &str,
    redis: &str,
    extra: &[(&str, &str)],
) -> ReplicaProcess {
    let mut env = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint),
        ("OTEL_SERVICE_NAME", "profile-lookup-under-test"),
        ("PROFILE_LOOKUP__SERVER__DRAIN_DELAY_MS", "0"),
    ];
    env.extend_from_slice(extra);
    replica_process::start(upstream.addr, redis, &env)
}

/// `GET path` on `replica` with the test key and `headers`: the status, the body, how long.
async fn get(
    replica: &ReplicaProcess,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, String, Duration) {
    let client = reqwest::Client::new();
    let mut request = client.get(replica.url(path)).bearer_auth(KEY);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let started = Instant::now();
    let response = request.send().await.expect("the replica answers");
    let status = response.status().as_u16();
    let body = response.text().await.unwrap_or_default();
    (status, body, started.elapsed())
}

/// The one span named `name` in `trace`.
fn one<'a>(trace: &'a [Span], name: &str) -> &'a Span {
    let found: Vec<&Span> = trace.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "one `{name}` span in\n{}", tree(trace));
    found[0]
}

/// The spans named `name` in `trace`.
fn all<'a>(trace: &'a [Span], name: &str) -> Vec<&'a Span> {
    trace.iter().filter(|s| s.name == name).collect()
}

/// Whether `child` is under `ancestor` in `trace`.
fn under(trace: &[Span], child: &Span, ancestor: &Span) -> bool {
    let mut at = child;
    loop {
        if at.parent == ancestor.span_id {
            return true;
        }
        match trace.iter().find(|s| s.span_id == at.parent) {
            Some(parent) => at = parent,
            None => return false,
        }
    }
}

/// No span names or carries any of `secrets` (usernames, the key) in any name or attribute.
fn assert_clean(spans: &[Span], secrets: &[&str]) {
    assert!(!spans.is_empty());
    for span in spans {
        for secret in secrets {
            assert!(
                !span.name.contains(secret),
                "`{secret}` in the name of {span:?}"
            );
            for (key, value) in &span.attributes {
                assert!(
                    !value.contains(secret) && !key.contains(secret),
                    "`{secret}` in {key}={value} of {span:?}"
                );
            }
        }
    }
}

const ROUTE: &str = "GET /short-video/profile/{username}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_miss_and_then_a_hit_are_each_a_trace_of_what_the_lookup_did() {
    let collector = Collector::start(Mode::Accept).await;
    let upstream = upstream().await;
    let replica = traced(&upstream, &collector.endpoint(), "", &[]);
    let name = sv::PUBLIC_USER.unique_id;
    let path = profile_path(ShortVideo, name);
    let miss_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let hit_id = "5bf92f3577b34da6a3ce929d0e0e4736";
    let parent = |id: &str| format!("00-{id}-00f067aa0ba902b7-01");
    assert_eq!(
        get(&replica, &path, &[("traceparent", &parent(miss_id))])
            .await
            .0,
        200
    );
    assert_eq!(
        get(&replica, &path, &[("traceparent", &parent(hit_id))])
            .await
            .0,
        200
    );

    let miss = collector.trace(|s| s.trace_id == miss_id).await;
    println!("the span tree of a miss:\n{}", tree(&miss));
    let server = one(&miss, ROUTE);
    assert_eq!(server.service, "profile-lookup-under-test");
    assert_eq!(server.attr("http.route"), "/short-video/profile/{username}");
    assert_eq!(server.attr("http.request.method"), "GET");
    assert_eq!(server.attr("http.response.status_code"), "200");
    assert_eq!(
        server.attr("profile_lookup.key_id"),
        crate::support::key_id(KEY)
    );
    assert_eq!(
        server.parent, "00f067aa0ba902b7",
        "the caller's span is the parent"
    );
    let gate = one(&miss, "auth_and_quota");
    assert_eq!(gate.attr("profile_lookup.quota"), "ok");
    let cache = one(&miss, "cache");
    assert_eq!(cache.attr("profile_lookup.cache"), "miss");
    let flight = one(&miss, "flight");
    assert!(
        under(&miss, flight, cache),
        "the flight is the cache's\n{}",
        tree(&miss)
    );
    assert_eq!(one(&miss, "fleet").attr("profile_lookup.fleet"), "claimed");
    let source = one(&miss, "source");
    assert!(under(&miss, source, flight));
    assert_eq!(source.attr("profile_lookup.source.why"), "first");
    assert_eq!(source.attr("profile_lookup.source.outcome"), "ok");
    let attempt = one(&miss, "upstream_attempt");
    assert!(under(&miss, attempt, source));
    assert_eq!(attempt.attr("http.response.status_code"), "200");
    assert_eq!(attempt.attr("profile_lookup.route.kind"), "direct");
    assert_eq!(attempt.attr("profile_lookup.route.position"), "direct");
    assert!(
        attempt
            .attr("profile_lookup.response_bytes")
            .parse::<u64>()
            .unwrap()
            > 0
    );
    assert!(under(&miss, one(&miss, "extract"), attempt));

    let hit = collector.trace(|s| s.trace_id == hit_id).await;
    println!("the span tree of a hit:\n{}", tree(&hit));
    assert_eq!(one(&hit, "cache").attr("profile_lookup.cache"), "hit");
    assert!(all(&hit, "flight").is_empty() && all(&hit, "upstream_attempt").is_empty());
    assert_clean(&collector.spans(), &[name, KEY]);
}

/// Through a proxy with credentials and through a gateway, the attempt spans say the route's
/// kind and position, and no span names the proxy's user or password, the gateway's password
/// or any session id the gateway's exits carried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lookup_through_a_proxy_or_a_gateway_names_no_credential_and_no_session() {
    use crate::support::forward_proxy::{ForwardProxy, GATEWAY_PASSWORD, Mode as ProxyMode};
    const USER: &str = "trace-proxy-user";
    const PASSWORD: &str = "trace-proxy-pass-never-shown";
    let collector = Collector::start(Mode::Accept).await;
    let upstream = upstream().await;
    let fixed = ForwardProxy::start("fixed", ProxyMode::Forward, Some((USER, PASSWORD))).await;
    let gateway = ForwardProxy::start("gateway", ProxyMode::Gateway, None).await;
    let names = [sv::PUBLIC_USER.unique_id, sv::PRIVATE_USER.unique_id];
    for (kind, proxy) in [("fixed", &fixed), ("gateway", &gateway)] {
        let url = proxy.url();
        let replica = traced(
            &upstream,
            &collector.endpoint(),
            "",
            &[("PROFILE_LOOKUP__UPSTREAM__PROXIES", url.as_str())],
        );
        for name in names {
            let (status, body, _) = get(&replica, &profile_path(ShortVideo, name), &[]).await;
            assert_eq!(status, 200, "{kind}, {name}: {body}");
        }
        let attempts = eventually_spans(&collector, |s| {
            s.name == "upstream_attempt" && s.attr("profile_lookup.route.kind") == kind
        })
        .await;
        assert!(!attempts.is_empty(), "no {kind} attempt span");
    }
    // The session ids the gateway's exits carried, as the platform saw them.
    let sessions: Vec<String> = upstream
        .via()
        .into_iter()
        .filter(|tag| tag != "fixed" && !tag.is_empty())
        .collect();
    assert!(
        !sessions.is_empty(),
        "the gateway's exits: {:?}",
        upstream.via()
    );
    let mut secrets = vec![USER, PASSWORD, GATEWAY_PASSWORD, "sessid", KEY];
    secrets.extend(names);
    secrets.extend(sessions.iter().map(String::as_str));
    assert_clean(&collector.spans(), &secrets);
}

/// The spans `wanted` picks, once one has arrived (5 s at most).
async fn eventually_spans(collector: &Collector, wanted: impl Fn(&Span) -> bool) -> Vec<Span> {
    let started = Instant::now();
    loop {
        let spans: Vec<Span> = collector
            .spans()
            .into_iter()
            .filter(|s| wanted(s))
            .collect();
        if !spans.is_empty() || started.elapsed() > Duration::from_secs(5) {
            return spans;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_source_falls_through_to_the_next_and_no_trace_header_goes_upstream() {
    let collector = Collector::start(Mode::Accept).await;
    let upstream = upstream().await;
    let replica = traced(&upstream, &collector.endpoint(), "", &[]);
    let caller = [
        (
            "traceparent",
            "00-6bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ),
        ("tracestate", "vendor=opaque"),
        ("baggage", "user=someone"),
    ];
    let name = ps::PUBLIC_USER.username;
    let (status, _, _) = get(&replica, &profile_path(PhotoShare, name), &caller).await;
    assert_eq!(status, 200);
    let short = sv::PUBLIC_USER.unique_id;
    assert_eq!(
        get(&replica, &profile_path(ShortVideo, short), &caller)
            .await
            .0,
        200
    );

    let trace = collector
        .trace(|s| {
            s.trace_id == "6bf92f3577b34da6a3ce929d0e0e4736" && s.name.contains("photo-share")
        })
        .await;
    let trace: Vec<Span> = trace.into_iter().collect();
    println!(
        "the span tree of a lookup that fell through:\n{}",
        tree(&trace)
    );
    let sources = all(&trace, "source");
    let photo_share_sources: Vec<&&Span> = sources
        .iter()
        .filter(|s| s.attr("profile_lookup.platform") == "photo-share")
        .collect();
    assert!(photo_share_sources.len() >= 2, "{}", tree(&trace));
    let (first, last) = (
        photo_share_sources[0],
        photo_share_sources[photo_share_sources.len() - 1],
    );
    assert_eq!(first.attr("profile_lookup.source.why"), "first");
    let refused = first.attr("profile_lookup.source.outcome");
    assert_eq!(
        last.attr("profile_lookup.source.why"),
        refused,
        "asked after the refusal"
    );
    assert_eq!(last.attr("profile_lookup.source.outcome"), "ok");
    let blocked = all(&trace, "upstream_attempt")
        .into_iter()
        .find(|a| under(&trace, a, first))
        .expect("the refused source's attempt");
    assert_eq!(blocked.attr("http.response.status_code"), "429");
    assert!(
        !blocked.attr("profile_lookup.block_reason").is_empty(),
        "{blocked:?}"
    );

    let seen = upstream.seen();
    assert!(
        seen.len() >= 3,
        "both sources and both platforms were asked"
    );
    for request in &seen {
        for header in [
            "traceparent",
            "tracestate",
            "baggage",
            "b3",
            "uber-trace-id",
        ] {
            assert_eq!(
                request.header(header),
                "",
                "{header} sent to {}",
                request.target
            );
        }
    }
    assert_clean(&collector.spans(), &[name, short, KEY]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trace_id_is_the_callers_in_problems_and_a_malformed_traceparent_starts_a_new_one() {
    let collector = Collector::start(Mode::Accept).await;
    let upstream = upstream().await;
    let replica = traced(&upstream, &collector.endpoint(), "", &[]);
    let caller = "00-7bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let (status, body, _) = get(
        &replica,
        "/short-video/profile/a%20b",
        &[("traceparent", caller)],
    )
    .await;
    assert_eq!(status, 400);
    let problem: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        problem["trace_id"], "7bf92f3577b34da6a3ce929d0e0e4736",
        "{problem}"
    );
    let server = collector
        .trace(|s| s.trace_id == "7bf92f3577b34da6a3ce929d0e0e4736")
        .await;
    let server = one(&server, ROUTE);
    assert_eq!(
        server.attr("profile_lookup.problem_code"),
        "invalid_username"
    );
    assert_eq!(server.attr("http.response.status_code"), "400");

    for malformed in [
        "00-xyz-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
    ] {
        let (status, body, _) = get(&replica, "/nowhere", &[("traceparent", malformed)]).await;
        assert_eq!(status, 404, "a malformed traceparent is never an error");
        let problem: serde_json::Value = serde_json::from_str(&body).unwrap();
        let id = problem["trace_id"].as_str().unwrap().to_owned();
        assert_eq!(id.len(), 32);
        assert!(
            id.chars().all(|c| c.is_ascii_hexdigit()) && id != "0".repeat(32),
            "{id}"
        );
        let trace = collector.trace(|s| s.trace_id == id).await;
        assert!(
            trace.iter().all(|s| s.parent.is_empty()),
            "a new trace: {trace:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_waiting_on_another_replicas_fetch_says_so_in_its_trace() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let collector = Collector::start(Mode::Accept).await;
    let slow = routers::slow(sv::router(), Duration::from_millis(800));
    let upstream = spawn_upstream(slow).await;
    let a = traced(&upstream, &collector.endpoint(), &redis.url(), &[]);
    let b = traced(&upstream, &collector.endpoint(), &redis.url(), &[]);
    let path = profile_path(ShortVideo, sv::PUBLIC_USER.unique_id);
    let first = "00-8bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let second = "00-9bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let (a_headers, b_headers) = ([("traceparent", first)], [("traceparent", second)]);
    let (a_answer, b_answer) = tokio::join!(get(&a, &path, &a_headers), async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        get(&b, &path, &b_headers).await
    });
    assert_eq!((a_answer.0, b_answer.0), (200, 200));
    assert_eq!(upstream.hits(), 1, "one fetch for the fleet");

    let fetched = collector
        .trace(|s| s.trace_id == "8bf92f3577b34da6a3ce929d0e0e4736")
        .await;
    println!("the replica that fetched:\n{}", tree(&fetched));
    assert_eq!(
        one(&fetched, "fleet").attr("profile_lookup.fleet"),
        "claimed"
    );
    let redis_calls = all(&fetched, "redis");
    assert!(!redis_calls.is_empty(), "{}", tree(&fetched));
    for call in &redis_calls {
        assert_eq!(call.attr("db.system.name"), "redis");
        assert!(!call.attr("db.operation.name").is_empty());
        assert!(
            !call.attr("db.operation.name").contains(':'),
            "a key's name: {call:?}"
        );
    }
    let waited = collector
        .trace(|s| s.trace_id == "9bf92f3577b34da6a3ce929d0e0e4736")
        .await;
    println!("the replica that waited:\n{}", tree(&waited));
    assert_eq!(one(&waited, "cache").attr("profile_lookup.cache"), "joined");
    assert_eq!(
        one(&waited, "fleet").attr("profile_lookup.fleet"),
        "waited_on_another_replica"
    );
    assert!(all(&waited, "upstream_attempt").is_empty());
    // A background task's Redis calls (a health ping, a renewal) are in no trace of their own.
    let spans = collector.spans();
    let orphans: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name == "redis" && s.parent.is_empty())
        .collect();
    assert!(orphans.is_empty(), "{orphans:#?}");
    assert_clean(&collector.spans(), &[sv::PUBLIC_USER.unique_id, KEY, "it:"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_refresh_is_a_trace_of_its_own_linked_to_the_lookup_that_started_it() {
    let collector = Collector::start(Mode::Accept).await;
    let upstream = upstream().await;
    let ttl = [("PROFILE_LOOKUP__CACHE__TTL_SECONDS", "1")];
    let replica = traced(&upstream, &collector.endpoint(), "", &ttl);
    let path = profile_path(ShortVideo, sv::PUBLIC_USER.unique_id);
    assert_eq!(get(&replica, &path, &[]).await.0, 200);
    tokio::time::sleep(Duration::from_millis(1300)).await;
    let caller = [(
        "traceparent",
        "00-cbf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    )];
    assert_eq!(get(&replica, &path, &caller).await.0, 200);
    let lookup = collector
        .trace(|s| s.trace_id == "cbf92f3577b34da6a3ce929d0e0e4736")
        .await;
    assert_eq!(one(&lookup, "cache").attr("profile_lookup.cache"), "stale");
    assert!(all(&lookup, "refresh").is_empty() && all(&lookup, "upstream_attempt").is_empty());
    let refresh = collector.trace(|s| s.name == "refresh").await;
    println!("the span tree of a background refresh:\n{}", tree(&refresh));
    let root = one(&refresh, "refresh");
    assert!(root.parent.is_empty(), "a trace of its own");
    assert_eq!(root.links, ["cbf92f3577b34da6a3ce929d0e0e4736"]);
    assert_eq!(all(&refresh, "upstream_attempt").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_spans_are_sent_at_shutdown() {
    let collector = Collector::start(Mode::Accept).await;
    let upstream = upstream().await;
    let replica = traced(&upstream, &collector.endpoint(), "", &[]);
    let caller = "00-abf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    assert_eq!(
        get(&replica, "/healthz", &[("traceparent", caller)])
            .await
            .0,
        200
    );
    let mut replica = replica;
    replica.terminate();
    assert!(replica.exited_within(Duration::from_secs(10)));
    assert!(
        collector
            .spans()
            .iter()
            .any(|s| s.trace_id == "abf92f3577b34da6a3ce929d0e0e4736"),
        "the span queued at SIGTERM was sent"
    );
}

/// The 99th percentile of `latencies`.
fn p99(latencies: &mut [Duration]) -> Duration {
    latencies.sort();
    latencies[(latencies.len() * 99).div_ceil(100) - 1]
}

/// `profile_lookup_trace_spans_dropped_total` of `replica`.
async fn dropped(replica: &ReplicaProcess) -> f64 {
    let text = reqwest::get(replica.url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find(|l| l.starts_with("profile_lookup_trace_spans_dropped_total"))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|v| v.parse().ok())
        .expect("the counter is exported")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_down_slow_or_refusing_never_slows_a_lookup_and_drops_are_counted() {
    let upstream = upstream().await;
    let slow = Collector::start(Mode::Slow).await;
    let refusing = Collector::start(Mode::Refuse).await;
    let down = format!("http://{}", closed_port().await);
    let small = [("PROFILE_LOOKUP__TELEMETRY__MAX_QUEUED_SPANS", "64")];
    let replicas = [
        ("off", replica_process::start(upstream.addr, "", &[])),
        ("down", traced(&upstream, &down, "", &small)),
        ("slow", traced(&upstream, &slow.endpoint(), "", &small)),
        (
            "refusing",
            traced(&upstream, &refusing.endpoint(), "", &small),
        ),
    ];
    let path = profile_path(ShortVideo, sv::PUBLIC_USER.unique_id);
    for (_, replica) in &replicas {
        assert_eq!(get(replica, &path, &[]).await.0, 200);
    }
    let mut latencies = vec![Vec::new(); replicas.len()];
    // Interleaved, so the machine's own noise falls on every replica alike.
    for _ in 0..200 {
        for (i, (_, replica)) in replicas.iter().enumerate() {
            let (status, _, took) = get(replica, &path, &[]).await;
            assert_eq!(status, StatusCode::OK.as_u16());
            latencies[i].push(took);
        }
    }
    let off = p99(&mut latencies[0]);
    println!(
        "p99 of 200 cached lookups, traces off: {:.2} ms",
        off.as_secs_f64() * 1e3
    );
    for (i, (what, replica)) in replicas.iter().enumerate().skip(1) {
        let p = p99(&mut latencies[i]);
        let drops = dropped(replica).await;
        println!(
            "p99 of 200 cached lookups, collector {what}: {:.2} ms ({:+.2} ms); spans dropped: {drops}",
            p.as_secs_f64() * 1e3,
            (p.as_secs_f64() - off.as_secs_f64()) * 1e3
        );
        assert!(
            p <= off + Duration::from_millis(5),
            "collector {what}: p99 {p:?} against {off:?}"
        );
    }
    assert!(
        dropped(&replicas[2].1).await > 0.0,
        "a slow collector's spans are dropped, counted"
    );
    assert_eq!(dropped(&replicas[0].1).await, 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lookup_not_sampled_first_leaves_the_next_sampled_one_whole() {
    let collector = Collector::start(Mode::Accept).await;
    let upstream = upstream().await;
    let replica = traced(&upstream, &collector.endpoint(), "", &[]);
    let path = profile_path(ShortVideo, sv::PUBLIC_USER.unique_id);
    // The caller's flag 00: not sampled, so the first lookup (a miss) makes no span.
    let unsampled = [(
        "traceparent",
        "00-dbf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
    )];
    assert_eq!(get(&replica, &path, &unsampled).await.0, 200);
    let other = profile_path(ShortVideo, sv::PRIVATE_USER.unique_id);
    let sampled = [(
        "traceparent",
        "00-ebf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    )];
    assert_eq!(get(&replica, &other, &sampled).await.0, 200);
    let trace = collector
        .trace(|s| s.trace_id == "ebf92f3577b34da6a3ce929d0e0e4736")
        .await;
    for name in [
        "auth_and_quota",
        "cache",
        "flight",
        "source",
        "upstream_attempt",
        "extract",
    ] {
        one(&trace, name);
    }
    assert!(
        collector
            .spans()
            .iter()
            .all(|s| s.trace_id != "dbf92f3577b34da6a3ce929d0e0e4736")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trace_not_sampled_makes_no_span_and_still_has_its_id() {
    let collector = Collector::start(Mode::Accept).await;
    let upstream = upstream().await;
    let sampler = [("OTEL_TRACES_SAMPLER", "always_off")];
    let replica = traced(&upstream, &collector.endpoint(), "", &sampler);
    let path = profile_path(ShortVideo, sv::PUBLIC_USER.unique_id);
    assert_eq!(get(&replica, &path, &[]).await.0, 200);
    assert_eq!(get(&replica, &path, &[]).await.0, 200);
    let (status, body, _) = get(&replica, "/nowhere", &[]).await;
    assert_eq!(status, 404);
    let problem: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        problem["trace_id"].as_str().map(str::len),
        Some(32),
        "{problem}"
    );
    // Three times the batch's delay: anything made would have been sent.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(collector.spans().is_empty(), "{:#?}", collector.spans());
}
