//! The fleet's level of the cache: the answers every replica shares through Redis, and the
//! fleet's one flight per name.
//!
//! A flight of this replica (already one per name here) asks Redis before anyone else, in one
//! call that reads the name's entry or, when there is none, takes the name's fleet lock: an
//! entry is kept in memory and served, with its age; with the lock, the flight fetches while
//! renewing the lock's short lease, then writes the answer to Redis and drops the lock in one
//! call; or, when another replica holds the lock, it waits for that replica's answer, bounded
//! by the flight deadline. A lock whose holder died lapses within one lease (2 s by default,
//! `crate::fleet::flight`) and a waiting flight takes it over. Whenever Redis cannot be used,
//! the flight fetches on its own: the fleet then costs more upstream requests, never an error.
//! A replica without Redis (a local handle) goes through the same steps, each answered
//! "unavailable" at once: the one way is the same with and without a fleet.
//!
//! A found profile's entry lives in Redis for its TTL and its stale-while-revalidate window, so
//! a replica that has never seen the name still answers it at once in that window. A flight
//! that wants a newer answer than the entry (a background refresh, a caller's `max-age`) gives
//! the oldest fetch time it takes: Redis then answers only a newer entry, else the lock. So the
//! replicas refreshing one name at once make one fetch: the first takes the lock, the others
//! wait for (or find) its newer answer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::fleet::entry::now_unix_ms;
use crate::fleet::{Fleet, FlightToken, Lock, SharedEntry, Wait};
use crate::platform::Failure;
use crate::platform::fetcher::{Fetch, Fetched};
use crate::username::Username;

use super::{Came, Entry, Flight, Landed, REFRESH_RETRY, Stored, Stores, fetch_within};

/// The fleet's level and the lifetimes entries get there.
pub(super) struct FleetTier {
    fleet: Fleet,
    /// How long a found profile's entry lives: its TTL and its stale-while-revalidate window.
    found: Duration,
    negative_ttl: Duration,
    /// How long a stale record lives (`ttl + max_stale`; zero: none is kept).
    stale_ttl: Duration,
}

impl FleetTier {
    pub(super) fn new(
        fleet: Fleet,
        found: Duration,
        negative_ttl: Duration,
        stale_ttl: Duration,
    ) -> Self {
        Self {
            fleet,
            found,
            negative_ttl,
            stale_ttl,
        }
    }

    /// Whether answers are kept for the fleet (the handle is on Redis).
    pub(super) fn is_shared(&self) -> bool {
        self.fleet.is_shared()
    }

    /// One flight of `name` on the fleet's level; see the module docs.
    /// A flight that `need`s a newer answer than Redis holds (a refresh, a caller's `max-age`)
    /// leaves Redis's entry alone and goes on to the lock, and waits for an answer that new.
    pub(super) async fn fly(
        &self,
        stores: &Stores,
        name: &Username,
        fetch: Arc<dyn Fetch>,
        deadline: Duration,
        flight: &Flight,
    ) -> Landed {
        let (platform, key) = (name.platform().as_str(), name.as_str());
        let give_up = tokio::time::Instant::now() + deadline;
        let not_before = flight.need.unix_ms();
        let waiting = Instant::now();
        let token = loop {
            // One call: the fleet's answer, or the lock to fetch it.
            match self
                .fleet
                .flight_lock_after(platform, key, not_before)
                .await
            {
                Lock::Ready(found) => return self.kept(stores, name, found, Came::Stored).await,
                Lock::Acquired(token) => break Some(token),
                Lock::Unavailable => break None,
                Lock::HeldByOther => match self
                    .fleet
                    .flight_wait_after(platform, key, give_up, not_before)
                    .await
                {
                    Wait::Entry(found) => {
                        // The wait is part of another replica's fetch: a fetch time, too.
                        stores.fetch_times.note(name.platform(), waiting.elapsed());
                        return self.kept(stores, name, found, Came::Waited).await;
                    }
                    // The holder gave up or died: look again, and maybe fetch.
                    Wait::LockGone if tokio::time::Instant::now() < give_up => {}
                    Wait::LockGone | Wait::TimedOut => return waited_too_long(),
                    Wait::Unavailable => break None,
                },
            }
        };
        // One background refresh fetch per name per second for the fleet, whatever the
        // replicas' memory holds (without Redis, the entry's own claim was the limit). A
        // refresh that finds it taken fetches nothing; it has still looked for (and waited on)
        // a newer answer above.
        if flight.refresh.is_some()
            && self.fleet.refresh_claim(platform, key, REFRESH_RETRY).await == Some(false)
        {
            if let Some(token) = &token {
                let _ = self.fleet.flight_release(platform, key, token).await;
            }
            return Landed {
                outcome: Err(Fetched::unsent(Failure::Overloaded {
                    retry_after: REFRESH_RETRY,
                })),
                came: Came::Stored,
                refresh: true,
            };
        }
        let started = Instant::now();
        let fetching = fetch_within(deadline, fetch, name.clone(), flight.mode());
        let report = match &token {
            // The lease is renewed for as long as the fetch runs, and no longer.
            Some(token) => self.fleet.hold(platform, key, token, fetching).await,
            None => fetching.await,
        };
        let outcome = stores.store(name, report, started).await;
        self.publish(platform, key, &outcome, token.as_ref()).await;
        Landed {
            outcome,
            came: Came::Fetched,
            refresh: false,
        }
    }

    /// The fleet's stale record of `name`: the last answer any replica stored for it, a found
    /// profile or a not-found (a tombstone), kept `ttl + max_stale`. `None`: Redis cannot be
    /// asked; `Some(None)`: the fleet keeps none.
    pub(super) async fn stale_record(&self, name: &Username) -> Option<Option<Arc<Entry>>> {
        let record = self
            .fleet
            .stale_get(name.platform().as_str(), name.as_str())
            .await?;
        Some(record.map(|shared| to_entry(name, shared)))
    }

    /// The fleet's entry of `name`, fresh or in its stale-while-revalidate window; `None`
    /// when there is none or Redis cannot be asked.
    pub(super) async fn peek(&self, name: &Username) -> Option<Arc<Entry>> {
        let shared = self
            .fleet
            .cache_get(name.platform().as_str(), name.as_str())
            .await??;
        Some(to_entry(name, shared))
    }

    /// Serves an answer another replica fetched (stored before, or while this flight `came`
    /// to wait for it), keeping it in this replica's memory.
    async fn kept(
        &self,
        stores: &Stores,
        name: &Username,
        found: SharedEntry,
        came: Came,
    ) -> Landed {
        let entry = to_entry(name, found);
        stores.keep(name, entry.clone()).await;
        Landed {
            outcome: Ok(entry),
            came,
            refresh: false,
        }
    }

    /// Writes what this replica fetched to Redis, which drops the lock in the same call; a
    /// failure, or an answer that could not be written, only drops it, so that a waiting
    /// replica fetches for itself instead of waiting out the lease (the release is retried
    /// while Redis cannot be reached).
    async fn publish(
        &self,
        platform: &str,
        key: &str,
        outcome: &Result<Arc<Entry>, Fetched>,
        token: Option<&FlightToken>,
    ) {
        if let Ok(entry) = outcome {
            let ttl = match entry.value {
                Stored::Found { .. } => self.found,
                Stored::NotFound => self.negative_ttl,
            };
            // A found profile's stale copy, or a not-found's tombstone, lives as long as any
            // replica's stale copy can: a tombstone outlives every copy fetched before it.
            let stale_ttl = self.stale_ttl;
            // A not-found is written even when not-founds are not cached: its tombstone is
            // what keeps a gone profile gone on every replica.
            let tombstone = matches!(entry.value, Stored::NotFound) && !stale_ttl.is_zero();
            if !ttl.is_zero() || tombstone {
                let shared = to_shared(entry);
                let put = self
                    .fleet
                    .cache_put(platform, key, &shared, ttl, stale_ttl, token);
                // Stored, superseded or refused for want of memory: the call left no lock of
                // this flight's behind.
                if put.await.is_some() {
                    return;
                }
            }
        }
        if let Some(token) = token {
            let _ = self.fleet.flight_release(platform, key, token).await;
        }
    }
}

/// The failure of a flight that waited for another replica's fetch until its deadline.
fn waited_too_long() -> Landed {
    Landed {
        outcome: Err(Fetched::unsent(Failure::Unavailable(
            "another replica's fetch of this name did not end in time".into(),
        ))),
        came: Came::Stored,
        refresh: false,
    }
}

/// An entry of the fleet's as this replica keeps it; its age and source carry over (a source
/// name the platform does not have, from a replica of another version, is dropped).
fn to_entry(name: &Username, shared: SharedEntry) -> Arc<Entry> {
    let now = Instant::now();
    let stored_at = now.checked_sub(shared.age()).unwrap_or(now);
    let value = match shared.body {
        Some(body) => Stored::Found {
            body,
            private: shared.private,
        },
        None => Stored::NotFound,
    };
    Arc::new(Entry::new(
        value,
        stored_at,
        0,
        name.platform().source(&shared.source),
    ))
}

/// An entry of this replica's as the fleet keeps it, stamped with its fetch time.
fn to_shared(entry: &Entry) -> SharedEntry {
    let age_ms = u64::try_from(entry.stored_at.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (body, private) = match &entry.value {
        Stored::Found { body, private } => (Some(body.clone()), *private),
        Stored::NotFound => (None, false),
    };
    SharedEntry {
        body,
        private,
        fetched_at_unix_ms: now_unix_ms().saturating_sub(age_ms),
        source: entry.source.unwrap_or_default().to_owned(),
    }
}
