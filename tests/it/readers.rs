//! The readers end to end on loopback, through the stand-ins: a public profile whose follower
//! count the document gives under no known name is unreadable (500 `extraction_failed`, the
//! document captured), never a 200 with `null`; a private account's limited view still reads;
//! a user object that moved out of the known places still reads, and another user's object is
//! never taken.

use std::path::{Path, PathBuf};
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use profile_lookup::registry::Platform;
use serde_json::Value;
use stand_in::{photo_share as ps, short_video as sv};

use crate::support::{eventually, problem, settings, spawn_app, spawn_upstream};

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("it-readers-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The verdicts of the sidecars drift capture wrote in `dir`.
fn captured_verdicts(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().ends_with(".meta.json"))
                .filter_map(|e| std::fs::read(e.path()).ok())
                .filter_map(|b| serde_json::from_slice::<Value>(&b).ok())
                .map(|meta| meta["verdict"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Waits (a few seconds at most) for a capture in `dir` whose verdict says `what`.
async fn assert_captured(dir: &Path, what: &str) {
    assert!(
        eventually(Duration::from_secs(5), || captured_verdicts(dir)
            .iter()
            .any(|v| v.contains(what)))
        .await,
        "no capture says {what:?}: {:?}",
        captured_verdicts(dir)
    );
}

/// An upstream that answers every request with `page`, as HTML.
fn serving(page: String) -> Router {
    Router::new().fallback(move || {
        let page = page.clone();
        async move { ([(header::CONTENT_TYPE, "text/html")], page) }
    })
}

#[tokio::test]
async fn a_public_short_video_profile_with_unknown_count_names_is_extraction_failed_and_captured() {
    let upstream = spawn_upstream(sv::drifted_router()).await;
    let dir = temp_dir("sv-counts");
    let mut s = settings(upstream.addr);
    s.upstream.capture_dir = dir.clone();
    s.validate_for_serve().expect("a usable capture folder");
    let app = spawn_app(s).await;
    let response = app
        .get(&format!(
            "/short-video/profile/{}",
            sv::SMALL_USER.unique_id
        ))
        .await;
    assert_eq!(response.status(), 500);
    assert_eq!(response.headers()["x-source"], "page");
    assert_eq!(problem(response).await["code"], "extraction_failed");
    assert_captured(&dir, "follower count").await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_private_short_video_profile_may_lack_its_counts() {
    let private = sv::PRIVATE_USER;
    let page = sv::unknown_counts_page(&private, 40_000);
    let upstream = spawn_upstream(serving(page)).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let response = app
        .get(&format!("/short-video/profile/{}", private.unique_id))
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["userInfo"]["user"]["privateAccount"], true);
    assert!(body["userInfo"]["stats"]["followerCount"].is_null());
}

/// A photo-share upstream whose JSON answers `json` (with its status) and whose page answers
/// `page`, for the public sample.
fn photo_share_upstream(json: fn() -> (StatusCode, String), page: fn() -> String) -> Router {
    Router::new().fallback(move |request: Request| async move {
        if request.uri().path() == "/api/v1/users/web_profile_info/" {
            let (status, body) = json();
            return (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
        }
        if request.uri().path() == format!("/{}/", ps::PUBLIC_USER.username) {
            return ([(header::CONTENT_TYPE, "text/html")], page()).into_response();
        }
        StatusCode::NOT_FOUND.into_response()
    })
}

#[tokio::test]
async fn a_public_photo_share_profile_with_unknown_count_names_is_extraction_failed_and_captured() {
    let path = format!("/photo-share/profile/{}", ps::PUBLIC_USER.username);
    // The JSON refuses the account (its schema 400); the page holds the user with every count
    // renamed.
    let upstream = spawn_upstream(photo_share_upstream(
        || (StatusCode::BAD_REQUEST, ps::business_schema_json()),
        || ps::unknown_counts_page(&ps::PUBLIC_USER, 32 * 1024),
    ))
    .await;
    let dir = temp_dir("ps-page-counts");
    let mut s = settings(upstream.addr);
    s.upstream.capture_dir = dir.clone();
    s.validate_for_serve().expect("a usable capture folder");
    let app = spawn_app(s).await;
    let response = app.get(&path).await;
    assert_eq!(response.status(), 500);
    assert_eq!(response.headers()["x-source"], "page");
    assert_eq!(problem(response).await["code"], "extraction_failed");
    assert_captured(&dir, "follower count").await;
    let _ = std::fs::remove_dir_all(&dir);

    // The JSON alone, with every count renamed: unreadable and kept too.
    let upstream = spawn_upstream(photo_share_upstream(
        || {
            (
                StatusCode::OK,
                ps::unknown_counts_json(&ps::PUBLIC_USER, 16 * 1024),
            )
        },
        String::new,
    ))
    .await;
    let dir = temp_dir("ps-json-counts");
    let mut s = settings(upstream.addr);
    s.upstream.capture_dir = dir.clone();
    s.platform_mut(Platform::PhotoShare).sources = vec!["json".into()];
    s.validate_for_serve().expect("a usable capture folder");
    let app = spawn_app(s).await;
    let response = app.get(&path).await;
    assert_eq!(response.status(), 500);
    assert_eq!(problem(response).await["code"], "extraction_failed");
    assert!(
        eventually(Duration::from_secs(5), || !captured_verdicts(&dir)
            .is_empty())
        .await,
        "the JSON was not captured"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_moved_short_video_user_object_still_reads_and_no_other_user_is_taken() {
    let upstream = spawn_upstream(sv::router()).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let moved = sv::MOVED_PAGE_USER;
    let response = app
        .get(&format!("/short-video/profile/{}", moved.unique_id))
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-source"], "page");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body, sv::expected_body(&moved));

    // The same moved page asked for another name: its owner and its suggested accounts are
    // all the search finds, and none of them is taken.
    let upstream = spawn_upstream(serving(sv::moved_state_page(&moved, 40_000))).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let response = app.get("/short-video/profile/not.on.this.page").await;
    assert_eq!(response.status(), 500);
    assert_eq!(problem(response).await["code"], "extraction_failed");
}

#[tokio::test]
async fn a_moved_photo_share_user_object_still_reads_from_the_json_and_from_the_page() {
    // The JSON keeps the user under `data.account`.
    let upstream = spawn_upstream(Router::new().fallback(|| async {
        let body = ps::moved_user_json(&ps::PUBLIC_USER, 16 * 1024);
        ([(header::CONTENT_TYPE, "application/json")], body)
    }))
    .await;
    let app = spawn_app(settings(upstream.addr)).await;
    let path = format!("/photo-share/profile/{}", ps::PUBLIC_USER.username);
    let response = app.get(&path).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-source"], "json");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body, ps::expected_body(&ps::PUBLIC_USER));

    // The JSON says nothing (`"user": null`), the page keeps the user under an unknown key.
    let upstream = spawn_upstream(Router::new().fallback(|request: Request| async move {
        if request.uri().path() == "/api/v1/users/web_profile_info/" {
            let body = ps::user_null_json();
            return ([(header::CONTENT_TYPE, "application/json")], body).into_response();
        }
        let body = ps::moved_user_page(&ps::PUBLIC_USER, 64 * 1024);
        ([(header::CONTENT_TYPE, "text/html")], body).into_response()
    }))
    .await;
    let app = spawn_app(settings(upstream.addr)).await;
    let response = app.get(&path).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-source"], "page");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body, ps::expected_body(&ps::PUBLIC_USER));
}
