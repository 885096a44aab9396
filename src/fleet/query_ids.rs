//! The query ids a platform's own documents taught: the persisted-query ids (`doc_id`) its web
//! app posts, which the platform rotates every few weeks. The configured ids are seeds; an id
//! learned from a page the service read replaces its seed, for every replica, until the query
//! answers "changed" with it (then the seed is back until another id is learned).
//!
//! [`QueryIds`] is the seam. Each replica keeps what it learned or read in memory; on Redis each
//! learned id is kept under `P{d:PLATFORM}:QUERY` as `ID MS FROM` (the id, when it was learned
//! in Unix ms, where: `page`), expiring [`LEARNED_TTL`] after it was learned, and a replica
//! reads it again at most every [`REREAD_EVERY`] while it asks the query. Only digits are ids.
//! The turn to look for new ids after a query answered "changed" is the fleet's:
//! `P{d:PLATFORM}:t:WHAT` (`SET NX PX`), one replica per interval.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::ids::is_id;
use super::keys::Keys;
use super::{Fleet, expiry_ms};

/// How long a learned id is kept after it was learned (the platform rotates ids every few
/// weeks; a page read again teaches it again).
pub const LEARNED_TTL: Duration = Duration::from_secs(7 * 24 * 3600);

/// How often a replica reads the fleet's learned id of a query it asks.
pub const REREAD_EVERY: Duration = Duration::from_secs(5);

/// A query id learned from the platform: what it is, when and where it was learned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Learned {
    /// The id.
    pub id: String,
    /// When it was learned (Unix ms).
    pub at_unix_ms: u64,
    /// Where: the kind of document it was read from (`page`).
    pub from: String,
}

/// One query's state on this replica.
#[derive(Clone, Debug, Default)]
struct Known {
    learned: Option<Learned>,
    /// When the fleet's value was last read (never, at first).
    read_at: Option<Instant>,
}

/// The query ids of one platform (see the module docs).
#[derive(Debug)]
pub struct QueryIds {
    fleet: Fleet,
    platform: &'static str,
    /// Each query's seed, by the query's name.
    seeds: Vec<(&'static str, String)>,
    known: Mutex<HashMap<&'static str, Known>>,
    /// When this replica last took each kind of rediscovery turn (without Redis, the fleet is
    /// this replica).
    turns: Mutex<HashMap<&'static str, Instant>>,
}

impl QueryIds {
    /// The ids of `platform`'s queries, seeded with `seeds` (query name, configured id).
    pub fn new(fleet: &Fleet, platform: &'static str, seeds: Vec<(&'static str, String)>) -> Self {
        Self {
            fleet: fleet.clone(),
            platform,
            seeds,
            known: Mutex::new(HashMap::new()),
            turns: Mutex::new(HashMap::new()),
        }
    }

    fn seed(&self, query: &str) -> String {
        self.seeds
            .iter()
            .find(|(name, _)| *name == query)
            .map(|(_, id)| id.clone())
            .unwrap_or_default()
    }

    fn known(&self) -> std::sync::MutexGuard<'_, HashMap<&'static str, Known>> {
        self.known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The id to post `query` with: the one learned (here or by any replica), else the seed.
    pub async fn id(&self, query: &'static str) -> String {
        let reread = {
            let known = self.known();
            known
                .get(query)
                .and_then(|k| k.read_at)
                .is_none_or(|at| at.elapsed() >= REREAD_EVERY)
        };
        if reread && let Some(fleet) = self.fleet.query_id_get(self.platform, query).await {
            let mut known = self.known();
            let entry = known.entry(query).or_default();
            entry.read_at = Some(Instant::now());
            // The fleet forgot it (expired, dropped as changed, Redis emptied): what this
            // replica learned itself stays until it answers "changed".
            if fleet.is_some() {
                entry.learned = fleet;
            }
        }
        let known = self.known();
        known
            .get(query)
            .and_then(|k| k.learned.as_ref())
            .map_or_else(|| self.seed(query), |l| l.id.clone())
    }

    /// Keeps `id` as `query`'s id, learned from a document of kind `from`; false when it was
    /// already the id in use (or is no id).
    pub async fn learn(&self, query: &'static str, id: &str, from: &'static str) -> bool {
        if !is_id(id) {
            return false;
        }
        let learned = Learned {
            id: id.to_owned(),
            at_unix_ms: super::entry::now_unix_ms(),
            from: from.to_owned(),
        };
        {
            let mut known = self.known();
            let entry = known.entry(query).or_default();
            if entry.learned.as_ref().is_some_and(|l| l.id == id) {
                return false;
            }
            if entry.learned.is_none() && self.seed(query) == id {
                return false;
            }
            entry.learned = Some(learned.clone());
        }
        self.fleet
            .query_id_put(self.platform, query, &learned)
            .await;
        true
    }

    /// `query` answered "changed" when posted with `id`: a learned id that did is dropped,
    /// here and for the fleet, so the seed is posted again until another id is learned. True
    /// when `id` was the seed (nothing learned is left to drop).
    pub async fn changed(&self, query: &'static str, id: &str) -> bool {
        let dropped = {
            let mut known = self.known();
            let entry = known.entry(query).or_default();
            let was_learned = entry.learned.as_ref().is_some_and(|l| l.id == id);
            if was_learned {
                entry.learned = None;
            }
            was_learned
        };
        if dropped {
            self.fleet.query_id_drop(self.platform, query, id).await;
        }
        !dropped
    }

    /// Takes the fleet's turn to look for new ids in the way called `what` (`page`,
    /// `bundles`): at most one replica per `every`. With Redis, `SET NX PX`; without it (or
    /// Redis unusable), this replica's own clock.
    pub async fn claim_turn(&self, what: &'static str, every: Duration) -> bool {
        if let Some(taken) = self.fleet.query_turn(self.platform, what, every).await {
            return taken;
        }
        let mut turns = self
            .turns
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match turns.get(what) {
            Some(at) if at.elapsed() < every => false,
            _ => {
                turns.insert(what, Instant::now());
                true
            }
        }
    }

    /// The ids learned so far, by query (for `/status`).
    pub fn learned(&self) -> Vec<(&'static str, Learned)> {
        let known = self.known();
        let mut all: Vec<_> = known
            .iter()
            .filter_map(|(query, k)| k.learned.clone().map(|l| (*query, l)))
            .collect();
        all.sort_by_key(|(query, _)| *query);
        all
    }

    /// Every query's seed and the id in use, by query (for `/status`).
    pub fn seeds(&self) -> &[(&'static str, String)] {
        &self.seeds
    }
}

impl Keys {
    /// The id learned for `query` of `platform`.
    pub fn query_id(&self, platform: &str, query: &str) -> String {
        format!("{}:{query}", self.tag("d", &[platform]))
    }
}

impl Fleet {
    /// Takes `platform`'s turn to rediscover its query ids the way called `what`, for `every`
    /// (`SET NX PX`): whether this replica got it; `None` without Redis.
    pub async fn query_turn(&self, platform: &str, what: &str, every: Duration) -> Option<bool> {
        let key = format!("{}:t:{what}", self.keys()?.tag("d", &[platform]));
        self.claim_turn(key, every).await
    }

    /// Keeps `learned` as `query`'s id for [`LEARNED_TTL`]; `None` without Redis.
    pub async fn query_id_put(&self, platform: &str, query: &str, learned: &Learned) -> Option<()> {
        let key = self.keys()?.query_id(platform, query);
        let value = format!("{} {} {}", learned.id, learned.at_unix_ms, learned.from);
        let _: () = self
            .run("query_id_put", |mut conn| async move {
                redis::cmd("SET")
                    .arg(key)
                    .arg(value)
                    .arg("PX")
                    .arg(expiry_ms(LEARNED_TTL))
                    .query_async(&mut conn)
                    .await
            })
            .await?;
        Some(())
    }

    /// The id the fleet learned for `query`: `Some(None)` none (or a value that is no id),
    /// `None` without Redis.
    pub async fn query_id_get(&self, platform: &str, query: &str) -> Option<Option<Learned>> {
        let key = self.keys()?.query_id(platform, query);
        let value: Option<String> = self
            .run("query_id_get", |mut conn| async move {
                redis::cmd("GET").arg(key).query_async(&mut conn).await
            })
            .await?;
        Some(value.as_deref().and_then(parse_learned))
    }

    /// Drops `query`'s learned id when it is still `id` (another replica may have learned a
    /// newer one meanwhile); `None` without Redis.
    pub async fn query_id_drop(&self, platform: &str, query: &str, id: &str) -> Option<()> {
        let kept = self.query_id_get(platform, query).await?;
        if kept.is_some_and(|l| l.id == id) {
            let key = self.keys()?.query_id(platform, query);
            let _: () = self
                .run("query_id_drop", |mut conn| async move {
                    redis::cmd("DEL").arg(key).query_async(&mut conn).await
                })
                .await?;
        }
        Some(())
    }
}

/// A kept value, `ID MS FROM`; anything else is none.
fn parse_learned(value: &str) -> Option<Learned> {
    let mut parts = value.splitn(3, ' ');
    let id = parts.next().filter(|id| is_id(id))?;
    let at_unix_ms = parts.next()?.parse().ok()?;
    let from = parts
        .next()
        .filter(|f| !f.is_empty() && f.len() <= 16 && f.bytes().all(|b| b.is_ascii_lowercase()))?;
    Some(Learned {
        id: id.to_owned(),
        at_unix_ms,
        from: from.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids() -> QueryIds {
        QueryIds::new(
            &Fleet::local(),
            "photo-share",
            vec![("q", "111".to_owned())],
        )
    }

    #[tokio::test]
    async fn the_seed_until_an_id_is_learned_and_again_once_it_changed() {
        let ids = ids();
        assert_eq!(ids.id("q").await, "111");
        assert!(!ids.learn("q", "111", "page").await, "the seed is no news");
        assert!(ids.learn("q", "222", "page").await);
        assert_eq!(ids.id("q").await, "222");
        assert!(!ids.learn("q", "222", "page").await, "learned once");
        assert_eq!(ids.learned()[0].1.id, "222");
        assert!(!ids.changed("q", "222").await, "a learned id is dropped");
        assert_eq!(ids.id("q").await, "111");
        assert!(ids.changed("q", "111").await, "the seed itself changed");
        for odd in ["", "1a", &"9".repeat(super::super::ids::MAX_ID_LEN + 1)] {
            assert!(!ids.learn("q", odd, "page").await, "{odd:?}");
        }
    }

    #[test]
    fn kept_values_are_read_strictly() {
        assert_eq!(
            parse_learned("222 1700000000000 page"),
            Some(Learned {
                id: "222".into(),
                at_unix_ms: 1_700_000_000_000,
                from: "page".into()
            })
        );
        for odd in ["", "222", "x 1 page", "222 x page", "222 1 ", "222 1 Page!"] {
            assert_eq!(parse_learned(odd), None, "{odd:?}");
        }
    }
}
