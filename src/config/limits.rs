//! The allowed range of every duration, size and count in the config, and the one message a
//! value out of its range gets; each section lists its own keys' ranges in its `check`.
//!
//! Values far past any sane setting used to pass validation and panic later: a TTL of 2^64-1
//! seconds overflowed `ttl + max_stale` when the cache was built, a huge breaker cooldown would
//! overflow `Instant + Duration` when the breaker opened, a huge `max_in_flight` exceeds what a
//! semaphore can hold. Each key's range is written down with its section and in
//! `config/default.toml`.

/// One hour, in milliseconds: the longest timeout or wait.
pub const HOUR_MS: u64 = 3_600_000;
/// One day, in seconds: the longest breaker cooldown.
pub const DAY_S: u64 = 86_400;
/// One year, in seconds: the longest cache lifetime.
pub const YEAR_S: u64 = 31_536_000;
/// One mebibyte.
pub const MIB: u64 = 1 << 20;
/// One gibibyte.
pub const GIB: u64 = 1 << 30;

/// A key's value and its allowed range (inclusive), with the range said in words.
pub struct Range {
    key: String,
    value: u64,
    min: u64,
    max: u64,
    max_in_words: &'static str,
}

/// The range `min..=max` of `key` (`max` said as `words`), holding `value`.
pub fn range(key: impl Into<String>, value: u64, min: u64, max: u64, words: &'static str) -> Range {
    Range {
        key: key.into(),
        value,
        min,
        max,
        max_in_words: words,
    }
}

/// A `usize` as `u64`, saturating (the same on every platform this runs on).
pub fn n(value: usize) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}

/// The first key whose value is out of its range, as a message naming the key and the range.
pub fn check(ranges: &[Range]) -> Result<(), String> {
    match ranges.iter().find(|r| r.value < r.min || r.value > r.max) {
        None => Ok(()),
        Some(r) => Err(format!(
            "{} is {}, out of range: allowed {} to {} ({}); see config/default.toml",
            r.key, r.value, r.min, r.max, r.max_in_words
        )),
    }
}
