//! The canary end to end, on loopback: every round reads every source of every platform
//! through the service's own gate; a stand-in that starts serving a moved shape turns exactly
//! that source `changed` within an interval (and its page is captured); a blocking platform is
//! `blocked`, never `changed`; the callers' cache and quota are untouched and the outbound
//! budget is spent like theirs; `GET /status` is open; and with the short-video page `changed`
//! twice, lookups are answered by the embed without the page being asked first, until the page
//! reads again.

use std::time::{Duration, Instant};

use axum::Router;
use axum::http::StatusCode;
use profile_lookup::config::Settings;
use profile_lookup::config::canary::AccountList;
use profile_lookup::platform::Platform;
use serde_json::Value;
use stand_in::drift::DriftSwitch;
use stand_in::photo_share as ps;
use stand_in::short_video as sv;

use crate::support::capture_dir::CaptureDir;
use crate::support::routers::{fixed, plain, split};
use crate::support::{AppBuilder, ShortVideo, TestApp, Upstream, spawn_upstream, ten_units};

/// A platform's stand-in with its drift switch; the upstream keeps what it was asked.
pub(crate) struct StandIn {
    pub upstream: Upstream,
    pub drift: DriftSwitch,
}

/// `platform`'s stand-in, switchable to its drifted shape.
pub(crate) async fn spawn_stand_in(platform: Platform) -> StandIn {
    let drift = DriftSwitch::default();
    let plays = stand_in::platform(platform.as_str()).expect("every platform has a stand-in");
    StandIn {
        upstream: spawn_upstream(plays.switchable(drift.clone())).await,
        drift,
    }
}

impl AsRef<Upstream> for StandIn {
    fn as_ref(&self) -> &Upstream {
        &self.upstream
    }
}

/// Both stand-ins: short-video's and photo-share's.
pub(crate) async fn stand_ins() -> (StandIn, StandIn) {
    (
        spawn_stand_in(Platform::ShortVideo).await,
        spawn_stand_in(Platform::PhotoShare).await,
    )
}

fn names(list: &[&str]) -> AccountList {
    AccountList::Names(list.iter().map(|n| (*n).to_owned()).collect())
}

/// An app with short-video at `short`, photo-share at `photo`, a round every second without
/// jitter, and these canary accounts.
fn canary_app(
    short: &impl AsRef<Upstream>,
    photo: &impl AsRef<Upstream>,
    sv_names: &[&str],
    ps_names: &[&str],
) -> AppBuilder {
    let photo = photo.as_ref();
    TestApp::on(short.as_ref()).with(|s| {
        s.platform_mut(Platform::PhotoShare).base_url =
            format!("http://{}", photo.addr).parse().unwrap();
        s.canary.interval_seconds = 1;
        s.canary.jitter = 0.0;
        s.canary
            .accounts
            .insert("short_video".into(), names(sv_names));
        s.canary
            .accounts
            .insert("photo_share".into(), names(ps_names));
    })
}

/// Points every registered platform but the two above at its own stand-in, watching the
/// accounts its samples name, so that a round covers every platform; the stand-ins serve as
/// long as the returned upstreams live.
async fn the_other_platforms_on_their_stand_ins(s: &mut Settings) -> Vec<Upstream> {
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

/// `/status` once a round has ended (at most 10 s).
async fn after_a_round(app: &TestApp) -> Value {
    status_until(app, Duration::from_secs(10), |s| {
        s["last_round"].is_object()
    })
    .await
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
    if !crate::support::own_process(concat!(
        module_path!(),
        "::a_round_reads_every_source_of_every_platform"
    )) {
        return;
    }
    let (short, photo) = stand_ins().await;
    let app = canary_app(
        &short,
        &photo,
        &[sv::PUBLIC_USER.unique_id, sv::PRIVATE_USER.unique_id],
        &[
            ps::PUBLIC_USER.username,
            ps::PRIVATE_USER.username,
            ps::BUSINESS_USER.username,
        ],
    );
    let mut s = app.settings().clone();
    let _others = the_other_platforms_on_their_stand_ins(&mut s).await;
    // Every configured source of every platform, in order (photo-share's `graphql` is
    // registered but not in the default sources).
    let mut expected = Vec::new();
    for &p in Platform::ALL {
        for source in &s.platform(p).sources {
            expected.push((p.as_str().to_owned(), source.clone()));
        }
    }
    let app = app.with(|settings| *settings = s).start().await;
    let now = status_until(&app, Duration::from_secs(10), |s| all(s, "ok")).await;
    assert!(all(&now, "ok"), "{now}");
    assert_eq!(now["enabled"], true);
    assert_eq!(now["interval_seconds"], 1);
    // Times are RFC 3339 in UTC, not Unix seconds.
    let ended = rfc3339(&now["last_round"]["ended_at"]);
    assert!(ended > "2023-11-14T22:13:20Z", "{now}");
    for source in now["sources"].as_array().unwrap() {
        assert!(rfc3339(&source["checked_at"]) <= ended, "{source}");
        rfc3339(&source["last_ok"]);
    }
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
    assert_eq!(listed, expected, "every configured source, in order");
    // No account is named unless the settings say so.
    let text = now.to_string();
    for name in ["sunny", "quiet", "lumen", "harbor", "kettle"] {
        assert!(!text.contains(name), "{text}");
    }
    // Each source was asked, for each account, as its own request.
    let (sv_paths, ps_paths) = (short.upstream.targets(), photo.upstream.targets());
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
    let metrics = app.metrics().await;
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
        // This test's process is its own: a series a round wrote holds a value above 0
        // (registered at 0 is not enough).
        let value = crate::support::series_sum(&metrics, series);
        assert!(value > 0.0, "{series} is {value} in /metrics:\n{metrics}");
    }
}

#[tokio::test]
async fn a_moved_shape_turns_exactly_that_source_changed_within_an_interval_and_is_captured() {
    let (short, photo) = stand_ins().await;
    let name = sv::PUBLIC_USER.unique_id;
    let dir = CaptureDir::new();
    let app = canary_app(&short, &photo, &[name], &[ps::PUBLIC_USER.username])
        .capturing_into(&dir)
        .start()
        .await;
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
    dir.expect_capture(name, ".html").await;

    // The photo-share JSON moving turns that source, and only it, `changed` too (and it is
    // captured, though a lookup reads the page after it).
    photo.drift.set(true);
    let json_changed = |s: &Value| verdict_of(s, "photo-share", "json") == "changed";
    let now = status_until(&app, Duration::from_secs(10), json_changed).await;
    assert!(json_changed(&now), "{now}");
    assert_eq!(verdict_of(&now, "photo-share", "page"), "ok", "{now}");
    dir.expect_capture(ps::PUBLIC_USER.username, ".json").await;

    // Back to the usual shapes: one round and every source reads again.
    short.drift.set(false);
    photo.drift.set(false);
    let back = status_until(&app, Duration::from_secs(10), |s| all(s, "ok")).await;
    assert!(all(&back, "ok"), "{back}");
}

/// A short-video platform whose pages are all the "Security Check" captcha page (200), and
/// whose embeds `embed` answers.
fn captcha_page_and(embed: Router) -> Router {
    split(
        "/embed/",
        embed,
        fixed(StatusCode::OK, sv::captcha_page(10000)),
    )
}

#[tokio::test]
async fn a_blocking_platform_is_blocked_never_changed() {
    // Short-video answers the "Security Check" captcha page (200) everywhere, embed included
    // (429 there); photo-share answers 429 to both of its sources.
    let short = spawn_upstream(captcha_page_and(plain(
        StatusCode::TOO_MANY_REQUESTS,
        "slow down",
    )))
    .await;
    let photo = spawn_upstream(plain(
        StatusCode::TOO_MANY_REQUESTS,
        "Please wait a few minutes",
    ))
    .await;
    let app = canary_app(
        &short,
        &photo,
        &[sv::PUBLIC_USER.unique_id],
        &[ps::PUBLIC_USER.username],
    )
    .start()
    .await;
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
    let (short, photo) = stand_ins().await;
    let (cached, probed_only) = (sv::PUBLIC_USER.unique_id, sv::PRIVATE_USER.unique_id);
    let app = canary_app(&short, &photo, &[cached, probed_only], &[])
        // A quota that does not refill during the test: every unit spent shows.
        .with(ten_units)
        .with(|s| {
            // The first round only after the caller's first lookup.
            s.canary.interval_seconds = 2;
            s.canary.jitter = 0.5;
        })
        .start()
        .await;
    let first = app
        .lookup(ShortVideo, cached)
        .await
        .expect_status(200)
        .expect_header("x-cache", "miss")
        .expect_quota_left(9);

    // Two rounds, whose every probe asks the cached name and the other one upstream.
    let rounds = |s: &Value| s["last_round"].is_object();
    let before = status_until(&app, Duration::from_secs(10), rounds).await;
    let first_round = rfc3339(&before["last_round"]["ended_at"]).to_owned();
    let later = status_until(&app, Duration::from_secs(10), |s| {
        s["last_round"]["ended_at"].as_str().unwrap_or("") > first_round.as_str()
    })
    .await;
    assert!(all(&later, "ok"), "{later}");
    let asked = short.upstream.targets();
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
    let again = app
        .lookup(ShortVideo, cached)
        .await
        .expect_header("x-cache", "hit");
    let age = again.age();
    assert!(age >= 1, "the entry is the first lookup's (age {age})");
    let again = again.expect_quota_left(8);
    assert_eq!(again.body(), first.body());
    app.lookup(ShortVideo, probed_only)
        .await
        .about("the canary filled no entry")
        .expect_header("x-cache", "miss")
        .expect_quota_left(7);
}

#[tokio::test]
async fn probes_spend_the_outbound_budget_and_never_pass_it() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::probes_spend_the_outbound_budget_and_never_pass_it"
    )) {
        return;
    }
    let (short, photo) = stand_ins().await;
    // One request a second, none queued: the page probe takes it, the embed probe right after
    // finds none and is skipped (our budget is no verdict about the platform).
    let app = canary_app(&short, &photo, &[sv::PUBLIC_USER.unique_id], &[])
        .with(|s| {
            let platform = s.platform_mut(Platform::ShortVideo);
            platform.requests_per_second = 1;
            platform.burst = 1;
            platform.max_queue_ms = 0;
        })
        .start()
        .await;
    let now = after_a_round(&app).await;
    assert_eq!(verdict_of(&now, "short-video", "page"), "ok", "{now}");
    assert_eq!(
        verdict_of(&now, "short-video", "embed"),
        &Value::Null,
        "{now}"
    );
    let embeds = short
        .upstream
        .paths()
        .iter()
        .filter(|p| p.starts_with("/embed/"))
        .count();
    assert_eq!(embeds, 0, "the embed probe went out without budget");
    let metrics = app.metrics().await;
    let overloaded = "profile_lookup_canary_skipped_total{platform=\"short-video\",source=\"embed\",reason=\"overloaded\"}";
    let skipped = crate::support::series_sum(&metrics, overloaded);
    assert!(skipped >= 1.0, "{skipped}: {metrics}");
}

#[tokio::test]
async fn a_moved_page_falls_through_to_the_embed_even_without_the_canary() {
    // Without the canary, the moved page is unreadable for every caller: it falls through to
    // the embed, which answers (the page is still captured, and blame demotes it once it is
    // unreadable for several names while the embed reads).
    let (short, photo) = stand_ins().await;
    short.drift.set(true);
    let app = canary_app(&short, &photo, &[], &[])
        .with(|s| s.cache.enabled = false)
        .start()
        .await;
    app.lookup(ShortVideo, sv::SMALL_USER.unique_id)
        .await
        .expect_status(200)
        .expect_header("x-source", "embed");
}

#[tokio::test]
async fn lookups_ask_the_embed_first_while_the_page_is_changed_and_the_page_again_once_it_reads() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::lookups_ask_the_embed_first_while_the_page_is_changed_and_the_page_again_once_it_reads"
    )) {
        return;
    }
    let (short, photo) = stand_ins().await;
    short.drift.set(true);
    let (canary, caller) = (sv::PUBLIC_USER.unique_id, sv::SMALL_USER.unique_id);
    let app = canary_app(&short, &photo, &[canary], &[])
        .with(|s| s.cache.enabled = false)
        .start()
        .await;
    let demoted = |s: &Value| source(s, "short-video", "page")["demoted"] == true;
    let now = status_until(&app, Duration::from_secs(10), demoted).await;
    assert!(demoted(&now), "{now}");
    assert!(
        now["sources"][0]["changed_rounds"].as_u64().unwrap() >= 2,
        "{now}"
    );

    let answers_before = answers(&app, "embed").await;
    let asked_for_caller = || -> Vec<String> {
        let asked = short.upstream.targets();
        asked.into_iter().filter(|p| p.contains(caller)).collect()
    };
    short.upstream.forget();
    app.lookup(ShortVideo, caller)
        .await
        .expect_status(200)
        .expect_header("x-source", "embed");
    assert_eq!(
        asked_for_caller(),
        [format!("/embed/@{caller}")],
        "the page was asked first"
    );
    // This test's process is its own: no other test's lookup adds embed answers here (the
    // canary's own probes may, so it is at least one more).
    assert!(answers(&app, "embed").await > answers_before);

    // The page reads again: after one ok round it is asked first again.
    short.drift.set(false);
    let restored = |s: &Value| source(s, "short-video", "page")["demoted"] == false;
    let now = status_until(&app, Duration::from_secs(10), restored).await;
    assert!(restored(&now), "{now}");
    assert_eq!(verdict_of(&now, "short-video", "page"), "ok");
    short.upstream.forget();
    app.lookup(ShortVideo, caller)
        .await
        .expect_header("x-source", "page");
    assert_eq!(asked_for_caller(), [format!("/@{caller}")]);
}

/// `profile_lookup_source_answers_total` of short-video's `source` (0 before the first).
async fn answers(app: &TestApp, source: &str) -> u64 {
    let metrics = app.metrics().await;
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
    let (short, photo) = stand_ins().await;
    let app = canary_app(&short, &photo, &[sv::PUBLIC_USER.unique_id], &[])
        .with(|s| s.canary.public_names = true)
        .start()
        .await;
    let now = status_until(&app, Duration::from_secs(10), |s| all(s, "ok")).await;
    assert_eq!(
        source(&now, "short-video", "page")["account"],
        sv::PUBLIC_USER.unique_id
    );
    // No key, any method GET or HEAD; JSON unless the caller asks for HTML.
    let json = app.get_anonymous("/status").await;
    assert_eq!(json.headers()["content-type"], "application/json");
    assert_eq!(json.headers()["cache-control"], "no-store");
    let html = [("accept", "text/html,application/xhtml+xml,*/*;q=0.8")];
    let page = app
        .get_as("/status", None, &html)
        .await
        .expect_status(200)
        .expect_header("content-type", "text/html; charset=utf-8");
    let csp = page.header("content-security-policy");
    assert!(csp.starts_with("default-src 'none'"), "{csp}");
    let html = page.text();
    assert!(html.contains("<table") && html.contains("short-video") && !html.contains("<script"));
    let head = app.client.head(app.url("/status")).send().await.unwrap();
    assert_eq!(head.status(), 200);
    app.get_as("/status", Some("not-a-key"), &[])
        .await
        .about("open like /healthz")
        .expect_status(200);
}

#[tokio::test]
async fn status_says_off_when_no_account_is_configured() {
    let app = TestApp::on(sv::router()).start().await;
    let now = status(&app).await;
    assert_eq!(now["enabled"], false);
    assert_eq!(now["sources"], serde_json::json!([]));
    assert_eq!(now["last_round"], Value::Null);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(app.hits(), 0, "no round runs");
}

#[tokio::test]
async fn six_canary_accounts_on_a_refused_page_leave_callers_embed_answers_at_200() {
    // The page refuses everyone (the captcha page), the embed serves as the stand-in does: a
    // caller's lookup hands over to the embed. Six canary accounts probe the page every round;
    // a probe of one document is not a lookup, so the callers' breaker never hears of them.
    let short = spawn_upstream(captcha_page_and(sv::router())).await;
    let photo = spawn_stand_in(Platform::PhotoShare).await;
    let accounts = [
        sv::PUBLIC_USER.unique_id,
        sv::SMALL_USER.unique_id,
        "canary.three",
        "canary.four",
        "canary.five",
        "canary.six",
    ];
    let app = canary_app(&short, &photo, &accounts, &[])
        .with(|s| {
            s.canary.accounts.remove("photo_share");
            s.breaker.failure_threshold = 5;
            s.breaker.cooldown_seconds = 30;
            s.cache.enabled = false;
        })
        .start()
        .await;
    let judged = |s: &Value| {
        verdict_of(s, "short-video", "page") == "blocked"
            && !verdict_of(s, "short-video", "embed").is_null()
    };
    let now = status_until(&app, Duration::from_secs(15), judged).await;
    assert!(judged(&now), "{now}");
    assert_eq!(verdict_of(&now, "short-video", "embed"), "ok", "{now}");
    for _ in 0..3 {
        app.lookup(ShortVideo, sv::SMALL_USER.unique_id)
            .await
            .expect_status(200)
            .expect_header("x-source", "embed");
    }
}

/// A `/status` time: RFC 3339 in UTC to the second (`2026-11-28T06:45:12Z`), which sorts as
/// text.
#[track_caller]
fn rfc3339(value: &Value) -> &str {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("not a time: {value}"));
    let shape = text.len() == 20
        && text.char_indices().all(|(i, c)| match i {
            4 | 7 => c == '-',
            10 => c == 'T',
            13 | 16 => c == ':',
            19 => c == 'Z',
            _ => c.is_ascii_digit(),
        });
    assert!(shape, "not RFC 3339 UTC: {text}");
    text
}
