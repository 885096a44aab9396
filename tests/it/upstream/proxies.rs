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
use tower::ServiceExt;

use crate::support::forward_proxy::{ForwardProxy, Mode, TAG_HEADER};
use crate::support::{self, TestApp, problem, spawn_app, spawn_upstream};

/// One request as the upstream saw it.
#[derive(Clone, Debug)]
struct Seen {
    /// The proxy's tag (`-` when it came straight).
    via: String,
    /// Path and query.
    path: String,
    /// The `Cookie` header, or "".
    cookie: String,
}

/// A loopback upstream serving both platforms' samples, recording every request and answering
/// 429 to those that came through a blocked proxy.
struct Rig {
    upstream: support::Upstream,
    seen: Arc<Mutex<Vec<Seen>>>,
    blocked: Arc<Mutex<HashSet<String>>>,
}

impl Rig {
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn via(&self) -> Vec<String> {
        self.seen().into_iter().map(|s| s.via).collect()
    }

    fn block(&self, tag: &str) {
        self.blocked.lock().unwrap().insert(tag.to_owned());
    }
}

/// Both platforms' sample routers on one host (short-video pages are `/@name`).
fn both_platforms() -> Router {
    let (sv, ps) = (
        stand_in::short_video::router(),
        stand_in::photo_share::router(),
    );
    Router::new().fallback(move |request: Request| {
        let (sv, ps) = (sv.clone(), ps.clone());
        async move {
            let router = if request.uri().path().starts_with("/@") {
                sv
            } else {
                ps
            };
            router.oneshot(request).await.into_response()
        }
    })
}

/// `router` behind the recorder; with `set_cookie`, every answer sets `via=<proxy tag>`.
async fn rig(router: Router, set_cookie: bool) -> Rig {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let blocked: Arc<Mutex<HashSet<String>>> = Arc::default();
    let (log, deny) = (seen.clone(), blocked.clone());
    let router = router.layer(axum::middleware::from_fn(
        move |request: Request, next: axum::middleware::Next| {
            let (log, deny) = (log.clone(), deny.clone());
            async move {
                let seen = {
                    let text = |name: &str| {
                        request
                            .headers()
                            .get(name)
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("")
                            .to_owned()
                    };
                    Seen {
                        via: match text(TAG_HEADER) {
                            tag if tag.is_empty() => "-".to_owned(),
                            tag => tag,
                        },
                        path: request
                            .uri()
                            .path_and_query()
                            .map(|p| p.to_string())
                            .unwrap_or_default(),
                        cookie: text("cookie"),
                    }
                };
                let via = seen.via.clone();
                log.lock().unwrap().push(seen);
                let refused = deny.lock().unwrap().contains(&via);
                if refused {
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
    Rig {
        upstream: spawn_upstream(router).await,
        seen,
        blocked,
    }
}

/// Test settings against `rig`, through `proxies`, with the cache off (every lookup goes out).
fn through(rig: &Rig, proxies: &[&ForwardProxy]) -> Settings {
    let mut s = support::settings(rig.upstream.addr);
    s.cache.enabled = false;
    s.upstream.proxies = proxies.iter().map(|p| p.url()).collect();
    s
}

async fn proxies(tags: &[&str]) -> Vec<ForwardProxy> {
    let mut out = Vec::new();
    for tag in tags {
        out.push(ForwardProxy::start(tag, Mode::Forward, None).await);
    }
    out
}

fn short_video(name: &str) -> String {
    format!("/short-video/profile/{name}")
}

fn photo_share(name: &str) -> String {
    format!("/photo-share/profile/{name}")
}

const SV_NAME: &str = "sunny.kitchen.lab";

async fn metrics_text(app: &TestApp) -> String {
    app.get_anonymous("/metrics").await.text().await.unwrap()
}

#[tokio::test]
async fn lookups_take_the_proxies_in_turn() {
    let rig = rig(both_platforms(), false).await;
    let p = proxies(&["a", "b", "c"]).await;
    let app = spawn_app(through(&rig, &[&p[0], &p[1], &p[2]])).await;
    for _ in 0..6 {
        assert_eq!(app.get(&short_video(SV_NAME)).await.status(), 200);
    }
    assert_eq!(rig.via(), ["a", "b", "c", "a", "b", "c"]);
    assert!(p.iter().all(|p| p.forwarded() == 2));
    let metrics = metrics_text(&app).await;
    for proxy in ["0", "1", "2"] {
        assert!(
            metrics.contains(&format!(
                "profile_lookup_proxy_requests_total{{platform=\"short-video\",proxy=\"{proxy}\"}}"
            )),
            "{metrics}"
        );
    }
}

#[tokio::test]
async fn every_request_of_one_lookup_goes_through_one_proxy() {
    let rig = rig(both_platforms(), false).await;
    let p = proxies(&["a", "b"]).await;
    let app = spawn_app(through(&rig, &[&p[0], &p[1]])).await;
    // No such user: the profile JSON says `user: null`, then the page's 404 confirms it.
    for _ in 0..2 {
        assert_eq!(app.get(&photo_share("no.such.person")).await.status(), 404);
    }
    let seen = rig.seen();
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert!(seen[0].path.starts_with("/api/v1/users/web_profile_info/"));
    assert_eq!(seen[1].path, "/no.such.person/");
    assert_eq!((seen[0].via.as_str(), seen[1].via.as_str()), ("a", "a"));
    assert_eq!((seen[2].via.as_str(), seen[3].via.as_str()), ("b", "b"));
}

#[tokio::test]
async fn the_waf_challenge_and_its_cookie_stay_with_one_proxy() {
    const ANSWER: u32 = 4_321;
    let page = sv::profile_page(sv::Era::Universal, &sv::PUBLIC_USER, 64 * 1024);
    let waf = Router::new().fallback(move |request: Request| {
        let page = page.clone();
        async move {
            let cookie = request
                .headers()
                .get(header::COOKIE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            if sv::waf_cookie_is_valid(cookie, ANSWER) {
                (StatusCode::OK, page).into_response()
            } else {
                (StatusCode::OK, sv::waf_challenge_page(ANSWER)).into_response()
            }
        }
    });
    let rig = rig(waf, false).await;
    let p = proxies(&["a", "b"]).await;
    let app = spawn_app(through(&rig, &[&p[0], &p[1]])).await;
    let path = short_video(sv::PUBLIC_USER.unique_id);
    for _ in 0..3 {
        assert_eq!(app.get(&path).await.status(), 200);
    }
    let seen = rig.seen();
    let via: Vec<&str> = seen.iter().map(|s| s.via.as_str()).collect();
    // a: challenge, answer; b: its own challenge (a's cookie is not b's), answer; a: the page
    // at once, with the cookie a earned.
    assert_eq!(via, ["a", "a", "b", "b", "a"], "{seen:?}");
    assert!(
        seen[0].cookie.is_empty() && seen[2].cookie.is_empty(),
        "{seen:?}"
    );
    assert!(!seen[1].cookie.is_empty() && !seen[3].cookie.is_empty());
    assert_eq!(seen[4].cookie, seen[1].cookie);
}

#[tokio::test]
async fn a_cookie_set_through_one_proxy_goes_back_through_that_proxy_only() {
    let rig = rig(both_platforms(), true).await;
    let p = proxies(&["a", "b"]).await;
    let app = spawn_app(through(&rig, &[&p[0], &p[1]])).await;
    for _ in 0..4 {
        assert_eq!(app.get(&short_video(SV_NAME)).await.status(), 200);
    }
    let cookies: Vec<(String, String)> =
        rig.seen().into_iter().map(|s| (s.via, s.cookie)).collect();
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
    let rig = rig(both_platforms(), false).await;
    rig.block("b");
    let p = proxies(&["a", "b", "c"]).await;
    let mut settings = through(&rig, &[&p[0], &p[1], &p[2]]);
    // A backoff wait would show: the move to another proxy must not wait at all.
    settings.retry.base_delay_ms = 5_000;
    settings.retry.max_delay_ms = 5_000;
    settings.retry.max_total_ms = 20_000;
    let app = spawn_app(settings).await;
    assert_eq!(app.get(&short_video(SV_NAME)).await.status(), 200);
    let started = Instant::now();
    assert_eq!(app.get(&short_video(SV_NAME)).await.status(), 200);
    assert!(started.elapsed() < Duration::from_secs(2), "no wait");
    assert_eq!(rig.via(), ["a", "b", "c"]);
    for _ in 0..4 {
        assert_eq!(app.get(&short_video(SV_NAME)).await.status(), 200);
    }
    assert_eq!(rig.via()[3..], ["a", "c", "a", "c"], "b rests");
    // Photo-share retries throttles with backoff on the direct route; through proxies a
    // throttle moves the lookup at once, and both of its requests go through the new proxy.
    rig.block("a");
    let before = rig.seen().len();
    let started = Instant::now();
    let response = app.get(&photo_share("no.such.person")).await;
    assert_eq!(response.status(), 404);
    assert!(started.elapsed() < Duration::from_secs(2), "no backoff");
    let after: Vec<String> = rig.seen()[before..].iter().map(|s| s.via.clone()).collect();
    // Photo-share has its own turns and rests: a (blocked now), b (blocked too), then c for
    // both of the lookup's requests.
    assert_eq!(after, ["a", "b", "c", "c"]);
    let metrics = metrics_text(&app).await;
    assert!(
        metrics.contains("profile_lookup_proxy_blocks_total{platform=\"short-video\",proxy=\"1\"}")
    );
    // The gauge is process-wide and other tests move it too: its presence is what is checked.
    assert!(metrics.contains("profile_lookup_proxy_resting{platform=\"photo-share\",proxy=\"0\"}"));
}

#[tokio::test]
async fn with_every_proxy_resting_the_caller_gets_429_and_retry_after() {
    let rig = rig(both_platforms(), false).await;
    rig.block("a");
    rig.block("b");
    let p = proxies(&["a", "b"]).await;
    let mut settings = through(&rig, &[&p[0], &p[1]]);
    settings.upstream.proxy_cooldown_seconds = 120;
    let app = spawn_app(settings).await;
    let response = app.get(&short_video(SV_NAME)).await;
    assert_eq!(response.status(), 429);
    let wait: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((100..=120).contains(&wait), "{wait}");
    assert_eq!(problem(response).await["code"], "upstream_blocked");
    // The page on a, the page on b, then (b being the last) the embed on b.
    assert_eq!(rig.via(), ["a", "b", "b"]);
    // Resting proxies are not asked at all.
    let response = app.get(&short_video(SV_NAME)).await;
    assert_eq!(response.status(), 429);
    assert!(response.headers().contains_key("retry-after"));
    assert_eq!(rig.via().len(), 3);
}

#[tokio::test]
async fn failing_proxies_rest_and_never_hold_the_request_past_its_deadline() {
    let rig = rig(both_platforms(), false).await;
    let refusing = ForwardProxy::refusing().await;
    let auth = ForwardProxy::start("auth", Mode::Always407, None).await;
    let resetting = ForwardProxy::start("resetting", Mode::Reset, None).await;
    let good = ForwardProxy::start("good", Mode::Forward, None).await;
    let mut settings = through(&rig, &[&refusing, &auth, &resetting, &good]);
    settings.upstream.timeout_ms = 500;
    settings.server.request_timeout_ms = 5_000;
    let app = spawn_app(settings).await;
    let started = Instant::now();
    assert_eq!(app.get(&short_video(SV_NAME)).await.status(), 200);
    let took = started.elapsed();
    assert!(
        took < Duration::from_millis(1_500),
        "quick failures: {took:?}"
    );
    assert_eq!(auth.refused_auth(), 1);
    assert_eq!(rig.via(), ["good"]);
    // Every failed proxy rests: the next lookups go straight to the good one.
    let started = Instant::now();
    for _ in 0..3 {
        assert_eq!(app.get(&short_video(SV_NAME)).await.status(), 200);
    }
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(rig.via(), ["good"; 4]);
    assert_eq!(auth.refused_auth(), 1);

    // A lone proxy that takes a plain-HTTP request and never answers cannot be told from a
    // platform that is slow behind it (a CONNECT left unanswered can: `proxy_blame`): the
    // caller hears 500 `upstream_unavailable` within the upstream time-out, and nothing rests.
    let hanging = ForwardProxy::start("hanging", Mode::Hang, None).await;
    let mut settings = through(&rig, &[&hanging]);
    settings.upstream.timeout_ms = 300;
    let app = spawn_app(settings).await;
    for _ in 0..2 {
        let started = Instant::now();
        let response = app.get(&photo_share("no.such.person")).await;
        assert_eq!(response.status(), 500);
        assert_eq!(problem(response).await["code"], "upstream_unavailable");
        assert!(started.elapsed() < Duration::from_millis(1_500));
    }
}

#[tokio::test]
async fn https_goes_through_a_connect_tunnel_with_basic_auth() {
    use crate::support::fingerprint::{Alpn, FingerprintServer, PROFILE_PAGE};
    let server = FingerprintServer::start(Alpn::Http1Only).await;
    let proxy = ForwardProxy::start("t", Mode::Forward, Some(("agent", "tunnel-pw"))).await;
    let mut settings = Settings::default();
    settings.upstream.ca_file = server.pki.write_ca_file();
    settings.upstream.timeout_ms = 3_000;
    let url = url::Url::parse(&proxy.url()).unwrap();
    let upstream = profile_lookup::upstream::Upstream::via(&settings, Some(&url)).unwrap();
    let response = upstream
        .get(server.url("/profile"), Default::default())
        .await
        .unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(response.body, PROFILE_PAGE.as_bytes());
    assert_eq!((proxy.tunnels(), proxy.refused_auth()), (1, 0));
    // Without the credentials the tunnel is refused, and that is a connect failure.
    let bare = url::Url::parse(&proxy.url_without_credentials()).unwrap();
    let upstream = profile_lookup::upstream::Upstream::via(&settings, Some(&bare)).unwrap();
    let err = upstream
        .get(server.url("/profile"), Default::default())
        .await
        .unwrap_err();
    assert_eq!(err, profile_lookup::upstream::UpstreamError::Connect);
    assert_eq!(proxy.refused_auth(), 1);
}

/// The password every proxy of [`credentials_appear_in_no_log_metric_error_or_problem`] uses.
const SECRET: &str = "pw-Zq8vK2-never-shown";

#[test]
fn credentials_appear_in_no_log_metric_error_or_problem() {
    use std::process::{Command, Stdio};
    const BIN: &str = env!("CARGO_BIN_EXE_profile-lookup");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (rig, good, always407, refusing, listen) = runtime.block_on(async {
        (
            rig(both_platforms(), false).await,
            ForwardProxy::start("good", Mode::Forward, Some(("agent", SECRET))).await,
            ForwardProxy::start("407", Mode::Always407, Some(("agent", SECRET))).await,
            ForwardProxy::refusing().await,
            support::closed_port().await,
        )
    });
    let with_secret = |p: &ForwardProxy| format!("http://agent:{SECRET}@{}", p.addr);
    let config = std::env::temp_dir().join(format!(
        "profile-lookup-proxies-{}-{}.toml",
        std::process::id(),
        fastrand::u64(..)
    ));
    std::fs::write(
        &config,
        format!(
            "[server]\nlisten = \"{listen}\"\n\
             [auth]\napi_keys = [\"{key}\"]\n\
             [short_video]\nbase_url = \"http://{up}\"\nproxies = [\"{g}\", \"{a}\"]\n\
             [photo_share]\nbase_url = \"http://{up}\"\nproxies = [\"{r}\"]\n\
             [upstream]\nproxy_cooldown_seconds = 60\ntimeout_ms = 2000\n\
             [cache]\nenabled = false\n\
             [log]\nformat = \"json\"\nlevel = \"debug\"\n",
            key = support::KEY,
            up = rig.upstream.addr,
            g = with_secret(&good),
            a = with_secret(&always407),
            r = with_secret(&refusing),
        ),
    )
    .unwrap();
    let child = Command::new(BIN)
        .args(["serve", "--config"])
        .arg(&config)
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let base = format!("http://{listen}");
    let mut seen_text = String::new();
    runtime.block_on(async {
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while client.get(format!("{base}/healthz")).send().await.is_err() {
            assert!(Instant::now() < deadline, "serve did not come up");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let get = |path: String| {
            client
                .get(format!("{base}{path}"))
                .bearer_auth(support::KEY)
                .send()
        };
        // Through the good proxy (with its credentials), then the 407 one (rested, and the
        // lookup moves to the good one).
        for _ in 0..2 {
            let response = get(short_video(SV_NAME)).await.unwrap();
            assert_eq!(response.status(), 200);
        }
        // Photo-share's only proxy refuses connections: 429 and a problem body.
        let response = get(photo_share("no.such.person")).await.unwrap();
        assert_eq!(response.status(), 429);
        seen_text.push_str(&response.text().await.unwrap());
        let metrics = client
            .get(format!("{base}/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(metrics.contains("proxy=\"1\""), "{metrics}");
        seen_text.push_str(&metrics);
    });
    assert_eq!(rig.via(), ["good", "good"]);
    assert_eq!(always407.refused_auth(), 1, "the 407 proxy was asked once");
    let out = crate::support::terminate(child);
    let logs =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(logs.contains("proxy rests"), "{logs}");
    let basic = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(format!("agent:{SECRET}"))
    };
    for (what, text) in [("logs", &logs), ("metrics and problem", &seen_text)] {
        for needle in [SECRET, "agent:pw", basic.as_str()] {
            assert!(!text.contains(needle), "credentials leaked into the {what}");
        }
    }

    // A proxy the config refuses is named by position, its password masked.
    std::fs::write(
        &config,
        format!(
            "[auth]\napi_keys = [\"k\"]\n[upstream]\nproxies = [\"http://h:1\", \"ftp://agent:{SECRET}@h:21\"]\n"
        ),
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["serve", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("upstream.proxies[1]"), "{stderr}");
    assert!(!stderr.contains(SECRET), "{stderr}");
    let _ = std::fs::remove_file(&config);
}

#[tokio::test]
async fn a_fleet_shares_proxy_rests_through_redis() {
    let Some(redis) = crate::support::test_redis::start() else {
        return;
    };
    let rig = rig(both_platforms(), false).await;
    rig.block("a");
    let a = ForwardProxy::start("a", Mode::Forward, Some(("agent", SECRET))).await;
    let b = ForwardProxy::start("b", Mode::Forward, Some(("agent", SECRET))).await;
    let mut base = through(&rig, &[&a, &b]);
    base.redis.url = redis.url();
    base.redis.key_prefix = "it-proxies:".into();
    let first = spawn_app(base.clone()).await;
    let second = spawn_app(base).await;
    // The first replica meets the block on a, rests it fleet-wide, and moves to b.
    assert_eq!(first.get(&short_video(SV_NAME)).await.status(), 200);
    assert_eq!(rig.via(), ["a", "b"]);
    // The second replica never tries a, though its own turn starts there.
    for _ in 0..4 {
        assert_eq!(second.get(&short_video(SV_NAME)).await.status(), 200);
    }
    assert_eq!(rig.via(), ["a", "b", "b", "b", "b", "b"]);
    assert_eq!(a.forwarded(), 1);
    // Redis names the proxy by position; no key or value holds its URL or credentials.
    let mut conn = redis.raw().await;
    let keys: Vec<String> = redis::AsyncCommands::keys(&mut conn, "*").await.unwrap();
    let rest = "it-proxies:{r:short-video}:0";
    assert!(keys.iter().any(|k| k == rest), "{keys:?}");
    let left: i64 = redis::AsyncCommands::pttl(&mut conn, rest).await.unwrap();
    assert!(left > 0 && left <= 300_000, "{left}");
    for key in &keys {
        let dump: Vec<u8> = redis::cmd("DUMP")
            .arg(key)
            .query_async(&mut conn)
            .await
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&dump);
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
            let via = request
                .headers()
                .get(TAG_HEADER)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned();
            if regions.lock().unwrap().contains(&via) {
                sv::status_page(10231).into_response()
            } else {
                page.into_response()
            }
        }
    });
    let rig = rig(router, false).await;
    let p = proxies(&["a", "b", "c"]).await;
    let app = spawn_app(through(&rig, &[&p[0], &p[1], &p[2]])).await;
    let path = short_video(sv::PUBLIC_USER.unique_id);
    assert_eq!(app.get(&path).await.status(), 200);
    assert_eq!(rig.via(), ["a", "b"]);
    // Every proxy left is region-locked too: 451, not 429.
    locked
        .lock()
        .unwrap()
        .extend(["b".to_owned(), "c".to_owned()]);
    let response = app.get(&path).await;
    assert_eq!(response.status(), 451);
    assert_eq!(problem(response).await["code"], "region_locked");
    assert_eq!(rig.via(), ["a", "b", "c", "b"]);
}

/// The browser-grade client goes through the same routes: absolute-form HTTP and a CONNECT
/// tunnel, with credentials.
#[cfg(feature = "browser")]
#[tokio::test]
async fn the_browser_client_goes_through_proxies_too() {
    use crate::support::fingerprint::{Alpn, FingerprintServer, PROFILE_PAGE};
    use profile_lookup::config::UpstreamClient;
    let rig = rig(both_platforms(), false).await;
    let p = ForwardProxy::start("a", Mode::Forward, Some(("agent", SECRET))).await;
    let mut settings = through(&rig, &[&p]);
    settings.upstream.client = UpstreamClient::Browser;
    let app = spawn_app(settings).await;
    assert_eq!(app.get(&short_video(SV_NAME)).await.status(), 200);
    assert_eq!(rig.via(), ["a"]);

    let server = FingerprintServer::start(Alpn::H2AndHttp1).await;
    let mut settings = Settings::default();
    settings.upstream.client = UpstreamClient::Browser;
    settings.upstream.ca_file = server.pki.write_ca_file();
    settings.upstream.timeout_ms = 3_000;
    let url = url::Url::parse(&p.url()).unwrap();
    let upstream = profile_lookup::upstream::Upstream::via(&settings, Some(&url)).unwrap();
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
    let rig = rig(both_platforms(), false).await;
    rig.block("a");
    let p = proxies(&["a", "b"]).await;
    let mut settings = through(&rig, &[&p[0], &p[1]]);
    settings.redis.url = redis.url();
    settings.redis.key_prefix = "it-proxies-down:".into();
    let app = spawn_app(settings).await;
    redis.kill();
    // Stopped mid-conversation (SIGSTOP) would cost a Redis time-out per call; killed, calls
    // fail at once. Either way the lookups go on on the replica's own rests.
    let started = Instant::now();
    for _ in 0..4 {
        assert_eq!(app.get(&short_video(SV_NAME)).await.status(), 200);
    }
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(rig.via(), ["a", "b", "b", "b", "b"]);
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
    let rig = rig(router, false).await;
    let p = proxies(&["a", "b"]).await;
    let mut settings = through(&rig, &[&p[0], &p[1]]);
    settings.upstream.max_body_bytes = 16 * 1024;
    let app = spawn_app(settings).await;
    for name in ["bad.gzip", "too.large", "bad.gzip", "too.large"] {
        let response = app.get(&short_video(name)).await;
        assert_eq!(response.status(), 500, "{name}");
        assert_eq!(problem(response).await["code"], "upstream_unavailable");
    }
    let via = rig.via();
    assert!(!via.is_empty() && via.iter().all(|v| v == "a" || v == "b"));
    assert!(via.contains(&"a".to_owned()) && via.contains(&"b".to_owned()));
    let first_on = |tag: &str| via.iter().position(|v| v == tag).unwrap();
    assert!(first_on("a") < first_on("b"));
    // Neither proxy rested: the turns went on a, b, a, b (a retried fault stays on its proxy).
    let mut turns = via.clone();
    turns.dedup();
    assert_eq!(turns, ["a", "b", "a", "b"], "{via:?}");
}
