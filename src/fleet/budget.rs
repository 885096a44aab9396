//! A budget of requests the fleet shares: a platform's outbound budget, or its share for
//! background refreshes. One type, two implementations: GCRA on Redis (the one script, on
//! Redis's clock, every replica's requests spaced together), and the replica's own limiter,
//! which stands in whenever the handle is local or Redis cannot be used.

use std::num::NonZeroU32;
use std::time::Duration;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use tokio::time::Instant;

use super::{Fleet, Reservation};

/// Which of a platform's budgets this is: the key it has in Redis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purse {
    /// Every request to the platform.
    Outbound,
    /// The share of it background refreshes may use (`cache.refresh_share`).
    RefreshShare,
}

/// One budget: `per_second` requests a second, `burst` at once, for the fleet when the handle
/// is on Redis, for this replica otherwise.
#[derive(Debug)]
pub struct Budget {
    fleet: Fleet,
    platform: &'static str,
    purse: Purse,
    per_second: f64,
    burst: u32,
    local: DefaultDirectRateLimiter,
}

impl Budget {
    /// `platform`'s budget `purse` of `per_second` (above 0) with `burst` at once (at least 1),
    /// shared through `fleet`.
    pub fn new(
        fleet: &Fleet,
        platform: &'static str,
        purse: Purse,
        per_second: f64,
        burst: u32,
    ) -> Self {
        let burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
        let period = Duration::from_secs_f64(1.0 / per_second.max(f64::MIN_POSITIVE));
        let quota = Quota::with_period(period)
            .unwrap_or(Quota::per_second(NonZeroU32::MIN))
            .allow_burst(burst);
        Self {
            fleet: fleet.clone(),
            platform,
            purse,
            per_second,
            burst: burst.get(),
            local: RateLimiter::direct(quota),
        }
    }

    /// Takes one request's slot, waiting until `deadline` at the most: `Ok` once it may go;
    /// `Err(Some(wait))` when the fleet's next slot is `wait` away, beyond the deadline
    /// (nothing taken); `Err(None)` when the replica's own budget had none by then.
    pub async fn take(&self, deadline: Instant) -> Result<(), Option<Duration>> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.reserve(left).await {
            Some(Reservation::Wait(wait)) => {
                tokio::time::sleep(wait).await;
                return Ok(());
            }
            Some(Reservation::TooLong(wait)) => return Err(Some(wait)),
            // No Redis, or it cannot be used: the replica's own budget stands in.
            None => {}
        }
        tokio::time::timeout_at(deadline, self.local.until_ready())
            .await
            .map_err(|_| None)
    }

    /// Takes one request's slot if one is free now (a background refresh waits for nothing).
    pub async fn take_now(&self) -> bool {
        match self.reserve(Duration::ZERO).await {
            // Reserved with no wait: the budget had room at once.
            Some(Reservation::Wait(_)) => true,
            Some(Reservation::TooLong(_)) => false,
            None => self.local.check().is_ok(),
        }
    }

    /// The fleet's reservation; `None` without Redis.
    async fn reserve(&self, max_wait: Duration) -> Option<Reservation> {
        let keys = self.fleet.keys()?;
        let (op, key) = match self.purse {
            Purse::Outbound => ("outbound", keys.outbound(self.platform)),
            Purse::RefreshShare => ("refresh_share", keys.refresh_share(self.platform)),
        };
        self.fleet
            .reserve_slot(op, key, self.per_second, self.burst, max_wait)
            .await
    }
}
