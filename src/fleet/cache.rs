//! One cache for the fleet: answers (found or not) with their TTLs, and the stale copies of
//! found profiles, in a compact checked encoding.
//!
//! A value is an 11-byte header, then the body: magic `b'P'`, version `1`, flags (bit 0 found,
//! bit 1 private), the original fetch time (u64 big-endian, Unix ms), then the JSON body bytes
//! for a found profile and nothing for a not-found. Anything else reads as a miss.

use std::sync::LazyLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::{BufMut, Bytes, BytesMut};
use redis::Script;

use super::flight::FlightToken;
use super::{Fleet, REDIS_HITS, REDIS_MISSES, expiry_ms};

/// The largest body stored or read back: far above any profile, far below harm.
pub const MAX_BODY_BYTES: usize = 1 << 20;
const HEADER_LEN: usize = 11;
// scripts/lock.lua checks these two bytes too: change both together.
const MAGIC: u8 = b'P';
const VERSION: u8 = 1;
const FOUND: u8 = 1;
const PRIVATE: u8 = 2;

pub(crate) static READ: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/read.lua")));
static PUT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("scripts/put.lua")));

/// One answer as the fleet shares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedEntry {
    /// The profile's JSON body, or `None` for a confirmed not-found.
    pub body: Option<Bytes>,
    /// Whether the profile is private.
    pub private: bool,
    /// When the answer was fetched from the platform (Unix ms): `Age` counts from here.
    pub fetched_at_unix_ms: u64,
}

impl SharedEntry {
    /// Seconds since the original fetch, for the `Age` header (0 if the clock went back).
    pub fn age(&self) -> Duration {
        Duration::from_millis(now_unix_ms().saturating_sub(self.fetched_at_unix_ms))
    }

    /// The stored form: header then body.
    pub fn encode(&self) -> Bytes {
        let body = self.body.as_deref().unwrap_or_default();
        let mut out = BytesMut::with_capacity(HEADER_LEN + body.len());
        out.put_u8(MAGIC);
        out.put_u8(VERSION);
        let mut flags = 0;
        if self.body.is_some() {
            flags |= FOUND;
        }
        if self.private {
            flags |= PRIVATE;
        }
        out.put_u8(flags);
        out.put_u64(self.fetched_at_unix_ms);
        out.put_slice(body);
        out.freeze()
    }

    /// The entry stored as `raw`, or `None` for anything this version did not write.
    pub fn decode(raw: &[u8]) -> Option<Self> {
        let (found, private, fetched_at_unix_ms) = Self::header(raw)?;
        Some(Self {
            body: found.then(|| Bytes::copy_from_slice(&raw[HEADER_LEN..])),
            private,
            fetched_at_unix_ms,
        })
    }

    /// [`SharedEntry::decode`] of a value Redis handed over: the body is kept in place, not
    /// copied.
    pub fn decode_owned(raw: Vec<u8>) -> Option<Self> {
        let (found, private, fetched_at_unix_ms) = Self::header(&raw)?;
        Some(Self {
            body: found.then(|| Bytes::from(raw).slice(HEADER_LEN..)),
            private,
            fetched_at_unix_ms,
        })
    }

    /// Found, private and the fetch time of a well-formed value.
    fn header(raw: &[u8]) -> Option<(bool, bool, u64)> {
        if raw.len() < HEADER_LEN || raw.len() > HEADER_LEN + MAX_BODY_BYTES {
            return None;
        }
        let (head, body) = raw.split_at(HEADER_LEN);
        let flags = head[2];
        if head[0] != MAGIC || head[1] != VERSION || flags & !(FOUND | PRIVATE) != 0 {
            return None;
        }
        let found = flags & FOUND != 0;
        if found == body.is_empty() {
            return None;
        }
        let fetched_at_unix_ms = u64::from_be_bytes(head[3..HEADER_LEN].try_into().ok()?);
        Some((found, flags & PRIVATE != 0, fetched_at_unix_ms))
    }
}

/// The wall clock in Unix milliseconds, for [`SharedEntry::fetched_at_unix_ms`].
pub fn now_unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

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
                    .arg(HEADER_LEN + MAX_BODY_BYTES)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_junk_is_refused() {
        let found = SharedEntry {
            body: Some(Bytes::from_static(b"{\"a\":1}")),
            private: true,
            fetched_at_unix_ms: 1_700_000_000_123,
        };
        let gone = SharedEntry {
            body: None,
            private: false,
            fetched_at_unix_ms: 5,
        };
        for e in [&found, &gone] {
            assert_eq!(SharedEntry::decode(&e.encode()).as_ref(), Some(e));
            assert_eq!(
                SharedEntry::decode_owned(e.encode().to_vec()).as_ref(),
                Some(e)
            );
        }
        let good = found.encode();
        let mut bad_magic = good.to_vec();
        bad_magic[0] = b'X';
        let mut bad_flags = good.to_vec();
        bad_flags[2] = 0x80;
        let mut found_without_body = good[..HEADER_LEN].to_vec();
        found_without_body[2] = FOUND;
        let mut gone_with_body = gone.encode().to_vec();
        gone_with_body.push(b'x');
        for junk in [
            &b""[..],
            b"hello",
            &bad_magic,
            &bad_flags,
            &found_without_body,
            &gone_with_body,
            &good[..HEADER_LEN - 1],
        ] {
            assert_eq!(SharedEntry::decode(junk), None, "{junk:?}");
            assert_eq!(SharedEntry::decode_owned(junk.to_vec()), None, "{junk:?}");
        }
    }

    #[test]
    fn age_counts_from_the_original_fetch() {
        let e = SharedEntry {
            body: None,
            private: false,
            fetched_at_unix_ms: now_unix_ms() - 30_000,
        };
        assert!((29..=31).contains(&e.age().as_secs()));
    }
}
