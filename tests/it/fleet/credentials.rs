//! A Redis that refuses the fleet's credentials is a configuration error, not an outage (SPEC,
//! "A misconfigured Redis is loud"): `serve` refuses to start on one, naming `redis.url` and
//! never the password; one that starts refusing later is logged as an error and counted apart
//! from outages while lookups go on from the replica's own state. A Redis that cannot be
//! reached at start-up is no error: the replica starts on its own state, as before.

use std::process::Output;
use std::time::Duration;

use stand_in::short_video as sv;

use crate::support::binary::{Binary, Running};
use crate::support::test_redis::{self, TestRedis};
use crate::support::{self, KEY, ShortVideo};

/// The password of the tests' Redis; a wrong one is [`WRONG`].
const PASSWORD: &str = "Redis-pw-4kQ9-never-shown";
const WRONG: &str = "Wrong-pw-7Hx2-never-shown";

/// A config file for `serve` on `listen`, the short-video stand-in at `upstream`, Redis at
/// `redis_url`, JSON logs at `warn`.
fn config(
    listen: std::net::SocketAddr,
    upstream: std::net::SocketAddr,
    redis_url: &str,
) -> tempfile::NamedTempFile {
    support::temp_file(
        "profile-lookup-credentials-",
        ".toml",
        format!(
            "[server]\nlisten = \"{listen}\"\n\
             [auth]\napi_keys = [\"{KEY}\"]\n\
             [short_video]\nbase_url = \"http://{upstream}\"\n\
             [photo_share]\nbase_url = \"http://{upstream}\"\n\
             [redis]\nurl = \"{redis_url}\"\nkey_prefix = \"it:\"\n\
             [breaker]\nfailure_threshold = 0\n\
             [log]\nformat = \"json\"\nlevel = \"warn\"\n"
        )
        .as_bytes(),
    )
}

/// `redis://[:password@]127.0.0.1:PORT/` of `redis`.
fn url_with(redis: &TestRedis, password: Option<&str>) -> String {
    match password {
        Some(p) => format!("redis://:{p}@127.0.0.1:{}/", redis.port()),
        None => redis.url(),
    }
}

/// `serve` with Redis at `redis_url`, run until it exits by itself (at most 15 s).
async fn serve_exits(redis_url: &str) -> Output {
    let upstream = support::closed_port().await;
    let listen = support::closed_port().await;
    let file = config(listen, upstream, redis_url);
    Binary::serve_with(file.path())
        .output_within(Duration::from_secs(15))
        .unwrap_or_else(|| panic!("serve kept running on a Redis that refuses it ({redis_url})"))
}

/// `serve` on the short-video stand-in with Redis at `redis_url`, answering.
async fn serving(redis_url: &str) -> (Running, tempfile::NamedTempFile) {
    let upstream = support::spawn_upstream(sv::router()).await;
    let listen = support::closed_port().await;
    let file = config(listen, upstream.addr, redis_url);
    let running = Binary::serve_with(file.path())
        .logs()
        .start_serving(listen, KEY);
    (running, file)
}

/// The sum of `profile_lookup_redis_errors_total` over the series whose labels hold `label`.
fn redis_errors(metrics: &str, label: &str) -> f64 {
    metrics
        .lines()
        .filter(|l| l.starts_with("profile_lookup_redis_errors_total{") && l.contains(label))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// `/metrics` of `running` once it counts a `kind="auth"` Redis error (within 10 s).
async fn refusals_counted(running: &Running) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let metrics = running.get_anonymous("/metrics").await.text();
        if redis_errors(&metrics, "kind=\"auth\"") >= 1.0 {
            return metrics;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no kind=\"auth\" Redis error counted: {metrics}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn serve_refuses_to_start_when_redis_refuses_its_credentials() {
    let Some(redis) = test_redis::start_with(&["--requirepass", PASSWORD]) else {
        return;
    };
    for (case, url) in [
        ("no password", url_with(&redis, None)),
        ("a wrong password", url_with(&redis, Some(WRONG))),
    ] {
        let out = serve_exits(&url).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{case}: {stderr}");
        assert!(stderr.contains("redis.url"), "{case}: {stderr}");
        assert!(
            !stderr.contains(WRONG) && !stderr.contains(PASSWORD),
            "{case}: a password in the message: {stderr}"
        );
    }
    // The right password starts it.
    let (running, _file) = serving(&url_with(&redis, Some(PASSWORD))).await;
    running
        .lookup(ShortVideo, sv::PUBLIC_USER.unique_id)
        .await
        .expect_status(200);
    let metrics = running.get_anonymous("/metrics").await.text();
    assert!(metrics.contains("profile_lookup_redis_up 1"), "{metrics}");
}

#[tokio::test]
async fn serve_starts_on_its_own_state_when_redis_cannot_be_reached() {
    let closed = support::closed_port().await;
    let (running, _file) = serving(&format!("redis://{closed}/")).await;
    running
        .lookup(ShortVideo, sv::PUBLIC_USER.unique_id)
        .await
        .expect_status(200);
    let metrics = running.get_anonymous("/metrics").await.text();
    assert!(metrics.contains("profile_lookup_redis_up 0"), "{metrics}");
    assert_eq!(redis_errors(&metrics, "kind=\"auth\""), 0.0, "{metrics}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_set_while_serving_is_logged_as_an_error_and_counted_apart() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let (running, _file) = serving(&redis.url()).await;
    running
        .lookup(ShortVideo, sv::PUBLIC_USER.unique_id)
        .await
        .expect_status(200);
    // Redis now wants a password this replica does not have; its connection is dropped, so it
    // connects again without one.
    let mut conn = redis.raw().await;
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("requirepass")
        .arg(PASSWORD)
        .query_async(&mut conn)
        .await
        .unwrap();
    let _: Result<u64, _> = redis::cmd("CLIENT")
        .arg(&["KILL", "TYPE", "normal"])
        .query_async(&mut conn)
        .await;
    // Lookups go on, from this replica's own state.
    running
        .lookup(ShortVideo, sv::SMALL_USER.unique_id)
        .await
        .expect_status(200);
    let metrics = refusals_counted(&running).await;
    assert!(metrics.contains("profile_lookup_redis_up 0"), "{metrics}");
    running
        .lookup(ShortVideo, sv::PRIVATE_USER.unique_id)
        .await
        .expect_status(200);
    let out = running.stop().await;
    let log = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("\"level\":\"ERROR\"") && l.contains("redis.url"))
        .collect();
    assert!(
        !errors.is_empty(),
        "no error-level line naming redis.url: {log}"
    );
    assert!(!log.contains(PASSWORD), "the password in the log");
}

#[test]
fn a_replica_of_a_fleet_refuses_to_start_without_a_redis_url() {
    // An address this test holds: a replica that gets past its settings fails to listen there
    // and exits, instead of serving.
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = held.local_addr().unwrap().to_string();
    // What a fleet's deployment sets, with a secret file that lost `[redis] url`.
    let serve = |required: &str| {
        Binary::new(&["serve"])
            .env_remove("PROFILE_LOOKUP_CONFIG")
            .env("PROFILE_LOOKUP__AUTH__API_KEYS", KEY)
            .env("PROFILE_LOOKUP__SERVER__LISTEN", &taken)
            .env("PROFILE_LOOKUP__LOG__LEVEL", "warn")
            .env("PROFILE_LOOKUP__REDIS__REQUIRED", required)
            .output_within(Duration::from_secs(15))
            .expect("serve exits on its own")
    };
    let out = serve("true");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for needle in ["redis.required", "redis.url"] {
        assert!(stderr.contains(needle), "{needle:?} missing from {stderr}");
    }
    // Without it the same settings are accepted: the replica gets as far as the socket.
    let out = serve("false");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("redis.required"), "{stderr}");
    assert!(stderr.contains(&taken), "{stderr}");
}
