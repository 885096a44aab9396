//! The mistakes an operator makes in a config file or the environment, caught before the
//! values are read and said in the operator's words: an unknown key with the nearest known
//! one ("did you mean `per_key_per_minute`?"), text where a number belongs
//! (`per_key_per_minute = "60"`; environment variables are text by nature and stay parsed),
//! and the `config` crate's and serde's messages rewritten without Rust's names for types.
//!
//! The known keys are those of the built-in defaults (`config/default.toml` holds every key);
//! a platform's section knows the keys of every platform's section.

use std::sync::LazyLock;

use super::origins::{Document, Kind, Sources};
use super::{DEFAULTS_TOML, ENV_PREFIX};
use crate::registry::Platform;

/// The keys of the built-in defaults.
static DEFAULTS: LazyLock<Document> = LazyLock::new(|| {
    Document::parse(DEFAULTS_TOML)
        .unwrap_or_else(|e| panic!("the embedded config/default.toml is not TOML: {e}"))
});

/// Every key of the built-in defaults, in their order (sections included).
pub fn default_keys() -> &'static [super::origins::Entry] {
    &DEFAULTS.entries
}

/// Refuses unknown keys and text where a number or a boolean belongs, in the file, and
/// unknown keys in the environment; the message names the line or the variable.
pub fn check(sources: &Sources) -> Result<(), String> {
    if let Some((file, document)) = sources.file() {
        for entry in &document.entries {
            let at = format!("{file}:{}", entry.line);
            let Some(known) = known(&entry.path) else {
                return Err(format!("{at}: {}", unknown(&entry.path, Spelling::Toml)));
            };
            misfit(&entry.path, known, &entry.kind)
                .map_or(Ok(()), |why| Err(format!("{at}: {why}")))?;
        }
    }
    for (path, name) in sources.env() {
        let path: Vec<String> = path.split('.').map(str::to_owned).collect();
        if known(&path).is_none() {
            return Err(format!("{name}: {}", unknown(&path, Spelling::Env)));
        }
    }
    Ok(())
}

/// What the defaults hold at `path`, if it is a known key; in a platform's section, any
/// platform's key is known (a platform's own check refuses what it cannot use).
fn known(path: &[String]) -> Option<&'static Kind> {
    let find = |path: &[String]| {
        DEFAULTS
            .entries
            .iter()
            .find(|e| e.path == path)
            .map(|e| &e.kind)
    };
    find(path).or_else(|| {
        let (section, rest) = path.split_first()?;
        if !is_platform(section) {
            return None;
        }
        Platform::ALL.iter().find_map(|p| {
            let mut other = vec![p.section().to_owned()];
            other.extend_from_slice(rest);
            find(&other)
        })
    })
}

fn is_platform(section: &str) -> bool {
    Platform::ALL.iter().any(|p| p.section() == section)
}

/// How a key is written where it was found.
#[derive(Clone, Copy)]
enum Spelling {
    /// `rate_limit.burst`
    Toml,
    /// `PROFILE_LOOKUP__RATE_LIMIT__BURST`
    Env,
}

impl Spelling {
    fn key(self, path: &[&str]) -> String {
        match self {
            Spelling::Toml => path.join("."),
            Spelling::Env => format!("{ENV_PREFIX}__{}", path.join("__").to_uppercase()),
        }
    }
}

/// Why `path` is no key, with the nearest known one when one is near.
fn unknown(path: &[String], spelling: Spelling) -> String {
    let (parent, name) = path.split_at(path.len() - 1);
    let name = &name[0];
    let siblings = siblings(parent);
    let what = if parent.is_empty() { "section" } else { "key" };
    let written: Vec<&str> = path.iter().map(String::as_str).collect();
    let mut message = format!("unknown {what} `{}`", path.join("."));
    if let Spelling::Env = spelling {
        message = format!(
            "unknown {what} `{}` (from {})",
            path.join("."),
            spelling.key(&written)
        );
    }
    match nearest(name, &siblings) {
        Some(near) => {
            let mut fixed: Vec<&str> = parent.iter().map(String::as_str).collect();
            fixed.push(near);
            let suggestion = match spelling {
                Spelling::Toml => format!("`{near}`"),
                Spelling::Env => spelling.key(&fixed),
            };
            message.push_str(&format!("; did you mean {suggestion}?"));
        }
        None if parent.is_empty() => {
            message.push_str(&format!("; the sections are {}", siblings.join(", ")));
        }
        None => {
            message.push_str(&format!(
                "; [{}] has {}",
                parent.join("."),
                siblings.join(", ")
            ));
        }
    }
    message
}

/// The known keys directly under `parent` (the sections, for the top).
fn siblings(parent: &[String]) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    let parents: Vec<Vec<String>> = match parent.split_first() {
        Some((section, rest)) if is_platform(section) => Platform::ALL
            .iter()
            .map(|p| {
                let mut other = vec![p.section().to_owned()];
                other.extend_from_slice(rest);
                other
            })
            .collect(),
        _ => vec![parent.to_vec()],
    };
    for entry in &DEFAULTS.entries {
        let (last, up) = entry.path.split_last().expect("a key has a name");
        if parents.iter().any(|p| p == up) && !names.contains(&last.as_str()) {
            names.push(last);
        }
    }
    names
}

/// The known name nearest `name`, if it is near enough to be a typo.
fn nearest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    let name = name.to_lowercase();
    known
        .iter()
        .map(|k| (strsim::levenshtein(&name, k), *k))
        .filter(|&(distance, k)| distance <= (k.len() / 3).max(2))
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, k)| k)
}

/// Why the file's `given` cannot stand where the defaults hold `known`: text, a boolean or a
/// fraction where a number belongs (a whole one), text or a number where a boolean belongs, a
/// value where a section belongs, or the other way round. (The `config` crate would turn
/// `"60"` into 60, `true` into 1 and 1.5 into 1.)
fn misfit(path: &[String], known: &Kind, given: &Kind) -> Option<String> {
    let key = path.join(".");
    let last = path.last().map_or("", String::as_str);
    match (known, given) {
        (Kind::Integer | Kind::Float, Kind::Text(text)) => {
            let write = if text.trim().parse::<f64>().is_ok() {
                format!("write `{last} = {}`, without quotes", text.trim())
            } else {
                "write a number, without quotes".to_owned()
            };
            Some(format!(
                "{key} is the text {text:?}, where a number belongs: {write}"
            ))
        }
        (Kind::Integer | Kind::Float, Kind::Bool) => Some(format!(
            "{key} is true or false, where a number belongs: write a number"
        )),
        (Kind::Bool, Kind::Integer | Kind::Float) => Some(format!(
            "{key} is a number, where true or false belongs: write `{last} = true` or \
             `{last} = false`"
        )),
        (Kind::Integer, Kind::Float) => Some(format!(
            "{key} has a fraction, where a whole number belongs: write it without one"
        )),
        (Kind::Bool, Kind::Text(text)) => Some(format!(
            "{key} is the text {text:?}, where true or false belongs: write `{last} = true` \
             or `{last} = false`, without quotes"
        )),
        (Kind::Table, given) if *given != Kind::Table => Some(format!(
            "{key} is a section: write [{key}] on a line of its own, then its keys"
        )),
        (known, Kind::Table) if *known != Kind::Table => Some(format!(
            "{key} is a value, not a section: write `{last} = …` under [{}]",
            path[..path.len() - 1].join(".")
        )),
        _ => None,
    }
}

/// The `config` crate's error (which names the key) as a message in the operator's words:
/// `key: why`, with no Rust type name in it.
pub fn explain(err: config::ConfigError) -> String {
    let (key, why) = split(err);
    let why = reword(key.as_deref(), &why);
    match key {
        Some(key) if !why.starts_with(&key) => format!("{key}: {why}"),
        _ => why,
    }
}

/// The key an error is about, and what it says of the value.
fn split(err: config::ConfigError) -> (Option<String>, String) {
    use config::ConfigError as E;
    match err {
        E::At { error, key, .. } => {
            let (inner, why) = split(*error);
            (key.or(inner), why)
        }
        E::Type {
            unexpected,
            expected,
            key,
            ..
        } => (key, type_mismatch(&unexpected.to_string(), expected)),
        E::Message(why) => (None, why),
        other => (None, other.to_string()),
    }
}

/// A value of the wrong type, said without Rust's names for types. `given` is the `config`
/// crate's text for the value (`64-bit integer `-1``, `string "x"`), which names its type.
fn type_mismatch(given: &str, expected: &str) -> String {
    let given = match given.split('`').nth(1) {
        Some(value) => value.to_owned(),
        None => match given {
            "unit value" => "nothing".to_owned(),
            "sequence" => "a list".to_owned(),
            "map" => "a table".to_owned(),
            text => text.strip_prefix("string ").unwrap_or(text).to_owned(),
        },
    };
    let wanted = if expected.contains("unsigned") {
        "a number this key takes: write a whole number, 0 or more"
    } else if expected.contains("integer") {
        "a number this key takes: write a whole number"
    } else if expected.contains("float") || expected.contains("f64") {
        "a number"
    } else if expected.contains("bool") {
        "true or false"
    } else if expected.contains("string") || expected.contains("char") {
        "text: write it in quotes"
    } else {
        expected
    };
    format!("{given} is not {wanted}")
}

/// Messages of the crates the values are read with (`url`, the standard library's address
/// parser, serde's), said for the key at hand.
fn reword(key: Option<&str>, why: &str) -> String {
    /// The `url` crate's reasons a text is no URL.
    const URL_REASONS: [&str; 8] = [
        "relative URL without a base",
        "empty host",
        "invalid port number",
        "invalid IPv4 address",
        "invalid IPv6 address",
        "invalid international domain name",
        "invalid domain character",
        "relative URL with a cannot-be-a-base base",
    ];
    let value = why.split_once(": ").map_or("", |(_, value)| value);
    if key == Some("server.listen") || why.starts_with("invalid socket address syntax") {
        // The address parser's message quotes nothing: say what the key takes.
        return "not an IP address and a port; host names are not accepted: write \
                \"127.0.0.1:8080\" (this machine only), \"0.0.0.0:8080\" (every interface) \
                or \"[::]:8080\""
            .to_owned();
    }
    if URL_REASONS.iter().any(|r| why.starts_with(r)) {
        return format!(
            "{value} is not a URL: write the scheme and the host, e.g. \
             \"https://www.example.com\" or \"http://127.0.0.1:9000\""
        );
    }
    // serde's own type message (`invalid type: string "x", expected a sequence`).
    if let Some((given, expected)) = why
        .strip_prefix("invalid type: ")
        .and_then(|rest| rest.split_once(", expected "))
    {
        if expected.contains("sequence") {
            let given = given.strip_prefix("string ").unwrap_or(given);
            return format!("{given} is not a list: write it in brackets, e.g. [\"…\"]");
        }
        return type_mismatch(given, expected);
    }
    // An untagged choice of shapes (one URL or a list of them) that fits none.
    if why.starts_with("data did not match any variant") {
        return "this value has none of the shapes the key takes: write it as \
                config/default.toml shows"
            .to_owned();
    }
    // serde's words for a missing key or an unknown one (the shape check catches those in
    // the file and the environment first): `field` is the Rust word for a key.
    why.replace("unknown field", "unknown key")
        .replace("missing field", "missing key")
        .replace("duplicate field", "key given twice:")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(key: &str) -> Vec<String> {
        key.split('.').map(str::to_owned).collect()
    }

    #[test]
    fn every_section_s_keys_are_known_and_a_typo_finds_its_key() {
        assert_eq!(known(&path("rate_limit.burst")), Some(&Kind::Integer));
        // A platform's section knows every platform's keys.
        let other = Platform::ALL.last().unwrap().section();
        assert!(known(&path(&format!("{other}.loggedout_doc_id"))).is_some());
        assert_eq!(
            unknown(&path("rate_limit.per_key_per_minte"), Spelling::Toml),
            "unknown key `rate_limit.per_key_per_minte`; did you mean `per_key_per_minute`?"
        );
        assert_eq!(
            unknown(&path("cache.ttl_secnds"), Spelling::Env),
            "unknown key `cache.ttl_secnds` (from PROFILE_LOOKUP__CACHE__TTL_SECNDS); did you \
             mean PROFILE_LOOKUP__CACHE__TTL_SECONDS?"
        );
        let far = unknown(&path("cache.colour"), Spelling::Toml);
        assert!(far.contains("[cache] has enabled, ttl_seconds"), "{far}");
    }
}
