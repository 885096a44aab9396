//! Issue 8 #1, #3, #4 and the two gate findings, end to end: one flight per name whoever hangs
//! up, every retry wait inside the budget, a confirmed not-found ends stale serving, and a retry
//! the local budget refused still ends as the block it was.

use std::time::Duration;

use crate::support::routers::{FAILING, GONE, always, found_gone_failing, slow, status};
use crate::support::{
    Answer, KEY, PhotoShare, ShortVideo, TestApp, eventually, expires_in_a_second,
};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use profile_lookup::config::{RetryConfig, Settings};
use profile_lookup::registry::Platform;
use stand_in::photo_share as ps;
use stand_in::short_video as sv;

/// A client that gives up after `timeout`, as an impatient caller does.
fn impatient(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder().timeout(timeout).build().unwrap()
}

/// Starts a lookup of the small sample on `app` by a caller who gives up after a second.
fn gives_up_after_a_second(
    app: &TestApp,
) -> tokio::task::JoinHandle<Result<reqwest::Response, reqwest::Error>> {
    let url = app.url(&format!(
        "/short-video/profile/{}",
        sv::SMALL_USER.unique_id
    ));
    tokio::spawn(
        impatient(Duration::from_secs(1))
            .get(url)
            .bearer_auth(KEY)
            .send(),
    )
}

#[tokio::test]
async fn a_caller_who_hangs_up_does_not_cancel_the_shared_fetch() {
    let app = TestApp::on(slow(sv::router(), Duration::from_millis(1_500)))
        .start()
        .await;
    let gives_up = gives_up_after_a_second(&app);
    tokio::time::sleep(Duration::from_millis(500)).await;
    app.lookup(ShortVideo, sv::SMALL_USER.unique_id)
        .await
        .expect_status(200);
    assert!(
        gives_up.await.unwrap().is_err(),
        "the first caller timed out"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(app.hits(), 1, "one upstream request for both callers");
}

#[tokio::test]
async fn callers_who_all_time_out_still_warm_the_cache() {
    let app = TestApp::on(slow(sv::router(), Duration::from_millis(1_500)))
        .start()
        .await;
    let callers: Vec<_> = (0..4).map(|_| gives_up_after_a_second(&app)).collect();
    for caller in callers {
        assert!(caller.await.unwrap().is_err(), "every caller timed out");
    }
    // The flight finishes on its own about 1.5 s after it started.
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    app.lookup(ShortVideo, sv::SMALL_USER.unique_id)
        .await
        .expect_status(200)
        .about("the flight was cached")
        .expect_header("x-cache", "hit");
    assert_eq!(app.hits(), 1, "one upstream request for five callers");
}

/// A platform that answers every request 429, with `retry_after` when given.
fn always_throttled(retry_after: Option<&'static str>) -> axum::Router {
    always(move || {
        let mut response = StatusCode::TOO_MANY_REQUESTS.into_response();
        if let Some(value) = retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, value.parse().unwrap());
        }
        response
    })
}

/// A photo-share lookup of `name` on [`always_throttled`]`(retry_after)`, the test settings
/// adjusted by `adjust`: the app, its answer (which must be 429 `upstream_blocked`), and how
/// long it took.
async fn throttled_lookup(
    retry_after: Option<&'static str>,
    name: &str,
    adjust: impl FnOnce(&mut Settings),
) -> (TestApp, Answer, Duration) {
    let app = TestApp::on(always_throttled(retry_after))
        .with(adjust)
        .start()
        .await;
    let (answer, took) = app.timed_lookup(PhotoShare, name).await;
    let answer = answer
        .about(format!("Retry-After {retry_after:?}"))
        .expect_blocked();
    (app, answer, took)
}

#[tokio::test]
async fn a_retry_after_longer_than_the_budget_left_ends_the_retries_with_a_block() {
    let (app, answer, took) = throttled_lookup(Some("1"), "somebody", |s| {
        s.retry.max_attempts = 4;
        s.retry.max_delay_ms = 5_000;
        s.retry.max_total_ms = 1_500;
        s.server.request_timeout_ms = 2_500;
        s.upstream.head_timeout_ms = 300;
        s.breaker.failure_threshold = 1;
        s.breaker.cooldown_seconds = 60;
    })
    .await;
    let retry_after = answer.retry_after();
    assert!((1..=3600).contains(&retry_after), "{retry_after}");
    assert!(
        took < Duration::from_millis(2_000),
        "ended when the next wait no longer fit, not at the deadline: {took:?}"
    );
    assert_eq!(
        app.hits(),
        3,
        "one wait of 1 s fits in 1.5 s, two do not; the page then has no wait left"
    );

    // The block reached the breaker (threshold 1): the next lookup is refused locally.
    app.lookup(PhotoShare, "someone.else")
        .await
        .expect_blocked();
    assert_eq!(app.hits(), 3, "the open breaker sent nothing");
}

#[tokio::test]
async fn a_block_that_outlasts_the_request_deadline_is_answered_as_the_block() {
    // No Retry-After, then a short one: the retries would go on for a minute, the lookup's
    // deadline comes first, and what the platform last said is a block.
    for (retry_after, told) in [(None, 30..=30), (Some("1"), 1..=2)] {
        let (app, answer, took) = throttled_lookup(retry_after, "blocked.for.long", |s| {
            s.retry = RetryConfig {
                max_attempts: 100,
                base_delay_ms: 300,
                max_delay_ms: 1_000,
                max_total_ms: 60_000,
            };
            s.breaker.cooldown_seconds = 30;
            s.server.request_timeout_ms = 1_500;
            s.upstream.head_timeout_ms = 300;
        })
        .await;
        let wait = answer.retry_after();
        assert!(
            told.contains(&wait),
            "Retry-After {retry_after:?}: told {wait}"
        );
        // No attempt starts whose head could come after the lookup's deadline: the block is
        // answered then, before the caller's deadline.
        assert!(
            took >= Duration::from_millis(600) && took < Duration::from_millis(1_600),
            "answered by the deadline: {took:?}"
        );
        assert!(app.hits() >= 2, "the platform was asked again meanwhile");
    }
}

#[tokio::test]
async fn a_retry_after_of_eons_is_429_at_once_capped_at_an_hour() {
    // Photo-share waits its blocks out; a wait far past the budget is not waited at all.
    let (app, answer, took) = throttled_lookup(Some("99999999999"), "eons.away", |s| {
        s.retry.max_total_ms = 20_000;
        s.server.request_timeout_ms = 5_000;
    })
    .await;
    assert_eq!(answer.retry_after(), 3600);
    assert!(took < Duration::from_secs(2), "no wait beyond the budget");
    assert_eq!(app.hits(), 2, "the JSON, then the page, neither waited out");
}

#[tokio::test]
async fn retry_after_zero_does_not_give_back_to_back_retries() {
    let (app, _, _) = throttled_lookup(Some("0"), "somebody", |s| {
        s.retry = RetryConfig {
            max_attempts: 3,
            base_delay_ms: 100,
            max_delay_ms: 1_000,
            max_total_ms: 5_000,
        };
    })
    .await;
    let seen = app.upstream().arrivals();
    // The JSON's three attempts, then the page's (the lookup's one budget allows them).
    assert_eq!(seen.len(), 6);
    for pair in seen[..3].windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= Duration::from_millis(90),
            "retries spaced by the backoff, got {gap:?}"
        );
    }
}

#[tokio::test]
async fn a_confirmed_not_found_removes_the_stale_copy() {
    let (router, platform) = found_gone_failing(ps::router(), status(StatusCode::NOT_FOUND));
    let app = TestApp::on(router)
        .with(|s| {
            expires_in_a_second(s);
            s.cache.negative_ttl_seconds = 1;
            s.cache.max_stale_seconds = 60;
        })
        .start()
        .await;
    let name = ps::PUBLIC_USER.username;
    app.lookup(PhotoShare, name).await.expect_status(200);
    platform.set(GONE);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    app.lookup(PhotoShare, name).await.expect_status(404);
    platform.set(FAILING);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let failing = app.lookup(PhotoShare, name).await;
    assert_ne!(
        failing.status(),
        200,
        "x-cache: {:?}: a deleted profile came back from the stale store",
        failing.headers().get("x-cache")
    );
    assert_eq!(failing.problem()["code"], "upstream_unavailable");
}

#[tokio::test]
async fn a_retry_refused_by_the_local_budget_still_ends_as_the_block() {
    let app = TestApp::on(status(StatusCode::TOO_MANY_REQUESTS))
        .with(|s| {
            // One token, then one a second: the retry cannot get one within 50 ms.
            let platform = s.platform_mut(Platform::PhotoShare);
            platform.requests_per_second = 1;
            platform.burst = 1;
            platform.max_queue_ms = 50;
            s.breaker.failure_threshold = 1;
            s.breaker.cooldown_seconds = 60;
        })
        .start()
        .await;
    app.lookup(PhotoShare, "somebody")
        .await
        .about("the platform's block, not our budget")
        .expect_blocked();
    assert_eq!(app.hits(), 1);
    // The breaker counted that block: the next lookup is refused without a request.
    assert!(
        eventually(Duration::from_millis(500), || app.hits() == 1).await,
        "no late request"
    );
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    app.lookup(PhotoShare, "someone.else")
        .await
        .expect_status(429);
    assert_eq!(app.hits(), 1, "the open breaker sent nothing");
}
