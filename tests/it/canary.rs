//! The canary end to end, on loopback: every round reads every source of every platform
//! through the service's own gate; a stand-in that starts serving a moved shape turns exactly
//! that source `changed` within an interval (and its page is captured); a blocking platform is
//! `blocked`, never `changed`; the callers' cache and quota are untouched and the outbound
//! budget is spent like theirs; `GET /status` is open; and with the short-video page `changed`
//! twice, lookups are answered by the embed without the page being asked first, until the page
//! reads again.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use profile_lookup::config::Settings;
use profile_lookup::config::canary::AccountList;
use profile_lookup::platform::Platform;
use serde_json::Value;
use stand_in::drift::DriftSwitch;
use stand_in::photo_share as ps;
use stand_in::short_video as sv;
use tower::ServiceExt;

use crate::support::{self, KEY, TestApp, eventually, spawn_app, spawn_upstream};

/// Every request path (with its query) an upstream received, in order.
pub(crate) type Log = Arc<Mutex<Vec<String>>>;

/// `router` behind a recorder of every request's path and query.
pub(crate) fn recorded(router: Router, log: Log) -> Router {
    Router::new().fallback(move |request: Request| {
        let (router, log) = (router.clone(), log.clone());
        async move {
            let path = request
                .uri()
                .path_and_query()
                .map(|p| p.to_string())
                .unwrap_or_default();
            log.lock().unwrap().push(path);
            router.oneshot(request).await.unwrap()
        }
    })
}

/// A platform's stand-in with its drift switch, recorded.
pub(crate) struct StandIn {
    pub upstream: support::Upstream,
    pub drift: DriftSwitch,
    pub log: Log,
}

impl StandIn {
    pub(crate) fn paths(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    pub(crate) fn forget(&self) {
        self.log.lock().unwrap().clear();
    }
}

/// `platform`'s stand-in, switchable to its drifted shape, recorded.
pub(crate) async fn spawn_stand_in(platform: Platform) -> StandIn {
    let drift = DriftSwitch::default();
    let log = Log::default();
    let plays = stand_in::platform(platform.as_str()).expect("every platform has a stand-in");
    let router = plays.switchable(drift.clone());
    StandIn {
        upstream: spawn_upstream(recorded(router, log.clone())).await,
        drift,
        log,
    }
}

fn names(list: &[&str]) -> AccountList {
    AccountList::Names(list.iter().map(|n| (*n).to_owned()).collect())
}

/// The test settings with short-video at `short`, photo-share at `photo`, a round every second
/// without jitter, and these canary accounts.
fn canary_settings(
    short: &StandIn,
    photo: &StandIn,
    sv_names: &[&str],
    ps_names: &[&str],
) -> Settings {
    let mut s = support::settings(short.upstream.addr);
    s.platform_mut(Platform::PhotoShare).base_url =
        format!("http://{}", photo.upstream.addr).parse().unwrap();
    s.canary.interval_seconds = 1;
    s.canary.jitter = 0.0;
    s.canary
        .accounts
        .insert("short_video".into(), names(sv_names));
    s.canary
        .accounts
        .insert("photo_share".into(), names(ps_names));
    s
}

/// Points every registered platform but the two above at its own stand-in, watching the
/// accounts its samples name, so that a round covers every platform; the stand-ins serve as
/// long as the returned upstreams live.
async fn the_other_platforms_on_their_stand_ins(s: &mut Settings) -> Vec<support::Upstream> {
    let mut upstreams = Vec::new();
    let others = Platform::ALL
        .iter()
        .filter(|p| !matches!(p, Platform::ShortVideo | Platform::PhotoShare));
    for &platform in others {
        let plays = stand_in::platform(platform.as_str()).expect("every platform has a stand-in");
        let (router, accounts) = (plays.router(), plays.canary_accounts());
        let upstream = spawn_upstream(router).await;
        s.platform_mut(platform).base_url = format!("http://{}", upstream.addr).parse().unwrap();
        s.canary
            .accounts
            .insert(platform.section().into(), names(&accounts));
        upstreams.push(upstream);
    }
    upstreams
}

async fn status(app: &TestApp) -> Value {
    let response = app.get_anonymous("/status").await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// The `/status` entry of one source.
fn source<'a>(status: &'a Value, platform: &str, source: &str) -> &'a Value {
    status["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["platform"] == platform && s["source"] == source)
        .unwrap_or_else(|| panic!("no {platform} {source} in {status}"))
}

/// Waits (at most `limit`) until `/status` satisfies `ok`; returns the last one seen.
async fn status_until(app: &TestApp, limit: Duration, ok: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let now = status(app).await;
        if ok(&now) || Instant::now() > deadline {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether every source in `/status` has `verdict`.
fn all(status: &Value, verdict: &str) -> bool {
    let sources = status["sources"].as_array().unwrap();
    !sources.is_empty() && sources.iter().all(|s| s["verdict"] == verdict)
}

fn verdict_of<'a>(status: &'a Value, platform: &str, src: &str) -> &'a Value {
    &source(status, platform, src)["verdict"]
}

#[tokio::test]
async fn a_round_reads_every_source_of_every_platform() {
    let (short, photo) = (
        spawn_stand_in(Platform::ShortVideo).await,
        spawn_stand_in(Platform::PhotoShare).await,
    );
    let mut s = canary_settings(
        &short,
        &photo,
        &[sv::PUBLIC_USER.unique_id, sv::PRIVATE_USER.unique_id],
        &[
            ps::PUBLIC_USER.username,
            ps::PRIVATE_USER.username,
            ps::BUSINESS_USER.username,
        ],
    );
    let _others = the_other_platforms_on_their_stand_ins(&mut s).await;
    let app = spawn_app(s).await;
    let now = status_until(&app, Duration::from_secs(10), |s| all(s, "ok")).await;
    assert!(all(&now, "ok"), "{now}");
    assert_eq!(now["enabled"], true);
    assert_eq!(now["interval_seconds"], 1);
    assert!(now["last_round"]["ended_at"].as_u64().unwrap() > 1_700_000_000);
    let listed: Vec<(String, String)> = now["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["platform"].as_str().unwrap().into(),
                s["source"].as_str().unwrap().into(),
            )
        })
        .collect();
    let mut expected = Vec::new();
    for &p in Platform::ALL {
        for source in p.sources() {
            expected.push((p.as_str().to_owned(), (*source).to_owned()));
        }
    }
    assert_eq!(listed, expected, "every registered source, in order");
    // No account is named unless the settings say so.
    let text = now.to_string();
    for name in ["sunny", "quiet", "lumen", "harbor", "kettle"] {
        assert!(!text.contains(name), "{text}");
    }
    // Each source was asked, for each account, as its own request.
    let (sv_paths, ps_paths) = (short.paths(), photo.paths());
    for name in [sv::PUBLIC_USER.unique_id, sv::PRIVATE_USER.unique_id] {
        assert!(sv_paths.contains(&format!("/@{name}")), "{sv_paths:?}");
        assert!(
            sv_paths.contains(&format!("/embed/@{name}")),
            "{sv_paths:?}"
        );
    }
    for name in [ps::PUBLIC_USER.username, ps::BUSINESS_USER.username] {
        let json = format!("/api/v1/users/web_profile_info/?username={name}");
        assert!(ps_paths.contains(&json), "{ps_paths:?}");
        assert!(ps_paths.contains(&format!("/{name}/")), "{ps_paths:?}");
    }
    // Probes are no lookups; the canary's series are out.
    let metrics = app.get_anonymous("/metrics").await.text().await.unwrap();
    for series in [
        "profile_lookup_canary_verdict{platform=\"short-video\",source=\"embed\",verdict=\"ok\"}",
        "profile_lookup_canary_last_ok_timestamp_seconds{platform=\"photo-share\",source=\"json\"}",
        "profile_lookup_canary_round_duration_seconds",
        "profile_lookup_canary_last_round_timestamp_seconds",
        "profile_lookup_canary_interval_seconds",
        "profile_lookup_canary_rounds_total",
        // The private account on the embed, the business one on the JSON: withheld by design.
        "profile_lookup_canary_skipped_total{platform=\"short-video\",source=\"embed\",reason=\"embed_private_or_missing\"}",
        "profile_lookup_canary_skipped_total{platform=\"photo-share\",source=\"json\",reason=\"business_account\"}",
    ] {
        assert!(metrics.contains(series), "{series} is not in /metrics");
    }
}

#[tokio::test]
async fn a_moved_shape_turns_exactly_that_source_changed_within_an_interval_and_is_captured() {
    let (short, photo) = (
        spawn_stand_in(Platform::ShortVideo).await,
        spawn_stand_in(Platform::PhotoShare).await,
    );
    let name = sv::PUBLIC_USER.unique_id;
    let mut s = canary_settings(&short, &photo, &[name], &[ps::PUBLIC_USER.username]);
    let dir = capture_dir("canary-drift");
    s.upstream.capture_dir = dir.clone();
    s.validate_for_serve()
        .expect("the capture folder is usable");
    let app = spawn_app(s).await;
    let before = status_until(&app, Duration::from_secs(10), |s| all(s, "ok")).await;
    assert!(all(&before, "ok"), "{before}");

    short.drift.set(true);
    let switched = Instant::now();
    let page_changed = |s: &Value| verdict_of(s, "short-video", "page") == "changed";
    let now = status_until(&app, Duration::from_secs(10), page_changed).await;
    let took = switched.elapsed();
    assert!(page_changed(&now), "{now}");
    // The next round comes within one interval (1 s, no jitter); allow for a loaded machine.
    assert!(took < Duration::from_secs(3), "changed after {took:?}");
    assert_eq!(verdict_of(&now, "short-video", "embed"), "ok", "{now}");
    assert_eq!(verdict_of(&now, "photo-share", "json"), "ok", "{now}");
    assert_eq!(verdict_of(&now, "photo-share", "page"), "ok", "{now}");
    let reason = source(&now, "short-video", "page")["reason"]
        .as_str()
        .unwrap();
    // The drifted page renames every count: a public profile without a follower count is
    // unreadable, never an answer with `null`.
    assert!(reason.contains("follower count"), "{reason}");
    // The moved page is kept for `extract`, named after the canary account.
    assert!(
        eventually(Duration::from_secs(5), || files(&dir)
            .iter()
            .any(|f| f.contains(name) && f.ends_with(".html")))
        .await,
        "no capture of the moved page: {:?}",
        files(&dir)
    );

    // The photo-share JSON moving turns that source, and only it, `changed` too (and it is
    // captured, though a lookup reads the page after it).
    photo.drift.set(true);
    let json_changed = |s: &Value| verdict_of(s, "photo-share", "json") == "changed";
    let now = status_until(&app, Duration::from_secs(10), json_changed).await;
    assert!(json_changed(&now), "{now}");
    assert_eq!(verdict_of(&now, "photo-share", "page"), "ok", "{now}");
    assert!(
        eventually(Duration::from_secs(5), || files(&dir).iter().any(|f| f
            .contains(ps::PUBLIC_USER.username)
            && f.ends_with(".json")))
        .await,
        "no capture of the moved JSON: {:?}",
        files(&dir)
    );

    // Back to the usual shapes: one round and every source reads again.
    short.drift.set(false);
    photo.drift.set(false);
    let back = status_until(&app, Duration::from_secs(10), |s| all(s, "ok")).await;
    assert!(all(&back, "ok"), "{back}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_blocking_platform_is_blocked_never_changed() {
    // Short-video answers the "Security Check" captcha page (200) everywhere, embed included
    // (429 there); photo-share answers 429 to both of its sources.
    let short = spawn_upstream(Router::new().fallback(|request: Request| async move {
        if request.uri().path().starts_with("/embed/") {
            (StatusCode::TOO_MANY_REQUESTS, "slow down").into_response()
        } else {
            (
                [(axum::http::header::CONTENT_TYPE, "text/html")],
                sv::captcha_page(10000),
            )
                .into_response()
        }
    }))
    .await;
    let photo = spawn_upstream(Router::new().fallback(|| async {
        (StatusCode::TOO_MANY_REQUESTS, "Please wait a few minutes").into_response()
    }))
    .await;
    let mut s = support::settings(short.addr);
    s.platform_mut(Platform::PhotoShare).base_url =
        format!("http://{}", photo.addr).parse().unwrap();
    s.canary.interval_seconds = 1;
    s.canary.jitter = 0.0;
    s.canary
        .accounts
        .insert("short_video".into(), names(&[sv::PUBLIC_USER.unique_id]));
    s.canary
        .accounts
        .insert("photo_share".into(), names(&[ps::PUBLIC_USER.username]));
    let app = spawn_app(s).await;
    let now = status_until(&app, Duration::from_secs(15), |s| all(s, "blocked")).await;
    assert!(all(&now, "blocked"), "{now}");
    let reason = source(&now, "short-video", "page")["reason"]
        .as_str()
        .unwrap();
    assert_eq!(reason, "captcha_page");
    assert_eq!(source(&now, "photo-share", "json")["reason"], "http_429");
    assert_eq!(source(&now, "short-video", "page")["changed_rounds"], 0);
}

#[tokio::test]
async fn the_canary_never_changes_a_callers_cache_entry_or_quota() {
    let (short, photo) = (
        spawn_stand_in(Platform::ShortVideo).await,
        spawn_stand_in(Platform::PhotoShare).await,
    );
    let (cached, probed_only) = (sv::PUBLIC_USER.unique_id, sv::PRIVATE_USER.unique_id);
    let mut s = canary_settings(&short, &photo, &[cached, probed_only], &[]);
    // A quota that does not refill during the test: every unit spent shows.
    s.rate_limit.per_key_per_minute = 1;
    s.rate_limit.burst = 10;
    // The first round only after the caller's first lookup.
    s.canary.interval_seconds = 2;
    s.canary.jitter = 0.5;
    let app = spawn_app(s).await;
    let first = app.get(&format!("/short-video/profile/{cached}")).await;
    assert_eq!(first.status(), 200);
    assert_eq!(first.headers()["x-cache"], "miss");
    assert_eq!(remaining(&first), 9);
    let body = first.bytes().await.unwrap();

    // Two rounds, whose every probe asks the cached name and the other one upstream.
    let rounds = |s: &Value| s["last_round"].is_object();
    let before = status_until(&app, Duration::from_secs(10), rounds).await;
    let first_round = before["last_round"]["ended_at"].as_u64().unwrap();
    let later = status_until(&app, Duration::from_secs(10), |s| {
        s["last_round"]["ended_at"].as_u64().unwrap_or(0) > first_round
    })
    .await;
    assert!(all(&later, "ok"), "{later}");
    let asked = short.paths();
    assert!(
        asked
            .iter()
            .filter(|p| **p == format!("/@{cached}"))
            .count()
            >= 3,
        "{asked:?}"
    );

    // The caller's entry is as it was (the canary neither refreshed nor evicted it), the name
    // only the canary asked is not cached, and the quota lost only the caller's own units.
    let again = app.get(&format!("/short-video/profile/{cached}")).await;
    assert_eq!(again.headers()["x-cache"], "hit");
    let age: u64 = again.headers()["age"].to_str().unwrap().parse().unwrap();
    assert!(age >= 1, "the entry is the first lookup's (age {age})");
    assert_eq!(remaining(&again), 8);
    assert_eq!(again.bytes().await.unwrap(), body);
    let other = app
        .get(&format!("/short-video/profile/{probed_only}"))
        .await;
    assert_eq!(
        other.headers()["x-cache"],
        "miss",
        "the canary filled no entry"
    );
    assert_eq!(remaining(&other), 7);
}

/// The `r=` of a lookup's `RateLimit` header: units left in the caller's quota.
fn remaining(response: &reqwest::Response) -> u64 {
    let header = response.headers()["ratelimit"].to_str().unwrap();
    let r = header
        .split(';')
        .find_map(|p| p.trim().strip_prefix("r="))
        .unwrap();
    r.parse().unwrap()
}

#[tokio::test]
async fn probes_spend_the_outbound_budget_and_never_pass_it() {
    let (short, photo) = (
        spawn_stand_in(Platform::ShortVideo).await,
        spawn_stand_in(Platform::PhotoShare).await,
    );
    let mut s = canary_settings(&short, &photo, &[sv::PUBLIC_USER.unique_id], &[]);
    // One request a second, none queued: the page probe takes it, the embed probe right after
    // finds none and is skipped (our budget is no verdict about the platform).
    s.platform_mut(Platform::ShortVideo).requests_per_second = 1;
    s.platform_mut(Platform::ShortVideo).burst = 1;
    s.platform_mut(Platform::ShortVideo).max_queue_ms = 0;
    let app = spawn_app(s).await;
    let now = status_until(&app, Duration::from_secs(10), |s| {
        s["last_round"].is_object()
    })
    .await;
    assert_eq!(verdict_of(&now, "short-video", "page"), "ok", "{now}");
    assert_eq!(
        verdict_of(&now, "short-video", "embed"),
        &Value::Null,
        "{now}"
    );
    let embeds = short
        .paths()
        .iter()
        .filter(|p| p.starts_with("/embed/"))
        .count();
    assert_eq!(embeds, 0, "the embed probe went out without budget");
    let metrics = app.get_anonymous("/metrics").await.text().await.unwrap();
    assert!(metrics.contains(
        "profile_lookup_canary_skipped_total{platform=\"short-video\",source=\"embed\",reason=\"overloaded\"}"
    ));
}

#[tokio::test]
async fn a_moved_page_fails_lookups_until_the_canary_moves_it_last() {
    // Without the canary, the moved page is what every caller gets: 500 extraction_failed
    // (the page's unreadable answer never hides behind the embed).
    let (short, photo) = (
        spawn_stand_in(Platform::ShortVideo).await,
        spawn_stand_in(Platform::PhotoShare).await,
    );
    short.drift.set(true);
    let caller = sv::SMALL_USER.unique_id;
    let mut s = canary_settings(&short, &photo, &[], &[]);
    s.cache.enabled = false;
    let plain = spawn_app(s).await;
    let failed = plain.get(&format!("/short-video/profile/{caller}")).await;
    assert_eq!(failed.status(), 500);
    assert_eq!(support::problem(failed).await["code"], "extraction_failed");
}

#[tokio::test]
async fn lookups_ask_the_embed_first_while_the_page_is_changed_and_the_page_again_once_it_reads() {
    let (short, photo) = (
        spawn_stand_in(Platform::ShortVideo).await,
        spawn_stand_in(Platform::PhotoShare).await,
    );
    short.drift.set(true);
    let (canary, caller) = (sv::PUBLIC_USER.unique_id, sv::SMALL_USER.unique_id);
    let mut s = canary_settings(&short, &photo, &[canary], &[]);
    s.cache.enabled = false;
    let app = spawn_app(s).await;
    let demoted = |s: &Value| source(s, "short-video", "page")["demoted"] == true;
    let now = status_until(&app, Duration::from_secs(10), demoted).await;
    assert!(demoted(&now), "{now}");
    assert!(
        now["sources"][0]["changed_rounds"].as_u64().unwrap() >= 2,
        "{now}"
    );

    let answers_before = answers(&app, "embed").await;
    short.forget();
    let response = app.get(&format!("/short-video/profile/{caller}")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-source"], "embed");
    let asked: Vec<String> = short
        .paths()
        .into_iter()
        .filter(|p| p.contains(caller))
        .collect();
    assert_eq!(
        asked,
        [format!("/embed/@{caller}")],
        "the page was asked first"
    );
    assert_eq!(answers(&app, "embed").await, answers_before + 1);

    // The page reads again: after one ok round it is asked first again.
    short.drift.set(false);
    let restored = |s: &Value| source(s, "short-video", "page")["demoted"] == false;
    let now = status_until(&app, Duration::from_secs(10), restored).await;
    assert!(restored(&now), "{now}");
    assert_eq!(verdict_of(&now, "short-video", "page"), "ok");
    short.forget();
    let response = app.get(&format!("/short-video/profile/{caller}")).await;
    assert_eq!(response.headers()["x-source"], "page");
    let asked: Vec<String> = short
        .paths()
        .into_iter()
        .filter(|p| p.contains(caller))
        .collect();
    assert_eq!(asked, [format!("/@{caller}")]);
}

/// `profile_lookup_source_answers_total` of short-video's `source` (0 before the first).
async fn answers(app: &TestApp, source: &str) -> u64 {
    let metrics = app.get_anonymous("/metrics").await.text().await.unwrap();
    let series = format!(
        "profile_lookup_source_answers_total{{platform=\"short-video\",source=\"{source}\"}} "
    );
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&series))
        .map_or(0, |n| n.trim().parse().unwrap())
}

#[tokio::test]
async fn status_is_open_json_or_a_page_without_script_and_names_accounts_only_when_public() {
    let (short, photo) = (
        spawn_stand_in(Platform::ShortVideo).await,
        spawn_stand_in(Platform::PhotoShare).await,
    );
    let mut s = canary_settings(&short, &photo, &[sv::PUBLIC_USER.unique_id], &[]);
    s.canary.public_names = true;
    let app = spawn_app(s).await;
    let now = status_until(&app, Duration::from_secs(10), |s| all(s, "ok")).await;
    assert_eq!(
        source(&now, "short-video", "page")["account"],
        sv::PUBLIC_USER.unique_id
    );
    // No key, any method GET or HEAD; JSON unless the caller asks for HTML.
    let json = app.get_anonymous("/status").await;
    assert_eq!(json.headers()["content-type"], "application/json");
    assert_eq!(json.headers()["cache-control"], "no-store");
    let page = app
        .client
        .get(app.url("/status"))
        .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.starts_with("default-src 'none'"), "{csp}");
    let html = page.text().await.unwrap();
    assert!(html.contains("<table") && html.contains("short-video") && !html.contains("<script"));
    let head = app.client.head(app.url("/status")).send().await.unwrap();
    assert_eq!(head.status(), 200);
    let wrong_key = app
        .client
        .get(app.url("/status"))
        .bearer_auth("not-a-key")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong_key.status(), 200, "open like /healthz");
    let _ = KEY;
}

#[tokio::test]
async fn status_says_off_when_no_account_is_configured() {
    let upstream = spawn_upstream(sv::router()).await;
    let app = spawn_app(support::settings(upstream.addr)).await;
    let now = status(&app).await;
    assert_eq!(now["enabled"], false);
    assert_eq!(now["sources"], serde_json::json!([]));
    assert_eq!(now["last_round"], Value::Null);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(upstream.hits(), 0, "no round runs");
}

fn capture_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("it-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}
