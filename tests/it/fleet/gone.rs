//! "Gone stays gone" across the fleet: once the platform has told one replica that a profile is
//! gone, no replica serves its old copy when the platform later fails, including the replica
//! that cached the profile and never saw the not-found.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use stand_in::short_video as sv;

use crate::fleet::shared::{profile, replicas, sample_names};
use crate::support::test_redis;
use crate::support::{settings, spawn_upstream};

const FOUND: u8 = 0;
const GONE: u8 = 1;
const FAILING: u8 = 2;

/// The short-video stand-in, told by `mode` to answer as usual, to say every name is gone, or
/// to fail (503) every request.
async fn switchable_upstream(mode: Arc<AtomicU8>) -> crate::support::Upstream {
    spawn_upstream(sv::router().layer(axum::middleware::from_fn(
        move |mut req: axum::extract::Request, next: axum::middleware::Next| {
            let mode = mode.load(Ordering::SeqCst);
            async move {
                match mode {
                    GONE => *req.uri_mut() = "/@nobody.here.at.all".parse().unwrap(),
                    FAILING => return StatusCode::SERVICE_UNAVAILABLE.into_response(),
                    _ => {}
                }
                next.run(req).await
            }
        },
    )))
    .await
}

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
    let mode = Arc::new(AtomicU8::new(FOUND));
    let upstream = switchable_upstream(mode.clone()).await;
    let mut base = settings(upstream.addr);
    base.cache.ttl_seconds = 1;
    base.cache.negative_ttl_seconds = negative_ttl;
    base.cache.max_stale_seconds = 600;
    let apps = replicas(&redis.url(), &base).await;
    let (a, b, c) = (&apps[0], &apps[1], &apps[2]);
    let name = &sample_names()[0];
    let path = profile(name);

    // A caches the profile (in its memory and in Redis, with stale copies in both).
    assert_eq!(a.get(&path).await.status(), 200);
    // Both fresh entries expire; the platform says the name is gone, to B.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    mode.store(GONE, Ordering::SeqCst);
    assert_eq!(b.get(&path).await.status(), 404);
    // The not-found expires too; then the platform fails.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    mode.store(FAILING, Ordering::SeqCst);
    for (replica, app) in [("A (held the profile)", a), ("B", b), ("C", c)] {
        let response = app.get(&path).await;
        let status = response.status();
        let cache = response.headers().get("x-cache").cloned();
        assert_ne!(
            status, 200,
            "{replica} served the removed profile (x-cache {cache:?})"
        );
        assert!(status.is_server_error(), "{replica}: {status}");
    }

    // When the platform has the name again, every replica serves it again.
    mode.store(FOUND, Ordering::SeqCst);
    for app in [a, b, c] {
        assert_eq!(app.get(&path).await.status(), 200);
    }
}
