//! Freshness on one replica, against a loopback upstream that counts what it is asked:
//! stale-while-revalidate (one background refresh per name; a failed one keeps the entry, a
//! not-found one replaces it), refresh-ahead of hot names, the refresh share, the caller's
//! `Cache-Control` (`max-age`, `no-cache`, `max-stale`, `only-if-cached`) and what a forced
//! fetch costs, and `Cache-Status` and `Age` in every case.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use profile_lookup::config::{Revalidate, Settings};
use profile_lookup::registry::Platform;
use stand_in::short_video as sv;

use crate::support::{KEY, TestApp, Upstream, eventually, settings, spawn_app, spawn_upstream};

/// The upstream answers as the stand-in does.
pub(crate) const FOUND: u8 = 0;
/// The upstream says every name is gone.
pub(crate) const GONE: u8 = 1;
/// The upstream fails every request (503).
pub(crate) const FAILING: u8 = 2;

/// The short-video stand-in behind `delay`, told by the returned switch to answer as usual,
/// to say every name is gone, or to fail.
pub(crate) async fn switchable(delay: Duration) -> (Upstream, Arc<AtomicU8>) {
    let mode = Arc::new(AtomicU8::new(FOUND));
    let switch = mode.clone();
    let router = sv::router().layer(axum::middleware::from_fn(
        move |mut req: axum::extract::Request, next: axum::middleware::Next| {
            let mode = switch.load(Ordering::SeqCst);
            async move {
                tokio::time::sleep(delay).await;
                match mode {
                    GONE => *req.uri_mut() = "/@nobody.here.at.all".parse().unwrap(),
                    FAILING => return StatusCode::SERVICE_UNAVAILABLE.into_response(),
                    _ => {}
                }
                next.run(req).await
            }
        },
    ));
    (spawn_upstream(router).await, mode)
}

/// Settings with a TTL of `ttl` s and a stale-while-revalidate window of `window` s.
pub(crate) fn fresh_settings(upstream: SocketAddr, ttl: u64, window: u64) -> Settings {
    let mut s = settings(upstream);
    s.cache.ttl_seconds = ttl;
    s.cache.revalidate_seconds = Revalidate::Seconds(window);
    s.cache.max_stale_seconds = 600;
    s
}

pub(crate) fn path() -> String {
    format!("/short-video/profile/{}", sv::SMALL_USER.unique_id)
}

/// `GET path` with the test key and `Cache-Control: cache_control`.
pub(crate) async fn get_with(app: &TestApp, path: &str, cache_control: &str) -> reqwest::Response {
    app.client
        .get(app.url(path))
        .bearer_auth(KEY)
        .header("cache-control", cache_control)
        .send()
        .await
        .expect("the app answers")
}

pub(crate) fn header(response: &reqwest::Response, name: &str) -> String {
    response
        .headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_else(|| panic!("no {name} header"))
}

fn age(response: &reqwest::Response) -> u64 {
    header(response, "age").parse().unwrap()
}

/// Waits until `upstream` has had `n` requests, then a while longer to see no more come.
pub(crate) async fn settles_at(upstream: &Upstream, n: usize) {
    eventually(Duration::from_secs(5), || upstream.hits() >= n).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(upstream.hits(), n, "upstream requests");
}

#[tokio::test]
async fn a_stale_entry_is_answered_at_once_while_one_refresh_replaces_it() {
    let (upstream, _) = switchable(Duration::from_millis(300)).await;
    let app = Arc::new(spawn_app(fresh_settings(upstream.addr, 1, 30)).await);
    let first = app.get(&path()).await;
    assert_eq!(header(&first, "x-cache"), "miss");
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    // Twenty callers of the stale entry at once: every one answered from it, none waits for
    // the platform, and one refresh goes out.
    let calls: Vec<_> = (0..20)
        .map(|_| {
            let app = app.clone();
            tokio::spawn(async move { app.get(&path()).await })
        })
        .collect();
    for call in calls {
        let response = call.await.unwrap();
        assert_eq!(response.status(), 200);
        let status = header(&response, "cache-status");
        assert!(
            status.starts_with("profile-lookup; hit; ttl=-"),
            "stale, answered from the cache: {status}"
        );
        assert_eq!(header(&response, "cache-control"), "private, max-age=0");
        assert!(age(&response) >= 1, "Age counts from the first fetch");
    }
    settles_at(&upstream, 2).await;
    // The refreshed entry is fresh: a hit with its TTL left and a new Age.
    let after = app.get(&path()).await;
    assert_eq!(header(&after, "cache-status"), "profile-lookup; hit; ttl=0");
    assert_eq!(age(&after), 0);
    assert_eq!(upstream.hits(), 2);
}

#[tokio::test]
async fn a_failed_refresh_keeps_the_old_entry() {
    let (upstream, mode) = switchable(Duration::ZERO).await;
    let app = spawn_app(fresh_settings(upstream.addr, 1, 30)).await;
    let body = app.get(&path()).await.text().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    mode.store(FAILING, Ordering::SeqCst);
    let stale = app.get(&path()).await;
    assert!(header(&stale, "cache-status").contains("; hit; ttl=-"));
    // The refresh fails (a 503, retried once): the entry stays and is still served.
    settles_at(&upstream, 3).await;
    let still = app.get(&path()).await;
    assert_eq!(still.status(), 200);
    assert!(header(&still, "cache-status").starts_with("profile-lookup; hit; ttl=-"));
    assert!(age(&still) >= 1, "the old entry, with its own age");
    assert_eq!(still.text().await.unwrap(), body);
}

#[tokio::test]
async fn a_refresh_that_says_not_found_replaces_the_entry() {
    let (upstream, mode) = switchable(Duration::ZERO).await;
    let app = spawn_app(fresh_settings(upstream.addr, 1, 30)).await;
    assert_eq!(app.get(&path()).await.status(), 200);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    mode.store(GONE, Ordering::SeqCst);
    assert_eq!(
        app.get(&path()).await.status(),
        200,
        "the stale profile, once"
    );
    settles_at(&upstream, 2).await;
    let gone = app.get(&path()).await;
    assert_eq!(gone.status(), 404);
    assert_eq!(
        header(&gone, "cache-status"),
        "profile-lookup; hit; ttl=119"
    );
    // The platform failing now brings back no profile: gone stays gone.
    mode.store(FAILING, Ordering::SeqCst);
    assert_eq!(app.get(&path()).await.status(), 404);
}

#[tokio::test]
async fn hot_names_are_refreshed_before_they_expire() {
    // A fetch takes 400 ms; a 2 s TTL and no window past it: a hot entry is refreshed in its
    // last 400 ms (one fetch time), not earlier.
    let (upstream, _) = switchable(Duration::from_millis(400)).await;
    let app = spawn_app(fresh_settings(upstream.addr, 2, 0)).await;
    for _ in 0..3 {
        assert_eq!(app.get(&path()).await.status(), 200);
    }
    assert_eq!(upstream.hits(), 1);
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    app.get(&path()).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        upstream.hits(),
        1,
        "hot, but not yet within a fetch time of expiring"
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    let hot = app.get(&path()).await;
    assert_eq!(header(&hot, "cache-status"), "profile-lookup; hit; ttl=0");
    settles_at(&upstream, 2).await;
    // Past the first entry's TTL: the refreshed one answers, nobody waits.
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let later = app.get(&path()).await;
    assert!(header(&later, "cache-status").starts_with("profile-lookup; hit; ttl="));
    assert_eq!(upstream.hits(), 2);

    // A name asked fewer times than hot_hits is not refreshed ahead: it expires.
    let (upstream, _) = switchable(Duration::ZERO).await;
    let app = spawn_app(fresh_settings(upstream.addr, 2, 0)).await;
    app.get(&path()).await;
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    app.get(&path()).await;
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    assert_eq!(upstream.hits(), 1, "not hot: no refresh ahead");
    let expired = app.get(&path()).await;
    assert!(header(&expired, "cache-status").starts_with("profile-lookup; fwd="));
    assert_eq!(upstream.hits(), 2);
}

#[tokio::test]
async fn refreshes_are_held_to_their_share_of_the_budget() {
    let (upstream, _) = switchable(Duration::ZERO).await;
    let mut s = fresh_settings(upstream.addr, 1, 30);
    // 5 requests a second: a share of 0.2 is one refresh a second, one at once.
    s.platform_mut(Platform::ShortVideo).requests_per_second = 5;
    s.platform_mut(Platform::ShortVideo).burst = 5;
    let app = spawn_app(s).await;
    let names = [
        sv::PUBLIC_USER.unique_id,
        sv::PRIVATE_USER.unique_id,
        sv::SMALL_USER.unique_id,
    ];
    for name in names {
        assert_eq!(
            app.get(&format!("/short-video/profile/{name}"))
                .await
                .status(),
            200
        );
    }
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    for name in names {
        let stale = app.get(&format!("/short-video/profile/{name}")).await;
        assert!(header(&stale, "cache-status").contains("; hit; ttl=-"));
    }
    // One refresh had budget; the other two were skipped (their entries are still served and
    // tried again a second later).
    settles_at(&upstream, 4).await;

    // A share of 0: stale answers are served in the window, and nothing is refreshed.
    let (upstream, _) = switchable(Duration::ZERO).await;
    let mut s = fresh_settings(upstream.addr, 1, 30);
    s.cache.refresh_share = 0.0;
    let app = spawn_app(s).await;
    app.get(&path()).await;
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    for _ in 0..3 {
        assert!(header(&app.get(&path()).await, "cache-status").contains("; hit; ttl=-"));
    }
    settles_at(&upstream, 1).await;
}

#[tokio::test]
async fn only_if_cached_never_reaches_the_upstream() {
    let (upstream, _) = switchable(Duration::ZERO).await;
    let app = spawn_app(fresh_settings(upstream.addr, 1, 30)).await;
    let absent = get_with(&app, &path(), "only-if-cached").await;
    assert_eq!(absent.status(), 504);
    assert_eq!(
        header(&absent, "cache-status"),
        "profile-lookup; detail=only-if-cached"
    );
    let problem: serde_json::Value = absent.json().await.unwrap();
    assert_eq!(problem["code"], "not_cached");
    assert_eq!(upstream.hits(), 0);
    app.get(&path()).await;
    let cached = get_with(&app, &path(), "only-if-cached").await;
    assert_eq!(cached.status(), 200);
    assert!(header(&cached, "cache-status").starts_with("profile-lookup; hit; ttl="));
    // Stale in its window: served, and no refresh is started for it.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let stale = get_with(&app, &path(), "ONLY-IF-CACHED, max-stale").await;
    assert_eq!(stale.status(), 200);
    // With max-age=0 nothing stored suits it: 504, still nothing asked.
    let refused = get_with(&app, &path(), "only-if-cached, max-age=0").await;
    assert_eq!(refused.status(), 504);
    settles_at(&upstream, 1).await;
}

#[tokio::test]
async fn max_age_0_fetches_once_for_50_concurrent_callers() {
    let (upstream, _) = switchable(Duration::from_millis(300)).await;
    let app = Arc::new(spawn_app(fresh_settings(upstream.addr, 600, 120)).await);
    app.get(&path()).await;
    let calls: Vec<_> = (0..50)
        .map(|_| {
            let app = app.clone();
            tokio::spawn(async move { get_with(&app, &path(), "max-age=0").await })
        })
        .collect();
    let mut started = 0;
    for call in calls {
        let response = call.await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(age(&response), 0, "a fresh answer");
        let status = header(&response, "cache-status");
        assert!(
            status.starts_with("profile-lookup; fwd=request; fwd-status=200; stored"),
            "{status}"
        );
        if !status.contains("; collapsed") {
            started += 1;
        }
    }
    assert_eq!(started, 1, "one caller's fetch, the others joined it");
    assert_eq!(upstream.hits(), 2, "the first fetch and one forced one");
    // no-cache is max-age=0.
    get_with(&app, &path(), "no-cache").await;
    assert_eq!(upstream.hits(), 3);
}

#[tokio::test]
async fn max_age_serves_what_is_young_enough_and_fetches_the_rest() {
    let (upstream, _) = switchable(Duration::ZERO).await;
    let app = spawn_app(fresh_settings(upstream.addr, 600, 120)).await;
    app.get(&path()).await;
    let young = get_with(&app, &path(), "max-age=60").await;
    assert!(header(&young, "cache-status").starts_with("profile-lookup; hit"));
    assert_eq!(upstream.hits(), 1);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let refused = get_with(&app, &path(), "max-age=\"0\", foo=bar").await;
    assert!(header(&refused, "cache-status").starts_with("profile-lookup; fwd=request"));
    assert_eq!(upstream.hits(), 2);
    // Values that are not numbers are ignored: a plain hit.
    let junk = get_with(&app, &path(), "max-age=soon, max-age=-1").await;
    assert!(header(&junk, "cache-status").starts_with("profile-lookup; hit"));
    assert_eq!(upstream.hits(), 2);
}

#[tokio::test]
async fn max_stale_takes_a_stale_copy_past_the_window_and_refreshes_it() {
    let (upstream, _) = switchable(Duration::ZERO).await;
    // No window: past its TTL the entry is stale for everyone but a max-stale caller.
    let app = spawn_app(fresh_settings(upstream.addr, 1, 0)).await;
    app.get(&path()).await;
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let stale = get_with(&app, &path(), "max-stale=60").await;
    assert_eq!(stale.status(), 200);
    assert!(header(&stale, "cache-status").starts_with("profile-lookup; hit; ttl=-"));
    settles_at(&upstream, 2).await;
    // Too stale for a max-stale of 0: fetched (and it had a stale copy: fwd=stale).
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let fetched = get_with(&app, &path(), "max-stale=0").await;
    assert!(header(&fetched, "cache-status").starts_with("profile-lookup; fwd=stale"));
    assert_eq!(upstream.hits(), 3);
}

#[tokio::test]
async fn a_forced_fetch_costs_one_more_quota_unit() {
    let (upstream, _) = switchable(Duration::ZERO).await;
    let mut s = fresh_settings(upstream.addr, 600, 120);
    // Ten units, refilled one a minute: nothing comes back during the test.
    s.rate_limit.per_key_per_minute = 1;
    s.rate_limit.burst = 10;
    let app = spawn_app(s).await;
    let left = |r: &reqwest::Response| header(r, "ratelimit");
    let miss = app.get(&path()).await;
    assert!(
        left(&miss).starts_with("\"per-key\";r=9;"),
        "{}",
        left(&miss)
    );
    // A no-cache request refusing the stored answer: two units.
    let forced = get_with(&app, &path(), "no-cache").await;
    assert!(
        left(&forced).starts_with("\"per-key\";r=7;"),
        "{}",
        left(&forced)
    );
    // A max-age the stored answer meets: one unit, no fetch.
    let met = get_with(&app, &path(), "max-age=600").await;
    assert!(left(&met).starts_with("\"per-key\";r=6;"), "{}", left(&met));
    assert_eq!(upstream.hits(), 2);
    // A no-cache request for a name nothing is stored for forces nothing: one unit.
    let other = format!("/short-video/profile/{}", sv::PUBLIC_USER.unique_id);
    let plain_miss = get_with(&app, &other, "no-cache").await;
    assert!(left(&plain_miss).starts_with("\"per-key\";r=5;"));
    for _ in 0..4 {
        app.get(&path()).await;
    }
    // One unit left: the forced fetch cannot be paid for, and the platform is not asked.
    let unpaid = get_with(&app, &path(), "no-cache").await;
    assert_eq!(unpaid.status(), 429);
    assert_eq!(
        header(&unpaid, "cache-status"),
        "profile-lookup; detail=quota"
    );
    let problem: serde_json::Value = unpaid.json().await.unwrap();
    assert_eq!(problem["code"], "rate_limited");
    assert_eq!(upstream.hits(), 3);
}

#[tokio::test]
async fn cache_status_and_age_in_every_case() {
    let (upstream, mode) = switchable(Duration::ZERO).await;
    let app = spawn_app(fresh_settings(upstream.addr, 1, 0)).await;
    // A miss that fetched and stored a profile.
    let miss = app.get(&path()).await;
    assert_eq!(
        header(&miss, "cache-status"),
        "profile-lookup; fwd=uri-miss; fwd-status=200; stored; ttl=0"
    );
    assert_eq!(age(&miss), 0);
    // A hit.
    let hit = app.get(&path()).await;
    assert_eq!(header(&hit, "cache-status"), "profile-lookup; hit; ttl=0");
    // A miss for a name the platform does not have: stored as a not-found, with an Age.
    let gone = app.get("/short-video/profile/nobody.here.at.all").await;
    assert_eq!(gone.status(), 404);
    assert_eq!(
        header(&gone, "cache-status"),
        "profile-lookup; fwd=uri-miss; fwd-status=404; stored; ttl=119"
    );
    assert_eq!(age(&gone), 0);
    // Past the TTL (no window) with a stale copy kept: the fetch is `fwd=stale`.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let refetched = app.get(&path()).await;
    assert_eq!(
        header(&refetched, "cache-status"),
        "profile-lookup; fwd=stale; fwd-status=200; stored; ttl=0"
    );
    // The platform fails: the stale copy stands in, with its age and the failure's status.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    mode.store(FAILING, Ordering::SeqCst);
    let stand_in = app.get(&path()).await;
    assert_eq!(stand_in.status(), 200);
    let status = header(&stand_in, "cache-status");
    assert!(
        status
            .starts_with("profile-lookup; fwd=stale; fwd-status=500; detail=stale-if-error; ttl=-"),
        "{status}"
    );
    assert!(age(&stand_in) >= 1);
    assert_eq!(header(&stand_in, "x-cache"), "stale");
    // A failure with nothing to stand in.
    let failed = app
        .get(&format!(
            "/short-video/profile/{}",
            sv::PUBLIC_USER.unique_id
        ))
        .await;
    assert_eq!(failed.status(), 500);
    assert_eq!(
        header(&failed, "cache-status"),
        "profile-lookup; fwd=uri-miss; fwd-status=500"
    );
    // Refused before the cache: no Cache-Status.
    let invalid = app.get("/short-video/profile/x").await;
    assert_eq!(invalid.status(), 400);
    assert!(invalid.headers().get("cache-status").is_none());
    // With the cache off, a fetched answer is not stored.
    mode.store(FOUND, Ordering::SeqCst);
    let mut s = settings(upstream.addr);
    s.cache.enabled = false;
    let off = spawn_app(s).await;
    assert_eq!(
        header(&off.get(&path()).await, "cache-status"),
        "profile-lookup; fwd=uri-miss; fwd-status=200; ttl=0"
    );
}
