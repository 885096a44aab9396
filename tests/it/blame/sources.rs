//! Sources' blame: a failing source falls through and is demoted while another reads; a throttle
//! of everything is the platform's (backoff); lost evidence restores nothing.

use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use stand_in::photo_share as ps;

use crate::support::routers::{split, status, switchable, typed};
use crate::support::test_redis::on_a_redis;
use crate::support::{PhotoShare, TestApp, shipped_photo_share_sources};

/// The photo-share stand-in with its logged-out query answering 503.
fn loggedout_failing() -> Router {
    split(
        "/api/graphql",
        status(StatusCode::SERVICE_UNAVAILABLE),
        ps::router(),
    )
}

fn standing(status: &serde_json::Value, source: &str) -> String {
    status["standings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["platform"] == "photo-share" && s["source"] == source)
        .map(|s| s["standing"].as_str().unwrap().to_owned())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_failing_source_falls_through_and_is_demoted_while_another_reads() {
    let app = TestApp::on(loggedout_failing())
        .with(|s| {
            shipped_photo_share_sources(s);
            s.cache.enabled = false;
        })
        .start()
        .await;
    for user in [ps::PUBLIC_USER, ps::CREATOR_USER, ps::RETIRED_JSON_USER] {
        app.lookup(PhotoShare, user.username)
            .await
            .expect_status(200)
            .expect_header("x-source", "page");
    }
    let status = app.answer("/status").await.json();
    assert_eq!(standing(&status, "loggedout"), "demoted", "{status}");
    // Demoted: the page is asked first.
    app.upstream().forget();
    app.lookup(PhotoShare, ps::PUBLIC_USER.username)
        .await
        .expect_status(200);
    assert_eq!(
        app.upstream().paths()[0],
        format!("/{}/", ps::PUBLIC_USER.username)
    );
}

#[tokio::test]
async fn a_throttle_of_everything_is_the_platforms_and_is_waited_out() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::a_throttle_of_everything_is_the_platforms_and_is_waited_out"
    )) {
        return;
    }
    let throttled = typed(StatusCode::TOO_MANY_REQUESTS, "text/html", "slow down");
    let (router, switch) = switchable(vec![ps::router(), throttled]);
    let app = TestApp::on(router)
        .with(|s| s.cache.enabled = false)
        .start()
        .await;
    // Both sources read (the business account's JSON hands over to its page).
    app.lookup(PhotoShare, ps::PUBLIC_USER.username)
        .await
        .expect_status(200);
    app.lookup(PhotoShare, ps::BUSINESS_USER.username)
        .await
        .expect_status(200);
    switch.set(1);
    // The first name refused by both sources while both just read other names looks like
    // that name's own refusal; the next one, refused while nothing reads any more, is the
    // platform's: waited out with backoff, as the contract says.
    app.lookup(PhotoShare, ps::PRIVATE_USER.username)
        .await
        .expect_blocked();
    app.upstream().forget();
    app.lookup(PhotoShare, ps::CREATOR_USER.username)
        .await
        .expect_blocked();
    assert!(
        app.hits() >= 3,
        "retried with backoff: {:?}",
        app.upstream().paths()
    );
    let metrics = app.metrics().await;
    let platform = "profile_lookup_blame_total{platform=\"photo-share\",party=\"platform\"";
    assert!(
        crate::support::series_sum(&metrics, platform) >= 1.0,
        "{metrics}"
    );
}

#[tokio::test]
async fn redis_emptied_restores_no_demoted_source() {
    on_a_redis(|url| async move {
        let app = TestApp::on(loggedout_failing())
            .with(|s| {
                shipped_photo_share_sources(s);
                s.cache.enabled = false;
            })
            .on_redis(&url)
            .start()
            .await;
        for user in [ps::PUBLIC_USER, ps::CREATOR_USER, ps::RETIRED_JSON_USER] {
            app.lookup(PhotoShare, user.username)
                .await
                .expect_status(200);
        }
        let status = app.answer("/status").await.json();
        assert_eq!(standing(&status, "loggedout"), "demoted", "{status}");
        // Redis restarts empty: the evidence is lost, not a read.
        let client = redis::Client::open(url.as_str()).unwrap();
        let mut conn = client.get_multiplexed_async_connection().await.unwrap();
        let () = redis::cmd("FLUSHALL").query_async(&mut conn).await.unwrap();
        tokio::time::sleep(Duration::from_millis(1_200)).await;
        // A lookup merges the fleet's (empty) evidence: still demoted.
        app.lookup(PhotoShare, ps::PUBLIC_USER.username).await;
        tokio::time::sleep(Duration::from_millis(1_200)).await;
        app.lookup(PhotoShare, ps::CREATOR_USER.username).await;
        let status = app.answer("/status").await.json();
        assert_eq!(standing(&status, "loggedout"), "demoted", "{status}");
    })
    .await;
}
