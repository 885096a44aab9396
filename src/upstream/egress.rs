//! The ways out to one platform: one route per configured proxy, or the direct route when
//! none is configured. Each route is its own client (its own connections) and its own cookie
//! jar, built once at start.
//!
//! - **Sticky per lookup.** A lookup takes a [`RouteLease`] and sends every request (page,
//!   challenge answer, fallback, retries) through it, so the platform sees one address for
//!   the whole lookup.
//! - **In turn.** Leases take proxies round robin among those not resting.
//! - **Rests.** A block signal or a failure of the proxy itself (refused, reset, its CONNECT
//!   unanswered, 407; see [`is_proxy_failure`]) rests that proxy for
//!   `upstream.proxy_cooldown_seconds`
//!   ([`RouteLease::rest_and_switch`]), and the lease moves to another proxy at once. A
//!   lookup never goes back to a proxy it rested. When none is left the lookup answers 429
//!   `upstream_blocked` with `Retry-After` until the first proxy is back.
//! - **Fleet.** With `[redis]`, rests are written to and read from Redis (scope = platform,
//!   a proxy named by its position), so a proxy blocked on one replica rests on all; when Redis
//!   cannot be used the replica's own rests stand in.
//! - **The direct route** is never rested: there is nowhere else to go, so the retry backoff
//!   and the breaker handle its blocks as they always did.
//! - **Secrets.** A proxy URL is used to build its client and never kept as text: logs,
//!   metrics (label `proxy="0"`, `"1"`, …, `"direct"`), errors and Redis name a proxy by its
//!   position.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use reqwest::header::HeaderMap;
use url::Url;

use super::cookies::RouteCookies;
use super::roots::ClientBuildError;
use super::{Response, Upstream, UpstreamError};
use crate::config::proxies::parse_proxy;
use crate::config::{PlatformConfig, Settings};
use crate::fleet::Fleet;
use crate::telemetry;

/// The metric label of the direct route.
pub const DIRECT: &str = "direct";

/// One way out: its client, its cookies, its rest and its metrics.
struct Route {
    label: String,
    upstream: Upstream,
    cookies: RouteCookies,
    rest_until: Mutex<Option<Instant>>,
    requests: metrics::Counter,
    blocks: metrics::Counter,
    resting: metrics::Gauge,
}

impl Route {
    fn new(scope: &'static str, label: String, upstream: Upstream) -> Self {
        // Handles taken before the recorder exists would count nowhere.
        let _ = telemetry::metrics_handle();
        let (requests, blocks, resting) = telemetry::proxy_handles(scope, &label);
        resting.set(0.0);
        Self {
            label,
            upstream,
            cookies: RouteCookies::default(),
            rest_until: Mutex::new(None),
            requests,
            blocks,
            resting,
        }
    }

    fn rest_until(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.rest_until
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How long this route still rests, by the replica's own record.
    fn resting_for(&self, now: Instant) -> Option<Duration> {
        let until = (*self.rest_until())?;
        (until > now).then(|| until - now)
    }

    /// Rests the route until `now + rest`, unless it already rests longer.
    fn rest(&self, now: Instant, rest: Duration) {
        let mut until = self.rest_until();
        let new = now + rest;
        if until.is_none_or(|u| u < new) {
            *until = Some(new);
        }
        self.resting.set(1.0);
    }
}

/// The routes to one platform; one per source, built once.
pub struct Egress {
    scope: &'static str,
    routes: Vec<Route>,
    proxied: bool,
    /// Where the next turn starts: just after the route last handed out.
    next: Mutex<usize>,
    cooldown: Duration,
    fleet: Option<Fleet>,
}

impl std::fmt::Debug for Egress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Positions only: a client's own Debug could print its proxy's URL.
        f.debug_struct("Egress")
            .field("scope", &self.scope)
            .field("routes", &self.routes.len())
            .field("proxied", &self.proxied)
            .finish_non_exhaustive()
    }
}

/// Where a lease went after [`RouteLease::rest_and_switch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// No proxies are configured: nothing was rested, there is no other route.
    Direct,
    /// The proxy rests and the lease now goes through another one.
    Moved,
    /// The proxy rests and every other one does too: the first is back after this.
    AllResting(Duration),
}

impl Egress {
    /// The routes of platform `scope` (its metric label and Redis scope): its own `proxies`
    /// when it has any, else `upstream.proxies`, else the direct route. With a `fleet`, rests
    /// are shared with the other replicas.
    pub fn new(
        scope: &'static str,
        settings: &Settings,
        platform: &PlatformConfig,
        fleet: Option<Fleet>,
    ) -> Result<Self, ClientBuildError> {
        let list = if platform.proxies.is_empty() {
            &settings.upstream.proxies
        } else {
            &platform.proxies
        };
        let mut routes = Vec::with_capacity(list.len().max(1));
        for (at, raw) in list.iter().enumerate() {
            let url = parse_proxy(raw).map_err(|_| ClientBuildError::Proxy)?;
            let upstream = Upstream::via(settings, Some(&url))?;
            routes.push(Route::new(scope, at.to_string(), upstream));
        }
        let proxied = !routes.is_empty();
        if !proxied {
            routes.push(Route::new(
                scope,
                DIRECT.to_owned(),
                Upstream::new(settings)?,
            ));
        }
        Ok(Self {
            scope,
            routes,
            proxied,
            next: Mutex::new(0),
            cooldown: settings.upstream.proxy_cooldown(),
            fleet,
        })
    }

    /// Whether requests go through proxies (else straight out, on the direct route).
    pub fn is_proxied(&self) -> bool {
        self.proxied
    }

    /// The route a new lookup goes through: the next proxy in turn that is not resting, or
    /// `Err(wait)` when every proxy rests (the first is back after `wait`).
    pub async fn lease(&self) -> Result<RouteLease<'_>, Duration> {
        let first = self.pick(&[]).await?;
        Ok(RouteLease {
            routes: self,
            current: AtomicUsize::new(first),
            rested: Mutex::new(Vec::new()),
            exhausted: Mutex::new(None),
            sent: AtomicU32::new(0),
        })
    }

    /// The next route in turn that is not resting and not in `exclude`.
    async fn pick(&self, exclude: &[usize]) -> Result<usize, Duration> {
        if !self.proxied {
            return Ok(0);
        }
        let n = self.routes.len();
        let now = Instant::now();
        if let Some(fleet) = &self.fleet {
            let indexes: Vec<usize> = (0..n).collect();
            if let Some(shared) = fleet.proxy_resting(self.scope, &indexes).await {
                // A rest another replica began is this replica's too (and outlives Redis).
                for (route, left) in self.routes.iter().zip(shared) {
                    if let Some(left) = left {
                        route.rest(now, left);
                    }
                }
            }
        }
        let left: Vec<Option<Duration>> = self.routes.iter().map(|r| r.resting_for(now)).collect();
        for (route, left) in self.routes.iter().zip(&left) {
            route.resting.set(if left.is_some() { 1.0 } else { 0.0 });
        }
        // A resting proxy's turn passes to the next one, and the turn after that starts past
        // the one chosen, so the proxies not resting share the lookups evenly.
        let mut next = self
            .next
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let chosen = (0..n)
            .map(|k| (*next + k) % n)
            .find(|&i| left[i].is_none() && !exclude.contains(&i));
        match chosen {
            Some(i) => {
                *next = (i + 1) % n;
                Ok(i)
            }
            None => Err(left
                .iter()
                .flatten()
                .min()
                .copied()
                .unwrap_or(self.cooldown)),
        }
    }

    /// Rests route `index` (a proxy) for the cool-down, here and in the fleet.
    async fn rest(&self, index: usize, reason: &'static str) {
        let route = &self.routes[index];
        route.rest(Instant::now(), self.cooldown);
        tracing::info!(
            platform = self.scope,
            proxy = %route.label,
            reason,
            cooldown_s = self.cooldown.as_secs(),
            "proxy rests"
        );
        if let Some(fleet) = &self.fleet {
            // With Redis down the other replicas find out by themselves.
            let _ = fleet.proxy_rest(self.scope, index, self.cooldown).await;
        }
    }
}

/// One lookup's hold on a route: every request of the lookup goes through it, and it moves
/// to another proxy only when the current one is rested.
pub struct RouteLease<'a> {
    routes: &'a Egress,
    current: AtomicUsize,
    rested: Mutex<Vec<usize>>,
    exhausted: Mutex<Option<Duration>>,
    sent: AtomicU32,
}

impl std::fmt::Debug for RouteLease<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RouteLease")
            .field("route", &self.label())
            .finish_non_exhaustive()
    }
}

impl RouteLease<'_> {
    fn route(&self) -> &Route {
        &self.routes.routes[self.current.load(Ordering::Relaxed)]
    }

    /// The current route's metric label: its position (`"0"`, `"1"`, …) or `"direct"`.
    pub fn label(&self) -> &str {
        &self.route().label
    }

    /// Whether the lease goes through a proxy (else straight out).
    pub fn is_proxied(&self) -> bool {
        self.routes.proxied
    }

    /// How many requests went out on this lease.
    pub fn sent(&self) -> u32 {
        self.sent.load(Ordering::Relaxed)
    }

    /// `Some(wait)` once the lease ran out of proxies: every one rests, the first is back
    /// after `wait`. Nothing more is sent on it.
    pub fn exhausted(&self) -> Option<Duration> {
        *self
            .exhausted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sends `GET url` through the current route, with that route's cookies, and keeps the
    /// cookies the response sets in that route's jar.
    pub async fn get(&self, url: Url, mut headers: HeaderMap) -> Result<Response, UpstreamError> {
        let route = self.route();
        route.cookies.add_to(&url, &mut headers);
        self.sent.fetch_add(1, Ordering::Relaxed);
        route.requests.increment(1);
        let result = route.upstream.get(url, headers).await;
        if let Ok(response) = &result {
            route.cookies.keep_from(&response.url, &response.headers);
        }
        result
    }

    /// The value of cookie `name` the current route would send to `url`, if it holds one
    /// (e.g. `csrftoken`, which the photo-share JSON endpoint wants echoed in `X-CSRFToken`).
    pub fn cookie(&self, url: &Url, name: &str) -> Option<String> {
        self.route().cookies.value(url, name)
    }

    /// Keeps cookies obtained other than by `Set-Cookie` (the WAF answer the short-video
    /// challenge solver computes) in the current route's jar, for `url`'s host.
    pub fn remember_cookies(&self, url: &Url, cookies: &[(String, String)]) {
        let route = self.route();
        for (name, value) in cookies {
            route.cookies.remember(url, name, value);
        }
    }

    /// The current route met a block signal or failed (`reason`, for logs): on a proxy, rest
    /// it for the cool-down (fleet-wide with Redis) and move to the next proxy not resting
    /// that this lookup has not rested yet. This is the one way for a source to say "rest
    /// this proxy and try another" (a region lock, say); the sources' HTTP block signals and
    /// proxy failures already come here through `platform::send` and `platform::guarded`.
    ///
    /// On the direct route nothing rests ([`Switch::Direct`]); the block is counted.
    pub async fn rest_and_switch(&self, reason: &'static str) -> Switch {
        let index = self.current.load(Ordering::Relaxed);
        let route = &self.routes.routes[index];
        route.blocks.increment(1);
        if !self.routes.proxied {
            return Switch::Direct;
        }
        self.routes.rest(index, reason).await;
        let rested = {
            let mut rested = self
                .rested
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if !rested.contains(&index) {
                rested.push(index);
            }
            rested.clone()
        };
        match self.routes.pick(&rested).await {
            Ok(next) => {
                self.current.store(next, Ordering::Relaxed);
                Switch::Moved
            }
            Err(wait) => {
                *self
                    .exhausted
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(wait);
                Switch::AllResting(wait)
            }
        }
    }
}

/// Whether an error on a proxy route is the proxy's failure, so that the proxy rests: no
/// connection (refused, the CONNECT refused or answered 407, TLS), no connection within the
/// connect deadline (a CONNECT never answered), or a connection dropped before the whole
/// answer came (a working proxy answers a platform's failure with a 5xx status; a drop is the
/// proxy's, or the platform's refusal of that proxy's address).
///
/// A time-out after the request went through is not: the proxy carried the request and the
/// platform is slow, which it is through every proxy, so resting them would only turn one slow
/// page into 429s for every lookup. Such a lookup answers `upstream_unavailable`. Neither is an
/// oversized or undecodable body: the platform's doing.
pub fn is_proxy_failure(err: &UpstreamError) -> bool {
    match err {
        UpstreamError::Connect | UpstreamError::ConnectTimeout(_) | UpstreamError::Transport(_) => {
            true
        }
        UpstreamError::Timeout(_) | UpstreamError::TooLarge(_) | UpstreamError::Decode(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn leases_take_proxies_in_turn_and_skip_the_resting() {
        let mut settings = Settings::default();
        settings.upstream.proxies = (1..=3).map(|p| format!("http://127.0.0.1:{p}")).collect();
        let routes = Egress::new("test-turns", &settings, &settings.short_video, None).unwrap();
        let labels: Vec<String> = {
            let mut v = Vec::new();
            for _ in 0..6 {
                v.push(routes.lease().await.unwrap().label().to_owned());
            }
            v
        };
        assert_eq!(labels, ["0", "1", "2", "0", "1", "2"]);
        let lease = routes.lease().await.unwrap();
        assert_eq!(lease.label(), "0");
        assert_eq!(lease.rest_and_switch("test").await, Switch::Moved);
        assert_eq!(lease.label(), "1");
        for _ in 0..4 {
            assert_ne!(routes.lease().await.unwrap().label(), "0", "0 rests");
        }
        assert_eq!(lease.rest_and_switch("test").await, Switch::Moved);
        let Switch::AllResting(wait) = lease.rest_and_switch("test").await else {
            panic!("all three rest");
        };
        assert!(wait <= settings.upstream.proxy_cooldown() && wait > Duration::ZERO);
        assert_eq!(lease.exhausted(), Some(wait));
        assert!(routes.lease().await.is_err());
    }

    #[test]
    fn no_debug_output_shows_a_proxy_password() {
        let mut settings = Settings::default();
        settings.upstream.proxies = vec!["http://agent:hunter2@127.0.0.1:3128".into()];
        let routes = Egress::new("test-debug", &settings, &settings.short_video, None).unwrap();
        let url = Url::parse(&settings.upstream.proxies[0]).unwrap();
        let client = Upstream::via(&settings, Some(&url)).unwrap();
        for text in [format!("{routes:?}"), format!("{client:?}")] {
            assert!(!text.contains("hunter2"), "{text}");
        }
    }

    #[tokio::test]
    async fn the_direct_route_never_rests() {
        let settings = Settings::default();
        let routes = Egress::new("test-direct", &settings, &settings.photo_share, None).unwrap();
        let lease = routes.lease().await.unwrap();
        assert_eq!(lease.label(), DIRECT);
        assert_eq!(lease.rest_and_switch("test").await, Switch::Direct);
        assert!(routes.lease().await.is_ok());
        assert_eq!(lease.exhausted(), None);
    }
}
