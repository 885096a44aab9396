//! The replica's own stores of answers (the fresh and the stale moka caches, the flights in
//! the air) and the fleet's level behind them (its answers, its one flight per name, its
//! refresh limits: [`crate::fleet`]'s seam types, which need no Redis to be asked): what a
//! flight's task needs after its caller is gone. The rules of what they serve are in
//! [`super::rules`]; the flights in `super::flight`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use moka::Expiry;
use moka::future::Cache;

use crate::config::CacheConfig;
use crate::fleet::Fleet;
use crate::fleet::entries::{Entries, Lifetimes};
use crate::fleet::flight::NameLocks;
use crate::fleet::refresh::RefreshLimits;
use crate::platform::Lookup;
use crate::platform::fetcher::Fetched;
use crate::username::Username;

use super::rules::{Decision, FetchTimes, Rules};
use super::{Entry, Landing, REFRESH_RETRY, Stored, Wants};

/// What a flight's task needs after its caller is gone: the stores and the flights in the air.
#[derive(Clone)]
pub(super) struct Stores {
    pub(super) fresh: Cache<Username, Arc<Entry>>,
    pub(super) stale: Option<Cache<Username, Arc<Entry>>>,
    pub(super) flights: Arc<Mutex<HashMap<Username, Landing>>>,
    /// The fleet's answers.
    pub(super) entries: Entries,
    /// The fleet's one flight per name.
    pub(super) names: NameLocks,
    /// The fleet's limit of one background refresh per name per [`REFRESH_RETRY`].
    pub(super) refreshes: RefreshLimits,
    /// Which answers outlive their insert here (found, not found, stale copies): an entry
    /// whose lifetime is zero (`max_bytes = 0`, or the cache off) is not inserted at all.
    lasting: Lasting,
    pub(super) rules: Rules,
    /// How long a fetch of each platform takes lately: how early hot entries are refreshed.
    pub(super) fetch_times: Arc<FetchTimes>,
}

#[derive(Clone, Copy)]
struct Lasting {
    found: bool,
    not_found: bool,
    stale: bool,
}

/// How long entries live in a store, by kind.
struct TtlByOutcome {
    found: Duration,
    not_found: Duration,
}

impl TtlByOutcome {
    /// The lifetime `entry` has left, counted from its original fetch: an entry another replica
    /// fetched a while ago expires here when it does there.
    fn left(&self, entry: &Entry) -> Duration {
        let lifetime = match entry.value {
            Stored::Found { .. } => self.found,
            Stored::NotFound => self.not_found,
        };
        lifetime.saturating_sub(entry.stored_at.elapsed())
    }
}

impl Expiry<Username, Arc<Entry>> for TtlByOutcome {
    fn expire_after_create(
        &self,
        _: &Username,
        entry: &Arc<Entry>,
        _: Instant,
    ) -> Option<Duration> {
        Some(self.left(entry))
    }

    /// A replaced entry (a refresh's answer, or a newer one from the fleet) lives as its own
    /// fetch time says: moka would otherwise keep the old entry's expiry.
    fn expire_after_update(
        &self,
        _: &Username,
        entry: &Arc<Entry>,
        _: Instant,
        _: Option<Duration>,
    ) -> Option<Duration> {
        Some(self.left(entry))
    }
}

fn weight(_: &Username, entry: &Arc<Entry>) -> u32 {
    let body = match &entry.value {
        Stored::Found { body, .. } => body.len(),
        Stored::NotFound => 0,
    };
    u32::try_from(body + 64).unwrap_or(u32::MAX)
}

impl Stores {
    /// Builds both stores from `[cache]`, in front of the `fleet`'s.
    pub(super) fn new(cache: &CacheConfig, fleet: &Fleet) -> Self {
        let secs = |s: u64| {
            if cache.enabled {
                Duration::from_secs(s)
            } else {
                Duration::ZERO
            }
        };
        let rules = Rules {
            found: secs(cache.ttl_seconds),
            not_found: secs(cache.negative_ttl_seconds),
            window: secs(cache.revalidate_window()),
            hot_hits: cache.hot_hits,
        };
        let (ttl, window, negative_ttl) = (rules.found, rules.window, rules.not_found);
        // `max_bytes = 0` keeps nothing in this replica's memory (moka would still hold an
        // entry until its next eviction pass): every answer then comes from the fleet's level,
        // or, without one, from a fetch that only concurrent callers share.
        let in_memory = |lifetime: Duration| {
            if cache.max_bytes == 0 {
                Duration::ZERO
            } else {
                lifetime
            }
        };
        let fresh = Cache::builder()
            .max_capacity(cache.max_bytes)
            .weigher(weight)
            .expire_after(TtlByOutcome {
                found: in_memory(ttl + window),
                not_found: in_memory(negative_ttl),
            })
            .build();
        let max_stale = secs(cache.max_stale_seconds);
        let stale = (!max_stale.is_zero()).then(|| {
            Cache::builder()
                .max_capacity(cache.max_bytes)
                .weigher(weight)
                .expire_after(TtlByOutcome {
                    found: in_memory(ttl + max_stale),
                    not_found: Duration::ZERO,
                })
                .build()
        });
        let lasting = Lasting {
            found: !in_memory(ttl + window).is_zero(),
            not_found: !in_memory(negative_ttl).is_zero(),
            stale: !in_memory(ttl + max_stale).is_zero(),
        };
        Self {
            fresh,
            stale,
            lasting,
            flights: Arc::default(),
            entries: Entries::new(
                fleet,
                Lifetimes {
                    found: ttl + window,
                    not_found: negative_ttl,
                    // The fleet's stale record lives as long as any replica's stale copy can.
                    stale: if max_stale.is_zero() {
                        Duration::ZERO
                    } else {
                        ttl.saturating_add(max_stale)
                    },
                },
            ),
            names: NameLocks::new(fleet),
            refreshes: RefreshLimits::new(fleet, REFRESH_RETRY),
            rules,
            fetch_times: Arc::new(FetchTimes::new()),
        }
    }

    pub(super) fn lock_flights(&self) -> std::sync::MutexGuard<'_, HashMap<Username, Landing>> {
        self.flights
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The decision on `name`'s `entry` (see [`Rules::judge`]), with its platform's recent
    /// fetch time.
    pub(super) fn judge(
        &self,
        name: &Username,
        entry: &Entry,
        age: Duration,
        hits: u64,
        wants: &Wants,
    ) -> Decision {
        let fetch_time = self.fetch_times.recent(name.platform());
        self.rules.judge(entry, age, hits, wants, fetch_time)
    }

    /// Whether an answer like `value` is kept for later lookups (here or in the fleet's cache).
    pub(super) fn keeps(&self, value: &Stored) -> bool {
        let (here, found) = match value {
            Stored::Found { .. } => (self.lasting.found, true),
            Stored::NotFound => (self.lasting.not_found, false),
        };
        here || self.entries.keeps(found)
    }

    /// Stores what a fetch (started at `started`) found, and counts the time it took;
    /// failures are never stored.
    pub(super) async fn store(
        &self,
        name: &Username,
        report: Fetched,
        started: Instant,
    ) -> Result<Arc<Entry>, Fetched> {
        let value = match report.lookup {
            Lookup::Found(profile) => Stored::Found {
                body: profile.json().clone(),
                private: profile.is_private(),
            },
            Lookup::NotFound => Stored::NotFound,
            Lookup::Failed(_) => return Err(report),
        };
        self.fetch_times.note(name.platform(), started.elapsed());
        let entry = Arc::new(Entry::new(
            value,
            Instant::now(),
            report.upstream_requests,
            report.source,
        ));
        self.keep(name, entry.clone()).await;
        Ok(entry)
    }

    /// What may stand in for a failed fetch of `name` (or serve a caller's `max-stale`): the
    /// newer of this replica's stale copy and the fleet's stale record. A not-found that some
    /// replica recorded after this replica's copy was fetched wins: nothing is served and the
    /// copy is dropped, so a profile the platform said is gone comes back on no replica. When
    /// the fleet has no record (or Redis cannot be asked), this replica's copy.
    pub(super) async fn stand_in(&self, name: &Username) -> Option<Arc<Entry>> {
        let stale = self.stale.as_ref()?;
        let mine = stale.get(name).await;
        let record = self
            .entries
            .stale(name.platform().as_str(), name.as_str())
            .await
            .map(|record| Entry::from_shared(name, record));
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

    /// The fleet's entry of `name`, fresh or in its stale-while-revalidate window.
    pub(super) async fn fleet_entry(&self, name: &Username) -> Option<Arc<Entry>> {
        let shared = self
            .entries
            .get(name.platform().as_str(), name.as_str())
            .await?;
        Some(Entry::from_shared(name, shared))
    }

    /// Puts an answer (fetched here or by another replica) in this replica's stores.
    pub(super) async fn keep(&self, name: &Username, entry: Arc<Entry>) {
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
