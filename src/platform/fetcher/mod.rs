//! The one fetcher: how any [`Site`] is asked about a name, written once for every platform.
//!
//! A fetch runs a [`Plan`] (the platform's configured documents, or one document alone for
//! the canary) in a [`Mode`] (a caller's lookup, a background refresh, a probe), and ends as a
//! [`Fetched`]: what the platform said and what it cost. It passes the platform's breaker,
//! takes a route (a proxy in turn, or the direct route), and asks the plan's documents in
//! order (`plan`). Each request goes through the gate (outbound budget, concurrency cap), is
//! read by the site, and is retried by the platform's [`RetryPolicy`] (`document`); it is
//! sent through the lease (`send`). Redirects on the platform's host are followed (three at
//! most), one hurdle per document is cleared, an unreadable document (and a block the site
//! names) is kept by drift capture. A fetch blocked on a proxy moves to another (resting the
//! one that blocked, except for a probe); a source blocked on every route left hands the lookup to the
//! platform's next source. Every wait the caller is told is decided here, where it is
//! known.
//!
//! The mode decides how the fetch is accounted for: a caller's lookup and a refresh are
//! recorded by the breaker and rest proxies; a refresh's requests are held to the refresh
//! share and wait for nothing; a probe of one document counts against the outbound budget like
//! any request, but never records into the callers' breaker (it only reads whether it is open)
//! and never rests a proxy (it may still move to another route for itself), so that a canary
//! account a document refuses costs the callers nothing.
//!
//! Each plan is asked in the order of the sources' [`Standing`]: a source the canary found
//! `changed`, or the evidence of lookups and probes found refused for every recent name while
//! another source read, is asked after the others until it reads again (a demoted source is
//! re-probed, asked in its place, by one lookup per canary interval for the fleet). Every
//! answer about the user and every refusal is told to the evidence. A source refused on every
//! route (for several names) is the source's refusal: it rests no proxy, is not waited out,
//! and the lookup asks the next source on the same route at once.
//!
//! A source asked by the user's platform id ([`Document::by_id`]) posts the form its site
//! builds with the id learned for the name: every profile a fetch finds teaches its id to the
//! fleet's [`KnownIds`] (when the plan asks such a source), and a name no answer taught one
//! skips the source as inconclusive.

mod complement;
mod document;
mod names;
mod plan;
mod rediscover;
mod run;
mod send;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

use super::last_word::{Block, LastWords};
use super::site::{Document, Site};
use super::standing::Standing;
use super::{Failure, Lookup, Platform};
use crate::config::{Settings, ms};
use crate::fleet::Fleet;
use crate::fleet::ids::KnownIds;
use crate::upstream::capture::Capture;
use crate::upstream::egress::Egress;
use crate::upstream::gate::{Gate, Signal};
use crate::upstream::retry::RetryPolicy;
use crate::upstream::roots::ClientBuildError;
use crate::username::Username;

pub use crate::upstream::gate::Mode;
pub use document::answer;

/// How often a source the evidence demoted is re-probed when the canary is off.
const REPROBE_WITHOUT_CANARY: Duration = Duration::from_secs(60);

/// The longest a caller is told to wait for a block whose platform named no wait.
const MAX_DEFAULT_WAIT: Duration = Duration::from_secs(60);

/// Which documents a fetch asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// The platform's configured sources (`<section>.sources`), in the order of their
    /// standing: a caller's lookup or a refresh.
    Whole,
    /// The one source of this name, alone: the canary's probe.
    One(&'static str),
}

/// How a fetch ended and what it cost: the answer to store or serve, and the evidence of the
/// last answer the platform gave.
#[derive(Clone, Debug)]
pub struct Fetched {
    /// The outcome.
    pub lookup: Lookup,
    /// How many HTTP requests were sent to the platform for it.
    pub upstream_requests: u32,
    /// The source (document) whose answer decided the outcome, as its registry line names
    /// it; `None` when no document was asked (the gate refused, every proxy rests).
    pub source: Option<&'static str>,
    /// The HTTP status of the platform's last answer, if one came.
    pub status: Option<u16>,
    /// The length of the last answer's body (after decompression; 0 without one).
    pub bytes: u64,
    /// Who the last refusal, failure or silence of the fetch was blamed on, if any.
    pub blame: Option<crate::blame::Party>,
}

impl Fetched {
    /// Why the fetch has no answer, when it has none.
    pub fn failure(&self) -> Option<&Failure> {
        match &self.lookup {
            Lookup::Failed(failure) => Some(failure),
            _ => None,
        }
    }

    /// A fetch that sent nothing and ended as `failure`.
    pub fn unsent(failure: Failure) -> Self {
        Self {
            lookup: Lookup::Failed(failure),
            upstream_requests: 0,
            source: None,
            status: None,
            bytes: 0,
            blame: None,
        }
    }
}

/// A platform's fetcher as everything above the platform layer sees it: one per platform,
/// whatever its site, in [`Fetchers`].
pub trait Fetch: Send + Sync + 'static {
    /// Asks the platform about `name`: the documents of `plan`, accounted for as `mode` says.
    fn fetch<'a>(&'a self, name: &'a Username, plan: Plan, mode: Mode) -> BoxFuture<'a, Fetched>;

    /// Whether a background refresh may ever pass the gate (the platform's refresh share is
    /// above 0).
    fn refreshes(&self) -> bool;

    /// The block the platform last answered to the running fetch of `name`, if its last
    /// answer was one: what a caller whose deadline passes first is told.
    fn last_block(&self, name: &Username) -> Option<Block>;

    /// The standing of the platform's sources (which ones its lookups ask last).
    fn standing(&self) -> &Standing;

    /// Whether the configured plan asks the source called `source`.
    fn asks(&self, source: &str) -> bool;

    /// The query ids the platform's site posts and learns, when it has any.
    fn query_ids(&self) -> Option<&crate::fleet::query_ids::QueryIds>;

    /// Each route's standing now (for `/status`).
    fn routes(&self) -> BoxFuture<'_, Vec<crate::platform::standing::RouteStanding>>;
}

/// One platform's fetcher: its site and everything a fetch needs around it.
#[derive(Debug)]
pub struct Fetcher<S: Site> {
    site: S,
    /// The documents a lookup asks, in order (`<section>.sources`).
    plan: Vec<S::Doc>,
    egress: Egress,
    gate: Gate,
    retry: RetryPolicy,
    capture: Option<Arc<Capture>>,
    block_wait: Duration,
    /// The platform's last answer to each lookup in flight (for callers whose deadline passes).
    last_words: LastWords,
    /// Which sources the canary moved to the end of the plan.
    standing: Standing,
    /// The platform ids learned for names, when the plan asks a source by id (else nothing
    /// is learned or kept).
    ids: Option<KnownIds>,
    /// This fetcher, for the work it starts in the background (a rediscovery).
    me: std::sync::Weak<Self>,
    /// Who each refusal, failure or silence belongs to.
    blame: crate::blame::Blame,
    /// The names blame found at fault lately, and their answers.
    names: names::BlamedNames,
    /// How long a fetch may go on asking: nine tenths of the caller's request deadline, so
    /// that a stale copy can still be served in time.
    deadline: Duration,
    /// `upstream.head_timeout_ms`.
    head_timeout: Duration,
}

impl<S: Site> Fetcher<S> {
    /// Builds the fetcher of `S` from the settings: its routes out (proxies or direct), gate,
    /// retry policy and drift capture; budget, breaker and rests are the `fleet`'s.
    pub fn new(settings: &Settings, fleet: &Fleet) -> Result<Self, ClientBuildError> {
        let config = settings.platform(S::PLATFORM);
        let scope = S::PLATFORM.as_str();
        // Validated names (`Settings::validate`); an unknown one could only come from settings
        // built in code, and is left out rather than guessed.
        let plan: Vec<S::Doc> = config
            .sources
            .iter()
            .filter_map(|name| S::DOCUMENTS.iter().copied().find(|d| d.label() == name))
            .collect();
        let ids = plan
            .iter()
            .any(|d| d.by_id())
            .then(|| KnownIds::new(fleet, scope, crate::fleet::ids::life(&settings.cache)));
        let labels: Vec<&str> = plan.iter().map(|d| d.label()).collect();
        let egress = Egress::new(scope, settings, config, fleet)?;
        let routes = if egress.has_gateway() {
            usize::MAX
        } else {
            route_count(settings, config)
        };
        let blame = crate::blame::Blame::new(S::PLATFORM, &labels, routes, &settings.blame, fleet);
        Ok(Self {
            site: S::new(settings, fleet),
            egress,
            gate: Gate::new(scope, config, settings, fleet),
            retry: RetryPolicy::new(&settings.retry),
            capture: Capture::new(&settings.upstream),
            // A block without the platform's `Retry-After`: the breaker's cooldown (at most a
            // minute) or the longest backoff, whichever is longer.
            block_wait: ms(settings.retry.max_delay_ms)
                .max(Duration::from_secs(settings.breaker.cooldown_seconds).min(MAX_DEFAULT_WAIT)),
            last_words: LastWords::default(),
            standing: Standing::new(S::PLATFORM, fleet, reprobe_every(settings)),
            ids,
            plan,
            me: std::sync::Weak::new(),
            blame,
            names: names::BlamedNames::new(std::time::Duration::from_secs(
                settings.cache.negative_ttl_seconds,
            )),
            deadline: ms(settings.server.request_timeout_ms) * 9 / 10,
            head_timeout: ms(settings.upstream.head_timeout_ms)
                .min(ms(settings.upstream.timeout_ms)),
        })
    }

    /// The fetcher of `S` as everything shares it, knowing itself (for background work).
    pub fn shared(settings: &Settings, fleet: &Fleet) -> Result<Arc<Self>, ClientBuildError> {
        let fetcher = Self::new(settings, fleet)?;
        Ok(Arc::new_cyclic(|me| Self {
            me: me.clone(),
            ..fetcher
        }))
    }

    /// Asks `name`: behind the platform's breaker, on one route (another each time the plan
    /// ends blocked on one), reported to the metrics and the log (a probe is not a lookup
    /// there).
    async fn run(&self, name: &Username, plan: Plan, mode: Mode) -> Fetched {
        let docs = match plan {
            Plan::Whole => self.standing.order_for_lookup(&self.plan).await,
            Plan::One(label) => match self.plan.iter().find(|d| d.label() == label) {
                Some(doc) => std::borrow::Cow::Borrowed(std::slice::from_ref(doc)),
                None => {
                    let why = format!("the plan does not ask the {label} source");
                    return Fetched::unsent(Failure::unavailable(why));
                }
            },
        };
        // A name blamed lately is answered as it was, with no request.
        if mode != Mode::Probe
            && let Some(failure) = self.names.recall(name)
        {
            return Fetched {
                blame: Some(crate::blame::Party::Name),
                ..Fetched::unsent(failure)
            };
        }
        self.blame.sync().await;
        let _listening = (mode != Mode::Probe).then(|| self.last_words.listen(name));
        let fetched = match self.gate.admit(mode).await {
            Err(refusal) => Fetched::unsent(send::refused(refusal)),
            Ok(ticket) => match self.egress.lease(mode.rests()).await {
                // Nothing was sent, so the breaker learns nothing.
                Err(wait) => {
                    self.gate.record(ticket, Signal::Inconclusive).await;
                    Fetched::unsent(send::resting(wait))
                }
                Ok(route) => {
                    let run = run::Run::new(self, name, &route, mode);
                    let fetched = run.through_routes(&docs).await;
                    // Only the platform's refusals (or refusals too little evidence could
                    // place) count toward the breaker: a name's, a route's or a source's never.
                    let platforms = matches!(
                        fetched.blame,
                        None | Some(crate::blame::Party::Platform | crate::blame::Party::Unknown)
                    );
                    let outcome = match &fetched.lookup {
                        Lookup::Failed(Failure::Blocked { .. }) if platforms => Signal::Blocked,
                        Lookup::Failed(Failure::Blocked { .. } | Failure::Overloaded { .. }) => {
                            Signal::Inconclusive
                        }
                        _ => Signal::Answered,
                    };
                    self.gate.record(ticket, outcome).await;
                    fetched
                }
            },
        };
        if mode != Mode::Probe {
            self.report(&fetched);
            self.rediscover_if_due().await;
        }
        if let (Some(ids), Lookup::Found(profile)) = (&self.ids, &fetched.lookup) {
            ids.remember(name.as_str(), &profile.summary().id).await;
        }
        fetched
    }

    /// Logs a failed lookup and counts its outcome.
    fn report(&self, fetched: &Fetched) {
        let platform = S::PLATFORM.as_str();
        let (lookup, from) = (&fetched.lookup, fetched.source.unwrap_or("-"));
        match lookup {
            Lookup::Failed(Failure::ExtractionFailed(why)) => {
                tracing::warn!(platform, source = from, outcome = lookup.label(), why = %why, "lookup failed");
            }
            Lookup::Failed(Failure::Unavailable { why, cause }) => {
                let cause = cause.map_or("-", crate::upstream::Cause::label);
                tracing::warn!(platform, source = from, outcome = lookup.label(), cause, why = %why, "lookup failed");
            }
            // A failed lookup all the same: WARN, as the operations guide promises.
            Lookup::Failed(Failure::Blocked { reason, .. } | Failure::Withheld { reason, .. }) => {
                tracing::warn!(
                    platform,
                    source = from,
                    outcome = lookup.label(),
                    reason,
                    "platform refused the lookup"
                );
            }
            _ => {}
        }
        crate::telemetry::lookup_outcome(platform, lookup.label());
        if let (Lookup::Found(_) | Lookup::NotFound, Some(source)) = (lookup, fetched.source) {
            crate::telemetry::source_answer(platform, source);
        }
    }
}

impl<S: Site> Fetch for Fetcher<S> {
    fn fetch<'a>(&'a self, name: &'a Username, plan: Plan, mode: Mode) -> BoxFuture<'a, Fetched> {
        Box::pin(self.run(name, plan, mode))
    }

    fn refreshes(&self) -> bool {
        self.gate.refreshes()
    }

    fn last_block(&self, name: &Username) -> Option<Block> {
        self.last_words.block(name)
    }

    fn standing(&self) -> &Standing {
        &self.standing
    }

    fn asks(&self, source: &str) -> bool {
        self.plan.iter().any(|d| d.label() == source)
    }

    fn query_ids(&self) -> Option<&crate::fleet::query_ids::QueryIds> {
        self.site.query_ids()
    }

    fn routes(&self) -> BoxFuture<'_, Vec<crate::platform::standing::RouteStanding>> {
        Box::pin(async move {
            self.egress
                .standing()
                .await
                .into_iter()
                .map(
                    |(route, kind, resting)| crate::platform::standing::RouteStanding {
                        platform: S::PLATFORM.as_str().to_owned(),
                        route,
                        kind: kind.to_owned(),
                        standing: if resting.is_some() {
                            "resting"
                        } else {
                            "usable"
                        }
                        .to_owned(),
                        resting_seconds: resting.map(|d| d.as_secs().max(1)),
                    },
                )
                .collect()
        })
    }
}

/// How many routes the platform goes out on: its own proxies, else `upstream.proxies`, else
/// the direct route (as `Egress::new` takes them).
fn route_count(settings: &Settings, config: &crate::config::PlatformConfig) -> usize {
    let own = config.proxies.len();
    if own > 0 {
        own
    } else {
        settings.upstream.proxies.len().max(1)
    }
}

/// How often a source the evidence demoted is re-probed: once per canary round, or once a
/// minute when the canary is off.
fn reprobe_every(settings: &Settings) -> Duration {
    if settings.canary.is_on() {
        Duration::from_secs(settings.canary.interval_seconds)
    } else {
        REPROBE_WITHOUT_CANARY
    }
}

/// Every platform's fetcher, one per [`Platform::ALL`] at its [`Platform::index`], built once.
#[derive(Clone)]
pub struct Fetchers(Arc<[Arc<dyn Fetch>]>);

impl Fetchers {
    /// Builds each platform's fetcher from the settings (see [`Fetcher::new`]).
    pub fn new(settings: &Settings, fleet: &Fleet) -> Result<Self, ClientBuildError> {
        struct Build<'a>(&'a Settings, &'a Fleet);
        impl super::SiteJob for Build<'_> {
            type Output = Result<Arc<dyn Fetch>, ClientBuildError>;
            fn run<S: Site>(self) -> Self::Output {
                Ok(Fetcher::<S>::shared(self.0, self.1)?)
            }
        }
        let all = Platform::ALL
            .iter()
            .map(|&p| super::with_site(p, Build(settings, fleet)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self(all.into()))
    }

    /// The fetcher of `platform`.
    pub fn of(&self, platform: Platform) -> &Arc<dyn Fetch> {
        &self.0[platform.index()]
    }
}

impl std::fmt::Debug for Fetchers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetchers")
            .field("platforms", &self.0.len())
            .finish()
    }
}
