//! The short-video platform as of 2026-09, end to end on loopback through the stand-in: no
//! count is ever negative (a total wrapped into 32 bits is read as the count it stood for).

use serde_json::Value;
use stand_in::short_video as sv;

use crate::support::{settings, spawn_app, spawn_upstream};

#[tokio::test]
async fn a_like_count_wrapped_into_32_bits_is_answered_as_the_real_count() {
    let upstream = spawn_upstream(sv::router()).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let user = sv::WRAPPED_COUNTS_USER;
    let response = app
        .get(&format!("/short-video/profile/{}", user.unique_id))
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    // The page says `"heartCount": -1625611536`, with no exact spelling beside it.
    assert_eq!(body["userInfo"]["stats"]["heartCount"], 2_669_355_760_u64);
    assert_eq!(body, sv::expected_body(&user));
}
