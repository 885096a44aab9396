//! The profile cache: one upstream flight per name, TTLs, negative entries, stale serving,
//! background refreshes and the caller's freshness wishes.
//!
//! One moka store holds the entries, seen two ways by age (one `cache.max_bytes` bounds both):
//!
//! - fresh, it answers found profiles for `ttl_seconds` and then, for `revalidate_seconds` more,
//!   still at once while one background refresh replaces them (stale-while-revalidate), and
//!   not-founds for `negative_ttl_seconds`. Failures are never stored.
//! - as a stale copy, a found profile is kept for `ttl + max_stale_seconds`, and read when a fetch
//!   fails, so a platform outage degrades to slightly old answers instead of errors (and for a
//!   caller whose `max-stale` takes them). A confirmed not-found replaces it ("gone stays
//!   gone"); in a fleet, from every replica's: the not-found is recorded in Redis
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
//! refresh finds a newer answer in Redis takes it instead of fetching). Its fetch runs in
//! [`Mode::Refresh`], so every request it sends is held to the platform's refresh share
//! (`refresh_share` of its outbound budget) and waits for nothing: with no room it is skipped.
//! A name starts at most one refresh a second ([`REFRESH_RETRY`]): its entry claims it here,
//! and with Redis the fleet's claim on the name makes it one a second for the fleet, whatever
//! the replicas' memory holds (a replica without memory rebuilds its entry from Redis on every
//! lookup). So a refresh that fails or is skipped is tried again by a later hit, never by
//! every hit. A refresh that fails stores nothing (the entry stays, as a failed miss leaves
//! it); one that says not-found replaces it like any not-found.
//!
//! # What a caller asks ([`Wants`])
//!
//! `max-age=N` refuses an entry older than N seconds: the caller's lookup joins the flight in
//! the air or starts one that takes only an answer fetched since (with Redis, Redis's entry too
//! when it is that new). When it refuses an answer this replica or the fleet holds, the fetch
//! is *forced*: [`ProfileCache::lookup`] answers `Err(`[`Forced`]`)`, the caller pays for it
//! (`crate::lookup`: one more quota unit) and flies it with [`ProfileCache::fly`]. `max-stale=N` also takes a found profile up to N
//! seconds past its TTL from the stale copy (checked against the fleet's tombstone like a
//! stand-in), and refreshes it. `only-if-cached` answers from memory or Redis, or
//! [`Served::NotCached`]; it starts no flight and no refresh.
//!
//! Entries hold the response body already serialised, so a hit costs a reference-count bump.
//! With `cache.enabled = false` entries expire at once but concurrent misses still coalesce.
//!
//! These stores are the replica's copy in front of the fleet's level ([`crate::fleet`]'s
//! seam: its entries, its one flight per name, its refresh limits), which holds nothing and
//! grants every claim at once without Redis: a flight first asks the fleet for the name's
//! entry or claims the name and fetches, or waits for the replica holding it; what is fetched
//! is written to both levels (`flight`).

mod answer;
mod flight;
mod rules;
mod stores;
#[cfg(test)]
mod upgrade_tests;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::config::Settings;
use crate::fleet::Fleet;
use crate::platform::Failure;
use crate::platform::fetcher::{Fetch, Fetched, Mode, Plan};
use crate::telemetry;
use crate::username::Username;

pub use answer::{Entry, Forward, How, REFRESH_RETRY, Served, Stored, Wants};
pub use rules::Trigger;
use rules::{Decision, Need};
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
    outcome: Result<Arc<Entry>, Fetched>,
    /// Where its answer came from.
    came: Came,
    /// True for a background refresh's flight: a caller that joined it is not bound by its
    /// share of the budget, and asks again when it failed.
    refresh: bool,
}

/// Where a flight's answer came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Came {
    /// This flight fetched it.
    Fetched,
    /// Another replica fetched it while this flight waited for it: its callers joined that
    /// fetch (`collapsed`), as callers joining a flight here do.
    Waited,
    /// It was stored already (here or in the fleet's): nothing was fetched for it.
    Stored,
}

/// What one flight is for.
struct Flight {
    /// The answers it may take instead of fetching.
    need: Need,
    /// Why a background refresh started; `None` for a caller's flight.
    refresh: Option<Trigger>,
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
    fn refresh(need: Need, trigger: Trigger) -> Self {
        Self {
            need,
            refresh: Some(trigger),
        }
    }

    /// The mode its fetch runs in.
    fn mode(&self) -> Mode {
        match self.refresh {
            Some(_) => Mode::Refresh,
            None => Mode::Caller,
        }
    }
}

/// A fetch a caller forces past a stored answer, not paid for yet.
#[derive(Debug)]
pub struct Forced {
    need: Need,
    forward: Forward,
}

/// The cache; see the module docs.
pub struct ProfileCache {
    stores: Stores,
    flight_deadline: Duration,
}

impl ProfileCache {
    /// Builds both stores from `[cache]`, in front of the `fleet`'s.
    pub fn new(settings: &Settings, fleet: &Fleet) -> Self {
        Self {
            stores: Stores::new(&settings.cache, fleet),
            flight_deadline: Duration::from_secs(60),
        }
    }

    /// Sets how long one flight may run at most: a safety net over the upstream timeouts and
    /// the retry budget, which bound it already.
    pub fn with_flight_deadline(mut self, deadline: Duration) -> Self {
        self.flight_deadline = deadline;
        self
    }

    /// Answers `name` for a caller who `wants` something of its freshness: from the cache, or
    /// through the one flight that runs `fetch` (see the module docs); or says that the caller
    /// forces a fetch (`Err(`[`Forced`]`)`: a fetch to pay for before [`ProfileCache::fly`] flies it).
    ///
    /// `fetch` runs only in a flight that goes to the platform (not when the fleet has the
    /// answer): the flight is a task of its own, so the fetch runs to its end (within the
    /// flight deadline), is stored and reaches the metrics and the breaker even when every
    /// caller has hung up by then.
    pub async fn lookup(
        &self,
        name: &Username,
        wants: &Wants,
        fetch: &Arc<dyn Fetch>,
    ) -> Result<Served, Forced> {
        let held = self.stores.fresh(name).await;
        let decided = held.as_ref().map(|entry| {
            let age = entry.stored_at.elapsed();
            let decision = self.stores.judge(name, entry, age, entry.hit(), wants);
            (age, decision)
        });
        if let (Some(entry), Some((age, Decision::Serve(trigger)))) = (&held, decided) {
            let served = self.serve_held(name, entry.clone(), age, trigger, wants, fetch);
            return Ok(served);
        }
        // Boxed: the miss path holds the flight's and the stale copy's futures, several KB that
        // every hit would otherwise carry (and move) in its own future.
        let refused = held.zip(decided.map(|(_, d)| d));
        Box::pin(self.beyond_memory(name, *wants, refused, fetch)).await
    }

    /// Flies the fetch a caller forced (and paid for): see [`ProfileCache::lookup`].
    pub async fn fly(
        &self,
        name: &Username,
        wants: &Wants,
        forced: Forced,
        fetch: &Arc<dyn Fetch>,
    ) -> Served {
        let Forced { need, forward } = forced;
        Box::pin(self.through_flight(name, *wants, need, forward, fetch)).await
    }

    /// A lookup memory did not answer: a stale copy the caller takes, the fleet's answer, or
    /// the one flight; a stale copy again if the flight failed in a way that allows one.
    async fn beyond_memory(
        &self,
        name: &Username,
        wants: Wants,
        held: Option<(Arc<Entry>, Decision)>,
        fetch: &Arc<dyn Fetch>,
    ) -> Result<Served, Forced> {
        let need = Need::of(&wants, Instant::now());
        let (mut forward, mut forced) = match &held {
            Some((_, Decision::Refused { fresh: true })) => (Forward::Request, true),
            Some((_, Decision::Refused { fresh: false })) => (Forward::Stale, true),
            Some(_) => (Forward::Stale, false),
            None => (Forward::UriMiss, false),
        };
        if forward == Forward::UriMiss && self.stores.stale_copy(name).await.is_some() {
            forward = Forward::Stale;
        }
        if wants.max_stale.is_some()
            && let Some(copy) = self.stores.stand_in(name).await
        {
            let age = copy.stored_at.elapsed();
            if let Decision::Serve(trigger) = self.stores.judge(name, &copy, age, 0, &wants) {
                let served = self.serve_held(name, copy, age, trigger, &wants, fetch);
                return Ok(served);
            }
        }
        // The fleet's answer, read here when the caller takes no flight (only-if-cached) or may
        // refuse it (max-age: a fetch it forces is paid for).
        let ask_fleet = wants.only_if_cached || (need != Need::Any && !forced);
        if ask_fleet && let Some(entry) = self.stores.fleet_entry(name).await {
            let age = entry.stored_at.elapsed();
            match self.stores.judge(name, &entry, age, 0, &wants) {
                Decision::Serve(trigger) => {
                    self.stores.keep(name, entry.clone()).await;
                    let served = self.serve_held(name, entry, age, trigger, &wants, fetch);
                    return Ok(served);
                }
                Decision::Refused { fresh } => {
                    forced = true;
                    forward = if fresh {
                        Forward::Request
                    } else {
                        Forward::Stale
                    };
                }
                Decision::Expired => {}
            }
        }
        if wants.only_if_cached {
            return Ok(Served::NotCached);
        }
        if forced {
            return Err(Forced { need, forward });
        }
        Ok(self.through_flight(name, wants, need, forward, fetch).await)
    }

    /// The caller's flight: joined or started, and, when a flight it joined brought an answer
    /// older than the caller takes, one more that it starts (or joins) itself.
    async fn through_flight(
        &self,
        name: &Username,
        wants: Wants,
        need: Need,
        forward: Forward,
        fetch: &Arc<dyn Fetch>,
    ) -> Served {
        let platform = name.platform();
        let mut second = false;
        let (landed, started) = loop {
            let (mut landing, started) = self.join_or_start(name, fetch, Flight::caller(need));
            let landed = match landing.wait_for(Option::is_some).await {
                Ok(landed) => landed.clone(),
                Err(_) => None,
            };
            let Some(landed) = landed else {
                // The flight's task ended without a result (it panicked): a failure like any other.
                telemetry::cache(platform, "miss");
                return Served::Failed {
                    report: Fetched::unsent(Failure::unavailable(
                        "the fetch ended without a result",
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
            Ok(entry) if landed.came != Came::Stored => {
                // A caller that waited on another replica's fetch joined it, as one that joined
                // a flight here did.
                let collapsed = !started || landed.came == Came::Waited;
                telemetry::cache(platform, if collapsed { "hit" } else { "miss" });
                let ttl = self
                    .stores
                    .rules
                    .ttl_left(&entry, entry.stored_at.elapsed());
                let stored = self.stores.keeps(&entry.value);
                Served::Stored {
                    entry,
                    how: How::Fetched {
                        forward,
                        collapsed,
                        stored,
                    },
                    ttl,
                }
            }
            Ok(entry) => {
                // The fleet's answer (or one a flight stored just before): maybe in its window.
                let age = entry.stored_at.elapsed();
                let trigger = match self.stores.judge(name, &entry, age, 0, &wants) {
                    Decision::Serve(trigger) => trigger,
                    _ => None,
                };
                self.serve_held(name, entry, age, trigger, &wants, fetch)
            }
            Err(failure) => {
                let stale = if failure.failure().is_some_and(Failure::may_serve_stale) {
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
    /// a flight of the name is in the air (its answer replaces the entry anyway). The flight
    /// then claims the name's refresh for the fleet before it fetches (`flight`).
    fn refresh(
        &self,
        name: &Username,
        entry: &Arc<Entry>,
        age: Duration,
        trigger: Trigger,
        fetch: &Arc<dyn Fetch>,
    ) {
        if !fetch.refreshes() || !entry.claim_refresh(age) {
            return;
        }
        let need = Need::After(entry.stored_at + REFRESH_MARGIN);
        // A flight of the name in the air is joined by nobody: its answer replaces the entry.
        let _ = self.join_or_start(name, fetch, Flight::refresh(need, trigger));
    }

    /// The flight of `name`: the one in the air, or a new one (then `true`).
    fn join_or_start(
        &self,
        name: &Username,
        fetch: &Arc<dyn Fetch>,
        flight: Flight,
    ) -> (Landing, bool) {
        let mut flights = self.stores.lock_flights();
        if let Some(landing) = flights.get(name) {
            return (landing.clone(), false);
        }
        let landing = flight::start(
            &self.stores,
            &mut flights,
            name,
            fetch.clone(),
            flight,
            self.flight_deadline,
        );
        (landing, true)
    }

    /// Serves a stored `entry` (`age` old) as a hit, and starts the background refresh its
    /// verdict asked for (`trigger`), unless the caller wants no upstream request at all.
    fn serve_held(
        &self,
        name: &Username,
        entry: Arc<Entry>,
        age: Duration,
        trigger: Option<Trigger>,
        wants: &Wants,
        fetch: &Arc<dyn Fetch>,
    ) -> Served {
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

/// Runs `name`'s fetch in `mode`, bounded by the flight deadline.
///
/// The fetch future (kilobytes: the whole upstream exchange) comes boxed from the fetcher, so
/// a flight's own future stays small: the flight task is spawned and moved for every miss,
/// including the ones the fleet answers without fetching.
async fn fetch_within(
    deadline: Duration,
    fetch: Arc<dyn Fetch>,
    name: Username,
    mode: Mode,
) -> Fetched {
    match tokio::time::timeout(deadline, fetch.fetch(&name, Plan::Whole, mode)).await {
        Ok(fetched) => fetched,
        Err(_) => Fetched::unsent(Failure::unavailable(format!(
            "the fetch did not end within {deadline:?}"
        ))),
    }
}
