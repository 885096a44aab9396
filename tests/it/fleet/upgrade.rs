//! A rolling upgrade: the fleet's Redis holds entries an older replica wrote, before the
//! bodies gained their added keys, and a newer replica's entries with keys this version does
//! not know. Either is answered (200, from Redis, no upstream request), never a 500: the older
//! one with the added keys `null`, `false` or `[]`, the newer one without the unknown keys.

use redis::AsyncCommands;
use serde_json::{Value, json};
use stand_in::short_video as sv;

use crate::support::{ShortVideo, TestApp, test_redis};

/// A short-video body as replicas wrote it before the added keys (an invented sample).
const OLDER_BODY: &str = r#"{"userInfo":{"user":{"id":"7000000000000000003","uniqueId":"tiny.baker_7","nickname":"Tiny Baker (cached)","signature":"Sourdough every Sunday.","verified":false,"privateAccount":false,"avatarThumb":"https://avatars.short-video.example/t.jpeg","avatarMedium":"https://avatars.short-video.example/m.jpeg","avatarLarger":"https://avatars.short-video.example/l.jpeg","secUid":"MS4wLjABAAAAinventedSecUid","relation":0,"openFavorite":true},"stats":{"followerCount":4321,"followingCount":210,"heart":56789,"heartCount":56789,"videoCount":64,"diggCount":1200}}}"#;

/// `body` in the fleet's value format of today: magic, version 2, found, the fetch time
/// `header` carried, the source `page`, then the body.
fn value_with_body(header: &[u8], body: &str) -> Vec<u8> {
    let mut value = vec![b'P', 2, 1];
    value.extend_from_slice(&header[3..11]);
    value.push(4);
    value.extend_from_slice(b"page");
    value.extend_from_slice(body.as_bytes());
    value
}

#[tokio::test]
async fn entries_of_older_and_newer_replicas_are_answered_from_redis() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    // Without memory, every lookup reads the fleet's entry.
    let app = TestApp::on(sv::router())
        .on_redis(&redis.url())
        .with(|s| s.cache.max_bytes = 0)
        .start()
        .await;
    let name = sv::SMALL_USER.unique_id;
    app.lookup(ShortVideo, name).await.expect_status(200);
    let keys = redis.keys("*tiny.baker_7*:e").await;
    assert_eq!(keys.len(), 1, "{keys:?}");
    let mut conn = redis.raw().await;
    let written: Vec<u8> = conn.get(&keys[0]).await.unwrap();

    let older = value_with_body(&written, OLDER_BODY);
    let _: () = conn.set_ex(&keys[0], older, 600).await.unwrap();
    let answer = app.lookup(ShortVideo, name).await.expect_status(200);
    assert_eq!(answer.header("x-cache"), "hit");
    let body = answer.json();
    let user = &body["userInfo"]["user"];
    assert_eq!(
        user["nickname"], "Tiny Baker (cached)",
        "the older entry, not a fetch"
    );
    for key in ["bioLink", "createTime", "language"] {
        assert_eq!(user.get(key), Some(&Value::Null), "{key}");
    }
    assert_eq!(user["isOrganization"], false);
    assert!(!answer.has("profile-withheld"));

    let mut newer: Value = serde_json::from_str(OLDER_BODY).unwrap();
    newer["userInfo"]["user"]["keyOfALaterVersion"] = json!({"x": 1});
    newer["userInfo"]["user"]["language"] = json!("fr");
    let _: () = conn
        .set_ex(&keys[0], value_with_body(&written, &newer.to_string()), 600)
        .await
        .unwrap();
    let answer = app.lookup(ShortVideo, name).await.expect_status(200);
    let body = answer.json();
    assert_eq!(body["userInfo"]["user"]["language"], "fr");
    assert!(body["userInfo"]["user"].get("keyOfALaterVersion").is_none());
    assert_eq!(app.hits(), 1, "both were answered from Redis");
}
