//! One answer as the fleet stores it in Redis: a compact, checked encoding.
//!
//! A value is an 11-byte header, then the body: magic `b'P'`, version `1`, flags (bit 0 found,
//! bit 1 private), the original fetch time (u64 big-endian, Unix ms), then the JSON body bytes
//! for a found profile and nothing for a not-found. Anything else reads as a miss.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::{BufMut, Bytes, BytesMut};

/// The largest body stored or read back: far above any profile, far below harm.
pub const MAX_BODY_BYTES: usize = 1 << 20;
/// The header's length: magic, version, flags and the fetch time.
pub(super) const HEADER_LEN: usize = 11;
// scripts/lock.lua checks these two bytes too: change both together.
const MAGIC: u8 = b'P';
const VERSION: u8 = 1;
const FOUND: u8 = 1;
const PRIVATE: u8 = 2;

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
