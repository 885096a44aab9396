//! Whose fault a failure through a proxy is, on loopback: a proxy that failed (refused, 407,
//! reset, its CONNECT unanswered) rests; a platform that is slow behind a working proxy (the
//! request went through, the answer did not come) is `upstream_unavailable` for that lookup
//! and rests nothing, on this replica or, with Redis, anywhere in the fleet.

use std::time::Duration;

use axum::extract::Request;
use profile_lookup::config::Settings;
use profile_lookup::upstream::egress::is_proxy_failure;
use profile_lookup::upstream::{Upstream, UpstreamError};

use crate::support::fingerprint::{Alpn, FingerprintServer};
use crate::support::forward_proxy::{ForwardProxy, Mode};
use crate::support::routers::both_platforms;
use crate::support::{AppBuilder, ShortVideo, TestApp};

/// How long the slow page keeps the platform silent: far past the upstream timeout.
const SLOW: Duration = Duration::from_secs(5);

/// Both platforms' stand-ins, a name containing `slow` answered only after [`SLOW`], through
/// two working proxies `a` and `b` (returned: they must outlive the app), with an upstream
/// timeout of 400 ms.
async fn slow_on_one_name() -> (AppBuilder, Vec<ForwardProxy>) {
    let router = both_platforms().layer(axum::middleware::from_fn(
        |request: Request, next: axum::middleware::Next| async move {
            if request.uri().to_string().contains("slow") {
                tokio::time::sleep(SLOW).await;
            }
            next.run(request).await
        },
    ));
    let proxies = ForwardProxy::start_each(&["a", "b"]).await;
    let app = TestApp::on(router)
        .through(&proxies)
        .with(|s| s.upstream.timeout_ms = 400);
    (app, proxies)
}

const FAST: &str = "sunny.kitchen.lab";
const SLOW_NAME: &str = "slow.page";

#[tokio::test]
async fn a_platform_slow_behind_working_proxies_rests_none_of_them() {
    let (app, _proxies) = slow_on_one_name().await;
    let app = app.start().await;
    let (answer, took) = app.timed_lookup(ShortVideo, SLOW_NAME).await;
    answer.expect_problem(500, "upstream_unavailable");
    assert!(took < Duration::from_secs(2), "one time-out per proxy");
    assert_eq!(
        app.upstream().via(),
        ["a", "b", "b"],
        "a silent route is left for another one, the other is silent too, then the next \
         source (silent too) on the last route"
    );
    // Neither proxy rests (every route tried was silent: the platform is slow): the next
    // lookups take both in turn, with no 429 anywhere.
    for _ in 0..4 {
        app.lookup(ShortVideo, FAST).await.expect_status(200);
    }
    assert_eq!(app.upstream().via(), ["a", "b", "b", "a", "b", "a", "b"]);
}

#[tokio::test]
async fn a_slow_platform_rests_no_proxy_anywhere_in_the_fleet() {
    let Some(redis) = crate::support::test_redis::start() else {
        return;
    };
    let (app, _proxies) = slow_on_one_name().await;
    let apps = app.on_redis(&redis.url()).replicas(2).await;
    let (first, second) = (&apps[0], &apps[1]);
    first
        .lookup(ShortVideo, SLOW_NAME)
        .await
        .expect_problem(500, "upstream_unavailable");
    // No rest was written for the fleet.
    let rests = redis.keys("it:{r:*").await;
    assert!(rests.is_empty(), "{rests:?}");
    // Both replicas go on through both proxies.
    for app in [first, second, second, first] {
        app.lookup(ShortVideo, FAST).await.expect_status(200);
    }
    let seen = first.upstream().via();
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
    // No response head in time: a silence, which blame places by comparison.
    assert_eq!(err, UpstreamError::NoHead(Duration::from_millis(600)));
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
    assert!(matches!(err, UpstreamError::Connect(..)), "{err:?}");
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
