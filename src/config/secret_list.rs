//! The lists that hold secrets (`auth.api_keys`, `auth.api_key_sha256`, and the proxy lists,
//! whose URLs may carry a password): read from the environment as plain strings, and
//! deserialized so that no error ever shows a value.
//!
//! The `config` crate's environment source try-parses values, so `8675309` became a number
//! (and `007` would become `7`), and its list splitting keeps the blank in `k1, k2`. Its type
//! errors also print the offending value, which here is a key. So these variables are split
//! and trimmed here, handed over as strings, and every error names a position, never a value.

use std::collections::HashMap;
use std::fmt;

use serde::Deserializer;
use serde::de::{Error, SeqAccess, Visitor};

use super::{ConfigError, ENV_PREFIX};
use crate::registry::Platform;

/// The longest key an `Authorization` header is looked at for (see `http::auth`).
pub const MAX_KEY_BYTES: usize = 4096;

/// Whether the config path `path` is a list of plain names read from one comma-separated
/// environment variable like the secret lists (a platform's `sources`,
/// `upstream.browser_profiles`, the canary's accounts), though nothing in it is secret.
fn is_plain_list(path: &str) -> bool {
    path == "upstream.browser_profiles"
        || path == "server.trusted_proxies"
        || super::canary::is_account_list(path)
        || Platform::ALL
            .iter()
            .any(|p| path.strip_prefix(p.section()) == Some(".sources"))
}

/// Whether the config path `path` is a secret list: the key lists, and every proxy list
/// (`upstream.proxies` and each registered platform's own).
fn is_secret_list(path: &str) -> bool {
    matches!(
        path,
        "auth.api_keys" | "auth.api_key_sha256" | "upstream.proxies"
    ) || Platform::ALL
        .iter()
        .any(|p| path.strip_prefix(p.section()) == Some(".proxies"))
}

/// Whether `key` can be sent as `Authorization: Bearer <key>` and so can ever match.
pub fn fits_bearer(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_KEY_BYTES && key.bytes().all(|b| b.is_ascii_graphic())
}

/// The service's environment variables, split into the secret lists and everything else.
pub struct Env {
    /// `PROFILE_LOOKUP__…` variables other than the secret lists, for the `config` crate.
    pub scalars: HashMap<String, String>,
    /// The lists present in the environment (the secret ones and the plain ones), by config
    /// path, items trimmed.
    pub lists: Vec<(String, Vec<String>)>,
    /// Every variable read, by config path (`cache.ttl_seconds`) and name as set: where a
    /// value came from.
    pub names: Vec<(String, String)>,
}

impl Env {
    /// Reads the process environment.
    pub fn read() -> Result<Self, ConfigError> {
        let prefix = format!("{}__", ENV_PREFIX.to_lowercase());
        let mut env = Env {
            scalars: HashMap::new(),
            lists: Vec::new(),
            names: Vec::new(),
        };
        for (name, value) in std::env::vars_os() {
            let Some(name) = name.to_str() else { continue };
            let lower = name.to_lowercase();
            let Some(path) = lower.strip_prefix(&prefix) else {
                continue;
            };
            let Ok(value) = value.into_string() else {
                return Err(ConfigError::Invalid(format!(
                    "the environment variable {name} is not valid UTF-8 (its value is not shown)"
                )));
            };
            let path = path.replace("__", ".");
            env.names.push((path.clone(), name.to_owned()));
            if is_secret_list(&path) || is_plain_list(&path) {
                env.lists.push((path, split_list(&value)));
            } else {
                env.scalars.insert(name.to_owned(), value);
            }
        }
        Ok(env)
    }
}

/// `a, b ,c` → `["a", "b", "c"]`; an empty variable is an empty list. Blank items are kept
/// (as `""`) so validation reports them by position instead of silently dropping them.
fn split_list(value: &str) -> Vec<String> {
    if value.trim().is_empty() {
        return Vec::new();
    }
    value
        .split(',')
        .map(|item| item.trim().to_owned())
        .collect()
}

/// Deserializes `auth.api_keys`.
pub fn api_keys<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    d.deserialize_any(ListVisitor("auth.api_keys"))
}

/// Deserializes `auth.api_key_sha256`.
pub fn api_key_sha256<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    d.deserialize_any(ListVisitor("auth.api_key_sha256"))
}

/// Deserializes a proxy list (`upstream.proxies`, `<platform>.proxies`): URLs that may hold a
/// password, so like the key lists no error shows one.
pub fn proxies<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    d.deserialize_any(ListVisitor("proxies"))
}

/// A list of strings whose errors name the list (and the item's position), never a value.
struct ListVisitor(&'static str);

impl ListVisitor {
    fn not_a_list<E: Error>(&self) -> E {
        E::custom(format_args!(
            "{} must be a list of quoted strings, e.g. [\"…\"] (the value is not shown)",
            self.0
        ))
    }
}

/// Every scalar a list could be given as: refused without showing it.
macro_rules! refuse_scalars {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(fn $method<E: Error>(self, _: $ty) -> Result<Self::Value, E> {
            Err(self.not_a_list())
        })*
    };
}

impl<'de> Visitor<'de> for ListVisitor {
    type Value = Vec<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: a list of strings", self.0)
    }

    refuse_scalars!(
        visit_bool: bool, visit_i64: i64, visit_i128: i128, visit_u64: u64, visit_u128: u128,
        visit_f64: f64, visit_str: &str, visit_bytes: &[u8],
    );

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(ItemSeed(self.0, items.len()))? {
            items.push(item);
        }
        Ok(items)
    }
}

/// One item of a secret list, at a known position.
struct ItemSeed(&'static str, usize);

impl ItemSeed {
    fn not_a_string<E: Error>(&self) -> E {
        E::custom(format_args!(
            "{}[{}] must be a quoted string (the value is not shown)",
            self.0, self.1
        ))
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for ItemSeed {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemSeed {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]: a string", self.0, self.1)
    }

    fn visit_str<E: Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }

    fn visit_string<E: Error>(self, v: String) -> Result<String, E> {
        Ok(v)
    }

    fn visit_bool<E: Error>(self, _: bool) -> Result<String, E> {
        Err(self.not_a_string())
    }

    fn visit_i64<E: Error>(self, _: i64) -> Result<String, E> {
        Err(self.not_a_string())
    }

    fn visit_i128<E: Error>(self, _: i128) -> Result<String, E> {
        Err(self.not_a_string())
    }

    fn visit_u64<E: Error>(self, _: u64) -> Result<String, E> {
        Err(self.not_a_string())
    }

    fn visit_u128<E: Error>(self, _: u128) -> Result<String, E> {
        Err(self.not_a_string())
    }

    fn visit_f64<E: Error>(self, _: f64) -> Result<String, E> {
        Err(self.not_a_string())
    }

    fn visit_bytes<E: Error>(self, _: &[u8]) -> Result<String, E> {
        Err(self.not_a_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_proxy_list_is_a_secret_list() {
        for p in Platform::ALL {
            assert!(is_secret_list(&format!("{}.proxies", p.section())), "{p}");
        }
        assert!(is_secret_list("upstream.proxies") && is_secret_list("auth.api_keys"));
        assert!(!is_secret_list("short_video.base_url") && !is_secret_list("proxies"));
    }

    #[test]
    fn lists_are_trimmed_and_blanks_kept_for_validation() {
        assert_eq!(split_list(" a , b,c "), ["a", "b", "c"]);
        assert_eq!(split_list("a,,b"), ["a", "", "b"]);
        assert!(split_list("  ").is_empty());
    }

    #[test]
    fn only_visible_ascii_keys_fit_a_bearer_header() {
        assert!(fits_bearer("8675309"));
        assert!(fits_bearer(&"k".repeat(MAX_KEY_BYTES)));
        for bad in [
            "",
            "a b",
            "é",
            "a\tb",
            "a\u{7f}",
            &"k".repeat(MAX_KEY_BYTES + 1),
        ] {
            assert!(!fits_bearer(bad), "{bad:?}");
        }
    }
}
