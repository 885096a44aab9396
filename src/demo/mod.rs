//! `profile-lookup demo`: the real service against built-in sample upstreams on loopback.
//!
//! Nothing leaves the machine: every platform is played by its stand-in (its folder's
//! `samples`), serving invented documents. The service itself is the same code `serve` runs,
//! with a fresh random key printed at start.
//!
//! The canary runs every [`CANARY_INTERVAL_SECONDS`] against the stand-ins with each
//! platform's sample accounts, and each stand-in has a drift switch
//! ([`crate::platform::samples::drift`]): `POST /__drift/on` on the stand-in (or `demo
//! --drift-after 30s`) makes one of its sources serve a moved shape, so `/status` shows that
//! source turn `changed`, lookups ask the other source first, and all comes back when it is
//! turned off.

use std::net::SocketAddr;
use std::time::Duration;

use crate::config::Settings;
use crate::config::canary::AccountList;
use crate::platform::samples::drift::{CONTROL_PATH, DriftSwitch, switchable};
use crate::platform::samples::{self, DemoCall};
use crate::platform::{Platform, Site, SiteJob, with_site};
use crate::state::AppState;

/// Seconds between the demo's canary rounds.
pub const CANARY_INTERVAL_SECONDS: u64 = 10;

/// Every platform's stand-in: where it listens and its drift switch, by [`Platform::index`].
#[derive(Clone, Debug)]
pub struct StandIns {
    addrs: Vec<SocketAddr>,
    switches: Vec<DriftSwitch>,
}

impl StandIns {
    /// Where `platform`'s stand-in listens.
    pub fn addr(&self, platform: Platform) -> SocketAddr {
        self.addrs[platform.index()]
    }

    /// `platform`'s stand-in's drift switch.
    pub fn drift(&self, platform: Platform) -> &DriftSwitch {
        &self.switches[platform.index()]
    }
}

/// Starts every platform's stand-in (with its drift switch, off) on a free loopback port.
pub async fn spawn_stand_ins() -> std::io::Result<StandIns> {
    struct Router(DriftSwitch);
    impl SiteJob for Router {
        type Output = axum::Router;
        fn run<S: Site>(self) -> axum::Router {
            switchable(S::stand_in(), S::drifted_stand_in(), self.0)
        }
    }
    let mut stand_ins = StandIns {
        addrs: Vec::with_capacity(Platform::ALL.len()),
        switches: Vec::with_capacity(Platform::ALL.len()),
    };
    for &platform in Platform::ALL {
        let switch = DriftSwitch::default();
        let router = with_site(platform, Router(switch.clone()));
        stand_ins.addrs.push(samples::spawn(router).await?);
        stand_ins.switches.push(switch);
    }
    Ok(stand_ins)
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
        settings.platform_mut(platform).base_url = format!("http://{}", stand_ins.addr(platform))
            .parse()
            .expect("loopback URL");
    }
    // The canary watches the samples (invented accounts, so their names may be shown).
    settings.canary.interval_seconds = CANARY_INTERVAL_SECONDS;
    settings.canary.public_names = true;
    settings.canary.accounts = Platform::ALL
        .iter()
        .map(|&p| {
            let names = with_site(p, CanaryAccounts);
            (p.section().to_owned(), AccountList::Names(names))
        })
        .collect();
    // A short retry budget, so the throttled sample answers 429 within about a second instead of
    // retrying for the production budget (24 s with nothing printed meanwhile).
    settings.retry.max_attempts = settings.retry.max_attempts.min(2);
    settings.retry.base_delay_ms = settings.retry.base_delay_ms.min(200);
    settings.retry.max_delay_ms = settings.retry.max_delay_ms.min(1_000);
    settings.retry.max_total_ms = settings.retry.max_total_ms.min(1_500);
    settings
}

/// The sample accounts a platform's canary watches in the demo.
struct CanaryAccounts;

impl SiteJob for CanaryAccounts {
    type Output = Vec<String>;
    fn run<S: Site>(self) -> Vec<String> {
        S::canary_accounts()
            .into_iter()
            .map(str::to_owned)
            .collect()
    }
}

/// Starts the sample upstreams and the service on `listen` (or, when another process holds
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
    print_banner(addr, taken, &key, &stand_ins, drift_after);
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

fn print_banner(
    addr: SocketAddr,
    taken: Option<SocketAddr>,
    key: &str,
    stand_ins: &StandIns,
    drift_after: Option<Duration>,
) {
    struct Drifted;
    impl SiteJob for Drifted {
        type Output = &'static str;
        fn run<S: Site>(self) -> &'static str {
            S::DRIFTED_SOURCE
        }
    }
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
        format!(
            "Canary: every {CANARY_INTERVAL_SECONDS} s each sample account goes through each source; \
             the verdicts: {base}/status (a browser gets a page)."
        ),
        "Make a stand-in serve a moved page shape (the canary finds it changed; lookups then ask \
         the other source first), and undo it with .../off:"
            .to_owned(),
    ]);
    for &platform in Platform::ALL {
        // Not a `curl` line of its own: those call the service, this one a stand-in.
        lines.push(format!(
            "  {platform} {} moves: curl -s -X POST http://{}{CONTROL_PATH}/on",
            with_site(platform, Drifted),
            stand_ins.addr(platform)
        ));
    }
    if let Some(after) = drift_after {
        lines.push(format!(
            "Drift: every stand-in switches to its moved shape in {} s, and back {} s later.",
            after.as_secs_f64(),
            after.as_secs_f64()
        ));
    }
    lines.extend([
        String::new(),
        format!("Operations: {base}/healthz  {base}/readyz  {base}/metrics  {base}/status  {base}/openapi.json"),
        format!(
            "The API in a browser (Authorize with the key above, then Try it out): {base}/docs/"
        ),
        "Ctrl-C stops.".into(),
    ]);
    // A closed stdout (a piped reader that went away) must not stop the service.
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{}", lines.join("\n"));
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

    #[tokio::test]
    async fn the_demo_watches_each_platforms_sample_accounts_every_ten_seconds() {
        let stand_ins = spawn_stand_ins().await.unwrap();
        let listen = "127.0.0.1:0".parse().unwrap();
        let s = settings(Settings::default(), listen, &stand_ins, "k".into());
        assert!(s.canary.is_on() && s.canary.public_names);
        assert_eq!(s.canary.interval_seconds, CANARY_INTERVAL_SECONDS);
        for &p in Platform::ALL {
            assert!(!s.canary.usernames(p).is_empty(), "{p}");
        }
        s.validate().expect("the demo's settings are valid");
    }
}
