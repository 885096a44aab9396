//! Freshness in a fleet of three replicas on one real `redis-server`: a stale entry is
//! answered at once by every replica (those that never saw the name read it from Redis) while
//! one refresh per name goes out for the whole fleet; a caller's `max-age=0` fetches once for
//! the fleet; `only-if-cached` is answered from the fleet's cache; a forced fetch is charged
//! on a replica that only Redis told of the stored answer.

use std::time::Duration;

use crate::cache::freshness::{fresh, lookup, lookup_with};
use crate::support::routers::FAILING;
use crate::support::ten_units;
use crate::support::test_redis;

#[tokio::test]
async fn a_background_refresh_happens_once_per_fleet() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let (apps, _) = fresh(Duration::from_millis(300), 1, 30);
    let apps = apps.on_redis(&redis.url()).replicas(3).await;
    lookup(&apps[0]).await.expect_status(200);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    // Five callers on each replica at once: A holds the stale entry in memory, B and C read it
    // from Redis; every one is answered from it, and one refresh goes out for the fleet.
    let calls: Vec<_> = (0..15)
        .map(|i| {
            let apps = apps.clone();
            tokio::spawn(async move { lookup(&apps[i % 3]).await })
        })
        .collect();
    for call in calls {
        let answer = call.await.unwrap().expect_status(200);
        let status = answer.header("cache-status");
        assert!(
            status.starts_with("profile-lookup; hit; ttl=-"),
            "stale, answered at once: {status}"
        );
        assert!(answer.age() >= 1, "Age counts from the fetch on A");
    }
    apps[0].upstream().settles_at(2).await;
    // Every replica now answers the refreshed entry.
    for app in apps.iter() {
        lookup(app)
            .await
            .expect_header("cache-status", "profile-lookup; hit; ttl=0")
            .expect_header("age", "0");
    }
    assert_eq!(apps[0].hits(), 2);
}

#[tokio::test]
async fn max_age_0_fetches_once_for_the_fleet() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let (apps, _) = fresh(Duration::from_millis(300), 600, 120);
    let apps = apps.on_redis(&redis.url()).replicas(3).await;
    lookup(&apps[0]).await.expect_status(200);
    let calls: Vec<_> = (0..30)
        .map(|i| {
            let apps = apps.clone();
            tokio::spawn(async move { lookup_with(&apps[i % 3], "max-age=0").await })
        })
        .collect();
    for call in calls {
        call.await
            .unwrap()
            .expect_status(200)
            .about("a fresh answer")
            .expect_header("age", "0");
    }
    assert_eq!(
        apps[0].hits(),
        2,
        "the first fetch and one forced for the fleet"
    );
}

#[tokio::test]
async fn only_if_cached_is_answered_from_the_fleets_cache() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let (apps, _) = fresh(Duration::ZERO, 600, 120);
    let apps = apps.on_redis(&redis.url()).replicas(3).await;
    lookup_with(&apps[1], "only-if-cached")
        .await
        .expect_status(504);
    lookup(&apps[0]).await.expect_status(200);
    // B never saw the name: Redis has it.
    let from_redis = lookup_with(&apps[1], "only-if-cached")
        .await
        .expect_status(200);
    assert!(
        from_redis
            .header("cache-status")
            .starts_with("profile-lookup; hit; ttl=")
    );
    assert_eq!(apps[0].hits(), 1);
}

#[tokio::test]
async fn a_fetch_forced_past_the_fleets_answer_is_charged_on_any_replica() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let (apps, _) = fresh(Duration::ZERO, 600, 120);
    let apps = apps
        .with(ten_units)
        .on_redis(&redis.url())
        .replicas(3)
        .await;
    lookup(&apps[0]).await.expect_quota_left(9);
    // C holds nothing in memory; the fleet's answer is what no-cache refuses: two units.
    let forced = lookup_with(&apps[2], "no-cache").await;
    let status = forced.header("cache-status");
    assert!(
        status.starts_with("profile-lookup; fwd=request"),
        "{status}"
    );
    forced.expect_quota_left(7);
    assert_eq!(apps[0].hits(), 2);
}

#[tokio::test]
async fn without_memory_a_name_is_refreshed_at_most_once_a_second_for_the_fleet() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let (apps, platform) = fresh(Duration::ZERO, 1, 30);
    let apps = apps
        .with(|s| s.cache.max_bytes = 0)
        .on_redis(&redis.url())
        .replicas(3)
        .await;
    lookup(&apps[0]).await.expect_status(200);
    // From now on every refresh fails, so the fleet's entry stays in its window and every
    // lookup finds it due for a refresh.
    platform.set(FAILING);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let before = apps[0].hits();
    let started = std::time::Instant::now();
    let mut lookups = 0;
    while started.elapsed() < Duration::from_secs(2) {
        lookup(&apps[lookups % 3])
            .await
            .about("the stale entry is served")
            .expect_status(200);
        lookups += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seconds = started.elapsed().as_secs() as usize + 1;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A refresh that meets a 5xx tries once more, then the next source once more: at most
    // four requests each.
    let sent = apps[0].hits() - before;
    assert!(
        sent <= 4 * seconds,
        "{sent} requests for {lookups} lookups in {seconds} s: more than one refresh a second"
    );
}
