//! The canary's share of the fleet: one round per interval for all replicas (a lease any
//! replica may take, `SET NX PX`), and the verdicts of the last round, which the replica that
//! ran it publishes and every other one reads once per interval, so that every replica orders
//! its lookups' sources, answers `/status` and exports the canary's metrics alike.
//!
//! The verdicts are opaque bytes here (the canary's own JSON); this layer only bounds their
//! size and lifetime.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use super::keys::Keys;
use super::{Fleet, expiry_ms};

/// The largest verdicts value written or read back (a larger one is not ours: read as none).
pub const MAX_VERDICTS_BYTES: usize = 64 * 1024;

static SET: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/canary_set.lua")));
static GET: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/canary_get.lua")));

/// Who runs this interval's canary round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// This replica, for the fleet: it took the round's lease, adopts the fleet's last board
    /// first and publishes its own after.
    Fleet,
    /// Another replica holds the lease: this one adopts the board it publishes.
    Other,
    /// This replica on its own: no Redis, or it cannot be used (then each replica runs its
    /// own rounds, as without a fleet).
    Alone,
}

impl Fleet {
    /// Takes the canary's round lease for `ttl`, unless a replica holds it, and says whose
    /// turn the round is. `holder` names the replica, for whoever reads the key.
    pub async fn canary_turn(&self, holder: &str, ttl: Duration) -> Turn {
        let Some(key) = self.keys().map(Keys::canary_lease) else {
            return Turn::Alone;
        };
        let taken = self
            .canary_set("canary_lease", key, holder.as_bytes().to_vec(), ttl, true)
            .await;
        match taken {
            Some(true) => Turn::Fleet,
            Some(false) => Turn::Other,
            None => Turn::Alone,
        }
    }

    /// Publishes the canary's last verdicts for `ttl` (refused when larger than
    /// [`MAX_VERDICTS_BYTES`]). `None`: not published (Redis unavailable, or too large).
    pub async fn canary_publish(&self, verdicts: Vec<u8>, ttl: Duration) -> Option<()> {
        if verdicts.len() > MAX_VERDICTS_BYTES {
            return None;
        }
        let key = self.keys()?.canary_verdicts();
        self.canary_set("canary_publish", key, verdicts, ttl, false)
            .await
            .map(|_| ())
    }

    /// The verdicts last published: `Some(None)` none (expired, or not ours), `None` Redis
    /// unavailable.
    pub async fn canary_verdicts(&self) -> Option<Option<Vec<u8>>> {
        let key = self.keys()?.canary_verdicts();
        self.run("canary_verdicts", |mut conn| async move {
            GET.key(key)
                .arg(MAX_VERDICTS_BYTES)
                .invoke_async(&mut conn)
                .await
        })
        .await
    }

    async fn canary_set(
        &self,
        op: &'static str,
        key: String,
        value: Vec<u8>,
        ttl: Duration,
        only_if_absent: bool,
    ) -> Option<bool> {
        let written: i64 = self
            .run(op, |mut conn| async move {
                SET.key(key)
                    .arg(value)
                    .arg(expiry_ms(ttl))
                    .arg(if only_if_absent { "nx" } else { "" })
                    .invoke_async(&mut conn)
                    .await
            })
            .await?;
        Some(written == 1)
    }
}
