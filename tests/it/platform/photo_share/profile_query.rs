//! The profile query's user shape (`PolarisProfilePageContentQuery`, 2026-09) wherever it
//! reaches the service: a saved answer of the query read by `profile-lookup extract` (with or
//! without `"status":"ok"`), the JSON endpoint answering in that shape as `text/javascript`,
//! and the profile page preloading the answer. Each gives the body with every count the
//! answer holds, never `null` for a count it gives.

use axum::Router;
use axum::http::StatusCode;
use serde_json::Value;
use stand_in::photo_share as ps;

use crate::support::binary::Binary;
use crate::support::routers::{split, status, typed};
use crate::support::{PhotoShare, TestApp};

/// `profile-lookup extract photo-share FILE` on `document`: the body, or the problem.
fn extract(document: &str) -> Result<Value, Value> {
    let file = crate::support::temp_file("it-profile-query-", ".json", document.as_bytes());
    let out = Binary::new(&["extract", "photo-share"])
        .arg(file.path())
        .output();
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
    let answer = ps::profile_query_answer(&ps::CREATOR_USER, false);
    let upstream = split(
        "/api/v1/users/web_profile_info/",
        typed(StatusCode::OK, "text/javascript; charset=utf-8", answer),
        status(StatusCode::NOT_FOUND),
    );
    expect_creator_answered(upstream, "json").await;
}

#[tokio::test]
async fn a_page_preloading_the_profile_query_answers_after_the_jsons_400() {
    expect_creator_answered(ps::router(), "page").await;
}

/// The service, asked for the creator account at `upstream`, answers its whole body from
/// `source`.
async fn expect_creator_answered(upstream: Router, source: &str) {
    let app = TestApp::on(upstream).start().await;
    app.lookup(PhotoShare, ps::CREATOR_USER.username)
        .await
        .expect_profile(&ps::expected_body(&ps::CREATOR_USER))
        .expect_header("x-source", source);
}
