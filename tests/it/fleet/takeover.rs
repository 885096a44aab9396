//! A name's flight outlives neither its holder nor a blip in the holder's Redis: a replica that
//! is a real process killed with SIGKILL, or stopped with SIGTERM, while it fetches a name,
//! and a replica whose Redis is cut (a relay in front of it) while it fetches: the other
//! replicas take the name over within seconds, and their callers get the profile, never an
//! error for as long as the dead holder's lock would once have lived.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use stand_in::short_video as sv;

use crate::support::fleet::sample_names;
use crate::support::relay::Relay;
use crate::support::routers::slow;
use crate::support::test_redis::{self, TestRedis};
use crate::support::{
    AppBuilder, KEY, ShortVideo, TestApp, Upstream, eventually, profile_path, replica_process,
    spawn_upstream,
};

/// The longest a takeover may take here: the lock's lease (2 s at the default timeout) plus the
/// fetch and a loaded machine's slack. The lock once lived the flight deadline (14 s here).
const TAKEOVER: Duration = Duration::from_secs(5);
/// The callers' deadline in these tests: longer than a takeover, shorter than the old lock.
const REQUEST_TIMEOUT_MS: &str = "10000";

/// The short-video stand-in, except that the first `hang` requests are held for a minute: the
/// fetch of whoever asks first never ends while the test looks.
async fn upstream_that_holds_the_first(hang: usize) -> Upstream {
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

/// Starts a lookup of `name` on `apps[i]`; resolves to its status and when it came.
fn ask(apps: &Arc<Vec<TestApp>>, i: usize, name: &str) -> tokio::task::JoinHandle<(u16, Instant)> {
    let (apps, name) = (apps.clone(), name.to_owned());
    tokio::spawn(async move {
        let status = apps[i].lookup(ShortVideo, &name).await.status();
        (status, Instant::now())
    })
}

/// An app on `upstream` with the tests' callers' deadline, on the Redis at `url`.
fn patient(upstream: impl Into<crate::support::app::Target>, url: &str) -> AppBuilder {
    TestApp::on(upstream)
        .with(|s| s.server.request_timeout_ms = REQUEST_TIMEOUT_MS.parse().unwrap())
        .on_redis(url)
}

/// Three in-process replicas on `url` with the tests' callers' deadline.
async fn others(url: &str, upstream: &Upstream) -> Arc<Vec<TestApp>> {
    patient(upstream, url).replicas(3).await
}

/// A replica that is a real process on `url`, its upstream `upstream`, with the tests' callers'
/// deadline and `extra` settings.
fn process_holder(
    upstream: &Upstream,
    url: &str,
    extra: &[(&str, &str)],
) -> replica_process::ReplicaProcess {
    let mut env = vec![(
        "PROFILE_LOOKUP__SERVER__REQUEST_TIMEOUT_MS",
        REQUEST_TIMEOUT_MS,
    )];
    env.extend_from_slice(extra);
    replica_process::start(upstream.addr, url, &env)
}

/// Every one of `calls` (callers of the replicas that did not hold the name) gets the profile
/// within [`TAKEOVER`] of `since`, when `event` happened.
async fn answered_within_a_takeover(
    calls: [tokio::task::JoinHandle<(u16, Instant)>; 2],
    since: Instant,
    event: &str,
) {
    for call in calls {
        let (status, at) = call.await.unwrap();
        assert_eq!(status, 200, "a caller of another replica");
        let takeover = at.saturating_duration_since(since);
        eprintln!("answered {takeover:?} after {event}");
        assert!(takeover < TAKEOVER, "taken over {takeover:?} after {event}");
    }
}

/// After a takeover every replica serves the name at once, and the platform was asked once
/// more than the held request: by the replica that took over, for the whole fleet.
async fn every_replica_serves(apps: &[TestApp], name: &str, upstream: &Upstream) {
    for app in apps {
        app.lookup(ShortVideo, name).await.expect_status(200);
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
    let mut holder = process_holder(&upstream, url, &[]);
    let apps = others(url, &upstream).await;
    ask_and_forget(holder.url(&profile_path(ShortVideo, name)));
    lock_taken(held).await;
    let waiting = ask(&apps, 0, name);
    tokio::time::sleep(Duration::from_millis(300)).await;

    let killed = Instant::now();
    holder.kill();
    let late = ask(&apps, 1, name);
    answered_within_a_takeover([waiting, late], killed, "SIGKILL").await;
    every_replica_serves(&apps, name, &upstream).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_stopped_mid_flight_is_taken_over_within_seconds() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let upstream = upstream_that_holds_the_first(1).await;
    let name = &sample_names()[1];
    let mut holder = process_holder(
        &upstream,
        &redis.url(),
        &[("PROFILE_LOOKUP__SERVER__SHUTDOWN_GRACE_MS", "500")],
    );
    let apps = others(&redis.url(), &upstream).await;
    ask_and_forget(holder.url(&profile_path(ShortVideo, name)));
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
    answered_within_a_takeover([waiting, late], gone, "the stopped replica exited").await;
    every_replica_serves(&apps, name, &upstream).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_blip_on_the_holder_does_not_leave_its_lock_behind() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let upstream = spawn_upstream(slow(sv::router(), Duration::from_millis(800))).await;
    let relay = Relay::start(([127, 0, 0, 1], redis.port()).into()).await;
    let holder = patient(&upstream, &relay.redis_url()).replicas(3).await;
    let apps = others(&redis.url(), &upstream).await;
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
    answered_within_a_takeover([waiting, late], restored, "Redis came back to the holder").await;
    for app in apps.iter().chain(holder.iter()) {
        app.lookup(ShortVideo, name).await.expect_status(200);
    }
    assert!(
        eventually(Duration::from_secs(5), || holder
            .iter()
            .all(|a| a.state.fleet().is_up()))
        .await,
        "the holder is back on Redis"
    );
}
