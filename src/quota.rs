//! The per-key quota: GCRA (governor) keyed by [`KeyId`], with IETF `RateLimit` headers.
//!
//! Headers follow draft-ietf-httpapi-ratelimit-headers: `RateLimit-Policy: "per-key";q=B;w=W`
//! states what the limiter really allows, the burst `B` and the seconds `W` it takes to refill
//! (`B` × 60 / `per_key_per_minute`; `"per-key";q=20;w=20` by default), and
//! `RateLimit: "per-key";r=R;t=T` the units left and the seconds until the quota is whole
//! again. There is one GCRA state per configured key, indexed by [`KeyId`], so memory is
//! bounded by the number of keys whatever callers send, and a check costs no hashing.
//!
//! In a fleet (`[redis]` set) the same GCRA runs on Redis, on Redis's clock, so a key gets one
//! quota from all replicas together and the headers show the fleet's state. When Redis cannot
//! be used the replica's own state answers instead.
//!
//! # Forced fetches
//!
//! A lookup whose `Cache-Control: max-age`/`no-cache` refuses an answer the cache holds makes
//! the platform answer again: it takes one more unit ([`KeyLimiter::check_forced`]), from the
//! fleet's bucket (through the lease) like any other, so that a key cannot use those
//! directives to send the platform more than its quota allows.
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

use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};

use crate::auth::{KeyId, Keys};
use crate::config::RateLimitConfig;
use crate::error::{ApiError, retry_after_secs};
use crate::fleet::Fleet;
use crate::header_text::{self, Part};

/// The `RateLimit` response header.
pub static RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");
/// The `RateLimit-Policy` response header.
pub static RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");

/// The limiter and its fixed policy header.
#[derive(Debug)]
pub struct KeyLimiter {
    per_key: Vec<RateLimiter<NotKeyed, InMemoryState, DefaultClock, StateInformationMiddleware>>,
    policy: HeaderValue,
    burst: u32,
    per_minute: u32,
    interval: Duration,
    fleet: Option<FleetQuota>,
}

/// How long a lease's units may be spent: units charged to the fleet but unspent after this
/// are lost (the fleet admits fewer), never spent late (it would admit more).
pub const LEASE_LIFETIME: Duration = Duration::from_millis(250);
/// Leases that run out faster than this grow (doubling); ones that last over eight of these
/// shrink (halving).
pub const LEASE_SPAN: Duration = Duration::from_millis(10);
/// The most units one lease takes.
pub const MAX_LEASE: u32 = 256;

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

impl KeyLimiter {
    /// Builds the limiter from `[rate_limit]` for the configured `keys`; on a `fleet` with
    /// Redis, the quota is the fleet's (leased, see the module docs).
    pub fn new(settings: &RateLimitConfig, keys: &Keys, fleet: &Fleet) -> Self {
        let per_minute = NonZeroU32::new(settings.per_key_per_minute).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(settings.burst).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::per_minute(per_minute).allow_burst(burst);
        // GCRA lets `burst` through at once, then refills one unit per interval: the policy
        // states that capacity and the time to refill it whole, so `r` never exceeds `q`, `t`
        // never exceeds `w`, and q/w is the configured sustained rate.
        let window = (quota.replenish_interval() * burst.get())
            .as_secs_f64()
            .ceil() as u64;
        let policy = format!("\"per-key\";q={burst};w={}", window.max(1));
        Self {
            per_key: (0..keys.count())
                .map(|_| RateLimiter::direct(quota).with_middleware::<StateInformationMiddleware>())
                .collect(),
            policy: HeaderValue::from_str(&policy)
                .unwrap_or(HeaderValue::from_static("\"per-key\"")),
            burst: burst.get(),
            per_minute: per_minute.get(),
            interval: quota.replenish_interval(),
            fleet: fleet.is_shared().then(|| {
                let now = Instant::now();
                FleetQuota {
                    fleet: fleet.clone(),
                    ids: keys.fleet_ids(),
                    leases: (0..keys.count())
                        .map(|_| Mutex::new(Lease::new(now)))
                        .collect(),
                    max_lease: (burst.get() / 8).clamp(1, MAX_LEASE),
                }
            }),
        }
    }

    /// Takes one unit for `key`: `Ok(header)` with the `RateLimit` value, or the 429 error
    /// with its header.
    pub async fn check(&self, key: KeyId) -> Result<HeaderValue, (ApiError, HeaderValue)> {
        let Some(limiter) = self.per_key.get(key.0 as usize) else {
            // Key ids come from the same configuration; a stray one is not a caller we know.
            return Err((ApiError::Unauthorized, state_header(0, Duration::ZERO)));
        };
        if let Some(fleet) = &self.fleet
            && let Some(decided) = self.fleet_check(fleet, key.0 as usize).await
        {
            return decided;
        }
        match limiter.check() {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity();
                let refill = self.interval * (self.burst - remaining.min(self.burst));
                Ok(state_header(remaining, refill))
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                Err((
                    ApiError::RateLimited { retry_after: wait },
                    state_header(0, wait),
                ))
            }
        }
    }

    /// The fleet's decision for key `index`: from its lease here, or from Redis (leasing a few
    /// units when the key is busy). `None`: Redis unavailable, the local limiter decides.
    async fn fleet_check(
        &self,
        fleet: &FleetQuota,
        index: usize,
    ) -> Option<Result<HeaderValue, (ApiError, HeaderValue)>> {
        let (id, lease) = (fleet.ids.get(index)?, fleet.leases.get(index)?);
        let want = match lock(lease).take(Instant::now()) {
            Local::Spent { remaining, reset } => {
                return Some(Ok(state_header(remaining.min(self.burst), reset)));
            }
            Local::Refused { wait, reset } => {
                return Some(Err(refused(wait, reset)));
            }
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
            return Some(Err(refused(d.retry_after, d.reset)));
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
        Some(Ok(state_header(remaining.min(self.burst), d.reset)))
    }

    /// Takes the extra unit of a fetch `key`'s caller forces (see the module docs): the same
    /// as [`KeyLimiter::check`], a unit more of the same bucket.
    pub async fn check_forced(&self, key: KeyId) -> Result<HeaderValue, (ApiError, HeaderValue)> {
        self.check(key).await
    }

    /// Sets the `RateLimit-Policy` and `RateLimit` headers on a limited route's response.
    pub fn stamp(&self, response: &mut Response, state: HeaderValue) {
        let headers = response.headers_mut();
        headers.insert(RATELIMIT_POLICY.clone(), self.policy.clone());
        headers.insert(RATELIMIT.clone(), state);
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

fn refused(wait: Duration, reset: Duration) -> (ApiError, HeaderValue) {
    (
        ApiError::RateLimited { retry_after: wait },
        state_header(0, reset),
    )
}

fn state_header(remaining: u32, reset: Duration) -> HeaderValue {
    let reset = if reset.is_zero() {
        0
    } else {
        retry_after_secs(reset)
    };
    header_text::joined(&[
        Part::Text("\"per-key\";r="),
        Part::Number(remaining.into()),
        Part::Text(";t="),
        Part::Number(reset),
    ])
    .unwrap_or(HeaderValue::from_static("\"per-key\""))
}
