//! The short-video platform as of 2026-09, end to end on loopback through the stand-in: a
//! profile shown only to logged-in viewers (status 209002) answers 403 `profile_restricted`,
//! never cached and never stood in for by an older copy; the embed's error payload is "private
//! or missing", never a 404; the captcha page keeping its configuration in a JSON element is a
//! block; and no count is ever negative (a total wrapped into 32 bits is read as the count it
//! stood for).

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde_json::Value;
use stand_in::short_video as sv;

use crate::freshness::fresh_settings;
use crate::support::{problem, settings, spawn_app, spawn_upstream};

fn path(name: &str) -> String {
    format!("/short-video/profile/{name}")
}

#[tokio::test]
async fn a_like_count_wrapped_into_32_bits_is_answered_as_the_real_count() {
    let upstream = spawn_upstream(sv::router()).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let user = sv::WRAPPED_COUNTS_USER;
    let response = app.get(&path(user.unique_id)).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    // The page says `"heartCount": -1625611536`, with no exact spelling beside it.
    assert_eq!(body["userInfo"]["stats"]["heartCount"], 2_669_355_760_u64);
    assert_eq!(body, sv::expected_body(&user));
}

#[tokio::test]
async fn a_restricted_profile_is_403_and_never_cached() {
    let upstream = spawn_upstream(sv::router()).await;
    let app = spawn_app(settings(upstream.addr)).await;
    for _ in 0..2 {
        let response = app.get(&path(sv::RESTRICTED_NAME)).await;
        assert_eq!(response.status(), 403);
        assert!(!response.headers().contains_key("retry-after"));
        let problem = problem(response).await;
        assert_eq!(problem["code"], "profile_restricted");
        assert_eq!(
            problem["detail"],
            "the platform shows this profile only to logged-in viewers"
        );
    }
    // Each lookup asked the page again (nothing stored), and never the embed: the page said.
    assert_eq!(upstream.hits(), 2);
}

/// The upstream answers as the stand-in does.
const AS_USUAL: u8 = 0;
/// The upstream fails every request (503).
const FAILING: u8 = 1;
/// The upstream answers every profile page with status 209002.
const RESTRICTED: u8 = 2;

#[tokio::test]
async fn no_older_copy_stands_in_for_a_restricted_profile() {
    let mode = Arc::new(AtomicU8::new(AS_USUAL));
    let switch = mode.clone();
    let router = sv::router().layer(axum::middleware::from_fn(
        move |mut req: Request, next: axum::middleware::Next| {
            let mode = switch.load(Ordering::SeqCst);
            async move {
                match mode {
                    FAILING => return StatusCode::SERVICE_UNAVAILABLE.into_response(),
                    RESTRICTED => {
                        *req.uri_mut() = format!("/@{}", sv::RESTRICTED_NAME).parse().unwrap();
                    }
                    _ => {}
                }
                next.run(req).await
            }
        },
    ));
    let upstream = spawn_upstream(router).await;
    let app = spawn_app(fresh_settings(upstream.addr, 1, 0)).await;
    let name = sv::SMALL_USER.unique_id;
    assert_eq!(app.get(&path(name)).await.status(), 200);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    // The platform failing: the older copy stands in (stale-if-error)...
    mode.store(FAILING, Ordering::SeqCst);
    assert_eq!(app.get(&path(name)).await.status(), 200);
    // ...but the platform saying the profile is restricted is an answer: 403, not the copy.
    mode.store(RESTRICTED, Ordering::SeqCst);
    let response = app.get(&path(name)).await;
    assert_eq!(response.status(), 403);
    assert_eq!(problem(response).await["code"], "profile_restricted");
}

/// Behind a page the stand-in answers without state (`shell.block.sample`), an embed that
/// answers `status` with its error payload.
fn embed_error_after_a_blocked_page(status: StatusCode) -> Router {
    Router::new().fallback(move |request: Request| async move {
        let name = "shell.block.sample";
        if request.uri().path().starts_with("/embed/") {
            let page = sv::embed_error_page(name);
            return (status, [(header::CONTENT_TYPE, "text/html")], page).into_response();
        }
        let page = sv::stateless_shell_page(false);
        ([(header::CONTENT_TYPE, "text/html")], page).into_response()
    })
}

#[tokio::test]
async fn the_embeds_error_payload_is_private_or_missing_never_a_404() {
    for status in [StatusCode::BAD_REQUEST, StatusCode::OK] {
        let upstream = spawn_upstream(embed_error_after_a_blocked_page(status)).await;
        let app = spawn_app(settings(upstream.addr)).await;
        let response = app.get(&path("shell.block.sample")).await;
        assert_eq!(response.status(), 429, "embed {status}");
        assert!(response.headers().contains_key("retry-after"));
        assert_eq!(problem(response).await["code"], "upstream_blocked");
        // The embed alone: the platform keeps the answer, whatever the status.
        let mut s = settings(upstream.addr);
        s.platform_mut(profile_lookup::registry::Platform::ShortVideo)
            .sources = vec!["embed".into()];
        let app = spawn_app(s).await;
        let response = app.get(&path("shell.block.sample")).await;
        assert_eq!(response.status(), 429, "embed alone {status}");
    }
}

#[tokio::test]
async fn the_captcha_page_with_a_json_configuration_is_a_block() {
    let upstream = spawn_upstream(sv::router()).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let response = app.get(&path(sv::CAPTCHA_CONFIG_NAME)).await;
    assert_eq!(response.status(), 429);
    assert_eq!(problem(response).await["code"], "upstream_blocked");
    let metrics = app.get_anonymous("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains(
            r#"profile_lookup_upstream_blocks_total{platform="short-video",source="page",reason="captcha_page"}"#
        ),
        "{metrics}"
    );
}
