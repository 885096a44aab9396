//! The `profile-lookup` subcommands, as library functions the thin binary dispatches to: each
//! takes its parsed arguments and says how the process should exit.
//!
//! Exit codes: 0 success, 1 a lookup-level failure (`extract` found no profile, a probe
//! failed, `check` could not reach Redis), 2 a configuration, file or address problem the
//! operator must fix (`serve` and `check` alike). `canary` has
//! its own: 0 every source `ok`, 1 a source `changed`, 2 only blocks, unreachable or missing
//! sources, 3 settings it cannot use. A mistake on the command line exits
//! [`USAGE_MISTAKE`] (3) for every subcommand.

pub mod canary;
pub mod check;
pub mod demo;
pub mod extract;
pub mod healthcheck;
mod report;
pub mod serve;
mod summary;

pub use canary::canary;
pub use check::check;
pub use demo::demo;
pub use extract::extract;
pub use healthcheck::healthcheck;
pub use serve::serve;

/// The exit code of a command-line mistake (an unknown option, a bad value, a missing
/// argument), whatever the subcommand: `canary`'s code for settings it cannot use, and none
/// of a subcommand's verdicts. clap's own 2 would read as `canary`'s "only blocks,
/// unreachable or missing sources" or `extract`'s "a file could not be read".
pub const USAGE_MISTAKE: u8 = 3;

/// A duration as the command line writes it: a whole number with `ms`, `s`, `m` or `h`
/// (`30s`), or bare seconds; at least a millisecond, at most a day.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    use std::time::Duration;
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a duration: write e.g. 30s, 2m or 500ms"))?;
    let duration = match unit {
        "ms" => Duration::from_millis(n),
        "" | "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.saturating_mul(60)),
        "h" => Duration::from_secs(n.saturating_mul(3600)),
        _ => return Err(format!("{text:?}: the unit is one of ms, s, m, h")),
    };
    if duration < Duration::from_millis(1) || duration > Duration::from_secs(86_400) {
        return Err(format!("{text:?} is out of range: 1ms to 24h"));
    }
    Ok(duration)
}

/// The settings as `serve` takes them: loaded, and checked with the rules of a served API,
/// each error naming where its value was set.
fn settings_for_serve(
    config: Option<&std::path::Path>,
) -> Result<(crate::config::Settings, crate::config::Sources), crate::config::ConfigError> {
    let (settings, sources) = crate::config::Settings::load_traced(config)?;
    settings
        .validate_for_serve()
        .map_err(|e| sources.locate_error(e))?;
    Ok((settings, sources))
}

/// The multi-threaded runtime every long-running subcommand runs on.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("the tokio runtime starts")
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations_take_a_unit_and_stay_in_range() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        for bad in [
            "",
            "s",
            "0s",
            "3d",
            "-1s",
            "1.5s",
            "25h",
            "99999999999999999999s",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
