//! The fleet's quota with leases, against a real `redis-server`: replicas (each its own
//! `KeyLimiter` and `Fleet` handle, as each replica's `AppState` holds them) lease units of one
//! key's bucket and spend them locally, and together they still admit the configured quota
//! (±5 %); a busy key costs Redis far fewer calls than requests.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use profile_lookup::auth::{KeyId, Keys};
use profile_lookup::config::RedisConfig;
use profile_lookup::config::{AuthConfig, RateLimitConfig};
use profile_lookup::fleet::Fleet;
use profile_lookup::quota::KeyLimiter;

use crate::support::test_redis;

/// `n` replicas' limiters for one key, on the Redis at `url` under `prefix`.
fn replicas(url: &str, prefix: &str, n: usize, per_minute: u32, burst: u32) -> Vec<KeyLimiter> {
    let keys = Keys::new(&AuthConfig {
        api_keys: vec!["lease-test-key".into()],
        api_key_sha256: vec![],
    });
    let limits = RateLimitConfig {
        per_key_per_minute: per_minute,
        burst,
        key_id_metrics: false,
    };
    (0..n)
        .map(|_| {
            let fleet = Fleet::new(&RedisConfig {
                url: url.to_owned(),
                key_prefix: prefix.to_owned(),
                ..RedisConfig::default()
            })
            .expect("a fleet handle");
            KeyLimiter::new(&limits, &keys, &fleet)
        })
        .collect()
}

/// Every replica's `tasks` callers ask for units as fast as they are given (a refused caller
/// waits a moment) until `window` has passed; the units admitted in all.
async fn hammer(limiters: Vec<KeyLimiter>, tasks: usize, window: Duration) -> (u64, Duration) {
    let admitted = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut running = Vec::new();
    for limiter in limiters {
        let limiter = Arc::new(limiter);
        for _ in 0..tasks {
            let (limiter, admitted) = (limiter.clone(), admitted.clone());
            running.push(tokio::spawn(async move {
                while started.elapsed() < window {
                    match limiter.check(KeyId(0)).await {
                        Ok(_) => {
                            admitted.fetch_add(1, Ordering::Relaxed);
                            tokio::task::yield_now().await;
                        }
                        Err(_) => tokio::time::sleep(Duration::from_micros(300)).await,
                    }
                }
            }));
        }
    }
    for task in running {
        task.await.expect("no panic");
    }
    (admitted.load(Ordering::Relaxed), started.elapsed())
}

/// EVALSHA calls Redis has answered so far.
async fn evalsha_calls(redis: &test_redis::TestRedis) -> u64 {
    let mut raw = redis.raw().await;
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut raw)
        .await
        .expect("INFO");
    info.lines()
        .find_map(|l| l.strip_prefix("cmdstat_evalsha:calls="))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leased_units_keep_the_fleets_quota_within_five_percent() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    // 1,200 a second sustained, a burst of 400: leases up to 50 units each.
    let (per_minute, burst) = (72_000, 400);
    let limiters = replicas(&redis.url(), "lease-q:", 3, per_minute, burst);
    let (admitted, elapsed) = hammer(limiters, 8, Duration::from_secs(3)).await;
    let quota = f64::from(burst) + f64::from(per_minute) / 60.0 * elapsed.as_secs_f64();
    let off = (admitted as f64 - quota) / quota;
    eprintln!(
        "admitted {admitted} in {elapsed:?}, quota {quota:.0}: {:+.2} %",
        off * 100.0
    );
    assert!(
        off.abs() <= 0.05,
        "three replicas admitted {admitted} in {elapsed:?}; the quota is {quota:.0} ({:+.1} %)",
        off * 100.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_key_costs_redis_far_fewer_calls_than_requests() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let limiters = replicas(&redis.url(), "lease-n:", 2, 60_000_000, 1_000_000);
    let before = evalsha_calls(&redis).await;
    let (admitted, _) = hammer(limiters, 4, Duration::from_millis(600)).await;
    let calls = evalsha_calls(&redis).await - before;
    eprintln!("{calls} Redis calls for {admitted} admitted requests");
    assert!(admitted > 1_000, "only {admitted} admitted");
    assert!(
        calls * 5 < admitted,
        "{calls} Redis calls for {admitted} admitted requests: leases should cut them"
    );
}
