//! Shared test rig: the real app on a real loopback socket, loopback upstreams, the real
//! captures read in place, and valid usernames for the extractors; and, in submodules, the
//! stand-ins' expected bodies as the service's types, the loopback forward proxy, the TLS server that reads client fingerprints, real Redis servers
//! and clusters, a relay that cuts one replica's Redis, and replicas as real `serve` processes.

pub mod expected;
pub mod fingerprint;
pub mod forward_proxy;
pub mod relay;
pub mod replica_process;
pub mod test_redis;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Router;
use profile_lookup::AppState;
use profile_lookup::config::Settings;
use profile_lookup::platform::Platform;
use profile_lookup::username::Username;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// The key every test app accepts.
pub const KEY: &str = "test-key-0123456789abcdef";

/// A running app: where it listens, its state, and a handle that stops it when dropped.
pub struct TestApp {
    pub addr: SocketAddr,
    pub state: AppState,
    pub client: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    pub task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl TestApp {
    /// The URL of `path` on this app.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// `GET path` with the test key.
    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client
            .get(self.url(path))
            .bearer_auth(KEY)
            .send()
            .await
            .expect("the app answers")
    }

    /// `GET path` with no key.
    pub async fn get_anonymous(&self, path: &str) -> reqwest::Response {
        self.client
            .get(self.url(path))
            .send()
            .await
            .expect("the app answers")
    }

    /// Triggers graceful shutdown and waits for `run` to return.
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.take().expect("running").await.expect("no panic")
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Settings for tests: the test key, every registered platform at `upstream`, quick retries.
pub fn settings(upstream: SocketAddr) -> Settings {
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
    s.breaker.failure_threshold = 0;
    s
}

/// Starts the app with `settings` on 127.0.0.1:0.
pub async fn spawn_app(settings: Settings) -> TestApp {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = AppState::new(settings).unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(profile_lookup::run(listener, state.clone(), async {
        let _ = stopped.await;
    }));
    TestApp {
        addr,
        state,
        client: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
        stop: Some(stop),
        task: Some(task),
    }
}

/// A loopback upstream that notes when each request it receives arrives.
pub struct Upstream {
    pub addr: SocketAddr,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Upstream {
    /// Requests received so far.
    pub fn hits(&self) -> usize {
        self.lock_arrivals().len()
    }

    /// When each request so far arrived, in order.
    pub fn arrivals(&self) -> Vec<Instant> {
        self.lock_arrivals().clone()
    }

    fn lock_arrivals(&self) -> std::sync::MutexGuard<'_, Vec<Instant>> {
        self.arrivals.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Serves `router` on 127.0.0.1:0, noting every request's arrival.
pub async fn spawn_upstream(router: Router) -> Upstream {
    let arrivals: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let log = arrivals.clone();
    let router = router.layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            // Noted as it arrives, before the handler runs: one lock, held for a push.
            log.lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(Instant::now());
            next.run(req)
        },
    ));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Upstream { addr, arrivals }
}

/// An upstream that holds every request for `delay`, then answers 404: a lookup that stays in
/// flight for a known time (shedding, hang-ups, shutdown, deadlines).
pub async fn spawn_slow_not_found(delay: std::time::Duration) -> Upstream {
    spawn_upstream(Router::new().fallback(move || async move {
        tokio::time::sleep(delay).await;
        axum::http::StatusCode::NOT_FOUND
    }))
    .await
}

/// A port on loopback where nothing listens.
pub async fn closed_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    addr
}

/// The problem document of an error response, after checking its media type.
pub async fn problem(response: reqwest::Response) -> serde_json::Value {
    let ct = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    assert_eq!(
        ct, "application/problem+json",
        "error bodies are problem documents"
    );
    let body: serde_json::Value = response.json().await.expect("a JSON problem body");
    for key in ["type", "title", "status", "detail", "code"] {
        assert!(body.get(key).is_some(), "problem lacks {key}: {body}");
    }
    body
}

/// Where the real third-party captures live; read in place, never copied into the project.
pub const REAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures/real");

/// The path of the real capture `rel`, or `None` with a notice when it is absent. Under
/// `CI=true` an absent capture fails the test instead of skipping it.
pub fn real(rel: &str) -> Option<PathBuf> {
    let path = PathBuf::from(REAL).join(rel);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "real capture {} is absent and CI=true",
        path.display()
    );
    eprintln!(
        "NOTICE: {} is absent; skipping this real-capture case",
        path.display()
    );
    None
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

/// Runs the `#[ignore]`d tests of `module` (a `module_path!()`) in a child process of this
/// test binary, one at a time, and fails unless exactly `expected` of them pass.
///
/// For tests that touch process-wide state (environment variables, the global log subscriber,
/// the metrics gauges): in the shared run they would race the other tests. `cargo test --
/// --ignored` runs them in the shared process instead, which is only safe on its own.
pub fn run_alone(module: &str, expected: usize) {
    let filter = format!("{}::", module.trim_start_matches("it::"));
    let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args([&filter, "--ignored", "--test-threads=1"])
        .output()
        .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("test result: ok. {expected} passed")),
        "the tests of {module} in their own process:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
