//! The ways out to one platform: one route per configured proxy, or the direct route when
//! none is configured. Each route presents one identity per browser profile
//! (`upstream.browser_profiles`, browser client only; the plain client has one identity and
//! no profile): its own client (its own connections) and its own cookie jar, built once at
//! start.
//!
//! - **Sticky per lookup.** A lookup takes a [`RouteLease`] and sends every request (page,
//!   challenge answer, fallback, retries) through it, so the platform sees one address for
//!   the whole lookup.
//! - **In turn.** Leases take proxies round robin among those not resting.
//! - **Rests.** A failure of the proxy itself (refused, reset, its CONNECT unanswered, 407;
//!   see [`is_proxy_failure`]), or a refusal blame says is the route's (or the platform's),
//!   rests that proxy for `upstream.proxy_cooldown_seconds`
//!   ([`RouteLease::rest_and_switch`]), and the lease moves to another proxy at once. A
//!   refusal blame cannot place yet moves the lease without a rest
//!   ([`RouteLease::leave_unrested`]); the route rests once the same source reads the name
//!   elsewhere ([`RouteLease::rest_suspects`]). A lookup never goes back to a proxy it left.
//!   When every proxy rests after blocks the lookup answers 429 `upstream_blocked` with
//!   `Retry-After` until the first proxy is back.
//! - **Silent routes.** A proxy that gives no response head in time is left for another route
//!   at once ([`RouteLease::leave_silent`]); it rests only when blame says so (silent twice
//!   while other routes answered in time), and nothing rests when every route is slow.
//! - **Fleet.** With `[redis]`, rests are written to and read from Redis (scope = platform,
//!   a proxy named by its position), so a proxy blocked on one replica rests on all; when Redis
//!   cannot be used the replica's own rests stand in.
//! - **The direct route** is never rested: once the lookup has presented every profile there
//!   is nowhere else to go, so the retry backoff and the breaker handle its blocks as they
//!   always did.
//! - **Secrets.** A proxy URL is used to build its client and never kept as text: logs,
//!   metrics (label `proxy="0"`, `"1"`, …, `"direct"`), errors and Redis name a proxy by its
//!   position.
//! - **Profiles.** A lookup presents one profile, the next in turn for each new lookup, on
//!   whichever route it goes. A block moves it to the next profile as it moves it to the
//!   next proxy: through proxies, the next proxy gets the next profile; on the direct route,
//!   a block moves the lookup to each profile it has not presented yet (a region lock
//!   excepted: a browser does not change the region), and only then ends it.
//! - **Junk headers.** With `<section>.junk_headers`, every page request (a navigation, not a
//!   request for JSON) gets a fresh draw of random extra headers ([`super::junk_headers`]).

mod exit;
mod gateway;
mod lease;
mod profiles;
mod retire;
mod route;
mod session;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use reqwest::header::HeaderName;

use super::roots::ClientBuildError;
use super::{Upstream, UpstreamError};
use crate::config::proxies::{is_gateway, parse_proxy};
use crate::config::{BrowserProfile, PlatformConfig, Settings};
use crate::fleet::Fleet;
use crate::fleet::gateways::GatewayRefusals;
use crate::fleet::rests::Rests;

pub use lease::RouteLease;
use route::Route;

/// The metric label of the direct route.
pub const DIRECT: &str = "direct";

/// The reason the fetcher gives for a region lock: a browser profile does not change the
/// region, so on the direct route it tries no other profile.
const REGION_LOCKED: &str = "region_locked";

/// The reason the fetcher gives when a proxy failed as a proxy (refused, reset, its CONNECT
/// unanswered: [`is_proxy_failure`]).
pub const PROXY_FAILED: &str = "proxy_failed";

/// The reason the fetcher gives when an HTTP proxy answered 407.
pub const PROXY_AUTH: &str = "proxy_auth";

/// The reasons that are a proxy's own failure: on a gateway they rest the gateway, where a
/// block only retires the session.
const PROXY_FAILURES: [&str; 2] = [PROXY_FAILED, PROXY_AUTH];

/// The routes to one platform; one per source, built once.
pub struct Egress {
    scope: &'static str,
    routes: Vec<Route>,
    proxied: bool,
    /// Where the next turn starts: just after the route last handed out.
    next: Mutex<usize>,
    /// The profiles every route presents, in turn (a single `None` for the plain client).
    profiles: Vec<Option<BrowserProfile>>,
    /// Where the next lookup's profile turn starts: just after the profile last presented.
    next_profile: AtomicUsize,
    /// Whether page requests get random extra headers (`<section>.junk_headers`).
    junk_headers: bool,
    cooldown: Duration,
    /// The proxies' rests (the fleet's with Redis).
    rests: Rests,
    /// The gateways' fresh sessions refused in a row (the fleet's with Redis).
    refusals: GatewayRefusals,
    /// `upstream.gateway_block_threshold`.
    block_threshold: u32,
    /// The response headers whose values the platform asked to keep ([`RouteLease::handed`]).
    session_names: Mutex<Vec<HeaderName>>,
}

impl std::fmt::Debug for Egress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Positions only: a client's own Debug could print its proxy's URL.
        f.debug_struct("Egress")
            .field("scope", &self.scope)
            .field("routes", &self.routes.len())
            .field("proxied", &self.proxied)
            .field("profiles", &self.profiles)
            .finish_non_exhaustive()
    }
}

/// Where a lease went after [`RouteLease::rest_and_switch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// No proxies are configured and the lookup has presented every profile (or met a region
    /// lock): nothing was rested, there is nowhere else to go.
    Direct,
    /// The proxy rests and the lease now goes through another one (with the next profile);
    /// or, on the direct route, the lease now presents the next profile.
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
        fleet: &Fleet,
    ) -> Result<Self, ClientBuildError> {
        let list = if platform.proxies.is_empty() {
            &settings.upstream.proxies
        } else {
            &platform.proxies
        };
        let profiles = Upstream::profiles(settings);
        let mut routes = Vec::with_capacity(list.len().max(1));
        for (at, raw) in list.iter().enumerate() {
            let url = parse_proxy(raw).map_err(|_| ClientBuildError::Proxy)?;
            let label = at.to_string();
            routes.push(if is_gateway(raw) {
                Route::through_gateway(scope, label, settings, raw.trim(), &profiles)?
            } else {
                Route::new(scope, label, settings, Some(&url), &profiles)?
            });
        }
        let proxied = !routes.is_empty();
        if !proxied {
            routes.push(Route::new(
                scope,
                DIRECT.to_owned(),
                settings,
                None,
                &profiles,
            )?);
        }
        Ok(Self {
            scope,
            routes,
            proxied,
            next: Mutex::new(0),
            profiles,
            next_profile: AtomicUsize::new(0),
            junk_headers: platform.junk_headers,
            cooldown: settings.upstream.proxy_cooldown(),
            rests: Rests::new(fleet, scope, list.len()),
            refusals: GatewayRefusals::new(
                fleet,
                scope,
                list.len(),
                settings.upstream.proxy_cooldown(),
            ),
            block_threshold: settings.upstream.gateway_block_threshold,
            session_names: Mutex::default(),
        })
    }

    /// Each route's label, kind (`fixed`, `gateway`, `direct`) and how long it still rests
    /// (fleet-wide with Redis): what `/status` shows.
    pub async fn standing(&self) -> Vec<(String, &'static str, Option<Duration>)> {
        if !self.proxied {
            return vec![("direct".to_owned(), "direct", None)];
        }
        let left = self.rests.resting(Instant::now()).await;
        self.routes
            .iter()
            .zip(left)
            .map(|(route, left)| {
                let kind = if route.gateway().is_some() {
                    "gateway"
                } else {
                    "fixed"
                };
                (route.label.clone(), kind, left)
            })
            .collect()
    }

    /// Whether one of the routes is a provider's gateway (whose sessions are routes of
    /// their own, as many as it hands out).
    pub fn has_gateway(&self) -> bool {
        self.routes.iter().any(|r| r.gateway().is_some())
    }

    /// Whether requests go through proxies (else straight out, on the direct route).
    pub fn is_proxied(&self) -> bool {
        self.proxied
    }

    /// The route a new lookup goes through: the next proxy in turn that is not resting, with
    /// the next profile in turn; or `Err(wait)` when every proxy rests (the first is back after
    /// `wait`). A lease that `rests` rests each route it leaves for a block or a failure; one
    /// that does not (a probe's) only moves on, for itself.
    pub async fn lease(&self, rests: bool) -> Result<RouteLease<'_>, Duration> {
        let first = self.pick(&[]).await?;
        let n = self.profiles.len();
        let profile = self
            .next_profile
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |p| Some((p + 1) % n))
            .unwrap_or(0)
            % n;
        Ok(RouteLease {
            routes: self,
            current: AtomicUsize::new(first),
            exit: Mutex::new(self.routes[first].exit()),
            retired: AtomicU32::new(0),
            silent_retired: AtomicBool::new(false),
            profile: AtomicUsize::new(profile),
            presented: AtomicUsize::new(1),
            rested: Mutex::new(Vec::new()),
            suspects: Mutex::new(Vec::new()),
            exhausted: Mutex::new(None),
            sent: AtomicU32::new(0),
            answered: AtomicU32::new(0),
            rests,
        })
    }

    /// The next route in turn that is not resting and not in `exclude`.
    async fn pick(&self, exclude: &[usize]) -> Result<usize, Duration> {
        if !self.proxied {
            return Ok(0);
        }
        let n = self.routes.len();
        // A rest another replica began is this replica's too (and outlives Redis).
        let left = self.rests.resting(Instant::now()).await;
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
            // When nothing rests (this lookup left every route), there is no wait to tell.
            None => Err(left
                .iter()
                .flatten()
                .min()
                .copied()
                .unwrap_or(Duration::ZERO)),
        }
    }

    /// Rests route `index` (a proxy) for the cool-down, here and in the fleet.
    async fn rest(&self, index: usize, reason: &'static str) {
        let route = &self.routes[index];
        self.rests.rest(index, self.cooldown).await;
        route.resting.set(1.0);
        if route.gateway().is_some() {
            let why = match reason {
                gateway::POOL_REFUSED | "silent" => reason,
                _ => PROXY_FAILED,
            };
            crate::telemetry::gateway_rests(self.scope, &route.label, why, 1);
        }
        tracing::info!(
            platform = self.scope,
            proxy = %route.label,
            reason,
            cooldown_s = self.cooldown.as_secs(),
            "proxy rests"
        );
    }
}

/// Locks `m`, whatever a panicking holder left in it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether an error on a proxy route is the proxy's failure, so that the proxy rests: no
/// connection (refused, the CONNECT refused or answered 407, TLS), no connection within the
/// connect deadline (a CONNECT never answered), or a connection dropped before the whole
/// answer came (a working proxy answers a platform's failure with a 5xx status; a drop is the
/// proxy's, or the platform's refusal of that proxy's address).
///
/// A time-out after the request went through is not: the proxy carried the request and the
/// platform is slow, which it is through every proxy, so resting them would only turn one slow
/// page into 429s for every lookup. The lookup tries another route instead, and blames by
/// comparison ([`RouteLease::leave_silent`]); when every route is silent it answers
/// `upstream_unavailable`. Neither is an
/// oversized or undecodable body: the platform's doing.
pub fn is_proxy_failure(err: &UpstreamError) -> bool {
    match err {
        UpstreamError::Connect(..)
        | UpstreamError::ConnectTimeout(_)
        | UpstreamError::Transport(..) => true,
        UpstreamError::Timeout(_)
        | UpstreamError::NoHead(_)
        | UpstreamError::TooLarge(_)
        | UpstreamError::Decode(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::session::MAX_SESSION_VALUE_LEN;
    use super::*;
    use crate::registry::Platform;
    use reqwest::header::{HeaderMap, HeaderValue};
    use url::Url;

    #[tokio::test]
    async fn leases_take_proxies_in_turn_and_skip_the_resting() {
        let mut settings = Settings::default();
        settings.upstream.proxies = (1..=3).map(|p| format!("http://127.0.0.1:{p}")).collect();
        let routes = Egress::new(
            "test-turns",
            &settings,
            settings.platform(Platform::ShortVideo),
            &Fleet::local(),
        )
        .unwrap();
        let labels: Vec<String> = {
            let mut v = Vec::new();
            for _ in 0..6 {
                v.push(routes.lease(true).await.unwrap().label().to_owned());
            }
            v
        };
        assert_eq!(labels, ["0", "1", "2", "0", "1", "2"]);
        let lease = routes.lease(true).await.unwrap();
        assert_eq!(lease.label(), "0");
        assert_eq!(lease.rest_and_switch("test").await, Switch::Moved);
        assert_eq!(lease.label(), "1");
        for _ in 0..4 {
            assert_ne!(routes.lease(true).await.unwrap().label(), "0", "0 rests");
        }
        assert_eq!(lease.rest_and_switch("test").await, Switch::Moved);
        let Switch::AllResting(wait) = lease.rest_and_switch("test").await else {
            panic!("all three rest");
        };
        assert!(wait <= settings.upstream.proxy_cooldown() && wait > Duration::ZERO);
        assert_eq!(lease.exhausted(), Some(wait));
        assert!(routes.lease(true).await.is_err());
    }

    #[tokio::test]
    async fn a_lease_that_rests_nothing_moves_on_for_itself_only() {
        let mut settings = Settings::default();
        settings.upstream.proxies = (1..=2).map(|p| format!("http://127.0.0.1:{p}")).collect();
        let routes = Egress::new(
            "test-no-rest",
            &settings,
            settings.platform(Platform::ShortVideo),
            &Fleet::local(),
        )
        .unwrap();
        let probe = routes.lease(false).await.unwrap();
        assert_eq!(probe.label(), "0");
        assert_eq!(probe.rest_and_switch("http_429").await, Switch::Moved);
        assert_eq!(probe.label(), "1");
        assert!(
            matches!(
                probe.rest_and_switch("http_429").await,
                Switch::AllResting(_)
            ),
            "the probe has left both proxies"
        );
        let mut labels = Vec::new();
        for _ in 0..2 {
            labels.push(routes.lease(true).await.unwrap().label().to_owned());
        }
        labels.sort();
        assert_eq!(labels, ["0", "1"], "yet no proxy rests for the lookups");
    }

    #[test]
    fn no_debug_output_shows_a_proxy_password() {
        let mut settings = Settings::default();
        settings.upstream.proxies = vec!["http://agent:hunter2@127.0.0.1:3128".into()];
        let routes = Egress::new(
            "test-debug",
            &settings,
            settings.platform(Platform::ShortVideo),
            &Fleet::local(),
        )
        .unwrap();
        let url = Url::parse(&settings.upstream.proxies[0]).unwrap();
        let client = Upstream::via(&settings, Some(&url)).unwrap();
        for text in [format!("{routes:?}"), format!("{client:?}")] {
            assert!(!text.contains("hunter2"), "{text}");
        }
    }

    #[test]
    fn session_values_are_kept_per_route_and_profile_and_only_when_asked_for() {
        let mut settings = Settings::default();
        settings.upstream.proxies = (1..=2).map(|p| format!("http://127.0.0.1:{p}")).collect();
        let routes = Egress::new(
            "test-session",
            &settings,
            settings.platform(Platform::PhotoShare),
            &Fleet::local(),
        )
        .unwrap();
        let handed = |value: &str| {
            let mut h = HeaderMap::new();
            h.insert("x-set-claim", HeaderValue::from_str(value).unwrap());
            h.insert("x-other", HeaderValue::from_static("kept-nowhere"));
            h
        };
        let names = [HeaderName::from_static("x-set-claim")];
        let (a, b) = (routes.routes[0].exit(), routes.routes[1].exit());
        let (a, b) = (&a.identities[0], &b.identities[0]);
        a.session.keep_from(&names, &handed("claim-a"));
        assert_eq!(a.session.value(&names[0]).unwrap(), "claim-a");
        assert_eq!(
            b.session.value(&names[0]),
            None,
            "route b was handed nothing"
        );
        assert_eq!(a.session.value(&HeaderName::from_static("x-other")), None);
        for odd in ["", "a b", &"x".repeat(MAX_SESSION_VALUE_LEN + 1)] {
            a.session.keep_from(&names, &handed(odd));
            assert_eq!(
                a.session.value(&names[0]).unwrap(),
                "claim-a",
                "{odd:?} ignored"
            );
        }
        a.session.keep_from(&names, &handed("claim-a2"));
        assert_eq!(
            a.session.value(&names[0]).unwrap(),
            "claim-a2",
            "the last one wins"
        );
        assert!(
            lock(&routes.session_names).is_empty(),
            "nothing asked for yet"
        );
    }

    #[tokio::test]
    async fn the_plain_client_has_no_profile_and_a_direct_block_ends_the_lookup() {
        let settings = Settings::default();
        let routes = Egress::new(
            "test-plain",
            &settings,
            settings.platform(Platform::ShortVideo),
            &Fleet::local(),
        )
        .unwrap();
        let lease = routes.lease(true).await.unwrap();
        assert_eq!(lease.profile(), None);
        assert!(!lease.moves_on_block());
        assert_eq!(lease.rest_and_switch("test").await, Switch::Direct);
    }

    #[cfg(feature = "browser")]
    fn browser_settings(profiles: &[BrowserProfile]) -> Settings {
        let mut settings = Settings::default();
        settings.upstream.client = crate::config::UpstreamClient::Browser;
        settings.upstream.browser_profiles = profiles.to_vec();
        settings
    }

    #[cfg(feature = "browser")]
    #[tokio::test]
    async fn on_the_direct_route_a_block_moves_to_each_other_profile_once() {
        use BrowserProfile::*;
        let settings = browser_settings(&BrowserProfile::ALL);
        let routes = Egress::new(
            "test-profiles",
            &settings,
            settings.platform(Platform::ShortVideo),
            &Fleet::local(),
        )
        .unwrap();
        let lease = routes.lease(true).await.unwrap();
        assert_eq!(lease.profile(), Some(Chrome));
        for next in [ChromePrevious, Firefox, Safari] {
            assert!(lease.moves_on_block());
            assert_eq!(lease.rest_and_switch("http_403").await, Switch::Moved);
            assert_eq!(lease.profile(), Some(next));
            assert_eq!(lease.label(), DIRECT);
        }
        assert!(!lease.moves_on_block(), "every profile was tried");
        assert_eq!(lease.rest_and_switch("http_403").await, Switch::Direct);
        assert_eq!(lease.profile(), Some(Safari));
        assert_eq!(lease.exhausted(), None);
        // The turn goes on past the profile the lookup ended on.
        let mut turns = Vec::new();
        for _ in 0..4 {
            turns.push(routes.lease(true).await.unwrap().profile().unwrap());
        }
        assert_eq!(turns, [Chrome, ChromePrevious, Firefox, Safari]);
    }

    #[cfg(feature = "browser")]
    #[tokio::test]
    async fn a_region_lock_on_the_direct_route_tries_no_other_profile() {
        let settings = browser_settings(&BrowserProfile::ALL);
        let routes = Egress::new(
            "test-region",
            &settings,
            settings.platform(Platform::ShortVideo),
            &Fleet::local(),
        )
        .unwrap();
        let lease = routes.lease(true).await.unwrap();
        assert_eq!(lease.rest_and_switch("region_locked").await, Switch::Direct);
        assert_eq!(lease.profile(), Some(BrowserProfile::Chrome));
    }

    #[cfg(feature = "browser")]
    #[tokio::test]
    async fn through_proxies_a_block_moves_to_the_next_proxy_and_the_next_profile() {
        use BrowserProfile::*;
        let mut settings = browser_settings(&[Chrome, Firefox]);
        settings.upstream.proxies = (1..=3).map(|p| format!("http://127.0.0.1:{p}")).collect();
        let routes = Egress::new(
            "test-both",
            &settings,
            settings.platform(Platform::ShortVideo),
            &Fleet::local(),
        )
        .unwrap();
        let lease = routes.lease(true).await.unwrap();
        assert_eq!((lease.label(), lease.profile()), ("0", Some(Chrome)));
        assert_eq!(lease.rest_and_switch("http_429").await, Switch::Moved);
        assert_eq!((lease.label(), lease.profile()), ("1", Some(Firefox)));
        assert_eq!(lease.rest_and_switch("http_429").await, Switch::Moved);
        assert_eq!((lease.label(), lease.profile()), ("2", Some(Chrome)));
        // The proxies bound the lookup, as before: three rests and it ends.
        assert!(matches!(
            lease.rest_and_switch("http_429").await,
            Switch::AllResting(_)
        ));
    }

    #[tokio::test]
    async fn the_direct_route_never_rests() {
        let settings = Settings::default();
        let routes = Egress::new(
            "test-direct",
            &settings,
            settings.platform(Platform::PhotoShare),
            &Fleet::local(),
        )
        .unwrap();
        let lease = routes.lease(true).await.unwrap();
        assert_eq!(lease.label(), DIRECT);
        assert_eq!(lease.rest_and_switch("test").await, Switch::Direct);
        assert!(routes.lease(true).await.is_ok());
        assert_eq!(lease.exhausted(), None);
    }
}
