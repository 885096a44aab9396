//! One cache for the fleet: answers (found or not) with their TTLs, and the stale copies of
//! found profiles, stored in the [`SharedEntry`] encoding.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use super::entry::{MAX_BODY_BYTES, MAX_VALUE_BYTES, SharedEntry};
use super::flight::FlightToken;
use super::{Fleet, REDIS_HITS, REDIS_MISSES, expiry_ms};

pub(crate) static READ: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/read.lua")));
static PUT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("scripts/put.lua")));

impl Fleet {
    /// The fresh entry of `name` on `platform`. Outer `None`: Redis unavailable; inner `None`:
    /// a miss (including a value that is not ours, which is removed).
    pub async fn cache_get(&self, platform: &str, name: &str) -> Option<Option<SharedEntry>> {
        let key = self.keys().name(platform, name).entry;
        self.read("cache_get", "fresh", key).await
    }

    /// The stale copy of `name`: the last found profile, kept `max_stale` past its TTL, for
    /// when the platform cannot be asked. Same answers as [`Fleet::cache_get`].
    pub async fn stale_get(&self, platform: &str, name: &str) -> Option<Option<SharedEntry>> {
        let key = self.keys().name(platform, name).stale;
        self.read("stale_get", "stale", key).await
    }

    /// Stores `entry` for `ttl`; a found profile also as the stale copy for `ttl + max_stale`,
    /// a not-found removes the stale copy, in one atomic call. With `release`, the flight lock
    /// is released in the same call if it is still that token's. `Some(())` once stored;
    /// `None`: Redis unavailable (or the body is over [`MAX_BODY_BYTES`]: not shared).
    pub async fn cache_put(
        &self,
        platform: &str,
        name: &str,
        entry: &SharedEntry,
        ttl: Duration,
        max_stale: Duration,
        release: Option<&FlightToken>,
    ) -> Option<()> {
        if entry
            .body
            .as_ref()
            .is_some_and(|b| b.len() > MAX_BODY_BYTES)
        {
            return None;
        }
        let keys = self.keys().name(platform, name);
        let value = entry.encode();
        let stale_ms = if entry.body.is_some() && !max_stale.is_zero() {
            expiry_ms(ttl.saturating_add(max_stale))
        } else {
            0
        };
        let token = release.map(|t| t.0.clone()).unwrap_or_default();
        let _: i64 = self
            .run("cache_put", |mut conn| async move {
                PUT.key(keys.entry)
                    .key(keys.stale)
                    .key(keys.lock)
                    .arg(value.as_ref())
                    .arg(expiry_ms(ttl))
                    .arg(stale_ms)
                    .arg(token)
                    .invoke_async(&mut conn)
                    .await
            })
            .await?;
        Some(())
    }

    async fn read(
        &self,
        op: &'static str,
        kind: &'static str,
        key: String,
    ) -> Option<Option<SharedEntry>> {
        let raw: Option<Vec<u8>> = self
            .run(op, |mut conn| async move {
                READ.key(key)
                    .arg(MAX_VALUE_BYTES)
                    .invoke_async(&mut conn)
                    .await
            })
            .await?;
        let entry = raw.and_then(SharedEntry::decode_owned);
        if entry.is_some() {
            metrics::counter!(REDIS_HITS, "kind" => kind).increment(1);
        } else {
            metrics::counter!(REDIS_MISSES, "kind" => kind).increment(1);
        }
        Some(entry)
    }
}
