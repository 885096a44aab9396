//! Background refreshes for the fleet as a whole: the limit of one refresh per name per second,
//! whichever replica starts it and whatever its memory holds. (The share of each platform's
//! outbound budget they draw from is a [`super::budget::Budget`].)

use std::time::Duration;

use super::{Fleet, expiry_ms};

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
