//! The real app on a real loopback socket, started the way nearly every suite starts it: an
//! upstream (a stand-in, a router of the test's own, or one already running), the test
//! settings adjusted by a closure, then lookups whose answers are read whole.
//!
//! ```ignore
//! let app = TestApp::on(sv::router()).with(|s| s.cache.enabled = false).start().await;
//! app.lookup(ShortVideo, "tiny.baker_7").await.expect_profile(&expected);
//! assert_eq!(app.hits(), 1);
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use profile_lookup::AppState;
use profile_lookup::config::Settings;
use profile_lookup::platform::Platform;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::answer::Answer;
use super::capture_dir::CaptureDir;
use super::forward_proxy::ForwardProxy;
use super::upstream::Upstream;
use super::{KEY, settings};

/// A running app: where it listens, its state, its upstream when it started one, and a handle
/// that stops it when dropped.
pub struct TestApp {
    pub addr: SocketAddr,
    pub state: AppState,
    pub client: reqwest::Client,
    upstream: Option<Upstream>,
    stop: Option<oneshot::Sender<()>>,
    pub task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

/// Where a [`TestApp`]'s platforms are.
pub enum Target {
    /// A router to serve as the upstream (a stand-in's, or the test's own).
    Serve(Router),
    /// An upstream already running (shared by several apps).
    Running(Upstream),
    /// An address that is no [`Upstream`] of the rig's (a closed port, a raw TCP server).
    At(SocketAddr),
}

impl From<Router> for Target {
    fn from(router: Router) -> Self {
        Target::Serve(router)
    }
}

impl From<&Upstream> for Target {
    fn from(upstream: &Upstream) -> Self {
        Target::Running(upstream.clone())
    }
}

impl From<SocketAddr> for Target {
    fn from(addr: SocketAddr) -> Self {
        Target::At(addr)
    }
}

/// A [`TestApp`] about to start: its upstream, bound already, and its settings.
pub struct AppBuilder {
    /// The upstream's router with the listener it will serve on, until it is started.
    pending: Option<(std::net::TcpListener, Router)>,
    upstream: Option<Upstream>,
    settings: Settings,
}

impl TestApp {
    /// An app whose platforms are all at `target`, with the test [`settings`].
    pub fn on(target: impl Into<Target>) -> AppBuilder {
        let (addr, pending, upstream) = match target.into() {
            Target::Serve(router) => {
                let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                listener.set_nonblocking(true).unwrap();
                let addr = listener.local_addr().unwrap();
                (addr, Some((listener, router)), None)
            }
            Target::Running(upstream) => (upstream.addr, None, Some(upstream)),
            Target::At(addr) => (addr, None, None),
        };
        AppBuilder {
            pending,
            upstream,
            settings: settings(addr),
        }
    }

    /// The upstream this app was started on.
    #[track_caller]
    pub fn upstream(&self) -> &Upstream {
        self.upstream
            .as_ref()
            .expect("the app was started on an address, not an upstream of the rig")
    }

    /// Requests the upstream has received so far.
    #[track_caller]
    pub fn hits(&self) -> usize {
        self.upstream().hits()
    }

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

    /// `GET path` with the test key, read whole.
    pub async fn answer(&self, path: &str) -> Answer {
        Answer::read(self.get(path).await).await
    }

    /// `GET path` with `key` (none when `None`) and `headers`, read whole.
    pub async fn get_as(&self, path: &str, key: Option<&str>, headers: &[(&str, &str)]) -> Answer {
        let mut request = self.client.get(self.url(path));
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        Answer::read(request.send().await.expect("the app answers")).await
    }

    /// Looks `name` up on `platform` with the test key.
    pub async fn lookup(&self, platform: Platform, name: &str) -> Answer {
        self.answer(&profile_path(platform, name)).await
    }

    /// Looks `name` up on `platform` with the test key; the answer, and how long it took.
    pub async fn timed_lookup(&self, platform: Platform, name: &str) -> (Answer, Duration) {
        let started = Instant::now();
        let answer = self.lookup(platform, name).await;
        (answer, started.elapsed())
    }

    /// Looks `name` up on `platform` with the test key and `Cache-Control: cache_control`.
    pub async fn lookup_with(&self, platform: Platform, name: &str, cache_control: &str) -> Answer {
        let cache_control = [("cache-control", cache_control)];
        self.get_as(&profile_path(platform, name), Some(KEY), &cache_control)
            .await
    }

    /// The text of `GET /metrics`.
    pub async fn metrics(&self) -> String {
        self.get_anonymous("/metrics").await.text().await.unwrap()
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

/// The lookup route of `name` on `platform`: `/short-video/profile/{name}`.
pub fn profile_path(platform: Platform, name: &str) -> String {
    format!("/{}/profile/{name}", platform.as_str())
}

impl AppBuilder {
    /// Adjusts the settings.
    pub fn with(mut self, adjust: impl FnOnce(&mut Settings)) -> Self {
        adjust(&mut self.settings);
        self
    }

    /// Shares the fleet's state through the Redis (or the cluster's seed list) at `url`, under
    /// the tests' key prefix `it:`.
    pub fn on_redis(self, url: &str) -> Self {
        self.with(|s| {
            s.redis.url = url.to_owned();
            s.redis.key_prefix = "it:".into();
        })
    }

    /// Sends every platform's requests through `proxies`, with the cache off (every lookup
    /// goes out).
    pub fn through<'p>(self, proxies: impl IntoIterator<Item = &'p ForwardProxy>) -> Self {
        self.with(|s| {
            s.cache.enabled = false;
            s.upstream.proxies = proxies.into_iter().map(ForwardProxy::url).collect();
        })
    }

    /// Captures unreadable documents into `dir`, checked (and created) as `serve` checks it.
    pub fn capturing_into(self, dir: &CaptureDir) -> Self {
        self.with(|s| {
            s.upstream.capture_dir = dir.path().to_owned();
            s.validate_for_serve()
                .expect("the capture folder is created and writable");
        })
    }

    /// The settings as they stand.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Starts the upstream (unless it runs already) and the app.
    pub async fn start(self) -> TestApp {
        let (upstream, settings) = self.upstream_and_settings();
        let mut app = spawn_app(settings).await;
        app.upstream = upstream;
        app
    }

    /// Starts the upstream (unless it runs already) and `n` apps on it with these settings:
    /// with [`AppBuilder::on_redis`], `n` replicas of one fleet. Shared, so that tasks of the
    /// test can call them at once.
    pub async fn replicas(self, n: usize) -> Arc<Vec<TestApp>> {
        let (upstream, settings) = self.upstream_and_settings();
        let mut apps = Vec::new();
        for _ in 0..n {
            let mut app = spawn_app(settings.clone()).await;
            app.upstream = upstream.clone();
            apps.push(app);
        }
        Arc::new(apps)
    }

    /// Starts the app with `server.max_in_flight` at `n` and fills it: `n` photo-share lookups,
    /// which the upstream must hold, have reached the upstream (within 5 s). The app, shared,
    /// and the lookups in flight (each resolving to its status).
    pub async fn start_full(self, n: usize) -> (Arc<TestApp>, Vec<tokio::task::JoinHandle<u16>>) {
        let app = Arc::new(self.with(|s| s.server.max_in_flight = n).start().await);
        let holders = (0..n)
            .map(|i| {
                let app = app.clone();
                let name = format!("held{i}");
                tokio::spawn(async move { app.lookup(Platform::PhotoShare, &name).await.status() })
            })
            .collect();
        let reached = super::eventually(Duration::from_secs(5), || app.hits() == n).await;
        assert!(reached, "the {n} lookups reached the upstream");
        (app, holders)
    }

    fn upstream_and_settings(self) -> (Option<Upstream>, Settings) {
        let upstream = match self.pending {
            Some((listener, router)) => Some(Upstream::serve_on(
                TcpListener::from_std(listener).expect("a tokio runtime"),
                router,
            )),
            None => self.upstream,
        };
        (upstream, self.settings)
    }
}

/// Starts the app with `settings` on 127.0.0.1:0 (for settings no [`TestApp::on`] builds).
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
        upstream: None,
        stop: Some(stop),
        task: Some(task),
    }
}
