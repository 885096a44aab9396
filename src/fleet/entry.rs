//! One answer as the fleet stores it in Redis: a compact, checked encoding.
//!
//! A value is a 12-byte header, the source's name, then the body: magic `b'P'`, version `2`,
//! flags (bit 0 found, bit 1 private), the original fetch time (u64 big-endian, Unix ms), the
//! length of the source's name (at most [`MAX_SOURCE_LEN`]), the name itself (the platform
//! source that answered, for `x-source`; may be empty), then the JSON body bytes for a found
//! profile and nothing for a not-found. Anything else, an earlier version's value included,
//! reads as a miss.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::{BufMut, Bytes, BytesMut};

/// The largest body stored or read back: far above any profile, far below harm.
pub const MAX_BODY_BYTES: usize = 1 << 20;
/// The longest source name stored (the registry's names are a few letters).
pub const MAX_SOURCE_LEN: usize = 32;
/// The header's length: magic, version, flags, the fetch time and the source name's length.
const HEADER_LEN: usize = 12;
/// The largest value this version writes or reads.
pub const MAX_VALUE_BYTES: usize = HEADER_LEN + MAX_SOURCE_LEN + MAX_BODY_BYTES;
// scripts/lock.lua checks these two bytes too: change both together.
const MAGIC: u8 = b'P';
const VERSION: u8 = 2;
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
    /// The platform source that answered (`page`, `json`, …); empty when not known.
    pub source: String,
}

/// What a well-formed header says.
struct Header {
    found: bool,
    private: bool,
    fetched_at_unix_ms: u64,
    /// Where the source's name ends and the body begins.
    body_at: usize,
}

impl SharedEntry {
    /// Seconds since the original fetch, for the `Age` header (0 if the clock went back).
    pub fn age(&self) -> Duration {
        Duration::from_millis(now_unix_ms().saturating_sub(self.fetched_at_unix_ms))
    }

    /// The stored form: header, source name, body. A source name longer than
    /// [`MAX_SOURCE_LEN`] is not kept (stored empty).
    pub fn encode(&self) -> Bytes {
        let body = self.body.as_deref().unwrap_or_default();
        let source = if self.source.len() <= MAX_SOURCE_LEN {
            self.source.as_bytes()
        } else {
            b""
        };
        let mut out = BytesMut::with_capacity(HEADER_LEN + source.len() + body.len());
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
        out.put_u8(source.len() as u8);
        out.put_slice(source);
        out.put_slice(body);
        out.freeze()
    }

    /// The entry stored as `raw`, or `None` for anything this version did not write.
    pub fn decode(raw: &[u8]) -> Option<Self> {
        let header = Self::header(raw)?;
        Some(Self {
            body: header
                .found
                .then(|| Bytes::copy_from_slice(&raw[header.body_at..])),
            source: Self::source(raw, &header)?,
            private: header.private,
            fetched_at_unix_ms: header.fetched_at_unix_ms,
        })
    }

    /// [`SharedEntry::decode`] of a value Redis handed over: the body is kept in place, not
    /// copied.
    pub fn decode_owned(raw: Vec<u8>) -> Option<Self> {
        let header = Self::header(&raw)?;
        let source = Self::source(&raw, &header)?;
        Some(Self {
            body: header
                .found
                .then(|| Bytes::from(raw).slice(header.body_at..)),
            source,
            private: header.private,
            fetched_at_unix_ms: header.fetched_at_unix_ms,
        })
    }

    /// The source name of a well-formed value: printable ASCII, or the value is not ours.
    fn source(raw: &[u8], header: &Header) -> Option<String> {
        let name = &raw[HEADER_LEN..header.body_at];
        name.iter()
            .all(u8::is_ascii_graphic)
            .then(|| String::from_utf8_lossy(name).into_owned())
    }

    /// The header of a well-formed value.
    fn header(raw: &[u8]) -> Option<Header> {
        if raw.len() < HEADER_LEN || raw.len() > MAX_VALUE_BYTES {
            return None;
        }
        let flags = raw[2];
        if raw[0] != MAGIC || raw[1] != VERSION || flags & !(FOUND | PRIVATE) != 0 {
            return None;
        }
        let source_len = usize::from(raw[HEADER_LEN - 1]);
        let body_at = HEADER_LEN + source_len;
        if source_len > MAX_SOURCE_LEN || raw.len() < body_at {
            return None;
        }
        let found = flags & FOUND != 0;
        let body_len = raw.len() - body_at;
        if found == (body_len == 0) || body_len > MAX_BODY_BYTES {
            return None;
        }
        Some(Header {
            found,
            private: flags & PRIVATE != 0,
            fetched_at_unix_ms: u64::from_be_bytes(raw[3..11].try_into().ok()?),
            body_at,
        })
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
            source: "page".into(),
        };
        let gone = SharedEntry {
            body: None,
            private: false,
            fetched_at_unix_ms: 5,
            source: String::new(),
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
        let mut old_version = good.to_vec();
        old_version[1] = 1;
        let mut bad_flags = good.to_vec();
        bad_flags[2] = 0x80;
        let mut found_without_body = good[..HEADER_LEN + 4].to_vec();
        found_without_body[2] = FOUND;
        let mut gone_with_body = gone.encode().to_vec();
        gone_with_body.push(b'x');
        let mut source_past_the_end = gone.encode().to_vec();
        source_past_the_end[HEADER_LEN - 1] = 9;
        let mut source_too_long = good.to_vec();
        source_too_long[HEADER_LEN - 1] = (MAX_SOURCE_LEN + 1) as u8;
        let mut source_not_text = good.to_vec();
        source_not_text[HEADER_LEN] = b'\n';
        for junk in [
            &b""[..],
            b"hello",
            &bad_magic,
            &old_version,
            &bad_flags,
            &found_without_body,
            &gone_with_body,
            &source_past_the_end,
            &source_too_long,
            &source_not_text,
            &good[..HEADER_LEN - 1],
        ] {
            assert_eq!(SharedEntry::decode(junk), None, "{junk:?}");
            assert_eq!(SharedEntry::decode_owned(junk.to_vec()), None, "{junk:?}");
        }
    }

    #[test]
    fn a_source_name_too_long_to_keep_is_stored_empty() {
        let e = SharedEntry {
            body: None,
            private: false,
            fetched_at_unix_ms: 1,
            source: "x".repeat(MAX_SOURCE_LEN + 1),
        };
        assert_eq!(SharedEntry::decode(&e.encode()).unwrap().source, "");
    }

    #[test]
    fn age_counts_from_the_original_fetch() {
        let e = SharedEntry {
            body: None,
            private: false,
            fetched_at_unix_ms: now_unix_ms() - 30_000,
            source: String::new(),
        };
        assert!((29..=31).contains(&e.age().as_secs()));
    }
}
