//! The effective configuration as `profile-lookup check` prints it: one `section.key = value`
//! line per key, in the order of `config/default.toml`, secrets masked (API keys, the Redis
//! password, proxies' credentials) and, after each value that is not a default, where it came
//! from (`# file:line` or `# VARIABLE`).

use serde_json::Value;

use super::origins::{Kind, Sources};
use super::{Settings, mistakes, proxies, redis};

/// The lines of the effective configuration.
pub fn lines(settings: &Settings, sources: &Sources) -> Vec<String> {
    let (Ok(value), Ok(defaults)) = (
        serde_json::to_value(settings),
        serde_json::to_value(Settings::default()),
    ) else {
        return vec!["# the settings could not be shown".to_owned()];
    };
    let mut lines = Vec::new();
    for entry in mistakes::default_keys() {
        if entry.kind == Kind::Table {
            continue;
        }
        let key = entry.path.join(".");
        let Some(now) = at(&value, &entry.path) else {
            continue;
        };
        let mut line = format!("{key} = {}", shown(&key, now));
        if at(&defaults, &entry.path) != Some(now) {
            line.push_str(&format!("  # {}", sources.origin(&key)));
        }
        lines.push(line);
    }
    lines
}

/// The value at `path` in `value`.
fn at<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(key))
}

/// `value` as TOML writes it, with the secrets of `key` masked.
fn shown(key: &str, value: &Value) -> String {
    let mask: fn(&str) -> String = if key == "auth.api_keys" {
        |_| "***".to_owned()
    } else if key == "redis.url" {
        redis::redact
    } else if key.ends_with(".proxies") {
        |raw| proxies::masked(raw).unwrap_or_else(|| "***".to_owned())
    } else {
        str::to_owned
    };
    toml_text(value, mask)
}

/// A JSON value as a TOML value, each string passed through `mask`.
fn toml_text(value: &Value, mask: fn(&str) -> String) -> String {
    match value {
        Value::String(s) if s.is_empty() => "\"\"".to_owned(),
        Value::String(s) => Value::String(mask(s)).to_string(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(|v| toml_text(v, mask)).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_and_the_rest_written_as_toml() {
        let list = |items: &[&str]| Value::from(items.to_vec());
        assert_eq!(
            shown("auth.api_keys", &list(&["k-0123456789abcdef"])),
            "[\"***\"]"
        );
        assert_eq!(
            shown("upstream.proxies", &list(&["http://u:pw@h:1", "nope pw"])),
            "[\"http://***:***@h:1\", \"***\"]"
        );
        assert_eq!(
            shown("redis.url", &Value::from("redis://u:pw@h:6379/0")),
            "\"redis://u:***@h:6379/0\""
        );
        assert_eq!(shown("redis.url", &Value::from("")), "\"\"");
        assert_eq!(shown("cache.refresh_share", &Value::from(0.2)), "0.2");
        assert_eq!(shown("log.level", &Value::from("info")), "\"info\"");
    }
}
