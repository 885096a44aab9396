//! A Redis whose memory the cache has filled, run with the eviction policy the deployment files
//! ship: quota, outbound budget, breaker and flight lock keys are neither evicted nor refused,
//! so nothing is over-admitted; the cache's own writes are the ones that give way, and the
//! replica stays on Redis.

use std::time::Duration;

use bytes::Bytes;
use profile_lookup::fleet::{Lock, Put, Reservation, SharedEntry, key_id};

use crate::support::fleet::handle;
use crate::support::test_redis;

const SV: &str = "short-video";

/// The word after `--maxmemory-policy` (or `maxmemory-policy`) in a deployment file.
fn policy_in(rel: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']' | '"'))
        .map(|w| w.trim_start_matches('-'))
        .filter(|w| !w.is_empty())
        .collect();
    let at = words
        .iter()
        .position(|w| *w == "maxmemory-policy")
        .unwrap_or_else(|| panic!("{rel} sets no maxmemory-policy"));
    words[at + 1].to_owned()
}

/// The one policy every shipped Redis runs.
fn shipped_policy() -> String {
    let compose = policy_in("deploy/compose.yaml");
    for rel in [
        "deploy/compose.loopback.yaml",
        "deploy/kubernetes/overlays/single-redis/redis.yaml",
    ] {
        assert_eq!(
            policy_in(rel),
            compose,
            "{rel} and deploy/compose.yaml differ"
        );
    }
    compose
}

fn big_profile(kb: usize) -> SharedEntry {
    SharedEntry {
        body: Some(Bytes::from(format!(
            "{{\"bio\":\"{}\"}}",
            "x".repeat(kb * 1024)
        ))),
        private: false,
        fetched_at_unix_ms: profile_lookup::fleet::entry::now_unix_ms(),
        source: "page".into(),
    }
}

/// A number from `INFO section`.
async fn info_field(
    conn: &mut redis::aio::MultiplexedConnection,
    section: &str,
    field: &str,
) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg(section)
        .query_async(conn)
        .await
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("INFO {section} has no {field}"))
}

#[test]
fn every_shipped_redis_runs_one_policy() {
    assert_eq!(shipped_policy(), "noeviction");
}

#[tokio::test]
async fn a_full_redis_evicts_and_refuses_no_counter_and_no_lock() {
    let policy = shipped_policy();
    let Some(redis) =
        test_redis::start_with(&["--maxmemory", "4mb", "--maxmemory-policy", &policy])
    else {
        return;
    };
    let (a, b) = (
        handle(&redis.url(), "it:", 500),
        handle(&redis.url(), "it:", 500),
    );
    let ttl = Duration::from_secs(60);
    // Counters and a lock, written before the cache fills memory.
    let id = key_id(&[4; 32]);
    for _ in 0..3 {
        assert!(a.quota_check(&id, 1, 3).await.expect("redis up").allowed);
    }
    for _ in 0..4 {
        a.outbound_reserve(SV, 1.0, 1, ttl).await.expect("redis up");
    }
    a.breaker_open(SV, ttl).await.expect("redis up");
    assert!(matches!(a.flight_lock(SV, "held").await, Lock::Acquired(_)));

    // The cache writes far more than maxmemory: 60 profiles of 256 KB. Redis refuses the
    // ones that do not fit (they stay in each replica's memory), and says so.
    let mut refused = 0;
    for i in 0..60 {
        let put = a
            .cache_put(SV, &format!("big{i}"), &big_profile(256), ttl, ttl, None)
            .await;
        match put {
            Some(Put::Full) => refused += 1,
            Some(Put::Stored) => {}
            other => panic!("profile {i}: {other:?}"),
        }
    }
    assert!(
        refused > 40,
        "only {refused} of 60 refused: maxmemory is 4 MB"
    );
    // A big profile is refused on its own size while Redis is still under its limit; the
    // small writes after it (the last profiles that fit, counters, tombstones) are what take
    // Redis past it for good. Here: a limit of half what Redis now uses.
    let mut conn = redis.raw().await;
    let used = info_field(&mut conn, "memory", "used_memory").await;
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(used / 2)
        .query_async(&mut conn)
        .await
        .unwrap();
    let put = a
        .cache_put(SV, "small", &big_profile(1), ttl, ttl, None)
        .await;
    assert_eq!(put, Some(Put::Full), "a small profile past maxmemory");
    // A not-found is a few bytes, and its tombstone must not be lost: still written.
    let gone = SharedEntry {
        body: None,
        ..big_profile(0)
    };
    let put = a.cache_put(SV, "big0", &gone, ttl, ttl, None).await;
    assert_eq!(put, Some(Put::Stored), "a not-found under full memory");
    assert_eq!(b.stale_get(SV, "big0").await, Some(Some(gone)));

    // Nothing was forgotten: the key's quota is spent, the queue is 4 s long, the breaker is
    // open, the lock is held.
    let d = b.quota_check(&id, 1, 3).await;
    assert!(
        d.is_some_and(|d| !d.allowed),
        "quota after the cache filled Redis: {d:?}"
    );
    let r = b
        .outbound_reserve(SV, 1.0, 1, Duration::from_millis(500))
        .await;
    assert!(
        matches!(r, Some(Reservation::TooLong(_))),
        "outbound: {r:?}"
    );
    let open = b.breaker_open_for(SV).await;
    assert!(open.is_some_and(|o| o.is_some()), "breaker: {open:?}");
    let lock = b.flight_lock(SV, "held").await;
    assert_eq!(lock, Lock::HeldByOther, "lock");
    // And new ones are still written: another key's quota, another name's lock.
    let other = b.quota_check(&key_id(&[5; 32]), 1, 3).await;
    assert!(
        other.is_some_and(|d| d.allowed && d.remaining == 2),
        "{other:?}"
    );
    assert!(matches!(b.flight_lock(SV, "new").await, Lock::Acquired(_)));
    assert!(a.is_up() && b.is_up(), "a full Redis is not a Redis down");
    assert_eq!(info_field(&mut conn, "stats", "evicted_keys").await, 0);
}
