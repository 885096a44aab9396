//! A fleet of three replicas (three `run()`s on their own listeners) sharing one real
//! `redis-server`, against loopback upstreams that count what they are asked: one quota, one
//! cache, one flight, one outbound budget and one breaker for the fleet, and Redis failing
//! under load without a single failed request.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use profile_lookup::registry::Platform;
use redis::AsyncCommands;
use sha2::{Digest, Sha256};
use stand_in::short_video as sv;

use crate::support::fleet::{Load, all_back_on_redis, sample_names};
use crate::support::routers::{plain, slow};
use crate::support::{KEY, ShortVideo, TestApp, test_redis};

/// Three replicas on the Redis at `url`, before the short-video stand-in made `delay` slow so
/// that their lookups overlap.
pub(crate) async fn slow_replicas(url: &str, delay: Duration) -> Arc<Vec<TestApp>> {
    let upstream = slow(sv::router(), delay);
    TestApp::on(upstream).on_redis(url).replicas(3).await
}

#[tokio::test]
async fn a_key_gets_one_quota_from_three_replicas() {
    test_redis::on_a_redis(one_quota_for_three_replicas).await;
}

/// A key sending round-robin to three replicas on `url` gets one replica's quota (±5 %).
pub(crate) async fn one_quota_for_three_replicas(url: String) {
    let apps = TestApp::on(sv::router())
        .with(|s| {
            s.rate_limit.per_key_per_minute = 60;
            s.rate_limit.burst = 20;
        })
        .on_redis(&url)
        .replicas(3)
        .await;
    let name = &sample_names()[0];
    let started = Instant::now();
    let mut allowed = 0u32;
    for i in 0..90 {
        let answer = apps[i % 3].lookup(ShortVideo, name).await;
        match answer.status() {
            429 => assert!(answer.has("retry-after")),
            200 => allowed += 1,
            other => panic!("unexpected {other}"),
        }
        assert!(answer.has("ratelimit"));
    }
    // What one replica alone allows: the burst, plus one a second of refill.
    let one_replica = 20.0 + started.elapsed().as_secs_f64();
    let off = (f64::from(allowed) - one_replica).abs() / one_replica;
    assert!(
        off <= 0.05 || (f64::from(allowed) - one_replica).abs() <= 1.0,
        "the fleet allowed {allowed}; one replica allows {one_replica:.1}"
    );
}

#[tokio::test]
async fn concurrent_misses_on_three_replicas_make_one_upstream_request() {
    test_redis::on_a_redis(one_flight_and_one_cache).await;
}

/// Concurrent misses of one name (found, and not found) on three replicas on `url` make one
/// upstream request, and every replica then serves both from the fleet's cache.
pub(crate) async fn one_flight_and_one_cache(url: String) {
    let apps = slow_replicas(&url, Duration::from_millis(300)).await;
    let upstream = apps[0].upstream();
    let names = sample_names();
    let (found, missing) = (names[0].clone(), "nobody.here.at.all".to_owned());
    for name in [&found, &missing] {
        let before = upstream.hits();
        let mut calls = Vec::new();
        for i in 0..30 {
            let (apps, name) = (apps.clone(), name.clone());
            calls.push(tokio::spawn(async move {
                let answer = apps[i % 3].lookup(ShortVideo, &name).await;
                (answer.status(), answer.shared_json())
            }));
        }
        let mut bodies = Vec::new();
        for call in calls {
            bodies.push(call.await.unwrap());
        }
        assert_eq!(upstream.hits() - before, 1, "{name}: one upstream request");
        assert!(
            bodies.windows(2).all(|w| w[0] == w[1]),
            "{name}: every replica gives the same answer"
        );
        let expected = if name == &found { 200 } else { 404 };
        assert_eq!(bodies[0].0, expected, "{name}");
    }
    // Later, every replica serves both from the fleet's cache, with the age of the fetch.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let before = upstream.hits();
    for app in apps.iter() {
        let answer = app
            .lookup(ShortVideo, &found)
            .await
            .expect_status(200)
            .expect_header("x-cache", "hit");
        assert!(
            answer.age() >= 1,
            "Age counts from the fetch, not from this replica's copy"
        );
        app.lookup(ShortVideo, &missing).await.expect_status(404);
    }
    assert_eq!(
        upstream.hits(),
        before,
        "no replica asked the platform again"
    );
}

#[tokio::test]
async fn a_fetch_survives_its_caller_hanging_up_and_serves_the_fleet() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let apps = slow_replicas(&redis.url(), Duration::from_millis(400)).await;
    let name = &sample_names()[1];
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let gave_up = impatient
        .get(apps[0].url(&format!("/short-video/profile/{name}")))
        .bearer_auth(KEY)
        .send()
        .await;
    assert!(gave_up.is_err(), "the caller hung up before the answer");
    tokio::time::sleep(Duration::from_millis(600)).await;
    for app in &apps[1..] {
        app.lookup(ShortVideo, name)
            .await
            .expect_status(200)
            .expect_header("x-cache", "hit");
    }
    assert_eq!(apps[0].hits(), 1, "the abandoned fetch landed in Redis");
}

#[tokio::test]
async fn a_platform_that_blocks_one_replica_is_rested_by_all() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let apps = TestApp::on(plain(StatusCode::TOO_MANY_REQUESTS, "slow down"))
        .with(|s| {
            s.breaker.failure_threshold = 1;
            s.breaker.cooldown_seconds = 30;
        })
        .on_redis(&redis.url())
        .replicas(3)
        .await;
    apps[0]
        .lookup(ShortVideo, "first.name")
        .await
        .expect_status(429);
    // The page, then the embed (throttled alike): one lookup, one block for the breaker.
    assert_eq!(apps[0].hits(), 2);
    for (i, app) in apps.iter().enumerate().skip(1) {
        let retry = app
            .lookup(ShortVideo, &format!("other.name{i}"))
            .await
            .expect_status(429)
            .retry_after();
        assert!((1..=30).contains(&retry), "{retry}");
    }
    assert_eq!(apps[0].hits(), 2, "the other replicas sent nothing");
}

#[tokio::test]
async fn the_outbound_budget_is_the_fleets_not_each_replicas() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let apps = TestApp::on(sv::router())
        .with(|s| {
            let platform = s.platform_mut(Platform::ShortVideo);
            platform.requests_per_second = 4;
            platform.burst = 1;
            platform.max_queue_ms = 5_000;
        })
        .on_redis(&redis.url())
        .replicas(3)
        .await;
    let mut calls = Vec::new();
    for i in 0..9 {
        let apps = apps.clone();
        calls.push(tokio::spawn(async move {
            let name = format!("budget.name{i}");
            apps[i % 3].lookup(ShortVideo, &name).await.status()
        }));
    }
    for call in calls {
        assert_eq!(call.await.unwrap(), 404);
    }
    let at = apps[0].upstream().arrivals();
    assert_eq!(at.len(), 9);
    // 4 a second for the fleet: nine requests span at least two seconds (each replica alone
    // would have sent its three within half a second).
    let span = at[8] - at[0];
    assert!(span >= Duration::from_millis(1_800), "{span:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_paused_and_restarted_under_load_fails_no_request() {
    let Some(mut redis) = test_redis::start() else {
        return;
    };
    let apps = TestApp::on(sv::router())
        .with(|s| s.redis.timeout_ms = 100)
        .on_redis(&redis.url())
        .replicas(3)
        .await;
    let load = Load::start(apps.clone());
    tokio::time::sleep(Duration::from_millis(300)).await;

    redis.kill();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    for app in apps.iter() {
        assert_eq!(
            app.get("/readyz").await.status(),
            200,
            "ready without Redis"
        );
    }
    // Down, a replica skips Redis instead of waiting out the timeout on every request.
    let mut slow = 0;
    for _ in 0..20 {
        let (answer, took) = apps[0].timed_lookup(ShortVideo, &sample_names()[0]).await;
        answer.expect_status(200);
        if took >= Duration::from_millis(100) {
            slow += 1;
        }
    }
    assert!(slow <= 3, "{slow} of 20 requests waited for Redis");
    // A new, empty server on the same port (blocks this worker for a few milliseconds).
    redis.restart();
    assert!(all_back_on_redis(&apps).await, "back on Redis within 5 s");

    redis.pause();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    redis.resume();
    assert!(
        all_back_on_redis(&apps).await,
        "back on Redis after a pause"
    );

    load.stop_expecting_no_failure().await;
}

/// Every sample name and one unknown name, spread over `apps`: each a 200 or a 404.
async fn workload(apps: &[TestApp]) {
    for (i, name) in sample_names()
        .iter()
        .chain([&"no.such.user".to_owned()])
        .enumerate()
    {
        let status = apps[i % 3].lookup(ShortVideo, name).await.status();
        assert!(matches!(status, 200 | 404), "{name}: {status}");
    }
}

#[tokio::test]
async fn every_key_expires_holds_no_secret_and_garbage_is_survived() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let upstream = crate::support::spawn_upstream(sv::router()).await;
    let replicas = || {
        TestApp::on(&upstream)
            .with(|s| s.breaker.failure_threshold = 3)
            .on_redis(&redis.url())
            .replicas(3)
    };
    let apps = replicas().await;
    workload(&apps).await;
    let mut conn = redis.raw().await;
    let written = redis.every_key("*").await;
    assert!(written.len() >= 4, "{written:?}");
    let digest: String = Sha256::digest(KEY.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    for (key, ttl, value) in &written {
        // PTTL is -1 for a key without an expiry. 0 (under a millisecond left) and -2 (gone
        // between KEYS and PTTL) are an expiry at work: a quota key lives only until its
        // bucket is full again, which at the tests' rates is a few milliseconds.
        assert_ne!(*ttl, -1, "{key} has no expiry");
        for secret in [KEY, &digest] {
            assert!(!key.contains(secret), "{key} holds a secret");
            let text = String::from_utf8_lossy(value);
            assert!(!text.contains(secret), "{key}'s value holds a secret");
        }
    }
    // Garbage of the wrong type at every key the fleet uses: answers stay right.
    for (key, _, _) in &written {
        let _: () = conn.del(key).await.unwrap();
        let _: () = conn.hset(key, "junk", "x").await.unwrap();
        let _: () = conn.pexpire(key, 60_000).await.unwrap();
    }
    // New replicas, with nothing in memory, read the garbage as misses and fetch again.
    let hits = upstream.hits();
    let fresh = replicas().await;
    workload(&fresh).await;
    assert_eq!(
        upstream.hits() - hits,
        sample_names().len() + 1,
        "every garbage entry was a miss, fetched once"
    );
    workload(&fresh).await;
    workload(&apps).await;
    assert_eq!(upstream.hits() - hits, sample_names().len() + 1);
    for (key, ttl, _) in redis.every_key("*").await {
        // As above: 0 and -2 are an expiry at work, -1 none.
        assert_ne!(ttl, -1, "{key} has no expiry after the garbage round");
    }
}

#[tokio::test]
async fn a_replica_without_memory_cache_reads_every_answer_from_redis() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let apps = TestApp::on(sv::router())
        .on_redis(&redis.url())
        .replicas(3)
        .await;
    let bare = TestApp::on(apps[0].upstream())
        .on_redis(&redis.url())
        .with(|s| s.cache.max_bytes = 0)
        .start()
        .await;
    let name = &sample_names()[2];
    apps[0].lookup(ShortVideo, name).await.expect_status(200);
    for _ in 0..3 {
        bare.lookup(ShortVideo, name)
            .await
            .expect_status(200)
            .expect_header("x-cache", "hit");
    }
    assert_eq!(bare.hits(), 1, "served from Redis");
    // With the fleet's entry gone, the bare replica has nothing of its own to serve.
    let keys = redis.keys("it:*:e").await;
    let _: () = redis.raw().await.del(keys).await.unwrap();
    bare.lookup(ShortVideo, name).await.expect_status(200);
    assert_eq!(bare.hits(), 2, "fetched again: nothing was kept in memory");
}

#[tokio::test]
async fn a_caller_that_waited_on_another_replicas_fetch_is_told_it_collapsed() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let apps = slow_replicas(&redis.url(), Duration::from_millis(400)).await;
    let name = sample_names()[0].clone();
    let first = {
        let (apps, name) = (apps.clone(), name.clone());
        tokio::spawn(async move { apps[0].lookup(ShortVideo, &name).await })
    };
    // B asks while A's fetch is in the air: it waits for A's answer.
    tokio::time::sleep(Duration::from_millis(150)).await;
    let waited = apps[1].lookup(ShortVideo, &name).await;
    let first = first.await.unwrap();
    assert_eq!(apps[0].hits(), 1);
    let own = first.header("cache-status");
    assert!(
        own.starts_with("profile-lookup; fwd=uri-miss; fwd-status=200; stored; ttl="),
        "{own}"
    );
    let waited = waited.expect_status(200);
    let status = waited.header("cache-status");
    assert!(
        status.starts_with("profile-lookup; fwd=uri-miss; fwd-status=200; stored; collapsed;"),
        "{status}"
    );
    waited.expect_header("x-cache", "hit");
}
