//! Shared test rig. [`TestApp`] is the real app on a real loopback socket, started on an
//! upstream with the test settings adjusted by a closure, and [`Answer`] what it answered, with
//! the assertions the suites make of it; [`Upstream`] is a loopback platform that keeps what
//! it was asked, and [`routers`] the platforms the suites play beyond the stand-ins. Here too:
//! the real captures read in place, valid usernames for the extractors, waiting for a
//! condition, and tests that run alone. In submodules: the stand-ins' expected bodies as the
//! service's types, the loopback forward proxy, the TLS server that reads client fingerprints,
//! real Redis servers and clusters, a relay that cuts one replica's Redis, the fleet's
//! helpers, and the binary run as a process (`demo`, `serve`, replicas).

pub mod answer;
pub mod app;
pub mod binary;
pub mod capture_dir;
pub mod expected;
pub mod fingerprint;
pub mod fleet;
pub mod forward_proxy;
pub mod logs;
pub mod relay;
pub mod replica_process;
pub mod routers;
pub mod test_redis;
pub mod upstream;

use std::path::PathBuf;

use profile_lookup::config::Settings;
use profile_lookup::platform::Platform;
use profile_lookup::username::Username;

pub use answer::Answer;
pub use app::{AppBuilder, TestApp, profile_path};
// Only the browser-grade client's suites start apps from settings no builder makes.
#[cfg_attr(not(feature = "browser"), allow(unused_imports))]
pub use app::spawn_app;
pub use profile_lookup::platform::Platform::{PhotoShare, ShortVideo};
pub use upstream::{Upstream, closed_port, spawn_slow_not_found, spawn_upstream};

/// The key every test app accepts.
pub const KEY: &str = "test-key-0123456789abcdef";

/// The id the service gives `key` in its access log, spans and metrics: the first 8 hex digits
/// of the key's SHA-256, never the key.
pub fn key_id(key: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(key.as_bytes())[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Settings for tests: the test key, every registered platform at `upstream`, quick retries.
pub fn settings(upstream: std::net::SocketAddr) -> Settings {
    let mut s = Settings::default();
    s.auth.api_keys = vec![KEY.into()];
    let base = format!("http://{upstream}");
    for &platform in Platform::ALL {
        s.platform_mut(platform).base_url = base.parse().unwrap();
    }
    s.rate_limit.per_key_per_minute = 10_000;
    s.rate_limit.burst = 10_000;
    s.retry.base_delay_ms = 10;
    s.retry.max_delay_ms = 50;
    s.retry.max_total_ms = 2_000;
    s.upstream.timeout_ms = 2_000;
    // A response head within the whole time-out (the suites' slow upstreams answer after up
    // to 1.5 s); the suites about silences and deadlines set their own.
    s.upstream.head_timeout_ms = 1_900;
    s.breaker.failure_threshold = 0;
    // The suites written for the profile JSON and the page (their signals, retries, routes)
    // ask those two, as the platform answered before 2026-09; the guest suite
    // (`platform::photo_share::guest_2026_09`) and the demo's run the shipped order.
    // Their JSON still carried every post count, so no embed is asked to complete one.
    let photo_share = s.platform_mut(Platform::PhotoShare);
    photo_share.sources = vec!["json".into(), "page".into()];
    photo_share.post_count = Some(profile_lookup::config::PostCount::Skip);
    s
}

/// The shipped photo-share sources (`config/default.toml`): the logged-out query first, the
/// post count completed from the embed page.
pub fn shipped_photo_share_sources(s: &mut Settings) {
    let shipped = Settings::default();
    let photo_share = s.platform_mut(Platform::PhotoShare);
    photo_share.sources = shipped.platform(Platform::PhotoShare).sources.clone();
    photo_share.post_count = shipped.platform(Platform::PhotoShare).post_count;
}

/// Found profiles fresh for a second (no stale-while-revalidate window), then kept a minute
/// as stale copies: a test sees a stale answer (or its absence) after a short sleep.
pub fn stale_after_a_second(s: &mut Settings) {
    expires_in_a_second(s);
    s.cache.max_stale_seconds = 60;
}

/// Ten quota units for the test key, refilled one a minute: nothing comes back during a test,
/// so every unit spent shows.
pub fn ten_units(s: &mut Settings) {
    s.rate_limit.per_key_per_minute = 1;
    s.rate_limit.burst = 10;
}

/// A TTL of a second and no stale-while-revalidate window (`"auto"` would make it a second
/// too): a found profile expires a second after it was fetched, for the tests of what comes
/// after expiry (stale-if-error, gone stays gone).
pub fn expires_in_a_second(s: &mut Settings) {
    s.cache.ttl_seconds = 1;
    s.cache.revalidate_seconds = profile_lookup::config::Revalidate::Seconds(0);
}

/// The problem document of an error response, after checking its media type and fields.
pub async fn problem(response: reqwest::Response) -> serde_json::Value {
    Answer::read(response).await.problem()
}

/// Where the real third-party captures live; read in place, never copied into the project.
pub const REAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures/real");

/// The path of the real capture `rel`. Where the captures folder is provided every capture a
/// test names must be in it (a missing one fails the test); where it is not, `None` with a
/// notice, and the case is skipped (`.ci/run` says in its log which of the two it is).
pub fn real(rel: &str) -> Option<PathBuf> {
    let path = PathBuf::from(REAL).join(rel);
    if !real_captures_provided() {
        eprintln!("NOTICE: the real captures folder {REAL} is absent; skipping the case of {rel}");
        return None;
    }
    assert!(
        path.exists(),
        "real capture {} is missing from the provided captures folder",
        path.display()
    );
    Some(path)
}

/// Whether the real captures folder is provided on this machine.
pub fn real_captures_provided() -> bool {
    std::path::Path::new(REAL).is_dir()
}

/// The bytes of the real capture `rel`, or `None` (see [`real`]).
pub fn capture(rel: &str) -> Option<Vec<u8>> {
    real(rel).map(|path| std::fs::read(path).expect("a present capture is readable"))
}

/// A valid short-video username.
pub fn short_video_name(raw: &str) -> Username {
    Username::parse(Platform::ShortVideo, raw).expect("valid name")
}

/// A valid photo-share username.
pub fn photo_share_name(raw: &str) -> Username {
    Username::parse(Platform::PhotoShare, raw).expect("valid name")
}

/// Waits until `f` is true, for at most `limit`.
pub async fn eventually(limit: std::time::Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while tokio::time::Instant::now() < deadline {
        if f() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    f()
}

/// The value of `series` (a name with its labels, as `/metrics` writes them) in the metrics
/// text, or `None` when it is not there.
pub fn series_value(metrics: &str, series: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.parse().ok())
}

/// The sum of every series in the metrics text whose name and labels start with `prefix`
/// (`name{a="b"` counts every series with more labels after `a`): 0 when there is none.
pub fn series_sum(metrics: &str, prefix: &str) -> f64 {
    metrics
        .lines()
        .filter(|l| l.starts_with(prefix))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

/// Set in the child process [`own_process`] starts: the test runs there.
const OWN_PROCESS: &str = "PROFILE_LOOKUP_IT_OWN_PROCESS";

/// Runs the calling test again, alone, in a child process of this test binary, so that what
/// it reads of process-wide state is its own: the metrics registry above all, which every app
/// of one process records into, so that a neighbouring test could satisfy (or spoil) a metric
/// assertion. `test` is the test's path (`concat!(module_path!(), "::name")`).
///
/// Returns `true` in the child, where the test goes on; in the parent it waits for the child,
/// fails unless it passed, and returns `false`, the caller's cue to return:
/// `if !own_process(concat!(module_path!(), "::a_test")) { return; }`.
pub fn own_process(test: &str) -> bool {
    let name = test.trim_start_matches("it::");
    if std::env::var(OWN_PROCESS).is_ok_and(|running| running == name) {
        return true;
    }
    let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args([name, "--exact", "--test-threads=1"])
        .env(OWN_PROCESS, name)
        .output()
        .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{name} in a process of its own:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

/// A file holding `bytes` in the system's temp dir, named `{prefix}…{suffix}`, removed when the
/// returned handle drops: the tests write thousands of config files and pages per run, which
/// must not pile up in `/tmp`.
pub fn temp_file(prefix: &str, suffix: &str, bytes: &[u8]) -> tempfile::NamedTempFile {
    use std::io::Write;
    let mut file = tempfile::Builder::new()
        .prefix(prefix)
        .suffix(suffix)
        .tempfile()
        .expect("a temp file");
    file.write_all(bytes).expect("written");
    file.flush().expect("flushed");
    file
}

/// Held by every test that sets environment variables while it runs (see [`with_env`]).
pub static ENV: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `f` with `vars` set in this process's environment (and `PROFILE_LOOKUP_CONFIG`
/// unset), given the path of a config file holding `toml` when there is one (named
/// `{prefix}….toml`); unsets `vars` after. Holds [`ENV`] throughout: environment variables are
/// process-wide, so the tests that use this run in a process of their own ([`own_process`]) and
/// one at a time in it.
pub fn with_env<T>(
    vars: &[(impl AsRef<str>, impl AsRef<str>)],
    (prefix, toml): (&str, Option<&str>),
    f: impl FnOnce(Option<&std::path::Path>) -> T,
) -> T {
    let _guard = ENV.lock().unwrap_or_else(|p| p.into_inner());
    let file = toml.map(|toml| temp_file(prefix, ".toml", toml.as_bytes()));
    // SAFETY: the tests that set variables run alone in their process and hold ENV.
    unsafe {
        std::env::remove_var("PROFILE_LOOKUP_CONFIG");
        for (k, v) in vars {
            std::env::set_var(k.as_ref(), v.as_ref());
        }
    }
    let result = f(file.as_ref().map(|f| f.path()));
    // SAFETY: as above.
    unsafe {
        for (k, _) in vars {
            std::env::remove_var(k.as_ref());
        }
    }
    result
}

/// Sends SIGTERM to `child` (a `profile-lookup` process the test started) and waits for it:
/// what it wrote while serving, and how it exited.
pub fn terminate(child: std::process::Child) -> std::process::Output {
    let pid = child.id().to_string();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill(1) runs");
    assert!(status.success(), "kill -TERM {pid} failed");
    child.wait_with_output().expect("the child's output")
}
