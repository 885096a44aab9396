//! `profile-lookup demo`: the real service against a built-in sample upstream on loopback.
//!
//! Nothing leaves the machine: both platforms are played by [`upstream`], serving the invented
//! documents of [`samples`]. The service itself is the same code `serve` runs, with a fresh
//! random key printed at start.

pub mod samples;
pub mod upstream;

use std::net::SocketAddr;

use crate::config::Settings;
use crate::state::AppState;

/// The settings the demo runs with: `base` (defaults and environment) with both platforms on
/// the sample upstream and one fresh key.
pub fn settings(
    mut settings: Settings,
    listen: SocketAddr,
    short_video: SocketAddr,
    photo_share: SocketAddr,
    key: String,
) -> Settings {
    settings.server.listen = listen;
    settings.auth.api_keys = vec![key];
    settings.short_video.base_url = format!("http://{short_video}")
        .parse()
        .expect("loopback URL");
    settings.photo_share.base_url = format!("http://{photo_share}")
        .parse()
        .expect("loopback URL");
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
    let short_video = upstream::spawn(upstream::short_video_router()).await?;
    let photo_share = upstream::spawn(upstream::photo_share_router()).await?;
    let key = format!("demo-{}", uuid::Uuid::new_v4().simple());
    let settings = settings(base, addr, short_video, photo_share, key.clone());
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
    use samples::{photo_share as ps, short_video as sv};
    let base = format!("http://{addr}");
    let curl = |path: String| format!("  curl -s -H 'Authorization: Bearer {key}' {base}{path}");
    let moved = taken.map(|taken| {
        format!("{taken} is in use by another process, so the demo took a free port: {addr}")
    });
    let lines = [
        "profile-lookup demo: the real service against a built-in sample upstream (no network)."
            .to_owned(),
        format!("Listening on {base}   API key: {key}"),
        String::new(),
        "Short-video: a public, a private and a missing user:".into(),
        curl(format!(
            "/short-video/profile/{}",
            sv::PUBLIC_USER.unique_id
        )),
        curl(format!(
            "/short-video/profile/{}",
            sv::PRIVATE_USER.unique_id.to_uppercase()
        )),
        curl(format!("/short-video/profile/{}", sv::NOT_FOUND_USER)),
        "Photo-share: a public, a private and a missing user:".into(),
        curl(format!("/photo-share/profile/{}", ps::PUBLIC_USER.username)),
        curl(format!(
            "/photo-share/profile/{}",
            ps::PRIVATE_USER.username
        )),
        curl(format!("/photo-share/profile/{}", ps::NOT_FOUND_NAME)),
        "A throttling platform (429 upstream_blocked with Retry-After, after one retry, ~1 s), and a bad name (400 invalid_username):".into(),
        curl(format!("/photo-share/profile/{}", upstream::THROTTLED_NAME)),
        curl("/short-video/profile/..%2Fadmin".into()),
        format!("Operations: {base}/healthz  {base}/readyz  {base}/metrics  {base}/openapi.json"),
        format!("The API in a browser (Authorize with the key above, then Try it out): {base}/docs/"),
        "Ctrl-C stops.".into(),
    ];
    // A closed stdout (a piped reader that went away) must not stop the service.
    use std::io::Write;
    let mut text = lines.join("\n");
    if let Some(moved) = moved {
        text.insert_str(lines[0].len() + 1, &format!("{moved}\n"));
    }
    let _ = writeln!(std::io::stdout().lock(), "{text}");
}
