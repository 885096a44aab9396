//! `[cache]`: how long answers are kept and served, and the freshness keys that are not plain
//! counts: `revalidate_seconds`, whose default follows `ttl_seconds`, and `refresh_share`, a
//! fraction.
//!
//! `revalidate_seconds = "auto"` (the default) is `ttl_seconds` itself: a found profile is
//! answered at once until twice its TTL, while one background refresh replaces it. A name asked
//! at least once a TTL then never makes a caller wait after its first lookup, and the window
//! costs the platform no fetch a lookup past the TTL would not have made anyway (see
//! `docs/freshness.md`). A number is taken as written. Both forms come from a file or the
//! environment alike: the environment source hands over `"auto"` as text and `120` as a
//! number, and a number written as text (`"120"`) is a number too.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Section;
use super::limits::{self, GIB, YEAR_S, range};

/// `[cache]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// Whether found profiles and not-found answers are kept at all.
    pub enabled: bool,
    /// How long a profile is served from the cache.
    pub ttl_seconds: u64,
    /// How long a not-found answer is served from the cache.
    pub negative_ttl_seconds: u64,
    /// How long past its TTL a profile may still be served when the platform fails.
    pub max_stale_seconds: u64,
    /// Most bytes of response bodies kept (each store), so giant profiles cannot exhaust memory.
    pub max_bytes: u64,
    /// How long past its TTL a found profile is still answered at once while one background
    /// refresh replaces it (stale-while-revalidate); `"auto"`: `ttl_seconds` itself.
    pub revalidate_seconds: Revalidate,
    /// Hits during its life that make an entry hot: refreshed in the background shortly before
    /// it expires (0: never).
    pub hot_hits: u64,
    /// The most of each platform's outbound budget that background refreshes may use (0 to 1).
    pub refresh_share: f64,
}

impl CacheConfig {
    /// The stale-while-revalidate window in seconds: `revalidate_seconds` as configured, or
    /// `ttl_seconds` for `"auto"`.
    pub fn revalidate_window(&self) -> u64 {
        self.revalidate_seconds.seconds(self.ttl_seconds)
    }
}

impl Section for CacheConfig {
    fn check(&self) -> Result<(), String> {
        let year = |key: &str, value| range(format!("cache.{key}"), value, 0, YEAR_S, "1 year");
        limits::check(&[
            year("ttl_seconds", self.ttl_seconds),
            year("negative_ttl_seconds", self.negative_ttl_seconds),
            year("max_stale_seconds", self.max_stale_seconds),
            range("cache.max_bytes", self.max_bytes, 0, 64 * GIB, "64 GiB"),
            year("revalidate_seconds", self.revalidate_window()),
            range("cache.hot_hits", self.hot_hits, 0, 1_000_000, "a million"),
        ])?;
        check_refresh_share(self.refresh_share)
    }
}

/// The word that asks for the default window.
const AUTO: &str = "auto";

/// `cache.revalidate_seconds`: how long past its TTL a found profile is still answered at once
/// while one background refresh replaces it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Revalidate {
    /// As long as `ttl_seconds`: served at once until twice the TTL.
    #[default]
    Auto,
    /// This many seconds.
    Seconds(u64),
}

impl Revalidate {
    /// The window in seconds for a TTL of `ttl_seconds`.
    pub fn seconds(self, ttl_seconds: u64) -> u64 {
        match self {
            Revalidate::Auto => ttl_seconds,
            Revalidate::Seconds(n) => n,
        }
    }
}

impl Serialize for Revalidate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Revalidate::Auto => s.serialize_str(AUTO),
            Revalidate::Seconds(n) => s.serialize_u64(*n),
        }
    }
}

impl<'de> Deserialize<'de> for Revalidate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RevalidateVisitor)
    }
}

struct RevalidateVisitor;

impl Visitor<'_> for RevalidateVisitor {
    type Value = Revalidate;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a whole number of seconds or \"auto\"")
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Revalidate, E> {
        Ok(Revalidate::Seconds(n))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Revalidate, E> {
        u64::try_from(n)
            .map(Revalidate::Seconds)
            .map_err(|_| E::custom("cache.revalidate_seconds must not be negative"))
    }

    /// A whole number that arrived as a float (the environment source reads numbers past
    /// `i64` so); too large a one saturates, and the range check names the key.
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Revalidate, E> {
        if n >= 0.0 && n.fract() == 0.0 {
            Ok(Revalidate::Seconds(n as u64))
        } else {
            Err(E::custom(format!(
                "cache.revalidate_seconds is {n}: write a whole number of seconds or \"auto\""
            )))
        }
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Revalidate, E> {
        let s = s.trim();
        if s.eq_ignore_ascii_case(AUTO) {
            return Ok(Revalidate::Auto);
        }
        s.parse().map(Revalidate::Seconds).map_err(|_| {
            E::custom(format!(
                "cache.revalidate_seconds is {s:?}: write a whole number of seconds or \"auto\""
            ))
        })
    }
}

/// `cache.refresh_share` is a fraction of the outbound budget: 0 (no background refresh) to 1.
fn check_refresh_share(share: f64) -> Result<(), String> {
    if share.is_finite() && (0.0..=1.0).contains(&share) {
        Ok(())
    } else {
        Err(format!(
            "cache.refresh_share is {share}, out of range: allowed 0 to 1 (a fraction of each \
             platform's requests_per_second); see config/default.toml"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Holder {
        v: Revalidate,
    }

    fn parse(toml_value: &str) -> Result<Revalidate, String> {
        let text = format!("v = {toml_value}");
        config::Config::builder()
            .add_source(config::File::from_str(&text, config::FileFormat::Toml))
            .build()
            .and_then(|c| c.try_deserialize::<Holder>())
            .map(|h| h.v)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn auto_numbers_and_numbers_as_text_are_read_and_junk_is_refused() {
        assert_eq!(parse("\"auto\""), Ok(Revalidate::Auto));
        assert_eq!(parse("\"AUTO\""), Ok(Revalidate::Auto));
        assert_eq!(parse("120"), Ok(Revalidate::Seconds(120)));
        assert_eq!(parse("\"0\""), Ok(Revalidate::Seconds(0)));
        assert!(parse("-1").unwrap_err().contains("negative"));
        assert!(parse("\"soon\"").unwrap_err().contains("\"auto\""));
        assert!(parse("1.5").is_err());
    }

    #[test]
    fn auto_is_the_ttl_itself() {
        assert_eq!(Revalidate::Auto.seconds(600), 600);
        assert_eq!(Revalidate::Auto.seconds(10), 10);
        assert_eq!(Revalidate::Auto.seconds(4), 4);
        assert_eq!(Revalidate::Auto.seconds(0), 0);
        assert_eq!(Revalidate::Seconds(7).seconds(600), 7);
        assert_eq!(Revalidate::default(), Revalidate::Auto);
    }

    #[test]
    fn the_share_is_a_fraction() {
        for ok in [0.0, 0.2, 1.0] {
            assert!(check_refresh_share(ok).is_ok());
        }
        for bad in [-0.1, 1.01, f64::NAN, f64::INFINITY] {
            assert!(
                check_refresh_share(bad)
                    .unwrap_err()
                    .contains("allowed 0 to 1")
            );
        }
    }
}
