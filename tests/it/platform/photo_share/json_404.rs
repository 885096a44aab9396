//! The JSON endpoint's 404 is a verdict on the user only in the endpoint's own JSON: a 404
//! whose body is a login page, the app shell or nothing is the platform refusing us (a block,
//! 429 `upstream_blocked`). It is never cached as a not-found, and the stale copy of a profile
//! that exists survives it.

use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use stand_in::photo_share as ps;

use crate::support::routers::{always, fixed, split, switchable};
use crate::support::{self, PhotoShare, TestApp};

/// A profile the stand-in has.
const NAME: &str = ps::PUBLIC_USER.username;
/// The switch's positions: the stand-in as usual, or refusing with 404s.
const FOUND: usize = 0;
const REFUSING: usize = 1;

/// 404s that are not the endpoint's JSON: (what they are, the body), each `text/html`.
fn refusals() -> [(&'static str, String); 3] {
    [
        ("a login page", ps::login_page()),
        ("the app shell", ps::shell_page(NAME)),
        ("an empty body", String::new()),
    ]
}

/// The platform answering `body` with 404 to every request, the JSON's and the page's.
fn refusing(body: &str) -> Router {
    fixed(StatusCode::NOT_FOUND, body.to_owned())
}

#[tokio::test]
async fn a_json_404_that_is_not_json_is_a_block_and_nothing_is_cached_as_gone() {
    for (what, body) in refusals() {
        let (router, platform) = switchable(vec![ps::router(), refusing(&body)]);
        platform.set(REFUSING);
        let app = TestApp::on(router).start().await;
        app.lookup(PhotoShare, NAME)
            .await
            .about(what)
            .expect_blocked();
        // The platform answers again: the profile, not a remembered not-found.
        platform.set(FOUND);
        app.lookup(PhotoShare, NAME)
            .await
            .about(what)
            .expect_status(200)
            .expect_header("x-source", "json");
    }
}

#[tokio::test]
async fn the_stale_copy_of_a_profile_survives_a_json_404_that_is_not_json() {
    for (what, body) in refusals() {
        let (router, platform) = switchable(vec![ps::router(), refusing(&body)]);
        let app = TestApp::on(router)
            .with(support::stale_after_a_second)
            .start()
            .await;
        let fresh = app.lookup(PhotoShare, NAME).await.expect_status(200).json();
        platform.set(REFUSING);
        tokio::time::sleep(Duration::from_millis(1_100)).await;
        let stale = app
            .lookup(PhotoShare, NAME)
            .await
            .about(what)
            .expect_status(200)
            .expect_header("x-cache", "stale");
        assert_eq!(stale.json(), fresh, "{what}");
        // Still there for the next failure.
        app.lookup(PhotoShare, NAME)
            .await
            .about(what)
            .expect_status(200)
            .expect_header("x-cache", "stale");
    }
}

#[tokio::test]
async fn the_endpoints_own_json_404_is_still_not_found() {
    let json_404 = always(|| {
        (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
            r#"{"message":"User not found","status":"fail"}"#,
        )
            .into_response()
    });
    let app = TestApp::on(split("/api/", json_404, ps::router()))
        .start()
        .await;
    app.lookup(PhotoShare, "no.such.person")
        .await
        .expect_problem(404, "profile_not_found")
        .expect_header("x-source", "json");
}
