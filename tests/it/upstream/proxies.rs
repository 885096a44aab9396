//! Proxies, on loopback: the app's lookups go through forward proxies the tests start
//! ([`crate::support::forward_proxy`]) to a loopback upstream that records which proxy each request
//! came through (`x-test-proxy`) and can block one chosen proxy. In turn across lookups, one
//! proxy per lookup, rests on blocks and on proxies that fail, 429 when all rest, cookies kept
//! per proxy, rests shared by a fleet, and no credential anywhere it could leak.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use profile_lookup::config::Settings;
use stand_in::short_video as sv;

use crate::support::binary::Binary;
use crate::support::forward_proxy::{ForwardProxy, GATEWAY_PASSWORD, Mode, tag_of};
use crate::support::routers::{behind_the_waf, both_platforms};
use crate::support::{self, AppBuilder, PhotoShare, ShortVideo, TestApp, series_value};

/// The proxies whose requests an upstream made by [`guarded`] refuses.
#[derive(Clone, Default)]
struct Blocked(Arc<Mutex<HashSet<String>>>);

impl Blocked {
    fn block(&self, tag: &str) {
        self.0.lock().unwrap().insert(tag.to_owned());
    }
}

/// `router` answering 429 to every request that came through a blocked proxy; with
/// `set_cookie`, every answer sets `via=<proxy tag>`.
fn guarded(router: Router, set_cookie: bool) -> (Router, Blocked) {
    let blocked = Blocked::default();
    let deny = blocked.clone();
    let router = router.layer(axum::middleware::from_fn(
        move |request: Request, next: axum::middleware::Next| {
            let deny = deny.clone();
            async move {
                let via = tag_of(request.headers()).unwrap_or("-").to_owned();
                if deny.0.lock().unwrap().contains(&via) {
                    return (StatusCode::TOO_MANY_REQUESTS, "slow down").into_response();
                }
                let mut response = next.run(request).await;
                if set_cookie
                    && let Ok(value) =
                        HeaderValue::from_str(&format!("via={via}; Path=/; Max-Age=600"))
                {
                    response.headers_mut().append(header::SET_COOKIE, value);
                }
                response
            }
        },
    ));
    (router, blocked)
}

/// The app on both stand-ins through `proxies`, cache off, the proxies in `blocked` refused.
fn on_both_through<'p>(
    proxies: impl IntoIterator<Item = &'p ForwardProxy>,
) -> (AppBuilder, Blocked) {
    let (router, blocked) = guarded(both_platforms(), false);
    (TestApp::on(router).through(proxies), blocked)
}

const SV_NAME: &str = "sunny.kitchen.lab";

#[tokio::test]
async fn lookups_take_the_proxies_in_turn() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::lookups_take_the_proxies_in_turn"
    )) {
        return;
    }
    let p = ForwardProxy::start_each(&["a", "b", "c"]).await;
    let (app, _) = on_both_through(&p);
    let app = app.start().await;
    for _ in 0..6 {
        app.lookup(ShortVideo, SV_NAME).await.expect_status(200);
    }
    assert_eq!(app.upstream().via(), ["a", "b", "c", "a", "b", "c"]);
    assert!(p.iter().all(|p| p.forwarded() == 2));
    let metrics = app.metrics().await;
    for proxy in ["0", "1", "2"] {
        let series = format!(
            "profile_lookup_proxy_requests_total{{platform=\"short-video\",proxy=\"{proxy}\"}}"
        );
        assert_eq!(series_value(&metrics, &series), Some(2.0), "{metrics}");
    }
}

#[tokio::test]
async fn every_request_of_one_lookup_goes_through_one_proxy() {
    let p = ForwardProxy::start_each(&["a", "b"]).await;
    let app = on_both_through(&p).0.start().await;
    // No such user: the profile JSON says `user: null`, then the page's 404 confirms it.
    for _ in 0..2 {
        app.lookup(PhotoShare, "no.such.person")
            .await
            .expect_status(404);
    }
    let seen = app.upstream().seen();
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert!(
        seen[0]
            .target
            .starts_with("/api/v1/users/web_profile_info/")
    );
    assert_eq!(seen[1].target, "/no.such.person/");
    assert_eq!((seen[0].via.as_str(), seen[1].via.as_str()), ("a", "a"));
    assert_eq!((seen[2].via.as_str(), seen[3].via.as_str()), ("b", "b"));
}

#[tokio::test]
async fn the_waf_challenge_and_its_cookie_stay_with_one_proxy() {
    let p = ForwardProxy::start_each(&["a", "b"]).await;
    let app = TestApp::on(behind_the_waf(4_321)).through(&p).start().await;
    for _ in 0..3 {
        app.lookup(ShortVideo, sv::PUBLIC_USER.unique_id)
            .await
            .expect_status(200);
    }
    let seen = app.upstream().seen();
    let via: Vec<&str> = seen.iter().map(|s| s.via.as_str()).collect();
    let cookie: Vec<&str> = seen.iter().map(|s| s.header("cookie")).collect();
    // a: challenge, answer; b: its own challenge (a's cookie is not b's), answer; a: the page
    // at once, with the cookie a earned.
    assert_eq!(via, ["a", "a", "b", "b", "a"], "{seen:?}");
    assert!(cookie[0].is_empty() && cookie[2].is_empty(), "{seen:?}");
    assert!(!cookie[1].is_empty() && !cookie[3].is_empty());
    assert_eq!(cookie[4], cookie[1]);
}

#[tokio::test]
async fn a_cookie_set_through_one_proxy_goes_back_through_that_proxy_only() {
    let p = ForwardProxy::start_each(&["a", "b"]).await;
    let (router, _) = guarded(both_platforms(), true);
    let app = TestApp::on(router).through(&p).start().await;
    for _ in 0..4 {
        app.lookup(ShortVideo, SV_NAME).await.expect_status(200);
    }
    let cookies: Vec<(String, String)> = app
        .upstream()
        .seen()
        .into_iter()
        .map(|s| (s.via.clone(), s.header("cookie").to_owned()))
        .collect();
    assert_eq!(
        cookies,
        [
            ("a".into(), "".into()),
            ("b".into(), "".into()),
            ("a".into(), "via=a".into()),
            ("b".into(), "via=b".into()),
        ]
    );
}

#[tokio::test]
async fn a_blocked_proxy_rests_and_the_lookup_moves_on_at_once() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::a_blocked_proxy_rests_and_the_lookup_moves_on_at_once"
    )) {
        return;
    }
    let p = ForwardProxy::start_each(&["a", "b", "c"]).await;
    let (app, blocked) = on_both_through(&p);
    blocked.block("b");
    // A backoff wait would show: the move to another proxy must not wait at all.
    let app = app
        .with(|s| {
            s.retry.base_delay_ms = 5_000;
            s.retry.max_delay_ms = 5_000;
            s.retry.max_total_ms = 20_000;
        })
        .start()
        .await;
    app.lookup(ShortVideo, SV_NAME).await.expect_status(200);
    let (answer, took) = app.timed_lookup(ShortVideo, SV_NAME).await;
    answer.expect_status(200);
    assert!(took < Duration::from_secs(2), "no wait");
    assert_eq!(app.upstream().via(), ["a", "b", "c"]);
    for _ in 0..4 {
        app.lookup(ShortVideo, SV_NAME).await.expect_status(200);
    }
    assert_eq!(app.upstream().via()[3..], ["a", "c", "a", "c"], "b rests");
    // Photo-share retries throttles with backoff on the direct route; through proxies a
    // throttle moves the lookup at once, and both of its requests go through the new proxy.
    blocked.block("a");
    let before = app.hits();
    let (answer, took) = app.timed_lookup(PhotoShare, "no.such.person").await;
    answer.expect_status(404);
    assert!(took < Duration::from_secs(2), "no backoff");
    // Photo-share has its own turns and rests: a (blocked now), b (blocked too), then c for
    // both of the lookup's requests.
    assert_eq!(app.upstream().via()[before..], ["a", "b", "c", "c"]);
    // This test's process is its own, so the counts and gauges are this test's alone.
    let metrics = app.metrics().await;
    let series = |name: &str, platform: &str, proxy: &str| {
        let series = format!("{name}{{platform=\"{platform}\",proxy=\"{proxy}\"}}");
        series_value(&metrics, &series)
    };
    assert_eq!(
        series("profile_lookup_proxy_blocks_total", "short-video", "1"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        series("profile_lookup_proxy_resting", "short-video", "1"),
        Some(1.0),
        "{metrics}"
    );
    // Photo-share's two refusals are counted as the platform's blocks of its JSON.
    let refused = r#"profile_lookup_upstream_blocks_total{platform="photo-share",source="json",reason="http_429"}"#;
    assert_eq!(series_value(&metrics, refused), Some(2.0), "{metrics}");
    // The name refused on a and b and read on c, in one lookup: the refusals were the
    // routes', and a and b rest for photo-share (c, which read, does not).
    for (proxy, expected) in [("0", 1.0), ("1", 1.0), ("2", 0.0)] {
        assert_eq!(
            series("profile_lookup_proxy_blocks_total", "photo-share", proxy),
            Some(expected),
            "blocks of {proxy}: {metrics}"
        );
        assert_eq!(
            series("profile_lookup_proxy_resting", "photo-share", proxy),
            Some(expected),
            "{proxy} resting: {metrics}"
        );
    }
}

#[tokio::test]
async fn with_every_proxy_resting_the_caller_gets_429_and_retry_after() {
    let p = ForwardProxy::start_each(&["a", "b"]).await;
    let (app, blocked) = on_both_through(&p);
    blocked.block("a");
    blocked.block("b");
    let app = app
        .with(|s| s.upstream.proxy_cooldown_seconds = 120)
        .start()
        .await;
    // One name refused everywhere, nothing to compare with: nobody's yet, nothing rests. The
    // page on a, the page on b, then (b being the last) the embed on b.
    app.lookup(ShortVideo, SV_NAME).await.expect_blocked();
    assert_eq!(app.upstream().via(), ["a", "b", "b"]);
    // Another name refused everywhere: the platform's, and every proxy rests.
    let answer = app
        .lookup(ShortVideo, stand_in::short_video::SMALL_USER.unique_id)
        .await
        .expect_blocked();
    let wait = answer.retry_after();
    assert!((100..=120).contains(&wait), "{wait}");
    // Resting proxies are not asked at all.
    let hits = app.hits();
    app.lookup(ShortVideo, SV_NAME)
        .await
        .expect_status(429)
        .expect_has("retry-after");
    assert_eq!(app.hits(), hits);
}

#[tokio::test]
async fn failing_proxies_rest_and_never_hold_the_request_past_its_deadline() {
    let refusing = ForwardProxy::refusing().await;
    let auth = ForwardProxy::start("auth", Mode::Always407, None).await;
    let resetting = ForwardProxy::start("resetting", Mode::Reset, None).await;
    let good = ForwardProxy::start("good", Mode::Forward, None).await;
    let (app, _) = on_both_through([&refusing, &auth, &resetting, &good]);
    let app = app
        .with(|s| {
            s.upstream.timeout_ms = 500;
            s.server.request_timeout_ms = 5_000;
        })
        .start()
        .await;
    let (answer, took) = app.timed_lookup(ShortVideo, SV_NAME).await;
    answer.expect_status(200);
    assert!(
        took < Duration::from_millis(1_500),
        "quick failures: {took:?}"
    );
    assert_eq!(auth.refused_auth(), 1);
    assert_eq!(app.upstream().via(), ["good"]);
    // Every failed proxy rests: the next lookups go straight to the good one.
    let started = Instant::now();
    for _ in 0..3 {
        app.lookup(ShortVideo, SV_NAME).await.expect_status(200);
    }
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(app.upstream().via(), ["good"; 4]);
    assert_eq!(auth.refused_auth(), 1);

    // A lone proxy that takes a plain-HTTP request and never answers cannot be told from a
    // platform that is slow behind it (a CONNECT left unanswered can: `proxy_blame`): the
    // caller hears 500 `upstream_unavailable` within the upstream time-out, and nothing rests.
    let hanging = ForwardProxy::start("hanging", Mode::Hang, None).await;
    let app = TestApp::on(app.upstream())
        .through([&hanging])
        .with(|s| s.upstream.timeout_ms = 300)
        .start()
        .await;
    for _ in 0..2 {
        let (answer, took) = app.timed_lookup(PhotoShare, "no.such.person").await;
        answer.expect_problem(500, "upstream_unavailable");
        assert!(took < Duration::from_millis(1_500));
    }
}

/// The plain or browser-grade client of `settings` through `proxy` (its credentials or none).
fn client_via(settings: &Settings, proxy: &str) -> profile_lookup::upstream::Upstream {
    let url = url::Url::parse(proxy).unwrap();
    profile_lookup::upstream::Upstream::via(settings, Some(&url)).unwrap()
}

#[tokio::test]
async fn https_goes_through_a_connect_tunnel_with_basic_auth() {
    use crate::support::fingerprint::{Alpn, FingerprintServer};
    let server = FingerprintServer::start(Alpn::Http1Only).await;
    let proxy = ForwardProxy::start("t", Mode::Forward, Some(("agent", "tunnel-pw"))).await;
    let settings = crate::upstream::browser_client::settings_for(&server);
    server
        .expect_profile_page(&client_via(&settings, &proxy.url()))
        .await;
    assert_eq!((proxy.tunnels(), proxy.refused_auth()), (1, 0));
    // Without the credentials the tunnel is refused, and that is a connect failure.
    let err = client_via(&settings, &proxy.url_without_credentials())
        .get(server.url("/profile"), Default::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, profile_lookup::upstream::UpstreamError::Connect(..)),
        "{err:?}"
    );
    assert_eq!(proxy.refused_auth(), 1);
}

/// The password every proxy of [`credentials_appear_in_no_log_metric_error_or_problem`] uses.
const SECRET: &str = "pw-Zq8vK2-never-shown";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_appear_in_no_log_metric_error_or_problem() {
    let upstream = support::spawn_upstream(both_platforms()).await;
    let good = ForwardProxy::start("good", Mode::Forward, Some(("agent", SECRET))).await;
    let always407 = ForwardProxy::start("407", Mode::Always407, Some(("agent", SECRET))).await;
    let refusing = ForwardProxy::refusing().await;
    let gateway = ForwardProxy::start("gw", Mode::Gateway, None).await;
    let listen = support::closed_port().await;
    let with_secret = |p: &ForwardProxy| format!("http://agent:{SECRET}@{}", p.addr);
    let config = support::temp_file(
        "profile-lookup-proxies-",
        ".toml",
        format!(
            "[server]\nlisten = \"{listen}\"\n\
             [auth]\napi_keys = [\"{key}\"]\n\
             [short_video]\nbase_url = \"http://{up}\"\nproxies = [\"{g}\", \"{a}\", \"{gw}\"]\n\
             [photo_share]\nbase_url = \"http://{up}\"\nproxies = [\"{r}\"]\n\
             [upstream]\nproxy_cooldown_seconds = 60\ntimeout_ms = 2000\n\
             [cache]\nenabled = false\n\
             [log]\nformat = \"json\"\nlevel = \"debug\"\n",
            key = support::KEY,
            up = upstream.addr,
            g = with_secret(&good),
            a = with_secret(&always407),
            gw = gateway.url(),
            r = with_secret(&refusing),
        )
        .as_bytes(),
    );
    let serve = Binary::serve_with(config.path())
        .logs()
        .start_serving(listen, support::KEY);
    // Through the good proxy (with its credentials), then the 407 one (rested, and the lookup
    // moves to the gateway, with a session id in its user name), then the good one.
    for _ in 0..3 {
        serve.lookup(ShortVideo, SV_NAME).await.expect_status(200);
    }
    // Photo-share's only proxy refuses connections: the platform was never asked, 500 and a
    // problem body (never a block).
    let problem = serve
        .lookup(PhotoShare, "no.such.person")
        .await
        .expect_status(500)
        .text();
    let metrics = serve.get_anonymous("/metrics").await.text();
    assert!(metrics.contains("proxy=\"1\""), "{metrics}");
    let via = upstream.via();
    assert_eq!(
        (via.len(), via[0].as_str(), via[2].as_str()),
        (3, "good", "good")
    );
    // The gateway's exit: the session id the lookup used, which must show nowhere.
    let session = via[1].clone();
    assert_eq!(session.len(), 8, "{session}");
    assert_eq!(always407.refused_auth(), 1, "the 407 proxy was asked once");
    let out = serve.stop().await;
    let logs =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(logs.contains("proxy rests"), "{logs}");
    let basic = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(format!("agent:{SECRET}"))
    };
    let seen_text = problem + &metrics;
    for (what, text) in [("logs", &logs), ("metrics and problem", &seen_text)] {
        for needle in [
            SECRET,
            "agent:pw",
            basic.as_str(),
            &session,
            GATEWAY_PASSWORD,
        ] {
            assert!(!text.contains(needle), "credentials leaked into the {what}");
        }
    }

    // A proxy the config refuses is named by position, its password masked.
    let config = support::temp_file(
        "profile-lookup-proxies-",
        ".toml",
        format!(
            "[auth]\napi_keys = [\"k\"]\n[upstream]\nproxies = [\"http://h:1\", \"ftp://agent:{SECRET}@h:21\"]\n"
        )
        .as_bytes(),
    );
    let out = Binary::new(&["serve", "--config"])
        .arg(config.path())
        .output();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("upstream.proxies[1]"), "{stderr}");
    assert!(!stderr.contains(SECRET), "{stderr}");
}

#[tokio::test]
async fn a_fleet_shares_proxy_rests_through_redis() {
    let Some(redis) = crate::support::test_redis::start() else {
        return;
    };
    let a = ForwardProxy::start("a", Mode::Forward, Some(("agent", SECRET))).await;
    let b = ForwardProxy::start("b", Mode::Forward, Some(("agent", SECRET))).await;
    let (app, blocked) = on_both_through([&a, &b]);
    blocked.block("a");
    let apps = app.on_redis(&redis.url()).replicas(2).await;
    let (first, second) = (&apps[0], &apps[1]);
    // The first replica meets the block on a, rests it fleet-wide, and moves to b.
    first.lookup(ShortVideo, SV_NAME).await.expect_status(200);
    assert_eq!(first.upstream().via(), ["a", "b"]);
    // The second replica never tries a, though its own turn starts there.
    for _ in 0..4 {
        second.lookup(ShortVideo, SV_NAME).await.expect_status(200);
    }
    assert_eq!(first.upstream().via(), ["a", "b", "b", "b", "b", "b"]);
    assert_eq!(a.forwarded(), 1);
    // Redis names the proxy by position; no key or value holds its URL or credentials.
    let keys = redis.every_key("*").await;
    let rest = keys
        .iter()
        .find(|(k, _, _)| k == "it:{r:short-video}:0")
        .unwrap_or_else(|| panic!("{keys:?}"));
    let left = rest.1;
    assert!(left > 0 && left <= 300_000, "{left}");
    for (key, _, dump) in &keys {
        let text = String::from_utf8_lossy(dump);
        for needle in [SECRET, "agent", &a.addr.port().to_string()] {
            assert!(!key.contains(needle) && !text.contains(needle), "{key}");
        }
    }
}

#[tokio::test]
async fn a_region_lock_is_tried_on_another_proxy_then_answered_451() {
    // Proxy "a" is in a region the profile is withheld from; "b" is not, until it is too.
    let locked: Arc<Mutex<HashSet<String>>> = Arc::new(Mutex::new(HashSet::from(["a".into()])));
    let regions = locked.clone();
    let page = sv::profile_page(sv::Era::Universal, &sv::PUBLIC_USER, 64 * 1024);
    let router = Router::new().fallback(move |request: Request| {
        let (regions, page) = (regions.clone(), page.clone());
        async move {
            let via = tag_of(request.headers()).unwrap_or("").to_owned();
            if regions.lock().unwrap().contains(&via) {
                sv::status_page(10231).into_response()
            } else {
                page.into_response()
            }
        }
    });
    let p = ForwardProxy::start_each(&["a", "b", "c"]).await;
    let app = TestApp::on(router).through(&p).start().await;
    let name = sv::PUBLIC_USER.unique_id;
    app.lookup(ShortVideo, name).await.expect_status(200);
    assert_eq!(app.upstream().via(), ["a", "b"]);
    // Every proxy left is region-locked too: 451, not 429.
    locked
        .lock()
        .unwrap()
        .extend(["b".to_owned(), "c".to_owned()]);
    app.lookup(ShortVideo, name)
        .await
        .expect_problem(451, "region_locked");
    assert_eq!(app.upstream().via(), ["a", "b", "c", "b"]);
}

/// The browser-grade client goes through the same routes: absolute-form HTTP and a CONNECT
/// tunnel, with credentials.
#[cfg(feature = "browser")]
#[tokio::test]
async fn the_browser_client_goes_through_proxies_too() {
    use crate::support::fingerprint::{Alpn, FingerprintServer, PROFILE_PAGE};
    use profile_lookup::config::UpstreamClient;
    let p = ForwardProxy::start("a", Mode::Forward, Some(("agent", SECRET))).await;
    let (app, _) = on_both_through([&p]);
    let app = app
        .with(|s| s.upstream.client = UpstreamClient::Browser)
        .start()
        .await;
    app.lookup(ShortVideo, SV_NAME).await.expect_status(200);
    assert_eq!(app.upstream().via(), ["a"]);

    let server = FingerprintServer::start(Alpn::H2AndHttp1).await;
    let mut settings = Settings::default();
    settings.upstream.client = UpstreamClient::Browser;
    settings.upstream.ca_file = server.pki.write_ca_file();
    settings.upstream.timeout_ms = 3_000;
    let upstream = client_via(&settings, &p.url());
    assert!(upstream.is_browser());
    let response = upstream
        .get(server.url("/profile"), Default::default())
        .await
        .unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(response.body, PROFILE_PAGE.as_bytes());
    assert_eq!((p.tunnels(), p.refused_auth()), (1, 0));
}

#[tokio::test]
async fn with_redis_down_a_replica_keeps_its_own_rests() {
    let Some(mut redis) = crate::support::test_redis::start() else {
        return;
    };
    let p = ForwardProxy::start_each(&["a", "b"]).await;
    let (app, blocked) = on_both_through(&p);
    blocked.block("a");
    let app = app.on_redis(&redis.url()).start().await;
    redis.kill();
    // Stopped mid-conversation (SIGSTOP) would cost a Redis time-out per call; killed, calls
    // fail at once. Either way the lookups go on on the replica's own rests.
    let started = Instant::now();
    for _ in 0..4 {
        app.lookup(ShortVideo, SV_NAME).await.expect_status(200);
    }
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(app.upstream().via(), ["a", "b", "b", "b", "b"]);
}

#[tokio::test]
async fn a_body_the_platform_broke_rests_no_proxy() {
    // Invalid gzip and an oversized body are the platform's doing: the lookup fails, and the
    // proxy keeps its turns.
    let router = Router::new().fallback(|request: Request| async move {
        let path = request.uri().path().to_owned();
        if path.contains("gzip") {
            (
                [(header::CONTENT_ENCODING, "gzip")],
                "this is not gzip at all",
            )
                .into_response()
        } else {
            vec![b'x'; 64 * 1024].into_response()
        }
    });
    let p = ForwardProxy::start_each(&["a", "b"]).await;
    let app = TestApp::on(router)
        .through(&p)
        .with(|s| s.upstream.max_body_bytes = 16 * 1024)
        .start()
        .await;
    for name in ["bad.gzip", "too.large", "bad.gzip", "too.large"] {
        app.lookup(ShortVideo, name)
            .await
            .about(name)
            .expect_problem(500, "upstream_unavailable");
    }
    let via = app.upstream().via();
    assert!(!via.is_empty() && via.iter().all(|v| v == "a" || v == "b"));
    assert!(via.contains(&"a".to_owned()) && via.contains(&"b".to_owned()));
    let first_on = |tag: &str| via.iter().position(|v| v == tag).unwrap();
    assert!(first_on("a") < first_on("b"));
    // Neither proxy rested: the turns went on a, b, a, b (a retried fault stays on its proxy).
    let mut turns = via.clone();
    turns.dedup();
    assert_eq!(turns, ["a", "b", "a", "b"], "{via:?}");
}
