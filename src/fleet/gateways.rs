//! How many fresh sessions of each gateway the platform refused in a row: the one count that
//! decides whether a provider's gateway rests (its whole pool is refused) or only the session
//! that met a block is retired. One type, two implementations: the replica's own count, and
//! with Redis the fleet's (a fleet that meets a refused pool on every replica counts once, and
//! one replica's success clears it for all), the replica's own answering whenever Redis cannot
//! be used.
//!
//! Sessions themselves are never shared: each replica draws its own random session ids, so a
//! retired session is never asked again by anyone, and no session id (nor the gateway's
//! credentials) reaches Redis. A gateway is named by its position in its list.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use redis::Script;

use super::keys::Keys;
use super::{Fleet, expiry_ms};

static REFUSED: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/refused.lua")));

/// The in-a-row refusal counts of the gateways of one scope (a platform), for the fleet when
/// the handle is on Redis.
#[derive(Debug)]
pub struct GatewayRefusals {
    fleet: Fleet,
    scope: &'static str,
    /// How long a count outlives its last refusal: a pool refused that long ago says nothing
    /// about now.
    keep: Duration,
    /// Each gateway's count by this replica's record (proxy positions that are not gateways
    /// are never counted).
    counts: Vec<AtomicU32>,
}

impl GatewayRefusals {
    /// No refusal yet for any of the `count` proxies of `scope`; a count lasts `keep` after
    /// its last refusal in the fleet.
    pub fn new(fleet: &Fleet, scope: &'static str, count: usize, keep: Duration) -> Self {
        Self {
            fleet: fleet.clone(),
            scope,
            keep,
            counts: (0..count).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// One more fresh session of gateway `index` was refused: how many in a row now (the
    /// fleet's count with Redis, else this replica's).
    pub async fn refused(&self, index: usize) -> u32 {
        let local = self
            .counts
            .get(index)
            .map_or(1, |c| c.fetch_add(1, Ordering::Relaxed).saturating_add(1));
        match self
            .fleet
            .gateway_refused(self.scope, index, self.keep)
            .await
        {
            Some(shared) => shared.max(1),
            None => local,
        }
    }

    /// A session of gateway `index` answered: the run of refusals is over, here and for the
    /// fleet.
    pub async fn cleared(&self, index: usize) {
        if let Some(count) = self.counts.get(index) {
            count.store(0, Ordering::Relaxed);
        }
        let _ = self.fleet.gateway_cleared(self.scope, index).await;
    }
}

impl Keys {
    /// The refusal count of gateway `index` of `scope` (a position, never a URL or session).
    pub fn gateway_refusals(&self, scope: &str, index: usize) -> String {
        format!("{}:{index}", self.tag("g", &[scope]))
    }
}

/// The Redis implementation of [`GatewayRefusals`].
impl Fleet {
    /// Adds one to the refusal count of gateway `index` of `scope`, kept `keep` after this
    /// refusal: the count now. `None`: Redis unavailable.
    pub async fn gateway_refused(&self, scope: &str, index: usize, keep: Duration) -> Option<u32> {
        let key = self.keys()?.gateway_refusals(scope, index);
        let count: i64 = self
            .run("gateway_refused", |mut conn| async move {
                REFUSED
                    .key(key)
                    .arg(expiry_ms(keep))
                    .invoke_async(&mut conn)
                    .await
            })
            .await?;
        Some(u32::try_from(count).unwrap_or(u32::MAX))
    }

    /// Clears the refusal count of gateway `index` of `scope`. `None`: Redis unavailable.
    pub async fn gateway_cleared(&self, scope: &str, index: usize) -> Option<()> {
        let key = self.keys()?.gateway_refusals(scope, index);
        let _: i64 = self
            .run("gateway_cleared", |mut conn| async move {
                redis::cmd("DEL").arg(key).query_async(&mut conn).await
            })
            .await?;
        Some(())
    }
}
