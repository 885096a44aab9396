//! What the fleet sends each platform: one outbound budget (reserve-then-wait), one
//! breaker, and proxy rests, shared by every replica.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use super::{Fleet, expiry_ms};

/// The most proxies one [`Fleet::proxy_resting`] call asks about.
pub const MAX_PROXIES: usize = 1024;

static REST: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("scripts/rest.lua")));
static RESTING: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/resting.lua")));

/// The answer to [`Fleet::outbound_reserve`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reservation {
    /// A send slot is reserved: sleep this long, then send.
    Wait(Duration),
    /// The next slot is this far away, beyond the given maximum: nothing was reserved; shed.
    TooLong(Duration),
}

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
    /// comes within `max_wait`: every outbound budget of the fleet (the one GCRA script).
    pub(super) async fn reserve_slot(
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

    /// Opens `platform`'s breaker for every replica for `rest` (a longer open rest is kept).
    pub async fn breaker_open(&self, platform: &str, rest: Duration) -> Option<()> {
        let key = self.keys()?.breaker(platform);
        self.mark_resting("breaker", key, rest).await
    }

    /// How long `platform`'s breaker stays open: `Some(None)` closed, `None` Redis unavailable.
    pub async fn breaker_open_for(&self, platform: &str) -> Option<Option<Duration>> {
        let key = self.keys()?.breaker(platform);
        let left: i64 = self
            .run("breaker", |mut conn| async move {
                redis::cmd("PTTL").arg(key).query_async(&mut conn).await
            })
            .await?;
        Some(remaining(left))
    }

    /// Rests proxy `index` of `scope` (e.g. a platform) for every replica for `rest`. A proxy
    /// is named by its position only, never by its URL or credentials.
    pub async fn proxy_rest(&self, scope: &str, index: usize, rest: Duration) -> Option<()> {
        let key = self.keys()?.proxy(scope, index);
        self.mark_resting("proxy_rest", key, rest).await
    }

    /// For each of `indexes` (at most [`MAX_PROXIES`]), how long that proxy of `scope` still
    /// rests (`None` = usable). One call for all. `None`: Redis unavailable.
    pub async fn proxy_resting(
        &self,
        scope: &str,
        indexes: &[usize],
    ) -> Option<Vec<Option<Duration>>> {
        if indexes.is_empty() {
            return Some(Vec::new());
        }
        if indexes.len() > MAX_PROXIES {
            return None;
        }
        let names = self.keys()?;
        let keys: Vec<String> = indexes.iter().map(|&i| names.proxy(scope, i)).collect();
        let left: Vec<i64> = self
            .run("proxy_resting", |mut conn| async move {
                let mut call = RESTING.prepare_invoke();
                for key in keys {
                    call.key(key);
                }
                call.invoke_async(&mut conn).await
            })
            .await?;
        Some(left.into_iter().map(remaining).collect())
    }

    async fn mark_resting(&self, op: &'static str, key: String, rest: Duration) -> Option<()> {
        let _: i64 = self
            .run(op, |mut conn| async move {
                REST.key(key)
                    .arg(expiry_ms(rest))
                    .invoke_async(&mut conn)
                    .await
            })
            .await?;
        Some(())
    }
}

/// A `PTTL` answer as a rest: positive = that many ms left; absent, expired or without expiry
/// (not ours) = not resting.
fn remaining(pttl_ms: i64) -> Option<Duration> {
    u64::try_from(pttl_ms)
        .ok()
        .filter(|&ms| ms > 0)
        .map(Duration::from_millis)
}
