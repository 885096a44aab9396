//! Background refreshes for the fleet as a whole: the share of each platform's outbound budget
//! they draw from (a [`super::budget::Budget`]), a second budget next to the
//! outbound one, so that the share holds for the fleet; and the limit of one refresh per name
//! per second, whichever replica starts it and whatever its memory holds.

use std::time::Duration;

use super::{Fleet, Reservation, expiry_ms};

impl Fleet {
    /// Reserves the next slot of `platform`'s refresh share (`rps` a second, `burst` at once)
    /// if it comes within `max_wait` (a refresh takes one only when it is free now: zero), as
    /// [`Fleet::outbound_reserve`] does for the whole budget. `None`: Redis unavailable, the
    /// replica's own share stands in.
    pub async fn refresh_reserve(
        &self,
        platform: &str,
        rps: f64,
        burst: u32,
        max_wait: Duration,
    ) -> Option<Reservation> {
        let key = self.keys()?.refresh_share(platform);
        self.reserve_slot("refresh_share", key, rps, burst, max_wait)
            .await
    }
}

impl Fleet {
    /// Claims the right to start a background refresh of `name` on `platform` for the next
    /// `every` (`SET NX PX`): `Some(true)` this replica refreshes it, `Some(false)` a refresh
    /// of it started in the fleet less than `every` ago, `None` no Redis (the replica's own
    /// limit, on its stored entry, is then the only one).
    ///
    /// The limit lives here and not on an entry: a replica without memory (`cache.max_bytes =
    /// 0`) rebuilds the entry from Redis on every lookup, and would otherwise start a refresh
    /// on each.
    pub async fn refresh_claim(&self, platform: &str, name: &str, every: Duration) -> Option<bool> {
        let key = self.keys()?.refresh_limit(platform, name);
        let set: Option<String> = self
            .run("refresh_claim", |mut conn| async move {
                redis::cmd("SET")
                    .arg(key)
                    .arg(1)
                    .arg("NX")
                    .arg("PX")
                    .arg(expiry_ms(every))
                    .query_async(&mut conn)
                    .await
            })
            .await?;
        Some(set.is_some())
    }
}
