//! The profile cache: one upstream flight per name, TTLs, negative entries, stale serving.
//!
//! Two moka stores share the same entries:
//!
//! - `fresh` answers within `ttl_seconds` (found) or `negative_ttl_seconds` (not found).
//!   Failures are never stored.
//! - `stale` keeps found profiles for `ttl + max_stale_seconds`, and is read only when a fetch
//!   fails, so a platform outage degrades to slightly old answers instead of errors. A
//!   confirmed not-found removes the name from it ("gone stays gone"); in a fleet, from every
//!   replica's: the not-found is recorded in Redis as a tombstone that is consulted before
//!   this store (see `Stores::stand_in`).
//!
//! Misses of one name share one *flight*: a task of its own that fetches, stores and then tells
//! every caller waiting on it. The flight belongs to no caller, so callers that hang up or time
//! out never cancel it: it runs to its end (bounded by the upstream timeouts, the retry budget
//! and a flight deadline), and the next caller is served from the cache.
//!
//! Entries hold the response body already serialised, so a hit costs a reference-count bump.
//! With `cache.enabled = false` entries expire at once but concurrent misses still coalesce.
//!
//! In a fleet (`[redis]` set) these stores are the replica's copy in front of the fleet's
//! (`fleet_tier`): a flight first reads Redis, then takes the fleet's lock on the name and
//! fetches, or waits for the replica holding it; what is fetched is written to both levels.

mod fleet_tier;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use moka::Expiry;
use moka::future::Cache;
use tokio::sync::watch;
use tracing::Instrument;

use crate::config::CacheConfig;
use crate::fleet::Fleet;
use crate::platform::{Failure, FailureReport, Lookup, Report};
use crate::telemetry;
use crate::username::Username;

/// A stored answer: what the API returns for a name.
#[derive(Debug)]
pub struct Entry {
    /// The answer.
    pub value: Stored,
    /// When the upstream gave it (to whichever replica fetched it): `Age` counts from here.
    pub stored_at: Instant,
    /// Upstream requests the fetch took (for the access log of the request that fetched).
    pub upstream_requests: u32,
    /// The platform source that gave the answer (`x-source`), when known.
    pub source: Option<&'static str>,
}

/// The cacheable answers.
#[derive(Debug, Clone)]
pub enum Stored {
    /// A profile body (serialised once) and its private flag.
    Found {
        /// The exact JSON response body.
        body: Bytes,
        /// Whether the account is private.
        private: bool,
    },
    /// The platform says there is no such user.
    NotFound,
}

/// How a request was served, for headers and the access log.
#[derive(Debug, Clone)]
pub enum Served {
    /// From a stored answer; `fetched` tells whether this request's own fetch stored it.
    Fresh {
        /// The answer.
        entry: Arc<Entry>,
        /// True for the caller whose fetch produced the entry (a miss), false for a hit.
        fetched: bool,
        /// Seconds the entry may still be served fresh.
        max_age: u64,
    },
    /// The fetch failed and an older profile was served instead.
    Stale {
        /// The old answer.
        entry: Arc<Entry>,
        /// What the failed fetch reported.
        failure: FailureReport,
    },
    /// The fetch failed and nothing could stand in for it.
    Failed(FailureReport),
}

/// The cache; see the module docs.
pub struct ProfileCache {
    stores: Stores,
    ttl: Duration,
    negative_ttl: Duration,
    flight_deadline: Duration,
}

/// What a flight's task needs after its caller is gone: the stores and the flights in the air.
#[derive(Clone)]
struct Stores {
    fresh: Cache<Username, Arc<Entry>>,
    stale: Option<Cache<Username, Arc<Entry>>>,
    flights: Arc<Mutex<HashMap<Username, Landing>>>,
    /// The fleet's level, when `[redis]` is set.
    shared: Option<Arc<fleet_tier::FleetTier>>,
    /// Which answers outlive their insert here (found, not found, stale copies): an entry
    /// whose lifetime is zero (`max_bytes = 0`, or the cache off) is not inserted at all.
    lasting: Lasting,
}

#[derive(Clone, Copy)]
struct Lasting {
    found: bool,
    not_found: bool,
    stale: bool,
}

/// Where the callers of one flight wait for it to land.
type Landing = watch::Receiver<Option<Landed>>;

/// What a flight came to.
#[derive(Clone)]
struct Landed {
    /// The stored entry, or the failure (never stored).
    outcome: Result<Arc<Entry>, FailureReport>,
    /// False when the flight found a just-stored entry instead of fetching.
    fetched: bool,
}

struct TtlByOutcome {
    found: Duration,
    not_found: Duration,
}

impl Expiry<Username, Arc<Entry>> for TtlByOutcome {
    /// The lifetime left counts from the original fetch: an entry another replica fetched a
    /// while ago expires here when it does there.
    fn expire_after_create(
        &self,
        _: &Username,
        entry: &Arc<Entry>,
        _: Instant,
    ) -> Option<Duration> {
        let lifetime = match entry.value {
            Stored::Found { .. } => self.found,
            Stored::NotFound => self.not_found,
        };
        Some(lifetime.saturating_sub(entry.stored_at.elapsed()))
    }
}

fn weight(_: &Username, entry: &Arc<Entry>) -> u32 {
    let body = match &entry.value {
        Stored::Found { body, .. } => body.len(),
        Stored::NotFound => 0,
    };
    u32::try_from(body + 64).unwrap_or(u32::MAX)
}

impl ProfileCache {
    /// Builds both stores from `[cache]`; with a `fleet`, they sit in front of the fleet's.
    pub fn new(settings: &CacheConfig, fleet: Option<Fleet>) -> Self {
        let (ttl, negative_ttl) = if settings.enabled {
            (
                Duration::from_secs(settings.ttl_seconds),
                Duration::from_secs(settings.negative_ttl_seconds),
            )
        } else {
            (Duration::ZERO, Duration::ZERO)
        };
        // `max_bytes = 0` keeps nothing in this replica's memory (moka would still hold an
        // entry until its next eviction pass): every answer then comes from the fleet's level,
        // or, without one, from a fetch that only concurrent callers share.
        let in_memory = |lifetime: Duration| {
            if settings.max_bytes == 0 {
                Duration::ZERO
            } else {
                lifetime
            }
        };
        let fresh = Cache::builder()
            .max_capacity(settings.max_bytes)
            .weigher(weight)
            .expire_after(TtlByOutcome {
                found: in_memory(ttl),
                not_found: in_memory(negative_ttl),
            })
            .build();
        let max_stale = if settings.enabled {
            Duration::from_secs(settings.max_stale_seconds)
        } else {
            Duration::ZERO
        };
        let stale = (!max_stale.is_zero()).then(|| {
            Cache::builder()
                .max_capacity(settings.max_bytes)
                .weigher(weight)
                .expire_after(TtlByOutcome {
                    found: in_memory(ttl + max_stale),
                    not_found: Duration::ZERO,
                })
                .build()
        });
        let lasting = Lasting {
            found: !in_memory(ttl).is_zero(),
            not_found: !in_memory(negative_ttl).is_zero(),
            stale: !in_memory(ttl + max_stale).is_zero(),
        };
        Self {
            stores: Stores {
                fresh,
                stale,
                lasting,
                flights: Arc::default(),
                shared: fleet.map(|fleet| {
                    Arc::new(fleet_tier::FleetTier::new(
                        fleet,
                        ttl,
                        negative_ttl,
                        max_stale,
                    ))
                }),
            },
            ttl,
            negative_ttl,
            flight_deadline: Duration::from_secs(60),
        }
    }

    /// Sets how long one flight may run at most: a safety net over the upstream timeouts and
    /// the retry budget, which bound it already.
    pub fn with_flight_deadline(mut self, deadline: Duration) -> Self {
        self.flight_deadline = deadline;
        self
    }

    /// Answers `name` from the cache, or joins the one flight that fetches it.
    ///
    /// `fetch` is called only by a flight that goes to the platform (not when the fleet has the
    /// answer): the flight is a task of its own, so the fetch runs to its end (within the
    /// flight deadline), is stored and reaches the metrics and the breaker even when every
    /// caller has hung up by then. The closure, not its future, travels into the task: a fetch
    /// future is large, and one that is never polled need never be built.
    pub async fn get_or_fetch<C, F>(&self, name: &Username, fetch: C) -> Served
    where
        C: FnOnce(Username) -> F + Send + 'static,
        F: Future<Output = Report> + Send + 'static,
    {
        if let Some(entry) = self.stores.fresh.get(name).await {
            telemetry::cache(name.platform(), "hit");
            return self.fresh(entry, false);
        }
        // Boxed: the miss path holds the flight's and the stale copy's futures, several KB that
        // every hit would otherwise carry (and move) in its own future.
        Box::pin(self.miss(name, fetch)).await
    }

    /// A memory miss: the one flight (which asks the fleet first), then a stale copy if the
    /// flight failed in a way that allows one.
    async fn miss<C, F>(&self, name: &Username, fetch: C) -> Served
    where
        C: FnOnce(Username) -> F + Send + 'static,
        F: Future<Output = Report> + Send + 'static,
    {
        let platform = name.platform();
        let (mut landing, started) = self.join_or_start(name, fetch);
        let landed = match landing.wait_for(Option::is_some).await {
            Ok(landed) => landed.clone(),
            Err(_) => None,
        };
        let Some(landed) = landed else {
            // The flight's task ended without a result (it panicked): a failure like any other.
            telemetry::cache(platform, "miss");
            return Served::Failed(FailureReport::unsent(Failure::Unavailable(
                "the fetch ended without a result".into(),
            )));
        };
        let fetched = started && landed.fetched;
        match landed.outcome {
            Ok(entry) => {
                telemetry::cache(platform, if fetched { "miss" } else { "hit" });
                self.fresh(entry, fetched)
            }
            Err(failure) => {
                let stale = if failure.failure.may_serve_stale() {
                    self.stores.stand_in(name).await
                } else {
                    None
                };
                match stale {
                    Some(entry) => {
                        telemetry::cache(platform, "stale");
                        Served::Stale { entry, failure }
                    }
                    _ => {
                        telemetry::cache(platform, "miss");
                        Served::Failed(failure)
                    }
                }
            }
        }
    }

    /// The flight of `name`: the one in the air, or a new one (then `true`).
    fn join_or_start<C, F>(&self, name: &Username, fetch: C) -> (Landing, bool)
    where
        C: FnOnce(Username) -> F + Send + 'static,
        F: Future<Output = Report> + Send + 'static,
    {
        let mut flights = self.stores.lock_flights();
        if let Some(landing) = flights.get(name) {
            return (landing.clone(), false);
        }
        let (tx, landing) = watch::channel(None);
        flights.insert(name.clone(), landing.clone());
        let flight = fly(
            self.stores.clone(),
            name.clone(),
            fetch,
            tx,
            self.flight_deadline,
        );
        // The flight's log lines carry the id of the request that started it.
        tokio::spawn(flight.instrument(tracing::Span::current()));
        (landing, true)
    }

    fn fresh(&self, entry: Arc<Entry>, fetched: bool) -> Served {
        let ttl = match entry.value {
            Stored::Found { .. } => self.ttl,
            Stored::NotFound => self.negative_ttl,
        };
        let max_age = ttl.saturating_sub(entry.stored_at.elapsed()).as_secs();
        Served::Fresh {
            entry,
            fetched,
            max_age,
        }
    }
}

/// One flight: fetches `name` unless a flight that just landed stored it, stores the result,
/// then leaves the map and tells everyone waiting.
async fn fly<C, F>(
    stores: Stores,
    name: Username,
    fetch: C,
    tx: watch::Sender<Option<Landed>>,
    deadline: Duration,
) where
    C: FnOnce(Username) -> F + Send + 'static,
    F: Future<Output = Report> + Send + 'static,
{
    // Leaves the map however the task ends, a panic included, so a name never sticks.
    let _leave = Leave {
        stores: stores.clone(),
        name: name.clone(),
    };
    // A flight started just after another landed (its caller missed before the insert) finds
    // that flight's entry instead of asking the platform again.
    if let Some(entry) = stores.fresh.get(&name).await {
        let _ = tx.send(Some(Landed {
            outcome: Ok(entry),
            fetched: false,
        }));
        return;
    }
    let landed = match stores.shared.clone() {
        Some(shared) => shared.fly(&stores, &name, fetch, deadline).await,
        None => Landed {
            outcome: stores
                .store(&name, fetch_within(deadline, fetch(name.clone())).await)
                .await,
            fetched: true,
        },
    };
    drop(_leave);
    let _ = tx.send(Some(landed));
}

/// Runs one fetch, bounded by the flight deadline.
///
/// The fetch future (kilobytes: the whole upstream exchange) is boxed before the first await,
/// so a flight's own future stays small: the flight task is spawned and moved for every miss,
/// including the ones the fleet answers without fetching.
fn fetch_within<F>(deadline: Duration, fetch: F) -> impl Future<Output = Report> + Send
where
    F: Future<Output = Report> + Send + 'static,
{
    let fetch = Box::pin(fetch);
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

/// Removes a flight from the map when its task ends.
struct Leave {
    stores: Stores,
    name: Username,
}

impl Drop for Leave {
    fn drop(&mut self) {
        self.stores.lock_flights().remove(&self.name);
    }
}

impl Stores {
    fn lock_flights(&self) -> std::sync::MutexGuard<'_, HashMap<Username, Landing>> {
        self.flights
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Stores what a fetch found; failures are never stored.
    async fn store(&self, name: &Username, report: Report) -> Result<Arc<Entry>, FailureReport> {
        let value = match report.lookup {
            Lookup::Found(profile) => Stored::Found {
                body: profile.json().clone(),
                private: profile.is_private(),
            },
            Lookup::NotFound => Stored::NotFound,
            Lookup::Failed(failure) => {
                return Err(FailureReport {
                    failure,
                    upstream_requests: report.upstream_requests,
                    source: report.source,
                });
            }
        };
        let entry = Arc::new(Entry {
            value,
            stored_at: Instant::now(),
            upstream_requests: report.upstream_requests,
            source: report.source,
        });
        self.keep(name, entry.clone()).await;
        Ok(entry)
    }

    /// What may stand in for a failed fetch of `name`: the newer of this replica's stale copy
    /// and the fleet's stale record. A not-found that some replica recorded after this
    /// replica's copy was fetched wins: nothing is served and the copy is dropped, so a profile
    /// the platform said is gone comes back on no replica. When Redis cannot be asked, this
    /// replica's copy.
    async fn stand_in(&self, name: &Username) -> Option<Arc<Entry>> {
        let stale = self.stale.as_ref()?;
        let mine = stale.get(name).await;
        let Some(shared) = &self.shared else {
            return mine;
        };
        let Some(record) = shared.stale_record(name).await else {
            return mine;
        };
        let newest = match (record, mine) {
            (Some(theirs), Some(mine)) if mine.stored_at > theirs.stored_at => return Some(mine),
            (Some(theirs), _) => theirs,
            (None, mine) => return mine,
        };
        match newest.value {
            Stored::Found { .. } => {
                if self.lasting.stale {
                    stale.insert(name.clone(), newest.clone()).await;
                }
                Some(newest)
            }
            Stored::NotFound => {
                stale.invalidate(name).await;
                None
            }
        }
    }

    /// Puts an answer (fetched here or by another replica) in this replica's stores.
    async fn keep(&self, name: &Username, entry: Arc<Entry>) {
        let lasts = match entry.value {
            Stored::Found { .. } => self.lasting.found,
            Stored::NotFound => self.lasting.not_found,
        };
        if lasts {
            self.fresh.insert(name.clone(), entry.clone()).await;
        } else if self.lasting.found || self.lasting.not_found {
            // An answer of the other kind may still be held: this one replaces it.
            self.fresh.invalidate(name).await;
        }
        if let Some(stale) = &self.stale {
            match &entry.value {
                Stored::Found { .. } if self.lasting.stale => {
                    stale.insert(name.clone(), entry.clone()).await
                }
                Stored::Found { .. } => {}
                // A confirmed not-found replaces the older profile: a later outage must never
                // bring back a profile the platform has said is gone.
                Stored::NotFound => stale.invalidate(name).await,
            }
        }
    }
}
