//! One cache for the fleet: answers (found or not) with their TTLs, and each name's stale
//! record (a found profile's stale copy, or a not-found's tombstone), stored in the
//! [`SharedEntry`] encoding.
//!
//! [`Entries`] is the seam: the level of answers behind each replica's memory. On Redis it
//! holds every replica's answers; without Redis, or whenever it cannot be used, it holds none
//! (reads find nothing, writes keep nothing) and the replica's memory in front of it
//! (`crate::cache`) is the only store. The calls on [`Fleet`] here ([`Fleet::cache_get`],
//! [`Fleet::stale_get`], [`Fleet::cache_put`]) are its Redis implementation.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use super::entry::{MAX_BODY_BYTES, MAX_VALUE_BYTES, SharedEntry};
use super::flight::{self, FlightToken, Held};
use super::{Fleet, REDIS_HITS, REDIS_MISSES, expiry_ms};

pub(crate) static READ: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/read.lua")));
/// `put.lua` for a found profile: refused when Redis's memory is full (the cache gives way).
static PUT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("scripts/put.lua")));
/// `put.lua` for a not-found: a few bytes, written even when Redis's memory is full, so that
/// its tombstone is never what a full Redis loses.
static PUT_GONE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        "#!lua flags=allow-oom\n",
        include_str!("scripts/put.lua")
    ))
});

/// What [`Fleet::cache_put`] did with an answer. In every case the lock of the token given
/// is no longer held by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Put {
    /// Stored for every replica; the flight's lock, when its token was given, released.
    Stored,
    /// Not stored: another flight holds the name's lock (it started later, so its answer will
    /// be newer), or the given token's lease lapsed and an answer at least as new was stored
    /// since.
    Superseded,
    /// Not stored: Redis's memory is full (`maxmemory` reached under `noeviction`), which
    /// refuses new answers but not counters or locks; the flight's lock was released.
    Full,
}

/// How long the fleet keeps each kind of answer.
#[derive(Clone, Copy, Debug)]
pub struct Lifetimes {
    /// A found profile's entry: its TTL and its stale-while-revalidate window.
    pub found: Duration,
    /// A not-found's entry (zero: not kept, though its tombstone is).
    pub not_found: Duration,
    /// A stale record, a stale copy or a tombstone (`ttl + max_stale`; zero: none is kept).
    pub stale: Duration,
}

/// The fleet's level of answers (see the module docs).
#[derive(Clone, Debug)]
pub struct Entries {
    fleet: Fleet,
    lifetimes: Lifetimes,
}

impl Entries {
    /// The answers `fleet` shares, kept for `lifetimes`.
    pub fn new(fleet: &Fleet, lifetimes: Lifetimes) -> Self {
        Self {
            fleet: fleet.clone(),
            lifetimes,
        }
    }

    /// Whether an answer (`found` or not) is kept at this level for later lookups: on Redis,
    /// when its kind has a lifetime; without Redis, never.
    pub fn keeps(&self, found: bool) -> bool {
        let lifetime = if found {
            self.lifetimes.found
        } else {
            self.lifetimes.not_found
        };
        self.fleet.is_shared() && !lifetime.is_zero()
    }

    /// `name`'s entry, fresh or in its stale-while-revalidate window; `None` when there is
    /// none here.
    pub async fn get(&self, platform: &str, name: &str) -> Option<SharedEntry> {
        self.fleet.cache_get(platform, name).await?
    }

    /// `name`'s stale record: the last answer any replica stored for it, a found profile or a
    /// not-found (a tombstone), kept [`Lifetimes::stale`]; `None` when there is none here.
    pub async fn stale(&self, platform: &str, name: &str) -> Option<SharedEntry> {
        self.fleet.stale_get(platform, name).await?
    }

    /// Ends a flight that `held` `name`: stores its `answer` (`None`: the fetch failed) for
    /// every replica, fenced by the hold, and gives the name up in the same call. A failure,
    /// or an answer that could not be written, only gives it up, so that a replica waiting for
    /// it fetches for itself instead of waiting out the lease.
    pub async fn publish(
        &self,
        platform: &str,
        name: &str,
        answer: Option<&SharedEntry>,
        held: Held,
    ) {
        if let Some(entry) = answer {
            let ttl = if entry.body.is_some() {
                self.lifetimes.found
            } else {
                self.lifetimes.not_found
            };
            // A found profile's stale copy, or a not-found's tombstone, lives as long as any
            // replica's stale copy can: a tombstone outlives every copy fetched before it.
            let stale = self.lifetimes.stale;
            // A not-found is written even when not-founds are not cached: its tombstone is
            // what keeps a gone profile gone on every replica.
            let tombstone = entry.body.is_none() && !stale.is_zero();
            if !ttl.is_zero() || tombstone {
                let put = self
                    .fleet
                    .cache_put(platform, name, entry, ttl, stale, held.token());
                // Stored, superseded or refused for want of memory: the call left no lock of
                // this flight's behind.
                if put.await.is_some() {
                    return;
                }
            }
        }
        flight::release(&self.fleet, platform, name, held).await;
    }
}

impl Fleet {
    /// The fresh entry of `name` on `platform`. Outer `None`: Redis unavailable; inner `None`:
    /// a miss (including a value that is not ours, which is removed).
    pub async fn cache_get(&self, platform: &str, name: &str) -> Option<Option<SharedEntry>> {
        let key = self.keys()?.name(platform, name).entry;
        self.read("cache_get", "fresh", key).await
    }

    /// The stale record of `name`, for when the platform cannot be asked: the last answer
    /// stored for it, kept past its TTL. A found profile there is its stale copy; a not-found
    /// is a tombstone, which tells every replica that its own older copy must not be served.
    /// Same answers as [`Fleet::cache_get`].
    pub async fn stale_get(&self, platform: &str, name: &str) -> Option<Option<SharedEntry>> {
        let key = self.keys()?.name(platform, name).stale;
        self.read("stale_get", "stale", key).await
    }

    /// Stores `entry` for `ttl`, and as the name's stale record for `stale_ttl` (zero: the
    /// stale record is dropped), in one atomic call. A not-found is recorded there too, as a
    /// tombstone: give it at least the life of any stale copy (`ttl + max_stale`) so that it
    /// outlives every copy fetched before it; its own `ttl` may be zero (not-founds are not
    /// cached, yet gone stays gone). With `token` (the flight's, from
    /// [`Fleet::flight_lock`]) the answer is fenced: stored while that token holds the lock,
    /// which is then released, or when its lease lapsed and the entry stored is older (none,
    /// or one kept for stale-while-revalidate), and never while another flight holds the lock.
    /// Without one, it is stored unless a flight holds the lock. `None`: Redis unavailable, the body is over [`MAX_BODY_BYTES`], or
    /// there is nothing to keep (not shared); a lock `token` holds is then still held.
    pub async fn cache_put(
        &self,
        platform: &str,
        name: &str,
        entry: &SharedEntry,
        ttl: Duration,
        stale_ttl: Duration,
        token: Option<&FlightToken>,
    ) -> Option<Put> {
        if entry
            .body
            .as_ref()
            .is_some_and(|b| b.len() > MAX_BODY_BYTES)
        {
            return None;
        }
        let keys = self.keys()?.name(platform, name);
        let value = entry.encode();
        let ms = |d: Duration| if d.is_zero() { 0 } else { expiry_ms(d) };
        let (ttl_ms, stale_ms) = (ms(ttl), ms(stale_ttl));
        if ttl_ms == 0 && (entry.body.is_some() || stale_ms == 0) {
            // Nothing to keep: a found profile is never stored without its own lifetime.
            return None;
        }
        let token = token.map(|t| t.0.clone()).unwrap_or_default();
        let script: &Script = if entry.body.is_some() {
            &PUT
        } else {
            &PUT_GONE
        };
        let put: i64 = self
            .run("cache_put", |mut conn| async move {
                script
                    .key(keys.entry)
                    .key(keys.stale)
                    .key(keys.lock)
                    .arg(value.as_ref())
                    .arg(ttl_ms)
                    .arg(stale_ms)
                    .arg(token)
                    .invoke_async(&mut conn)
                    .await
            })
            .await?;
        Some(match put {
            1 => Put::Stored,
            2 => {
                if let Some(redis) = &self.redis {
                    redis.health.full("cache_put");
                }
                Put::Full
            }
            _ => Put::Superseded,
        })
    }

    async fn read(
        &self,
        op: &'static str,
        kind: &'static str,
        key: String,
    ) -> Option<Option<SharedEntry>> {
        let raw: Option<Vec<u8>> = self
            .run(op, |mut conn| async move {
                READ.key(key)
                    .arg(MAX_VALUE_BYTES)
                    .invoke_async(&mut conn)
                    .await
            })
            .await?;
        let entry = raw.and_then(SharedEntry::decode_owned);
        if entry.is_some() {
            metrics::counter!(REDIS_HITS, "kind" => kind).increment(1);
        } else {
            metrics::counter!(REDIS_MISSES, "kind" => kind).increment(1);
        }
        Some(entry)
    }
}
