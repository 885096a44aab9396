//! `[log]`: what the log lines look like and how much is logged.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Section;
use super::origins::Kind;
use super::words::{Words, deserialize_words};

/// `[log]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogConfig {
    /// `"pretty"` for people, `"json"` for log pipelines.
    pub format: LogFormat,
    /// A tracing filter directive, e.g. `info` or `profile_lookup=debug`.
    pub level: String,
}

/// The log line format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    Pretty,
    /// One JSON object per line.
    Json,
}

impl Words for LogFormat {
    const WHAT: &'static str = "a log format";
    const ALL: &'static [(&'static str, Self)] =
        &[("pretty", LogFormat::Pretty), ("json", LogFormat::Json)];
}

deserialize_words!(LogFormat);

/// The log format the settings ask for, as far as it can be read when the settings as a whole
/// cannot: `PROFILE_LOOKUP__LOG__FORMAT`, else the file's `[log] format` (`file`, else
/// `PROFILE_LOOKUP_CONFIG`), else `pretty`. A fatal start-up error is written in it.
pub fn format_hint(file: Option<&Path>) -> LogFormat {
    let var = format!("{}__LOG__FORMAT", super::ENV_PREFIX);
    let from_env = std::env::vars()
        .find(|(name, _)| name.eq_ignore_ascii_case(&var))
        .map(|(_, value)| value);
    let env_file = std::env::var_os(super::CONFIG_ENV);
    let from_file = || {
        let path = file.or(env_file.as_deref().map(Path::new))?;
        let text = std::fs::read_to_string(path).ok()?;
        let document = super::origins::Document::parse(&text).ok()?;
        document.entries.into_iter().find_map(|e| match e.kind {
            Kind::Text(word) if e.path == ["log", "format"] => Some(word),
            _ => None,
        })
    };
    from_env
        .or_else(from_file)
        .and_then(|word| super::words::parse(word.trim()).ok())
        .unwrap_or(LogFormat::Pretty)
}

/// The levels `log.level` takes, alone or after `target=`.
const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

impl Section for LogConfig {
    /// The format is one of two words (checked as it is read); the level is checked here: the
    /// filter would read a word that is no level (`warning`) as a target name and log nothing.
    fn check(&self) -> Result<(), String> {
        check_level(&self.level)
    }
}

/// `log.level`: comma-separated directives, each a level or `target=level`, where a target
/// is a module path (`profile_lookup::http`).
fn check_level(level: &str) -> Result<(), String> {
    let refuse = |what: &str| {
        Err(format!(
            "log.level {level:?}: {what}; write a level, one of {}, or target=level \
             directives such as \"info,profile_lookup=debug\"",
            super::words::allowed(&LEVELS)
        ))
    };
    for directive in level.split(',').map(str::trim) {
        let (target, word) = match directive.split_once('=') {
            Some((target, word)) => (Some(target.trim()), word.trim()),
            None => (None, directive),
        };
        if let Some(target) = target {
            let module = |part: &str| {
                !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            };
            if !target.split("::").all(module) {
                return refuse(&format!("{target:?} is not a module path"));
            }
        }
        if !LEVELS.contains(&word.to_ascii_lowercase().as_str()) {
            return refuse(&format!("{word:?} is not a level"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_level;

    #[test]
    fn a_level_is_a_level_word_or_target_level_directives() {
        for good in [
            "info",
            "WARN",
            "off",
            "info,profile_lookup=debug",
            "a::b=trace",
        ] {
            assert_eq!(check_level(good), Ok(()), "{good}");
        }
        for bad in [
            "warning",
            "verbose",
            "",
            "info,",
            "=debug",
            "x y=info",
            "info=loud",
        ] {
            assert!(check_level(bad).is_err(), "{bad}");
        }
    }
}
