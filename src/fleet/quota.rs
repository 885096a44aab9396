//! The per-key quota: one GCRA bucket per configured API key, the fleet's when the handle is
//! on Redis (one quota for a key from all replicas together, on Redis's clock), the replica's
//! own (governor) otherwise and whenever Redis cannot be used: one type, [`Quotas`], with both.
//!
//! # Leases
//!
//! A replica does not ask Redis for every request: it *leases* a few units of the key's fleet
//! bucket at once and spends them locally (`Lease`). Every unit is counted by the fleet when
//! it is leased, so the fleet never admits more than its quota; a unit left unspent when its
//! lease lapses ([`LEASE_LIFETIME`]) is lost, so it may admit slightly fewer. The lease size
//! adapts per key and replica: it starts at 1 (one call per request, exactly as without
//! leases), doubles while leases run out within [`LEASE_SPAN`] of each other, halves when they
//! last longer than eight spans, and never exceeds an eighth of the burst (nor
//! [`MAX_LEASE`]), so a replica cannot sit on much of a key's burst while another is refused.
//! While one lease is being fetched, other requests of the key that find none ask for a single
//! unit, so concurrent requests do not pile up units. A refusal is remembered until the
//! fleet's `Retry-After` (no unit can be free before it), so an over-quota key costs Redis one
//! call per refill interval per replica, not one per request. Under a steady stream a lease
//! call serves about [`LEASE_SPAN`] of requests: at 20,000 lookups/s of one key on one
//! replica, some 100–200 Redis calls a second instead of 20,000.

use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};

use super::Fleet;
use super::keys::Keys;

/// How long a lease's units may be spent: units charged to the fleet but unspent after this
/// are lost (the fleet admits fewer), never spent late (it would admit more).
pub const LEASE_LIFETIME: Duration = Duration::from_millis(250);
/// Leases that run out faster than this grow (doubling); ones that last over eight of these
/// shrink (halving).
pub const LEASE_SPAN: Duration = Duration::from_millis(10);
/// The most units one lease takes.
pub const MAX_LEASE: u32 = 256;

/// What one key's bucket said to one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checked {
    /// A unit was taken: `remaining` are left, and the bucket is whole again after `reset`.
    Allowed {
        /// Units left.
        remaining: u32,
        /// Until the bucket is whole.
        reset: Duration,
    },
    /// No unit is free: one will be after `wait`; the bucket is whole after `reset`.
    Refused {
        /// Until one unit is free.
        wait: Duration,
        /// Until the bucket is whole.
        reset: Duration,
    },
}

/// Every configured key's bucket, by key index: the replica's own, and with Redis the fleet's
/// through this replica's leases.
#[derive(Debug)]
pub struct Quotas {
    per_key: Vec<RateLimiter<NotKeyed, InMemoryState, DefaultClock, StateInformationMiddleware>>,
    burst: u32,
    per_minute: u32,
    interval: Duration,
    /// The fleet's buckets, when the handle is on Redis.
    fleet: Option<FleetQuota>,
}

/// The fleet's quota: the key ids Redis knows the keys by, and each key's lease here.
#[derive(Debug)]
struct FleetQuota {
    fleet: Fleet,
    ids: Vec<String>,
    leases: Vec<Mutex<Lease>>,
    /// The largest lease: an eighth of the burst, at least 1, at most [`MAX_LEASE`].
    max_lease: u32,
}

/// One key's units leased from the fleet by this replica, and what the fleet said with them.
#[derive(Debug)]
struct Lease {
    /// Units leased and not spent yet.
    units: u32,
    /// When they lapse.
    lapses: Instant,
    /// The fleet's remaining units right after the last lease (the units held here excluded).
    fleet_remaining: u32,
    /// When the fleet's quota is whole again, as of the last answer.
    reset_at: Instant,
    /// Refused by the fleet until then (no unit can be free before).
    refused_until: Option<Instant>,
    /// Units the next lease asks for.
    size: u32,
    /// When the last lease was granted.
    last_grant: Option<Instant>,
    /// Lease calls in the air: while one is, another asks for a single unit.
    fetching: u32,
}

impl Lease {
    fn new(now: Instant) -> Self {
        Self {
            units: 0,
            lapses: now,
            fleet_remaining: 0,
            reset_at: now,
            refused_until: None,
            size: 1,
            last_grant: None,
            fetching: 0,
        }
    }
}

/// What a key's lease says without asking Redis.
enum Local {
    /// A leased unit was spent: admitted.
    Spent { remaining: u32, reset: Duration },
    /// The fleet refused the key until a moment still to come.
    Refused { wait: Duration, reset: Duration },
    /// Ask the fleet for this many units.
    Ask(u32),
}

impl Quotas {
    /// One bucket of `per_minute` units a minute, `burst` at once, for each key whose fleet id
    /// (`super::key_id`) is in `ids`, in the order of the keys' indexes; the fleet's on a
    /// `fleet` with Redis.
    pub fn new(fleet: &Fleet, ids: Vec<String>, per_minute: NonZeroU32, burst: NonZeroU32) -> Self {
        let quota = Quota::per_minute(per_minute).allow_burst(burst);
        let count = ids.len();
        Self {
            per_key: (0..count)
                .map(|_| RateLimiter::direct(quota).with_middleware::<StateInformationMiddleware>())
                .collect(),
            burst: burst.get(),
            per_minute: per_minute.get(),
            interval: quota.replenish_interval(),
            fleet: fleet.is_shared().then(|| {
                let now = Instant::now();
                FleetQuota {
                    fleet: fleet.clone(),
                    ids,
                    leases: (0..count).map(|_| Mutex::new(Lease::new(now))).collect(),
                    max_lease: (burst.get() / 8).clamp(1, MAX_LEASE),
                }
            }),
        }
    }

    /// How long one unit takes to come back.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Takes one unit of key `index`'s bucket (the fleet's, through the lease, when it can be
    /// used); `None` for an index no key has.
    pub async fn take(&self, index: usize) -> Option<Checked> {
        let limiter = self.per_key.get(index)?;
        if let Some(fleet) = &self.fleet
            && let Some(decided) = self.fleet_take(fleet, index).await
        {
            return Some(decided);
        }
        Some(match limiter.check() {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity();
                let reset = self.interval * (self.burst - remaining.min(self.burst));
                Checked::Allowed { remaining, reset }
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                Checked::Refused { wait, reset: wait }
            }
        })
    }

    /// The fleet's answer for key `index`: from its lease here, or from Redis (leasing a few
    /// units when the key is busy). `None`: Redis unavailable, the local limiter decides.
    async fn fleet_take(&self, fleet: &FleetQuota, index: usize) -> Option<Checked> {
        let (id, lease) = (fleet.ids.get(index)?, fleet.leases.get(index)?);
        let want = match lock(lease).take(Instant::now()) {
            Local::Spent { remaining, reset } => {
                let remaining = remaining.min(self.burst);
                return Some(Checked::Allowed { remaining, reset });
            }
            Local::Refused { wait, reset } => return Some(Checked::Refused { wait, reset }),
            Local::Ask(want) => want,
        };
        // Counts this call out of `fetching` however it ends, a caller hanging up included.
        let _fetching = Fetching(lease);
        // Boxed: a Redis call is a large future, and most checks are answered by the lease
        // above without one.
        let d = Box::pin(
            fleet
                .fleet
                .quota_lease(id, self.per_minute, self.burst, want),
        )
        .await?;
        let mut held = lock(lease);
        let now = Instant::now();
        held.reset_at = now + d.reset;
        if !d.allowed {
            held.refused_until = Some(now + d.retry_after);
            let (wait, reset) = (d.retry_after, d.reset);
            return Some(Checked::Refused { wait, reset });
        }
        held.grew(now, want, fleet.max_lease);
        // One unit is this request's; the rest join what is held (concurrent leases add up).
        if held.lapses <= now {
            held.units = 0;
        }
        held.units = held.units.saturating_add(d.taken - 1);
        held.lapses = now + LEASE_LIFETIME;
        held.fleet_remaining = d.remaining;
        held.refused_until = None;
        let remaining = d.remaining.saturating_add(held.units);
        let remaining = remaining.min(self.burst);
        Some(Checked::Allowed {
            remaining,
            reset: d.reset,
        })
    }
}

impl Lease {
    /// Spends a held unit, repeats a standing refusal, or says how many units to ask for.
    fn take(&mut self, now: Instant) -> Local {
        let reset = self.reset_at.saturating_duration_since(now);
        if self.units > 0 && self.lapses > now {
            self.units -= 1;
            return Local::Spent {
                remaining: self.fleet_remaining.saturating_add(self.units),
                reset,
            };
        }
        self.units = 0;
        if let Some(until) = self.refused_until {
            if until > now {
                return Local::Refused {
                    wait: until - now,
                    reset,
                };
            }
            self.refused_until = None;
        }
        let want = if self.fetching == 0 { self.size } else { 1 };
        self.fetching += 1;
        Local::Ask(want)
    }

    /// Adapts the next lease's size after a grant of a `want`-unit lease at `now`.
    fn grew(&mut self, now: Instant, want: u32, max: u32) {
        if want == self.size
            && let Some(last) = self.last_grant
        {
            let since = now.saturating_duration_since(last);
            if since < LEASE_SPAN {
                self.size = self.size.saturating_mul(2).min(max);
            } else if since > LEASE_SPAN * 8 {
                self.size = (self.size / 2).max(1);
            }
        }
        self.size = self.size.min(max);
        self.last_grant = Some(now);
    }
}

/// A lease call in the air; its drop counts it out of [`Lease::fetching`].
struct Fetching<'a>(&'a Mutex<Lease>);

impl Drop for Fetching<'_> {
    fn drop(&mut self) {
        let mut lease = lock(self.0);
        lease.fetching = lease.fetching.saturating_sub(1);
    }
}

fn lock(lease: &Mutex<Lease>) -> std::sync::MutexGuard<'_, Lease> {
    lease
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The fleet's answer for one request of one key, enough for `RateLimit` and `Retry-After`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuotaDecision {
    /// Whether the request may proceed (it took one unit, or more for a lease).
    pub allowed: bool,
    /// Units taken: 0 when denied, 1 for a check, up to the units asked for a lease.
    pub taken: u32,
    /// Units left right after this request.
    pub remaining: u32,
    /// When denied: how long until one unit is free. Zero when allowed.
    pub retry_after: Duration,
    /// How long until the quota is whole again (also the state key's expiry).
    pub reset: Duration,
}

impl Keys {
    /// The GCRA state of the API key whose id is `key_id` ([`super::key_id`]).
    pub fn quota(&self, key_id: &str) -> String {
        self.tag("q", &[key_id])
    }
}

/// The Redis implementation of [`Quotas`]: one quota per API key for the whole fleet, on the
/// one GCRA script (`super::gcra`). A call takes one unit ([`Fleet::quota_check`]) or leases
/// several at once ([`Fleet::quota_lease`]).
impl Fleet {
    /// Takes one unit of `key_id`'s quota (`per_minute` units a minute, at most `burst` at
    /// once), shared by every replica. `None`: Redis unavailable, use the local limiter.
    /// `key_id` must come from [`super::key_id`], never the key itself.
    pub async fn quota_check(
        &self,
        key_id: &str,
        per_minute: u32,
        burst: u32,
    ) -> Option<QuotaDecision> {
        self.quota_lease(key_id, per_minute, burst, 1).await
    }

    /// Takes up to `want` units of `key_id`'s quota at once (as many as the bucket holds, at
    /// least one, or none: then `allowed` is false), in one call. The units are the fleet's
    /// from then on whether or not the caller spends them.
    pub async fn quota_lease(
        &self,
        key_id: &str,
        per_minute: u32,
        burst: u32,
        want: u32,
    ) -> Option<QuotaDecision> {
        let interval_us = (60_000_000 / u64::from(per_minute.max(1))).max(1);
        let burst = burst.max(1);
        let key = self.keys()?.quota(key_id);
        let reply = self
            .gcra("quota", key, interval_us, burst, want, Duration::ZERO)
            .await?;
        let us = |v: i64| Duration::from_micros(u64::try_from(v).unwrap_or(0));
        let taken = u32::try_from(reply.0.max(0)).unwrap_or(0).min(want.max(1));
        Some(QuotaDecision {
            allowed: taken > 0,
            taken,
            remaining: u32::try_from(reply.1.max(0)).unwrap_or(u32::MAX).min(burst),
            retry_after: us(reply.2),
            reset: us(reply.3),
        })
    }
}
