//! A name's flight outlives neither its holder nor a blip in the holder's Redis: a replica that
//! is a real process killed with SIGKILL, or stopped with SIGTERM, while it fetches a name,
//! and a replica whose Redis is cut (a relay in front of it) while it fetches: the other
//! replicas take the name over within seconds, and their callers get the profile, never an
//! error for as long as the dead holder's lock would once have lived.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use stand_in::short_video as sv;

use crate::fleet::shared::{profile, replicas, sample_names, slow_short_video};
use crate::support::relay::Relay;
use crate::support::test_redis::{self, TestRedis};
use crate::support::{KEY, TestApp, eventually, replica_process, settings, spawn_upstream};

/// The longest a takeover may take here: the lock's lease (2 s at the default timeout) plus the
/// fetch and a loaded machine's slack. The lock once lived the flight deadline (14 s here).
const TAKEOVER: Duration = Duration::from_secs(5);
/// The callers' deadline in these tests: longer than a takeover, shorter than the old lock.
const REQUEST_TIMEOUT_MS: &str = "10000";

/// The short-video stand-in, except that the first `hang` requests are held for a minute: the
/// fetch of whoever asks first never ends while the test looks.
async fn upstream_that_holds_the_first(hang: usize) -> crate::support::Upstream {
    let left = Arc::new(AtomicUsize::new(hang));
    spawn_upstream(sv::router().layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            let left = left.clone();
            async move {
                let held = left
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok();
                if held {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                }
                next.run(req).await
            }
        },
    )))
    .await
}

/// The fleet lock of `name` (under the tests' prefix).
fn lock_key(name: &str) -> String {
    format!("it:{{n:short-video:{name}}}:l")
}

/// Waits until `held` says someone holds the lock (a blocking look at Redis, off the runtime).
async fn lock_taken(held: impl Fn() -> bool + Send + 'static) {
    let seen = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if held() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    });
    assert!(seen.await.unwrap(), "nobody took the name's lock");
}

/// Whether `name`'s lock is in the single Redis at `redis`.
fn held_in(redis: &TestRedis, name: &str) -> impl Fn() -> bool + Send + 'static {
    let (url, key) = (redis.url(), lock_key(name));
    move || {
        let mut conn = redis::Client::open(url.as_str())
            .and_then(|c| c.get_connection())
            .expect("a connection to the test's Redis");
        redis::cmd("EXISTS")
            .arg(&key)
            .query::<bool>(&mut conn)
            .unwrap_or(false)
    }
}

/// Starts `GET name` on `url` (a process replica), whose answer nobody waits for.
fn ask_and_forget(url: String) {
    tokio::spawn(async move {
        let _ = reqwest::Client::new()
            .get(url)
            .bearer_auth(KEY)
            .send()
            .await;
    });
}

/// Starts `GET name` on `app`; resolves to its status and when it came.
fn ask(
    apps: &Arc<Vec<TestApp>>,
    i: usize,
    name: &str,
) -> tokio::task::JoinHandle<(StatusCode, Instant)> {
    let (apps, path) = (apps.clone(), profile(name));
    tokio::spawn(async move {
        let status = apps[i].get(&path).await.status();
        (status, Instant::now())
    })
}

/// Three in-process replicas on `url` with the tests' callers' deadline.
async fn others(url: &str, upstream: std::net::SocketAddr) -> Arc<Vec<TestApp>> {
    let mut base = settings(upstream);
    base.server.request_timeout_ms = REQUEST_TIMEOUT_MS.parse().unwrap();
    Arc::new(replicas(url, &base).await)
}

/// After a takeover every replica serves the name at once, and the platform was asked once
/// more than the held request: by the replica that took over, for the whole fleet.
async fn every_replica_serves(apps: &[TestApp], name: &str, upstream: &crate::support::Upstream) {
    for app in apps {
        assert_eq!(app.get(&profile(name)).await.status(), 200);
    }
    assert_eq!(
        upstream.hits(),
        2,
        "the held request and one takeover fetch"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_killed_mid_flight_is_taken_over_within_seconds() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let name = &sample_names()[0];
    let held = held_in(&redis, name);
    a_killed_holder_is_taken_over(&redis.url(), name, held).await;
}

/// A process replica on `url` (a Redis or a cluster's seeds) takes `name`'s lock (`held` tells
/// when) and is killed with SIGKILL mid-fetch; callers of the other replicas, one waiting
/// already and one arriving after the kill, get the profile within [`TAKEOVER`].
pub(crate) async fn a_killed_holder_is_taken_over(
    url: &str,
    name: &str,
    held: impl Fn() -> bool + Send + 'static,
) {
    let upstream = upstream_that_holds_the_first(1).await;
    let mut holder = replica_process::start(
        upstream.addr,
        url,
        &[(
            "PROFILE_LOOKUP__SERVER__REQUEST_TIMEOUT_MS",
            REQUEST_TIMEOUT_MS,
        )],
    );
    let apps = others(url, upstream.addr).await;
    ask_and_forget(holder.url(&profile(name)));
    lock_taken(held).await;
    let waiting = ask(&apps, 0, name);
    tokio::time::sleep(Duration::from_millis(300)).await;

    let killed = Instant::now();
    holder.kill();
    let late = ask(&apps, 1, name);
    for call in [waiting, late] {
        let (status, at) = call.await.unwrap();
        assert_eq!(status, 200, "a caller of another replica");
        let takeover = at.duration_since(killed);
        eprintln!("answered {takeover:?} after SIGKILL");
        assert!(takeover < TAKEOVER, "taken over after {takeover:?}");
    }
    every_replica_serves(&apps, name, &upstream).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_stopped_mid_flight_is_taken_over_within_seconds() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let upstream = upstream_that_holds_the_first(1).await;
    let name = &sample_names()[1];
    let mut holder = replica_process::start(
        upstream.addr,
        &redis.url(),
        &[
            (
                "PROFILE_LOOKUP__SERVER__REQUEST_TIMEOUT_MS",
                REQUEST_TIMEOUT_MS,
            ),
            ("PROFILE_LOOKUP__SERVER__SHUTDOWN_GRACE_MS", "500"),
        ],
    );
    let apps = others(&redis.url(), upstream.addr).await;
    ask_and_forget(holder.url(&profile(name)));
    lock_taken(held_in(&redis, name)).await;
    let waiting = ask(&apps, 0, name);
    tokio::time::sleep(Duration::from_millis(300)).await;

    holder.terminate();
    let exited = tokio::task::spawn_blocking(move || {
        let exited = holder.exited_within(Duration::from_secs(5));
        (exited, Instant::now())
    });
    let (exited, gone) = exited.await.unwrap();
    assert!(exited, "the stopped replica drained and exited");
    let late = ask(&apps, 1, name);
    for call in [waiting, late] {
        let (status, at) = call.await.unwrap();
        assert_eq!(status, 200, "a caller of another replica");
        let takeover = at.saturating_duration_since(gone);
        eprintln!("answered {takeover:?} after the stopped replica exited");
        assert!(takeover < TAKEOVER, "taken over after {takeover:?}");
    }
    every_replica_serves(&apps, name, &upstream).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_blip_on_the_holder_does_not_leave_its_lock_behind() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let upstream = slow_short_video(Duration::from_millis(800)).await;
    let relay = Relay::start(([127, 0, 0, 1], redis.port()).into()).await;
    let mut behind = settings(upstream.addr);
    behind.server.request_timeout_ms = REQUEST_TIMEOUT_MS.parse().unwrap();
    let holder = Arc::new(replicas(&relay.redis_url(), &behind).await);
    let apps = others(&redis.url(), upstream.addr).await;
    let name = &sample_names()[2];

    let holders_caller = ask(&holder, 0, name);
    lock_taken(held_in(&redis, name)).await;
    // The holder loses Redis for 1.2 s: its fetch (800 ms) ends and its answer is written
    // into the cut.
    relay.cut();
    let waiting = ask(&apps, 0, name);
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    relay.restore();
    let restored = Instant::now();

    let (status, _) = holders_caller.await.unwrap();
    assert_eq!(status, 200, "the holder answers its own caller");
    let late = ask(&apps, 1, name);
    for call in [waiting, late] {
        let (status, at) = call.await.unwrap();
        assert_eq!(status, 200, "a caller of another replica");
        let after = at.saturating_duration_since(restored);
        eprintln!("answered {after:?} after Redis came back to the holder");
        assert!(after < TAKEOVER, "answered {after:?} after the blip");
    }
    for app in apps.iter().chain(holder.iter()) {
        assert_eq!(app.get(&profile(name)).await.status(), 200);
    }
    assert!(
        eventually(Duration::from_secs(5), || holder
            .iter()
            .all(|a| a.state.fleet().is_up()))
        .await,
        "the holder is back on Redis"
    );
}
