//! `profile-lookup demo`: the real service against built-in sample upstreams on loopback.
//!
//! Nothing leaves the machine: every platform is played by its stand-in (its folder's
//! `samples`), serving invented documents. The service itself is the same code `serve` runs,
//! with a fresh random key printed at start.

use std::net::SocketAddr;

use crate::config::Settings;
use crate::platform::samples::{self, DemoCall};
use crate::platform::{Platform, Site, SiteJob, with_site};
use crate::state::AppState;

/// Where each platform's stand-in listens, by [`Platform::index`].
pub type StandIns = Vec<SocketAddr>;

/// Starts every platform's stand-in on a free loopback port; returns where, by
/// [`Platform::index`].
pub async fn spawn_stand_ins() -> std::io::Result<StandIns> {
    struct Router;
    impl SiteJob for Router {
        type Output = axum::Router;
        fn run<S: Site>(self) -> axum::Router {
            S::stand_in()
        }
    }
    let mut addrs = Vec::with_capacity(Platform::ALL.len());
    for &platform in Platform::ALL {
        addrs.push(samples::spawn(with_site(platform, Router)).await?);
    }
    Ok(addrs)
}

/// The settings the demo runs with: `base` (defaults and environment) with every platform on
/// its stand-in and one fresh key.
pub fn settings(
    mut settings: Settings,
    listen: SocketAddr,
    stand_ins: &StandIns,
    key: String,
) -> Settings {
    settings.server.listen = listen;
    settings.auth.api_keys = vec![key];
    for &platform in Platform::ALL {
        settings.platform_mut(platform).base_url =
            format!("http://{}", stand_ins[platform.index()])
                .parse()
                .expect("loopback URL");
    }
    // A short retry budget, so the throttled sample answers 429 within about a second instead of
    // retrying for the production budget (24 s with nothing printed meanwhile).
    settings.retry.max_attempts = settings.retry.max_attempts.min(2);
    settings.retry.base_delay_ms = settings.retry.base_delay_ms.min(200);
    settings.retry.max_delay_ms = settings.retry.max_delay_ms.min(1_000);
    settings.retry.max_total_ms = settings.retry.max_total_ms.min(1_500);
    settings
}

/// Starts the sample upstreams and the service on `listen` (or, when another process holds
/// it, on a free port of the same host), prints how to call it, and serves until `shutdown`
/// resolves. `base` supplies everything but the upstreams, key and address (so
/// `PROFILE_LOOKUP__…` variables still apply to a demo).
pub async fn run(
    base: Settings,
    listen: SocketAddr,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let (listener, taken) = bind_or_free_port(listen).await?;
    let addr = listener.local_addr()?;
    let stand_ins = spawn_stand_ins().await?;
    let key = format!("demo-{}", uuid::Uuid::new_v4().simple());
    let settings = settings(base, addr, &stand_ins, key.clone());
    crate::telemetry::init_logging(&settings.log);
    let state = AppState::new(settings).map_err(std::io::Error::other)?;
    print_banner(addr, taken, &key);
    crate::run(listener, state, shutdown).await
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

fn print_banner(addr: SocketAddr, taken: Option<SocketAddr>, key: &str) {
    struct Calls;
    impl SiteJob for Calls {
        type Output = Vec<DemoCall>;
        fn run<S: Site>(self) -> Vec<DemoCall> {
            S::demo_calls()
        }
    }
    let base = format!("http://{addr}");
    let mut lines = vec![
        "profile-lookup demo: the real service against a built-in sample upstream (no network)."
            .to_owned(),
    ];
    if let Some(taken) = taken {
        lines.push(format!(
            "{taken} is in use by another process, so the demo took a free port: {addr}"
        ));
    }
    lines.push(format!("Listening on {base}   API key: {key}"));
    for &platform in Platform::ALL {
        lines.push(String::new());
        lines.push(format!("{platform}:"));
        for call in with_site(platform, Calls) {
            lines.push(format!(
                "  curl -s -H 'Authorization: Bearer {key}' {base}/{platform}/profile/{}   # {}",
                call.username, call.shows
            ));
        }
    }
    lines.extend([
        String::new(),
        format!("Operations: {base}/healthz  {base}/readyz  {base}/metrics  {base}/openapi.json"),
        format!(
            "The API in a browser (Authorize with the key above, then Try it out): {base}/docs/"
        ),
        "Ctrl-C stops.".into(),
    ]);
    // A closed stdout (a piped reader that went away) must not stop the service.
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{}", lines.join("\n"));
}
