//! Issue 8 #1, #3, #4 and the two gate findings, end to end: one flight per name whoever hangs
//! up, every retry wait inside the budget, a confirmed not-found ends stale serving, and a retry
//! the local budget refused still ends as the block it was.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use crate::support::{KEY, problem, settings, spawn_app, spawn_upstream};
use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use profile_lookup::registry::Platform;
use stand_in::photo_share as ps;
use stand_in::short_video as sv;

/// The short-video stand-in, answering every request after `delay`.
fn slow_short_video(delay: Duration) -> Router {
    let real = sv::router();
    Router::new().fallback(move |request: Request| {
        let real = real.clone();
        async move {
            tokio::time::sleep(delay).await;
            tower::ServiceExt::oneshot(real, request)
                .await
                .into_response()
        }
    })
}

/// A client that gives up after `timeout`, as an impatient caller does.
fn impatient(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder().timeout(timeout).build().unwrap()
}

#[tokio::test]
async fn a_caller_who_hangs_up_does_not_cancel_the_shared_fetch() {
    let upstream = spawn_upstream(slow_short_video(Duration::from_millis(1_500))).await;
    let app = Arc::new(spawn_app(settings(upstream.addr)).await);
    let path = format!("/short-video/profile/{}", sv::SMALL_USER.unique_id);
    let url = app.url(&path);
    let gives_up = tokio::spawn(
        impatient(Duration::from_secs(1))
            .get(url.clone())
            .bearer_auth(KEY)
            .send(),
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let joins = app.get(&path).await;
    assert_eq!(joins.status(), 200);
    assert!(
        gives_up.await.unwrap().is_err(),
        "the first caller timed out"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(upstream.hits(), 1, "one upstream request for both callers");
}

#[tokio::test]
async fn callers_who_all_time_out_still_warm_the_cache() {
    let upstream = spawn_upstream(slow_short_video(Duration::from_millis(1_500))).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let path = format!("/short-video/profile/{}", sv::SMALL_USER.unique_id);
    let callers: Vec<_> = (0..4)
        .map(|_| {
            tokio::spawn(
                impatient(Duration::from_secs(1))
                    .get(app.url(&path))
                    .bearer_auth(KEY)
                    .send(),
            )
        })
        .collect();
    for caller in callers {
        assert!(caller.await.unwrap().is_err(), "every caller timed out");
    }
    // The flight finishes on its own about 1.5 s after it started.
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let next = app.get(&path).await;
    assert_eq!(next.status(), 200);
    assert_eq!(next.headers()["x-cache"], "hit", "the flight was cached");
    assert_eq!(upstream.hits(), 1, "one upstream request for five callers");
}

#[tokio::test]
async fn a_retry_after_longer_than_the_budget_left_ends_the_retries_with_a_block() {
    let upstream = spawn_upstream(
        Router::new()
            .fallback(|| async { (StatusCode::TOO_MANY_REQUESTS, [(header::RETRY_AFTER, "1")]) }),
    )
    .await;
    let mut s = settings(upstream.addr);
    s.retry.max_attempts = 4;
    s.retry.max_delay_ms = 5_000;
    s.retry.max_total_ms = 1_500;
    s.server.request_timeout_ms = 2_500;
    s.breaker.failure_threshold = 1;
    s.breaker.cooldown_seconds = 60;
    let app = spawn_app(s).await;
    let started = Instant::now();
    let response = app.get("/photo-share/profile/somebody").await;
    let took = started.elapsed();
    assert_eq!(response.status(), 429);
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=3600).contains(&retry_after), "{retry_after}");
    assert_eq!(problem(response).await["code"], "upstream_blocked");
    assert!(
        took < Duration::from_millis(2_000),
        "ended when the next wait no longer fit, not at the deadline: {took:?}"
    );
    assert_eq!(
        upstream.hits(),
        2,
        "one wait of 1 s fits in 1.5 s, two do not"
    );

    // The block reached the breaker (threshold 1): the next lookup is refused locally.
    let response = app.get("/photo-share/profile/someone.else").await;
    assert_eq!(response.status(), 429);
    assert_eq!(problem(response).await["code"], "upstream_blocked");
    assert_eq!(upstream.hits(), 2, "the open breaker sent nothing");
}

/// A photo-share platform that answers every request 429, with `retry_after` when given.
async fn always_throttled(retry_after: Option<&'static str>) -> crate::support::Upstream {
    spawn_upstream(Router::new().fallback(move || async move {
        let mut response = StatusCode::TOO_MANY_REQUESTS.into_response();
        if let Some(value) = retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, value.parse().unwrap());
        }
        response
    }))
    .await
}

async fn retry_after_of(response: &reqwest::Response) -> u64 {
    response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn a_block_that_outlasts_the_request_deadline_is_answered_as_the_block() {
    // No Retry-After, then a short one: the retries would go on for a minute, the caller's
    // deadline passes first, and what the platform last said is a block.
    for (retry_after, told) in [(None, 30..=30), (Some("1"), 1..=2)] {
        let upstream = always_throttled(retry_after).await;
        let mut s = settings(upstream.addr);
        s.retry.max_attempts = 100;
        s.retry.base_delay_ms = 300;
        s.retry.max_delay_ms = 1_000;
        s.retry.max_total_ms = 60_000;
        s.breaker.cooldown_seconds = 30;
        s.server.request_timeout_ms = 1_500;
        let app = spawn_app(s).await;
        let started = Instant::now();
        let response = app.get("/photo-share/profile/blocked.for.long").await;
        let took = started.elapsed();
        assert_eq!(response.status(), 429, "Retry-After {retry_after:?}");
        let wait = retry_after_of(&response).await;
        assert!(
            told.contains(&wait),
            "Retry-After {retry_after:?}: told {wait}"
        );
        assert_eq!(problem(response).await["code"], "upstream_blocked");
        assert!(
            took >= Duration::from_millis(1_400) && took < Duration::from_secs(3),
            "answered at the deadline: {took:?}"
        );
        assert!(
            upstream.hits() >= 2,
            "the platform was asked again meanwhile"
        );
    }
}

#[tokio::test]
async fn a_retry_after_of_eons_is_429_at_once_capped_at_an_hour() {
    // Photo-share waits its blocks out; a wait far past the budget is not waited at all.
    let upstream = always_throttled(Some("99999999999")).await;
    let mut s = settings(upstream.addr);
    s.retry.max_total_ms = 20_000;
    s.server.request_timeout_ms = 5_000;
    let app = spawn_app(s).await;
    let started = Instant::now();
    let response = app.get("/photo-share/profile/eons.away").await;
    assert_eq!(response.status(), 429);
    assert_eq!(retry_after_of(&response).await, 3600);
    assert_eq!(problem(response).await["code"], "upstream_blocked");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "no wait beyond the budget"
    );
    assert_eq!(upstream.hits(), 1);
}

#[tokio::test]
async fn retry_after_zero_does_not_give_back_to_back_retries() {
    let upstream = spawn_upstream(
        Router::new()
            .fallback(|| async { (StatusCode::TOO_MANY_REQUESTS, [(header::RETRY_AFTER, "0")]) }),
    )
    .await;
    let mut s = settings(upstream.addr);
    s.retry.max_attempts = 3;
    s.retry.base_delay_ms = 100;
    s.retry.max_delay_ms = 1_000;
    s.retry.max_total_ms = 5_000;
    let app = spawn_app(s).await;
    let response = app.get("/photo-share/profile/somebody").await;
    assert_eq!(response.status(), 429);
    let seen = upstream.arrivals();
    assert_eq!(seen.len(), 3);
    for pair in seen.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= Duration::from_millis(90),
            "retries spaced by the backoff, got {gap:?}"
        );
    }
}

#[tokio::test]
async fn a_confirmed_not_found_removes_the_stale_copy() {
    // 0: the real platform; 1: the user is gone (404); 2: the platform fails (503).
    let mode = Arc::new(AtomicU8::new(0));
    let flag = mode.clone();
    let real = ps::router();
    let upstream = spawn_upstream(Router::new().fallback(move |request: Request| {
        let (flag, real) = (flag.clone(), real.clone());
        async move {
            match flag.load(Ordering::SeqCst) {
                0 => tower::ServiceExt::oneshot(real, request)
                    .await
                    .into_response(),
                1 => StatusCode::NOT_FOUND.into_response(),
                _ => StatusCode::SERVICE_UNAVAILABLE.into_response(),
            }
        }
    }))
    .await;
    let mut s = settings(upstream.addr);
    s.cache.ttl_seconds = 1;
    s.cache.negative_ttl_seconds = 1;
    s.cache.max_stale_seconds = 60;
    let app = spawn_app(s).await;
    let path = format!("/photo-share/profile/{}", ps::PUBLIC_USER.username);
    assert_eq!(app.get(&path).await.status(), 200);
    mode.store(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let gone = app.get(&path).await;
    assert_eq!(gone.status(), 404);
    mode.store(2, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let failing = app.get(&path).await;
    assert_ne!(
        failing.status(),
        200,
        "x-cache: {:?}: a deleted profile came back from the stale store",
        failing.headers().get("x-cache")
    );
    assert_eq!(problem(failing).await["code"], "upstream_unavailable");
}

#[tokio::test]
async fn a_retry_refused_by_the_local_budget_still_ends_as_the_block() {
    let upstream =
        spawn_upstream(Router::new().fallback(|| async { StatusCode::TOO_MANY_REQUESTS })).await;
    let mut s = settings(upstream.addr);
    // One token, then one a second: the retry cannot get one within 50 ms.
    s.platform_mut(Platform::PhotoShare).requests_per_second = 1;
    s.platform_mut(Platform::PhotoShare).burst = 1;
    s.platform_mut(Platform::PhotoShare).max_queue_ms = 50;
    s.breaker.failure_threshold = 1;
    s.breaker.cooldown_seconds = 60;
    let app = spawn_app(s).await;
    let response = app.get("/photo-share/profile/somebody").await;
    assert_eq!(
        response.status(),
        429,
        "the platform's block, not our budget"
    );
    assert_eq!(problem(response).await["code"], "upstream_blocked");
    assert_eq!(upstream.hits(), 1);
    // The breaker counted that block: the next lookup is refused without a request.
    assert!(
        crate::support::eventually(Duration::from_millis(500), || upstream.hits() == 1).await,
        "no late request"
    );
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let response = app.get("/photo-share/profile/someone.else").await;
    assert_eq!(response.status(), 429);
    assert_eq!(upstream.hits(), 1, "the open breaker sent nothing");
}
