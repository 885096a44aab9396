//! The canary's share of the fleet: one round per interval for all replicas (a lease any
//! replica may take, `SET NX PX`), and the verdicts of the last round, which the replica that
//! ran it publishes and every other one reads once per interval, so that every replica orders
//! its lookups' sources, answers `/status` and exports the canary's metrics alike.
//!
//! [`Rounds`] is the seam: each wake-up takes a [`Turn`], which says whether this replica runs
//! the round, gives the fleet's last board to adopt first, and publishes this replica's board
//! after. Without Redis, or whenever it cannot be used, every turn is this replica's alone:
//! it runs its round, has nothing to adopt and publishes nothing. The calls on [`Fleet`] here
//! are its Redis implementation.
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
/// How long a published board lives, in intervals: a fleet whose rounds stopped is seen as
/// stale (an alert), and its last board is gone after this.
const SHARED_FOR_INTERVALS: u32 = 3;

static SET: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/canary_set.lua")));
static GET: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/canary_get.lua")));

/// The canary's rounds for the fleet: whose turn each interval's round is, and the board the
/// fleet shares (see the module docs).
#[derive(Clone, Debug)]
pub struct Rounds {
    fleet: Fleet,
    /// This replica's name in the lease, for whoever reads the key.
    holder: String,
}

/// One interval's turn, from [`Rounds::turn`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Turn(Whose);

/// Who runs an interval's round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Whose {
    /// This replica, for the fleet: it took the round's lease, adopts the fleet's last board
    /// first and publishes its own after.
    Fleet,
    /// Another replica holds the lease: this one adopts the board it publishes.
    Other,
    /// This replica on its own: no Redis, or it cannot be used (then each replica runs its
    /// own rounds, as without a fleet).
    Alone,
}

impl Turn {
    /// Whether this replica runs the round (for the fleet, or for itself alone).
    pub fn is_ours(self) -> bool {
        self.0 != Whose::Other
    }
}

impl Rounds {
    /// The rounds of `fleet`, this replica named `holder` in its lease.
    pub fn new(fleet: &Fleet, holder: String) -> Self {
        Self {
            fleet: fleet.clone(),
            holder,
        }
    }

    /// Takes this `interval`'s turn: the round's lease for one interval, unless a replica
    /// holds it.
    pub async fn turn(&self, interval: Duration) -> Turn {
        Turn(self.fleet.canary_turn(&self.holder, interval).await)
    }

    /// The board the fleet last published, to adopt before a `turn`'s round (or instead of
    /// it); `None` when there is none, or the turn is this replica's alone.
    pub async fn last_board(&self, turn: Turn) -> Option<Vec<u8>> {
        if turn.0 == Whose::Alone {
            return None;
        }
        self.fleet.canary_verdicts().await.flatten()
    }

    /// Publishes the board of a `turn`'s round for the fleet (every `interval`) when the turn
    /// was the fleet's; warns when it could not be.
    pub async fn publish(&self, turn: Turn, board: Vec<u8>, interval: Duration) {
        if turn.0 != Whose::Fleet {
            return;
        }
        let shared_for = interval.saturating_mul(SHARED_FOR_INTERVALS);
        if self.fleet.canary_publish(board, shared_for).await.is_none() {
            tracing::warn!("the canary's verdicts could not be shared through Redis");
        }
    }
}

impl Keys {
    /// The canary's round lease (one tag for the canary's keys: small, read once per
    /// interval).
    pub fn canary_lease(&self) -> String {
        format!("{}:lease", self.tag("c", &[]))
    }

    /// The canary's last verdicts.
    pub fn canary_verdicts(&self) -> String {
        format!("{}:verdicts", self.tag("c", &[]))
    }
}

/// The Redis implementation of [`Rounds`].
impl Fleet {
    /// Takes the canary's round lease for `ttl`, unless a replica holds it, and says whose
    /// turn the round is. `holder` names the replica, for whoever reads the key.
    async fn canary_turn(&self, holder: &str, ttl: Duration) -> Whose {
        let Some(key) = self.keys().map(Keys::canary_lease) else {
            return Whose::Alone;
        };
        let taken = self
            .canary_set("canary_lease", key, holder.as_bytes().to_vec(), ttl, true)
            .await;
        match taken {
            Some(true) => Whose::Fleet,
            Some(false) => Whose::Other,
            None => Whose::Alone,
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
