//! The fleet layer: the state that replicas behind one load balancer share, kept in Redis.
//!
//! Every replica holds one [`Fleet`] handle (cheap to clone): with `redis.url` empty it is
//! local ([`Fleet::local`]), and every Redis call answers `None` (or an `Unavailable` variant)
//! at once, without building a key or touching a connection; with it set, each call answers
//! the same way whenever Redis cannot be used. Nothing outside this folder makes those calls
//! or asks whether there is a fleet: each shared primitive is one type here holding both
//! implementations, the Redis one falling back to the local one inside (see "The seam").
//! Redis is never a single point of failure.
//!
//! # What Redis holds (all under `redis.key_prefix`, written `P` here)
//!
//! | key | holds | expiry |
//! |---|---|---|
//! | `P{q:KEYID}` | GCRA theoretical arrival time (µs, Redis clock) of one API key | until the bucket is full again |
//! | `P{n:PLATFORM:NAME}:e` | the cached answer ([`SharedEntry`]) | the entry's TTL (a found profile's: plus `cache.revalidate_seconds`, its stale-while-revalidate window) |
//! | `P{n:PLATFORM:NAME}:s` | its stale record: the last answer, a found profile's stale copy or a not-found's tombstone | TTL + `max_stale` |
//! | `P{n:PLATFORM:NAME}:l` | the fleet's one-flight lock (random token) | one lease (2 s by default), renewed by its holder while it fetches |
//! | `P{n:PLATFORM:NAME}:f` | `1` while a background refresh of the name may not start (one per name per second for the fleet) | one second |
//! | `P{n:PLATFORM:NAME}:i` | the platform id (digits) learned for the name from an answer about it, what a source asked by id needs (the photo-share `graphql` source's pk) | [`ids::life`]: as long as the fleet's cache keeps the name's profile (the shipped settings: its stale record's, TTL + `max_stale`), after it was last written |
//! | `P{d:PLATFORM}:QUERY` | a query id (`doc_id`) learned from the platform's pages, `ID MS FROM` ([`query_ids::QueryIds`]) | [`query_ids::LEARNED_TTL`] (7 days) after it was learned |
//! | `P{d:PLATFORM}:t:WHAT` | `1` while a replica's turn to look for new query ids (`page`, `bundles`) lasts | `rediscover_seconds`, or 6 h for the bundles |
//! | `P{o:PLATFORM}` | next free outbound send slot (µs, Redis clock) | until the budget is whole |
//! | `P{o:PLATFORM}:r` | next free slot of the budget's share for background refreshes (`cache.refresh_share`; µs, Redis clock) | until that share is whole |
//! | `P{b:PLATFORM}` | `1` while the platform's breaker is open | the rest's length |
//! | `P{r:SCOPE}:INDEX` | `1` while proxy INDEX of SCOPE rests | the rest's length |
//! | `P{g:SCOPE}:INDEX` | how many fresh sessions of gateway INDEX of SCOPE were refused in a row (a count by position: no session id, no credential) | one proxy cool-down after the last refusal |
//! | `P{c}:lease` | the canary's round lease: the replica running this interval's round | one interval |
//! | `P{c}:verdicts` | the canary's last verdicts (JSON, at most [`canary::MAX_VERDICTS_BYTES`]), read by every replica once per interval | three intervals |
//! | `P{s:PLATFORM}` | the evidence about the platform's sources: per source label, refusals since its last read, the mask of routes that refused it, up to 8 name digests, its last read (ms) | ten minutes after the last merge |
//! | `P{s:PLATFORM}:p:SOURCE` | `1` while a demoted source's re-probe turn is taken | one re-probe interval |
//!
//! `KEYID` comes from [`key_id`]: a one-way digest of the key's digest, so no API key, key
//! digest or credential reaches Redis (a proxy is named by its position only). A name's five
//! keys share a hash tag and so one cluster slot; each key id and each platform has its own.
//! Every call is one Lua script (`EVALSHA`) or one command: one round trip each.
//!
//! # What one request costs
//!
//! A lookup costs its share of one [`Fleet::quota_lease`]: a replica leases a few units of a
//! busy key's quota at once and spends them locally ([`quota`]), so a key sending
//! thousands of lookups a second costs a replica one quota call per lease (about every 10 ms),
//! and a key sending one at a time one call per lookup. A miss in the replica's memory costs
//! one [`Fleet::flight_lock`], which reads the name's entry or, when there is none, takes its
//! lock.
//! A miss in Redis too then adds either the fetch ([`Fleet::outbound_reserve`],
//! [`Fleet::breaker_open_for`], one lease renewal per half second of fetching, and a
//! [`Fleet::cache_put`] that also releases the lock) or [`Fleet::flight_wait`], which polls the
//! entry and the lock every [`flight::POLL_EVERY`] (one call per poll) until the entry appears,
//! the lock vanishes without one (the holder gave up, or died and its lease ran out: the waiter
//! may take the lock), or its deadline.
//! Polling, not pub/sub, because it needs no second connection and works unchanged on a
//! cluster; a waiter costs a few calls per fetch at most. A background refresh that goes on
//! to fetch first claims the name's refresh limit ([`Fleet::refresh_claim`], one call).
//!
//! # The seam
//!
//! One type per shared primitive, each in its own file with its keys (an `impl Keys` block,
//! built by `Keys::tag`), its Redis calls (the `impl Fleet` block, public so that tests
//! and tools can reach Redis directly) and its local implementation:
//!
//! | type | what it shares | local implementation (no Redis, or Redis unusable) | on Redis | keys |
//! |---|---|---|---|---|
//! | [`quota::Quotas`] | each API key's quota and this replica's leases of it | a governor GCRA per key | `gcra.lua`, leased a few units at a time | `{q:…}` |
//! | [`budget::Budget`] | a platform's outbound budget, or its refresh share | a governor GCRA | `gcra.lua`, reserve then wait | `{o:…}`, `{o:…}:r` |
//! | [`breaker::Breaker`] | a platform's open breaker | the replica's own breaker (always consulted) | `rest.lua` mark, `PTTL` | `{b:…}` |
//! | [`gateways::GatewayRefusals`] | a gateway's fresh sessions refused in a row | the replica's own count | `refused.lua`, `DEL` on an answer | `{g:…}:N` |
//! | [`rests::Rests`] | a platform's proxy rests | the replica's record (merged with Redis's on every read) | `rest.lua` marks, `resting.lua` | `{r:…}:N` |
//! | [`entries::Entries`] | answers and stale records (copies, tombstones) | none: reads find nothing, writes keep nothing (the replica's memory in front is the only store) | `read.lua`, `put.lua` (fenced by the flight's lock) | `{n:…}:e`, `{n:…}:s` |
//! | [`flight::NameLocks`] | one flight per name, and the wait for another replica's | every claim granted at once (the cache's own one flight per name) | `lock.lua`, `renew.lua`, `release.lua`, `peek.lua` | `{n:…}:l` |
//! | [`ids::KnownIds`] | the platform id learned for a name (written only when the source asked by id is configured) | a bounded memory of [`ids::MAX_LOCAL`] names, each kept [`ids::life`] | `SET PX` (only when this replica did not write the same id within half its life), `GET` | `{n:…}:i` |
//! | [`query_ids::QueryIds`] | the query ids learned from the platform's pages | the replica's own memory | `SET PX`, `GET` (at most every [`query_ids::REREAD_EVERY`] per query asked), `DEL` when it answered "changed", `SET NX PX` for a rediscovery turn | `{d:…}:…` |
//! | [`refresh::RefreshLimits`] | one background refresh per name per second | every claim granted (the limit on the replica's stored entry) | `SET NX PX` | `{n:…}:f` |
//! | [`sources::SourceEvidence`] | what a platform's sources did lately (reads, refusals by route and name digest), and a demoted source's re-probe turn | the replica's own record (answers every lookup; merged with Redis's at most once a second) | `sources.lua`, `SET NX PX` | `{s:…}`, `{s:…}:p:…` |
//! | [`canary::Rounds`] | whose turn an interval's round is, and the last board | every turn this replica's alone, nothing to adopt or publish | `canary_set.lua`, `canary_get.lua` | `{c}:lease`, `{c}:verdicts` |
//!
//! Adding a primitive is one file here (plus its Lua script, if any, in `scripts/`): its key
//! (`impl Keys`, with a tag kind of its own), its call through [`Fleet`]'s one runner (which
//! applies the deadline and the health rules below), and a type holding both implementations;
//! then its row in the tables above.
//!
//! # When Redis is down
//!
//! Every call is bounded by `redis.timeout_ms`. A failure or time-out marks Redis down: for
//! [`health::BACKOFF`] every call answers "unavailable" at once, then one call probes Redis
//! again, and a success puts the replica back on the shared state (within seconds of Redis's
//! return). A background task also pings Redis once per back-off period, so a replica without
//! traffic notices Redis leaving and coming back too. `profile_lookup_redis_up` shows the mode,
//! `profile_lookup_redis_errors_total{op, kind="unavailable"}`
//! counts failures, and a warning is logged at most every [`health::WARN_EVERY`]. A value of
//! the wrong type, size or format at any key is read as absent and overwritten, never an error.
//!
//! # When Redis refuses us
//!
//! Redis refusing this replica's credentials or permissions (`NOAUTH`, `WRONGPASS`, `NOPERM`,
//! a script's ACL refusal) is no outage but a configuration error: waiting mends nothing, and
//! a fleet whose replicas all fall back runs N quotas and N outbound budgets. So `serve` asks
//! Redis once before it serves ([`Fleet::check_at_start`]: a `PING` within `redis.timeout_ms`,
//! [`START_TRIES`] tries) and refuses to start on a refusal, naming `redis.url`; a Redis it
//! cannot reach is no error (the replica starts on its local state, as it goes on when Redis
//! leaves). A refusal met later is handled like an outage (the replica goes on locally and
//! probes again), but logged at error level (at most every [`health::WARN_EVERY`]) and counted
//! as `profile_lookup_redis_errors_total{kind="auth"}`, which an alert rule pages on.
//!
//! On a Redis Cluster the health is the connection's, not each node's: a call that fails on a
//! node that died or hangs puts the replica on its local state for every slot during the
//! back-off, and the probes find the node again once it is back (the cluster's default,
//! `cluster-require-full-coverage yes`, refuses every slot anyway once it marks a node failed).
//! A restarted, empty node is simply a cold cache and a fresh quota for its slots; the scripts
//! are loaded again by the first `EVALSHA` that finds them missing (`NOSCRIPT`).
//!
//! Flights survive a blip too: renewing and releasing a flight lock are tried even during the
//! back-off, and a release that cannot reach Redis is retried until the lock's lease is over
//! (`flight`): a replica that loses Redis while it holds a name never stops the fleet's flights
//! of that name for more than a lease.
//!
//! # When Redis's memory is full
//!
//! The shipped Redis runs `maxmemory` with `noeviction` (Redis 7 or later: the scripts carry
//! flags). No key is ever evicted, so no quota, outbound slot, breaker, rest or lock can be
//! forgotten into over-admission, as any eviction policy could do (they are small and
//! short-lived: the first an LRU or TTL policy picks). The scripts that write those are flagged
//! `allow-oom`: each key is a few bytes, one per API key, platform, proxy or name in flight, so
//! they may pass `maxmemory` by little. Found profiles are what gives way: `put.lua` is refused,
//! the answer stays in the replicas' memory, [`Put::Full`] is counted in
//! `profile_lookup_redis_full_total{op}` and warned about; a refusal is not Redis being down.
//! Not-found answers are written even then (a few bytes, and their tombstone keeps "gone stays
//! gone"). A learned platform id (`:i`) is refused too, and it never outlives the profile it
//! was learned with ([`ids::life`]), so the ids cannot crowd the profiles out. As entries
//! expire, room comes back on its own.

pub mod breaker;
pub mod budget;
pub mod canary;
mod conn;
pub mod entries;
pub mod entry;
pub mod evidence;
pub mod flight;
pub mod gateways;
pub mod gcra;
pub mod health;
pub mod ids;
pub mod keys;
mod marks;
pub mod query_ids;
pub mod quota;
pub mod refresh;
pub mod rests;
pub mod sources;
mod start;

use std::sync::Arc;
use std::time::Duration;

use redis::RedisResult;

use crate::config::RedisConfig;

pub use budget::Reservation;
pub use entries::Put;
pub use entry::SharedEntry;
pub use flight::{FlightToken, Lock, Wait};
pub use keys::key_id;
pub use quota::QuotaDecision;
pub use start::{AtStart, Refused, START_TRIES};

use conn::Conn;
use health::Health;
use keys::Keys;

/// `profile_lookup_redis_hits_total{kind}`: cache reads answered from Redis (`fresh`, `stale`).
pub const REDIS_HITS: &str = "profile_lookup_redis_hits_total";
/// `profile_lookup_redis_misses_total{kind}`: cache reads Redis had nothing for.
pub const REDIS_MISSES: &str = "profile_lookup_redis_misses_total";

/// Why the fleet layer could not be set up. Redis being down is never one of these.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// `[redis]` is wrong (url, prefix or timeout).
    #[error("{0}")]
    Config(String),
    /// The handle was built outside a Tokio runtime, where its connection cannot live.
    #[error("the fleet handle must be built inside a Tokio runtime")]
    NoRuntime,
}

/// The handle to the fleet's shared state: local (no Redis) or on Redis; clones share one
/// connection and one health state.
#[derive(Clone, Debug)]
pub struct Fleet {
    /// The fleet's Redis; `None`: this replica is on its own.
    redis: Option<Arc<Redis>>,
    /// How long a flight lock lives unless renewed ([`Fleet::lease`]); a field of the handle,
    /// not of `Redis`, so that tests can shorten it.
    lease: Duration,
}

#[derive(Debug)]
struct Redis {
    conn: Conn,
    /// `redis.url` with any password replaced, for messages.
    shown: String,
    keys: Keys,
    timeout: Duration,
    health: Health,
}

impl Fleet {
    /// The handle for `[redis]`: local when `url` is empty. Never waits for Redis and never
    /// fails because Redis is down: the connection is made by the first call and remade by
    /// itself. Must be called inside a Tokio runtime when `url` is set.
    pub fn new(config: &RedisConfig) -> Result<Self, FleetError> {
        let Some(target) = config.target().map_err(FleetError::Config)? else {
            return Ok(Self::local());
        };
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(FleetError::NoRuntime);
        }
        let roots = config.ca_roots().map_err(FleetError::Config)?;
        let conn = Conn::lazy(&target, config.timeout(), roots.as_deref())?;
        let redis = Arc::new(Redis {
            conn,
            shown: target.shown(),
            keys: Keys::new(&config.key_prefix),
            timeout: config.timeout(),
            health: Health::new(),
        });
        tokio::spawn(watch(Arc::downgrade(&redis)));
        Ok(Self {
            redis: Some(redis),
            lease: flight::lease_for(config.timeout()),
        })
    }

    /// A replica on its own: every call answers "unavailable" at once, and the caller uses
    /// its own state.
    pub fn local() -> Self {
        Self {
            redis: None,
            lease: flight::MIN_LEASE,
        }
    }

    /// Whether the handle is on Redis (`redis.url` set), up or not: whether answers, quotas
    /// and locks can be the fleet's at all.
    pub fn is_shared(&self) -> bool {
        self.redis.is_some()
    }

    /// Whether the last Redis call succeeded (the replica is on the fleet's shared state);
    /// false for a local handle.
    pub fn is_up(&self) -> bool {
        self.redis.as_ref().is_some_and(|r| r.health.is_up())
    }

    /// The names of the keys this handle reads and writes, for a handle on Redis (`None` for
    /// a local one, so that a call answers "unavailable" before it builds a key): for tools
    /// and tests that look at Redis directly.
    pub fn keys(&self) -> Option<&Keys> {
        self.redis.as_deref().map(|r| &r.keys)
    }

    /// This handle with flight locks that live `lease` unless renewed (see [`Fleet::lease`]):
    /// a shorter lease makes a dead holder's takeover quick enough to test.
    pub fn with_lease(self, lease: Duration) -> Self {
        Self { lease, ..self }
    }

    /// Runs one Redis call under the deadline and the health rules: `None` when Redis is
    /// skipped, fails or is too slow.
    async fn run<T, F, Fut>(&self, op: &'static str, call: F) -> Option<T>
    where
        F: FnOnce(Conn) -> Fut,
        Fut: Future<Output = RedisResult<T>>,
    {
        if !self.redis.as_ref()?.health.admit() {
            return None;
        }
        self.run_ungated(op, call).await
    }

    /// [`Fleet::run`] even while the replica has backed off from Redis: for the few calls that
    /// must not wait for the next probe (renewing or releasing a flight lock, which the rest
    /// of the fleet is waiting on). Still bounded by the deadline, and its result still counts
    /// for the health.
    async fn run_ungated<T, F, Fut>(&self, op: &'static str, call: F) -> Option<T>
    where
        F: FnOnce(Conn) -> Fut,
        Fut: Future<Output = RedisResult<T>>,
    {
        let redis = self.redis.as_ref()?;
        let health = &redis.health;
        // Named by the call (its script), never by the keys it touches.
        let span = tracing::info_span!(
            target: crate::telemetry::traces::TARGET,
            "redis",
            otel.kind = "client",
            db.system.name = "redis",
            db.operation.name = op,
            profile_lookup.redis.result = tracing::field::Empty,
        );
        let called = tokio::time::timeout(redis.timeout, call(redis.conn.clone()));
        let called = tracing::Instrument::instrument(called, span.clone()).await;
        span.record(
            "profile_lookup.redis.result",
            match &called {
                Ok(Ok(_)) => "ok",
                Ok(Err(e)) if e.code() == Some("OOM") => "full",
                Ok(Err(_)) => "failed",
                Err(_) => "timed_out",
            },
        );
        match called {
            Ok(Ok(value)) => {
                health.succeeded();
                Some(value)
            }
            // Redis answered: it is up, its memory is full. Not a reason to leave it (quotas
            // and locks are still written); this one call is simply not done.
            Ok(Err(e)) if e.code() == Some("OOM") => {
                health.full(op);
                None
            }
            Ok(Err(e)) => {
                health.failed(op, health::Trouble::of(&e), &e.to_string());
                None
            }
            Err(_) => {
                health.failed(op, health::Trouble::Unavailable, "timed out");
                None
            }
        }
    }
}

/// Pings Redis once per [`health::BACKOFF`] (one cheap command a second per replica), so that
/// `profile_lookup_redis_up` tells the truth on a replica without traffic (an idle replica
/// would otherwise report its last call's result forever), and the replica is back on Redis
/// within seconds of its return whether or not requests come. Ends with the last handle.
async fn watch(redis: std::sync::Weak<Redis>) {
    loop {
        let Some(redis) = redis.upgrade() else {
            return;
        };
        let lease = flight::lease_for(redis.timeout);
        let fleet = Fleet {
            redis: Some(redis),
            lease,
        };
        let _: Option<String> = fleet
            .run("ping", |mut conn| async move {
                redis::cmd("PING").query_async(&mut conn).await
            })
            .await;
        drop(fleet);
        tokio::time::sleep(health::BACKOFF).await;
    }
}

/// Whole milliseconds of `d`, at least 1 (Redis refuses an expiry of 0).
fn expiry_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// Whole microseconds of `d`.
fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
