//! Broken and hostile upstreams, one scenario per test. Each asserts the caller's status and
//! `code`, how many requests reached the upstream, and a time bound.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support::{
    closed_port, problem, settings, spawn_app, spawn_slow_not_found, spawn_upstream,
};
use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use profile_lookup::registry::Platform;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

const PS: &str = "/photo-share/profile/somebody";
const SV: &str = "/short-video/profile/somebody";

async fn expect_error(response: reqwest::Response, status: u16, code: &str) -> HeaderMap {
    assert_eq!(response.status(), status);
    let headers = response.headers().clone();
    assert_eq!(problem(response).await["code"], code);
    headers
}

#[tokio::test]
async fn a_platform_that_always_throttles_is_retried_then_blocked() {
    let upstream =
        spawn_upstream(Router::new().fallback(|| async { StatusCode::TOO_MANY_REQUESTS })).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let started = Instant::now();
    let headers = expect_error(app.get(PS).await, 429, "upstream_blocked").await;
    assert!(headers.contains_key("retry-after"));
    assert_eq!(
        upstream.hits(),
        4,
        "retry.max_attempts requests, the first included"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn retry_after_from_the_platform_is_honoured() {
    let upstream = spawn_upstream(
        Router::new()
            .fallback(|| async { (StatusCode::TOO_MANY_REQUESTS, [(header::RETRY_AFTER, "1")]) }),
    )
    .await;
    let mut s = settings(upstream.addr);
    s.retry.max_attempts = 2;
    s.retry.max_delay_ms = 5_000;
    s.retry.max_total_ms = 10_000;
    let app = spawn_app(s).await;
    let started = Instant::now();
    expect_error(app.get(PS).await, 429, "upstream_blocked").await;
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "waited as asked"
    );
    assert!(started.elapsed() < Duration::from_secs(4));
    assert_eq!(upstream.hits(), 2);
}

#[tokio::test]
async fn a_5xx_is_retried_once_then_unavailable() {
    let upstream =
        spawn_upstream(Router::new().fallback(|| async { StatusCode::SERVICE_UNAVAILABLE })).await;
    let app = spawn_app(settings(upstream.addr)).await;
    expect_error(app.get(PS).await, 500, "upstream_unavailable").await;
    assert_eq!(upstream.hits(), 2);
    let before = upstream.hits();
    expect_error(app.get(SV).await, 500, "upstream_unavailable").await;
    assert_eq!(upstream.hits() - before, 2);
}

#[tokio::test]
async fn a_404_is_never_retried_and_is_cached() {
    let upstream = spawn_upstream(Router::new().fallback(|| async { StatusCode::NOT_FOUND })).await;
    let app = spawn_app(settings(upstream.addr)).await;
    expect_error(app.get(PS).await, 404, "profile_not_found").await;
    expect_error(
        app.get("/photo-share/profile/SOMEBODY").await,
        404,
        "profile_not_found",
    )
    .await;
    assert_eq!(
        upstream.hits(),
        1,
        "one request, then the negative cache answers"
    );
}

#[tokio::test]
async fn connection_refused_is_unavailable_quickly() {
    let app = spawn_app(settings(closed_port().await)).await;
    let started = Instant::now();
    expect_error(app.get(PS).await, 500, "upstream_unavailable").await;
    expect_error(app.get(SV).await, 500, "upstream_unavailable").await;
    assert!(started.elapsed() < Duration::from_secs(2));
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
    let app = spawn_app(settings(addr)).await;
    expect_error(app.get(PS).await, 500, "upstream_unavailable").await;
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_hang_past_the_timeout_is_unavailable_at_the_deadline() {
    let (addr, hits) = raw_upstream(|mut stream| async move {
        read_head(&mut stream).await;
        tokio::time::sleep(Duration::from_secs(30)).await;
        drop(stream);
    })
    .await;
    let mut s = settings(addr);
    s.upstream.timeout_ms = 500;
    let app = spawn_app(s).await;
    let started = Instant::now();
    expect_error(app.get(PS).await, 500, "upstream_unavailable").await;
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(450) && took < Duration::from_secs(2),
        "{took:?}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1, "a timeout is not retried");
}

#[tokio::test]
async fn a_head_that_never_finishes_is_unavailable_at_the_deadline() {
    let (addr, _hits) = raw_upstream(|mut stream| async move {
        read_head(&mut stream).await;
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nX-Slow: ").await;
        for _ in 0..100 {
            if stream.write_all(b"a").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    let mut s = settings(addr);
    s.upstream.timeout_ms = 500;
    let app = spawn_app(s).await;
    let started = Instant::now();
    expect_error(app.get(SV).await, 500, "upstream_unavailable").await;
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_slow_drip_body_is_cut_at_the_total_deadline() {
    let (addr, hits) = raw_upstream(|mut stream| async move {
        read_head(&mut stream).await;
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
            .await;
        for _ in 0..1000 {
            if stream.write_all(b"a").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let mut s = settings(addr);
    s.upstream.timeout_ms = 700;
    let app = spawn_app(s).await;
    let started = Instant::now();
    expect_error(app.get(SV).await, 500, "upstream_unavailable").await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert_eq!(hits.load(Ordering::SeqCst), 1);
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

#[tokio::test]
async fn a_64_mib_body_is_refused_at_the_cap() {
    for with_length in [true, false] {
        let upstream = spawn_upstream(
            Router::new().fallback(move || async move { big_body(64 << 20, with_length) }),
        )
        .await;
        let mut s = settings(upstream.addr);
        s.upstream.max_body_bytes = 1 << 20;
        let app = spawn_app(s).await;
        let started = Instant::now();
        expect_error(app.get(SV).await, 500, "upstream_unavailable").await;
        assert!(started.elapsed() < Duration::from_secs(3));
        assert_eq!(upstream.hits(), 1, "an oversized body is not retried");
    }
}

#[tokio::test]
async fn an_endless_chunked_body_is_refused_at_the_cap() {
    let upstream = spawn_upstream(Router::new().fallback(|| async {
        let chunk = bytes::Bytes::from(vec![b'z'; 16 * 1024]);
        let stream =
            futures_util::stream::repeat_with(move || Ok::<_, std::io::Error>(chunk.clone()));
        Response::new(Body::from_stream(stream))
    }))
    .await;
    let app = spawn_app(settings(upstream.addr)).await;
    let started = Instant::now();
    expect_error(app.get(SV).await, 500, "upstream_unavailable").await;
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn an_invalid_gzip_body_is_unavailable() {
    let upstream = spawn_upstream(Router::new().fallback(|| async {
        (
            [
                (header::CONTENT_ENCODING, "gzip"),
                (header::CONTENT_TYPE, "text/html"),
            ],
            "this is not gzip at all",
        )
            .into_response()
    }))
    .await;
    let app = spawn_app(settings(upstream.addr)).await;
    expect_error(app.get(SV).await, 500, "upstream_unavailable").await;
}

#[tokio::test]
async fn redirects_off_the_configured_host_are_never_followed() {
    let target =
        spawn_upstream(Router::new().fallback(|| async { "you should not be here" })).await;
    let elsewhere = format!("http://{}/admin", target.addr);
    for location in [
        elsewhere.as_str(),
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:1/",
    ] {
        let location = location.to_owned();
        let upstream = spawn_upstream(Router::new().fallback(move || {
            let location = location.clone();
            async move { (StatusCode::FOUND, [(header::LOCATION, location)]) }
        }))
        .await;
        let app = spawn_app(settings(upstream.addr)).await;
        expect_error(app.get(SV).await, 500, "upstream_unavailable").await;
        expect_error(app.get(PS).await, 500, "upstream_unavailable").await;
    }
    assert_eq!(target.hits(), 0, "the redirect target was never contacted");
}

#[tokio::test]
async fn a_redirect_loop_on_the_host_ends() {
    let upstream = spawn_upstream(
        Router::new()
            .fallback(|| async { (StatusCode::FOUND, [(header::LOCATION, "/@somebody")]) }),
    )
    .await;
    let app = spawn_app(settings(upstream.addr)).await;
    let started = Instant::now();
    expect_error(app.get(SV).await, 500, "upstream_unavailable").await;
    assert!(upstream.hits() <= 4, "{}", upstream.hits());
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn short_video_block_signals_are_final_and_429() {
    let cases: Vec<(&str, Router)> = vec![
        (
            "http 429",
            Router::new().fallback(|| async { StatusCode::TOO_MANY_REQUESTS }),
        ),
        (
            "bdturing-verify",
            Router::new().fallback(|| async {
                (
                    [("bdturing-verify", "{\"type\":\"verify\"}")],
                    "<html></html>",
                )
            }),
        ),
        (
            "login redirect",
            Router::new().fallback(|| async {
                (
                    StatusCode::FOUND,
                    [(header::LOCATION, "/login?redirect_url=x")],
                )
            }),
        ),
    ];
    for (name, router) in cases {
        let upstream = spawn_upstream(router).await;
        let app = spawn_app(settings(upstream.addr)).await;
        let headers = expect_error(app.get(SV).await, 429, "upstream_blocked").await;
        assert!(headers.contains_key("retry-after"), "{name}");
        assert_eq!(
            upstream.hits(),
            2,
            "{name}: blocks are not retried on this platform (the page once, the embed once)"
        );
    }
}

#[tokio::test]
async fn a_region_locked_short_video_profile_is_451_and_gone_codes_are_404() {
    let upstream = spawn_upstream(Router::new().fallback(|| async {
        let page = stand_in::short_video::status_page(10231);
        ([(header::CONTENT_TYPE, "text/html")], page)
    }))
    .await;
    let app = spawn_app(settings(upstream.addr)).await;
    let headers = expect_error(app.get(SV).await, 451, "region_locked").await;
    assert!(headers.contains_key("retry-after"));
    let again = expect_error(app.get(SV).await, 451, "region_locked").await;
    assert!(again.contains_key("retry-after"));
    assert_eq!(upstream.hits(), 2, "a region lock is not cached");

    let upstream = spawn_upstream(Router::new().fallback(|| async {
        let page = stand_in::short_video::status_page(10204);
        ([(header::CONTENT_TYPE, "text/html")], page)
    }))
    .await;
    let app = spawn_app(settings(upstream.addr)).await;
    expect_error(app.get(SV).await, 404, "profile_not_found").await;
}

#[tokio::test]
async fn concurrent_callers_of_one_uncached_name_cause_one_upstream_request() {
    let upstream = spawn_slow_not_found(Duration::from_millis(300)).await;
    let app = Arc::new(spawn_app(settings(upstream.addr)).await);
    let callers = (0..100).map(|i| {
        let app = app.clone();
        // Mixed case: one cache key.
        let path = if i % 2 == 0 {
            "/photo-share/profile/Popular.Name"
        } else {
            "/photo-share/profile/popular.name"
        };
        tokio::spawn(async move { app.get(path).await.status() })
    });
    for caller in futures_util::future::join_all(callers).await {
        assert_eq!(caller.unwrap(), 404);
    }
    assert_eq!(upstream.hits(), 1);
}

#[tokio::test]
async fn concurrent_callers_share_one_failure_too() {
    let upstream = spawn_upstream(Router::new().fallback(|| async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        StatusCode::IM_A_TEAPOT
    }))
    .await;
    let app = Arc::new(spawn_app(settings(upstream.addr)).await);
    let callers = (0..50).map(|_| {
        let app = app.clone();
        tokio::spawn(async move { app.get(SV).await.status() })
    });
    for caller in futures_util::future::join_all(callers).await {
        assert_eq!(caller.unwrap(), 500);
    }
    assert_eq!(
        upstream.hits(),
        1,
        "failures are shared by the callers waiting, not cached"
    );
    expect_error(app.get(SV).await, 500, "upstream_unavailable").await;
    assert_eq!(upstream.hits(), 2, "and the next caller tries again");
}

#[tokio::test]
async fn the_breaker_opens_after_repeated_blocks_then_probes() {
    let upstream =
        spawn_upstream(Router::new().fallback(|| async { StatusCode::TOO_MANY_REQUESTS })).await;
    let mut s = settings(upstream.addr);
    s.breaker.failure_threshold = 2;
    s.breaker.cooldown_seconds = 1;
    // One request per lookup, so the counts below are the breaker's alone.
    s.platform_mut(Platform::ShortVideo).sources = vec!["page".into()];
    let app = spawn_app(s).await;
    for name in ["a1", "a2"] {
        expect_error(
            app.get(&format!("/short-video/profile/{name}")).await,
            429,
            "upstream_blocked",
        )
        .await;
    }
    assert_eq!(upstream.hits(), 2);
    let started = Instant::now();
    let headers = expect_error(
        app.get("/short-video/profile/a3").await,
        429,
        "upstream_blocked",
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "answered at once"
    );
    assert_eq!(headers["retry-after"], "1");
    assert_eq!(upstream.hits(), 2, "the open breaker sent nothing upstream");
    // The other platform has its own breaker.
    expect_error(
        app.get("/photo-share/profile/a3").await,
        429,
        "upstream_blocked",
    )
    .await;
    assert!(upstream.hits() > 2);
    let hits = upstream.hits();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    expect_error(
        app.get("/short-video/profile/a4").await,
        429,
        "upstream_blocked",
    )
    .await;
    assert_eq!(upstream.hits(), hits + 1, "one probe after the cool-down");
}

#[tokio::test]
async fn a_burst_of_distinct_names_stays_within_the_outbound_caps() {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (f, p) = (in_flight.clone(), peak.clone());
    let upstream = spawn_upstream(Router::new().fallback(move || {
        let (f, p) = (f.clone(), p.clone());
        async move {
            let now = f.fetch_add(1, Ordering::SeqCst) + 1;
            p.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(100)).await;
            f.fetch_sub(1, Ordering::SeqCst);
            StatusCode::NOT_FOUND
        }
    }))
    .await;
    let mut s = settings(upstream.addr);
    s.platform_mut(Platform::PhotoShare).max_concurrency = 2;
    s.platform_mut(Platform::PhotoShare).requests_per_second = 5;
    s.platform_mut(Platform::PhotoShare).burst = 5;
    s.platform_mut(Platform::PhotoShare).max_queue_ms = 300;
    let app = Arc::new(spawn_app(s).await);
    let callers = (0..30).map(|i| {
        let app = app.clone();
        tokio::spawn(async move {
            app.get(&format!("/photo-share/profile/name{i}"))
                .await
                .status()
                .as_u16()
        })
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
    assert!(
        upstream.hits() <= 8,
        "budget held: {} requests",
        upstream.hits()
    );
    assert!(statuses.contains(&503), "the rest were shed: {statuses:?}");
    assert!(
        statuses.iter().all(|s| *s == 404 || *s == 503),
        "{statuses:?}"
    );
}

#[tokio::test]
async fn too_many_requests_in_flight_are_shed_with_503() {
    let upstream = spawn_slow_not_found(Duration::from_millis(400)).await;
    let mut s = settings(upstream.addr);
    s.server.max_in_flight = 2;
    let app = Arc::new(spawn_app(s).await);
    let callers = (0..8).map(|i| {
        let app = app.clone();
        tokio::spawn(async move {
            let response = app.get(&format!("/photo-share/profile/shed{i}")).await;
            let status = response.status().as_u16();
            let retry_after = response.headers().get("retry-after").is_some();
            let code = if status == 503 {
                problem(response).await["code"].as_str().unwrap().to_owned()
            } else {
                String::new()
            };
            (status, retry_after, code)
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
    let mut s = settings(upstream.addr);
    s.server.request_timeout_ms = 300;
    s.upstream.timeout_ms = 10_000;
    let app = spawn_app(s).await;
    let started = Instant::now();
    expect_error(app.get(PS).await, 500, "upstream_unavailable").await;
    let took = started.elapsed();
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
    let app = spawn_app(settings(addr)).await;
    let started = Instant::now();
    expect_error(app.get(SV).await, 500, "upstream_unavailable").await;
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(hits.load(Ordering::SeqCst) <= 2);
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
    let upstream = spawn_upstream(Router::new().fallback(move || {
        let bomb = bomb.clone();
        async move {
            (
                [
                    (header::CONTENT_ENCODING, "gzip"),
                    (header::CONTENT_TYPE, "text/html"),
                ],
                bomb,
            )
                .into_response()
        }
    }))
    .await;
    let mut s = settings(upstream.addr);
    s.upstream.max_body_bytes = 1 << 20;
    let app = spawn_app(s).await;
    let started = Instant::now();
    expect_error(app.get(SV).await, 500, "upstream_unavailable").await;
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(upstream.hits(), 1);
}

#[tokio::test]
async fn a_huge_platform_retry_after_reaches_callers_capped_at_an_hour() {
    // Short-video 429 is final (no retry), so the platform's value goes straight to the answer.
    let upstream = spawn_upstream(Router::new().fallback(|| async {
        (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, "99999999999")],
        )
    }))
    .await;
    let app = spawn_app(settings(upstream.addr)).await;
    let started = Instant::now();
    let headers = expect_error(app.get(SV).await, 429, "upstream_blocked").await;
    let retry_after: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(
        (1..=3600).contains(&retry_after),
        "Retry-After {retry_after} is above the hour SPEC allows"
    );
    assert!(started.elapsed() < Duration::from_secs(3), "no wait on it");
    // The page, then the embed (throttled alike): the longest wait is still capped.
    assert_eq!(upstream.hits(), 2);
}
