//! `check`: everything `serve` would check before serving, without serving: the settings
//! (with the rules of a served API), what the state is built from (clients, the capture
//! folder) and, unless `--offline`, whether Redis answers and accepts the credentials. It
//! prints the effective configuration, secrets masked, with where each value that is not a
//! default came from.

use std::path::Path;
use std::process::ExitCode;

use super::report::fatal;
use super::{runtime, settings_for_serve};
use crate::build_info::LONG_VERSION;
use crate::config::effective;
use crate::fleet::AtStart;
use crate::state::AppState;

/// `profile-lookup check [--config FILE] [--offline]`: exit 0 when `serve` would start with
/// these settings, 2 when it would refuse them (as `serve` exits), 1 when Redis could not be
/// reached (`serve` would start, each replica alone until Redis answers).
pub fn check(config: Option<&Path>, offline: bool) -> ExitCode {
    let (settings, sources) = match settings_for_serve(config) {
        Ok(loaded) => loaded,
        Err(err) => {
            fatal(None, config, &err.to_string());
            return ExitCode::from(2);
        }
    };
    let format = settings.log.format;
    println!("# profile-lookup {LONG_VERSION}");
    println!(
        "# The effective configuration, secrets masked; after a value that is not a default, \
         where it was set."
    );
    println!("# Layers: {}", sources.layers().join(", "));
    for line in effective::lines(&settings, &sources) {
        println!("{line}");
    }
    runtime().block_on(async move {
        let shown = settings.redis.target().ok().flatten().map(|t| t.shown());
        let state = match AppState::new(settings) {
            Ok(state) => state,
            Err(err) => {
                fatal(Some(format), config, &err.to_string());
                return ExitCode::from(2);
            }
        };
        if offline {
            println!("redis: not asked (--offline)");
            return ExitCode::SUCCESS;
        }
        let shown = shown.unwrap_or_default();
        match state.fleet().check_at_start().await {
            Err(refused) => {
                fatal(Some(format), config, &refused.to_string());
                ExitCode::from(2)
            }
            Ok(AtStart::Alone) => {
                println!("redis: none (redis.url is empty: this replica keeps its own state)");
                ExitCode::SUCCESS
            }
            Ok(AtStart::Answered) => {
                println!("redis: answered at {shown}");
                ExitCode::SUCCESS
            }
            Ok(AtStart::Unreachable(why)) => {
                println!(
                    "redis: {shown} could not be reached ({why}); serve would start on this \
                     replica's own state and use Redis once it answers"
                );
                ExitCode::FAILURE
            }
        }
    })
}
