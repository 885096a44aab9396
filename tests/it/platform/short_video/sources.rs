//! Short-video's two sources end to end, on loopback: the profile page, and the embed page
//! asked when the page is blocked or stateless after its route switching. Each stateless
//! kind is a block with its own reason in the metrics and in drift capture; the embed's
//! "private or missing" is never a 404 on its own; a page that says not found is answered
//! without the embed; through proxies the page is tried on each before the embed, and each
//! proxy rests at most once.

use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use profile_lookup::registry::Platform;
use stand_in::short_video as sv;

use crate::support::binary::Binary;
use crate::support::capture_dir::CaptureDir;
use crate::support::forward_proxy::ForwardProxy;
use crate::support::routers::{plain, split, status};
use crate::support::{self, AppBuilder, ShortVideo, TestApp, eventually};

/// The app on `router` with short-video's sources set to `sources`.
fn with_sources(router: Router, sources: &[&str]) -> AppBuilder {
    TestApp::on(router).with(|s| {
        s.platform_mut(Platform::ShortVideo).sources =
            sources.iter().map(|s| (*s).to_owned()).collect();
    })
}

/// The series of `profile_lookup_upstream_blocks_total` for short-video's `source` and `reason`.
fn blocks_series(source: &str, reason: &str) -> String {
    format!(
        "profile_lookup_upstream_blocks_total{{platform=\"short-video\",source=\"{source}\",reason=\"{reason}\"}}"
    )
}

#[tokio::test]
async fn a_page_without_state_is_answered_by_the_embed() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::a_page_without_state_is_answered_by_the_embed"
    )) {
        return;
    }
    let app = TestApp::on(sv::router()).start().await;
    for user in sv::embed_users() {
        app.lookup(ShortVideo, user.unique_id)
            .await
            .about(user.unique_id)
            .expect_profile(&sv::expected_embed_body(&user))
            .expect_header("x-source", "embed");
    }
    // The embed's like count past i32::MAX arrived negative and is read as the real count.
    assert_eq!(
        sv::EMBED_ONLY_USER.heart_count,
        Some(3_100_000_123),
        "the sample is past i32::MAX"
    );
    assert_eq!(
        app.upstream().paths(),
        [
            "/@late.night.loops",
            "/embed/@late.night.loops",
            "/@harbor.lights.crafts",
            "/embed/@harbor.lights.crafts",
        ]
    );
    // A cached answer keeps the source that gave it.
    app.lookup(ShortVideo, sv::SHELL_PAGE_USER.unique_id)
        .await
        .expect_header("x-cache", "hit")
        .expect_header("x-source", "embed");
    let text = app.metrics().await;
    for reason in ["stateless_shell", "captcha_page"] {
        let series = blocks_series("page", reason);
        assert_eq!(support::series_value(&text, &series), Some(1.0), "{text}");
    }
}

#[tokio::test]
async fn each_stateless_kind_is_a_block_with_its_reason_and_the_embeds_400_is_no_404() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::each_stateless_kind_is_a_block_with_its_reason_and_the_embeds_400_is_no_404"
    )) {
        return;
    }
    let app = TestApp::on(sv::router()).start().await;
    let mut counted = std::collections::HashMap::<&str, f64>::new();
    for (name, reason) in sv::STATELESS_BLOCK_NAMES {
        let before = app.hits();
        app.lookup(ShortVideo, name)
            .await
            .about(name)
            .expect_blocked()
            .expect_header("x-source", "page");
        // The page, then the embed, which says "private or missing": never a 404.
        assert_eq!(
            app.upstream().paths()[before..],
            [format!("/@{name}"), format!("/embed/@{name}")],
            "{name}"
        );
        let series = blocks_series("page", reason);
        let expected = *counted
            .entry(reason)
            .and_modify(|n| *n += 1.0)
            .or_insert(1.0);
        let text = app.metrics().await;
        assert_eq!(
            support::series_value(&text, &series),
            Some(expected),
            "{text}"
        );
    }
}

#[tokio::test]
async fn an_embed_that_cannot_be_reached_leaves_the_pages_block_standing() {
    let upstream = split(
        "/embed/",
        status(StatusCode::SERVICE_UNAVAILABLE),
        plain(StatusCode::OK, sv::maintenance_page()),
    );
    let app = TestApp::on(upstream).start().await;
    app.lookup(ShortVideo, "someone.here")
        .await
        .expect_blocked()
        .expect_header("x-source", "page");
    // The page once, the embed twice (a 5xx gets one more try).
    assert_eq!(app.hits(), 3);
}

#[tokio::test]
async fn a_page_that_says_not_found_is_answered_without_the_embed() {
    for code in [10202, 10221, 10204] {
        let upstream = split(
            "/embed/",
            status(StatusCode::BAD_REQUEST),
            plain(StatusCode::OK, sv::status_page(code)),
        );
        let app = TestApp::on(upstream).start().await;
        app.lookup(ShortVideo, "gone.user")
            .await
            .about(code)
            .expect_status(404)
            .expect_header("x-source", "page");
        assert_eq!(
            app.upstream().paths(),
            ["/@gone.user"],
            "{code}: the embed is not asked"
        );
    }
}

#[tokio::test]
async fn page_alone_turns_the_embed_off_and_the_order_is_configured() {
    let app = with_sources(sv::router(), &["page"]).start().await;
    app.lookup(ShortVideo, sv::SHELL_PAGE_USER.unique_id)
        .await
        .expect_blocked();
    assert_eq!(app.upstream().paths(), ["/@late.night.loops"]);

    let app = with_sources(sv::router(), &["embed", "page"]).start().await;
    app.lookup(ShortVideo, sv::SMALL_USER.unique_id)
        .await
        .expect_status(200)
        .expect_header("x-source", "embed");
    // A private account: the embed says 400, the page answers.
    app.lookup(ShortVideo, sv::PRIVATE_USER.unique_id)
        .await
        .expect_status(200)
        .expect_header("x-source", "page");
    assert_eq!(
        app.upstream().paths(),
        [
            "/embed/@tiny.baker_7",
            "/embed/@quiet.fox_22",
            "/@quiet.fox_22"
        ]
    );

    // The embed alone, for a private account: 429 (the platform keeps the answer), not 404.
    let app = with_sources(sv::router(), &["embed"]).start().await;
    app.lookup(ShortVideo, sv::PRIVATE_USER.unique_id)
        .await
        .expect_blocked()
        .expect_header("x-source", "embed");
}

/// An upstream whose profile pages are all the stateless shell and whose embed answers, or
/// is throttled too when `embed_blocked`.
fn shell_everywhere(embed_blocked: bool) -> Router {
    let embed = if embed_blocked {
        status(StatusCode::TOO_MANY_REQUESTS)
    } else {
        sv::router()
    };
    split(
        "/embed/",
        embed,
        plain(StatusCode::OK, sv::stateless_shell_page(false)),
    )
}

#[tokio::test]
async fn through_proxies_the_page_is_tried_on_each_before_the_embed() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::through_proxies_the_page_is_tried_on_each_before_the_embed"
    )) {
        return;
    }
    let p = ForwardProxy::start_each(&["a", "b", "c"]).await;
    let app = TestApp::on(shell_everywhere(false))
        .through(&p)
        .start()
        .await;
    let name = sv::SMALL_USER.unique_id;
    app.lookup(ShortVideo, name)
        .await
        .expect_status(200)
        .expect_header("x-source", "embed");
    // The page through a, b and c, then the embed through c. Blame cannot yet tell whose the
    // page's refusals are (one name): the lookup moves on without resting a or b, and since
    // the page never read this name where another route did, none of them rests.
    let page = format!("/@{name}");
    let embed = format!("/embed/@{name}");
    let expected: Vec<(String, String)> = [("a", &page), ("b", &page), ("c", &page), ("c", &embed)]
        .iter()
        .map(|(via, p)| ((*via).to_owned(), (*p).clone()))
        .collect();
    let seen = || -> Vec<(String, String)> {
        app.upstream()
            .seen()
            .into_iter()
            .map(|s| (s.via.clone(), s.path().to_owned()))
            .collect()
    };
    assert_eq!(seen(), expected);
    let metrics = app.metrics().await;
    for proxy in ["0", "1", "2"] {
        let resting =
            format!("profile_lookup_proxy_resting{{platform=\"short-video\",proxy=\"{proxy}\"}} 1");
        assert!(
            !metrics.contains(&resting),
            "proxy {proxy} rests: {metrics}"
        );
    }
    // The next lookup goes through every proxy again (none rests), and is answered.
    app.lookup(ShortVideo, name)
        .await
        .expect_status(200)
        .expect_header("x-source", "embed");
}

#[tokio::test]
async fn blocked_everywhere_every_proxy_rests_once_and_the_caller_gets_429() {
    let p = ForwardProxy::start_each(&["a", "b"]).await;
    let app = TestApp::on(shell_everywhere(true))
        .through(&p)
        .with(|s| s.upstream.proxy_cooldown_seconds = 120)
        .start()
        .await;
    // One name refused everywhere, with nothing to compare: nobody's yet, nothing rests.
    app.lookup(ShortVideo, "anyone.at.all")
        .await
        .expect_status(429);
    assert_eq!(
        app.upstream().via(),
        ["a", "b", "b"],
        "page on a, page on b, embed on b"
    );
    // A second name refused everywhere too: the platform's. Every proxy rests, and the caller
    // is told when the first is back.
    let wait = app
        .lookup(ShortVideo, "someone.else")
        .await
        .expect_status(429)
        .retry_after();
    assert!((100..=120).contains(&wait), "{wait}");
    // Every proxy rests now: nothing is sent.
    let hits = app.hits();
    app.lookup(ShortVideo, "anyone.at.all")
        .await
        .expect_status(429);
    assert_eq!(app.hits(), hits);
}

/// A service capturing into a folder of its own, asking the page alone.
async fn capturing_page(dir: &CaptureDir) -> TestApp {
    with_sources(sv::router(), &["page"])
        .capturing_into(dir)
        .start()
        .await
}

/// Each kind of stateless block is captured with its verdict. Each name has a service and a
/// folder of its own: the writer saves one capture at a time and skips one that finds it busy
/// (by design), and a capture's sidecar shows before its writer is free again, so a second
/// lookup on the same service could race the first one's save.
#[tokio::test]
async fn each_stateless_kind_is_captured_with_its_verdict() {
    for (name, reason) in sv::STATELESS_BLOCK_NAMES {
        let dir = CaptureDir::new();
        let app = capturing_page(&dir).await;
        app.lookup(ShortVideo, name)
            .await
            .about(name)
            .expect_status(429);
        let verdict = format!("blocked: {reason}");
        assert!(
            eventually(Duration::from_secs(5), || {
                dir.sidecars()
                    .iter()
                    .any(|s| s["verdict"] == verdict.as_str() && s["username"] == name)
            })
            .await,
            "no capture of {name} with {verdict:?}: {:?}",
            dir.sidecars()
        );
        assert_eq!(dir.sidecars().len(), 1, "{name}: one capture");
    }
    // A throttle (429) is a block too, but no page to keep.
    let dir = CaptureDir::new();
    let app = capturing_page(&dir).await;
    app.lookup(ShortVideo, stand_in::THROTTLED_NAME)
        .await
        .expect_status(429);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(dir.sidecars().is_empty(), "{:?}", dir.sidecars());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_block_kind_is_logged_with_its_reason_and_source() {
    let upstream = support::spawn_upstream(sv::router()).await;
    let listen = support::closed_port().await;
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
    let serve = Binary::serve_with(config.path())
        .logs()
        .start_serving(listen, support::KEY);
    for (name, _) in sv::STATELESS_BLOCK_NAMES {
        serve
            .lookup(ShortVideo, name)
            .await
            .about(name)
            .expect_status(429);
    }
    let out = serve.stop().await;
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

/// A "not found" is read from the page's state only (its status codes), never from an HTTP 404:
/// a 404 login page on both sources leaves the stale copy of a profile standing and is not
/// remembered as gone (the rule the photo-share JSON's 404 follows too).
#[tokio::test]
async fn a_404_without_the_pages_not_found_state_is_no_verdict_on_the_user() {
    let login = "<!DOCTYPE html><html><head><title>Log in</title></head><body>\
                 <form action=\"/login\"><input name=\"password\"></form></body></html>";
    let (router, platform) = crate::support::routers::switchable(vec![
        sv::router(),
        crate::support::routers::fixed(StatusCode::NOT_FOUND, login),
    ]);
    let app = TestApp::on(router)
        .with(support::stale_after_a_second)
        .start()
        .await;
    let name = sv::SMALL_USER.unique_id;
    let fresh = app.lookup(ShortVideo, name).await.expect_status(200).json();
    platform.set(1);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let stale = app
        .lookup(ShortVideo, name)
        .await
        .expect_status(200)
        .expect_header("x-cache", "stale");
    assert_eq!(stale.json(), fresh);
    // A name with no copy: an error, not a 404.
    let answer = app.lookup(ShortVideo, "somebody.else").await;
    assert_ne!(answer.status(), 404, "{}", answer.text());
    platform.set(0);
    app.lookup(ShortVideo, name).await.expect_status(200);
}
