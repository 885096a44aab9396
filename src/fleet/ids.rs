//! The platform ids learned for names: what a source asked by id (the photo-share profile
//! query, by the user's pk) needs, remembered from an earlier answer about the name, so that
//! a name seen once can be looked up again when the sources asked by name refuse.
//!
//! [`KnownIds`] is the seam. Each replica keeps the ids it learned in a bounded memory (an
//! LRU of [`MAX_LOCAL`] names); on Redis the id is also kept next to the name's cache entry
//! (`P{n:PLATFORM:NAME}:i`, same slot), so an id any replica learned serves every replica.
//! Both keep an id for its [`life`]: as long as the fleet's cache keeps the name's profile (its
//! stale record, `ttl + max_stale`, with the shipped settings), never longer, so that under
//! Redis's `noeviction` the ids cannot fill the memory the profiles need (about 190 bytes per
//! name found in that life, beside the profile's two keys). An id is written to Redis only
//! when this replica did not already hold the same one written within the last half of its
//! life: a name looked up again and again costs at most one Redis write per half life, and
//! keeps its id while it is still found. Only digits are kept (a platform id is a number); anything
//! else, here or found in Redis, is no id.

use std::time::{Duration, Instant};

use moka::future::Cache;

use super::keys::Keys;
use super::{Fleet, expiry_ms};
use crate::config::CacheConfig;

/// The most names a replica remembers an id for.
pub const MAX_LOCAL: u64 = 100_000;

/// The longest id kept (real ones are up to 20 digits).
pub(super) const MAX_ID_LEN: usize = 32;

/// How long an id is kept after it was learned: the longest the fleet's cache keeps a found
/// profile of the name, from `[cache]`'s figures (whether or not the cache is on), as
/// `cache::stores` computes its lifetimes: the entry `ttl_seconds` + the revalidate window,
/// the stale record `ttl_seconds` + `max_stale_seconds` (none when `max_stale_seconds` is 0);
/// the longer of the two. With the shipped settings that is the stale record's life, 600 +
/// 3,600 s. An account's id never changes, but its name may pass to another account; the
/// source asked by id checks the name it answers for. Zero: no id is kept.
pub fn life(cache: &CacheConfig) -> Duration {
    let ttl = cache.ttl_seconds;
    let entry = ttl.saturating_add(cache.revalidate_window());
    let stale = if cache.max_stale_seconds == 0 {
        0
    } else {
        ttl.saturating_add(cache.max_stale_seconds)
    };
    Duration::from_secs(entry.max(stale))
}

/// An id in a replica's memory.
#[derive(Clone, Debug)]
struct Known {
    id: String,
    /// When this replica last wrote it to Redis; `None`: it was read from there.
    written: Option<Instant>,
}

/// The ids learned for names of one platform (see the module docs).
#[derive(Clone, Debug)]
pub struct KnownIds {
    fleet: Fleet,
    platform: &'static str,
    /// How long an id is kept, here and on Redis ([`life`]).
    life: Duration,
    local: Cache<String, Known>,
}

impl KnownIds {
    /// The ids of `platform`'s names, for the replicas of `fleet`, each kept for `life` (see
    /// [`life`]; zero keeps none).
    pub fn new(fleet: &Fleet, platform: &'static str, life: Duration) -> Self {
        let mut local = Cache::builder().max_capacity(MAX_LOCAL);
        if !life.is_zero() {
            local = local.time_to_live(life);
        }
        Self {
            fleet: fleet.clone(),
            platform,
            life,
            local: local.build(),
        }
    }

    /// Remembers that `name` is the account `id` (an id that is not a number is ignored):
    /// here, and on Redis unless this replica wrote the same id there within the last half
    /// of its life.
    pub async fn remember(&self, name: &str, id: &str) {
        if self.life.is_zero() || !is_id(id) {
            return;
        }
        if let Some(known) = self.local.get(name).await
            && known.id == id
            && known.written.is_some_and(|at| at.elapsed() < self.life / 2)
        {
            return;
        }
        let known = Known {
            id: id.to_owned(),
            written: Some(Instant::now()),
        };
        self.local.insert(name.to_owned(), known).await;
        self.fleet.id_put(self.platform, name, id, self.life).await;
    }

    /// The id learned for `name`, here or by any replica; `None` when none was.
    pub async fn recall(&self, name: &str) -> Option<String> {
        if self.life.is_zero() {
            return None;
        }
        if let Some(known) = self.local.get(name).await {
            return Some(known.id);
        }
        let id = self.fleet.id_get(self.platform, name).await.flatten()?;
        let known = Known {
            id: id.clone(),
            written: None,
        };
        self.local.insert(name.to_owned(), known).await;
        Some(id)
    }
}

/// Whether `id` looks like a platform id (a user's, a query's): digits only, not too long.
pub(super) fn is_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_ID_LEN && id.bytes().all(|b| b.is_ascii_digit())
}

impl Keys {
    /// The id learned for one name: in the name's slot, next to its entry.
    pub fn known_id(&self, platform: &str, name: &str) -> String {
        format!("{}:i", self.name_tag(platform, name))
    }
}

impl Fleet {
    /// Keeps `id` as the id of `name` on `platform` for `life` (`SET PX`; see [`life`]);
    /// `None` without Redis. The Redis side of [`KnownIds::remember`].
    pub async fn id_put(&self, platform: &str, name: &str, id: &str, life: Duration) -> Option<()> {
        let key = self.keys()?.known_id(platform, name);
        let id = id.to_owned();
        let _: () = self
            .run("id_put", |mut conn| async move {
                redis::cmd("SET")
                    .arg(key)
                    .arg(id)
                    .arg("PX")
                    .arg(expiry_ms(life))
                    .query_async(&mut conn)
                    .await
            })
            .await?;
        Some(())
    }

    /// The id kept for `name` on `platform`: `Some(None)` none (or a value that is no id),
    /// `None` without Redis. The Redis side of [`KnownIds::recall`].
    pub async fn id_get(&self, platform: &str, name: &str) -> Option<Option<String>> {
        let key = self.keys()?.known_id(platform, name);
        let id: Option<String> = self
            .run("id_get", |mut conn| async move {
                redis::cmd("GET").arg(key).query_async(&mut conn).await
            })
            .await?;
        Some(id.filter(|id| is_id(id)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Revalidate;

    const HOUR: Duration = Duration::from_secs(3600);

    #[tokio::test]
    async fn an_id_is_remembered_locally_and_only_digits_are_ids() {
        let ids = KnownIds::new(&Fleet::local(), "photo-share", HOUR);
        assert_eq!(ids.recall("tide.pool").await, None);
        ids.remember("tide.pool", "77").await;
        assert_eq!(ids.recall("tide.pool").await.as_deref(), Some("77"));
        for odd in ["", "7a", "-1", &"9".repeat(MAX_ID_LEN + 1)] {
            ids.remember("odd", odd).await;
            assert_eq!(ids.recall("odd").await, None, "{odd:?}");
        }
    }

    #[tokio::test]
    async fn an_id_lives_its_life_and_a_life_of_zero_keeps_none() {
        let ids = KnownIds::new(&Fleet::local(), "photo-share", Duration::from_millis(50));
        ids.remember("tide.pool", "77").await;
        assert_eq!(ids.recall("tide.pool").await.as_deref(), Some("77"));
        tokio::time::sleep(Duration::from_millis(120)).await;
        assert_eq!(ids.recall("tide.pool").await, None);
        let none = KnownIds::new(&Fleet::local(), "photo-share", Duration::ZERO);
        none.remember("tide.pool", "77").await;
        assert_eq!(none.recall("tide.pool").await, None);
    }

    #[test]
    fn the_life_is_the_longest_the_fleets_cache_keeps_a_found_profile() {
        let secs = Duration::from_secs;
        let shipped = crate::config::Settings::default().cache;
        // The shipped 600 s TTL, 600 s window ("auto") and 3,600 s of stale life: the stale
        // record's life.
        assert_eq!(
            life(&shipped),
            secs(shipped.ttl_seconds + shipped.max_stale_seconds)
        );
        assert_eq!(life(&shipped), secs(4_200));
        let with = |ttl, window, max_stale, enabled| {
            life(&CacheConfig {
                ttl_seconds: ttl,
                revalidate_seconds: Revalidate::Seconds(window),
                max_stale_seconds: max_stale,
                enabled,
                ..shipped.clone()
            })
        };
        // No stale serving: the entry's life, TTL and window.
        assert_eq!(with(600, 120, 0, true), secs(720));
        // A window longer than the stale life: the entry outlives the stale record.
        assert_eq!(with(600, 7_200, 60, true), secs(7_800));
        // The cache off: the same figures (a source asked by id still needs the id).
        assert_eq!(with(600, 600, 3_600, false), secs(4_200));
        assert_eq!(with(0, 0, 0, true), Duration::ZERO);
    }
}
