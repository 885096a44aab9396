//! Whose fault a failure through a proxy is, on loopback: a proxy that failed (refused, 407,
//! reset, its CONNECT unanswered) rests; a platform that is slow behind a working proxy (the
//! request went through, the answer did not come) is `upstream_unavailable` for that lookup
//! and rests nothing, on this replica or, with Redis, anywhere in the fleet.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::Request;
use axum::response::IntoResponse;
use profile_lookup::config::Settings;
use profile_lookup::upstream::egress::is_proxy_failure;
use profile_lookup::upstream::{Upstream, UpstreamError};
use tower::ServiceExt;

use crate::support::fingerprint::{Alpn, FingerprintServer};
use crate::support::forward_proxy::{ForwardProxy, Mode, TAG_HEADER};
use crate::support::{self, problem, spawn_app, spawn_upstream};

/// How long the slow page keeps the platform silent: far past the upstream timeout.
const SLOW: Duration = Duration::from_secs(5);

/// Both platforms' stand-ins; a name containing `slow` is answered only after [`SLOW`]. Every
/// request's proxy tag is recorded.
async fn slow_on_one_name() -> (support::Upstream, Arc<Mutex<Vec<String>>>) {
    let via: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = via.clone();
    let (sv, ps) = (
        stand_in::short_video::router(),
        stand_in::photo_share::router(),
    );
    let router = Router::new().fallback(move |request: Request| {
        let (sv, ps, log) = (sv.clone(), ps.clone(), log.clone());
        async move {
            let tag = request
                .headers()
                .get(TAG_HEADER)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-")
                .to_owned();
            log.lock().unwrap().push(tag);
            let path = request.uri().to_string();
            if path.contains("slow") {
                tokio::time::sleep(SLOW).await;
            }
            let router = if request.uri().path().starts_with("/@") {
                sv
            } else {
                ps
            };
            router.oneshot(request).await.into_response()
        }
    });
    (spawn_upstream(router).await, via)
}

fn through(upstream: &support::Upstream, proxies: &[&ForwardProxy]) -> Settings {
    let mut s = support::settings(upstream.addr);
    s.cache.enabled = false;
    s.upstream.proxies = proxies.iter().map(|p| p.url()).collect();
    s.upstream.timeout_ms = 400;
    s
}

const FAST: &str = "/short-video/profile/sunny.kitchen.lab";
const SLOW_NAME: &str = "/short-video/profile/slow.page";

#[tokio::test]
async fn a_platform_slow_behind_working_proxies_rests_none_of_them() {
    let (upstream, via) = slow_on_one_name().await;
    let a = ForwardProxy::start("a", Mode::Forward, None).await;
    let b = ForwardProxy::start("b", Mode::Forward, None).await;
    let app = spawn_app(through(&upstream, &[&a, &b])).await;
    let started = Instant::now();
    let response = app.get(SLOW_NAME).await;
    assert_eq!(response.status(), 500);
    assert_eq!(problem(response).await["code"], "upstream_unavailable");
    assert!(started.elapsed() < Duration::from_secs(2), "one time-out");
    assert_eq!(
        *via.lock().unwrap(),
        ["a"],
        "a slow page is not tried elsewhere"
    );
    // Neither proxy rests: the next lookups take both in turn, with no 429 anywhere.
    for _ in 0..4 {
        assert_eq!(app.get(FAST).await.status(), 200);
    }
    assert_eq!(*via.lock().unwrap(), ["a", "b", "a", "b", "a"]);
}

#[tokio::test]
async fn a_slow_platform_rests_no_proxy_anywhere_in_the_fleet() {
    let Some(redis) = crate::support::test_redis::start() else {
        return;
    };
    let (upstream, via) = slow_on_one_name().await;
    let a = ForwardProxy::start("a", Mode::Forward, None).await;
    let b = ForwardProxy::start("b", Mode::Forward, None).await;
    let mut settings = through(&upstream, &[&a, &b]);
    settings.redis.url = redis.url();
    settings.redis.key_prefix = "it-proxy-blame:".into();
    let first = spawn_app(settings.clone()).await;
    let second = spawn_app(settings).await;
    let response = first.get(SLOW_NAME).await;
    assert_eq!(response.status(), 500);
    assert_eq!(problem(response).await["code"], "upstream_unavailable");
    // No rest was written for the fleet.
    let mut conn = redis.raw().await;
    let rests: Vec<String> = redis::AsyncCommands::keys(&mut conn, "it-proxy-blame:{r:*")
        .await
        .unwrap();
    assert!(rests.is_empty(), "{rests:?}");
    // Both replicas go on through both proxies.
    for app in [&first, &second, &second, &first] {
        assert_eq!(app.get(FAST).await.status(), 200);
    }
    let seen = via.lock().unwrap().clone();
    assert!(seen[1..].contains(&"a".to_owned()) && seen[1..].contains(&"b".to_owned()));
}

/// The two ways through a CONNECT tunnel to an HTTPS platform: a proxy that never answers the
/// CONNECT failed; a tunnel that is up to a platform that never answers is the platform's.
async fn classify_connect_tunnels(client: profile_lookup::config::UpstreamClient) {
    let server = FingerprintServer::start(Alpn::Http1Only).await;
    let mut settings = Settings::default();
    settings.upstream.client = client;
    settings.upstream.ca_file = server.pki.write_ca_file();
    settings.upstream.timeout_ms = 600;
    let via = |proxy: &ForwardProxy| {
        let url = url::Url::parse(&proxy.url()).unwrap();
        Upstream::via(&settings, Some(&url)).unwrap()
    };
    // A working proxy: the tunnel is up, the request went through, the platform is silent.
    let working = ForwardProxy::start("w", Mode::Forward, None).await;
    let err = via(&working)
        .get(server.url("/hang"), Default::default())
        .await
        .unwrap_err();
    assert_eq!(working.tunnels(), 1);
    assert!(
        !is_proxy_failure(&err),
        "slow platform blamed on the proxy: {err:?}"
    );
    assert_eq!(err, UpstreamError::Timeout(Duration::from_millis(600)));
    // A proxy that accepts and never answers the CONNECT.
    let hanging = ForwardProxy::start("h", Mode::Hang, None).await;
    let err = via(&hanging)
        .get(server.url("/profile"), Default::default())
        .await
        .unwrap_err();
    assert!(
        is_proxy_failure(&err),
        "a hanging CONNECT is the proxy's: {err:?}"
    );
    assert_eq!(
        err,
        UpstreamError::ConnectTimeout(Duration::from_millis(300))
    );
    // Refused and reset before anything came back: the proxy's.
    let refusing = ForwardProxy::refusing().await;
    let err = via(&refusing)
        .get(server.url("/profile"), Default::default())
        .await
        .unwrap_err();
    assert_eq!(err, UpstreamError::Connect);
    let resetting = ForwardProxy::start("r", Mode::Reset, None).await;
    let err = via(&resetting)
        .get(server.url("/profile"), Default::default())
        .await
        .unwrap_err();
    assert!(is_proxy_failure(&err), "{err:?}");
}

#[tokio::test]
async fn the_plain_client_tells_a_failed_proxy_from_a_slow_platform() {
    classify_connect_tunnels(profile_lookup::config::UpstreamClient::Plain).await;
}

#[cfg(feature = "browser")]
#[tokio::test]
async fn the_browser_client_tells_a_failed_proxy_from_a_slow_platform() {
    classify_connect_tunnels(profile_lookup::config::UpstreamClient::Browser).await;
}
