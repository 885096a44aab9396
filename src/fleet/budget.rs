//! A budget of requests the fleet shares: a platform's outbound budget, or its share for
//! background refreshes. One type, two implementations: GCRA on Redis (the one script, on
//! Redis's clock, every replica's requests spaced together), and the replica's own limiter,
//! which stands in whenever the handle is local or Redis cannot be used.

use std::num::NonZeroU32;
use std::time::Duration;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use tokio::time::Instant;

use super::Fleet;
use super::keys::Keys;

/// The answer to [`Fleet::outbound_reserve`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reservation {
    /// A send slot is reserved: sleep this long, then send.
    Wait(Duration),
    /// The next slot is this far away, beyond the given maximum: nothing was reserved; shed.
    TooLong(Duration),
}

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

impl Keys {
    /// The outbound budget of `platform`.
    pub fn outbound(&self, platform: &str) -> String {
        self.tag("o", &[platform])
    }

    /// The refresh share of `platform`'s budget: its own key, in the budget's slot.
    pub fn refresh_share(&self, platform: &str) -> String {
        format!("{}:r", self.outbound(platform))
    }
}

/// The Redis implementation of [`Budget`]: the one GCRA script (`super::gcra`), reserving a
/// slot that the caller then waits for.
impl Fleet {
    /// Reserves the fleet's next send slot to `platform`, spacing all replicas' requests at
    /// `rps` a second with at most `burst` at once, on Redis's clock. `None`: Redis
    /// unavailable, use the replica's own budget.
    pub async fn outbound_reserve(
        &self,
        platform: &str,
        rps: f64,
        burst: u32,
        max_wait: Duration,
    ) -> Option<Reservation> {
        let key = self.keys()?.outbound(platform);
        self.reserve_slot("outbound", key, rps, burst, max_wait)
            .await
    }

    /// Reserves the next slot of the budget at `key` (`rps` a second, `burst` at once) if it
    /// comes within `max_wait`: every outbound budget of the fleet.
    async fn reserve_slot(
        &self,
        op: &'static str,
        key: String,
        rps: f64,
        burst: u32,
        max_wait: Duration,
    ) -> Option<Reservation> {
        let interval_us = if rps.is_finite() && rps > 0.0 {
            ((1_000_000.0 / rps).round() as u64).max(1)
        } else {
            1_000_000
        };
        let (taken, _, wait_us, _) = self.gcra(op, key, interval_us, burst, 1, max_wait).await?;
        let wait = Duration::from_micros(u64::try_from(wait_us).unwrap_or(0));
        Some(if taken >= 1 {
            Reservation::Wait(wait)
        } else {
            Reservation::TooLong(wait)
        })
    }
}
