//! `[log]`: what the log lines look like and how much is logged.

use serde::{Deserialize, Serialize};

use super::Section;

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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    Pretty,
    /// One JSON object per line.
    Json,
}

impl Section for LogConfig {
    /// Every value that parses works: the format is one of two words, and a level the filter
    /// cannot read is reported by the logger when it starts.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}
