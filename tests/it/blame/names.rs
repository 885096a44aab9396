//! The name's blame: an account the platform shows only to logged-in viewers (a login wall for
//! this name alone, on every route) is answered 403 for itself, and rests nothing.

use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use stand_in::short_video as sv;
use tower::ServiceExt;

use crate::support::forward_proxy::ForwardProxy;
use crate::support::{ShortVideo, TestApp};

/// The age-gated account.
const GATED: &str = "gated.grown.up";

/// The short-video stand-in, but `GATED`'s page and embed redirect to the login page.
fn with_a_gated_name() -> Router {
    Router::new().fallback(|request: Request| async move {
        if request.uri().path().contains(GATED) {
            let login = format!("/login?redirect_url=%2F%40{GATED}");
            return (StatusCode::FOUND, [(header::LOCATION, login)]).into_response();
        }
        sv::router().oneshot(request).await.into_response()
    })
}

fn resting(metrics: &str, proxy: &str) -> bool {
    metrics.contains(&format!(
        "profile_lookup_proxy_resting{{platform=\"short-video\",proxy=\"{proxy}\"}} 1"
    ))
}

#[tokio::test]
async fn one_caller_of_an_age_gated_name_rests_no_proxy_and_takes_nothing_down() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::one_caller_of_an_age_gated_name_rests_no_proxy_and_takes_nothing_down"
    )) {
        return;
    }
    let proxies = ForwardProxy::start_each(&["a", "b", "c"]).await;
    let app = TestApp::on(with_a_gated_name())
        .through(&proxies)
        .with(|s| {
            s.cache.enabled = false;
            s.upstream.proxy_cooldown_seconds = 300;
        })
        .start()
        .await;
    // Ordinary names read through every proxy.
    for user in [sv::PUBLIC_USER, sv::SMALL_USER, sv::PRIVATE_USER] {
        app.lookup(ShortVideo, user.unique_id)
            .await
            .expect_status(200);
    }
    // The gated name: its first lookup compares with reads from before it only (429 at most,
    // and no rest); once others read where it was refused, it is the name's: 403.
    let first = app.lookup(ShortVideo, GATED).await;
    assert!(matches!(first.status(), 403 | 429), "{}", first.text());
    for user in [sv::PUBLIC_USER, sv::SMALL_USER, sv::PRIVATE_USER] {
        app.lookup(ShortVideo, user.unique_id)
            .await
            .expect_status(200);
    }
    app.lookup(ShortVideo, GATED)
        .await
        .expect_problem(403, "profile_restricted");
    let metrics = app.metrics().await;
    for proxy in ["0", "1", "2"] {
        assert!(!resting(&metrics, proxy), "proxy {proxy} rests: {metrics}");
    }
    let name = "profile_lookup_blame_total{platform=\"short-video\",party=\"name\"";
    assert!(
        crate::support::series_sum(&metrics, name) >= 1.0,
        "{metrics}"
    );
    // Every other caller is still answered, through every proxy.
    let before = app.upstream().via().len();
    for user in [sv::PUBLIC_USER, sv::SMALL_USER, sv::PRIVATE_USER] {
        app.lookup(ShortVideo, user.unique_id)
            .await
            .expect_status(200);
    }
    let used: std::collections::BTreeSet<String> =
        app.upstream().via()[before..].iter().cloned().collect();
    assert_eq!(used.len(), 3, "every proxy in use: {used:?}");
    // Asking again costs no request: the answer is remembered for the negative TTL.
    let hits = app.hits();
    app.lookup(ShortVideo, GATED)
        .await
        .expect_problem(403, "profile_restricted");
    assert_eq!(app.hits(), hits, "remembered, not asked");
}

#[tokio::test]
async fn on_the_direct_route_an_age_gated_name_never_opens_the_breaker() {
    let app = TestApp::on(with_a_gated_name())
        .with(|s| {
            s.cache.enabled = false;
            s.cache.negative_ttl_seconds = 0;
            s.breaker.failure_threshold = 3;
            s.breaker.cooldown_seconds = 60;
        })
        .start()
        .await;
    // Both sources read other names (the embed for a name whose page is a shell).
    app.lookup(ShortVideo, sv::EMBED_ONLY_USER.unique_id)
        .await
        .expect_status(200);
    app.lookup(ShortVideo, sv::PUBLIC_USER.unique_id)
        .await
        .expect_status(200);
    // Callers keep asking for other names between the gated one's lookups (both sources
    // read them), which is what tells the gated name's refusals from the platform's.
    for _ in 0..5 {
        let answer = app.lookup(ShortVideo, GATED).await;
        assert!(matches!(answer.status(), 403 | 429), "{}", answer.text());
        app.lookup(ShortVideo, sv::EMBED_ONLY_USER.unique_id)
            .await
            .expect_status(200);
        app.lookup(ShortVideo, sv::PUBLIC_USER.unique_id)
            .await
            .expect_status(200);
    }
    // Once others read since its first refusals, the gated name is its own: 403.
    app.lookup(ShortVideo, GATED)
        .await
        .expect_problem(403, "profile_restricted");
    // The breaker counted none of them: everyone else is still answered.
    app.lookup(ShortVideo, sv::SMALL_USER.unique_id)
        .await
        .expect_status(200);
}
