//! The sources' standing by evidence, fleet-wide: what one replica's lookups learned about a
//! source (the photo-share JSON refused for every name) orders the next replica's plans, and
//! Redis holds counts, route masks and name digests, never a name.

use std::time::Duration;

use stand_in::photo_share as ps;

use crate::platform::fall_through::{NAMES, retired_json};
use crate::support::test_redis;
use crate::support::{PhotoShare, TestApp};

#[tokio::test]
async fn a_source_one_replica_demoted_is_asked_last_by_the_others() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let apps = TestApp::on(retired_json())
        .with(|s| {
            s.cache.enabled = false;
            s.retry.base_delay_ms = 1;
            s.retry.max_delay_ms = 1;
        })
        .on_redis(&redis.url())
        .replicas(2)
        .await;
    for round in 0..4 {
        for name in NAMES {
            apps[0]
                .lookup(PhotoShare, name)
                .await
                .about(format!("{name}, round {round}"))
                .expect_header("x-source", "page");
        }
    }
    // The replica merges its evidence with the fleet's at most once a second, at a lookup.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    apps[0]
        .lookup(PhotoShare, ps::PUBLIC_USER.username)
        .await
        .expect_status(200);
    let before = apps[1].hits();
    apps[1]
        .lookup(PhotoShare, ps::PRIVATE_USER.username)
        .await
        .expect_status(200)
        .expect_header("x-source", "page");
    assert_eq!(
        apps[1].hits() - before,
        1,
        "the other replica asks the page first: {:?}",
        apps[1].upstream().paths()
    );
    let keys = redis.every_key("it:{s:*").await;
    assert!(!keys.is_empty(), "the evidence is in Redis");
    for (key, ttl, value) in keys {
        assert!(ttl > 0, "{key} expires");
        for name in NAMES {
            let raw = String::from_utf8_lossy(&value).to_string();
            assert!(!raw.contains(name) && !key.contains(name), "{key}: {raw}");
        }
    }
}
