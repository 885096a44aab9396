//! How `serve` and `check` say why they cannot start: as the settings' `log.format` asks (a
//! JSON line for a log pipeline, else a plain line), as far as the format itself could be
//! read.

use std::path::Path;

use crate::config::LogFormat;
use crate::config::log::format_hint;

/// Writes `message` on stderr as a fatal start-up error: a JSON log line at ERROR when the
/// format is `json` (`format`, else what [`format_hint`] reads of `file` and the environment),
/// else `profile-lookup: message`.
pub fn fatal(format: Option<LogFormat>, file: Option<&Path>, message: &str) {
    match format.unwrap_or_else(|| format_hint(file)) {
        LogFormat::Json => {
            // The service's own JSON line format, whatever filter the settings set.
            let subscriber = tracing_subscriber::fmt()
                .json()
                .flatten_event(true)
                .with_current_span(false)
                .with_writer(std::io::stderr)
                .with_max_level(tracing::Level::ERROR)
                .finish();
            tracing::subscriber::with_default(subscriber, || tracing::error!("{message}"));
        }
        LogFormat::Pretty => eprintln!("profile-lookup: {message}"),
    }
}
