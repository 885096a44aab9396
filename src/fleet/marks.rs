//! A mark that lasts one rest: what the breaker ([`super::breaker`]) and the proxy rests
//! ([`super::rests`]) set for every replica (`scripts/rest.lua`, which keeps a longer rest),
//! and how long one has left (a `PTTL` read as a rest).

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use super::{Fleet, expiry_ms};

static REST: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("scripts/rest.lua")));

impl Fleet {
    /// Marks `key` as resting for `rest` (a longer rest already marked is kept).
    pub(super) async fn mark_resting(
        &self,
        op: &'static str,
        key: String,
        rest: Duration,
    ) -> Option<()> {
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
pub(super) fn remaining(pttl_ms: i64) -> Option<Duration> {
    u64::try_from(pttl_ms)
        .ok()
        .filter(|&ms| ms > 0)
        .map(Duration::from_millis)
}
