//! The readers end to end on loopback, through the stand-ins: a public profile whose follower
//! count the document gives under no known name is unreadable (500 `extraction_failed`, the
//! document captured), never a 200 with `null`; a private account's limited view still reads;
//! a user object that moved out of the known places still reads, and another user's object is
//! never taken.

use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use profile_lookup::registry::Platform;
use stand_in::{photo_share as ps, short_video as sv};

use crate::support::capture_dir::CaptureDir;
use crate::support::routers::{fixed, split, typed};
use crate::support::{PhotoShare, ShortVideo, TestApp, eventually};

/// The photo-share JSON's path prefix, which [`split`] sends apart from the page.
const PS_JSON: &str = "/api/";

/// Answers every request with `body` as JSON, with `status`.
fn json(status: StatusCode, body: String) -> Router {
    typed(status, "application/json", body)
}

#[tokio::test]
async fn a_public_short_video_profile_with_unknown_count_names_is_unreadable_captured_and_falls_through()
 {
    let dir = CaptureDir::new();
    let app = TestApp::on(sv::drifted_router())
        .capturing_into(&dir)
        .start()
        .await;
    // The page is unreadable (never a 200 with `null`): it is captured, and the embed answers.
    app.lookup(ShortVideo, sv::SMALL_USER.unique_id)
        .await
        .expect_status(200)
        .expect_header("x-source", "embed");
    dir.expect_verdict("follower count").await;
}

#[tokio::test]
async fn a_private_short_video_profile_may_lack_its_counts() {
    let private = sv::PRIVATE_USER;
    let page = sv::unknown_counts_page(&private, 40_000);
    let app = TestApp::on(fixed(StatusCode::OK, page)).start().await;
    let body = app
        .lookup(ShortVideo, private.unique_id)
        .await
        .expect_status(200)
        .json();
    assert_eq!(body["userInfo"]["user"]["privateAccount"], true);
    assert!(body["userInfo"]["stats"]["followerCount"].is_null());
}

#[tokio::test]
async fn a_public_photo_share_profile_with_unknown_count_names_is_extraction_failed_and_captured() {
    let name = ps::PUBLIC_USER.username;
    // The JSON refuses the account (its schema 400); the page holds the user with every count
    // renamed.
    let dir = CaptureDir::new();
    let upstream = split(
        PS_JSON,
        json(StatusCode::BAD_REQUEST, ps::business_schema_json()),
        fixed(
            StatusCode::OK,
            ps::unknown_counts_page(&ps::PUBLIC_USER, 32 * 1024),
        ),
    );
    let app = TestApp::on(upstream).capturing_into(&dir).start().await;
    app.lookup(PhotoShare, name)
        .await
        .expect_problem(500, "extraction_failed")
        .expect_header("x-source", "page");
    dir.expect_verdict("follower count").await;

    // The JSON alone, with every count renamed: unreadable and kept too.
    let dir = CaptureDir::new();
    let unknown = ps::unknown_counts_json(&ps::PUBLIC_USER, 16 * 1024);
    let app = TestApp::on(json(StatusCode::OK, unknown))
        .capturing_into(&dir)
        .with(|s| s.platform_mut(Platform::PhotoShare).sources = vec!["json".into()])
        .start()
        .await;
    app.lookup(PhotoShare, name)
        .await
        .expect_problem(500, "extraction_failed");
    assert!(
        eventually(Duration::from_secs(5), || !dir.sidecars().is_empty()).await,
        "the JSON was not captured"
    );
}

#[tokio::test]
async fn a_moved_short_video_user_object_still_reads_and_no_other_user_is_taken() {
    let moved = sv::MOVED_PAGE_USER;
    let app = TestApp::on(sv::router()).start().await;
    app.lookup(ShortVideo, moved.unique_id)
        .await
        .expect_profile(&sv::expected_body(&moved))
        .expect_header("x-source", "page");

    // The same moved page asked for another name: its owner and its suggested accounts are
    // all the search finds, and none of them is taken.
    let page = sv::moved_state_page(&moved, 40_000);
    let app = TestApp::on(fixed(StatusCode::OK, page)).start().await;
    app.lookup(ShortVideo, "not.on.this.page")
        .await
        .expect_problem(500, "extraction_failed");
}

#[tokio::test]
async fn a_moved_photo_share_user_object_still_reads_from_the_json_and_from_the_page() {
    let user = ps::PUBLIC_USER;
    // The JSON keeps the user under `data.account`.
    let moved = ps::moved_user_json(&user, 16 * 1024);
    let app = TestApp::on(json(StatusCode::OK, moved)).start().await;
    app.lookup(PhotoShare, user.username)
        .await
        .expect_profile(&ps::expected_body(&user))
        .expect_header("x-source", "json");

    // The JSON says nothing (`"user": null`), the page keeps the user under an unknown key.
    let upstream = split(
        PS_JSON,
        json(StatusCode::OK, ps::user_null_json()),
        fixed(StatusCode::OK, ps::moved_user_page(&user, 64 * 1024)),
    );
    let app = TestApp::on(upstream).start().await;
    app.lookup(PhotoShare, user.username)
        .await
        .expect_profile(&ps::expected_body(&user))
        .expect_header("x-source", "page");
}
