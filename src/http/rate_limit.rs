//! The per-key quota: GCRA (governor) keyed by [`KeyId`], with IETF `RateLimit` headers.
//!
//! Headers follow draft-ietf-httpapi-ratelimit-headers: `RateLimit-Policy: "per-key";q=N;w=60`
//! states the quota, and `RateLimit: "per-key";r=R;t=T` the units left and the seconds until the
//! quota is whole again. Because the limiter's keys are configured key ids, its memory is
//! bounded by the number of keys, whatever callers send.

use std::num::NonZeroU32;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use crate::config::RateLimit;
use crate::error::{ApiError, retry_after_secs};
use crate::http::auth::KeyId;
use crate::state::AppState;

/// The `RateLimit` response header.
pub static RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");
/// The `RateLimit-Policy` response header.
pub static RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");

/// The limiter and its fixed policy header.
#[derive(Debug)]
pub struct KeyLimiter {
    limiter:
        RateLimiter<KeyId, DefaultKeyedStateStore<KeyId>, DefaultClock, StateInformationMiddleware>,
    policy: HeaderValue,
    burst: u32,
    interval: Duration,
}

impl KeyLimiter {
    /// Builds the limiter from `[rate_limit]`.
    pub fn new(settings: &RateLimit) -> Self {
        let per_minute = NonZeroU32::new(settings.per_key_per_minute).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(settings.burst).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::per_minute(per_minute).allow_burst(burst);
        let policy = format!("\"per-key\";q={per_minute};w=60");
        Self {
            limiter: RateLimiter::keyed(quota).with_middleware::<StateInformationMiddleware>(),
            policy: HeaderValue::from_str(&policy)
                .unwrap_or(HeaderValue::from_static("\"per-key\"")),
            burst: burst.get(),
            interval: quota.replenish_interval(),
        }
    }

    /// Takes one unit for `key`: `Ok(header)` with the `RateLimit` value, or the 429 error.
    fn check(&self, key: KeyId) -> Result<HeaderValue, (ApiError, HeaderValue)> {
        match self.limiter.check_key(&key) {
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

/// Middleware (after [`crate::http::auth::require_key`]): spends one unit of the caller's quota.
pub async fn limit_per_key(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let Some(key) = request.extensions().get::<KeyId>().copied() else {
        return ApiError::Unauthorized.into_response();
    };
    let limiter = state.limiter();
    let (mut response, header) = match limiter.check(key) {
        Ok(header) => (next.run(request).await, header),
        Err((error, header)) => (error.into_response(), header),
    };
    let headers = response.headers_mut();
    headers.insert(RATELIMIT_POLICY.clone(), limiter.policy.clone());
    headers.insert(RATELIMIT.clone(), header);
    response
}
