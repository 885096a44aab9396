//! One quota per API key for the whole fleet, and the one GCRA script every budget the fleet
//! shares runs on Redis's clock (`scripts/gcra.lua`: a key's quota here, a platform's
//! outbound budget and refresh share in `outbound`).
//!
//! A call takes one unit ([`Fleet::quota_check`]) or leases several at once
//! ([`Fleet::quota_lease`]): a replica that spends them locally (see `crate::quota`) asks Redis
//! once per lease instead of once per request, and the fleet's bucket still counts every unit.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use super::Fleet;

static GCRA: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("scripts/gcra.lua")));

/// What [`Fleet::gcra`] answers: `(taken, remaining, wait_us, reset_us)`.
pub(super) type Gcra = (i64, i64, i64, i64);

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

impl Fleet {
    /// Takes up to `want` units of the budget at `key` (one per `interval_us`, `burst` at
    /// once) that fit within `max_wait`: the one GCRA of the fleet's budgets, in one call.
    pub(super) async fn gcra(
        &self,
        op: &'static str,
        key: String,
        interval_us: u64,
        burst: u32,
        want: u32,
        max_wait: Duration,
    ) -> Option<Gcra> {
        let max_wait_us = super::micros(max_wait);
        self.run(op, |mut conn| async move {
            GCRA.key(key)
                .arg(interval_us)
                .arg(burst.max(1))
                .arg(want.max(1))
                .arg(max_wait_us)
                .invoke_async(&mut conn)
                .await
        })
        .await
    }
}
