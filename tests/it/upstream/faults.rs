//! Broken and hostile upstreams, one scenario per test. Each asserts the caller's status and
//! `code`, how many requests reached the upstream, and a time bound.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support::routers::{always, fixed, plain, status};
use crate::support::{
    PhotoShare, ShortVideo, TestApp, closed_port, spawn_slow_not_found, spawn_upstream,
};
use axum::Router;
use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use profile_lookup::registry::Platform;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

/// The name every scenario looks up.
const NAME: &str = "somebody";

/// Looks [`NAME`] up on `platform`, which must answer 500 `upstream_unavailable`; how long
/// that took.
async fn unavailable(app: &TestApp, platform: Platform) -> Duration {
    let (answer, took) = app.timed_lookup(platform, NAME).await;
    answer.expect_problem(500, "upstream_unavailable");
    took
}

#[tokio::test]
async fn a_platform_that_always_throttles_is_retried_then_blocked() {
    let app = TestApp::on(status(StatusCode::TOO_MANY_REQUESTS))
        .start()
        .await;
    let started = Instant::now();
    app.lookup(PhotoShare, NAME).await.expect_blocked();
    assert_eq!(
        app.hits(),
        8,
        "retry.max_attempts requests per source, the first included"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn retry_after_from_the_platform_is_honoured() {
    let app = TestApp::on(always(|| {
        (StatusCode::TOO_MANY_REQUESTS, [(header::RETRY_AFTER, "1")]).into_response()
    }))
    .with(|s| {
        s.retry.max_attempts = 2;
        s.retry.max_delay_ms = 5_000;
        s.retry.max_total_ms = 10_000;
    })
    .start()
    .await;
    let started = Instant::now();
    app.lookup(PhotoShare, NAME).await.expect_blocked();
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "waited as asked"
    );
    assert!(started.elapsed() < Duration::from_secs(4));
    assert_eq!(app.hits(), 4, "the JSON twice, then the page twice");
}

#[tokio::test]
async fn a_5xx_is_retried_once_then_unavailable() {
    let app = TestApp::on(status(StatusCode::SERVICE_UNAVAILABLE))
        .start()
        .await;
    app.lookup(PhotoShare, NAME)
        .await
        .expect_problem(500, "upstream_unavailable");
    // Retried once, then the next source (a failing source falls through), retried once.
    assert_eq!(app.hits(), 4);
    let before = app.hits();
    app.lookup(ShortVideo, NAME)
        .await
        .expect_problem(500, "upstream_unavailable");
    assert_eq!(app.hits() - before, 4);
}

#[tokio::test]
async fn a_404_is_never_retried_and_is_cached() {
    let app = TestApp::on(status(StatusCode::NOT_FOUND)).start().await;
    for name in [NAME, "SOMEBODY"] {
        app.lookup(PhotoShare, name)
            .await
            .expect_problem(404, "profile_not_found");
    }
    assert_eq!(
        app.hits(),
        1,
        "one request, then the negative cache answers"
    );
}

#[tokio::test]
async fn connection_refused_is_unavailable_quickly() {
    let app = TestApp::on(closed_port().await).start().await;
    let took = unavailable(&app, PhotoShare).await + unavailable(&app, ShortVideo).await;
    assert!(took < Duration::from_secs(2));
}

/// A raw TCP upstream that runs `script` on every connection, counting connections.
async fn raw_upstream<F, Fut>(script: F) -> (std::net::SocketAddr, Arc<AtomicUsize>)
where
    F: Fn(tokio::net::TcpStream) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let script = Arc::new(script);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(script(stream));
        }
    });
    (addr, hits)
}

/// Writes `head`, then one byte at a time, `every` apart, `n` times or until the client goes.
async fn trickle(stream: &mut tokio::net::TcpStream, head: &[u8], n: usize, every: Duration) {
    let _ = stream.write_all(head).await;
    for _ in 0..n {
        if stream.write_all(b"a").await.is_err() {
            return;
        }
        tokio::time::sleep(every).await;
    }
}

async fn read_head(stream: &mut tokio::net::TcpStream) {
    use tokio::io::AsyncReadExt;
    let mut buf = vec![0u8; 8192];
    let mut seen = Vec::new();
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
}

/// The app on `addr` with an upstream timeout of `timeout_ms` (none: the test settings').
async fn app_at(addr: std::net::SocketAddr, timeout_ms: Option<u64>) -> TestApp {
    TestApp::on(addr)
        .with(|s| {
            if let Some(timeout_ms) = timeout_ms {
                s.upstream.timeout_ms = timeout_ms;
            }
        })
        .start()
        .await
}

#[tokio::test]
async fn a_reset_mid_body_is_retried_once_then_unavailable() {
    let (addr, hits) = raw_upstream(|mut stream| async move {
        read_head(&mut stream).await;
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nContent-Type: application/json\r\n\r\n{\"data\":")
            .await;
        // Linger zero makes the close a reset (RST), not an orderly FIN.
        #[allow(deprecated)]
        let _ = stream.set_linger(Some(Duration::ZERO));
        drop(stream);
    })
    .await;
    let app = app_at(addr, None).await;
    app.lookup(PhotoShare, NAME)
        .await
        .expect_problem(500, "upstream_unavailable");
    assert_eq!(
        hits.load(Ordering::SeqCst),
        4,
        "retried once, for each source"
    );
}

#[tokio::test]
async fn a_hang_past_the_timeout_is_unavailable_at_the_deadline() {
    let (addr, hits) = raw_upstream(|mut stream| async move {
        read_head(&mut stream).await;
        tokio::time::sleep(Duration::from_secs(30)).await;
        drop(stream);
    })
    .await;
    let app = app_at(addr, Some(500)).await;
    let took = unavailable(&app, PhotoShare).await;
    assert!(
        took >= Duration::from_millis(450) && took < Duration::from_secs(2),
        "{took:?}"
    );
    assert_eq!(
        hits.load(Ordering::SeqCst),
        2,
        "a timeout is not retried: each source asked once"
    );
}

#[tokio::test]
async fn a_head_that_never_finishes_is_unavailable_at_the_deadline() {
    let (addr, _hits) = raw_upstream(|mut stream| async move {
        read_head(&mut stream).await;
        let head = b"HTTP/1.1 200 OK\r\nX-Slow: ";
        trickle(&mut stream, head, 100, Duration::from_millis(100)).await;
    })
    .await;
    let app = app_at(addr, Some(500)).await;
    assert!(unavailable(&app, ShortVideo).await < Duration::from_secs(2));
}

#[tokio::test]
async fn a_slow_drip_body_is_cut_at_the_total_deadline() {
    let (addr, hits) = raw_upstream(|mut stream| async move {
        read_head(&mut stream).await;
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
        trickle(&mut stream, head, 1000, Duration::from_millis(50)).await;
    })
    .await;
    let app = app_at(addr, Some(700)).await;
    let took = unavailable(&app, ShortVideo).await;
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert_eq!(hits.load(Ordering::SeqCst), 2, "each source once");
}

fn big_body(len: usize, with_length: bool) -> Response {
    let chunk = bytes::Bytes::from(vec![b'a'; 64 * 1024]);
    let chunks = len / chunk.len();
    let stream = futures_util::stream::iter(
        (0..chunks).map(move |_| Ok::<_, std::io::Error>(chunk.clone())),
    );
    let mut response = Response::new(Body::from_stream(stream));
    if with_length {
        response
            .headers_mut()
            .insert(header::CONTENT_LENGTH, len.into());
    }
    response
}

/// `upstream` with bodies capped at 1 MiB: a short-video lookup fails within 3 s, having asked
/// it once.
async fn refused_at_the_cap(upstream: Router) {
    let app = TestApp::on(upstream)
        .with(|s| s.upstream.max_body_bytes = 1 << 20)
        .start()
        .await;
    assert!(unavailable(&app, ShortVideo).await < Duration::from_secs(3));
    assert_eq!(
        app.hits(),
        2,
        "an oversized body is not retried: each source asked once"
    );
}

#[tokio::test]
async fn a_64_mib_body_is_refused_at_the_cap() {
    for with_length in [true, false] {
        refused_at_the_cap(always(move || big_body(64 << 20, with_length))).await;
    }
}

#[tokio::test]
async fn an_endless_chunked_body_is_refused_at_the_cap() {
    let app = TestApp::on(always(|| {
        let chunk = bytes::Bytes::from(vec![b'z'; 16 * 1024]);
        let stream =
            futures_util::stream::repeat_with(move || Ok::<_, std::io::Error>(chunk.clone()));
        Response::new(Body::from_stream(stream))
    }))
    .start()
    .await;
    assert!(unavailable(&app, ShortVideo).await < Duration::from_secs(3));
}

/// A response claiming to be gzipped HTML, with `body`.
fn gzipped(body: impl Into<Body>) -> Response {
    (
        [
            (header::CONTENT_ENCODING, "gzip"),
            (header::CONTENT_TYPE, "text/html"),
        ],
        body.into(),
    )
        .into_response()
}

#[tokio::test]
async fn an_invalid_gzip_body_is_unavailable() {
    let app = TestApp::on(always(|| gzipped("this is not gzip at all")))
        .start()
        .await;
    app.lookup(ShortVideo, NAME)
        .await
        .expect_problem(500, "upstream_unavailable");
}

/// Redirects every request to `location`.
fn redirect(location: impl Into<String>) -> Router {
    let location = location.into();
    always(move || (StatusCode::FOUND, [(header::LOCATION, location.clone())]).into_response())
}

#[tokio::test]
async fn redirects_off_the_configured_host_are_never_followed() {
    let target = spawn_upstream(plain(StatusCode::OK, "you should not be here")).await;
    let elsewhere = format!("http://{}/admin", target.addr);
    for location in [
        elsewhere.as_str(),
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:1/",
    ] {
        let app = TestApp::on(redirect(location)).start().await;
        for platform in [ShortVideo, PhotoShare] {
            app.lookup(platform, NAME)
                .await
                .about(location)
                .expect_problem(500, "upstream_unavailable");
        }
    }
    assert_eq!(target.hits(), 0, "the redirect target was never contacted");
}

#[tokio::test]
async fn a_redirect_loop_on_the_host_ends() {
    let app = TestApp::on(redirect("/@somebody")).start().await;
    assert!(unavailable(&app, ShortVideo).await < Duration::from_secs(2));
    assert!(app.hits() <= 4, "{}", app.hits());
}

#[tokio::test]
async fn short_video_block_signals_are_final_and_429() {
    let cases: Vec<(&str, Router)> = vec![
        ("http 429", status(StatusCode::TOO_MANY_REQUESTS)),
        (
            "bdturing-verify",
            always(|| {
                (
                    [("bdturing-verify", "{\"type\":\"verify\"}")],
                    "<html></html>",
                )
                    .into_response()
            }),
        ),
        ("login redirect", redirect("/login?redirect_url=x")),
    ];
    for (name, router) in cases {
        let app = TestApp::on(router).start().await;
        app.lookup(ShortVideo, NAME)
            .await
            .about(name)
            .expect_blocked();
        assert_eq!(
            app.hits(),
            2,
            "{name}: blocks are not retried on this platform (the page once, the embed once)"
        );
    }
}

#[tokio::test]
async fn a_region_locked_short_video_profile_is_451_and_gone_codes_are_404() {
    let status_page = |code| fixed(StatusCode::OK, stand_in::short_video::status_page(code));
    let app = TestApp::on(status_page(10231)).start().await;
    for _ in 0..2 {
        app.lookup(ShortVideo, NAME)
            .await
            .expect_problem(451, "region_locked")
            .expect_has("retry-after");
    }
    assert_eq!(app.hits(), 2, "a region lock is not cached");

    let app = TestApp::on(status_page(10204)).start().await;
    app.lookup(ShortVideo, NAME)
        .await
        .expect_problem(404, "profile_not_found");
}

#[tokio::test]
async fn concurrent_callers_of_one_uncached_name_cause_one_upstream_request() {
    let upstream = spawn_slow_not_found(Duration::from_millis(300)).await;
    let app = Arc::new(TestApp::on(&upstream).start().await);
    let callers = (0..100).map(|i| {
        let app = app.clone();
        // Mixed case: one cache key.
        let name = if i % 2 == 0 {
            "Popular.Name"
        } else {
            "popular.name"
        };
        tokio::spawn(async move { app.lookup(PhotoShare, name).await.status() })
    });
    for caller in futures_util::future::join_all(callers).await {
        assert_eq!(caller.unwrap(), 404);
    }
    assert_eq!(upstream.hits(), 1);
}

#[tokio::test]
async fn concurrent_callers_share_one_failure_too() {
    let app = Arc::new(
        TestApp::on(Router::new().fallback(|| async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            StatusCode::IM_A_TEAPOT
        }))
        .start()
        .await,
    );
    let callers = (0..50).map(|_| {
        let app = app.clone();
        tokio::spawn(async move { app.lookup(ShortVideo, NAME).await.status() })
    });
    for caller in futures_util::future::join_all(callers).await {
        assert_eq!(caller.unwrap(), 500);
    }
    assert_eq!(
        app.hits(),
        1,
        "failures are shared by the callers waiting, not cached"
    );
    app.lookup(ShortVideo, NAME)
        .await
        .expect_problem(500, "upstream_unavailable");
    assert_eq!(app.hits(), 2, "and the next caller tries again");
}

#[tokio::test]
async fn the_breaker_opens_after_repeated_blocks_then_probes() {
    let app = TestApp::on(status(StatusCode::TOO_MANY_REQUESTS))
        .with(|s| {
            s.breaker.failure_threshold = 2;
            s.breaker.cooldown_seconds = 1;
            // One request per lookup, so the counts below are the breaker's alone.
            s.platform_mut(Platform::ShortVideo).sources = vec!["page".into()];
        })
        .start()
        .await;
    for name in ["a1", "a2"] {
        app.lookup(ShortVideo, name).await.expect_blocked();
    }
    assert_eq!(app.hits(), 2);
    let started = Instant::now();
    let answer = app.lookup(ShortVideo, "a3").await.expect_blocked();
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "answered at once"
    );
    assert_eq!(answer.header("retry-after"), "1");
    assert_eq!(app.hits(), 2, "the open breaker sent nothing upstream");
    // The other platform has its own breaker.
    app.lookup(PhotoShare, "a3").await.expect_blocked();
    assert!(app.hits() > 2);
    let hits = app.hits();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    app.lookup(ShortVideo, "a4").await.expect_blocked();
    assert_eq!(app.hits(), hits + 1, "one probe after the cool-down");
}

#[tokio::test]
async fn a_burst_of_distinct_names_stays_within_the_outbound_caps() {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (f, p) = (in_flight.clone(), peak.clone());
    let upstream = Router::new().fallback(move || {
        let (f, p) = (f.clone(), p.clone());
        async move {
            let now = f.fetch_add(1, Ordering::SeqCst) + 1;
            p.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(100)).await;
            f.fetch_sub(1, Ordering::SeqCst);
            StatusCode::NOT_FOUND
        }
    });
    let app = TestApp::on(upstream)
        .with(|s| {
            let platform = s.platform_mut(Platform::PhotoShare);
            platform.max_concurrency = 2;
            platform.requests_per_second = 5;
            platform.burst = 5;
            platform.max_queue_ms = 300;
        })
        .start()
        .await;
    let app = Arc::new(app);
    let callers = (0..30).map(|i| {
        let app = app.clone();
        tokio::spawn(async move { app.lookup(PhotoShare, &format!("name{i}")).await.status() })
    });
    let statuses: Vec<u16> = futures_util::future::join_all(callers)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert!(
        peak.load(Ordering::SeqCst) <= 2,
        "peak {}",
        peak.load(Ordering::SeqCst)
    );
    assert!(app.hits() <= 8, "budget held: {} requests", app.hits());
    assert!(statuses.contains(&503), "the rest were shed: {statuses:?}");
    assert!(
        statuses.iter().all(|s| *s == 404 || *s == 503),
        "{statuses:?}"
    );
}

#[tokio::test]
async fn too_many_requests_in_flight_are_shed_with_503() {
    let upstream = spawn_slow_not_found(Duration::from_millis(400)).await;
    let app = TestApp::on(&upstream)
        .with(|s| s.server.max_in_flight = 2)
        .start()
        .await;
    let app = Arc::new(app);
    let callers = (0..8).map(|i| {
        let app = app.clone();
        tokio::spawn(async move {
            let answer = app.lookup(PhotoShare, &format!("shed{i}")).await;
            let code = if answer.status() == 503 {
                answer.problem()["code"].as_str().unwrap().to_owned()
            } else {
                String::new()
            };
            (answer.status(), answer.has("retry-after"), code)
        })
    });
    let results: Vec<_> = futures_util::future::join_all(callers)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let shed: Vec<_> = results.iter().filter(|(s, _, _)| *s == 503).collect();
    assert_eq!(
        results.iter().filter(|(s, _, _)| *s == 404).count(),
        2,
        "{results:?}"
    );
    assert_eq!(shed.len(), 6, "{results:?}");
    assert!(
        shed.iter()
            .all(|(_, retry_after, code)| *retry_after && code == "overloaded")
    );
    assert_eq!(
        app.get("/healthz").await.status(),
        200,
        "room again once they finished"
    );
}

#[tokio::test]
async fn the_request_deadline_bounds_every_lookup() {
    let upstream = spawn_slow_not_found(Duration::from_secs(5)).await;
    let app = TestApp::on(&upstream)
        .with(|s| {
            s.server.request_timeout_ms = 300;
            s.upstream.timeout_ms = 10_000;
        })
        .start()
        .await;
    let took = unavailable(&app, PhotoShare).await;
    assert!(
        took >= Duration::from_millis(280) && took < Duration::from_secs(2),
        "{took:?}"
    );
}

#[tokio::test]
async fn a_1_mib_response_header_is_unavailable() {
    let (addr, hits) = raw_upstream(|mut stream| async move {
        read_head(&mut stream).await;
        let mut head = b"HTTP/1.1 200 OK\r\nX-Huge: ".to_vec();
        head.extend(std::iter::repeat_n(b'h', 1 << 20));
        head.extend_from_slice(b"\r\nContent-Length: 2\r\n\r\n{}");
        let _ = stream.write_all(&head).await;
    })
    .await;
    let app = app_at(addr, None).await;
    assert!(unavailable(&app, ShortVideo).await < Duration::from_secs(3));
    assert!(
        hits.load(Ordering::SeqCst) <= 4,
        "retried once at most, for each source"
    );
}

#[tokio::test]
async fn a_gzip_bomb_is_refused_at_the_cap_on_decompressed_bytes() {
    use std::io::Write;
    // 64 MiB of zeros compress to about 64 KiB: far under the cap on the wire, far over it
    // once inflated.
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        encoder.write_all(&zeros).unwrap();
    }
    let bomb = bytes::Bytes::from(encoder.finish().unwrap());
    assert!(bomb.len() < 256 * 1024, "{}", bomb.len());
    refused_at_the_cap(always(move || gzipped(bomb.clone()))).await;
}

#[tokio::test]
async fn a_huge_platform_retry_after_reaches_callers_capped_at_an_hour() {
    // Short-video 429 is final (no retry), so the platform's value goes straight to the answer.
    let app = TestApp::on(always(|| {
        (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, "99999999999")],
        )
            .into_response()
    }))
    .start()
    .await;
    let started = Instant::now();
    let answer = app.lookup(ShortVideo, NAME).await.expect_blocked();
    let retry_after = answer.retry_after();
    assert!(
        (1..=3600).contains(&retry_after),
        "Retry-After {retry_after} is above the hour SPEC allows"
    );
    assert!(started.elapsed() < Duration::from_secs(3), "no wait on it");
    // The page, then the embed (throttled alike): the longest wait is still capped.
    assert_eq!(app.hits(), 2);
}
