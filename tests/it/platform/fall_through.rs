//! Every source falls through: a source refused on every route left hands the lookup to the
//! platform's next source within the same deadline, and a refusal every route gets for every
//! name (the photo-share JSON endpoint retired for clients without a session, 2026-09) is the
//! source's: it rests no proxy once the evidence says so, and the source is then demoted.

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use profile_lookup::config::Settings;
use profile_lookup::config::canary::AccountList;
use stand_in::photo_share as ps;

use crate::support::forward_proxy::ForwardProxy;
use crate::support::{PhotoShare, TestApp, routers};

/// The photo-share stand-in whose JSON endpoint refuses every name (429 and an HTML "Please
/// wait" page); the page still answers.
pub(crate) fn retired_json() -> axum::Router {
    let refused = routers::typed(
        StatusCode::TOO_MANY_REQUESTS,
        "text/html",
        ps::PLEASE_WAIT_HTML,
    );
    routers::split("/api/", refused, ps::router())
}

/// The pages the stand-in serves, by name.
pub(crate) const NAMES: [&str; 3] = [
    ps::PUBLIC_USER.username,
    ps::PRIVATE_USER.username,
    ps::BUSINESS_USER.username,
];

/// The demo's line: the stand-in's account whose JSON endpoint is retired is answered by the
/// page, with its profile.
#[tokio::test]
async fn the_stand_ins_retired_json_account_is_answered_by_the_page() {
    let app = TestApp::on(ps::router()).start().await;
    app.lookup(PhotoShare, ps::RETIRED_JSON_USER.username)
        .await
        .expect_status(200)
        .expect_header("x-source", "page")
        .expect_profile(&ps::expected_body(&ps::RETIRED_JSON_USER));
}

#[tokio::test]
async fn a_json_endpoint_refused_on_the_direct_route_falls_through_to_the_page() {
    let app = TestApp::on(retired_json())
        .with(|s| {
            s.retry.base_delay_ms = 10;
            s.retry.max_delay_ms = 10;
        })
        .start()
        .await;
    for name in NAMES {
        app.lookup(PhotoShare, name)
            .await
            .about(name)
            .expect_status(200)
            .expect_header("x-source", "page");
    }
}

#[tokio::test]
async fn a_source_wide_refusal_rests_no_proxy_and_the_page_answers_through_every_one() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::a_source_wide_refusal_rests_no_proxy_and_the_page_answers_through_every_one"
    )) {
        return;
    }
    let p = ForwardProxy::start_each(&["a", "b", "c"]).await;
    let app = TestApp::on(retired_json())
        .through(&p)
        .with(|s| s.upstream.proxy_cooldown_seconds = 600)
        .start()
        .await;
    // The first lookup learns the refusal on every route (resting the routes it leaves), and
    // the page answers on the last one.
    refused_json_rounds(&app).await;
    // Once the refusal is known to be the source's, the rests it caused are lifted and no
    // proxy rests for it: the later lookups take the proxies in turn again.
    let via = app.upstream().via();
    let late: std::collections::BTreeSet<&str> =
        via[via.len() - 6..].iter().map(String::as_str).collect();
    assert_eq!(late.len(), 3, "every proxy in use again: {via:?}");
    // Demoted after 10 refusals over 3 names while the page read: the page is asked first,
    // one request per lookup.
    let before = app.hits();
    for name in NAMES {
        app.lookup(PhotoShare, name).await.expect_status(200);
    }
    assert_eq!(app.hits() - before, 3, "{:?}", app.upstream().paths());
    // `/status` and the metric say so.
    let status = app.answer("/status").await.json();
    let json = status["standings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["platform"] == "photo-share" && s["source"] == "json")
        .cloned()
        .unwrap();
    assert_eq!(json["standing"], "demoted", "{status}");
    assert!(json["demoted_seconds"].is_u64(), "{json}");
    let metrics = app.metrics().await;
    let demoted = "profile_lookup_source_standing{platform=\"photo-share\",source=\"json\",standing=\"demoted\"}";
    assert_eq!(
        crate::support::series_value(&metrics, demoted),
        Some(1.0),
        "{metrics}"
    );
}

/// A canary on (its rounds probe another platform), so that a demoted source is re-probed
/// once a second.
pub(crate) fn reprobe_every_second(s: &mut Settings) {
    s.canary.interval_seconds = 1;
    s.canary.accounts.insert(
        "short_video".into(),
        AccountList::Names(vec!["sunny.kitchen.lab".into()]),
    );
}

/// Four rounds of lookups of [`NAMES`] while the JSON refuses them: each answered 200 by the
/// page (10 refusals over 3 names and more: the JSON is demoted).
pub(crate) async fn refused_json_rounds(app: &TestApp) {
    for round in 0..4 {
        for name in NAMES {
            app.lookup(PhotoShare, name)
                .await
                .about(format!("{name}, round {round}"))
                .expect_status(200)
                .expect_header("x-source", "page");
        }
    }
}

/// The standing of source `source` of photo-share in `/status`.
pub(crate) async fn standing(app: &TestApp, source: &str) -> String {
    let status = app.answer("/status").await.json();
    status["standings"]
        .as_array()
        .and_then(|all| {
            all.iter()
                .find(|s| s["platform"] == "photo-share" && s["source"] == source)
        })
        .and_then(|s| s["standing"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// The switch back: a demoted JSON endpoint is re-probed (asked first by one lookup per
/// re-probe interval, the canary's: 1 s here) and restored as soon as it reads.
#[tokio::test]
async fn a_demoted_source_is_restored_by_its_first_read_on_a_reprobe() {
    let (router, switch) = routers::switchable(vec![retired_json(), ps::router()]);
    let app = TestApp::on(router)
        .with(|s| {
            s.cache.enabled = false;
            s.retry.base_delay_ms = 1;
            s.retry.max_delay_ms = 1;
            reprobe_every_second(s);
        })
        .start()
        .await;
    refused_json_rounds(&app).await;
    assert_eq!(standing(&app, "json").await, "demoted");
    switch.set(1);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut sources = Vec::new();
    while Instant::now() < deadline {
        let answer = app.lookup(PhotoShare, ps::PUBLIC_USER.username).await;
        sources.push(answer.header("x-source").to_owned());
        if sources.last().is_some_and(|s| s == "json") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        sources.last().map(String::as_str),
        Some("json"),
        "{sources:?}"
    );
    assert!(
        sources.len() > 1,
        "not before the re-probe is due: {sources:?}"
    );
    assert_eq!(standing(&app, "json").await, "preferred");
    app.lookup(PhotoShare, ps::PRIVATE_USER.username)
        .await
        .expect_header("x-source", "json");
}

/// The retirement scenario of `scripts/sources.sh` at a small scale: three proxies, lookups
/// four at a time; the JSON endpoint retired mid-run, then restored. Every lookup answers 200;
/// once the refusal is known to be the source's no proxy rests (all three carry lookups), the
/// JSON is demoted and a lookup costs one request; restored, it is read again after one
/// re-probe.
#[tokio::test]
async fn the_retirement_scenario_at_a_small_scale() {
    let p = ForwardProxy::start_each(&["a", "b", "c"]).await;
    let (router, switch) = routers::switchable(vec![ps::router(), retired_json()]);
    let app = TestApp::on(router)
        .through(&p)
        .with(|s| {
            s.upstream.proxy_cooldown_seconds = 600;
            reprobe_every_second(s);
        })
        .start()
        .await;
    let app = std::sync::Arc::new(app);
    let batch = |names: [&'static str; 4]| {
        let app = app.clone();
        async move {
            let calls = names.map(|name| {
                let app = app.clone();
                tokio::spawn(async move { app.lookup(PhotoShare, name).await })
            });
            let mut answers = Vec::new();
            for call in calls {
                answers.push(call.await.expect("the lookup ran"));
            }
            answers
        }
    };
    let names = [NAMES[0], NAMES[1], NAMES[2], ps::CREATOR_USER.username];
    for answer in batch(names).await {
        answer.expect_status(200);
    }
    switch.set(1);
    let mut sources = Vec::new();
    for _ in 0..8 {
        for answer in batch(names).await {
            sources.push(answer.expect_status(200).header("x-source").to_owned());
        }
    }
    assert!(sources.iter().all(|s| s == "page"), "{sources:?}");
    assert_eq!(standing(&app, "json").await, "demoted");
    // Demoted: one request per lookup (and one more per re-probe, one a second here), through
    // every proxy (none rests).
    let (before, via_before) = (app.hits(), app.upstream().via().len());
    let started = Instant::now();
    for _ in 0..3 {
        for answer in batch(names).await {
            answer.expect_status(200);
        }
    }
    let seconds = started.elapsed().as_secs() as usize + 1;
    let sent = app.hits() - before;
    // Beside the 12 lookups, each second may add one re-probe of the JSON and the canary's
    // round (its short-video account's page and embed, on the same loopback upstream).
    assert!(
        (12..=12 + 3 * seconds).contains(&sent),
        "one request per lookup, a re-probe and a canary round a second at most over {seconds} s: {sent}"
    );
    let via = app.upstream().via();
    let used: std::collections::BTreeSet<&str> =
        via[via_before..].iter().map(String::as_str).collect();
    assert_eq!(used.len(), 3, "no proxy rests: {via:?}");
    // Restored: a re-probe (one per second here) reads the JSON again.
    switch.set(0);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && standing(&app, "json").await != "preferred" {
        batch(names).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(standing(&app, "json").await, "preferred");
    app.lookup(PhotoShare, NAMES[0])
        .await
        .expect_header("x-source", "json");
}
