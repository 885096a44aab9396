//! The edge, against the real app on a loopback socket: auth, usernames, errors, request ids,
//! the rate limit, operator endpoints and server limits. None of these needs a working upstream:
//! the loopback upstream here answers 500 to everything and counts what reaches it.

use std::time::{Duration, Instant};

use crate::support::routers::status;
use crate::support::{KEY, PhotoShare, TestApp, eventually, problem, spawn_slow_not_found};
use axum::Router;
use axum::http::StatusCode;
use profile_lookup::config::Settings;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The app on an upstream that answers 500 to everything, with the test settings adjusted by
/// `adjust`.
async fn rig_with(adjust: impl FnOnce(&mut Settings)) -> TestApp {
    TestApp::on(status(StatusCode::INTERNAL_SERVER_ERROR))
        .with(adjust)
        .start()
        .await
}

async fn rig() -> TestApp {
    rig_with(|_| {}).await
}

#[tokio::test]
async fn bad_usernames_are_400_before_any_upstream_request() {
    let app = rig().await;
    let long = "a".repeat(10_000);
    let cases = [
        "..%2F..%2Fadmin",
        "a%2Fb",
        "x%3Fadmin=1",
        "x%23frag",
        "%40evil.example",
        "x%40y",
        ".",
        "..",
        "a..b",
        ".x",
        "x.",
        "%C3%BF",
        "%C0%AE",
        "x%00y",
        "x%0d%0aX-Injected:%201",
        "x%20y",
        "%ZZ",
        "%",
        long.as_str(),
        "%FF%FE",
    ];
    for platform in ["short-video", "photo-share"] {
        for raw in cases {
            let started = Instant::now();
            let response = app.get(&format!("/{platform}/profile/{raw}")).await;
            let status = response.status();
            assert!(status == 400 || status == 404, "{platform} {raw}: {status}");
            let body = problem(response).await;
            if status == 400 {
                assert_eq!(body["code"], "invalid_username");
                assert!(
                    body["detail"].as_str().unwrap().contains("ASCII letters"),
                    "{body}"
                );
            }
            assert!(started.elapsed() < Duration::from_secs(1));
        }
    }
    // The raw percent-encoded `.` segments are normalised away by the URL or land on no route.
    assert_eq!(app.hits(), 0, "no bad name reached the upstream");
}

#[tokio::test]
async fn raw_utf8_and_overlong_names_are_400() {
    let app = rig().await;
    // reqwest would percent-encode; write the request line by hand.
    let mut stream = TcpStream::connect(app.addr).await.unwrap();
    let request = format!(
        "GET /short-video/profile/\u{00ff}abc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert_eq!(app.hits(), 0);
}

#[tokio::test]
async fn a_missing_malformed_or_unknown_key_is_401_saying_which_with_its_challenge() {
    let app = rig().await;
    let path = "/short-video/profile/someone";
    let none = app.get_anonymous(path).await;
    assert_eq!(none.status(), 401);
    // RFC 6750 §3.1: no error code when the request carried no credentials at all.
    assert_eq!(none.headers()["www-authenticate"], "Bearer");
    let missing = problem(none).await;
    assert_eq!(missing["code"], "unauthorized");
    assert!(
        missing["detail"].as_str().unwrap().contains("is required"),
        "{missing}"
    );
    let wrong_same_length = "x".repeat(KEY.len());
    let minus_one = &KEY[..KEY.len() - 1];
    let plus_one = format!("{KEY}x");
    let long = "a".repeat(8192);
    let malformed = (r#"Bearer error="invalid_request""#, "malformed");
    let unknown = (r#"Bearer error="invalid_token""#, "not known");
    let values: Vec<(String, (&str, &str))> = vec![
        ("Bearer".into(), malformed),
        ("Bearer ".into(), malformed),
        (format!("Bearer\t{KEY}"), malformed),
        (format!("Basic {KEY}"), malformed),
        (format!("Token {KEY}"), malformed),
        (format!("Bearer {wrong_same_length}"), unknown),
        (format!("Bearer {minus_one}"), unknown),
        (format!("Bearer {plus_one}"), unknown),
        (format!("Bearer {long}"), malformed),
        (KEY.into(), malformed),
    ];
    for (value, (challenge, says)) in values {
        let answer = app
            .get_as(path, None, &[("authorization", &value)])
            .await
            .about(format!("{value:.40}"))
            .expect_status(401)
            .expect_header("www-authenticate", challenge);
        let body = answer.problem();
        assert_eq!(body["code"], "unauthorized", "{body}");
        let detail = body["detail"].as_str().unwrap();
        assert!(detail.contains(says), "{value:.40}: {detail}");
        assert!(!body.to_string().contains(KEY));
    }
    for (name, value) in [("x-api-key", KEY)] {
        app.get_as(path, None, &[(name, value)])
            .await
            .expect_status(401);
    }
    let response = app
        .get_anonymous(&format!("{path}?access_token={KEY}"))
        .await;
    assert_eq!(response.status(), 401, "keys in the query are not keys");
    assert_eq!(app.hits(), 0);
}

#[tokio::test]
async fn the_scheme_is_case_insensitive_and_two_headers_are_refused() {
    let app = rig().await;
    let path = "/short-video/profile/someone";
    for scheme in ["bearer", "BEARER", "Bearer", "bEaReR"] {
        let value = format!("{scheme} {KEY}");
        let answer = app.get_as(path, None, &[("authorization", &value)]).await;
        assert_ne!(answer.status(), 401, "{scheme}");
    }
    for order in [
        [format!("Bearer {KEY}"), "Bearer nope".into()],
        ["Bearer nope".into(), format!("Bearer {KEY}")],
    ] {
        let mut stream = TcpStream::connect(app.addr).await.unwrap();
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: {}\r\nAuthorization: {}\r\nConnection: close\r\n\r\n",
            order[0], order[1]
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer).await;
        assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
        let head = answer.to_ascii_lowercase();
        assert!(
            head.contains("www-authenticate: bearer error=\"invalid_request\""),
            "{answer}"
        );
        assert!(
            answer.contains("more than one Authorization header"),
            "{answer}"
        );
    }
}

#[tokio::test]
async fn non_ascii_authorization_bytes_are_401_not_500() {
    let app = rig().await;
    let mut stream = TcpStream::connect(app.addr).await.unwrap();
    let mut request = b"GET /photo-share/profile/someone HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xff\xfe\xc3\xa9\r\nConnection: close\r\n\r\n".to_vec();
    request.shrink_to_fit();
    stream.write_all(&request).await.unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    assert!(
        answer.starts_with(b"HTTP/1.1 401"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
}

#[tokio::test]
async fn unknown_routes_and_methods_are_problem_documents() {
    let app = rig().await;
    let response = app.get("/nope").await;
    assert_eq!(response.status(), 404);
    assert_eq!(problem(response).await["code"], "not_found");
    let response = app.get("/short-video/profile/").await;
    assert_eq!(response.status(), 404);
    assert_eq!(problem(response).await["code"], "not_found");

    for method in [
        reqwest::Method::POST,
        reqwest::Method::PUT,
        reqwest::Method::DELETE,
    ] {
        let response = app
            .client
            .request(method.clone(), app.url("/short-video/profile/someone"))
            .bearer_auth(KEY)
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 405, "{method}");
        assert_eq!(response.headers()["allow"], "GET, HEAD", "{method}");
        assert_eq!(problem(response).await["code"], "method_not_allowed");
        // A 10 MiB body announced is answered without being waited for.
        let started = Instant::now();
        let head = format!(
            "{method} /short-video/profile/someone HTTP/1.1\r\nHost: x\r\n\
             Authorization: Bearer {KEY}\r\nContent-Length: {}\r\n\r\n",
            10 * 1024 * 1024
        );
        let answer = String::from_utf8_lossy(&exchange(app.addr, head.into_bytes()).await)
            .to_ascii_lowercase();
        assert!(answer.starts_with("http/1.1 405"), "{method}: {answer:.80}");
        assert!(
            answer.contains("\r\nallow: get, head\r\n"),
            "{method}: {answer}"
        );
        assert!(started.elapsed() < Duration::from_secs(5), "{method}");
    }
    let response = app.client.post(app.url("/healthz")).send().await.unwrap();
    assert_eq!(response.status(), 405);
}

#[tokio::test]
async fn every_response_carries_a_request_id_and_sane_ones_are_echoed() {
    let app = rig().await;
    let response = app.get("/healthz").await;
    let generated = response.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(generated.len(), 36, "a UUID: {generated}");
    let id = |value| [("x-request-id", value)];
    app.get_as("/nope", None, &id("trace-42.a:b"))
        .await
        .expect_header("x-request-id", "trace-42.a:b");
    let answer = app
        .get_as("/healthz", None, &id("bad id with spaces"))
        .await;
    assert_ne!(answer.header("x-request-id"), "bad id with spaces");
    let response = app.get_anonymous("/short-video/profile/x1").await;
    assert!(
        response.headers().contains_key("x-request-id"),
        "errors too"
    );
}

#[tokio::test]
async fn the_rate_limit_answers_429_with_headers_before_any_upstream_request() {
    let app = rig_with(|s| {
        s.rate_limit.per_key_per_minute = 60;
        s.rate_limit.burst = 3;
        s.retry.max_attempts = 1;
    })
    .await;
    for i in 0..3 {
        let response = app.get(&format!("/photo-share/profile/name{i}")).await;
        assert_ne!(response.status(), 429);
        assert_eq!(
            response.headers()["ratelimit-policy"],
            "\"per-key\";q=3;w=3"
        );
        let state = response.headers()["ratelimit"].to_str().unwrap().to_owned();
        assert!(
            state.starts_with(&format!("\"per-key\";r={};t=", 2 - i)),
            "{state}"
        );
    }
    let hits_before = app.hits();
    let response = app.get("/photo-share/profile/another").await;
    assert_eq!(response.status(), 429);
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&retry_after), "{retry_after}");
    assert!(
        response.headers()["ratelimit"]
            .to_str()
            .unwrap()
            .starts_with("\"per-key\";r=0;t=")
    );
    assert_eq!(problem(response).await["code"], "rate_limited");
    assert_eq!(
        app.hits(),
        hits_before,
        "the limited request never went upstream"
    );
    // Other keys are unaffected; unauthenticated floods never reach the limiter.
    for _ in 0..50 {
        app.get_as("/photo-share/profile/x", Some(&uuid_like()), &[])
            .await
            .expect_status(401);
    }
}

fn uuid_like() -> String {
    format!("{:032x}", fastrand_u128())
}

fn fastrand_u128() -> u128 {
    use std::hash::{BuildHasher, RandomState};
    u128::from(RandomState::new().hash_one(Instant::now())) << 64 | 7
}

#[tokio::test]
async fn operator_endpoints_are_open() {
    if !crate::support::own_process(concat!(module_path!(), "::operator_endpoints_are_open")) {
        return;
    }
    let app = rig().await;
    let health = app.get_anonymous("/healthz").await;
    assert_eq!(health.status(), 200);
    assert_eq!(
        health.json::<serde_json::Value>().await.unwrap()["status"],
        "ok"
    );
    assert_eq!(app.get_anonymous("/readyz").await.status(), 200);
    let _ = app.get_anonymous("/nope").await;
    let metrics = app.get_anonymous("/metrics").await;
    assert_eq!(metrics.status(), 200);
    let text = metrics.text().await.unwrap();
    // This test's process is its own: the 404 above is the only one counted.
    let not_found = r#"profile_lookup_http_requests_total{route="unmatched",status="404"}"#;
    assert_eq!(
        crate::support::series_value(&text, not_found),
        Some(1.0),
        "{text}"
    );
    let doc: serde_json::Value = app
        .get_anonymous("/openapi.json")
        .await
        .json()
        .await
        .unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
}

#[tokio::test]
async fn readiness_fails_while_draining() {
    let app = rig().await;
    app.state.set_ready(false);
    assert_eq!(app.get_anonymous("/readyz").await.status(), 503);
    assert_eq!(app.get_anonymous("/healthz").await.status(), 200);
}

/// Sends `request` on a new connection while reading the answer (a server that answers before
/// reading everything and closes must not turn the answer into a reset the client never read),
/// and returns what was read within 3 s.
async fn exchange(addr: std::net::SocketAddr, request: Vec<u8>) -> Vec<u8> {
    let (mut reader, mut writer) = TcpStream::connect(addr).await.unwrap().into_split();
    let sending = tokio::spawn(async move { writer.write_all(&request).await });
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while let Ok(Ok(n @ 1..)) = tokio::time::timeout_at(deadline, reader.read(&mut chunk)).await {
        answer.extend_from_slice(&chunk[..n]);
    }
    sending.abort();
    answer
}

async fn read_all(mut stream: TcpStream, limit: Duration) -> (Vec<u8>, bool) {
    let mut buf = Vec::new();
    let closed = tokio::time::timeout(limit, stream.read_to_end(&mut buf))
        .await
        .is_ok();
    (buf, closed)
}

#[tokio::test]
async fn silent_trickling_and_idle_connections_are_closed() {
    let app = TestApp::on(Router::new())
        .with(|s| s.server.header_read_timeout_ms = 500)
        .start()
        .await;
    // Sends nothing at all.
    let silent = TcpStream::connect(app.addr).await.unwrap();
    // Trickles a header, one byte at a time, never finishing.
    let mut trickle = TcpStream::connect(app.addr).await.unwrap();
    let trickler = tokio::spawn(async move {
        trickle
            .write_all(b"GET /healthz HTTP/1.1\r\nX-Slow: ")
            .await
            .ok();
        for _ in 0..40 {
            if trickle.write_all(b"a").await.is_err() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        false
    });
    // Finishes one request, then idles on keep-alive.
    let mut idle = TcpStream::connect(app.addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut first = [0u8; 12];
    idle.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");

    let (_, closed) = read_all(silent, Duration::from_secs(3)).await;
    assert!(closed, "a silent connection is closed");
    let (_, closed) = read_all(idle, Duration::from_secs(3)).await;
    assert!(closed, "an idle keep-alive connection is closed");
    assert!(trickler.await.unwrap(), "a trickling header is cut off");
    // Meanwhile a legitimate request is served.
    assert_eq!(app.get("/healthz").await.status(), 200);
}

#[tokio::test]
async fn oversized_heads_are_refused() {
    let app = rig().await;
    let huge_header = format!(
        "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(1024 * 1024)
    );
    let many_headers = format!(
        "GET /healthz HTTP/1.1\r\nHost: x\r\n{}\r\n",
        (0..101)
            .map(|i| format!("X-H{i}: v\r\n"))
            .collect::<String>()
    );
    let long_url = format!(
        "GET /healthz?{} HTTP/1.1\r\nHost: x\r\n\r\n",
        "a".repeat(64 * 1024)
    );
    for (request, status) in [
        (huge_header, "431"),
        (many_headers, "431"),
        (long_url, "431"),
    ] {
        let answer = exchange(app.addr, request.into_bytes()).await;
        let answer = String::from_utf8_lossy(&answer);
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "want {status}: {answer:.80}"
        );
    }
    assert_eq!(app.get("/healthz").await.status(), 200);
}

#[tokio::test]
async fn garbage_is_answered_or_closed_without_harm() {
    let app = rig().await;
    let inputs: [&[u8]; 4] = [
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage-tls-hello",
        b"NOT A REQUEST LINE\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Fold: a\r\n b\r\n\r\n",
        b"GET /healthz HTTP/9.9\r\n\r\n",
    ];
    for input in inputs {
        let mut stream = TcpStream::connect(app.addr).await.unwrap();
        let _ = stream.write_all(input).await;
        let (answer, closed) = read_all(stream, Duration::from_secs(12)).await;
        assert!(closed, "connection closed");
        assert!(
            answer.is_empty()
                || answer.starts_with(b"HTTP/1.1 400")
                || answer.starts_with(b"HTTP/1.1 505"),
            "{}",
            String::from_utf8_lossy(&answer)
        );
    }
    assert_eq!(app.get("/healthz").await.status(), 200);
}

/// Starts `GET path` with the test key on `app`'s client, which outlives the app (shutting it
/// down takes it); resolves to the status.
fn in_flight(
    app: &TestApp,
    path: &str,
) -> tokio::task::JoinHandle<reqwest::Result<reqwest::StatusCode>> {
    let request = app.client.get(app.url(path)).bearer_auth(KEY).send();
    tokio::spawn(async move { request.await.map(|r| r.status()) })
}

#[tokio::test]
async fn shutdown_finishes_in_flight_requests_then_returns() {
    // An upstream that answers slowly, so a lookup is in flight when shutdown begins.
    let app = TestApp::on(&spawn_slow_not_found(Duration::from_millis(700)).await)
        .start()
        .await;
    let in_flight = in_flight(&app, "/photo-share/profile/slowpoke");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let state = app.state.clone();
    let started = Instant::now();
    app.shutdown().await.unwrap();
    assert!(!state.is_ready(), "readiness fails once draining starts");
    assert!(started.elapsed() < Duration::from_secs(5));
    let status = in_flight
        .await
        .unwrap()
        .expect("the in-flight request was answered");
    assert_eq!(status, 404);
}

#[tokio::test]
async fn operator_endpoints_answer_while_lookups_fill_max_in_flight() {
    // An upstream that holds every request, so lookups sit in flight.
    let (app, holders) = TestApp::on(&spawn_slow_not_found(Duration::from_secs(30)).await)
        .with(|s| s.upstream.timeout_ms = 20_000)
        .start_full(2)
        .await;
    let shed = app.get("/photo-share/profile/third").await;
    assert_eq!(shed.status(), 503, "max_in_flight is full");
    for path in ["/healthz", "/readyz", "/metrics", "/openapi.json"] {
        assert_eq!(app.get_anonymous(path).await.status(), 200, "{path}");
    }
    for holder in holders {
        holder.abort();
    }
}

/// The number a structured header (`"per-key";q=10;w=100`) gives `name`.
fn parameter(header: &str, name: &str) -> u32 {
    header
        .split(';')
        .find_map(|p| p.strip_prefix(name)?.strip_prefix('='))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {header}"))
}

#[tokio::test]
async fn the_rate_limit_policy_states_the_burst_the_limiter_allows() {
    let app = TestApp::on(status(StatusCode::NOT_FOUND))
        .with(|s| {
            // 6 per minute (one every 10 s) with a burst of 10: 10 at once, then one per 10 s.
            s.rate_limit.per_key_per_minute = 6;
            s.rate_limit.burst = 10;
        })
        .start()
        .await;
    let mut admitted = 0;
    let mut policy = String::new();
    for i in 0..11 {
        let answer = app.lookup(PhotoShare, &format!("burst{i}")).await;
        policy = answer.header("ratelimit-policy").to_owned();
        let remaining = parameter(answer.header("ratelimit"), "r");
        if answer.status() != 429 {
            admitted += 1;
        }
        let quota = parameter(&policy, "q");
        assert!(remaining < quota, "r={remaining} is more than q={quota}");
    }
    assert_eq!(admitted, 10, "the burst");
    // The policy says what just happened: 10 units per window, refilled at 6 a minute.
    assert_eq!(policy, "\"per-key\";q=10;w=100");
}

#[tokio::test]
async fn a_probe_during_the_drain_never_sees_ready() {
    let app = TestApp::on(&spawn_slow_not_found(Duration::from_millis(1500)).await)
        .start()
        .await;
    let addr = app.addr;
    let state = app.state.clone();
    let in_flight = in_flight(&app, "/photo-share/profile/drainer");
    assert!(eventually(Duration::from_secs(5), || app.hits() == 1).await);
    let shutdown = tokio::spawn(app.shutdown());
    assert!(
        eventually(Duration::from_secs(2), || !state.is_ready()).await,
        "readiness flips as the drain starts"
    );
    // The drain is still going (the lookup holds it): a probe on a new connection is refused,
    // which every orchestrator counts as not ready, the same as a 503.
    let probe = reqwest::Client::new()
        .get(format!("http://{addr}/readyz"))
        .timeout(Duration::from_secs(2))
        .send()
        .await;
    match probe {
        Err(err) => assert!(err.is_connect(), "{err}"),
        Ok(response) => {
            assert_eq!(response.status(), 503);
            assert_eq!(response.text().await.unwrap(), r#"{"status":"draining"}"#);
        }
    }
    assert!(!shutdown.is_finished(), "the drain was still under way");
    shutdown.await.unwrap().unwrap();
    assert_eq!(in_flight.await.unwrap().unwrap(), 404);
}

#[tokio::test]
async fn during_the_drain_delay_readyz_fails_lookups_are_served_then_the_listener_closes() {
    const DRAIN: Duration = Duration::from_millis(1_500);
    // Names with `slow` in them are answered after 1 s (each of photo-share's two requests),
    // the others at once.
    let upstream = Router::new().fallback(|request: axum::extract::Request| async move {
        if request.uri().to_string().contains("slow") {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        StatusCode::NOT_FOUND
    });
    let app = TestApp::on(upstream)
        .with(|s| {
            s.server.drain_delay_ms = DRAIN.as_millis() as u64;
            s.server.shutdown_grace_ms = 5_000;
        })
        .start()
        .await;
    let (addr, state) = (app.addr, app.state.clone());
    let in_flight = in_flight(&app, "/photo-share/profile/slow.to.answer");
    assert!(eventually(Duration::from_secs(5), || app.hits() == 1).await);
    let began = Instant::now();
    let shutdown = tokio::spawn(app.shutdown());
    assert!(eventually(Duration::from_secs(1), || !state.is_ready()).await);
    // Each request on a connection of its own, as a balancer's probe and a new caller come.
    let fresh = || {
        reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .timeout(Duration::from_secs(3))
            .build()
            .unwrap()
    };
    let probe = fresh()
        .get(format!("http://{addr}/readyz"))
        .send()
        .await
        .expect("the listener is open during the drain delay");
    assert_eq!(probe.status(), 503);
    assert_eq!(probe.text().await.unwrap(), r#"{"status":"draining"}"#);
    let lookup = fresh()
        .get(format!("http://{addr}/photo-share/profile/still.served"))
        .bearer_auth(KEY)
        .send()
        .await
        .expect("lookups are served during the drain delay");
    assert_eq!(lookup.status(), 404);
    assert!(began.elapsed() < DRAIN, "all of that within the delay");
    // Then the listener closes: a new connection is refused.
    let refused = eventually(Duration::from_secs(4), || {
        std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err()
    })
    .await;
    assert!(refused, "the listener closed after the delay");
    assert!(began.elapsed() >= DRAIN - Duration::from_millis(100));
    // The lookup in flight since before SIGTERM finishes within the grace.
    shutdown.await.unwrap().unwrap();
    assert_eq!(in_flight.await.unwrap().unwrap(), 404);
}

#[tokio::test]
async fn the_root_is_a_json_index_of_where_to_go() {
    let app = rig().await;
    let response = app.get_anonymous("/").await;
    assert_eq!(response.status(), 200, "no key needed");
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let index: serde_json::Value = response.json().await.unwrap();
    assert_eq!(index["service"], "profile-lookup", "{index}");
    assert_eq!(index["docs"], "/docs", "{index}");
    assert_eq!(index["status"], "/status", "{index}");
    assert_eq!(index["openapi"], "/openapi.json", "{index}");
    assert_eq!(
        index["lookups"],
        serde_json::json!([
            "GET /short-video/profile/{username}",
            "GET /photo-share/profile/{username}"
        ]),
        "{index}"
    );
    // Each place it points to answers.
    for path in ["/docs/", "/status", "/openapi.json"] {
        assert_eq!(app.get_anonymous(path).await.status(), 200, "{path}");
    }
}

#[tokio::test]
async fn a_username_error_names_the_first_bad_character_and_its_position() {
    let app = rig().await;
    for (raw, says) in [
        ("%40someone", "`@` at position 1 is not allowed"),
        ("some%2Bone", "`+` at position 5 is not allowed"),
        ("ab%20c", "U+0020 at position 3 is not allowed"),
    ] {
        let response = app.get(&format!("/photo-share/profile/{raw}")).await;
        assert_eq!(response.status(), 400, "{raw}");
        let body = problem(response).await;
        let detail = body["detail"].as_str().unwrap();
        assert!(detail.starts_with(says), "{raw}: {detail}");
    }
    assert_eq!(app.hits(), 0);
}

#[tokio::test]
async fn each_keys_requests_are_counted_by_its_id_only_when_asked() {
    use sha2::{Digest, Sha256};
    // Keys of this test alone, so no other test's requests reach these series.
    let (counted, uncounted) = ("key-metrics-counted-7f3a", "key-metrics-uncounted-9c1e");
    let id = |key: &str| -> String {
        Sha256::digest(key.as_bytes())[..4]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let path = "/short-video/profile/someone";
    for (key, on) in [(counted, true), (uncounted, false)] {
        let app = rig_with(|s| {
            s.auth.api_keys.push(key.into());
            s.rate_limit.per_key_per_minute = 1;
            s.rate_limit.burst = 1;
            s.rate_limit.key_id_metrics = on;
        })
        .await;
        app.get_as(path, Some(key), &[]).await;
        app.get_as(path, Some(key), &[]).await.expect_status(429);
        let metrics = app.metrics().await;
        let key_id = id(key);
        for result in ["admitted", "rate_limited"] {
            let series = format!(
                "profile_lookup_key_requests_total{{key_id=\"{key_id}\",result=\"{result}\"}} 1"
            );
            assert_eq!(metrics.contains(&series), on, "{key} {result}:\n{metrics}");
        }
        assert!(!metrics.contains(key), "never the key itself");
    }
}
