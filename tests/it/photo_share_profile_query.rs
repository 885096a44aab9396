//! The profile query's user shape (`PolarisProfilePageContentQuery`, 2026-09) wherever it
//! reaches the service: a saved answer of the query read by `profile-lookup extract` (with or
//! without `"status":"ok"`), the JSON endpoint answering in that shape as `text/javascript`,
//! and the profile page preloading the answer. Each gives the body with every count the
//! answer holds, never `null` for a count it gives.

use std::io::Write as _;
use std::process::Command;

use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde_json::Value;
use stand_in::photo_share as ps;

use crate::support::{settings, spawn_app, spawn_upstream};

/// `profile-lookup extract photo-share FILE` on `document`: the body, or the problem.
fn extract(document: &str) -> Result<Value, Value> {
    let mut file = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
    file.write_all(document.as_bytes()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_profile-lookup"))
        .args(["extract", "photo-share"])
        .arg(file.path())
        .output()
        .unwrap();
    if out.status.success() {
        Ok(serde_json::from_slice(&out.stdout).unwrap())
    } else {
        Err(serde_json::from_slice(&out.stderr).unwrap())
    }
}

#[test]
fn extract_reads_a_saved_profile_query_answer_with_its_counts() {
    for with_status in [false, true] {
        let answer = ps::profile_query_answer(&ps::CREATOR_USER, with_status);
        let body = extract(&answer).unwrap_or_else(|p| panic!("{p}"));
        assert_eq!(
            body,
            ps::expected_body(&ps::CREATOR_USER),
            "status: {with_status}"
        );
        assert_eq!(body["edge_followed_by"]["count"], 23_456);
    }
}

#[tokio::test]
async fn the_json_endpoint_answering_the_query_shape_as_javascript_reads() {
    let upstream = spawn_upstream(Router::new().fallback(|request: Request| async move {
        if request.uri().path() != "/api/v1/users/web_profile_info/" {
            return StatusCode::NOT_FOUND.into_response();
        }
        (
            [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
            ps::profile_query_answer(&ps::CREATOR_USER, false),
        )
            .into_response()
    }))
    .await;
    assert_creator_answered(upstream.addr, "json").await;
}

#[tokio::test]
async fn a_page_preloading_the_profile_query_answers_after_the_jsons_400() {
    let upstream = spawn_upstream(ps::router()).await;
    assert_creator_answered(upstream.addr, "page").await;
}

/// The service, asked for the creator account at `upstream`, answers its whole body from
/// `source`.
async fn assert_creator_answered(upstream: std::net::SocketAddr, source: &str) {
    let app = spawn_app(settings(upstream)).await;
    let path = format!("/photo-share/profile/{}", ps::CREATOR_USER.username);
    let response = app.get(&path).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-source"], source);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body, ps::expected_body(&ps::CREATOR_USER));
}
