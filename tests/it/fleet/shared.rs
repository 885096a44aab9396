//! A fleet of three replicas (three `run()`s on their own listeners) sharing one real
//! `redis-server`, against loopback upstreams that count what they are asked: one quota, one
//! cache, one flight, one outbound budget and one breaker for the fleet, and Redis failing
//! under load without a single failed request.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use profile_lookup::config::Settings;
use profile_lookup::registry::Platform;
use redis::AsyncCommands;
use sha2::{Digest, Sha256};
use stand_in::short_video as sv;

use crate::support::test_redis;
use crate::support::{KEY, TestApp, eventually, settings, spawn_app, spawn_upstream};

/// Three replicas on the Redis (or the cluster's seed list) at `url`, built from `base`
/// (whose upstream they share).
pub(crate) async fn replicas(url: &str, base: &Settings) -> Vec<TestApp> {
    let mut apps = Vec::new();
    for _ in 0..3 {
        let mut s = base.clone();
        s.redis.url = url.to_owned();
        s.redis.key_prefix = "it:".into();
        apps.push(spawn_app(s).await);
    }
    apps
}

/// A short-video upstream that takes `delay` per request, so that misses overlap.
pub(crate) async fn slow_short_video(delay: Duration) -> crate::support::Upstream {
    let slow = sv::router().layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| async move {
            tokio::time::sleep(delay).await;
            next.run(req).await
        },
    ));
    spawn_upstream(slow).await
}

pub(crate) fn profile(name: &str) -> String {
    format!("/short-video/profile/{name}")
}

pub(crate) fn sample_names() -> Vec<String> {
    sv::sample_users()
        .into_iter()
        .map(|u| u.unique_id.to_string())
        .collect()
}

#[tokio::test]
async fn a_key_gets_one_quota_from_three_replicas() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    one_quota_for_three_replicas(&redis.url()).await;
}

/// A key sending round-robin to three replicas on `url` gets one replica's quota (±5 %).
pub(crate) async fn one_quota_for_three_replicas(url: &str) {
    let upstream = spawn_upstream(sv::router()).await;
    let mut base = settings(upstream.addr);
    base.rate_limit.per_key_per_minute = 60;
    base.rate_limit.burst = 20;
    let apps = replicas(url, &base).await;
    let name = &sample_names()[0];
    let started = Instant::now();
    let mut allowed = 0u32;
    for i in 0..90 {
        let response = apps[i % 3].get(&profile(name)).await;
        match response.status() {
            StatusCode::TOO_MANY_REQUESTS => {
                assert!(response.headers().contains_key("retry-after"));
            }
            StatusCode::OK => allowed += 1,
            other => panic!("unexpected {other}"),
        }
        assert!(response.headers().contains_key("ratelimit"));
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
    let Some(redis) = test_redis::start() else {
        return;
    };
    one_flight_and_one_cache(&redis.url()).await;
}

/// Concurrent misses of one name (found, and not found) on three replicas on `url` make one
/// upstream request, and every replica then serves both from the fleet's cache.
pub(crate) async fn one_flight_and_one_cache(url: &str) {
    let upstream = slow_short_video(Duration::from_millis(300)).await;
    let apps = Arc::new(replicas(url, &settings(upstream.addr)).await);
    let names = sample_names();
    let (found, missing) = (names[0].clone(), "nobody.here.at.all".to_owned());
    for name in [&found, &missing] {
        let before = upstream.hits();
        let mut calls = Vec::new();
        for i in 0..30 {
            let (apps, path) = (apps.clone(), profile(name));
            calls.push(tokio::spawn(async move {
                let response = apps[i % 3].get(&path).await;
                (response.status(), response.bytes().await.unwrap())
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
        let response = app.get(&profile(&found)).await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["x-cache"], "hit");
        let age: u64 = response.headers()["age"].to_str().unwrap().parse().unwrap();
        assert!(
            age >= 1,
            "Age counts from the fetch, not from this replica's copy"
        );
        assert_eq!(app.get(&profile(&missing)).await.status(), 404);
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
    let upstream = slow_short_video(Duration::from_millis(400)).await;
    let apps = replicas(&redis.url(), &settings(upstream.addr)).await;
    let name = &sample_names()[1];
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let gave_up = impatient
        .get(apps[0].url(&profile(name)))
        .bearer_auth(KEY)
        .send()
        .await;
    assert!(gave_up.is_err(), "the caller hung up before the answer");
    tokio::time::sleep(Duration::from_millis(600)).await;
    for app in &apps[1..] {
        let response = app.get(&profile(name)).await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["x-cache"], "hit");
    }
    assert_eq!(upstream.hits(), 1, "the abandoned fetch landed in Redis");
}

#[tokio::test]
async fn a_platform_that_blocks_one_replica_is_rested_by_all() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let upstream = spawn_upstream(Router::new().fallback(get(|| async {
        (StatusCode::TOO_MANY_REQUESTS, "slow down")
    })))
    .await;
    let mut base = settings(upstream.addr);
    base.breaker.failure_threshold = 1;
    base.breaker.cooldown_seconds = 30;
    let apps = replicas(&redis.url(), &base).await;
    assert_eq!(apps[0].get(&profile("first.name")).await.status(), 429);
    // The page, then the embed (throttled alike): one lookup, one block for the breaker.
    assert_eq!(upstream.hits(), 2);
    for (i, app) in apps.iter().enumerate().skip(1) {
        let response = app.get(&profile(&format!("other.name{i}"))).await;
        assert_eq!(response.status(), 429);
        let retry: u64 = response.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=30).contains(&retry), "{retry}");
    }
    assert_eq!(upstream.hits(), 2, "the other replicas sent nothing");
}

#[tokio::test]
async fn the_outbound_budget_is_the_fleets_not_each_replicas() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let upstream = spawn_upstream(sv::router()).await;
    let mut base = settings(upstream.addr);
    base.platform_mut(Platform::ShortVideo).requests_per_second = 4;
    base.platform_mut(Platform::ShortVideo).burst = 1;
    base.platform_mut(Platform::ShortVideo).max_queue_ms = 5_000;
    let apps = Arc::new(replicas(&redis.url(), &base).await);
    let mut calls = Vec::new();
    for i in 0..9 {
        let apps = apps.clone();
        calls.push(tokio::spawn(async move {
            apps[i % 3]
                .get(&profile(&format!("budget.name{i}")))
                .await
                .status()
        }));
    }
    for call in calls {
        assert_eq!(call.await.unwrap(), 404);
    }
    let at = upstream.arrivals();
    assert_eq!(at.len(), 9);
    // 4 a second for the fleet: nine requests span at least two seconds (each replica alone
    // would have sent its three within half a second).
    let span = at[8] - at[0];
    assert!(span >= Duration::from_millis(1_800), "{span:?}");
}

/// Statuses of a stream of lookups spread over the replicas until `stop` is set.
/// Stops a [`load`] and checks it ran and every answer was a 200 or a 404 (none failed).
pub(crate) async fn stop_load_expecting_no_failure(
    running: tokio::task::JoinHandle<Vec<u16>>,
    stop: &AtomicBool,
) {
    stop.store(true, Ordering::Relaxed);
    let statuses = running.await.unwrap();
    assert!(
        statuses.len() > 50,
        "the load ran ({} requests)",
        statuses.len()
    );
    let failed = statuses.iter().filter(|s| !matches!(s, 200 | 404)).count();
    assert_eq!(failed, 0, "{failed} of {} failed", statuses.len());
}

pub(crate) async fn load(apps: Arc<Vec<TestApp>>, stop: Arc<AtomicBool>) -> Vec<u16> {
    let names = sample_names();
    let mut statuses = Vec::new();
    let mut i = 0usize;
    while !stop.load(Ordering::Relaxed) {
        let name = if i % 4 == 3 {
            format!("fresh.name{i}")
        } else {
            names[i % names.len()].clone()
        };
        statuses.push(apps[i % 3].get(&profile(&name)).await.status().as_u16());
        i += 1;
    }
    statuses
}

pub(crate) async fn all_back_on_redis(apps: &[TestApp]) -> bool {
    eventually(Duration::from_secs(5), || {
        apps.iter().all(|a| a.state.fleet().is_up())
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_paused_and_restarted_under_load_fails_no_request() {
    let Some(mut redis) = test_redis::start() else {
        return;
    };
    let upstream = spawn_upstream(sv::router()).await;
    let mut base = settings(upstream.addr);
    base.redis.timeout_ms = 100;
    let apps = Arc::new(replicas(&redis.url(), &base).await);
    let stop = Arc::new(AtomicBool::new(false));
    let running = tokio::spawn(load(apps.clone(), stop.clone()));
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
        let started = Instant::now();
        assert_eq!(
            apps[0].get(&profile(&sample_names()[0])).await.status(),
            200
        );
        if started.elapsed() >= Duration::from_millis(100) {
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

    stop_load_expecting_no_failure(running, &stop).await;
}

/// Every key the fleet wrote: name, remaining life (ms) and value bytes.
async fn every_key(conn: &mut redis::aio::MultiplexedConnection) -> Vec<(String, i64, Vec<u8>)> {
    let keys: Vec<String> = conn.keys("*").await.unwrap();
    let mut out = Vec::new();
    for key in keys {
        let ttl: i64 = conn.pttl(&key).await.unwrap();
        let value: Vec<u8> = redis::cmd("DUMP")
            .arg(&key)
            .query_async(conn)
            .await
            .unwrap_or_default();
        out.push((key, ttl, value));
    }
    out
}

async fn workload(apps: &[TestApp]) {
    for (i, name) in sample_names()
        .iter()
        .chain([&"no.such.user".to_owned()])
        .enumerate()
    {
        let status = apps[i % 3].get(&profile(name)).await.status();
        assert!(matches!(status.as_u16(), 200 | 404), "{name}: {status}");
    }
}

#[tokio::test]
async fn every_key_expires_holds_no_secret_and_garbage_is_survived() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let upstream = spawn_upstream(sv::router()).await;
    let mut base = settings(upstream.addr);
    base.breaker.failure_threshold = 3;
    let apps = replicas(&redis.url(), &base).await;
    workload(&apps).await;
    let mut conn = redis.raw().await;
    let written = every_key(&mut conn).await;
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
    let fresh = replicas(&redis.url(), &base).await;
    workload(&fresh).await;
    assert_eq!(
        upstream.hits() - hits,
        sample_names().len() + 1,
        "every garbage entry was a miss, fetched once"
    );
    workload(&fresh).await;
    workload(&apps).await;
    assert_eq!(upstream.hits() - hits, sample_names().len() + 1);
    for (key, ttl, _) in every_key(&mut conn).await {
        assert!(ttl > 0, "{key} has no expiry after the garbage round");
    }
}

#[tokio::test]
async fn a_replica_without_memory_cache_reads_every_answer_from_redis() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let upstream = spawn_upstream(sv::router()).await;
    let base = settings(upstream.addr);
    let apps = replicas(&redis.url(), &base).await;
    let mut bare = base.clone();
    bare.redis.url = redis.url();
    bare.redis.key_prefix = "it:".into();
    bare.cache.max_bytes = 0;
    let bare = spawn_app(bare).await;
    let name = &sample_names()[2];
    assert_eq!(apps[0].get(&profile(name)).await.status(), 200);
    for _ in 0..3 {
        let response = bare.get(&profile(name)).await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["x-cache"], "hit");
    }
    assert_eq!(upstream.hits(), 1, "served from Redis");
    // With the fleet's entry gone, the bare replica has nothing of its own to serve.
    let mut conn = redis.raw().await;
    let keys: Vec<String> = conn.keys("it:*:e").await.unwrap();
    let _: () = conn.del(keys).await.unwrap();
    assert_eq!(bare.get(&profile(name)).await.status(), 200);
    assert_eq!(
        upstream.hits(),
        2,
        "fetched again: nothing was kept in memory"
    );
}

#[tokio::test]
async fn a_caller_that_waited_on_another_replicas_fetch_is_told_it_collapsed() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let upstream = slow_short_video(Duration::from_millis(400)).await;
    let apps = Arc::new(replicas(&redis.url(), &settings(upstream.addr)).await);
    let name = sample_names()[0].clone();
    let first = {
        let (apps, path) = (apps.clone(), profile(&name));
        tokio::spawn(async move { apps[0].get(&path).await })
    };
    // B asks while A's fetch is in the air: it waits for A's answer.
    tokio::time::sleep(Duration::from_millis(150)).await;
    let waited = apps[1].get(&profile(&name)).await;
    let first = first.await.unwrap();
    assert_eq!(upstream.hits(), 1);
    let own = first.headers()["cache-status"].to_str().unwrap();
    assert!(
        own.starts_with("profile-lookup; fwd=uri-miss; fwd-status=200; stored; ttl="),
        "{own}"
    );
    assert_eq!(waited.status(), 200);
    let status = waited.headers()["cache-status"].to_str().unwrap();
    assert!(
        status.starts_with("profile-lookup; fwd=uri-miss; fwd-status=200; stored; collapsed;"),
        "{status}"
    );
    assert_eq!(waited.headers()["x-cache"], "hit");
}
