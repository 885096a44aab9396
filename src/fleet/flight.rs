//! One upstream flight per name for the whole fleet: a lock with a random token and a short
//! lease that its holder renews while it fetches, and waiters that poll for the holder's
//! answer.
//!
//! # Why a lease
//!
//! A waiter cannot ask another replica whether it is alive; it can only see whether the lock
//! is still there. So the lock lives [`Fleet::lease`] (2 s at the default `redis.timeout_ms`)
//! unless renewed, and [`Fleet::hold`] renews it every quarter lease while the fetch runs: a
//! live holder keeps its lock for as long as its fetch takes, and a holder that died (SIGKILL,
//! a process that exited with flights in the air, a host cut off from Redis) loses it within
//! one lease of its last renewal. Its waiters, polling every [`POLL_EVERY`], then see it gone
//! and one of them takes the flight over. A takeover therefore starts at most a lease (plus
//! one poll) after the holder's death, whatever the fetch's own deadline.
//!
//! Renewals and releases are not skipped while the replica has backed off from Redis after a
//! failure (they are tried anyway, each bounded by `redis.timeout_ms`), and a release that
//! cannot reach Redis is tried again in the background until the lease has run out anyway:
//! a blip on the holder never leaves its lock behind for longer than a lease.
//!
//! # Fencing
//!
//! A holder that lost its lock (its renewals failed for a whole lease and another flight took
//! the name) still finishes its fetch, for its own callers, but its answer is older than the
//! new holder's: `put.lua` stores an answer given with a token only while that token holds the
//! lock, or when the lock lapsed and no answer as new as it has been stored since (see
//! [`Fleet::cache_put`]).
//!
//! # The seam
//!
//! [`NameLocks`] is what a flight uses: [`NameLocks::claim`] answers the fleet's entry, the
//! answer another replica fetched while this one waited, or that this flight fetches
//! ([`Held`]); [`NameLocks::hold`] keeps the name while it does, and
//! [`super::entries::Entries::publish`] stores the answer and gives the name up. Without Redis,
//! or whenever it cannot be used, the claim is granted at once and holding it costs nothing:
//! the replica's own one flight per name (the cache's) is then the only one. The calls on
//! [`Fleet`] here ([`Fleet::flight_lock`], [`Fleet::flight_wait`], [`Fleet::hold`],
//! [`Fleet::flight_release`]) are its Redis implementation.

use std::convert::Infallible;
use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;
use tokio::time::Instant;

use super::entry::{MAX_VALUE_BYTES, SharedEntry};
use super::{Fleet, REDIS_HITS, REDIS_MISSES, expiry_ms};

/// How often a waiter looks for the holder's answer (one Redis call each time).
pub const POLL_EVERY: Duration = Duration::from_millis(25);
/// The shortest lease: a holder renews every quarter of it, so it survives three renewals in a
/// row lost to Redis hiccups; a dead holder delays the others by at most this.
pub const MIN_LEASE: Duration = Duration::from_secs(2);
/// How many Redis call deadlines (`redis.timeout_ms`) a lease spans at least, so that a slow
/// but working Redis never lets a live holder's lease lapse between two renewals.
const LEASE_TIMEOUTS: u32 = 8;

static LOCK: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("scripts/lock.lua")));
static RENEW: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("scripts/renew.lua")));
static RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/release.lua")));
static PEEK: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("scripts/peek.lua")));

/// One flight per name for the fleet: the fleet's lock on a name and the wait for the
/// replica holding it, falling back to this replica's own flight (see the module docs).
#[derive(Clone, Debug)]
pub struct NameLocks {
    fleet: Fleet,
}

/// What [`NameLocks::claim`] found for one flight.
#[derive(Debug)]
pub enum Claim {
    /// The fleet's answer, stored before the flight asked: nothing to fetch.
    Stored(SharedEntry),
    /// Another replica's answer, fetched while this flight waited for it.
    Waited(SharedEntry),
    /// This flight fetches the name, holding it (for the fleet, or for this replica alone).
    Fetch(Held),
    /// Another replica's fetch did not end by the flight's deadline.
    TimedOut,
}

/// A flight's hold on a name, from [`NameLocks::claim`]: the fleet's lock, or (without Redis)
/// this replica's own flight, which needs nothing more. Given up by
/// [`super::entries::Entries::publish`] or [`NameLocks::release`].
#[derive(Debug)]
pub struct Held(Option<FlightToken>);

impl Held {
    /// The fleet's lock token, when the name is held for the fleet.
    pub(super) fn token(&self) -> Option<&FlightToken> {
        self.0.as_ref()
    }
}

impl NameLocks {
    /// The name locks of `fleet`.
    pub fn new(fleet: &Fleet) -> Self {
        Self {
            fleet: fleet.clone(),
        }
    }

    /// Claims `name` of `platform` for one flight that takes answers fetched at or after
    /// `not_before_unix_ms` (`0`: any): the fleet's entry, the answer of the replica that holds
    /// the name (waited for until `give_up`, taking the name over if that replica gives up or
    /// dies), or the name to fetch. Without Redis, or whenever it cannot be used: the name to
    /// fetch, at once.
    pub async fn claim(
        &self,
        platform: &str,
        name: &str,
        not_before_unix_ms: u64,
        give_up: Instant,
    ) -> Claim {
        let fleet = &self.fleet;
        loop {
            // One call: the fleet's answer, or the lock to fetch it.
            match fleet
                .flight_lock_after(platform, name, not_before_unix_ms)
                .await
            {
                Lock::Ready(found) => return Claim::Stored(found),
                Lock::Acquired(token) => return Claim::Fetch(Held(Some(token))),
                Lock::Unavailable => return Claim::Fetch(Held(None)),
                Lock::HeldByOther => {}
            }
            match fleet
                .flight_wait_after(platform, name, give_up, not_before_unix_ms)
                .await
            {
                Wait::Entry(found) => return Claim::Waited(found),
                // The holder gave up or died: look again, and maybe fetch.
                Wait::LockGone if Instant::now() < give_up => {}
                Wait::LockGone | Wait::TimedOut => return Claim::TimedOut,
                Wait::Unavailable => return Claim::Fetch(Held(None)),
            }
        }
    }

    /// Runs `work` (the fetch of `name`) while keeping the name `held` (renewing the fleet's
    /// lease, see [`Fleet::hold`]); for this replica alone, just runs it.
    pub async fn hold<F: Future>(
        &self,
        platform: &str,
        name: &str,
        held: &Held,
        work: F,
    ) -> F::Output {
        match held.token() {
            Some(token) => self.fleet.hold(platform, name, token, work).await,
            None => work.await,
        }
    }

    /// Gives up a hold on `name` without an answer, so that a replica waiting for it fetches
    /// for itself instead of waiting out the lease (retried while Redis cannot be reached).
    pub async fn release(&self, platform: &str, name: &str, held: Held) {
        release(&self.fleet, platform, name, held).await;
    }
}

/// Gives up `held` on `name` through `fleet` (nothing to do for this replica's own flight).
pub(super) async fn release(fleet: &Fleet, platform: &str, name: &str, held: Held) {
    if let Some(token) = held.token() {
        let _ = fleet.flight_release(platform, name, token).await;
    }
}

/// The lease of a fleet whose Redis calls may take `timeout` each.
pub(super) fn lease_for(timeout: Duration) -> Duration {
    MIN_LEASE.max(timeout.saturating_mul(LEASE_TIMEOUTS))
}

/// Proof of holding a name's flight lock: only its holder can renew or release it, and an
/// answer stored with it is fenced (see the module docs). The text is the random token stored
/// at the lock; one that is not (any other text) holds nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlightToken(pub String);

/// The answer to [`Fleet::flight_lock`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lock {
    /// The fleet already has the answer (stored by a flight that ended before this one
    /// asked): serve it, nothing to fetch.
    Ready(SharedEntry),
    /// This caller makes the upstream request inside [`Fleet::hold`], then stores the answer
    /// with [`Fleet::cache_put`] (passing the token releases the lock) or calls
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
    /// The lock went away without an answer (the holder failed, gave up, or died and its lease
    /// ran out): the caller may try [`Fleet::flight_lock`] itself.
    LockGone,
    /// The deadline passed first.
    TimedOut,
    /// Redis unavailable: fetch locally.
    Unavailable,
}

impl Fleet {
    /// How long a flight lock lives unless its holder renews it: [`MIN_LEASE`], or eight
    /// `redis.timeout_ms` when that is longer. The longest a dead holder delays the others.
    pub fn lease(&self) -> Duration {
        self.lease
    }

    /// How often a holder renews its lease.
    fn renew_every(&self) -> Duration {
        self.lease / 4
    }

    /// Reads `name`'s entry or, when the fleet has none, tries to take its flight lock for one
    /// [`Fleet::lease`] (`SET NX PX` with a random token), in one call: a flight that read "no
    /// entry" and then locked could otherwise miss an answer stored in between, and fetch it
    /// again. The fetch then runs inside [`Fleet::hold`], which keeps the lock.
    pub async fn flight_lock(&self, platform: &str, name: &str) -> Lock {
        self.flight_lock_after(platform, name, 0).await
    }

    /// [`Fleet::flight_lock`] for a flight that wants an answer fetched at or after
    /// `not_before_unix_ms` (a background refresh, a caller's `max-age`): an older entry is
    /// left in place and not answered, and the flight goes on to the lock. `0` takes any.
    pub async fn flight_lock_after(
        &self,
        platform: &str,
        name: &str,
        not_before_unix_ms: u64,
    ) -> Lock {
        let Some(keys) = self.keys().map(|k| k.name(platform, name)) else {
            return Lock::Unavailable;
        };
        // Unique, not secret (it only tells holders apart): a fast generator, not a system
        // call for randomness on every memory miss.
        let token = format!("{:032x}", fastrand::u128(..));
        let sent = token.clone();
        let lease = expiry_ms(self.lease);
        let reply: Option<(Option<Vec<u8>>, i64)> = self
            .run("flight_lock", |mut conn| async move {
                LOCK.key(keys.entry)
                    .key(keys.lock)
                    .arg(sent)
                    .arg(lease)
                    .arg(MAX_VALUE_BYTES)
                    .arg(not_before_unix_ms)
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

    /// Runs `work` (the fetch of `name`) while keeping the lock `token` holds: renewed every
    /// quarter lease until `work` ends. A renewal that finds the lock gone (another flight
    /// took the name after this one's lease ran out) stops renewing; `work` still runs to its
    /// end, and [`Fleet::cache_put`] then keeps the newer flight's answer.
    pub async fn hold<F: Future>(
        &self,
        platform: &str,
        name: &str,
        token: &FlightToken,
        work: F,
    ) -> F::Output {
        let renewing = async {
            loop {
                tokio::time::sleep(self.renew_every()).await;
                if self.flight_renew(platform, name, token).await == Some(false) {
                    tracing::debug!(
                        platform,
                        "lost a flight's lease; its answer will not be shared"
                    );
                    break;
                }
            }
            std::future::pending::<Infallible>().await
        };
        tokio::select! {
            output = work => output,
            never = renewing => match never {},
        }
    }

    /// Extends `name`'s lock by one lease if `token` still holds it. `Some(false)`: it does not
    /// any more; `None`: Redis could not be reached (tried even while backed off).
    async fn flight_renew(&self, platform: &str, name: &str, token: &FlightToken) -> Option<bool> {
        let key = self.keys()?.name(platform, name).lock;
        let (token, lease) = (token.0.clone(), expiry_ms(self.lease));
        let renewed: i64 = self
            .run_ungated("flight_renew", |mut conn| async move {
                RENEW
                    .key(key)
                    .arg(token)
                    .arg(lease)
                    .invoke_async(&mut conn)
                    .await
            })
            .await?;
        Some(renewed == 1)
    }

    /// Releases `name`'s lock if `token` still holds it (a late holder whose lock was taken by
    /// another changes nothing). Tried even while the replica has backed off from Redis; when
    /// Redis cannot be reached, tried again in the background every quarter lease until the
    /// lease has run out (by then the lock is gone anyway). `Some(true)` if released now;
    /// `None`: not yet.
    pub async fn flight_release(
        &self,
        platform: &str,
        name: &str,
        token: &FlightToken,
    ) -> Option<bool> {
        if let Some(released) = self.try_release(platform, name, token).await {
            return Some(released);
        }
        let (fleet, platform, name, token) = (
            self.clone(),
            platform.to_owned(),
            name.to_owned(),
            token.clone(),
        );
        tokio::spawn(async move {
            let until = Instant::now() + fleet.lease;
            while Instant::now() < until {
                tokio::time::sleep(fleet.renew_every()).await;
                if fleet.try_release(&platform, &name, &token).await.is_some() {
                    return;
                }
            }
        });
        None
    }

    async fn try_release(&self, platform: &str, name: &str, token: &FlightToken) -> Option<bool> {
        let key = self.keys()?.name(platform, name).lock;
        let token = token.0.clone();
        let released: i64 = self
            .run_ungated("flight_release", |mut conn| async move {
                RELEASE.key(key).arg(token).invoke_async(&mut conn).await
            })
            .await?;
        Some(released == 1)
    }

    /// Waits until `name`'s answer is stored, its lock goes away without one (released, or its
    /// holder's lease ran out), or `deadline`, polling every [`POLL_EVERY`].
    pub async fn flight_wait(&self, platform: &str, name: &str, deadline: Instant) -> Wait {
        self.flight_wait_after(platform, name, deadline, 0).await
    }

    /// [`Fleet::flight_wait`] for an answer fetched at or after `not_before_unix_ms` (as in
    /// [`Fleet::flight_lock_after`]): an older entry does not end the wait.
    pub async fn flight_wait_after(
        &self,
        platform: &str,
        name: &str,
        deadline: Instant,
        not_before_unix_ms: u64,
    ) -> Wait {
        let Some(keys) = self.keys().map(|k| k.name(platform, name)) else {
            return Wait::Unavailable;
        };
        loop {
            let (entry_key, lock_key) = (keys.entry.clone(), keys.lock.clone());
            let peek: Option<(Option<Vec<u8>>, i64)> = self
                .run("flight_wait", |mut conn| async move {
                    PEEK.key(entry_key)
                        .key(lock_key)
                        .arg(MAX_VALUE_BYTES)
                        .arg(not_before_unix_ms)
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
