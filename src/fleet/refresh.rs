//! Background refreshes for the fleet as a whole: the limit of one refresh per name per second,
//! whichever replica starts it and whatever its memory holds. (The share of each platform's
//! outbound budget they draw from is a [`super::budget::Budget`].)
//!
//! [`RefreshLimits`] is the seam. On Redis the limit is the fleet's (`SET NX PX` on the name's
//! key), and it lives there and not on an entry: a replica without memory (`cache.max_bytes =
//! 0`) rebuilds the entry from Redis on every lookup, and would otherwise start a refresh on
//! each. Without Redis, or whenever it cannot be used, every claim is granted: the replica's
//! own limit, on the entry it serves (`crate::cache`), has already held the refresh to one a
//! second (a replica without memory and without Redis serves no entry, so starts no refresh).

use std::time::Duration;

use super::keys::Keys;
use super::{Fleet, expiry_ms};

/// One background refresh per name per period for the fleet (see the module docs).
#[derive(Clone, Debug)]
pub struct RefreshLimits {
    fleet: Fleet,
    every: Duration,
}

impl RefreshLimits {
    /// At most one refresh of a name per `every`, for the replicas of `fleet`.
    pub fn new(fleet: &Fleet, every: Duration) -> Self {
        Self {
            fleet: fleet.clone(),
            every,
        }
    }

    /// Claims the right to start a background refresh of `name` on `platform` now: false
    /// when a refresh of it started in the fleet less than the period ago.
    pub async fn claim(&self, platform: &str, name: &str) -> bool {
        self.fleet.refresh_claim(platform, name, self.every).await != Some(false)
    }
}

impl Keys {
    /// The refresh limit of one name: in the name's slot, next to its entry.
    pub fn refresh_limit(&self, platform: &str, name: &str) -> String {
        format!("{}:f", self.name_tag(platform, name))
    }
}

impl Fleet {
    /// Claims the right to start a background refresh of `name` on `platform` for the next
    /// `every` (`SET NX PX`): `Some(true)` this replica refreshes it, `Some(false)` a refresh
    /// of it started in the fleet less than `every` ago, `None` no Redis. The Redis
    /// implementation of [`RefreshLimits`].
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
