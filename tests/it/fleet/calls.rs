//! The fleet layer's calls against a real `redis-server`, through its public API: two
//! handles on one Redis are two replicas.

use std::time::Duration;

use bytes::Bytes;
use redis::AsyncCommands;
use sha2::{Digest, Sha256};
use tokio::time::Instant;

use profile_lookup::config::RedisConfig;
use profile_lookup::fleet::entry::now_unix_ms;
use profile_lookup::fleet::keys::Keys;
use profile_lookup::fleet::*;

use crate::support::test_redis::{self, TestRedis, free_port};

const SV: &str = "short-video";

fn found(body: &'static str) -> SharedEntry {
    SharedEntry {
        body: Some(Bytes::from_static(body.as_bytes())),
        private: false,
        fetched_at_unix_ms: now_unix_ms(),
        source: "page".into(),
    }
}

fn not_found() -> SharedEntry {
    SharedEntry {
        body: None,
        private: false,
        fetched_at_unix_ms: now_unix_ms(),
        source: "page".into(),
    }
}

/// A fleet handle (a "replica") on `url`.
fn fleet_at(url: &str, timeout_ms: u64) -> Fleet {
    crate::support::fleet::handle(url, "t:", timeout_ms)
}

/// A fleet handle on the test's own Redis.
fn fleet_on(redis: &TestRedis, timeout_ms: u64) -> Fleet {
    fleet_at(&redis.url(), timeout_ms)
}

/// A Redis of the test's own and two replicas' handles on it (calls time out after 500 ms),
/// or `None` without `redis-server` (see [`test_redis::start`]).
fn two_replicas() -> Option<(TestRedis, Fleet, Fleet)> {
    let redis = test_redis::start()?;
    let (a, b) = (fleet_on(&redis, 500), fleet_on(&redis, 500));
    Some((redis, a, b))
}

async fn pttl(conn: &mut redis::aio::MultiplexedConnection, key: &str) -> i64 {
    conn.pttl(key).await.expect("PTTL")
}

#[tokio::test]
async fn no_url_no_fleet_and_no_runtime_is_an_error() {
    let local = Fleet::new(&RedisConfig::default()).unwrap();
    assert!(!local.is_shared() && !local.is_up());
    assert_eq!(local.flight_lock(SV, "alice").await, Lock::Unavailable);
    assert_eq!(local.cache_get(SV, "alice").await, None);
    let cfg = RedisConfig {
        url: "redis://127.0.0.1:1/".into(),
        ..RedisConfig::default()
    };
    let outside = std::thread::spawn(move || Fleet::new(&cfg).map(|_| ()));
    assert!(matches!(
        outside.join().unwrap(),
        Err(FleetError::NoRuntime)
    ));
}

#[tokio::test]
async fn gcra_allows_burst_then_spaces_and_two_replicas_share_it() {
    let Some((redis, a, b)) = two_replicas() else {
        return;
    };
    let id = key_id(&[7; 32]);
    // 60 a minute: one unit a second; burst 5. A second per unit leaves a loaded machine's
    // delays between the calls (tens of ms) far inside every bound below.
    let unit = Duration::from_secs(1);
    let started = std::time::Instant::now();
    for i in 0..5u32 {
        let replica = if i % 2 == 0 { &a } else { &b };
        let d = replica.quota_check(&id, 60, 5).await.expect("redis up");
        assert!(d.allowed, "request {i}");
        assert_eq!(d.remaining, 4 - i);
        assert_eq!(d.retry_after, Duration::ZERO);
        assert!(d.reset <= unit * (i + 1), "{d:?}");
    }
    let denied = b.quota_check(&id, 60, 5).await.unwrap();
    let spent = started.elapsed();
    assert!(!denied.allowed);
    assert_eq!(denied.remaining, 0);
    // Whole milliseconds on the way through Redis: a few may be lost to rounding.
    let rounding = Duration::from_millis(20);
    assert!(
        denied.retry_after + spent + rounding >= unit,
        "{denied:?} after {spent:?}"
    );
    assert!(denied.retry_after <= unit, "{denied:?}");
    assert!(
        denied.reset + spent + rounding >= unit * 5,
        "{denied:?} after {spent:?}"
    );
    tokio::time::sleep(denied.retry_after + Duration::from_millis(5)).await;
    let since_again = std::time::Instant::now();
    let again = a.quota_check(&id, 60, 5).await.unwrap();
    assert!(again.allowed, "{again:?}");
    assert_eq!(again.remaining, 0);
    let next = b.quota_check(&id, 60, 5).await.unwrap();
    assert!(!next.allowed);
    // The next unit is a second after `again`; what passed since (a loaded machine) is not
    // the limiter's doing.
    assert!(
        next.retry_after + since_again.elapsed() >= unit - Duration::from_millis(10),
        "{next:?}"
    );
    // The state expires when the bucket is full again: five units from now, at most.
    let mut raw = redis.raw().await;
    let left = pttl(&mut raw, &a.keys().expect("on Redis").quota(&id)).await;
    assert!((3_000..=5_000).contains(&left), "{left}");
    // Another key has its own bucket.
    assert!(
        b.quota_check(&key_id(&[8; 32]), 60, 5)
            .await
            .unwrap()
            .allowed
    );
}

#[tokio::test]
async fn shared_cache_round_trip_with_ttls_and_stale_copy() {
    let Some((redis, a, b)) = two_replicas() else {
        return;
    };
    assert_eq!(a.cache_get(SV, "alice").await, Some(None));
    let entry = found("{\"name\":\"alice\"}");
    a.cache_put(
        SV,
        "alice",
        &entry,
        Duration::from_millis(400),
        Duration::from_millis(2_400),
        None,
    )
    .await
    .expect("stored");
    assert_eq!(b.cache_get(SV, "alice").await, Some(Some(entry.clone())));
    assert_eq!(b.stale_get(SV, "alice").await, Some(Some(entry.clone())));
    let mut raw = redis.raw().await;
    let keys = a.keys().expect("on Redis").name(SV, "alice");
    let fresh = pttl(&mut raw, &keys.entry).await;
    let stale = pttl(&mut raw, &keys.stale).await;
    assert!((300..=400).contains(&fresh), "{fresh}");
    assert!((2_300..=2_400).contains(&stale), "{stale}");
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(
        b.cache_get(SV, "alice").await,
        Some(None),
        "fresh entry expired"
    );
    let old = b
        .stale_get(SV, "alice")
        .await
        .unwrap()
        .expect("stale copy kept");
    assert_eq!(
        old.fetched_at_unix_ms, entry.fetched_at_unix_ms,
        "Age counts from the fetch"
    );
    assert!(old.age() >= Duration::from_millis(400));
    // Another platform, another name: separate entries.
    assert_eq!(b.cache_get("photo-share", "alice").await, Some(None));
}

#[tokio::test]
async fn a_confirmed_not_found_replaces_the_stale_copy_with_a_tombstone() {
    let Some((redis, a, b)) = two_replicas() else {
        return;
    };
    let ttl = Duration::from_secs(60);
    a.cache_put(SV, "bob", &found("{}"), ttl, ttl, None)
        .await
        .unwrap();
    assert!(b.stale_get(SV, "bob").await.unwrap().is_some());
    let gone = not_found();
    b.cache_put(SV, "bob", &gone, Duration::from_secs(5), ttl, None)
        .await
        .unwrap();
    assert_eq!(a.stale_get(SV, "bob").await, Some(Some(gone.clone())));
    assert_eq!(a.cache_get(SV, "bob").await, Some(Some(gone)));
    let mut raw = redis.raw().await;
    let keys = a.keys().expect("on Redis").name(SV, "bob");
    let left = pttl(&mut raw, &keys.entry).await;
    assert!(
        (4_000..=5_000).contains(&left),
        "not-found keeps its own TTL: {left}"
    );
    let tombstone = pttl(&mut raw, &keys.stale).await;
    assert!(
        (59_000..=60_000).contains(&tombstone),
        "the tombstone lives as long as a stale copy: {tombstone}"
    );
    // A not-found that is not cached (negative TTL 0) still leaves its tombstone.
    a.cache_put(SV, "bob", &found("{}"), ttl, ttl, None)
        .await
        .unwrap();
    let uncached = not_found();
    let put = b
        .cache_put(SV, "bob", &uncached, Duration::ZERO, ttl, None)
        .await;
    assert_eq!(put, Some(Put::Stored));
    assert_eq!(a.cache_get(SV, "bob").await, Some(None));
    assert_eq!(a.stale_get(SV, "bob").await, Some(Some(uncached)));
    // Without a stale lifetime (no stale serving) the record goes.
    b.cache_put(SV, "bob", &not_found(), ttl, Duration::ZERO, None)
        .await
        .unwrap();
    assert_eq!(a.stale_get(SV, "bob").await, Some(None));
}

/// Writes a hash (wrong type) or a junk string without expiry at `key`.
async fn plant(conn: &mut redis::aio::MultiplexedConnection, key: &str, as_hash: bool) {
    let _: () = conn.del(key).await.unwrap();
    if as_hash {
        let _: () = conn.hset(key, "junk", "x").await.unwrap();
    } else {
        let _: () = conn
            .set(key, "99999999999999999999 not ours")
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn garbage_at_every_key_is_a_miss_then_overwritten() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let f = fleet_on(&redis, 500);
    let mut raw = redis.raw().await;
    let keys = f.keys().expect("on Redis").clone();
    let id = key_id(&[1; 32]);
    let name = keys.name(SV, "eve");
    for as_hash in [true, false] {
        for key in [&name.entry, &name.stale, &name.lock] {
            plant(&mut raw, key, as_hash).await;
        }
        for key in [
            keys.quota(&id),
            keys.outbound(SV),
            keys.breaker(SV),
            keys.proxy(SV, 3),
        ] {
            plant(&mut raw, &key, as_hash).await;
        }
        assert_eq!(f.cache_get(SV, "eve").await, Some(None), "hash={as_hash}");
        assert_eq!(f.stale_get(SV, "eve").await, Some(None));
        let d = f.quota_check(&id, 60, 3).await.expect("no error");
        assert!(d.allowed && d.remaining == 2, "{d:?}");
        assert_eq!(
            f.outbound_reserve(SV, 10.0, 1, Duration::from_secs(1))
                .await,
            Some(Reservation::Wait(Duration::ZERO))
        );
        assert_eq!(f.breaker_open_for(SV).await, Some(None));
        assert_eq!(f.proxy_resting(SV, &[3]).await, Some(vec![None]));
        let Lock::Acquired(token) = f.flight_lock(SV, "eve").await else {
            panic!("a junk lock must not block the flight");
        };
        let entry = found("{\"x\":1}");
        f.cache_put(
            SV,
            "eve",
            &entry,
            Duration::from_secs(9),
            Duration::from_secs(9),
            Some(&token),
        )
        .await
        .unwrap();
        assert_eq!(f.cache_get(SV, "eve").await, Some(Some(entry.clone())));
        assert_eq!(f.stale_get(SV, "eve").await, Some(Some(entry)));
        f.breaker_open(SV, Duration::from_secs(3)).await.unwrap();
        assert!(f.breaker_open_for(SV).await.unwrap().is_some());
        f.proxy_rest(SV, 3, Duration::from_secs(3)).await.unwrap();
        assert!(f.proxy_resting(SV, &[3]).await.unwrap()[0].is_some());
        assert!(f.is_up(), "garbage is never counted as Redis being down");
        // Unparsable bytes of the right type are a miss as well.
        let _: () = raw.set(&name.entry, "PX\u{1}junk").await.unwrap();
        assert_eq!(f.cache_get(SV, "eve").await, Some(None));
    }
}

/// Runs every kind of call, as a busy replica would.
async fn workload(f: &Fleet, id: &str) {
    let ttl = Duration::from_secs(30);
    for n in ["a1", "a2", "a3"] {
        let Lock::Acquired(t) = f.flight_lock(SV, n).await else {
            panic!("lock {n}")
        };
        f.cache_put(SV, n, &found("{}"), ttl, ttl, Some(&t))
            .await
            .unwrap();
        f.cache_get(SV, n).await.unwrap();
    }
    f.cache_put(SV, "nf", &not_found(), ttl, ttl, None)
        .await
        .unwrap();
    let Lock::Acquired(t) = f.flight_lock(SV, "held").await else {
        panic!("lock")
    };
    assert_eq!(f.flight_release(SV, "held", &t).await, Some(true));
    f.flight_lock(SV, "left-held").await;
    f.quota_check(id, 60, 10).await.unwrap();
    f.outbound_reserve(SV, 5.0, 2, ttl).await.unwrap();
    f.breaker_open(SV, ttl).await.unwrap();
    f.proxy_rest(SV, 0, ttl).await.unwrap();
}

#[tokio::test]
async fn every_key_has_an_expiry_and_no_secret_reaches_redis() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let f = fleet_on(&redis, 500);
    let api_key = "pl_live_SECRETKEY_0123456789abcdef";
    let digest: [u8; 32] = Sha256::digest(api_key.as_bytes()).into();
    let digest_hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    workload(&f, &key_id(&digest)).await;
    let keys = redis.every_key("*").await;
    assert!(keys.len() >= 10, "{keys:?}");
    for (key, left, dump) in &keys {
        assert!(*left > 0, "{key} has no expiry ({left})");
        for secret in [
            api_key.as_bytes(),
            digest_hex.as_bytes(),
            &digest[..],
            b"SECRETKEY",
        ] {
            let hay = [key.as_bytes(), dump].concat();
            assert!(
                !hay.windows(secret.len())
                    .any(|w| w.eq_ignore_ascii_case(secret)),
                "secret in {key}"
            );
        }
    }
}

#[tokio::test]
async fn the_flight_lock_is_exclusive_and_waiters_get_the_answer() {
    let Some((redis, a, b)) = two_replicas() else {
        return;
    };
    let ttl = Duration::from_secs(10);
    let Lock::Acquired(token) = a.flight_lock(SV, "carol").await else {
        panic!("first")
    };
    assert_eq!(b.flight_lock(SV, "carol").await, Lock::HeldByOther);
    assert_eq!(a.flight_lock(SV, "carol").await, Lock::HeldByOther);
    let wrong = FlightToken("not-the-token".into());
    assert_eq!(b.flight_release(SV, "carol", &wrong).await, Some(false));
    assert_eq!(b.flight_lock(SV, "carol").await, Lock::HeldByOther);

    let waiter = {
        let b = b.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let got = b
                .flight_wait(SV, "carol", started + Duration::from_secs(5))
                .await;
            (got, started.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let entry = found("{\"name\":\"carol\"}");
    a.cache_put(SV, "carol", &entry, ttl, ttl, Some(&token))
        .await
        .unwrap();
    let (got, waited) = waiter.await.unwrap();
    assert_eq!(got, Wait::Entry(entry.clone()));
    assert!(waited < Duration::from_millis(400), "{waited:?}");
    // The put released the lock, and a flight that asks now gets the answer instead of the
    // lock (read and lock are one call: no window to fetch the name a second time).
    let lock_key = Keys::new("t:").name(SV, "carol").lock;
    let mut raw = redis.raw().await;
    assert!(!raw.exists::<_, bool>(&lock_key).await.unwrap());
    assert_eq!(b.flight_lock(SV, "carol").await, Lock::Ready(entry.clone()));
    // A waiter with nothing coming and the lock held times out at its deadline.
    let started = Instant::now();
    let got = a
        .flight_wait(SV, "carol", started + Duration::from_millis(150))
        .await;
    assert_eq!(got, Wait::Entry(found_body_of(&a, "carol").await));
    let got = a
        .flight_wait(SV, "dave", started + Duration::from_millis(150))
        .await;
    assert_eq!(
        got,
        Wait::LockGone,
        "no lock, no entry: the caller may fetch"
    );
}

async fn found_body_of(f: &Fleet, name: &str) -> SharedEntry {
    f.cache_get(SV, name).await.unwrap().unwrap()
}

/// A handle whose flight locks live `lease` unless renewed.
fn with_lease(f: Fleet, lease: Duration) -> Fleet {
    f.with_lease(lease)
}

#[tokio::test]
async fn a_holder_that_dies_delays_waiters_by_at_most_its_lease() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let lease = Duration::from_millis(300);
    let a = with_lease(fleet_on(&redis, 500), lease);
    let b = with_lease(fleet_on(&redis, 500), lease);
    assert!(matches!(a.flight_lock(SV, "zed").await, Lock::Acquired(_)));
    drop(a); // the holder dies without writing or releasing
    let started = Instant::now();
    let got = b
        .flight_wait(SV, "zed", started + Duration::from_secs(5))
        .await;
    let waited = started.elapsed();
    assert_eq!(got, Wait::LockGone);
    assert!(waited >= Duration::from_millis(200), "{waited:?}");
    assert!(waited <= lease + Duration::from_millis(200), "{waited:?}");
    assert!(matches!(b.flight_lock(SV, "zed").await, Lock::Acquired(_)));
    // A lock held until the deadline: the waiter gives up at the deadline.
    let started = Instant::now();
    let got = a_wait_timeout(&b, started).await;
    assert_eq!(got, Wait::TimedOut);
    assert!(started.elapsed() < Duration::from_millis(250));
}

#[tokio::test]
async fn a_waiter_told_the_lock_is_gone_can_take_it() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let b = fleet_on(&redis, 3_000);
    let lock = b.keys().expect("on Redis").name(SV, "ivy").lock;
    let mut raw = redis.raw().await;
    // A lock a few milliseconds from lapsing, watched as closely as Redis answers: the first
    // "gone" comes in its last millisecond unless both scripts agree on what a live lock is.
    for round in 0..40 {
        let _: () = redis::cmd("SET")
            .arg(&lock)
            .arg("another-holder")
            .arg("PX")
            .arg(3)
            .query_async(&mut raw)
            .await
            .expect("SET");
        loop {
            match b.flight_wait(SV, "ivy", Instant::now()).await {
                Wait::TimedOut => continue,
                Wait::LockGone => break,
                other => panic!("round {round}: {other:?}"),
            }
        }
        match b.flight_lock(SV, "ivy").await {
            Lock::Acquired(token) => {
                assert_eq!(b.flight_release(SV, "ivy", &token).await, Some(true));
            }
            other => panic!("round {round}: told the lock is gone, then {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_live_holder_keeps_its_lock_for_as_long_as_its_work_runs() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let lease = Duration::from_millis(300);
    // Call deadlines far above the lease: this test is about renewals, and on a loaded machine
    // a 500 ms stall of the test's thread would otherwise read as Redis being down.
    let a = with_lease(fleet_on(&redis, 3_000), lease);
    let b = with_lease(fleet_on(&redis, 3_000), lease);
    let Lock::Acquired(token) = a.flight_lock(SV, "kit").await else {
        panic!("first")
    };
    // Work three leases long: the lock is renewed all along; the waiter sees it held.
    let work = a.hold(SV, "kit", &token, async {
        tokio::time::sleep(lease * 3).await;
        7
    });
    let waiting = b.flight_wait(SV, "kit", Instant::now() + lease * 3);
    let (done, waited) = tokio::join!(work, waiting);
    assert_eq!(done, 7);
    assert_eq!(waited, Wait::TimedOut, "a live holder's lock never lapsed");
    // The renewals stop with the work: unreleased, the lock lapses within a lease.
    let started = Instant::now();
    let got = b
        .flight_wait(SV, "kit", started + Duration::from_secs(5))
        .await;
    assert_eq!(got, Wait::LockGone);
    // Within a lease of the last renewal (twice that allows for a loaded machine; a lock that
    // outlived its work would stay the full 5 s).
    let lapsed = started.elapsed();
    assert!(lapsed <= lease * 2, "{lapsed:?}");
    // A holder whose lock another flight took stops renewing it and leaves it alone.
    let taken = match b.flight_lock(SV, "kit").await {
        Lock::Acquired(taken) => taken,
        other => panic!("the lapsed lock is free, yet: {other:?}"),
    };
    a.hold(SV, "kit", &token, tokio::time::sleep(lease / 2))
        .await;
    assert_eq!(a.flight_release(SV, "kit", &token).await, Some(false));
    assert_eq!(b.flight_release(SV, "kit", &taken).await, Some(true));
}

#[tokio::test]
async fn the_default_lease_spans_renewals_and_redis_timeouts() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    assert_eq!(fleet_on(&redis, 200).lease(), flight::MIN_LEASE);
    assert_eq!(fleet_on(&redis, 1_000).lease(), Duration::from_secs(8));
}

async fn a_wait_timeout(f: &Fleet, started: Instant) -> Wait {
    f.flight_wait(SV, "zed", started + Duration::from_millis(100))
        .await
}

#[tokio::test]
async fn outbound_reservations_space_two_replicas_at_the_fleet_rate() {
    let Some((_redis, a, b)) = two_replicas() else {
        return;
    };
    let start = Instant::now();
    let mut sends = Vec::new();
    // 20 a second (one every 50 ms), burst 2.
    for i in 0..10 {
        let replica = if i % 2 == 0 { &a } else { &b };
        let asked = Instant::now();
        let Some(Reservation::Wait(wait)) = replica
            .outbound_reserve(SV, 20.0, 2, Duration::from_secs(5))
            .await
        else {
            panic!("reservation {i}");
        };
        sends.push((asked + wait).duration_since(start));
    }
    assert!(
        sends[1] < Duration::from_millis(30),
        "burst of 2: {sends:?}"
    );
    // Each send time is read on this side, so it carries one call's latency of jitter (tens of
    // milliseconds on a loaded machine): the spacing is judged over eight intervals, not one.
    let mean = (sends[9] - sends[1]) / 8;
    assert!(
        mean >= Duration::from_millis(42) && mean <= Duration::from_millis(65),
        "{mean:?} {sends:?}"
    );
    // Two a second, burst 1: the third caller, accepting 100 ms, is refused and takes nothing.
    let slow = |f: &Fleet, max: u64| {
        let f = f.clone();
        async move {
            f.outbound_reserve("photo-share", 2.0, 1, Duration::from_millis(max))
                .await
                .expect("redis up")
        }
    };
    assert_eq!(slow(&a, 5_000).await, Reservation::Wait(Duration::ZERO));
    let Reservation::Wait(second) = slow(&b, 5_000).await else {
        panic!("second")
    };
    assert!(second > Duration::from_millis(350), "{second:?}");
    let Reservation::TooLong(refused) = slow(&a, 100).await else {
        panic!("must be refused")
    };
    assert!(refused > Duration::from_millis(850), "{refused:?}");
    let Reservation::Wait(third) = slow(&b, 5_000).await else {
        panic!("third")
    };
    assert!(
        third <= refused && third > Duration::from_millis(700),
        "a refusal must not take a slot: {third:?} after {refused:?}"
    );
}

#[tokio::test]
async fn a_breaker_and_proxy_rests_are_shared() {
    let Some((_redis, a, b)) = two_replicas() else {
        return;
    };
    assert_eq!(b.breaker_open_for(SV).await, Some(None));
    a.breaker_open(SV, Duration::from_millis(800))
        .await
        .unwrap();
    a.breaker_open(SV, Duration::from_millis(100))
        .await
        .unwrap();
    let left = b.breaker_open_for(SV).await.unwrap().expect("open for all");
    assert!(
        left > Duration::from_millis(600),
        "a shorter rest must not shorten: {left:?}"
    );
    assert_eq!(b.breaker_open_for("photo-share").await, Some(None));
    a.proxy_rest(SV, 2, Duration::from_secs(1)).await.unwrap();
    let rests = b.proxy_resting(SV, &[0, 1, 2]).await.unwrap();
    assert_eq!(rests[..2], [None, None]);
    assert!(rests[2].is_some_and(|d| d > Duration::from_millis(800)));
    assert_eq!(b.proxy_resting("photo-share", &[2]).await, Some(vec![None]));
    tokio::time::sleep(Duration::from_millis(850)).await;
    assert_eq!(b.breaker_open_for(SV).await, Some(None));
}

/// Polls `quota_check` until the fleet uses Redis again, which must be within 5 s.
async fn back_within_5s(f: &Fleet) {
    let started = Instant::now();
    while f.quota_check("probe", 6000, 100).await.is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "never came back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let back = started.elapsed();
    assert!(back < Duration::from_secs(5), "back in use after {back:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_replica_notices_redis_leave_and_return() {
    let Some(mut redis) = test_redis::start() else {
        return;
    };
    let f = fleet_on(&redis, 200);
    let settle = |want: bool| {
        let f = f.clone();
        async move {
            let started = Instant::now();
            while f.is_up() != want {
                assert!(
                    started.elapsed() < Duration::from_secs(5),
                    "is_up stayed {} for 5 s without a single request",
                    !want
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    settle(true).await;
    redis.kill();
    settle(false).await;
    redis.restart();
    settle(true).await;
}

#[tokio::test]
async fn redis_killed_then_restarted_is_skipped_then_used_again() {
    let Some(mut redis) = test_redis::start() else {
        return;
    };
    let timeout = Duration::from_millis(300);
    let f = fleet_on(&redis, 300);
    assert!(f.quota_check("k", 60, 5).await.is_some());
    redis.kill();
    let started = Instant::now();
    assert_eq!(
        f.cache_get(SV, "x").await,
        None,
        "unavailable, not an error"
    );
    let first = started.elapsed();
    assert!(first <= timeout + Duration::from_millis(150), "{first:?}");
    let started = Instant::now();
    assert_eq!(f.quota_check("k", 60, 5).await, None);
    assert_eq!(f.flight_lock(SV, "x").await, Lock::Unavailable);
    let skipped = started.elapsed();
    assert!(
        skipped < Duration::from_millis(20),
        "skip Redis after a failure: {skipped:?}"
    );
    assert!(!f.is_up());
    redis.restart();
    back_within_5s(&f).await;
    assert!(f.is_up());
    assert_eq!(f.cache_get(SV, "x").await, Some(None));
}

#[tokio::test]
async fn redis_paused_answers_unavailable_within_the_timeout_then_recovers() {
    let Some(mut redis) = test_redis::start() else {
        return;
    };
    let timeout = Duration::from_millis(250);
    let f = fleet_on(&redis, 250);
    assert!(f.cache_get(SV, "x").await.is_some());
    redis.pause();
    let started = Instant::now();
    assert_eq!(f.quota_check("k", 60, 5).await, None);
    let first = started.elapsed();
    assert!(first >= timeout - Duration::from_millis(10), "{first:?}");
    assert!(first <= timeout + Duration::from_millis(150), "{first:?}");
    let started = Instant::now();
    for _ in 0..100 {
        assert_eq!(f.cache_get(SV, "x").await, None);
    }
    assert!(
        started.elapsed() < Duration::from_millis(50),
        "{:?}",
        started.elapsed()
    );
    redis.resume();
    back_within_5s(&f).await;
}

#[tokio::test]
async fn a_replica_started_while_redis_is_down_uses_it_once_it_is_up() {
    let Some(mut redis) = test_redis::start() else {
        return;
    };
    redis.kill();
    let f = fleet_at(&redis.url(), 200);
    assert_eq!(f.quota_check("k", 60, 5).await, None);
    redis.restart();
    back_within_5s(&f).await;
    // Nothing listening at all: the handle is still built at once.
    let nowhere = fleet_at(&format!("redis://127.0.0.1:{}/", free_port()), 200);
    assert_eq!(nowhere.cache_get(SV, "x").await, None);
}

// --- a real 3-node Redis Cluster -------------------------------------------------------------

#[tokio::test]
async fn every_call_works_on_a_cluster_and_a_names_keys_share_one_slot() {
    let Some(cluster) = test_redis::start_cluster() else {
        return;
    };
    let (a, b) = (fleet_at(&cluster.url(), 500), fleet_at(&cluster.url(), 500));
    let ttl = Duration::from_secs(10);
    let id = key_id(&[9; 32]);
    assert!(
        a.quota_check(&id, 600, 5)
            .await
            .expect("cluster up")
            .allowed
    );
    assert_eq!(b.quota_check(&id, 600, 5).await.unwrap().remaining, 3);
    let Lock::Acquired(token) = a.flight_lock(SV, "erin").await else {
        panic!("first")
    };
    assert_eq!(b.flight_lock(SV, "erin").await, Lock::HeldByOther);
    let entry = found("{\"name\":\"erin\"}");
    a.cache_put(SV, "erin", &entry, ttl, ttl, Some(&token))
        .await
        .expect("put entry and stale copy, release the lock: one slot");
    let deadline = Instant::now() + Duration::from_secs(1);
    assert_eq!(
        b.flight_wait(SV, "erin", deadline).await,
        Wait::Entry(entry.clone())
    );
    assert_eq!(b.cache_get(SV, "erin").await, Some(Some(entry.clone())));
    assert_eq!(b.stale_get(SV, "erin").await, Some(Some(entry)));
    assert_eq!(a.flight_release(SV, "erin", &token).await, Some(false));
    assert!(matches!(
        b.outbound_reserve(SV, 10.0, 2, ttl).await,
        Some(Reservation::Wait(_))
    ));
    a.breaker_open(SV, ttl).await.expect("breaker");
    assert!(b.breaker_open_for(SV).await.unwrap().is_some());
    a.proxy_rest(SV, 1, ttl).await.expect("proxy rest");
    let rests = b.proxy_resting(SV, &[0, 1, 2]).await.expect("one slot");
    assert!(rests[0].is_none() && rests[1].is_some() && rests[2].is_none());

    let keys = cluster.keys_on_nodes("t:*");
    let all: Vec<&(String, i64)> = keys.iter().flatten().collect();
    // At least the entry, its stale copy, the breaker and the rest (the others are short-lived).
    assert!(all.len() >= 4, "{all:?}");
    for (key, ttl) in &all {
        assert!(*ttl > 0, "{key} has no expiry");
    }
    let name = Keys::new("t:").name(SV, "erin");
    let slot = cluster.keyslot(&name.entry);
    assert_eq!(slot, cluster.keyslot(&name.stale));
    assert_eq!(slot, cluster.keyslot(&name.lock));
    assert_ne!(slot, cluster.keyslot(&Keys::new("t:").quota(&id)));
    assert!(
        keys.iter().filter(|k| !k.is_empty()).count() >= 2,
        "{keys:?}"
    );
}

/// The node that holds `key`.
fn node_of(cluster: &test_redis::TestCluster, key: &str) -> usize {
    cluster
        .keys_on_nodes("t:*")
        .iter()
        .position(|keys| keys.iter().any(|(k, _)| k == key))
        .expect("the key is on a node")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_node_is_redis_down_for_its_calls_and_used_again_once_back() {
    let Some(mut cluster) = test_redis::start_cluster() else {
        return;
    };
    let timeout = Duration::from_millis(200);
    let f = fleet_at(&cluster.url(), 200);
    let entry = found("{\"name\":\"fred\"}");
    let ttl = Duration::from_secs(60);
    f.cache_put(SV, "fred", &entry, ttl, ttl, None)
        .await
        .unwrap();
    let victim = node_of(&cluster, &Keys::new("t:").name(SV, "fred").entry);
    cluster.kill_node(victim);
    let started = Instant::now();
    assert_eq!(
        f.cache_get(SV, "fred").await,
        None,
        "unavailable, not an error"
    );
    let first = started.elapsed();
    assert!(first <= timeout + Duration::from_millis(150), "{first:?}");
    assert!(!f.is_up());
    let cluster = cluster.off_runtime(move |c| c.restart_node(victim)).await;
    let started = Instant::now();
    while f.cache_get(SV, "fred").await != Some(None) {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the restarted node is not used again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(f.is_up());
    // The whole cluster down, then back (empty): the same handle finds it again.
    down_then_back(cluster, &f).await;
}

/// Kills every node of `cluster`: `f` has no Redis; then [`restarted_and_back`].
async fn down_then_back(mut cluster: test_redis::TestCluster, f: &Fleet) {
    cluster.kill_all();
    assert_eq!(f.quota_check("k", 60, 5).await, None);
    restarted_and_back(cluster, f).await;
}

/// Restarts every node of `cluster` (empty): `f` uses them again within 5 s.
async fn restarted_and_back(cluster: test_redis::TestCluster, f: &Fleet) {
    let _cluster = cluster.off_runtime(move |c| c.restart_all()).await;
    back_within_5s(f).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_started_while_the_cluster_is_down_uses_it_once_it_is_up() {
    let Some(mut cluster) = test_redis::start_cluster() else {
        return;
    };
    cluster.kill_all();
    let f = fleet_at(&cluster.url(), 200);
    assert_eq!(f.quota_check("k", 60, 5).await, None);
    restarted_and_back(cluster, &f).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_node_answers_unavailable_within_the_timeout_then_recovers() {
    let Some(mut cluster) = test_redis::start_cluster() else {
        return;
    };
    let timeout = Duration::from_millis(200);
    let f = fleet_at(&cluster.url(), 200);
    let ttl = Duration::from_secs(60);
    f.cache_put(SV, "gina", &not_found(), ttl, ttl, None)
        .await
        .unwrap();
    let victim = node_of(&cluster, &Keys::new("t:").name(SV, "gina").entry);
    cluster.pause_node(victim);
    let started = Instant::now();
    assert_eq!(f.cache_get(SV, "gina").await, None);
    let first = started.elapsed();
    assert!(first <= timeout + Duration::from_millis(150), "{first:?}");
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(f.cache_get(SV, "gina").await, None, "still unavailable");
    let cluster = cluster.off_runtime(move |c| c.resume_node(victim)).await;
    let started = Instant::now();
    while f.cache_get(SV, "gina").await.is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the resumed node is not used again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(f.is_up());
    drop(cluster);
}

#[tokio::test]
async fn a_holder_whose_lock_lapsed_cannot_overwrite_a_newer_answer() {
    let Some((redis, late, next)) = two_replicas() else {
        return;
    };
    let ttl = Duration::from_secs(30);
    let Lock::Acquired(old) = late.flight_lock(SV, "ivy").await else {
        panic!("first")
    };
    // The holder stalls; its lock lapses (here: goes) and another flight takes the name.
    let mut raw = redis.raw().await;
    let lock = late.keys().expect("on Redis").name(SV, "ivy").lock;
    let _: () = raw.del(&lock).await.unwrap();
    let Lock::Acquired(new) = next.flight_lock(SV, "ivy").await else {
        panic!("the lapsed lock is free")
    };
    let stale_answer = found("{\"old\":1}");
    let newer_answer = found("{\"new\":1}");
    // While the new flight holds the lock, the old holder's answer is not stored.
    let put = late
        .cache_put(SV, "ivy", &stale_answer, ttl, ttl, Some(&old))
        .await;
    assert_eq!(put, Some(Put::Superseded));
    assert_eq!(
        late.cache_get(SV, "ivy").await,
        Some(None),
        "stored over a live flight"
    );
    assert!(
        raw.exists::<_, bool>(&lock).await.unwrap(),
        "the new flight's lock stays"
    );
    let put = next
        .cache_put(SV, "ivy", &newer_answer, ttl, ttl, Some(&new))
        .await;
    assert_eq!(put, Some(Put::Stored));
    // Nor after the new flight stored its answer and left.
    let put = late
        .cache_put(SV, "ivy", &stale_answer, ttl, ttl, Some(&old))
        .await;
    assert_eq!(put, Some(Put::Superseded));
    assert_eq!(
        late.cache_get(SV, "ivy").await,
        Some(Some(newer_answer.clone()))
    );
    assert_eq!(late.stale_get(SV, "ivy").await, Some(Some(newer_answer)));
    // A holder whose lease lapsed with nobody taking over still shares its answer.
    let _: () = raw
        .del(late.keys().expect("on Redis").name(SV, "ivy").entry)
        .await
        .unwrap();
    let put = late
        .cache_put(SV, "ivy", &stale_answer, ttl, ttl, Some(&old))
        .await;
    assert_eq!(put, Some(Put::Stored));
}
