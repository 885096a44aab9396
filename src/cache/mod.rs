//! The profile cache: one upstream flight per name, TTLs, negative entries, stale serving,
//! background refreshes and the caller's freshness wishes.
//!
//! Two moka stores share the same entries:
//!
//! - `fresh` answers found profiles for `ttl_seconds` and then, for `revalidate_seconds` more,
//!   still at once while one background refresh replaces them (stale-while-revalidate), and
//!   not-founds for `negative_ttl_seconds`. Failures are never stored.
//! - `stale` keeps found profiles for `ttl + max_stale_seconds`, and is read when a fetch
//!   fails, so a platform outage degrades to slightly old answers instead of errors (and for a
//!   caller whose `max-stale` takes them). A confirmed not-found removes the name from it
//!   ("gone stays gone"); in a fleet, from every replica's: the not-found is recorded in Redis
//!   as a tombstone that is consulted before this store (see `Stores::stand_in`).
//!
//! Misses of one name share one *flight*: a task of its own that fetches, stores and then tells
//! every caller waiting on it. The flight belongs to no caller, so callers that hang up or time
//! out never cancel it: it runs to its end (bounded by the upstream timeouts, the retry budget
//! and a flight deadline), and the next caller is served from the cache.
//!
//! # Background refreshes
//!
//! A hit that finds its entry in the stale-while-revalidate window, or hot (asked `hot_hits`
//! times here) within one fetch time of expiring (`rules::Rules::lead`), is answered at
//! once and starts a refresh: a flight like a miss's, with nobody waiting on it, that wants an
//! answer newer than the entry. It is the same one flight (none starts while one is in the air
//! for the name, and with Redis the fleet's lock makes it one per fleet: a replica whose
//! refresh finds a newer answer in Redis takes it instead of fetching). Its fetch runs inside
//! [`crate::upstream::gate::background`], so every request it sends is held to the platform's
//! refresh share (`refresh_share` of its outbound budget) and waits for nothing: with no room
//! it is skipped. An entry starts at most one refresh a second here ([`REFRESH_RETRY`]), so a
//! refresh that fails or is skipped is tried again by a later hit, never by every hit. A
//! refresh that fails stores nothing (the entry stays, as a failed miss leaves it); one that
//! says not-found replaces it like any not-found.
//!
//! # What a caller asks ([`Wants`])
//!
//! `max-age=N` refuses an entry older than N seconds: the caller's lookup joins the flight in
//! the air or starts one that takes only an answer fetched since (with Redis, Redis's entry too
//! when it is that new). When it refuses an answer this replica or the fleet holds, the fetch
//! is *forced*, and the lookup pays for it first (the handler's `pay`: one more quota unit);
//! unpaid, it ends [`Served::Unpaid`]. `max-stale=N` also takes a found profile up to N
//! seconds past its TTL from the stale copy (checked against the fleet's tombstone like a
//! stand-in), and refreshes it. `only-if-cached` answers from memory or Redis, or
//! [`Served::NotCached`]; it starts no flight and no refresh.
//!
//! Entries hold the response body already serialised, so a hit costs a reference-count bump.
//! With `cache.enabled = false` entries expire at once but concurrent misses still coalesce.
//!
//! In a fleet (`[redis]` set) these stores are the replica's copy in front of the fleet's
//! (`fleet_tier`): a flight first reads Redis, then takes the fleet's lock on the name and
//! fetches, or waits for the replica holding it; what is fetched is written to both levels.

mod answer;
mod fleet_tier;
mod flight;
mod rules;
mod stores;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::config::Settings;
use crate::fleet::Fleet;
use crate::platform::{Failure, FailureReport, Lookup, Platform, Report};
use crate::telemetry;
use crate::upstream::gate::RefreshBudget;
use crate::username::Username;

pub use answer::{Entry, Forward, How, REFRESH_RETRY, Served, Stored, Wants};
pub use rules::Trigger;
use rules::{Need, Verdict};
use stores::Stores;

/// `profile_lookup_cache_refreshes_total{platform, trigger, outcome}`: background refreshes
/// by why they started (`revalidate`, `ahead`, `max_stale`) and how they ended (`refreshed`,
/// `gone`, `fleet`: another replica's newer answer, `skipped`: no refresh budget, `failed`).
pub const CACHE_REFRESHES: &str = "profile_lookup_cache_refreshes_total";
/// A refresh wants an answer fetched at least this long after the entry it replaces: more
/// than the rounding of a fetch time to whole milliseconds on its way through Redis.
const REFRESH_MARGIN: Duration = Duration::from_millis(50);

/// Where the callers of one flight wait for it to land.
type Landing = watch::Receiver<Option<Landed>>;

/// What a flight came to.
#[derive(Clone)]
struct Landed {
    /// The stored entry, or the failure (never stored).
    outcome: Result<Arc<Entry>, FailureReport>,
    /// False when the flight found a stored entry (here or in the fleet's) instead of fetching.
    fetched: bool,
    /// True for a background refresh's flight: a caller that joined it is not bound by its
    /// share of the budget, and asks again when it failed.
    refresh: bool,
}

/// What one flight is for.
struct Flight {
    /// The answers it may take instead of fetching.
    need: Need,
    /// For a background refresh: why it started, and the platform's refresh share its fetch
    /// is held to.
    refresh: Option<(Trigger, Arc<RefreshBudget>)>,
}

impl Flight {
    /// A caller's flight.
    fn caller(need: Need) -> Self {
        Self {
            need,
            refresh: None,
        }
    }

    /// A background refresh.
    fn refresh(need: Need, trigger: Trigger, share: Arc<RefreshBudget>) -> Self {
        Self {
            need,
            refresh: Some((trigger, share)),
        }
    }

    /// The refresh share its fetch runs in, for a background refresh.
    fn share(&self) -> Option<Arc<RefreshBudget>> {
        self.refresh.as_ref().map(|(_, share)| share.clone())
    }
}

/// The cache; see the module docs.
pub struct ProfileCache {
    stores: Stores,
    flight_deadline: Duration,
    /// Each platform's refresh share, by [`Platform::index`].
    refresh: Vec<Arc<RefreshBudget>>,
}

impl ProfileCache {
    /// Builds both stores from `[cache]`, and each platform's refresh share from its budget;
    /// with a `fleet`, they sit in front of the fleet's.
    pub fn new(settings: &Settings, fleet: Option<Fleet>) -> Self {
        let refresh = Platform::ALL
            .iter()
            .map(|&p| {
                Arc::new(RefreshBudget::new(
                    p.as_str(),
                    settings.platform(p),
                    settings.cache.refresh_share,
                    fleet.clone(),
                ))
            })
            .collect();
        Self {
            stores: Stores::new(&settings.cache, fleet),
            flight_deadline: Duration::from_secs(60),
            refresh,
        }
    }

    /// Sets how long one flight may run at most: a safety net over the upstream timeouts and
    /// the retry budget, which bound it already.
    pub fn with_flight_deadline(mut self, deadline: Duration) -> Self {
        self.flight_deadline = deadline;
        self
    }

    /// Answers `name` for a caller who `wants` something of its freshness: from the cache, or
    /// through the one flight that fetches it (see the module docs).
    ///
    /// `fetch` is called only by a flight that goes to the platform (not when the fleet has the
    /// answer): the flight is a task of its own, so the fetch runs to its end (within the
    /// flight deadline), is stored and reaches the metrics and the breaker even when every
    /// caller has hung up by then. The closure, not its future, travels into the task: a fetch
    /// future is large, and one that is never polled need never be built. It is cloned for a
    /// second flight (a refresh, or a caller's retry for a newer answer), so it should be
    /// cheap to clone. `pay` is called once, before a fetch the caller forces; `false` ends
    /// the lookup [`Served::Unpaid`].
    pub async fn lookup<C, F, P, PF>(
        &self,
        name: &Username,
        wants: &Wants,
        fetch: C,
        pay: P,
    ) -> Served
    where
        C: FnOnce(Username) -> F + Clone + Send + 'static,
        F: Future<Output = Report> + Send + 'static,
        P: FnOnce() -> PF,
        PF: Future<Output = bool>,
    {
        let held = self.stores.fresh.get(name).await;
        let verdict = held.as_ref().map(|entry| {
            let age = entry.stored_at.elapsed();
            let verdict = self.stores.judge(name, entry, age, entry.hit(), wants);
            (age, verdict)
        });
        if let (Some(entry), Some((age, Verdict::Serve(trigger)))) = (&held, verdict) {
            return self.serve_held(name, entry.clone(), age, trigger, wants, fetch);
        }
        // Boxed: the miss path holds the flight's and the stale copy's futures, several KB that
        // every hit would otherwise carry (and move) in its own future.
        let refused = held.zip(verdict.map(|(_, v)| v));
        Box::pin(self.beyond_memory(name, *wants, refused, fetch, pay)).await
    }

    /// A lookup memory did not answer: a stale copy the caller takes, the fleet's answer, or
    /// the one flight; a stale copy again if the flight failed in a way that allows one.
    async fn beyond_memory<C, F, P, PF>(
        &self,
        name: &Username,
        wants: Wants,
        held: Option<(Arc<Entry>, Verdict)>,
        fetch: C,
        pay: P,
    ) -> Served
    where
        C: FnOnce(Username) -> F + Clone + Send + 'static,
        F: Future<Output = Report> + Send + 'static,
        P: FnOnce() -> PF,
        PF: Future<Output = bool>,
    {
        let need = Need::of(&wants, Instant::now());
        let (mut forward, mut forced) = match &held {
            Some((_, Verdict::Refused { fresh: true })) => (Forward::Request, true),
            Some((_, Verdict::Refused { fresh: false })) => (Forward::Stale, true),
            Some(_) => (Forward::Stale, false),
            None => (Forward::UriMiss, false),
        };
        if let Some(stale) = &self.stores.stale
            && forward == Forward::UriMiss
            && stale.contains_key(name)
        {
            forward = Forward::Stale;
        }
        if wants.max_stale.is_some()
            && let Some(copy) = self.stores.stand_in(name).await
        {
            let age = copy.stored_at.elapsed();
            if let Verdict::Serve(trigger) = self.stores.judge(name, &copy, age, 0, &wants) {
                return self.serve_held(name, copy, age, trigger, &wants, fetch);
            }
        }
        // The fleet's answer, read here when the caller takes no flight (only-if-cached) or may
        // refuse it (max-age: a fetch it forces is paid for).
        let ask_fleet = wants.only_if_cached || (need != Need::Any && !forced);
        if ask_fleet
            && let Some(shared) = &self.stores.shared
            && let Some(entry) = shared.peek(name).await
        {
            let age = entry.stored_at.elapsed();
            match self.stores.judge(name, &entry, age, 0, &wants) {
                Verdict::Serve(trigger) => {
                    self.stores.keep(name, entry.clone()).await;
                    return self.serve_held(name, entry, age, trigger, &wants, fetch);
                }
                Verdict::Refused { fresh } => {
                    forced = true;
                    forward = if fresh {
                        Forward::Request
                    } else {
                        Forward::Stale
                    };
                }
                Verdict::Expired => {}
            }
        }
        if wants.only_if_cached {
            return Served::NotCached;
        }
        if forced && !pay().await {
            return Served::Unpaid;
        }
        self.through_flight(name, wants, need, forward, fetch).await
    }

    /// The caller's flight: joined or started, and, when a flight it joined brought an answer
    /// older than the caller takes, one more that it starts (or joins) itself.
    async fn through_flight<C, F>(
        &self,
        name: &Username,
        wants: Wants,
        need: Need,
        forward: Forward,
        fetch: C,
    ) -> Served
    where
        C: FnOnce(Username) -> F + Clone + Send + 'static,
        F: Future<Output = Report> + Send + 'static,
    {
        let platform = name.platform();
        let mut second = false;
        let (landed, started) = loop {
            let (mut landing, started) =
                self.join_or_start(name, fetch.clone(), Flight::caller(need));
            let landed = match landing.wait_for(Option::is_some).await {
                Ok(landed) => landed.clone(),
                Err(_) => None,
            };
            let Some(landed) = landed else {
                // The flight's task ended without a result (it panicked): a failure like any other.
                telemetry::cache(platform, "miss");
                return Served::Failed {
                    report: FailureReport::unsent(Failure::Unavailable(
                        "the fetch ended without a result".into(),
                    )),
                    forward,
                };
            };
            let too_old = matches!(&landed.outcome, Ok(entry) if !need.accepts(entry));
            // A refresh that failed may have failed for want of its share of the budget, which
            // binds no caller: a caller that joined it asks again with a flight of its own.
            let refresh_failed = landed.refresh && landed.outcome.is_err();
            if started || second || !(too_old || refresh_failed) {
                break (landed, started);
            }
            second = true;
        };
        match landed.outcome {
            Ok(entry) if landed.fetched => {
                telemetry::cache(platform, if started { "miss" } else { "hit" });
                let ttl = self
                    .stores
                    .rules
                    .ttl_left(&entry, entry.stored_at.elapsed());
                let stored = self.stores.keeps(&entry.value);
                Served::Stored {
                    entry,
                    how: How::Fetched {
                        forward,
                        collapsed: !started,
                        stored,
                    },
                    ttl,
                }
            }
            Ok(entry) => {
                // The fleet's answer (or one a flight stored just before): maybe in its window.
                let age = entry.stored_at.elapsed();
                let trigger = match self.stores.judge(name, &entry, age, 0, &wants) {
                    Verdict::Serve(trigger) => trigger,
                    _ => None,
                };
                self.serve_held(name, entry, age, trigger, &wants, fetch)
            }
            Err(failure) => {
                let stale = if failure.failure.may_serve_stale() {
                    // Never older than the caller's max-age allows.
                    self.stores
                        .stand_in(name)
                        .await
                        .filter(|entry| need.accepts(entry))
                } else {
                    None
                };
                match stale {
                    Some(entry) => {
                        telemetry::cache(platform, "stale");
                        let ttl = self
                            .stores
                            .rules
                            .ttl_left(&entry, entry.stored_at.elapsed());
                        Served::Stale {
                            entry,
                            failure,
                            ttl,
                        }
                    }
                    None => {
                        telemetry::cache(platform, "miss");
                        Served::Failed {
                            report: failure,
                            forward,
                        }
                    }
                }
            }
        }
    }

    /// Starts a background refresh of `name` (whose entry is `entry`, `age` old), unless the
    /// platform's refresh share is 0, the entry started one less than [`REFRESH_RETRY`] ago, or
    /// a flight of the name is in the air (its answer replaces the entry anyway).
    fn refresh<C, F>(
        &self,
        name: &Username,
        entry: &Arc<Entry>,
        age: Duration,
        trigger: Trigger,
        fetch: C,
    ) where
        C: FnOnce(Username) -> F + Send + 'static,
        F: Future<Output = Report> + Send + 'static,
    {
        let Some(share) = self.refresh.get(name.platform().index()) else {
            return;
        };
        if !share.is_open() || !entry.claim_refresh(age) {
            return;
        }
        let mut flights = self.stores.lock_flights();
        if flights.contains_key(name) {
            return;
        }
        let need = Need::After(entry.stored_at + REFRESH_MARGIN);
        let flight = Flight::refresh(need, trigger, share.clone());
        flight::start(
            &self.stores,
            &mut flights,
            name,
            fetch,
            flight,
            self.flight_deadline,
        );
    }

    /// The flight of `name`: the one in the air, or a new one (then `true`).
    fn join_or_start<C, F>(&self, name: &Username, fetch: C, flight: Flight) -> (Landing, bool)
    where
        C: FnOnce(Username) -> F + Send + 'static,
        F: Future<Output = Report> + Send + 'static,
    {
        let mut flights = self.stores.lock_flights();
        if let Some(landing) = flights.get(name) {
            return (landing.clone(), false);
        }
        let landing = flight::start(
            &self.stores,
            &mut flights,
            name,
            fetch,
            flight,
            self.flight_deadline,
        );
        (landing, true)
    }

    /// Serves a stored `entry` (`age` old) as a hit, and starts the background refresh its
    /// verdict asked for (`trigger`), unless the caller wants no upstream request at all.
    fn serve_held<C, F>(
        &self,
        name: &Username,
        entry: Arc<Entry>,
        age: Duration,
        trigger: Option<Trigger>,
        wants: &Wants,
        fetch: C,
    ) -> Served
    where
        C: FnOnce(Username) -> F + Send + 'static,
        F: Future<Output = Report> + Send + 'static,
    {
        telemetry::cache(name.platform(), "hit");
        if let Some(trigger) = trigger
            && !wants.only_if_cached
        {
            self.refresh(name, &entry, age, trigger, fetch);
        }
        let ttl = self.stores.rules.ttl_left(&entry, age);
        Served::Stored {
            entry,
            how: How::Hit,
            ttl,
        }
    }
}

/// Runs one fetch, bounded by the flight deadline; inside a refresh's share when it is a
/// background refresh.
///
/// The fetch future (kilobytes: the whole upstream exchange) is boxed before the first await,
/// so a flight's own future stays small: the flight task is spawned and moved for every miss,
/// including the ones the fleet answers without fetching.
fn fetch_within<F>(
    deadline: Duration,
    fetch: F,
    share: Option<Arc<RefreshBudget>>,
) -> impl Future<Output = Report> + Send
where
    F: Future<Output = Report> + Send + 'static,
{
    let fetch: std::pin::Pin<Box<dyn Future<Output = Report> + Send>> = match share {
        Some(share) => Box::pin(crate::upstream::gate::background(share, fetch)),
        None => Box::pin(fetch),
    };
    async move {
        match tokio::time::timeout(deadline, fetch).await {
            Ok(report) => report,
            Err(_) => Report {
                lookup: Lookup::unavailable(format!("the fetch did not end within {deadline:?}")),
                upstream_requests: 0,
                source: None,
            },
        }
    }
}
