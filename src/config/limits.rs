//! The allowed range of every duration, size and count in the config, checked at load time.
//!
//! Values far past any sane setting used to pass validation and panic later: a TTL of 2^64-1
//! seconds overflowed `ttl + max_stale` when the cache was built, a huge breaker cooldown would
//! overflow `Instant + Duration` when the breaker opened, a huge `max_in_flight` exceeds what a
//! semaphore can hold. Each key's range is written down here and in `config/default.toml`.

use super::{ConfigError, Settings};
use crate::registry::Platform;

/// One hour, in milliseconds: the longest timeout or wait.
const HOUR_MS: u64 = 3_600_000;
/// One day, in seconds: the longest breaker cooldown.
const DAY_S: u64 = 86_400;
/// One year, in seconds: the longest cache lifetime.
const YEAR_S: u64 = 31_536_000;
/// One mebibyte.
const MIB: u64 = 1 << 20;
/// One gibibyte.
const GIB: u64 = 1 << 30;

/// A key's value and its allowed range (inclusive), with the range said in words.
struct Range {
    key: String,
    value: u64,
    min: u64,
    max: u64,
    max_in_words: &'static str,
}

fn range(key: impl Into<String>, value: u64, min: u64, max: u64, words: &'static str) -> Range {
    Range {
        key: key.into(),
        value,
        min,
        max,
        max_in_words: words,
    }
}

/// A `usize` as `u64`, saturating (the same on every platform this runs on).
fn n(value: usize) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}

/// The first key whose value is out of its range, as an error naming the key and the range.
pub fn check(s: &Settings) -> Result<(), ConfigError> {
    let mut ranges = vec![
        range(
            "server.header_read_timeout_ms",
            s.server.header_read_timeout_ms,
            1,
            HOUR_MS,
            "1 hour",
        ),
        range(
            "server.request_timeout_ms",
            s.server.request_timeout_ms,
            1,
            HOUR_MS,
            "1 hour",
        ),
        range(
            "server.max_header_bytes",
            n(s.server.max_header_bytes),
            8192,
            MIB,
            "1 MiB",
        ),
        range(
            "server.max_headers",
            n(s.server.max_headers),
            1,
            10_000,
            "10000",
        ),
        range(
            "server.max_in_flight",
            n(s.server.max_in_flight),
            1,
            1_000_000,
            "a million",
        ),
        range(
            "server.shutdown_grace_ms",
            s.server.shutdown_grace_ms,
            0,
            HOUR_MS,
            "1 hour",
        ),
        range(
            "server.drain_delay_ms",
            s.server.drain_delay_ms,
            0,
            HOUR_MS,
            "1 hour",
        ),
        range(
            "upstream.timeout_ms",
            s.upstream.timeout_ms,
            1,
            HOUR_MS,
            "1 hour",
        ),
        range(
            "upstream.max_body_bytes",
            n(s.upstream.max_body_bytes),
            1,
            GIB,
            "1 GiB",
        ),
        range(
            "upstream.capture_max_files",
            n(s.upstream.capture_max_files),
            1,
            100_000,
            "100000",
        ),
        range(
            "retry.base_delay_ms",
            s.retry.base_delay_ms,
            0,
            HOUR_MS,
            "1 hour",
        ),
        range(
            "retry.max_delay_ms",
            s.retry.max_delay_ms,
            0,
            HOUR_MS,
            "1 hour",
        ),
        range(
            "retry.max_total_ms",
            s.retry.max_total_ms,
            0,
            HOUR_MS,
            "1 hour",
        ),
        range(
            "cache.ttl_seconds",
            s.cache.ttl_seconds,
            0,
            YEAR_S,
            "1 year",
        ),
        range(
            "cache.negative_ttl_seconds",
            s.cache.negative_ttl_seconds,
            0,
            YEAR_S,
            "1 year",
        ),
        range(
            "cache.max_stale_seconds",
            s.cache.max_stale_seconds,
            0,
            YEAR_S,
            "1 year",
        ),
        range("cache.max_bytes", s.cache.max_bytes, 0, 64 * GIB, "64 GiB"),
        range(
            "cache.revalidate_seconds",
            s.cache.revalidate_window(),
            0,
            YEAR_S,
            "1 year",
        ),
        range(
            "cache.hot_hits",
            s.cache.hot_hits,
            0,
            1_000_000,
            "a million",
        ),
        range(
            "upstream.proxy_cooldown_seconds",
            s.upstream.proxy_cooldown_seconds,
            1,
            DAY_S,
            "1 day",
        ),
        range(
            "breaker.cooldown_seconds",
            s.breaker.cooldown_seconds,
            0,
            DAY_S,
            "1 day",
        ),
        range(
            "canary.interval_seconds",
            s.canary.interval_seconds,
            0,
            DAY_S,
            "1 day",
        ),
    ];
    for &platform in Platform::ALL {
        let (section, p) = (platform.section(), s.platform(platform));
        ranges.push(range(
            format!("{section}.max_queue_ms"),
            p.max_queue_ms,
            0,
            HOUR_MS,
            "1 hour",
        ));
        ranges.push(range(
            format!("{section}.max_concurrency"),
            n(p.max_concurrency),
            1,
            100_000,
            "100000",
        ));
    }
    match ranges.iter().find(|r| r.value < r.min || r.value > r.max) {
        None => Ok(()),
        Some(r) => Err(ConfigError::Invalid(format!(
            "{} is {}, out of range: allowed {} to {} ({}); see config/default.toml",
            r.key, r.value, r.min, r.max, r.max_in_words
        ))),
    }
}
