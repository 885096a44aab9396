//! A provider's gateway on loopback ([`Mode::Gateway`]: the session id in the proxy user name
//! picks the exit the platform sees). A block retires the session, and the lookup goes on at
//! once with a new one; the gateway rests only when `upstream.gateway_block_threshold` fresh
//! sessions in a row are refused; sessions rotate by use; a session id is never shown.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::IntoResponse;

use crate::support::forward_proxy::{ForwardProxy, GATEWAY_PASSWORD, Mode, tag_of};
use crate::support::routers::both_platforms;
use crate::support::{AppBuilder, PhotoShare, ShortVideo, TestApp, series_value};

const NAME: &str = "sunny.kitchen.lab";
/// Another name of the stand-in's.
const OTHER_NAME: &str = "tiny.baker_7";

/// Requests per exit identity (session id) the upstream saw.
#[derive(Clone, Default)]
struct Exits(Arc<Mutex<HashMap<String, usize>>>);

impl Exits {
    fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    fn ids(&self) -> Vec<String> {
        self.0.lock().unwrap().keys().cloned().collect()
    }
}

/// Both stand-ins answering 429 to an exit from its `allowed + 1`-th request on (`0`: always).
fn blocking_each_exit_after(allowed: usize) -> (Router, Exits) {
    let exits = Exits::default();
    let seen = exits.clone();
    let router = both_platforms().layer(axum::middleware::from_fn(
        move |request: Request, next: axum::middleware::Next| {
            let seen = seen.clone();
            async move {
                let exit = tag_of(request.headers()).unwrap_or("-").to_owned();
                let n = {
                    let mut seen = seen.0.lock().unwrap();
                    let n = seen.entry(exit).or_default();
                    *n += 1;
                    *n
                };
                if n > allowed {
                    return (StatusCode::TOO_MANY_REQUESTS, "slow down").into_response();
                }
                next.run(request).await
            }
        },
    ));
    (router, exits)
}

/// The app through one gateway, cache off, on `router`.
fn through_gateway(router: Router, gateway: &ForwardProxy) -> AppBuilder {
    TestApp::on(router).through([gateway])
}

#[tokio::test]
async fn a_block_retires_the_session_and_the_lookup_goes_on_with_a_new_one() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::a_block_retires_the_session_and_the_lookup_goes_on_with_a_new_one"
    )) {
        return;
    }
    let gateway = ForwardProxy::start("gw", Mode::Gateway, None).await;
    let (router, exits) = blocking_each_exit_after(3);
    let app = through_gateway(router, &gateway).start().await;
    for _ in 0..12 {
        app.lookup(ShortVideo, NAME).await.expect_status(200);
    }
    // 12 answers, 3 per exit: 4 sessions answered, and each block retired one (a retired
    // session is never taken again, so each exit met one refusal).
    assert_eq!(exits.count(), 4, "{:?}", exits.0.lock().unwrap());
    assert!(exits.0.lock().unwrap().values().all(|&n| n <= 4));
    // This test's process is its own: every session the gateway saw was counted as started,
    // and the three refused ones as retired for a block.
    let metrics = app.metrics().await;
    for (series, expected) in [
        (
            "profile_lookup_gateway_sessions_started_total{platform=\"short-video\",proxy=\"0\"}",
            exits.count() as f64,
        ),
        (
            "profile_lookup_gateway_sessions_retired_total{platform=\"short-video\",proxy=\"0\",reason=\"blocked\"}",
            3.0,
        ),
        (
            "profile_lookup_proxy_info{platform=\"short-video\",proxy=\"0\",kind=\"gateway\"}",
            1.0,
        ),
    ] {
        assert_eq!(
            series_value(&metrics, series),
            Some(expected),
            "{series}\n{metrics}"
        );
    }
    // No session id and no credential in the metrics (the log: `proxies`' credentials test
    // runs the binary with a gateway).
    for secret in exits
        .ids()
        .iter()
        .map(String::as_str)
        .chain([GATEWAY_PASSWORD])
    {
        assert!(!metrics.contains(secret), "{secret} in the metrics");
    }
}

#[tokio::test]
async fn every_request_of_one_lookup_goes_through_one_session() {
    let gateway = ForwardProxy::start("gw", Mode::Gateway, None).await;
    let (router, exits) = blocking_each_exit_after(usize::MAX);
    let app = through_gateway(router, &gateway)
        .with(|s| s.upstream.session_max_lookups = 1)
        .start()
        .await;
    // Not found: the profile JSON, then the page confirms it; one session for both.
    for _ in 0..2 {
        app.lookup(PhotoShare, "no.such.person")
            .await
            .expect_status(404);
    }
    let via = app.upstream().via();
    assert_eq!(via.len(), 4, "{via:?}");
    assert_eq!(via[0], via[1]);
    assert_eq!(via[2], via[3]);
    assert_ne!(via[0], via[2], "one lookup per session here");
    assert_eq!(exits.count(), 2);
}

#[tokio::test]
async fn sessions_rotate_after_their_lookups() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::sessions_rotate_after_their_lookups"
    )) {
        return;
    }
    let gateway = ForwardProxy::start("gw", Mode::Gateway, None).await;
    let (router, exits) = blocking_each_exit_after(usize::MAX);
    let app = through_gateway(router, &gateway)
        .with(|s| s.upstream.session_max_lookups = 2)
        .start()
        .await;
    for _ in 0..6 {
        app.lookup(ShortVideo, NAME).await.expect_status(200);
    }
    assert_eq!(exits.count(), 3);
    assert!(exits.0.lock().unwrap().values().all(|&n| n == 2));
    let metrics = app.metrics().await;
    // Three sessions of two lookups each: the first two retired when used up, the third not
    // yet (it is retired when a next lookup would take it).
    let used_up = "profile_lookup_gateway_sessions_retired_total{platform=\"short-video\",proxy=\"0\",reason=\"used_up\"}";
    assert_eq!(series_value(&metrics, used_up), Some(2.0), "{metrics}");
}

#[tokio::test]
async fn a_gateway_rests_only_when_fresh_sessions_are_refused_in_a_row() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::a_gateway_rests_only_when_fresh_sessions_are_refused_in_a_row"
    )) {
        return;
    }
    let gateway = ForwardProxy::start("gw", Mode::Gateway, None).await;
    let (router, exits) = blocking_each_exit_after(0);
    let app = through_gateway(router, &gateway)
        .with(|s| s.upstream.gateway_block_threshold = 3)
        .start()
        .await;
    app.lookup(ShortVideo, NAME)
        .await
        .expect_problem(429, "upstream_blocked");
    assert_eq!(exits.count(), 3, "three fresh sessions, each refused");
    // No evidence yet placed the refusals (blame: unknown), so nothing rested; another name
    // refused on every session too is the platform's, and fresh sessions refused in a row
    // rest the gateway.
    app.lookup(ShortVideo, OTHER_NAME)
        .await
        .expect_problem(429, "upstream_blocked");
    // The gateway rests: the next lookup sends nothing.
    let hits = app.hits();
    app.lookup(ShortVideo, NAME)
        .await
        .expect_problem(429, "upstream_blocked");
    assert_eq!(app.hits(), hits);
    let metrics = app.metrics().await;
    let rests = "profile_lookup_gateway_rests_total{platform=\"short-video\",proxy=\"0\",reason=\"pool_refused\"}";
    assert_eq!(series_value(&metrics, rests), Some(1.0), "{metrics}");
}

#[tokio::test]
async fn a_gateway_that_fails_as_a_proxy_rests_and_fixed_proxies_mix_in() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::a_gateway_that_fails_as_a_proxy_rests_and_fixed_proxies_mix_in"
    )) {
        return;
    }
    let gateway = ForwardProxy::start("gw", Mode::Always407, None).await;
    let fixed = ForwardProxy::start("fixed", Mode::Forward, None).await;
    let app = TestApp::on(both_platforms())
        .through([&fixed])
        .with(|s| {
            let gateway = format!("http://u-{{session}}:p@{}", gateway.addr);
            s.upstream.proxies.insert(0, gateway);
        })
        .start()
        .await;
    for _ in 0..3 {
        app.lookup(ShortVideo, NAME).await.expect_status(200);
    }
    assert_eq!(gateway.refused_auth(), 1, "the gateway rests after its 407");
    assert_eq!(app.upstream().via(), ["fixed"; 3]);
    let metrics = app.metrics().await;
    let rests = "profile_lookup_gateway_rests_total{platform=\"short-video\",proxy=\"0\",reason=\"proxy_failed\"}";
    assert_eq!(series_value(&metrics, rests), Some(1.0), "{metrics}");
    let kind = "profile_lookup_proxy_info{platform=\"short-video\",proxy=\"1\",kind=\"fixed\"} 1";
    assert!(metrics.contains(kind), "{metrics}");
}

#[tokio::test]
async fn a_fleet_shares_a_gateway_rest_and_redis_holds_no_session_id() {
    let Some(redis) = crate::support::test_redis::start() else {
        return;
    };
    let gateway = ForwardProxy::start("gw", Mode::Gateway, None).await;
    let (router, exits) = blocking_each_exit_after(0);
    let apps = through_gateway(router, &gateway)
        .on_redis(&redis.url())
        .replicas(2)
        .await;
    let (first, second) = (&apps[0], &apps[1]);
    // The first lookup gathers the evidence (nothing rests on too little), the second's, of
    // another name, fresh sessions refused in a row rest the gateway for the fleet.
    for name in [NAME, OTHER_NAME] {
        first
            .lookup(ShortVideo, name)
            .await
            .expect_problem(429, "upstream_blocked");
    }
    let hits = first.hits();
    second
        .lookup(ShortVideo, NAME)
        .await
        .expect_problem(429, "upstream_blocked");
    assert_eq!(first.hits(), hits, "the second replica sent nothing");
    let keys = redis.every_key("*").await;
    assert!(
        keys.iter().any(|(k, _, _)| k == "it:{r:short-video}:0"),
        "{keys:?}"
    );
    for (key, _, dump) in &keys {
        let text = String::from_utf8_lossy(dump);
        for needle in exits
            .ids()
            .iter()
            .map(String::as_str)
            .chain([GATEWAY_PASSWORD, "sessid"])
        {
            assert!(!key.contains(needle) && !text.contains(needle), "{key}");
        }
    }
}
