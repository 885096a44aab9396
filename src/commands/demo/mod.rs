//! `profile-lookup demo`: the real service against the platforms' stand-ins on loopback.
//!
//! Nothing leaves the machine: every platform is played by its stand-in from the `stand-in`
//! crate (found by the platform's label), serving invented documents. The service itself is
//! the same code `serve` runs, with a fresh random key printed at start. This module only
//! orchestrates: `stand_ins` starts them, `settings` points the service at them, `banner`
//! says how to call it.
//!
//! The canary runs every [`CANARY_INTERVAL_SECONDS`] against the stand-ins with each
//! platform's sample accounts, and each stand-in has a drift switch
//! ([`stand_in::drift`]): `POST /__drift/on` on the stand-in (or `demo --drift-after 30s`)
//! makes one of its sources serve a moved shape, so `/status` shows that source turn
//! `changed`, lookups ask the other source first, and all comes back when it is turned off.

mod banner;
mod settings;
mod stand_ins;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use super::runtime;
use crate::config::Settings;
use crate::platform::Platform;
use crate::server;
use crate::state::AppState;

pub use settings::{CANARY_INTERVAL_SECONDS, settings};
pub use stand_ins::{StandIns, spawn_stand_ins};

/// `profile-lookup demo [--listen ADDR] [--drift-after DURATION]`: the service on loopback
/// against the stand-ins (which serve moved shapes from `drift_after` on, for as long again).
pub fn demo(listen: Option<SocketAddr>, drift_after: Option<Duration>) -> ExitCode {
    let base = match Settings::load(None) {
        Ok(settings) => settings,
        Err(err) => {
            eprintln!("profile-lookup demo: {err}");
            return ExitCode::from(2);
        }
    };
    let listen = listen.unwrap_or(base.server.listen);
    runtime().block_on(async move {
        match run(base, listen, drift_after, server::shutdown_signal()).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("profile-lookup demo: {err}");
                ExitCode::FAILURE
            }
        }
    })
}

/// Starts the stand-ins and the service on `listen` (or, when another process holds
/// it, on a free port of the same host), prints how to call it, and serves until `shutdown`
/// resolves. `base` supplies everything but the upstreams, key, address and canary (so
/// `PROFILE_LOOKUP__…` variables still apply to a demo). With `drift_after`, every stand-in
/// serves its drifted shape from then on, for as long again.
pub async fn run(
    base: Settings,
    listen: SocketAddr,
    drift_after: Option<Duration>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let (listener, taken) = bind_or_free_port(listen).await?;
    let addr = listener.local_addr()?;
    let stand_ins = spawn_stand_ins().await?;
    let key = format!("demo-{}", uuid::Uuid::new_v4().simple());
    let settings = settings(base, addr, &stand_ins, key.clone());
    crate::telemetry::init_logging(&settings.log);
    let state = AppState::new(settings).map_err(std::io::Error::other)?;
    banner::print_banner(addr, taken, &key, &stand_ins, drift_after);
    if let Some(after) = drift_after {
        tokio::spawn(drift_for_a_while(stand_ins, after));
    }
    crate::run(listener, state, shutdown).await
}

/// Turns every stand-in's drift on after `after`, and off again after as long.
async fn drift_for_a_while(stand_ins: StandIns, after: Duration) {
    for on in [true, false] {
        tokio::time::sleep(after).await;
        for &platform in Platform::ALL {
            stand_ins.drift(platform).set(on);
        }
        let said = if on {
            "the stand-ins now serve moved shapes: watch /status"
        } else {
            "the stand-ins serve their usual shapes again"
        };
        tracing::warn!("demo drift: {said}");
    }
}

/// Binds `preferred`; when another process holds it, a free port on the same IP instead (a
/// newcomer's demo should start, not fail on a busy 8080). Also returns the address that was
/// taken, if any, so the banner can say so.
async fn bind_or_free_port(
    preferred: SocketAddr,
) -> std::io::Result<(tokio::net::TcpListener, Option<SocketAddr>)> {
    use tokio::net::TcpListener;
    let cannot = |addr: SocketAddr, err: std::io::Error| {
        std::io::Error::new(
            err.kind(),
            format!(
                "cannot listen on {addr}: {err}; choose another address with --listen \
                 (127.0.0.1:0 takes any free port)"
            ),
        )
    };
    match TcpListener::bind(preferred).await {
        Ok(listener) => Ok((listener, None)),
        Err(err) if err.kind() == std::io::ErrorKind::AddrInUse => {
            let any = SocketAddr::new(preferred.ip(), 0);
            let listener = TcpListener::bind(any).await.map_err(|e| cannot(any, e))?;
            Ok((listener, Some(preferred)))
        }
        Err(err) => Err(cannot(preferred, err)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn until(limit: Duration, f: impl Fn() -> bool) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        while !f() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        f()
    }

    #[tokio::test]
    async fn drift_after_turns_every_stand_in_on_then_off_again() {
        let stand_ins = spawn_stand_ins().await.unwrap();
        let all = |on: bool| {
            let stand_ins = stand_ins.clone();
            move || {
                Platform::ALL
                    .iter()
                    .all(|&p| stand_ins.drift(p).is_on() == on)
            }
        };
        assert!(all(false)());
        tokio::spawn(drift_for_a_while(
            stand_ins.clone(),
            Duration::from_millis(100),
        ));
        assert!(
            until(Duration::from_secs(5), all(true)).await,
            "on after a while"
        );
        assert!(
            until(Duration::from_secs(5), all(false)).await,
            "and off again"
        );
    }
}
