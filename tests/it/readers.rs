//! The readers end to end on loopback, through the stand-ins: a public profile whose follower
//! count the document gives under no known name is unreadable (500 `extraction_failed`, the
//! document captured), never a 200 with `null`; a private account's limited view still reads.

use std::path::{Path, PathBuf};
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
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
    assert!(
        eventually(Duration::from_secs(5), || captured_verdicts(&dir)
            .iter()
            .any(|v| v.contains("follower count")))
        .await,
        "{:?}",
        captured_verdicts(&dir)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_private_short_video_profile_may_lack_its_counts() {
    let private = sv::PRIVATE_USER;
    let page = sv::unknown_counts_page(&private, 40_000);
    let upstream = spawn_upstream(Router::new().fallback(move || {
        let page = page.clone();
        async move { ([(header::CONTENT_TYPE, "text/html")], page) }
    }))
    .await;
    let app = spawn_app(settings(upstream.addr)).await;
    let response = app
        .get(&format!("/short-video/profile/{}", private.unique_id))
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["userInfo"]["user"]["privateAccount"], true);
    assert!(body["userInfo"]["stats"]["followerCount"].is_null());
}

#[tokio::test]
async fn a_public_photo_share_profile_with_unknown_count_names_is_extraction_failed_and_captured() {
    let upstream = spawn_upstream(Router::new().fallback(|request: Request| async move {
        let user = ps::PUBLIC_USER;
        if request.uri().path() == "/api/v1/users/web_profile_info/" {
            let body = ps::unknown_counts_json(&user, 16 * 1024);
            return ([(header::CONTENT_TYPE, "application/json")], body).into_response();
        }
        if request.uri().path() == format!("/{}/", user.username) {
            let body = ps::unknown_counts_page(&user, 32 * 1024);
            return ([(header::CONTENT_TYPE, "text/html")], body).into_response();
        }
        StatusCode::NOT_FOUND.into_response()
    }))
    .await;
    let dir = temp_dir("ps-counts");
    let mut s = settings(upstream.addr);
    s.upstream.capture_dir = dir.clone();
    s.validate_for_serve().expect("a usable capture folder");
    let app = spawn_app(s).await;
    let response = app
        .get(&format!(
            "/photo-share/profile/{}",
            ps::PUBLIC_USER.username
        ))
        .await;
    assert_eq!(response.status(), 500);
    assert_eq!(problem(response).await["code"], "extraction_failed");
    // Both documents are kept: the JSON that moved, and the page that did too.
    assert!(
        eventually(Duration::from_secs(5), || captured_verdicts(&dir).len()
            == 2)
        .await,
        "{:?}",
        captured_verdicts(&dir)
    );
    let verdicts = captured_verdicts(&dir);
    assert!(
        verdicts.iter().any(|v| v.contains("follower count")),
        "{verdicts:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
