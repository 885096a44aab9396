//! The binary itself: `extract` on every real captured shape and on the project's samples,
//! `serve` refusing a config without keys, and `demo` answering real lookups offline.
//!
//! The real captures are third-party data read in place from `../shared/fixtures/real`; when
//! that folder is absent those cases print a notice and are skipped.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use crate::support::binary::{Binary, Running};
use crate::support::{PhotoShare, ShortVideo, profile_path, real};

fn temp_file(name: &str, bytes: &[u8]) -> tempfile::NamedTempFile {
    crate::support::temp_file("profile-lookup-cli-", &format!("-{name}"), bytes)
}

/// `profile-lookup extract PLATFORM PATH ARGS…`, run to its end.
fn run_extract(platform: &str, path: &Path, args: &[&str]) -> Output {
    let mut command = Binary::new(&["extract", platform]).arg(path);
    for arg in args {
        command = command.arg(arg);
    }
    command.output()
}

/// Runs `extract` over a folder: its stdout, and its exit code.
fn extract_folder(platform: &str, dir: &Path) -> (String, Option<i32>) {
    let out = run_extract(platform, dir, &[]);
    (String::from_utf8(out.stdout).unwrap(), out.status.code())
}

/// Runs `extract`; `Ok(body)` on exit 0, `Err(problem)` on a non-zero exit.
fn extract(platform: &str, file: &Path) -> Result<Value, Value> {
    let out = run_extract(platform, file, &[]);
    if out.status.success() {
        Ok(serde_json::from_slice(&out.stdout).expect("stdout is the JSON body"))
    } else {
        assert_eq!(out.status.code(), Some(1));
        Err(serde_json::from_slice(&out.stderr).expect("stderr is the problem document"))
    }
}

/// A `userInfo` capture wrapped into a page the way the platform embeds it (`/` as `\u002F`).
fn wrap_user_info(user_detail: &str) -> Vec<u8> {
    let state = format!(
        r#"{{"__DEFAULT_SCOPE__":{{"webapp.app-context":{{"language":"en"}},"webapp.user-detail":{user_detail}}}}}"#
    )
    .replace('/', "\\u002F");
    format!(
        r#"<!DOCTYPE html><html><head><script>window.x=document.getElementById("__UNIVERSAL_DATA_FOR_REHYDRATION__")</script></head><body><script type="application/json" id="__UNIVERSAL_DATA_FOR_REHYDRATION__">{state}</script></body></html>"#
    )
    .into_bytes()
}

#[test]
fn extract_reads_every_real_short_video_shape() {
    for (rel, id, followers) in [
        (
            "tiktok/next_data_profile_script_2021-01_tiktok.html",
            "107955",
            50_100_000,
        ),
        (
            "tiktok/sigi_state_profile_page_2022_huxleythepandapuppy.html",
            "19994247",
            6_200_000,
        ),
    ] {
        let Some(path) = real(rel) else { continue };
        let body = extract("short-video", &path).unwrap_or_else(|p| panic!("{rel}: {p}"));
        assert_eq!(body["userInfo"]["user"]["id"], id, "{rel}");
        assert_eq!(
            body["userInfo"]["stats"]["followerCount"], followers,
            "{rel}"
        );
        assert!(!body.to_string().contains("u002F"));
    }
    for (rel, followers) in [
        (
            "tiktok/user_detail_userInfo_2024-02_oddanimalspecimens.json",
            2_600_000,
        ),
        (
            "tiktok/user_detail_userInfo_2026-01_oddanimalspecimens.json",
            4_001_943,
        ),
    ] {
        let Some(path) = real(rel) else { continue };
        let array: Vec<Value> = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let detail = format!(
            r#"{{"statusCode":0,"statusMsg":"","userInfo":{}}}"#,
            array[0]
        );
        let page = temp_file("wrapped.html", &wrap_user_info(&detail));
        let body = extract("short-video", page.path()).unwrap_or_else(|p| panic!("{rel}: {p}"));
        assert_eq!(body["userInfo"]["user"]["uniqueId"], "oddanimalspecimens");
        assert_eq!(
            body["userInfo"]["stats"]["followerCount"], followers,
            "{rel}"
        );
    }
    if let Some(path) = real("quoted/tiktok_api_user_detail_not_found_2024-06.txt") {
        let quoted = std::fs::read_to_string(path).unwrap();
        // The quote is not valid JSON as published; its status is what matters.
        assert!(quoted.contains("10221"));
        let page = temp_file(
            "not-found.html",
            &wrap_user_info(r#"{"statusCode":10221,"statusMsg":"","userInfo":{}}"#),
        );
        assert_eq!(
            extract("short-video", page.path()).unwrap_err()["code"],
            "profile_not_found"
        );
    }
}

#[test]
fn extract_reads_every_real_photo_share_shape() {
    for (rel, username) in [
        ("instagram/web_profile_info_2022_megadeth.json", "megadeth"),
        (
            "instagram/web_profile_info_2024-03_nasa_loggedin.json",
            "nasa",
        ),
        (
            "instagram/web_profile_info_2024-03_anasaiaofficial_loggedin.json",
            "anasaiaofficial",
        ),
        (
            "instagram/web_profile_info_2024-03_regina_steinhauer_loggedin.json",
            "regina_steinhauer",
        ),
        (
            "instagram/shareddata_profile_page_2021-04_tanshio.html",
            "_tanshio_",
        ),
    ] {
        let Some(path) = real(rel) else { continue };
        let body = extract("photo-share", &path).unwrap_or_else(|p| panic!("{rel}: {p}"));
        assert_eq!(body["username"], username, "{rel}");
        assert!(body["edge_followed_by"]["count"].is_u64(), "{rel}");
        assert!(
            body["id"]
                .as_str()
                .unwrap()
                .chars()
                .all(|c| c.is_ascii_digit()),
            "{rel}"
        );
    }
    if let Some(path) = real("instagram/profile_page_shell_2022_megadeth.html") {
        assert_eq!(
            extract("photo-share", &path).unwrap_err()["code"],
            "extraction_failed"
        );
    }
    for rel in [
        "quoted/instagram_401_require_login_2023.json",
        "quoted/instagram_401_require_login_2025-01.json",
    ] {
        let Some(path) = real(rel) else { continue };
        assert_eq!(
            extract("photo-share", &path).unwrap_err()["code"],
            "upstream_blocked",
            "{rel}"
        );
    }
}

#[test]
fn extract_reads_the_projects_own_samples() {
    use stand_in::photo_share as ps;
    use stand_in::short_video as sv;
    for era in sv::Era::ALL {
        let page = temp_file(
            "sample.html",
            sv::profile_page(era, &sv::PUBLIC_USER, 128 * 1024).as_bytes(),
        );
        let body = extract("short-video", page.path()).unwrap();
        assert_eq!(body, sv::expected_body(&sv::PUBLIC_USER), "{era:?}");
    }
    let json = temp_file(
        "sample.json",
        ps::web_profile_info(&ps::PUBLIC_USER, 32 * 1024).as_bytes(),
    );
    assert_eq!(
        extract("photo-share", json.path()).unwrap(),
        ps::expected_body(&ps::PUBLIC_USER)
    );
    let wrong = run_extract("photo-share", json.path(), &["--username", "someone.else"]);
    assert!(
        !wrong.status.success(),
        "a document about somebody else is refused"
    );
    let missing = run_extract("short-video", Path::new("/nonexistent/file"), &[]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn extract_over_a_folder_prints_a_line_per_file_and_a_summary() {
    use stand_in::short_video as sv;
    let dir = std::env::temp_dir().join(format!("profile-lookup-cli-{}-drift", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = sv::profile_page(sv::Era::ALL[0], &sv::PUBLIC_USER, 16 * 1024);
    std::fs::write(dir.join("a-good.html"), page.as_bytes()).unwrap();
    std::fs::write(
        dir.join("b-changed.html"),
        b"<html><body>a new page format</body></html>",
    )
    .unwrap();
    std::fs::write(
        dir.join("b-changed.meta.json"),
        b"{\"platform\":\"short-video\"}",
    )
    .unwrap();

    let (text, code) = extract_folder("short-video", &dir);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        3,
        "two documents (the sidecar skipped) and a summary:\n{text}"
    );
    assert!(lines[0].starts_with("a-good.html\tok @"), "{text}");
    assert!(lines[0].contains(sv::PUBLIC_USER.unique_id), "{text}");
    assert!(lines[0].contains("followers="), "{text}");
    assert!(lines[1].starts_with("b-changed.html\t"), "{text}");
    assert!(!lines[1].contains("\tok"), "{text}");
    assert_eq!(
        lines[2],
        "2 files: 1 with a profile, 1 without, 0 unreadable, 0 of another platform skipped"
    );
    assert_eq!(code, Some(1), "a file without a profile fails the run");
    // Piped: plain lines, never a progress bar's escapes.
    assert!(!text.contains('\x1b'));

    std::fs::remove_file(dir.join("b-changed.html")).unwrap();
    let (text, code) = extract_folder("short-video", &dir);
    assert_eq!(code, Some(0), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn extract_names_a_hurdle_page_as_the_block_it_is() {
    use stand_in::short_video as sv;
    // The short-video WAF proof-of-work page: a block the service would clear or retry
    // elsewhere, never a page it failed to read.
    let waf = temp_file("waf.html", sv::waf_challenge_page(77).as_bytes());
    let problem = extract("short-video", waf.path()).unwrap_err();
    assert_eq!(problem["code"], "upstream_blocked", "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("waf_challenge"),
        "{problem}"
    );
    // In a folder, the line says which block it is.
    let dir = tempfile::Builder::new()
        .prefix("profile-lookup-cli-hurdle-")
        .tempdir()
        .unwrap();
    std::fs::write(dir.path().join("waf.html"), sv::waf_challenge_page(77)).unwrap();
    let (text, _) = extract_folder("short-video", dir.path());
    assert!(
        text.lines()
            .any(|l| l == "waf.html\tupstream_blocked (waf_challenge)"),
        "{text}"
    );
}

#[test]
fn extract_strips_a_byte_order_mark_on_both_platforms() {
    use stand_in::photo_share as ps;
    use stand_in::short_video as sv;
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let json = [
        BOM,
        ps::web_profile_info(&ps::PUBLIC_USER, 32 * 1024).as_bytes(),
    ]
    .concat();
    let json = temp_file("bom.json", &json);
    assert_eq!(
        extract("photo-share", json.path()).unwrap_or_else(|p| panic!("{p}")),
        ps::expected_body(&ps::PUBLIC_USER)
    );
    let page = sv::profile_page(sv::Era::ALL[0], &sv::PUBLIC_USER, 16 * 1024);
    let page = temp_file("bom.html", &[BOM, page.as_bytes()].concat());
    assert_eq!(
        extract("short-video", page.path()).unwrap_or_else(|p| panic!("{p}")),
        sv::expected_body(&sv::PUBLIC_USER)
    );
}

#[test]
fn extract_over_a_folder_reads_each_file_as_its_sidecar_says() {
    use stand_in::photo_share as ps;
    use stand_in::short_video as sv;
    let dir = tempfile::Builder::new()
        .prefix("profile-lookup-cli-sidecars-")
        .tempdir()
        .unwrap();
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.path().join(name), bytes).unwrap();
    let sidecar = |platform: &str, username: &str| {
        serde_json::json!({"platform": platform, "username": username, "status": 200})
            .to_string()
            .into_bytes()
    };
    let page = sv::profile_page(sv::Era::ALL[0], &sv::PUBLIC_USER, 16 * 1024);
    let own = sv::PUBLIC_USER.unique_id;
    // Fetched for its own user: a profile.
    write("a-own.html", page.as_bytes());
    write("a-own.meta.json", &sidecar("short-video", own));
    // The same page, fetched for somebody else: the service would not have answered it.
    write("b-other-user.html", page.as_bytes());
    write(
        "b-other-user.meta.json",
        &sidecar("short-video", "someone.else"),
    );
    // Another platform's capture in the same folder: skipped, counted.
    write(
        "c-photo.json",
        ps::web_profile_info(&ps::PUBLIC_USER, 8 * 1024).as_bytes(),
    );
    write(
        "c-photo.meta.json",
        &sidecar("photo-share", ps::PUBLIC_USER.username),
    );
    // No sidecar: read as the named platform, about whoever it is about.
    write("d-bare.html", page.as_bytes());
    let (text, code) = extract_folder("short-video", dir.path());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "three lines and a summary:\n{text}");
    assert!(lines[0].starts_with("a-own.html\tok @"), "{text}");
    assert!(lines[1].starts_with("b-other-user.html\t"), "{text}");
    assert!(!lines[1].contains("\tok"), "{text}");
    assert!(lines[2].starts_with("d-bare.html\tok @"), "{text}");
    assert_eq!(
        lines[3],
        "4 files: 2 with a profile, 1 without, 0 unreadable, 1 of another platform skipped"
    );
    assert_eq!(code, Some(1));
    // The other platform reads its own file and skips the three short-video ones.
    let (text, _) = extract_folder("photo-share", dir.path());
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("c-photo.json\tok @"), "{text}");
    assert!(lines[1].starts_with("d-bare.html\t"), "{text}");
    assert_eq!(
        lines[2],
        "4 files: 1 with a profile, 1 without, 0 unreadable, 2 of another platform skipped"
    );
    // One file reads its sidecar the same way: its user, and only as its own platform.
    let code = |platform: &str, name: &str| {
        run_extract(platform, &dir.path().join(name), &[])
            .status
            .code()
    };
    assert_eq!(code("short-video", "b-other-user.html"), Some(1));
    assert_eq!(code("short-video", "a-own.html"), Some(0));
    assert_eq!(code("short-video", "c-photo.json"), Some(2));
    assert_eq!(code("photo-share", "c-photo.json"), Some(0));
}

#[test]
fn serve_refuses_to_start_without_a_key_or_with_a_bad_value() {
    let out = Binary::new(&["serve"])
        .env_remove("PROFILE_LOOKUP_CONFIG")
        .env_remove("PROFILE_LOOKUP__AUTH__API_KEYS")
        .env("PROFILE_LOOKUP__SERVER__LISTEN", "127.0.0.1:0")
        .output();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no API key"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Binary::new(&["serve"])
        .env("PROFILE_LOOKUP__AUTH__API_KEYS", "k")
        .env("PROFILE_LOOKUP__RETRY__MAX_ATTEMPTS", "0")
        .output();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("max_attempts"));
}

/// The lines of the demo's banner that are curl commands.
fn curl_lines(demo: &Running) -> Vec<&String> {
    demo.banner
        .iter()
        .filter(|l| l.trim_start().starts_with("curl "))
        .collect()
}

#[tokio::test]
async fn demo_answers_real_lookups_offline() {
    let demo = Binary::demo()
        .env("PROFILE_LOOKUP__LOG__LEVEL", "warn")
        .start_demo();
    let curl_lines = curl_lines(&demo);
    assert!(curl_lines.len() >= 6, "{curl_lines:?}");
    demo.get_anonymous("/docs/")
        .await
        .about("the banner's docs page is served")
        .expect_status(200);
    demo.lookup(ShortVideo, "sunny.kitchen.lab")
        .await
        .expect_status(200);
    // The banner's restricted account answers 403.
    let restricted = stand_in::short_video::RESTRICTED_NAME;
    assert!(curl_lines.iter().any(|l| l.contains(restricted)));
    demo.lookup(ShortVideo, restricted)
        .await
        .expect_problem(403, "profile_restricted");
    let private = demo.lookup(ShortVideo, "QUIET.FOX_22").await;
    assert_eq!(private.json()["userInfo"]["user"]["privateAccount"], true);
    demo.lookup(ShortVideo, "no_such_user_404")
        .await
        .expect_status(404);
    // The stateless-shell user and the embed-only user: printed, and the embed answers.
    for user in ["late.night.loops", "harbor.lights.crafts"] {
        assert!(
            curl_lines.iter().any(|l| l.contains(user)),
            "{user} in {curl_lines:?}"
        );
        demo.lookup(ShortVideo, user)
            .await
            .about(user)
            .expect_status(200)
            .expect_header("x-source", "embed");
    }
    demo.lookup(PhotoShare, "lumen.trails")
        .await
        .expect_status(200);
    demo.lookup(PhotoShare, "no.such.sample_user")
        .await
        .expect_status(404);
}

#[tokio::test]
async fn the_banner_exports_the_key_once_and_shows_headers_where_it_names_them() {
    let demo = Binary::demo()
        .env("PROFILE_LOOKUP__LOG__LEVEL", "warn")
        .start_demo();
    let export = format!("export KEY={}", demo.key);
    let exports: Vec<&String> = demo
        .banner
        .iter()
        .filter(|l| l.contains("export KEY="))
        .collect();
    assert_eq!(exports.len(), 1, "{:?}", demo.banner);
    assert_eq!(exports[0].trim(), export);
    let curl_lines = curl_lines(&demo);
    assert!(curl_lines.len() >= 6, "{curl_lines:?}");
    for line in curl_lines {
        // Pasted after the export, every line works: none repeats the key.
        assert!(!line.contains(&demo.key), "{line}");
        assert!(
            line.contains(r#"-H "Authorization: Bearer $KEY""#),
            "{line}"
        );
        let comment = line
            .split_once('#')
            .map_or("", |(_, c)| c)
            .to_ascii_lowercase();
        let names_a_header = ["x-source", "profile-withheld", "retry-after"]
            .iter()
            .any(|h| comment.contains(h));
        let shows_headers = line.trim_start().starts_with("curl -si ");
        assert_eq!(names_a_header, shows_headers, "{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_have_one_line_per_request_without_secrets_and_sigterm_exits_0() {
    let demo = Binary::demo()
        .env("PROFILE_LOOKUP__LOG__FORMAT", "json")
        .env("PROFILE_LOOKUP__LOG__LEVEL", "info")
        .logs()
        .start_demo();
    let lookup = profile_path(ShortVideo, "tiny.baker_7");
    let key = demo.key.clone();
    demo.get_as(&lookup, Some(&key), &[("x-request-id", "trace-77")])
        .await
        .expect_status(200);
    demo.get(&lookup).await.expect_header("x-cache", "hit");
    demo.get_as(
        &lookup,
        Some("secret-token-xyz"),
        &[
            ("cookie", "session=cookie-secret-abc"),
            ("x-request-id", "evil\"id"),
        ],
    )
    .await
    .expect_status(401);
    let out = demo.stop().await;
    assert_eq!(out.status.code(), Some(0), "SIGTERM drains and exits 0");
    let stderr = String::from_utf8(out.stderr).unwrap();
    for secret in [
        key.as_str(),
        "secret-token-xyz",
        "cookie-secret-abc",
        "evil\"id",
    ] {
        assert!(!stderr.contains(secret), "{secret} leaked into the logs");
    }
    let requests: Vec<Value> = stderr
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
        .filter(|v| v["message"] == "request")
        .collect();
    assert_eq!(requests.len(), 3, "one line per request: {stderr}");
    let first = &requests[0];
    assert_eq!(first["request_id"], "trace-77");
    assert_eq!(first["route"], "/short-video/profile/{username}");
    assert_eq!(first["status"], 200);
    assert_eq!(first["cache"], "miss");
    assert_eq!(first["upstream"], "ok");
    assert_eq!(first["upstream_requests"], 1);
    assert!(first["latency_us"].as_u64().is_some(), "{first}");
    assert_eq!(first["client"], "127.0.0.1", "{first}");
    assert_eq!(requests[1]["cache"], "hit");
    assert_eq!(requests[2]["status"], 401);
    assert_eq!(requests[2]["code"], "unauthorized");
}

#[tokio::test]
async fn the_demo_keeps_serving_after_its_stdout_is_closed() {
    let mut demo = Binary::demo()
        .env("PROFILE_LOOKUP__LOG__LEVEL", "off")
        .closing_stdout_at_address()
        .start_demo();
    // The reader, and with it the pipe, was dropped mid-banner.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(demo.is_running(), "the demo is still running");
    demo.get_anonymous("/healthz").await.expect_status(200);
}

#[tokio::test]
async fn the_demos_throttled_line_answers_429_within_two_seconds() {
    let demo = Binary::demo()
        .env("PROFILE_LOOKUP__LOG__LEVEL", "off")
        .start_demo();
    // The throttled name's curl line says what it shows, after a `#`.
    let throttled_heading = demo
        .banner
        .iter()
        .filter(|l| l.contains("throttled.demo"))
        .find_map(|l| l.split_once('#').map(|(_, what)| what.to_owned()))
        .expect("a throttling line");
    assert!(
        throttled_heading.contains("429") && throttled_heading.contains("upstream_blocked"),
        "the banner says what the throttled line shows: {throttled_heading}"
    );
    let started = std::time::Instant::now();
    demo.lookup(PhotoShare, "throttled.demo")
        .await
        .expect_blocked();
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_millis(2500), "{elapsed:?}");
}

#[test]
fn healthcheck_follows_the_configured_listen_address() {
    let listen = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let port = listen.port();
    let serve = Binary::new(&["serve"])
        .env("PROFILE_LOOKUP__SERVER__LISTEN", listen.to_string())
        .env("PROFILE_LOOKUP__AUTH__API_KEYS", "healthcheck-test-key")
        .env("PROFILE_LOOKUP__LOG__LEVEL", "off")
        .start_serving(listen, "healthcheck-test-key");
    let probe = |listen: &str| {
        Binary::new(&["healthcheck"])
            .env("PROFILE_LOOKUP__SERVER__LISTEN", listen)
            .output()
            .status
            .success()
    };
    let up = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        probe(&format!("127.0.0.1:{port}"))
    });
    // An unspecified address is probed on loopback.
    let unspecified = probe(&format!("0.0.0.0:{port}"));
    drop(serve);
    assert!(up, "healthcheck without --addr probes server.listen");
    assert!(unspecified, "0.0.0.0 is probed as 127.0.0.1");
    assert!(
        !probe(&format!("127.0.0.1:{port}")),
        "and fails once nothing listens there"
    );
}
