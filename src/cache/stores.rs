//! The replica's own store of answers (one moka cache holding both the fresh entries and the
//! stale copies, under the one `cache.max_bytes` bound; the flights in the air) and the
//! fleet's level behind them (its answers, its one flight per name, its
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
///
/// One moka cache holds every answer this replica keeps, a name's latest: found profiles for
/// the longer of their fresh life (`ttl + revalidate`) and their stale life
/// (`ttl + max_stale`), not-founds for `negative_ttl`. [`Stores::fresh`] and
/// [`Stores::stale_copy`] are two views of it by age, so that `cache.max_bytes` bounds all the
/// memory they hold (two stores of that bound each held up to twice it, of different names).
#[derive(Clone)]
pub(super) struct Stores {
    held: Cache<Username, Arc<Entry>>,
    /// How long each kind of entry is served from memory, by view.
    lives: Lives,
    pub(super) flights: Arc<Mutex<HashMap<Username, Landing>>>,
    /// The fleet's answers.
    pub(super) entries: Entries,
    /// The fleet's one flight per name.
    pub(super) names: NameLocks,
    /// The fleet's limit of one background refresh per name per [`REFRESH_RETRY`].
    pub(super) refreshes: RefreshLimits,
    pub(super) rules: Rules,
    /// How long a fetch of each platform takes lately: how early hot entries are refreshed.
    pub(super) fetch_times: Arc<FetchTimes>,
}

/// How long an entry is served from memory after its fetch, by view: zero (`max_bytes = 0`, the
/// cache off, stale serving off) means never, and such an entry is not kept for that view.
#[derive(Clone, Copy)]
struct Lives {
    /// A found profile, fresh or in its stale-while-revalidate window.
    found: Duration,
    /// A not-found.
    not_found: Duration,
    /// A found profile as a stale copy (stands in for a failed fetch, serves `max-stale`).
    stale: Duration,
    /// Whether stale serving is on (`max_stale_seconds > 0`): the fleet's stale record is
    /// asked even when this replica keeps no copy in memory.
    stale_on: bool,
}

impl Lives {
    /// Whether an answer like `value` is kept in memory at all.
    fn keeps(&self, value: &Stored) -> bool {
        match value {
            Stored::Found { .. } => !self.found.is_zero() || !self.stale.is_zero(),
            Stored::NotFound => !self.not_found.is_zero(),
        }
    }
}

/// How long entries live in the store, by kind: the longest any view serves them.
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

/// What an entry costs beyond its body: the `Entry`, its `Arc`, the key's `Username`, and the
/// store's node, timer and frequency-sketch share for it (a few hundred bytes in all).
const ENTRY_OVERHEAD: usize = 384;

/// What `entry` holds in memory, in bytes: its body as allocated (an [`Entry`] holds its body
/// in a block of its own length, see [`Entry::new`]), its key, and [`ENTRY_OVERHEAD`].
fn weight(name: &Username, entry: &Arc<Entry>) -> u32 {
    let body = match &entry.value {
        Stored::Found { body, .. } => allocated(body.len()),
        Stored::NotFound => 0,
    };
    u32::try_from(body + allocated(name.as_str().len()) + ENTRY_OVERHEAD).unwrap_or(u32::MAX)
}

/// The most an allocator takes for a block of `len` bytes: `len` rounded up to a multiple of 8,
/// and above 64 bytes to the next of four size classes per power of two (mimalloc's, the
/// binary's allocator; the system's are finer). So a weight is never less than the memory.
fn allocated(len: usize) -> usize {
    if len <= 64 {
        return len.next_multiple_of(8);
    }
    // The class step between 2^k (< len) and 2^(k+1) is 2^k / 4.
    let k = usize::BITS - 1 - (len - 1).leading_zeros();
    len.next_multiple_of((1usize << k) >> 2)
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
        let max_stale = secs(cache.max_stale_seconds);
        let lives = Lives {
            found: in_memory(ttl + window),
            not_found: in_memory(negative_ttl),
            stale: if max_stale.is_zero() {
                Duration::ZERO
            } else {
                in_memory(ttl + max_stale)
            },
            stale_on: !max_stale.is_zero(),
        };
        let held = Cache::builder()
            .max_capacity(cache.max_bytes)
            .weigher(weight)
            .expire_after(TtlByOutcome {
                found: lives.found.max(lives.stale),
                not_found: lives.not_found,
            })
            .build();
        Self {
            held,
            lives,
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
            Stored::Found { .. } => (!self.lives.found.is_zero(), true),
            Stored::NotFound => (!self.lives.not_found.is_zero(), false),
        };
        here || self.entries.keeps(found)
    }

    /// `name`'s entry in memory while it is fresh (or in its stale-while-revalidate window);
    /// a not-found while its negative TTL lasts.
    pub(super) async fn fresh(&self, name: &Username) -> Option<Arc<Entry>> {
        let entry = self.held.get(name).await?;
        let life = match entry.value {
            Stored::Found { .. } => self.lives.found,
            Stored::NotFound => self.lives.not_found,
        };
        (entry.stored_at.elapsed() < life).then_some(entry)
    }

    /// `name`'s stale copy in memory: a found profile within `ttl + max_stale` of its fetch.
    pub(super) async fn stale_copy(&self, name: &Username) -> Option<Arc<Entry>> {
        if self.lives.stale.is_zero() {
            return None;
        }
        let entry = self.held.get(name).await?;
        let found = matches!(entry.value, Stored::Found { .. });
        (found && entry.stored_at.elapsed() < self.lives.stale).then_some(entry)
    }

    /// Stores what a fetch (started at `started`) found, and counts the time it took;
    /// failures are never stored.
    pub(super) async fn store(
        &self,
        name: &Username,
        report: Fetched,
        started: Instant,
    ) -> Result<Arc<Entry>, Fetched> {
        let (value, withheld) = match report.lookup {
            Lookup::Found(profile) => (
                Stored::Found {
                    body: profile.json().clone(),
                    private: profile.is_private(),
                },
                crate::platform::withheld(name.platform(), report.source, profile.summary()),
            ),
            Lookup::NotFound => (Stored::NotFound, None),
            Lookup::Failed(_) => return Err(report),
        };
        self.fetch_times.note(name.platform(), started.elapsed());
        let entry = Arc::new(
            Entry::new(
                value,
                Instant::now(),
                report.upstream_requests,
                report.source,
            )
            .withholding(withheld),
        );
        self.keep(name, entry.clone()).await;
        Ok(entry)
    }

    /// What may stand in for a failed fetch of `name` (or serve a caller's `max-stale`): the
    /// newer of this replica's stale copy and the fleet's stale record. A not-found that some
    /// replica recorded after this replica's copy was fetched wins: nothing is served and the
    /// copy is dropped, so a profile the platform said is gone comes back on no replica. When
    /// the fleet has no record (or Redis cannot be asked), this replica's copy.
    pub(super) async fn stand_in(&self, name: &Username) -> Option<Arc<Entry>> {
        if !self.lives.stale_on {
            return None;
        }
        let mine = self.stale_copy(name).await;
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
        // What memory holds for the name now: a fresh answer (or a not-found) newer than the
        // fleet's record stays; an older one gives way to it.
        let held = self.held.get(name).await;
        let newer_held = held
            .as_ref()
            .is_some_and(|held| held.stored_at >= newest.stored_at);
        match newest.value {
            Stored::Found { .. } => {
                if !self.lives.stale.is_zero() && !newer_held {
                    self.held.insert(name.clone(), newest.clone()).await;
                }
                Some(newest)
            }
            Stored::NotFound => {
                // The stale copy goes (gone stays gone); a fresh answer is left to its TTL.
                if let Some(held) = held
                    && matches!(held.value, Stored::Found { .. })
                    && held.stored_at.elapsed() >= self.lives.found
                {
                    self.held.invalidate(name).await;
                }
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

    /// Puts an answer (fetched here or by another replica) in this replica's memory, in place
    /// of what it held for the name: a confirmed not-found replaces the older profile too, so a
    /// later outage never brings back a profile the platform has said is gone.
    pub(super) async fn keep(&self, name: &Username, entry: Arc<Entry>) {
        if self.lives.keeps(&entry.value) {
            self.held.insert(name.clone(), entry).await;
        } else {
            // An answer of the other kind may still be held: this one replaces it.
            self.held.invalidate(name).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::platform::Platform;

    #[test]
    fn a_block_weighs_at_least_its_length_and_at_most_a_quarter_more() {
        for len in [
            0,
            1,
            7,
            8,
            64,
            65,
            100,
            4096,
            4097,
            60_000,
            65_536,
            65_537,
            66_560,
            1 << 22,
        ] {
            let block = allocated(len);
            assert!(block >= len, "{len}: {block}");
            assert!(block <= len + len / 4 + 8, "{len}: {block}");
        }
        // mimalloc's classes around 64 KiB: 64, 80, 96, 112, 128 KiB.
        assert_eq!(allocated(65_536), 65_536);
        assert_eq!(allocated(65_537), 81_920);
        assert_eq!(allocated(66_560), 81_920);
    }

    #[test]
    fn an_entry_weighs_its_body_as_held_and_its_bookkeeping() {
        let name = Username::parse(Platform::ShortVideo, "some_name").unwrap();
        let body = Bytes::from(vec![b'x'; 66_560]);
        let entry = Arc::new(Entry::new(
            Stored::Found {
                body,
                private: false,
            },
            Instant::now(),
            1,
            None,
        ));
        assert_eq!(weight(&name, &entry) as usize, 81_920 + 16 + ENTRY_OVERHEAD);
        let gone = Arc::new(Entry::new(Stored::NotFound, Instant::now(), 1, None));
        assert_eq!(weight(&name, &gone) as usize, 16 + ENTRY_OVERHEAD);
    }

    #[test]
    fn a_stored_body_is_held_in_a_block_of_its_own_length() {
        // A buffer grown past its length, as serde_json leaves one.
        let mut grown = Vec::with_capacity(128 * 1024);
        grown.extend_from_slice(&[b'x'; 66_560]);
        let grown = Bytes::from(grown);
        let entry = Entry::new(
            Stored::Found {
                body: grown.clone(),
                private: false,
            },
            Instant::now(),
            1,
            None,
        );
        let Stored::Found { body, .. } = &entry.value else {
            panic!("found")
        };
        assert_eq!(body, &grown);
        assert_ne!(
            body.as_ptr(),
            grown.as_ptr(),
            "a copy, not the grown buffer"
        );
    }
}
