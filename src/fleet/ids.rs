//! The platform ids learned for names: what a source asked by id (the photo-share profile
//! query, by the user's pk) needs, remembered from an earlier answer about the name, so that
//! a name seen once can be looked up again when the sources asked by name refuse.
//!
//! [`KnownIds`] is the seam. Each replica keeps the ids it learned in a bounded memory (an
//! LRU of [`MAX_LOCAL`] names, each kept [`ID_TTL`]); on Redis the id is also kept next to the
//! name's cache entry (`P{n:PLATFORM:NAME}:i`, same slot, expiring after [`ID_TTL`]), so an id
//! any replica learned serves every replica, and outlives the entry and its stale copy. A
//! remembered id is written to Redis only when this replica did not already hold the same one:
//! a name looked up again and again costs no Redis write. Only digits are kept (a platform id
//! is a number); anything else, here or found in Redis, is no id.

use std::time::Duration;

use moka::future::Cache;

use super::keys::Keys;
use super::{Fleet, expiry_ms};

/// How long an id is kept after it was last learned: an account's id never changes, but its
/// name may pass to another account; the source asked by id checks the name it answers for.
pub const ID_TTL: Duration = Duration::from_secs(30 * 24 * 3600);

/// The most names a replica remembers an id for.
pub const MAX_LOCAL: u64 = 100_000;

/// The longest id kept (real ones are up to 20 digits).
const MAX_ID_LEN: usize = 32;

/// The ids learned for names of one platform (see the module docs).
#[derive(Clone, Debug)]
pub struct KnownIds {
    fleet: Fleet,
    platform: &'static str,
    local: Cache<String, String>,
}

impl KnownIds {
    /// The ids of `platform`'s names, for the replicas of `fleet`.
    pub fn new(fleet: &Fleet, platform: &'static str) -> Self {
        Self {
            fleet: fleet.clone(),
            platform,
            local: Cache::builder()
                .max_capacity(MAX_LOCAL)
                .time_to_live(ID_TTL)
                .build(),
        }
    }

    /// Remembers that `name` is the account `id` (an id that is not a number is ignored).
    pub async fn remember(&self, name: &str, id: &str) {
        if !is_id(id) {
            return;
        }
        if self.local.get(name).await.as_deref() == Some(id) {
            return;
        }
        self.local.insert(name.to_owned(), id.to_owned()).await;
        self.fleet.id_put(self.platform, name, id).await;
    }

    /// The id learned for `name`, here or by any replica; `None` when none was.
    pub async fn recall(&self, name: &str) -> Option<String> {
        if let Some(id) = self.local.get(name).await {
            return Some(id);
        }
        let id = self.fleet.id_get(self.platform, name).await.flatten()?;
        self.local.insert(name.to_owned(), id.clone()).await;
        Some(id)
    }
}

/// Whether `id` looks like a platform id: digits only, not too long.
fn is_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_ID_LEN && id.bytes().all(|b| b.is_ascii_digit())
}

impl Keys {
    /// The id learned for one name: in the name's slot, next to its entry.
    pub fn known_id(&self, platform: &str, name: &str) -> String {
        format!("{}:i", self.name_tag(platform, name))
    }
}

impl Fleet {
    /// Keeps `id` as the id of `name` on `platform` for [`ID_TTL`] (`SET PX`); `None` without
    /// Redis. The Redis side of [`KnownIds::remember`].
    pub async fn id_put(&self, platform: &str, name: &str, id: &str) -> Option<()> {
        let key = self.keys()?.known_id(platform, name);
        let id = id.to_owned();
        let _: () = self
            .run("id_put", |mut conn| async move {
                redis::cmd("SET")
                    .arg(key)
                    .arg(id)
                    .arg("PX")
                    .arg(expiry_ms(ID_TTL))
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

    #[tokio::test]
    async fn an_id_is_remembered_locally_and_only_digits_are_ids() {
        let ids = KnownIds::new(&Fleet::local(), "photo-share");
        assert_eq!(ids.recall("tide.pool").await, None);
        ids.remember("tide.pool", "77").await;
        assert_eq!(ids.recall("tide.pool").await.as_deref(), Some("77"));
        for odd in ["", "7a", "-1", &"9".repeat(MAX_ID_LEN + 1)] {
            ids.remember("odd", odd).await;
            assert_eq!(ids.recall("odd").await, None, "{odd:?}");
        }
    }
}
