//! `serve`: the service, from its settings.

use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;

use super::report::fatal;
use super::{runtime, settings_for_serve, summary};
use crate::state::AppState;
use crate::{server, telemetry};

/// `profile-lookup serve [--config FILE]`: runs until SIGTERM or Ctrl-C, then drains.
pub fn serve(config: Option<&Path>) -> ExitCode {
    let (settings, sources) = match settings_for_serve(config) {
        Ok(loaded) => loaded,
        Err(err) => {
            fatal(None, config, &err.to_string());
            return ExitCode::from(2);
        }
    };
    let format = Some(settings.log.format);
    let traces = match telemetry::init(&settings.log, &settings.telemetry) {
        Ok(traces) => traces,
        Err(err) => {
            fatal(format, config, &err);
            return ExitCode::from(2);
        }
    };
    summary::log_start(&settings, &sources);
    runtime().block_on(async move {
        let listener = match tokio::net::TcpListener::bind(settings.server.listen).await {
            Ok(listener) => listener,
            Err(err) => {
                let addr = settings.server.listen;
                fatal(format, config, &cannot_listen(addr, &err));
                return ExitCode::from(2);
            }
        };
        let state = match AppState::new(settings) {
            Ok(state) => state,
            Err(err) => {
                fatal(format, config, &err.to_string());
                return ExitCode::from(2);
            }
        };
        // A Redis that refuses our credentials is a settings error (a fleet of replicas each
        // running alone); one that cannot be reached is not.
        if let Err(refused) = state.fleet().check_at_start().await {
            fatal(format, config, &refused.to_string());
            return ExitCode::from(2);
        }
        tracing::info!(listen = %state.settings().server.listen, "serving");
        let grace = crate::config::ms(state.settings().server.shutdown_grace_ms);
        let served = crate::run(listener, state, server::shutdown_signal()).await;
        // What is queued goes out once the requests are done, within a grace of its own.
        if let Some(traces) = traces {
            traces.shutdown(grace).await;
        }
        match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("profile-lookup: {err}");
                ExitCode::FAILURE
            }
        }
    })
}

/// What went wrong binding `addr`, and what the operator can do about it.
fn cannot_listen(addr: SocketAddr, err: &std::io::Error) -> String {
    use std::io::ErrorKind;
    const SETTING: &str = "server.listen / PROFILE_LOOKUP__SERVER__LISTEN";
    let (what, hint) = match err.kind() {
        ErrorKind::AddrInUse => (
            "address already in use".to_owned(),
            format!("another process holds it — stop it or set {SETTING}"),
        ),
        ErrorKind::PermissionDenied => (
            err.to_string(),
            format!("ports below 1024 need privileges — use a higher port in {SETTING}"),
        ),
        ErrorKind::AddrNotAvailable => (
            err.to_string(),
            format!("this machine has no such address — set {SETTING} to one of its own"),
        ),
        _ => (err.to_string(), format!("check {SETTING}")),
    };
    format!("cannot listen on {addr}: {what}; {hint}")
}
