//! Freshness on one replica, against a loopback upstream that counts what it is asked:
//! stale-while-revalidate (one background refresh per name; a failed one keeps the entry, a
//! not-found one replaces it), refresh-ahead of hot names, the refresh share, the caller's
//! `Cache-Control` (`max-age`, `no-cache`, `max-stale`, `only-if-cached`) and what a forced
//! fetch costs, and `Cache-Status` and `Age` in every case.

use std::sync::Arc;
use std::time::Duration;

use profile_lookup::config::Revalidate;
use profile_lookup::registry::Platform;
use stand_in::short_video as sv;

use crate::support::routers::{FAILING, FOUND, GONE, Switch, short_video_found_gone_failing, slow};
use crate::support::{Answer, AppBuilder, ShortVideo, TestApp};

/// The short-video stand-in behind `delay`, told by the returned switch to answer as usual,
/// to say every name is gone, or to fail; the app on it with a TTL of `ttl` s and a
/// stale-while-revalidate window of `window` s.
pub(crate) fn fresh(delay: Duration, ttl: u64, window: u64) -> (AppBuilder, Switch) {
    let (router, platform) = short_video_found_gone_failing();
    let app = TestApp::on(slow(router, delay)).with(|s| {
        s.cache.ttl_seconds = ttl;
        s.cache.revalidate_seconds = Revalidate::Seconds(window);
        s.cache.max_stale_seconds = 600;
    });
    (app, platform)
}

/// The name these tests look up.
pub(crate) const NAME: &str = sv::SMALL_USER.unique_id;

/// Looks [`NAME`] up on `app`.
pub(crate) async fn lookup(app: &TestApp) -> Answer {
    app.lookup(ShortVideo, NAME).await
}

/// Looks [`NAME`] up on `app` with `Cache-Control: cache_control`.
pub(crate) async fn lookup_with(app: &TestApp, cache_control: &str) -> Answer {
    app.lookup_with(ShortVideo, NAME, cache_control).await
}

#[tokio::test]
async fn a_stale_entry_is_answered_at_once_while_one_refresh_replaces_it() {
    let (app, _) = fresh(Duration::from_millis(300), 1, 30);
    let app = Arc::new(app.start().await);
    lookup(&app).await.expect_header("x-cache", "miss");
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    // Twenty callers of the stale entry at once: every one answered from it, none waits for
    // the platform, and one refresh goes out.
    let calls: Vec<_> = (0..20)
        .map(|_| {
            let app = app.clone();
            tokio::spawn(async move { lookup(&app).await })
        })
        .collect();
    for call in calls {
        let answer = call
            .await
            .unwrap()
            .expect_status(200)
            .expect_header("cache-control", "private, max-age=0");
        let status = answer.header("cache-status");
        assert!(
            status.starts_with("profile-lookup; hit; ttl=-"),
            "stale, answered from the cache: {status}"
        );
        assert!(answer.age() >= 1, "Age counts from the first fetch");
    }
    app.upstream().settles_at(2).await;
    // The refreshed entry is fresh: a hit with its TTL left and a new Age.
    let after = lookup(&app)
        .await
        .expect_header("cache-status", "profile-lookup; hit; ttl=0");
    assert_eq!(after.age(), 0);
    assert_eq!(app.hits(), 2);
}

#[tokio::test]
async fn auto_answers_at_once_until_twice_the_ttl() {
    // `revalidate_seconds = "auto"` (the default): the window is the TTL itself, 2 s here.
    let (app, _) = fresh(Duration::ZERO, 2, 0);
    let app = app
        .with(|s| {
            s.cache.revalidate_seconds = Revalidate::Auto;
            s.cache.hot_hits = 0;
        })
        .start()
        .await;
    lookup(&app).await.expect_status(200);
    // Half a second past the TTL, within the 2 s window: answered at once, and one refresh
    // goes out.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    lookup(&app)
        .await
        .expect_header("cache-status", "profile-lookup; hit; ttl=-1");
    app.upstream().settles_at(2).await;
    // The refreshed entry, asked no more, is past twice its TTL: the next caller waits.
    tokio::time::sleep(Duration::from_millis(4_200)).await;
    let expired = lookup(&app).await.expect_status(200);
    assert!(
        expired.header("cache-status").contains("; fwd=stale;"),
        "{}",
        expired.header("cache-status")
    );
    assert_eq!(app.hits(), 3);
}

#[tokio::test]
async fn a_failed_refresh_keeps_the_old_entry() {
    let (app, platform) = fresh(Duration::ZERO, 1, 30);
    let app = app.start().await;
    let body = lookup(&app).await.text();
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    platform.set(FAILING);
    let stale = lookup(&app).await;
    assert!(stale.header("cache-status").contains("; hit; ttl=-"));
    // The refresh fails (a 503, retried once, then the next source, retried once): the entry
    // stays and is still served.
    app.upstream().settles_at(5).await;
    let still = lookup(&app).await.expect_status(200);
    assert!(
        still
            .header("cache-status")
            .starts_with("profile-lookup; hit; ttl=-")
    );
    assert!(still.age() >= 1, "the old entry, with its own age");
    assert_eq!(still.text(), body);
}

#[tokio::test]
async fn a_refresh_that_says_not_found_replaces_the_entry() {
    let (app, platform) = fresh(Duration::ZERO, 1, 30);
    let app = app.start().await;
    lookup(&app).await.expect_status(200);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    platform.set(GONE);
    lookup(&app)
        .await
        .about("the stale profile, once")
        .expect_status(200);
    app.upstream().settles_at(2).await;
    lookup(&app)
        .await
        .expect_status(404)
        .expect_header("cache-status", "profile-lookup; hit; ttl=119");
    // The platform failing now brings back no profile: gone stays gone.
    platform.set(FAILING);
    lookup(&app).await.expect_status(404);
}

#[tokio::test]
async fn hot_names_are_refreshed_before_they_expire() {
    // A fetch takes 400 ms; a 2 s TTL and no window past it: a hot entry is refreshed in its
    // last 400 ms (one fetch time), not earlier.
    let (app, _) = fresh(Duration::from_millis(400), 2, 0);
    let app = app.start().await;
    for _ in 0..3 {
        lookup(&app).await.expect_status(200);
    }
    assert_eq!(app.hits(), 1);
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    lookup(&app).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        app.hits(),
        1,
        "hot, but not yet within a fetch time of expiring"
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    lookup(&app)
        .await
        .expect_header("cache-status", "profile-lookup; hit; ttl=0");
    app.upstream().settles_at(2).await;
    // Past the first entry's TTL: the refreshed one answers, nobody waits.
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let later = lookup(&app).await;
    assert!(
        later
            .header("cache-status")
            .starts_with("profile-lookup; hit; ttl=")
    );
    assert_eq!(app.hits(), 2);

    // A name asked fewer times than hot_hits is not refreshed ahead: it expires.
    let (app, _) = fresh(Duration::ZERO, 2, 0);
    let app = app.start().await;
    lookup(&app).await;
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    lookup(&app).await;
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    assert_eq!(app.hits(), 1, "not hot: no refresh ahead");
    let expired = lookup(&app).await;
    assert!(
        expired
            .header("cache-status")
            .starts_with("profile-lookup; fwd=")
    );
    assert_eq!(app.hits(), 2);
}

#[tokio::test]
async fn refreshes_are_held_to_their_share_of_the_budget() {
    let (app, _) = fresh(Duration::ZERO, 1, 30);
    // 5 requests a second: a share of 0.2 is one refresh a second, one at once.
    let app = app
        .with(|s| {
            s.platform_mut(Platform::ShortVideo).requests_per_second = 5;
            s.platform_mut(Platform::ShortVideo).burst = 5;
        })
        .start()
        .await;
    let names = [
        sv::PUBLIC_USER.unique_id,
        sv::PRIVATE_USER.unique_id,
        sv::SMALL_USER.unique_id,
    ];
    for name in names {
        app.lookup(ShortVideo, name).await.expect_status(200);
    }
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    for name in names {
        let stale = app.lookup(ShortVideo, name).await;
        assert!(stale.header("cache-status").contains("; hit; ttl=-"));
    }
    // One refresh had budget; the other two were skipped (their entries are still served and
    // tried again a second later).
    app.upstream().settles_at(4).await;

    // A share of 0: stale answers are served in the window, and nothing is refreshed.
    let (app, _) = fresh(Duration::ZERO, 1, 30);
    let app = app.with(|s| s.cache.refresh_share = 0.0).start().await;
    lookup(&app).await;
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    for _ in 0..3 {
        assert!(
            lookup(&app)
                .await
                .header("cache-status")
                .contains("; hit; ttl=-")
        );
    }
    app.upstream().settles_at(1).await;
}

#[tokio::test]
async fn only_if_cached_never_reaches_the_upstream() {
    let (app, _) = fresh(Duration::ZERO, 1, 30);
    let app = app.start().await;
    lookup_with(&app, "only-if-cached")
        .await
        .expect_problem(504, "not_cached")
        .expect_header("cache-status", "profile-lookup; detail=only-if-cached");
    assert_eq!(app.hits(), 0);
    lookup(&app).await;
    let cached = lookup_with(&app, "only-if-cached").await.expect_status(200);
    assert!(
        cached
            .header("cache-status")
            .starts_with("profile-lookup; hit; ttl=")
    );
    // Stale in its window: served, and no refresh is started for it.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    lookup_with(&app, "ONLY-IF-CACHED, max-stale")
        .await
        .expect_status(200);
    // With max-age=0 nothing stored suits it: 504, still nothing asked.
    lookup_with(&app, "only-if-cached, max-age=0")
        .await
        .expect_status(504);
    app.upstream().settles_at(1).await;
}

#[tokio::test]
async fn max_age_0_fetches_once_for_50_concurrent_callers() {
    let (app, _) = fresh(Duration::from_millis(300), 600, 120);
    let app = Arc::new(app.start().await);
    lookup(&app).await;
    let calls: Vec<_> = (0..50)
        .map(|_| {
            let app = app.clone();
            tokio::spawn(async move { lookup_with(&app, "max-age=0").await })
        })
        .collect();
    let mut started = 0;
    for call in calls {
        let answer = call.await.unwrap().expect_status(200);
        assert_eq!(answer.age(), 0, "a fresh answer");
        let status = answer.header("cache-status");
        assert!(
            status.starts_with("profile-lookup; fwd=request; fwd-status=200; stored"),
            "{status}"
        );
        if !status.contains("; collapsed") {
            started += 1;
        }
    }
    assert_eq!(started, 1, "one caller's fetch, the others joined it");
    assert_eq!(app.hits(), 2, "the first fetch and one forced one");
    // no-cache is max-age=0.
    lookup_with(&app, "no-cache").await;
    assert_eq!(app.hits(), 3);
}

#[tokio::test]
async fn max_age_serves_what_is_young_enough_and_fetches_the_rest() {
    let (app, _) = fresh(Duration::ZERO, 600, 120);
    let app = app.start().await;
    lookup(&app).await;
    // (Cache-Control, what Cache-Status starts with, the upstream's requests after it.)
    for (cache_control, status, hits, wait) in [
        ("max-age=60", "profile-lookup; hit", 1, 1_100),
        (
            "max-age=\"0\", foo=bar",
            "profile-lookup; fwd=request",
            2,
            0,
        ),
        // Values that are not numbers are ignored: a plain hit.
        ("max-age=soon, max-age=-1", "profile-lookup; hit", 2, 0),
    ] {
        let answer = lookup_with(&app, cache_control).await;
        let said = answer.header("cache-status");
        assert!(said.starts_with(status), "{cache_control}: {said}");
        assert_eq!(app.hits(), hits, "{cache_control}");
        tokio::time::sleep(Duration::from_millis(wait)).await;
    }
}

#[tokio::test]
async fn max_stale_takes_a_stale_copy_past_the_window_and_refreshes_it() {
    // No window: past its TTL the entry is stale for everyone but a max-stale caller.
    let (app, _) = fresh(Duration::ZERO, 1, 0);
    let app = app.start().await;
    lookup(&app).await;
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let stale = lookup_with(&app, "max-stale=60").await.expect_status(200);
    assert!(
        stale
            .header("cache-status")
            .starts_with("profile-lookup; hit; ttl=-")
    );
    app.upstream().settles_at(2).await;
    // Too stale for a max-stale of 0: fetched (and it had a stale copy: fwd=stale).
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let fetched = lookup_with(&app, "max-stale=0").await;
    assert!(
        fetched
            .header("cache-status")
            .starts_with("profile-lookup; fwd=stale")
    );
    assert_eq!(app.hits(), 3);
}

#[tokio::test]
async fn a_forced_fetch_costs_one_more_quota_unit() {
    let (app, _) = fresh(Duration::ZERO, 600, 120);
    let app = app.with(crate::support::ten_units).start().await;
    lookup(&app).await.expect_quota_left(9);
    // A no-cache request refusing the stored answer: two units.
    lookup_with(&app, "no-cache").await.expect_quota_left(7);
    // A max-age the stored answer meets: one unit, no fetch.
    lookup_with(&app, "max-age=600").await.expect_quota_left(6);
    assert_eq!(app.hits(), 2);
    // A no-cache request for a name nothing is stored for forces nothing: one unit.
    app.lookup_with(ShortVideo, sv::PUBLIC_USER.unique_id, "no-cache")
        .await
        .expect_quota_left(5);
    for _ in 0..4 {
        lookup(&app).await;
    }
    // One unit left: the forced fetch cannot be paid for, and the platform is not asked.
    lookup_with(&app, "no-cache")
        .await
        .expect_problem(429, "rate_limited")
        .expect_header("cache-status", "profile-lookup; detail=quota");
    assert_eq!(app.hits(), 3);
}

#[tokio::test]
async fn cache_status_and_age_in_every_case() {
    let (app, platform) = fresh(Duration::ZERO, 1, 0);
    let app = app.start().await;
    // A miss that fetched and stored a profile.
    let miss = lookup(&app).await.expect_header(
        "cache-status",
        "profile-lookup; fwd=uri-miss; fwd-status=200; stored; ttl=0",
    );
    assert_eq!(miss.age(), 0);
    // A hit.
    lookup(&app)
        .await
        .expect_header("cache-status", "profile-lookup; hit; ttl=0");
    // A miss for a name the platform does not have: stored as a not-found, with an Age.
    let gone = app
        .lookup(ShortVideo, "nobody.here.at.all")
        .await
        .expect_status(404)
        .expect_header(
            "cache-status",
            "profile-lookup; fwd=uri-miss; fwd-status=404; stored; ttl=119",
        );
    assert_eq!(gone.age(), 0);
    // Past the TTL (no window) with a stale copy kept: the fetch is `fwd=stale`.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    lookup(&app).await.expect_header(
        "cache-status",
        "profile-lookup; fwd=stale; fwd-status=200; stored; ttl=0",
    );
    // The platform fails: the stale copy stands in, with its age and the failure's status.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    platform.set(FAILING);
    let stand_in = lookup(&app)
        .await
        .expect_status(200)
        .expect_header("x-cache", "stale");
    let status = stand_in.header("cache-status");
    assert!(
        status
            .starts_with("profile-lookup; fwd=stale; fwd-status=500; detail=stale-if-error; ttl=-"),
        "{status}"
    );
    assert!(stand_in.age() >= 1);
    // A failure with nothing to stand in.
    app.lookup(ShortVideo, sv::PUBLIC_USER.unique_id)
        .await
        .expect_status(500)
        .expect_header(
            "cache-status",
            "profile-lookup; fwd=uri-miss; fwd-status=500",
        );
    // Refused before the cache: no Cache-Status.
    let invalid = app.lookup(ShortVideo, "x").await.expect_status(400);
    assert!(!invalid.has("cache-status"));
    // With the cache off, a fetched answer is not stored.
    platform.set(FOUND);
    let off = TestApp::on(app.upstream())
        .with(|s| s.cache.enabled = false)
        .start()
        .await;
    lookup(&off).await.expect_header(
        "cache-status",
        "profile-lookup; fwd=uri-miss; fwd-status=200; ttl=0",
    );
}
