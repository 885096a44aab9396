//! `[redis]`: where the fleet's shared state lives, and how long a Redis call may take.
//!
//! An empty `url` keeps every replica on its own in-memory state (the fleet layer is off). One
//! `redis://` URL is a single Redis; several (a TOML list, or one string with commas, which is
//! what an environment variable can carry) are the seed nodes of a Redis Cluster. `rediss://`
//! is the same over TLS (what managed Redis offerings require), its server certificate checked
//! against the system's roots, or against `ca_file` when one is given.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

use super::Section;

/// The longest `key_prefix` accepted: every key carries it, so it is kept short.
pub const MAX_KEY_PREFIX_LEN: usize = 64;
/// Bounds of `timeout_ms`: a call slower than this counts as Redis being down.
pub const TIMEOUT_MS_RANGE: std::ops::RangeInclusive<u64> = 1..=10_000;
/// The most seed nodes accepted for a cluster (a handful is enough to find the others).
pub const MAX_SEED_NODES: usize = 32;

/// The `[redis]` section, as written by the operator.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedisConfig {
    /// Empty: no fleet. One `redis://` URL, or several seed nodes of a cluster (list or commas).
    #[serde(deserialize_with = "one_or_many_urls")]
    pub url: String,
    /// Prepended to every key, so several services (or test runs) can share one Redis.
    pub key_prefix: String,
    /// The most a Redis call may take before Redis counts as down for this call.
    pub timeout_ms: u64,
    /// Whether `serve` refuses to start without a `url`: a fleet's deployment sets it, so that
    /// a replica whose settings lost the URL (a replaced secret file) does not run alone, with
    /// a quota and an outbound budget of its own.
    pub required: bool,
    /// A PEM file of the roots that sign a `rediss://` server's certificate (a private CA);
    /// empty: the system's roots.
    pub ca_file: PathBuf,
}

/// Where the fleet state lives, once `[redis]` is validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedisTarget {
    /// One Redis (or a managed equivalent that speaks to one endpoint).
    Single(String),
    /// The seed nodes of a Redis Cluster.
    Cluster(Vec<String>),
}

impl RedisTarget {
    /// The target as messages show it: its URLs, any password replaced.
    pub fn shown(&self) -> String {
        match self {
            Self::Single(url) => redact(url),
            Self::Cluster(nodes) => nodes
                .iter()
                .map(|n| redact(n))
                .collect::<Vec<_>>()
                .join(","),
        }
    }
}

impl RedisConfig {
    /// `None` when the fleet layer is off (empty url); the target otherwise, or why the section
    /// is wrong (naming the key, never a password). Nothing here touches the network.
    pub fn target(&self) -> Result<Option<RedisTarget>, String> {
        self.validate_prefix()?;
        if !TIMEOUT_MS_RANGE.contains(&self.timeout_ms) {
            return Err(format!(
                "redis.timeout_ms must be within 1..=10000, not {}",
                self.timeout_ms
            ));
        }
        let urls: Vec<&str> = self
            .url
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .collect();
        if urls.len() > MAX_SEED_NODES {
            return Err(format!(
                "redis.url lists {} nodes; at most {MAX_SEED_NODES}",
                urls.len()
            ));
        }
        for u in &urls {
            validate_url(u)?;
        }
        Ok(match urls.as_slice() {
            [] => None,
            [one] => Some(RedisTarget::Single((*one).to_owned())),
            many => Some(RedisTarget::Cluster(
                many.iter().map(|u| (*u).to_owned()).collect(),
            )),
        })
    }

    /// What only `serve` needs: a `url` when `required` says the replica belongs to a fleet.
    pub fn check_for_serve(&self) -> Result<(), String> {
        if self.required && self.target()?.is_none() {
            return Err(
                "redis.required is true but redis.url is empty: this replica would run \
                 alone, with its own quota and outbound budget; set redis.url (a fleet's \
                 deployment keeps it in the secret file), or redis.required = false for a \
                 replica meant to run alone"
                    .into(),
            );
        }
        Ok(())
    }

    /// The configured `ca_file`, if any.
    pub fn ca_file(&self) -> Option<&Path> {
        (!self.ca_file.as_os_str().is_empty()).then_some(self.ca_file.as_path())
    }

    /// The PEM roots of `ca_file` (`None` without one), or why they cannot be used.
    pub fn ca_roots(&self) -> Result<Option<Vec<u8>>, String> {
        self.ca_file()
            .map(|path| {
                super::ca_file::read_pem_roots(path)
                    .map_err(|reason| format!("redis.ca_file {}: {reason}", path.display()))
            })
            .transpose()
    }

    /// The per-call deadline.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    fn validate_prefix(&self) -> Result<(), String> {
        let p = &self.key_prefix;
        // Braces would start a hash tag of their own and break the slot layout of the keys.
        let ok = p.len() <= MAX_KEY_PREFIX_LEN
            && p.bytes()
                .all(|b| b.is_ascii_graphic() && b != b'{' && b != b'}');
        if ok {
            Ok(())
        } else {
            Err(format!(
                "redis.key_prefix must be at most {MAX_KEY_PREFIX_LEN} printable ASCII characters \
                 without spaces or braces"
            ))
        }
    }
}

impl Section for RedisConfig {
    /// The section names a target (or none) that can be used: see [`RedisConfig::target`];
    /// a `ca_file` is readable and holds a certificate.
    fn check(&self) -> Result<(), String> {
        self.target()?;
        self.ca_roots().map(drop)
    }
}

fn validate_url(u: &str) -> Result<(), String> {
    // Neither the text (it may hold a password) nor the URL parser's words are repeated.
    let parsed = url::Url::parse(u).map_err(|_| {
        format!("redis.url is not a URL: {REDIS_URL_FORM}; several, comma-separated")
    })?;
    if !matches!(parsed.scheme(), "redis" | "rediss") {
        return Err(format!(
            "redis.url {:?}: only redis:// and rediss:// (TLS) URLs are accepted",
            redact(u)
        ));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(format!(
            "redis.url {:?} has no host: {REDIS_URL_FORM}",
            redact(u)
        ));
    }
    Ok(())
}

/// What a Redis URL looks like, for the messages that refuse one.
const REDIS_URL_FORM: &str =
    "write redis://[user:password@]host:port[/db], or rediss://… for Redis over TLS";

/// A URL fit for an error message: any password is replaced.
pub(crate) fn redact(u: &str) -> String {
    match url::Url::parse(u) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        Ok(parsed) => parsed.to_string(),
        Err(_) => "(not a URL)".to_owned(),
    }
}

fn one_or_many_urls<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => s,
        OneOrMany::Many(v) => v.join(","),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_url(url: &str) -> RedisConfig {
        RedisConfig {
            url: url.to_owned(),
            ..RedisConfig::default()
        }
    }

    #[test]
    fn empty_url_is_off() {
        assert_eq!(with_url("").target().unwrap(), None);
        assert_eq!(with_url(" , ").target().unwrap(), None);
    }

    #[test]
    fn one_url_is_single_and_a_list_is_a_cluster() {
        assert_eq!(
            with_url("redis://127.0.0.1:6379/0").target().unwrap(),
            Some(RedisTarget::Single("redis://127.0.0.1:6379/0".into()))
        );
        assert_eq!(
            with_url("redis://a:1, redis://b:2").target().unwrap(),
            Some(RedisTarget::Cluster(vec![
                "redis://a:1".into(),
                "redis://b:2".into()
            ]))
        );
    }

    #[test]
    fn a_required_redis_needs_a_url_to_serve() {
        let alone = RedisConfig {
            required: true,
            ..with_url("")
        };
        let err = alone.check_for_serve().unwrap_err();
        assert!(
            err.contains("redis.required") && err.contains("redis.url"),
            "{err}"
        );
        assert!(alone.check().is_ok(), "only serve needs the url");
        let fleet = RedisConfig {
            required: true,
            ..with_url("redis://a:1")
        };
        assert!(fleet.check_for_serve().is_ok());
        assert!(
            with_url("").check_for_serve().is_ok(),
            "not required: alone is fine"
        );
    }

    #[test]
    fn tls_urls_are_accepted_and_a_ca_file_must_hold_a_certificate() {
        assert_eq!(
            with_url("rediss://:pw@redis.example:6380/0")
                .target()
                .unwrap(),
            Some(RedisTarget::Single(
                "rediss://:pw@redis.example:6380/0".into()
            ))
        );
        let err = with_url("redis+tls://a:1").target().unwrap_err();
        assert!(err.contains("rediss://"), "{err}");
        let missing = RedisConfig {
            ca_file: "/nonexistent/ca.pem".into(),
            ..with_url("rediss://a:1")
        };
        let err = missing.check().unwrap_err();
        assert!(err.contains("redis.ca_file"), "{err}");
        assert_eq!(with_url("rediss://a:1").ca_roots(), Ok(None));
    }

    #[test]
    fn a_toml_list_is_accepted() {
        let c: RedisConfig = serde_json::from_str(
            r#"{"url":["redis://a:1","redis://b:2"],"key_prefix":"p:","timeout_ms":200,
                "required":false,"ca_file":""}"#,
        )
        .unwrap();
        assert_eq!(c.url, "redis://a:1,redis://b:2");
        assert_eq!(c.timeout_ms, 200);
    }

    #[test]
    fn bad_sections_are_refused_without_leaking_a_password() {
        let err = with_url("http://x:1").target().unwrap_err().to_string();
        assert!(err.contains("redis://"), "{err}");
        let err = with_url("redis://user:hunter2@/")
            .target()
            .unwrap_err()
            .to_string();
        assert!(!err.contains("hunter2"), "{err}");
        for ms in [0, 10_001] {
            let c = RedisConfig {
                timeout_ms: ms,
                ..with_url("redis://a:1")
            };
            assert!(c.target().is_err(), "{ms}");
        }
        for prefix in ["a{b", "a}", "has space", &"x".repeat(65)] {
            let c = RedisConfig {
                key_prefix: prefix.to_owned(),
                ..with_url("redis://a:1")
            };
            assert!(c.target().is_err(), "{prefix}");
        }
        let many = vec!["redis://a:1"; 33].join(",");
        assert!(with_url(&many).target().is_err());
    }
}
