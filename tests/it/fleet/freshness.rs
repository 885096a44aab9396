//! Freshness in a fleet of three replicas on one real `redis-server`: a stale entry is
//! answered at once by every replica (those that never saw the name read it from Redis) while
//! one refresh per name goes out for the whole fleet; a caller's `max-age=0` fetches once for
//! the fleet; `only-if-cached` is answered from the fleet's cache; a forced fetch is charged
//! on a replica that only Redis told of the stored answer.

use std::sync::Arc;
use std::time::Duration;

use std::sync::atomic::Ordering;

use crate::cache::freshness::{
    FAILING, fresh_settings, get_with, header, path, settles_at, switchable,
};
use crate::fleet::shared::replicas;
use crate::support::test_redis;

#[tokio::test]
async fn a_background_refresh_happens_once_per_fleet() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let (upstream, _) = switchable(Duration::from_millis(300)).await;
    let apps = Arc::new(replicas(&redis.url(), &fresh_settings(upstream.addr, 1, 30)).await);
    assert_eq!(apps[0].get(&path()).await.status(), 200);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    // Five callers on each replica at once: A holds the stale entry in memory, B and C read it
    // from Redis; every one is answered from it, and one refresh goes out for the fleet.
    let calls: Vec<_> = (0..15)
        .map(|i| {
            let apps = apps.clone();
            tokio::spawn(async move { apps[i % 3].get(&path()).await })
        })
        .collect();
    for call in calls {
        let response = call.await.unwrap();
        assert_eq!(response.status(), 200);
        let status = header(&response, "cache-status");
        assert!(
            status.starts_with("profile-lookup; hit; ttl=-"),
            "stale, answered at once: {status}"
        );
        let age: u64 = header(&response, "age").parse().unwrap();
        assert!(age >= 1, "Age counts from the fetch on A");
    }
    settles_at(&upstream, 2).await;
    // Every replica now answers the refreshed entry.
    for app in apps.iter() {
        let response = app.get(&path()).await;
        assert_eq!(
            header(&response, "cache-status"),
            "profile-lookup; hit; ttl=0"
        );
        assert_eq!(header(&response, "age"), "0");
    }
    assert_eq!(upstream.hits(), 2);
}

#[tokio::test]
async fn max_age_0_fetches_once_for_the_fleet() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let (upstream, _) = switchable(Duration::from_millis(300)).await;
    let apps = Arc::new(replicas(&redis.url(), &fresh_settings(upstream.addr, 600, 120)).await);
    assert_eq!(apps[0].get(&path()).await.status(), 200);
    let calls: Vec<_> = (0..30)
        .map(|i| {
            let apps = apps.clone();
            tokio::spawn(async move { get_with(&apps[i % 3], &path(), "max-age=0").await })
        })
        .collect();
    for call in calls {
        let response = call.await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(header(&response, "age"), "0", "a fresh answer");
    }
    assert_eq!(
        upstream.hits(),
        2,
        "the first fetch and one forced for the fleet"
    );
}

#[tokio::test]
async fn only_if_cached_is_answered_from_the_fleets_cache() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let (upstream, _) = switchable(Duration::ZERO).await;
    let apps = replicas(&redis.url(), &fresh_settings(upstream.addr, 600, 120)).await;
    assert_eq!(
        get_with(&apps[1], &path(), "only-if-cached").await.status(),
        504
    );
    assert_eq!(apps[0].get(&path()).await.status(), 200);
    // B never saw the name: Redis has it.
    let from_redis = get_with(&apps[1], &path(), "only-if-cached").await;
    assert_eq!(from_redis.status(), 200);
    assert!(header(&from_redis, "cache-status").starts_with("profile-lookup; hit; ttl="));
    assert_eq!(upstream.hits(), 1);
}

#[tokio::test]
async fn a_fetch_forced_past_the_fleets_answer_is_charged_on_any_replica() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let (upstream, _) = switchable(Duration::ZERO).await;
    let mut s = fresh_settings(upstream.addr, 600, 120);
    s.rate_limit.per_key_per_minute = 1;
    s.rate_limit.burst = 10;
    let apps = replicas(&redis.url(), &s).await;
    let miss = apps[0].get(&path()).await;
    assert!(header(&miss, "ratelimit").starts_with("\"per-key\";r=9;"));
    // C holds nothing in memory; the fleet's answer is what no-cache refuses: two units.
    let forced = get_with(&apps[2], &path(), "no-cache").await;
    let status = header(&forced, "cache-status");
    assert!(
        status.starts_with("profile-lookup; fwd=request"),
        "{status}"
    );
    assert!(
        header(&forced, "ratelimit").starts_with("\"per-key\";r=7;"),
        "{}",
        header(&forced, "ratelimit")
    );
    assert_eq!(upstream.hits(), 2);
}

#[tokio::test]
async fn without_memory_a_name_is_refreshed_at_most_once_a_second_for_the_fleet() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let (upstream, mode) = switchable(Duration::ZERO).await;
    let mut base = fresh_settings(upstream.addr, 1, 30);
    base.cache.max_bytes = 0;
    let apps = replicas(&redis.url(), &base).await;
    assert_eq!(apps[0].get(&path()).await.status(), 200);
    // From now on every refresh fails, so the fleet's entry stays in its window and every
    // lookup finds it due for a refresh.
    mode.store(FAILING, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let before = upstream.hits();
    let started = std::time::Instant::now();
    let mut lookups = 0;
    while started.elapsed() < Duration::from_secs(2) {
        let response = apps[lookups % 3].get(&path()).await;
        assert_eq!(response.status(), 200, "the stale entry is served");
        lookups += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seconds = started.elapsed().as_secs() as usize + 1;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A refresh that meets a 5xx tries once more: at most two requests each.
    let sent = upstream.hits() - before;
    assert!(
        sent <= 2 * seconds,
        "{sent} requests for {lookups} lookups in {seconds} s: more than one refresh a second"
    );
}
