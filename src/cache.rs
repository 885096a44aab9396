//! The profile cache: one upstream flight per name, TTLs, negative entries, stale serving.
//!
//! Two moka stores share the same entries:
//!
//! - `fresh` answers within `ttl_seconds` (found) or `negative_ttl_seconds` (not found).
//!   Failures are never stored.
//! - `stale` keeps found profiles for `ttl + max_stale_seconds`, and is read only when a fetch
//!   fails, so a platform outage degrades to slightly old answers instead of errors. A
//!   confirmed not-found removes the name from it.
//!
//! Misses of one name share one *flight*: a task of its own that fetches, stores and then tells
//! every caller waiting on it. The flight belongs to no caller, so callers that hang up or time
//! out never cancel it: it runs to its end (bounded by the upstream timeouts, the retry budget
//! and a flight deadline), and the next caller is served from the cache.
//!
//! Entries hold the response body already serialised, so a hit costs a reference-count bump.
//! With `cache.enabled = false` entries expire at once but concurrent misses still coalesce.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use moka::Expiry;
use moka::future::Cache;
use tokio::sync::watch;

use crate::config::CacheConfig;
use crate::platform::{Lookup, Report};
use crate::telemetry;
use crate::username::Username;

/// A stored answer: what the API returns for a name.
#[derive(Debug)]
pub struct Entry {
    /// The answer.
    pub value: Stored,
    /// When the upstream gave it.
    pub stored_at: Instant,
    /// Upstream requests the fetch took (for the access log of the request that fetched).
    pub upstream_requests: u32,
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
        failure: Report,
    },
    /// The fetch failed and nothing could stand in for it.
    Failed(Report),
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
}

/// Where the callers of one flight wait for it to land.
type Landing = watch::Receiver<Option<Landed>>;

/// What a flight came to.
#[derive(Clone)]
struct Landed {
    /// The stored entry, or the failure (never stored).
    outcome: Result<Arc<Entry>, Report>,
    /// False when the flight found a just-stored entry instead of fetching.
    fetched: bool,
}

struct TtlByOutcome {
    found: Duration,
    not_found: Duration,
}

impl Expiry<Username, Arc<Entry>> for TtlByOutcome {
    fn expire_after_create(
        &self,
        _: &Username,
        entry: &Arc<Entry>,
        _: Instant,
    ) -> Option<Duration> {
        Some(match entry.value {
            Stored::Found { .. } => self.found,
            Stored::NotFound => self.not_found,
        })
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
    /// Builds both stores from `[cache]`.
    pub fn new(settings: &CacheConfig) -> Self {
        let (ttl, negative_ttl) = if settings.enabled {
            (
                Duration::from_secs(settings.ttl_seconds),
                Duration::from_secs(settings.negative_ttl_seconds),
            )
        } else {
            (Duration::ZERO, Duration::ZERO)
        };
        let fresh = Cache::builder()
            .max_capacity(settings.max_bytes)
            .weigher(weight)
            .expire_after(TtlByOutcome {
                found: ttl,
                not_found: negative_ttl,
            })
            .build();
        let stale = (settings.enabled && settings.max_stale_seconds > 0).then(|| {
            Cache::builder()
                .max_capacity(settings.max_bytes)
                .weigher(weight)
                .time_to_live(ttl + Duration::from_secs(settings.max_stale_seconds))
                .build()
        });
        Self {
            stores: Stores {
                fresh,
                stale,
                flights: Arc::default(),
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
    /// `fetch` is called only by the caller that starts a flight; its future is spawned as a
    /// task of its own, so it runs to its end (within the flight deadline), is stored and
    /// reaches the metrics and the breaker even when every caller has hung up by then.
    pub async fn get_or_fetch<C, F>(&self, name: &Username, fetch: C) -> Served
    where
        C: FnOnce() -> F,
        F: Future<Output = Report> + Send + 'static,
    {
        let platform = name.platform().as_str();
        if let Some(entry) = self.stores.fresh.get(name).await {
            telemetry::cache(platform, "hit");
            return self.fresh(entry, false);
        }
        let (mut landing, started) = self.join_or_start(name, fetch);
        let landed = match landing.wait_for(Option::is_some).await {
            Ok(landed) => landed.clone(),
            Err(_) => None,
        };
        let Some(landed) = landed else {
            // The flight's task ended without a result (it panicked): a failure like any other.
            telemetry::cache(platform, "miss");
            return Served::Failed(Report {
                lookup: Lookup::Unavailable("the fetch ended without a result".into()),
                upstream_requests: 0,
            });
        };
        let fetched = started && landed.fetched;
        match landed.outcome {
            Ok(entry) => {
                telemetry::cache(platform, if fetched { "miss" } else { "hit" });
                self.fresh(entry, fetched)
            }
            Err(failure) => {
                let stale = match &self.stores.stale {
                    Some(stale) => stale.get(name).await,
                    None => None,
                };
                match stale {
                    Some(entry) if stale_worthy(&failure.lookup) => {
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
        C: FnOnce() -> F,
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
            fetch(),
            tx,
            self.flight_deadline,
        );
        tokio::spawn(flight);
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
async fn fly<F>(
    stores: Stores,
    name: Username,
    fetch: F,
    tx: watch::Sender<Option<Landed>>,
    deadline: Duration,
) where
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
    let report = match tokio::time::timeout(deadline, Box::pin(fetch)).await {
        Ok(report) => report,
        Err(_) => Report {
            lookup: Lookup::Unavailable(format!("the fetch did not end within {deadline:?}")),
            upstream_requests: 0,
        },
    };
    let outcome = stores.store(&name, report).await;
    drop(_leave);
    let _ = tx.send(Some(Landed {
        outcome,
        fetched: true,
    }));
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
    async fn store(&self, name: &Username, report: Report) -> Result<Arc<Entry>, Report> {
        let value = match &report.lookup {
            Lookup::Found(profile) => Stored::Found {
                body: Bytes::from(profile.to_json()),
                private: profile.is_private(),
            },
            Lookup::NotFound => Stored::NotFound,
            _ => return Err(report),
        };
        let entry = Arc::new(Entry {
            value,
            stored_at: Instant::now(),
            upstream_requests: report.upstream_requests,
        });
        self.fresh.insert(name.clone(), entry.clone()).await;
        if let Some(stale) = &self.stale {
            match &entry.value {
                Stored::Found { .. } => stale.insert(name.clone(), entry.clone()).await,
                // A confirmed not-found replaces the older profile: a later outage must never
                // bring back a profile the platform has said is gone.
                Stored::NotFound => stale.invalidate(name).await,
            }
        }
        Ok(entry)
    }
}

/// Failures that an older answer may stand in for: the platform's trouble, not ours.
fn stale_worthy(lookup: &Lookup) -> bool {
    matches!(
        lookup,
        Lookup::Blocked { .. }
            | Lookup::Unavailable(_)
            | Lookup::ExtractionFailed(_)
            | Lookup::Overloaded { .. }
    )
}
