//! Short-video's two sources end to end, on loopback: the profile page, and the embed page
//! asked when the page is blocked or stateless after its route switching. Each stateless
//! kind is a block with its own reason in the metrics and in drift capture; the embed's
//! "private or missing" is never a 404 on its own; a page that says not found is answered
//! without the embed; through proxies the page is tried on each before the embed, and each
//! proxy rests at most once.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use profile_lookup::registry::Platform;
use serde_json::Value;
use stand_in::short_video as sv;
use tower::ServiceExt;

use crate::support::forward_proxy::{ForwardProxy, Mode, TAG_HEADER};
use crate::support::{self, eventually, problem, settings, spawn_app, spawn_upstream};

fn path(name: &str) -> String {
    format!("/short-video/profile/{name}")
}

/// One request as the upstream saw it: which proxy it came through (`-` straight) and its path.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// `router` behind a recorder of every request's proxy tag and path.
fn recorded(router: Router, seen: Seen) -> Router {
    Router::new().fallback(move |request: Request| {
        let (router, seen) = (router.clone(), seen.clone());
        async move {
            let via = request
                .headers()
                .get(TAG_HEADER)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-")
                .to_owned();
            seen.lock()
                .unwrap()
                .push((via, request.uri().path().to_owned()));
            router.oneshot(request).await.into_response()
        }
    })
}

fn paths(seen: &Seen) -> Vec<String> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|(_, p)| p.clone())
        .collect()
}

async fn metrics(app: &support::TestApp) -> String {
    app.get_anonymous("/metrics").await.text().await.unwrap()
}

#[tokio::test]
async fn a_page_without_state_is_answered_by_the_embed() {
    let seen = Seen::default();
    let upstream = spawn_upstream(recorded(sv::router(), seen.clone())).await;
    let app = spawn_app(settings(upstream.addr)).await;
    for user in sv::embed_users() {
        let response = app.get(&path(user.unique_id)).await;
        assert_eq!(response.status(), 200, "{}", user.unique_id);
        assert_eq!(response.headers()["x-source"], "embed");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body, sv::expected_embed_body(&user));
    }
    // The embed's like count past i32::MAX arrived negative and is read as the real count.
    assert_eq!(
        sv::EMBED_ONLY_USER.heart_count,
        Some(3_100_000_123),
        "the sample is past i32::MAX"
    );
    assert_eq!(
        paths(&seen),
        [
            "/@late.night.loops",
            "/embed/@late.night.loops",
            "/@harbor.lights.crafts",
            "/embed/@harbor.lights.crafts",
        ]
    );
    // A cached answer keeps the source that gave it.
    let hit = app.get(&path(sv::SHELL_PAGE_USER.unique_id)).await;
    assert_eq!(hit.headers()["x-cache"], "hit");
    assert_eq!(hit.headers()["x-source"], "embed");
    let text = metrics(&app).await;
    for (source, reason) in [("page", "stateless_shell"), ("page", "captcha_page")] {
        let series = format!(
            "profile_lookup_upstream_blocks_total{{platform=\"short-video\",source=\"{source}\",reason=\"{reason}\"}}"
        );
        assert!(text.contains(&series), "missing {series}");
    }
}

#[tokio::test]
async fn each_stateless_kind_is_a_block_with_its_reason_and_the_embeds_400_is_no_404() {
    let seen = Seen::default();
    let upstream = spawn_upstream(recorded(sv::router(), seen.clone())).await;
    let app = spawn_app(settings(upstream.addr)).await;
    for (name, reason) in sv::STATELESS_BLOCK_NAMES {
        let before = paths(&seen).len();
        let response = app.get(&path(name)).await;
        assert_eq!(response.status(), 429, "{name}");
        assert!(response.headers().contains_key("retry-after"), "{name}");
        assert_eq!(response.headers()["x-source"], "page", "{name}");
        assert_eq!(problem(response).await["code"], "upstream_blocked");
        // The page, then the embed, which says "private or missing": never a 404.
        assert_eq!(
            paths(&seen)[before..],
            [format!("/@{name}"), format!("/embed/@{name}")],
            "{name}"
        );
        let series = format!(
            "profile_lookup_upstream_blocks_total{{platform=\"short-video\",source=\"page\",reason=\"{reason}\"}}"
        );
        assert!(metrics(&app).await.contains(&series), "missing {series}");
    }
}

#[tokio::test]
async fn an_embed_that_cannot_be_reached_leaves_the_pages_block_standing() {
    let router = Router::new().fallback(|request: Request| async move {
        if request.uri().path().starts_with("/embed/") {
            StatusCode::SERVICE_UNAVAILABLE.into_response()
        } else {
            sv::maintenance_page().into_response()
        }
    });
    let upstream = spawn_upstream(router).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let response = app.get(&path("someone.here")).await;
    assert_eq!(response.status(), 429);
    assert!(response.headers().contains_key("retry-after"));
    assert_eq!(response.headers()["x-source"], "page");
    assert_eq!(problem(response).await["code"], "upstream_blocked");
    // The page once, the embed twice (a 5xx gets one more try).
    assert_eq!(upstream.hits(), 3);
}

#[tokio::test]
async fn a_page_that_says_not_found_is_answered_without_the_embed() {
    for code in [10202, 10221, 10204] {
        let seen = Seen::default();
        let page = sv::status_page(code);
        let router = Router::new().fallback(move |request: Request| {
            let page = page.clone();
            async move {
                if request.uri().path().starts_with("/embed/") {
                    StatusCode::BAD_REQUEST.into_response()
                } else {
                    page.into_response()
                }
            }
        });
        let upstream = spawn_upstream(recorded(router, seen.clone())).await;
        let app = spawn_app(settings(upstream.addr)).await;
        let response = app.get(&path("gone.user")).await;
        assert_eq!(response.status(), 404, "{code}");
        assert_eq!(response.headers()["x-source"], "page");
        assert_eq!(
            paths(&seen),
            ["/@gone.user"],
            "{code}: the embed is not asked"
        );
    }
}

#[tokio::test]
async fn page_alone_turns_the_embed_off_and_the_order_is_configured() {
    let seen = Seen::default();
    let upstream = spawn_upstream(recorded(sv::router(), seen.clone())).await;
    let mut s = settings(upstream.addr);
    s.platform_mut(Platform::ShortVideo).sources = vec!["page".into()];
    let app = spawn_app(s).await;
    let response = app.get(&path(sv::SHELL_PAGE_USER.unique_id)).await;
    assert_eq!(response.status(), 429);
    assert_eq!(problem(response).await["code"], "upstream_blocked");
    assert_eq!(paths(&seen), ["/@late.night.loops"]);

    let seen = Seen::default();
    let upstream = spawn_upstream(recorded(sv::router(), seen.clone())).await;
    let mut s = settings(upstream.addr);
    s.platform_mut(Platform::ShortVideo).sources = vec!["embed".into(), "page".into()];
    let app = spawn_app(s).await;
    let response = app.get(&path(sv::SMALL_USER.unique_id)).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-source"], "embed");
    // A private account: the embed says 400, the page answers.
    let response = app.get(&path(sv::PRIVATE_USER.unique_id)).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-source"], "page");
    assert_eq!(
        paths(&seen),
        [
            "/embed/@tiny.baker_7",
            "/embed/@quiet.fox_22",
            "/@quiet.fox_22"
        ]
    );

    // The embed alone, for a private account: 429 (the platform keeps the answer), not 404.
    let upstream = spawn_upstream(sv::router()).await;
    let mut s = settings(upstream.addr);
    s.platform_mut(Platform::ShortVideo).sources = vec!["embed".into()];
    let app = spawn_app(s).await;
    let response = app.get(&path(sv::PRIVATE_USER.unique_id)).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["x-source"], "embed");
    assert_eq!(problem(response).await["code"], "upstream_blocked");
}

/// An upstream whose profile pages are all the stateless shell and whose embed answers, or
/// is throttled too when `embed_blocked`.
fn shell_everywhere(embed_blocked: bool) -> Router {
    let stand_in = sv::router();
    Router::new().fallback(move |request: Request| {
        let stand_in = stand_in.clone();
        async move {
            let path = request.uri().path().to_owned();
            if !path.starts_with("/embed/") {
                return sv::stateless_shell_page(false).into_response();
            }
            if embed_blocked {
                return StatusCode::TOO_MANY_REQUESTS.into_response();
            }
            stand_in.oneshot(request).await.into_response()
        }
    })
}

async fn proxies(tags: &[&str]) -> Vec<ForwardProxy> {
    let mut out = Vec::new();
    for tag in tags {
        out.push(ForwardProxy::start(tag, Mode::Forward, None).await);
    }
    out
}

#[tokio::test]
async fn through_proxies_the_page_is_tried_on_each_before_the_embed() {
    let seen = Seen::default();
    let upstream = spawn_upstream(recorded(shell_everywhere(false), seen.clone())).await;
    let p = proxies(&["a", "b", "c"]).await;
    let mut s = settings(upstream.addr);
    s.cache.enabled = false;
    s.upstream.proxies = p.iter().map(ForwardProxy::url).collect();
    let app = spawn_app(s).await;
    let name = sv::SMALL_USER.unique_id;
    let response = app.get(&path(name)).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-source"], "embed");
    // The page through a, b and c (a and b rest), then the embed through c, which is kept.
    let page = format!("/@{name}");
    let embed = format!("/embed/@{name}");
    let expected: Vec<(String, String)> = [("a", &page), ("b", &page), ("c", &page), ("c", &embed)]
        .iter()
        .map(|(via, p)| ((*via).to_owned(), (*p).clone()))
        .collect();
    assert_eq!(*seen.lock().unwrap(), expected);
    // The next lookup goes through c alone: its page, then its embed.
    assert_eq!(app.get(&path(name)).await.status(), 200);
    assert_eq!(seen.lock().unwrap()[4..], expected[2..]);
}

#[tokio::test]
async fn blocked_everywhere_every_proxy_rests_once_and_the_caller_gets_429() {
    let seen = Seen::default();
    let upstream = spawn_upstream(recorded(shell_everywhere(true), seen.clone())).await;
    let p = proxies(&["a", "b"]).await;
    let mut s = settings(upstream.addr);
    s.cache.enabled = false;
    s.upstream.proxies = p.iter().map(ForwardProxy::url).collect();
    s.upstream.proxy_cooldown_seconds = 120;
    let app = spawn_app(s).await;
    let response = app.get(&path("anyone.at.all")).await;
    assert_eq!(response.status(), 429);
    let wait: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((100..=120).contains(&wait), "{wait}");
    let via: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(v, _)| v.clone())
        .collect();
    assert_eq!(via, ["a", "b", "b"], "page on a, page on b, embed on b");
    // Every proxy rests now: nothing is sent.
    assert_eq!(app.get(&path("anyone.at.all")).await.status(), 429);
    assert_eq!(seen.lock().unwrap().len(), 3);
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("it-sv-blocks-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn sidecars(dir: &Path) -> Vec<Value> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let path = e.ok()?.path();
            path.to_string_lossy()
                .ends_with(".meta.json")
                .then(|| serde_json::from_slice(&std::fs::read(&path).ok()?).ok())?
        })
        .collect()
}

#[tokio::test]
async fn each_stateless_kind_is_captured_with_its_verdict() {
    let upstream = spawn_upstream(sv::router()).await;
    let dir = temp_dir("capture");
    let mut s = settings(upstream.addr);
    s.platform_mut(Platform::ShortVideo).sources = vec!["page".into()];
    s.upstream.capture_dir = dir.clone();
    s.upstream.capture_max_files = 50;
    s.validate_for_serve()
        .expect("the folder is created and writable");
    let app = spawn_app(s).await;
    for (name, reason) in sv::STATELESS_BLOCK_NAMES {
        assert_eq!(app.get(&path(name)).await.status(), 429, "{name}");
        let verdict = format!("blocked: {reason}");
        assert!(
            eventually(Duration::from_secs(5), || {
                sidecars(&dir)
                    .iter()
                    .any(|s| s["verdict"] == verdict.as_str() && s["username"] == name)
            })
            .await,
            "no capture of {name} with {verdict:?}: {:?}",
            sidecars(&dir)
        );
    }
    // A throttle (429) is a block too, but no page to keep.
    assert_eq!(app.get(&path(stand_in::THROTTLED_NAME)).await.status(), 429);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(sidecars(&dir).len(), sv::STATELESS_BLOCK_NAMES.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn each_block_kind_is_logged_with_its_reason_and_source() {
    use std::process::{Command, Stdio};
    const BIN: &str = env!("CARGO_BIN_EXE_profile-lookup");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (upstream, listen) = runtime.block_on(async {
        (
            spawn_upstream(sv::router()).await,
            support::closed_port().await,
        )
    });
    let config = support::temp_file(
        "sv-block-logs",
        ".toml",
        format!(
            "[server]\nlisten = \"{listen}\"\n[auth]\napi_keys = [\"{key}\"]\n\
             [short_video]\nbase_url = \"http://{up}\"\n[cache]\nenabled = false\n\
             [log]\nformat = \"json\"\nlevel = \"info\"\n",
            key = support::KEY,
            up = upstream.addr,
        )
        .as_bytes(),
    );
    let child = Command::new(BIN)
        .args(["serve", "--config"])
        .arg(config.path())
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let base = format!("http://{listen}");
    runtime.block_on(async {
        let client = reqwest::Client::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while client.get(format!("{base}/healthz")).send().await.is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "serve did not come up"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        for (name, _) in sv::STATELESS_BLOCK_NAMES {
            let response = client
                .get(format!("{base}{}", path(name)))
                .bearer_auth(support::KEY)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 429, "{name}");
        }
    });
    let out = crate::support::terminate(child);
    let logs =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    for (_, reason) in sv::STATELESS_BLOCK_NAMES {
        let logged = logs.lines().any(|line| {
            line.contains("the platform refused a document")
                && line.contains(&format!("\"reason\":\"{reason}\""))
                && line.contains("\"source\":\"page\"")
        });
        assert!(logged, "no log line for {reason} in\n{logs}");
    }
}
