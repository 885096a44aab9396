//! "Gone stays gone" across the fleet: once the platform has told one replica that a profile is
//! gone, no replica serves its old copy when the platform later fails, including the replica
//! that cached the profile and never saw the not-found.

use std::time::Duration;

use crate::support::fleet::sample_names;
use crate::support::routers::{FAILING, FOUND, GONE, short_video_found_gone_failing};
use crate::support::{ShortVideo, TestApp, expires_in_a_second, test_redis};

#[tokio::test]
async fn a_profile_one_replica_saw_gone_is_served_by_no_replica_when_the_platform_fails() {
    gone_stays_gone(1).await;
}

#[tokio::test]
async fn gone_stays_gone_when_not_founds_are_not_cached() {
    gone_stays_gone(0).await;
}

/// Replica A caches a profile, B is told it is gone, the platform fails: A, B and C (which
/// never saw the name) all answer an error, never the profile; then the platform has the name
/// again and all serve it. `negative_ttl` is how long the not-found is cached.
async fn gone_stays_gone(negative_ttl: u64) {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let (router, platform) = short_video_found_gone_failing();
    let apps = TestApp::on(router)
        .with(|s| {
            expires_in_a_second(s);
            s.cache.negative_ttl_seconds = negative_ttl;
            s.cache.max_stale_seconds = 600;
        })
        .on_redis(&redis.url())
        .replicas(3)
        .await;
    let (a, b, c) = (&apps[0], &apps[1], &apps[2]);
    let name = &sample_names()[0];

    // A caches the profile (in its memory and in Redis, with stale copies in both).
    a.lookup(ShortVideo, name).await.expect_status(200);
    // Both fresh entries expire; the platform says the name is gone, to B.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    platform.set(GONE);
    b.lookup(ShortVideo, name).await.expect_status(404);
    // The not-found expires too; then the platform fails.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    platform.set(FAILING);
    for (replica, app) in [("A (held the profile)", a), ("B", b), ("C", c)] {
        let answer = app.lookup(ShortVideo, name).await;
        let status = answer.status();
        let cache = answer.headers().get("x-cache").cloned();
        assert_ne!(
            status, 200,
            "{replica} served the removed profile (x-cache {cache:?})"
        );
        assert!((500..600).contains(&status), "{replica}: {status}");
    }

    // When the platform has the name again, every replica serves it again.
    platform.set(FOUND);
    for app in [a, b, c] {
        app.lookup(ShortVideo, name).await.expect_status(200);
    }
}
