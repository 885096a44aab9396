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
//! quota from all replicas together and the headers show the fleet's state; a replica leases a
//! few units at once instead of asking Redis for every request. When Redis cannot be used the
//! replica's own state answers instead. Both live in one type, [`crate::fleet::quota::Quotas`];
//! this module turns its answers into the headers and the 429.
//!
//! # Forced fetches
//!
//! A lookup whose `Cache-Control: max-age`/`no-cache` refuses an answer the cache holds makes
//! the platform answer again: it takes one more unit ([`KeyLimiter::check_forced`]), from the
//! fleet's bucket (through the lease) like any other, so that a key cannot use those
//! directives to send the platform more than its quota allows.
//!

use std::num::NonZeroU32;
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;

use crate::auth::{KeyId, Keys};
use crate::config::RateLimitConfig;
use crate::error::{ApiError, AuthFailure, retry_after_secs};
use crate::fleet::Fleet;
use crate::fleet::quota::{Checked, Quotas};
use crate::header_text::{self, Part};

/// The `RateLimit` response header.
pub static RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");
/// The `RateLimit-Policy` response header.
pub static RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");

/// The limiter and its fixed policy header.
#[derive(Debug)]
pub struct KeyLimiter {
    quotas: Quotas,
    policy: HeaderValue,
}

impl KeyLimiter {
    /// Builds the limiter from `[rate_limit]` for the configured `keys`; on a `fleet` with
    /// Redis, the quota is the fleet's (leased, see [`crate::fleet::quota`]).
    pub fn new(settings: &RateLimitConfig, keys: &Keys, fleet: &Fleet) -> Self {
        let per_minute = NonZeroU32::new(settings.per_key_per_minute).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(settings.burst).unwrap_or(NonZeroU32::MIN);
        let quotas = Quotas::new(fleet, keys.fleet_ids(), per_minute, burst);
        // GCRA lets `burst` through at once, then refills one unit per interval: the policy
        // states that capacity and the time to refill it whole, so `r` never exceeds `q`, `t`
        // never exceeds `w`, and q/w is the configured sustained rate.
        let window = (quotas.interval() * burst.get()).as_secs_f64().ceil() as u64;
        let policy = format!("\"per-key\";q={burst};w={}", window.max(1));
        Self {
            quotas,
            policy: HeaderValue::from_str(&policy)
                .unwrap_or(HeaderValue::from_static("\"per-key\"")),
        }
    }

    /// Takes one unit for `key`: `Ok(header)` with the `RateLimit` value, or the 429 error
    /// with its header.
    pub async fn check(&self, key: KeyId) -> Result<HeaderValue, (ApiError, HeaderValue)> {
        match self.quotas.take(key.0 as usize).await {
            Some(Checked::Allowed { remaining, reset }) => Ok(state_header(remaining, reset)),
            Some(Checked::Refused { wait, reset }) => Err((
                ApiError::RateLimited { retry_after: wait },
                state_header(0, reset),
            )),
            // Key ids come from the same configuration; a stray one is not a caller we know.
            None => Err((
                ApiError::Unauthorized(AuthFailure::Unknown),
                state_header(0, Duration::ZERO),
            )),
        }
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
