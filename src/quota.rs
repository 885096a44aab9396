//! The per-key quota: GCRA (governor) keyed by [`KeyId`], with IETF `RateLimit` headers.
//!
//! Headers follow draft-ietf-httpapi-ratelimit-headers: `RateLimit-Policy: "per-key";q=B;w=W`
//! states what the limiter really allows, the burst `B` and the seconds `W` it takes to refill
//! (`B` × 60 / `per_key_per_minute`; `"per-key";q=20;w=20` by default), and
//! `RateLimit: "per-key";r=R;t=T` the units left and the seconds until the quota is whole
//! again. There is one GCRA state per configured key, indexed by [`KeyId`], so memory is
//! bounded by the number of keys whatever callers send, and a check costs no hashing.
//!
//! In a fleet (`[redis]` set) the same GCRA runs on Redis, on Redis's clock, in one round trip
//! per request, so a key gets one quota from all replicas together and the headers show the
//! fleet's state. When Redis cannot be used the replica's own state answers instead.

use std::num::NonZeroU32;
use std::time::Duration;

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
    fleet: Option<(Fleet, Vec<String>)>,
}

impl KeyLimiter {
    /// Builds the limiter from `[rate_limit]` for the configured `keys`; with a `fleet`, the
    /// quota is the fleet's.
    pub fn new(settings: &RateLimitConfig, keys: &Keys, fleet: Option<Fleet>) -> Self {
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
            fleet: fleet.map(|fleet| (fleet, keys.fleet_ids())),
        }
    }

    /// Takes one unit for `key`: `Ok(header)` with the `RateLimit` value, or the 429 error
    /// with its header.
    pub async fn check(&self, key: KeyId) -> Result<HeaderValue, (ApiError, HeaderValue)> {
        let Some(limiter) = self.per_key.get(key.0 as usize) else {
            // Key ids come from the same configuration; a stray one is not a caller we know.
            return Err((ApiError::Unauthorized, state_header(0, Duration::ZERO)));
        };
        if let Some((fleet, ids)) = &self.fleet
            && let Some(id) = ids.get(key.0 as usize)
            && let Some(d) = fleet.quota_check(id, self.per_minute, self.burst).await
        {
            return if d.allowed {
                Ok(state_header(d.remaining, d.reset))
            } else {
                let wait = d.retry_after;
                Err((
                    ApiError::RateLimited { retry_after: wait },
                    state_header(0, d.reset),
                ))
            };
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

    /// Sets the `RateLimit-Policy` and `RateLimit` headers on a limited route's response.
    pub fn stamp(&self, response: &mut Response, state: HeaderValue) {
        let headers = response.headers_mut();
        headers.insert(RATELIMIT_POLICY.clone(), self.policy.clone());
        headers.insert(RATELIMIT.clone(), state);
    }
}

fn state_header(remaining: u32, reset: Duration) -> HeaderValue {
    let reset = if reset.is_zero() {
        0
    } else {
        retry_after_secs(reset)
    };
    HeaderValue::from_str(&format!("\"per-key\";r={remaining};t={reset}"))
        .unwrap_or(HeaderValue::from_static("\"per-key\""))
}
