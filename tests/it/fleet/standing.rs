//! The sources' standing by evidence, fleet-wide: what one replica's lookups learned about a
//! source (the photo-share JSON refused for every name) orders the next replica's plans, and
//! Redis holds counts, route masks and name digests, never a name.

use std::time::{Duration, Instant};

use stand_in::photo_share as ps;

use crate::platform::fall_through::{
    NAMES, refused_json_rounds, reprobe_every_second, retired_json, standing,
};
use crate::support::{PhotoShare, TestApp, routers, test_redis};

/// And back: the JSON read again on one replica (its re-probe) restores it on the other.
#[tokio::test]
async fn a_source_one_replica_demoted_is_asked_last_by_the_others() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let (router, switch) = routers::switchable(vec![retired_json(), ps::router()]);
    let settings = |s: &mut profile_lookup::config::Settings| {
        s.cache.enabled = false;
        s.retry.base_delay_ms = 1;
        s.retry.max_delay_ms = 1;
    };
    // Replica 0 re-probes once a second; replica 1 once a minute (no canary), so it can only
    // learn of the JSON reading again from the fleet.
    let first = TestApp::on(router.clone())
        .with(settings)
        .with(reprobe_every_second)
        .on_redis(&redis.url())
        .start()
        .await;
    let second = TestApp::on(router)
        .with(settings)
        .on_redis(&redis.url())
        .start()
        .await;
    let apps = [first, second];
    refused_json_rounds(&apps[0]).await;
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
    // The JSON answers again; replica 0's re-probe reads it, and replica 1 learns it.
    switch.set(1);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && standing(&apps[0], "json").await != "preferred" {
        apps[0].lookup(PhotoShare, ps::PUBLIC_USER.username).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(standing(&apps[0], "json").await, "preferred");
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    apps[0].lookup(PhotoShare, ps::PUBLIC_USER.username).await;
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    apps[1]
        .lookup(PhotoShare, ps::PRIVATE_USER.username)
        .await
        .expect_header("x-source", "json");
    assert_eq!(standing(&apps[1], "json").await, "preferred");
}
