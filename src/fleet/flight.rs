//! One upstream flight per name for the whole fleet: a lock with an expiry and a random token,
//! and waiters that poll for the holder's answer.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;
use tokio::time::Instant;

use super::entry::{MAX_VALUE_BYTES, SharedEntry};
use super::{Fleet, REDIS_HITS, REDIS_MISSES, expiry_ms};

/// How often a waiter looks for the holder's answer (one Redis call each time).
pub const POLL_EVERY: Duration = Duration::from_millis(25);

static LOCK: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("scripts/lock.lua")));
static RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/release.lua")));
static PEEK: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("scripts/peek.lua")));

/// Proof of holding a name's flight lock: only its holder can release it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlightToken(pub(crate) String);

/// The answer to [`Fleet::flight_lock`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lock {
    /// The fleet already has the answer (stored by a flight that ended before this one
    /// asked): serve it, nothing to fetch.
    Ready(SharedEntry),
    /// This caller makes the upstream request, then stores the answer with
    /// [`Fleet::cache_put`] (passing the token releases the lock) or calls
    /// [`Fleet::flight_release`].
    Acquired(FlightToken),
    /// Another caller, maybe on another replica, is fetching: [`Fleet::flight_wait`].
    HeldByOther,
    /// Redis unavailable: use the replica's own one-flight.
    Unavailable,
}

/// The answer to [`Fleet::flight_wait`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wait {
    /// The holder stored this answer.
    Entry(SharedEntry),
    /// The lock went away without an answer (the holder failed, gave up or died and the lock
    /// expired): the caller may try [`Fleet::flight_lock`] itself.
    LockGone,
    /// The deadline passed first.
    TimedOut,
    /// Redis unavailable: fetch locally.
    Unavailable,
}

impl Fleet {
    /// Reads `name`'s entry or, when the fleet has none, tries to take its flight lock for
    /// `ttl` (`SET NX PX` with a random token), in one call: a flight that read "no entry" and
    /// then locked could otherwise miss an answer stored in between, and fetch it again. A
    /// holder that dies delays the others by at most `ttl`.
    pub async fn flight_lock(&self, platform: &str, name: &str, ttl: Duration) -> Lock {
        let keys = self.keys().name(platform, name);
        // Unique, not secret (it only tells holders apart): a fast generator, not a system
        // call for randomness on every memory miss.
        let token = format!("{:032x}", fastrand::u128(..));
        let sent = token.clone();
        let reply: Option<(Option<Vec<u8>>, i64)> = self
            .run("flight_lock", |mut conn| async move {
                LOCK.key(keys.entry)
                    .key(keys.lock)
                    .arg(sent)
                    .arg(expiry_ms(ttl))
                    .arg(MAX_VALUE_BYTES)
                    .invoke_async(&mut conn)
                    .await
            })
            .await;
        let Some((raw, taken)) = reply else {
            return Lock::Unavailable;
        };
        if let Some(raw) = raw {
            return match SharedEntry::decode_owned(raw) {
                Some(entry) => {
                    metrics::counter!(REDIS_HITS, "kind" => "fresh").increment(1);
                    Lock::Ready(entry)
                }
                // Looked like ours but is not: this flight fetches without the fleet's lock,
                // and its answer overwrites the junk.
                None => Lock::Unavailable,
            };
        }
        metrics::counter!(REDIS_MISSES, "kind" => "fresh").increment(1);
        if taken == 1 {
            Lock::Acquired(FlightToken(token))
        } else {
            Lock::HeldByOther
        }
    }

    /// Releases `name`'s lock if `token` still holds it (a late holder whose lock expired and
    /// was taken by another changes nothing). `Some(true)` if released; `None`: Redis
    /// unavailable (the lock then ends by its expiry).
    pub async fn flight_release(
        &self,
        platform: &str,
        name: &str,
        token: &FlightToken,
    ) -> Option<bool> {
        let key = self.keys().name(platform, name).lock;
        let token = token.0.clone();
        let released: i64 = self
            .run("flight_release", |mut conn| async move {
                RELEASE.key(key).arg(token).invoke_async(&mut conn).await
            })
            .await?;
        Some(released == 1)
    }

    /// Waits until `name`'s answer is stored, its lock goes away without one, or `deadline`,
    /// polling every [`POLL_EVERY`].
    pub async fn flight_wait(&self, platform: &str, name: &str, deadline: Instant) -> Wait {
        let keys = self.keys().name(platform, name);
        loop {
            let (entry_key, lock_key) = (keys.entry.clone(), keys.lock.clone());
            let peek: Option<(Option<Vec<u8>>, i64)> = self
                .run("flight_wait", |mut conn| async move {
                    PEEK.key(entry_key)
                        .key(lock_key)
                        .arg(MAX_VALUE_BYTES)
                        .invoke_async(&mut conn)
                        .await
                })
                .await;
            let Some((raw, held)) = peek else {
                return Wait::Unavailable;
            };
            if let Some(entry) = raw.and_then(SharedEntry::decode_owned) {
                return Wait::Entry(entry);
            }
            if held == 0 {
                return Wait::LockGone;
            }
            let now = Instant::now();
            if now >= deadline {
                return Wait::TimedOut;
            }
            tokio::time::sleep_until(deadline.min(now + POLL_EVERY)).await;
        }
    }
}
