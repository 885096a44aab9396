//! The one GCRA script every budget the fleet shares runs on Redis's clock
//! (`scripts/gcra.lua`): a key's quota ([`super::quota`]), a platform's outbound budget and
//! its refresh share ([`super::budget`]).

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use super::Fleet;

static GCRA: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("scripts/gcra.lua")));

/// What [`Fleet::gcra`] answers: `(taken, remaining, wait_us, reset_us)`.
pub(super) type Gcra = (i64, i64, i64, i64);

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
