//! The short-video platform as of 2026-09, end to end on loopback through the stand-in: a
//! profile shown only to logged-in viewers (status 209002) answers 403 `profile_restricted`,
//! never cached and never stood in for by an older copy; the embed's error payload is "private
//! or missing", never a 404; the captcha page keeping its configuration in a JSON element is a
//! block; and no count is ever negative (a total wrapped into 32 bits is read as the count it
//! stood for).

use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use profile_lookup::registry::Platform;
use stand_in::short_video as sv;

use crate::support::routers::{fixed, split, status, switchable};
use crate::support::{ShortVideo, TestApp};

#[tokio::test]
async fn a_like_count_wrapped_into_32_bits_is_answered_as_the_real_count() {
    let app = TestApp::on(sv::router()).start().await;
    let user = sv::WRAPPED_COUNTS_USER;
    let body = app
        .lookup(ShortVideo, user.unique_id)
        .await
        .expect_profile(&sv::expected_body(&user))
        .json();
    // The page says `"heartCount": -1625611536`, with no exact spelling beside it.
    assert_eq!(body["userInfo"]["stats"]["heartCount"], 2_669_355_760_u64);
}

#[tokio::test]
async fn a_restricted_profile_is_403_and_never_cached() {
    let app = TestApp::on(sv::router()).start().await;
    for _ in 0..2 {
        let answer = app
            .lookup(ShortVideo, sv::RESTRICTED_NAME)
            .await
            .expect_problem(403, "profile_restricted");
        assert!(!answer.has("retry-after"));
        assert_eq!(
            answer.problem()["detail"],
            "the platform shows this profile only to logged-in viewers"
        );
    }
    // Each lookup asked the page again (nothing stored), and never the embed: the page said.
    assert_eq!(app.hits(), 2);
}

/// [`switchable`] position: the stand-in answers as usual.
const AS_USUAL: usize = 0;
/// The platform fails every request (503).
const FAILING: usize = 1;
/// The platform answers every profile page with status 209002.
const RESTRICTED: usize = 2;

#[tokio::test]
async fn no_older_copy_stands_in_for_a_restricted_profile() {
    let (router, platform) = switchable(vec![
        sv::router(),
        status(StatusCode::SERVICE_UNAVAILABLE),
        fixed(StatusCode::OK, sv::restricted_page(sv::RESTRICTED_NAME)),
    ]);
    let app = TestApp::on(router)
        .with(|s| {
            s.cache.ttl_seconds = 1;
            s.cache.revalidate_seconds = profile_lookup::config::Revalidate::Seconds(0);
            s.cache.max_stale_seconds = 600;
        })
        .start()
        .await;
    let name = sv::SMALL_USER.unique_id;
    platform.set(AS_USUAL);
    app.lookup(ShortVideo, name).await.expect_status(200);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    // The platform failing: the older copy stands in (stale-if-error)...
    platform.set(FAILING);
    app.lookup(ShortVideo, name).await.expect_status(200);
    // ...but the platform saying the profile is restricted is an answer: 403, not the copy.
    platform.set(RESTRICTED);
    app.lookup(ShortVideo, name)
        .await
        .expect_problem(403, "profile_restricted");
}

/// Behind a page the stand-in answers without state, an embed that answers `status` with its
/// error payload.
fn embed_error_after_a_blocked_page(status: StatusCode) -> Router {
    split(
        "/embed/",
        fixed(status, sv::embed_error_page(SHELL_NAME)),
        fixed(StatusCode::OK, sv::stateless_shell_page(false)),
    )
}

/// The name the stateless-shell tests look up.
const SHELL_NAME: &str = "shell.block.sample";

#[tokio::test]
async fn the_embeds_error_payload_is_private_or_missing_never_a_404() {
    for status in [StatusCode::BAD_REQUEST, StatusCode::OK] {
        let app = TestApp::on(embed_error_after_a_blocked_page(status))
            .start()
            .await;
        app.lookup(ShortVideo, SHELL_NAME)
            .await
            .about(format!("embed {status}"))
            .expect_blocked();
        // The embed alone: the platform keeps the answer, whatever the status.
        let app = TestApp::on(app.upstream())
            .with(|s| s.platform_mut(Platform::ShortVideo).sources = vec!["embed".into()])
            .start()
            .await;
        app.lookup(ShortVideo, SHELL_NAME)
            .await
            .about(format!("embed alone {status}"))
            .expect_status(429);
    }
}

#[tokio::test]
async fn the_captcha_page_with_a_json_configuration_is_a_block() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::the_captcha_page_with_a_json_configuration_is_a_block"
    )) {
        return;
    }
    let app = TestApp::on(sv::router()).start().await;
    app.lookup(ShortVideo, sv::CAPTCHA_CONFIG_NAME)
        .await
        .expect_problem(429, "upstream_blocked");
    let metrics = app.metrics().await;
    let series = r#"profile_lookup_upstream_blocks_total{platform="short-video",source="page",reason="captcha_page"}"#;
    assert!(
        crate::support::series_sum(&metrics, series) >= 1.0,
        "{metrics}"
    );
}
