//! The binary itself: `extract` on every real captured shape and on the project's samples,
//! `serve` refusing a config without keys, and `demo` answering real lookups offline.
//!
//! The real captures are third-party data read in place from `../shared/fixtures/real`; when
//! that folder is absent those cases print a notice and are skipped.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::real;

const BIN: &str = env!("CARGO_BIN_EXE_profile-lookup");

fn temp_file(name: &str, bytes: &[u8]) -> tempfile::NamedTempFile {
    crate::support::temp_file("profile-lookup-cli-", &format!("-{name}"), bytes)
}

/// Runs `extract`; `Ok(body)` on exit 0, `Err(problem)` on a non-zero exit.
fn extract(platform: &str, file: &Path) -> Result<Value, Value> {
    let out = Command::new(BIN)
        .args(["extract", platform])
        .arg(file)
        .output()
        .unwrap();
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
    let wrong = Command::new(BIN)
        .args(["extract", "photo-share", "--username", "someone.else"])
        .arg(json.path())
        .output()
        .unwrap();
    assert!(
        !wrong.status.success(),
        "a document about somebody else is refused"
    );
    let missing = Command::new(BIN)
        .args(["extract", "short-video", "/nonexistent/file"])
        .output()
        .unwrap();
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

    let out = Command::new(BIN)
        .args(["extract", "short-video"])
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
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
    assert_eq!(
        out.status.code(),
        Some(1),
        "a file without a profile fails the run"
    );
    // Piped: plain lines, never a progress bar's escapes.
    assert!(!text.contains('\x1b'));

    std::fs::remove_file(dir.join("b-changed.html")).unwrap();
    let out = Command::new(BIN)
        .args(["extract", "short-video"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
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
    let out = Command::new(BIN)
        .args(["extract", "short-video"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
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
    let out = Command::new(BIN)
        .args(["extract", "short-video"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
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
    assert_eq!(out.status.code(), Some(1));
    // The other platform reads its own file and skips the three short-video ones.
    let out = Command::new(BIN)
        .args(["extract", "photo-share"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("c-photo.json\tok @"), "{text}");
    assert!(lines[1].starts_with("d-bare.html\t"), "{text}");
    assert_eq!(
        lines[2],
        "4 files: 1 with a profile, 1 without, 0 unreadable, 2 of another platform skipped"
    );
    // One file reads its sidecar the same way: its user, and only as its own platform.
    let code = |platform: &str, name: &str| {
        Command::new(BIN)
            .args(["extract", platform])
            .arg(dir.path().join(name))
            .output()
            .unwrap()
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
    let out = Command::new(BIN)
        .arg("serve")
        .env_remove("PROFILE_LOOKUP_CONFIG")
        .env_remove("PROFILE_LOOKUP__AUTH__API_KEYS")
        .env("PROFILE_LOOKUP__SERVER__LISTEN", "127.0.0.1:0")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no API key"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(BIN)
        .arg("serve")
        .env("PROFILE_LOOKUP__AUTH__API_KEYS", "k")
        .env("PROFILE_LOOKUP__RETRY__MAX_ATTEMPTS", "0")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("max_attempts"));
}

#[test]
fn demo_answers_real_lookups_offline() {
    let mut child = Command::new(BIN)
        .args(["demo", "--listen", "127.0.0.1:0"])
        .env("PROFILE_LOOKUP__LOG__LEVEL", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut base_and_key = None;
    let mut curl_lines = Vec::new();
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(20)) {
        if let Some(rest) = line.strip_prefix("Listening on ") {
            let mut parts = rest.split_whitespace();
            let base = parts.next().unwrap().to_owned();
            let key = rest.rsplit(' ').next().unwrap().to_owned();
            base_and_key = Some((base, key));
        }
        if line.trim_start().starts_with("curl ") {
            curl_lines.push(line.clone());
        }
        if line.starts_with("Ctrl-C") {
            break;
        }
    }
    let (base, key) = base_and_key.expect("the demo printed its address and key");
    assert!(curl_lines.len() >= 6, "{curl_lines:?}");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = reqwest::Client::new();
        let docs = client.get(format!("{base}/docs/")).send().await.unwrap();
        assert_eq!(docs.status(), 200, "the banner's docs page is served");
        let get = |path: &str| client.get(format!("{base}{path}")).bearer_auth(&key).send();
        let r = get("/short-video/profile/sunny.kitchen.lab").await.unwrap();
        assert_eq!(r.status(), 200);
        // The banner's restricted account answers 403.
        let restricted = stand_in::short_video::RESTRICTED_NAME;
        assert!(curl_lines.iter().any(|l| l.contains(restricted)));
        let r = get(&format!("/short-video/profile/{restricted}"))
            .await
            .unwrap();
        assert_eq!(r.status(), 403);
        let r = get("/short-video/profile/QUIET.FOX_22").await.unwrap();
        assert_eq!(
            r.json::<Value>().await.unwrap()["userInfo"]["user"]["privateAccount"],
            true
        );
        assert_eq!(
            get("/short-video/profile/no_such_user_404")
                .await
                .unwrap()
                .status(),
            404
        );
        // The stateless-shell user and the embed-only user: printed, and the embed answers.
        for user in ["late.night.loops", "harbor.lights.crafts"] {
            assert!(
                curl_lines.iter().any(|l| l.contains(user)),
                "{user} in {curl_lines:?}"
            );
            let r = get(&format!("/short-video/profile/{user}")).await.unwrap();
            assert_eq!(r.status(), 200, "{user}");
            assert_eq!(r.headers()["x-source"], "embed", "{user}");
        }
        assert_eq!(
            get("/photo-share/profile/lumen.trails")
                .await
                .unwrap()
                .status(),
            200
        );
        assert_eq!(
            get("/photo-share/profile/no.such.sample_user")
                .await
                .unwrap()
                .status(),
            404
        );
    });
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn json_logs_have_one_line_per_request_without_secrets_and_sigterm_exits_0() {
    let mut child = Command::new(BIN)
        .args(["demo", "--listen", "127.0.0.1:0"])
        .env("PROFILE_LOOKUP__LOG__FORMAT", "json")
        .env("PROFILE_LOOKUP__LOG__LEVEL", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (base, key) = {
        use std::io::BufRead;
        // The reader is leaked on purpose: the demo's stdout stays open for its whole life.
        let lines = Box::leak(Box::new(std::io::BufReader::new(stdout).lines()));
        loop {
            let line = lines.next().expect("banner").unwrap();
            if let Some(rest) = line.strip_prefix("Listening on ") {
                break (
                    rest.split_whitespace().next().unwrap().to_owned(),
                    rest.rsplit(' ').next().unwrap().to_owned(),
                );
            }
        }
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = reqwest::Client::new();
        let lookup = format!("{base}/short-video/profile/tiny.baker_7");
        let r = client
            .get(&lookup)
            .bearer_auth(&key)
            .header("x-request-id", "trace-77")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let r = client.get(&lookup).bearer_auth(&key).send().await.unwrap();
        assert_eq!(r.headers()["x-cache"], "hit");
        let r = client
            .get(&lookup)
            .bearer_auth("secret-token-xyz")
            .header("cookie", "session=cookie-secret-abc")
            .header("x-request-id", "evil\"id")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401);
    });
    let out = crate::support::terminate(child);
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
    assert!(first["latency_ms"].as_f64().is_some());
    assert_eq!(requests[1]["cache"], "hit");
    assert_eq!(requests[2]["status"], 401);
    assert_eq!(requests[2]["code"], "unauthorized");
}

#[test]
fn the_demo_keeps_serving_after_its_stdout_is_closed() {
    let mut child = Command::new(BIN)
        .args(["demo", "--listen", "127.0.0.1:0"])
        .env("PROFILE_LOOKUP__LOG__LEVEL", "off")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let base = {
        use std::io::BufRead;
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        loop {
            let line = lines.next().expect("banner").unwrap();
            if let Some(rest) = line.strip_prefix("Listening on ") {
                break rest.split_whitespace().next().unwrap().to_owned();
            }
        }
        // The reader, and with it the pipe, is dropped here, mid-banner.
    };
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the demo is still running"
    );
    let status = tokio::runtime::Runtime::new().unwrap().block_on(async {
        reqwest::get(format!("{base}/healthz"))
            .await
            .map(|r| r.status().as_u16())
    });
    assert_eq!(status.unwrap(), 200);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn the_demos_throttled_line_answers_429_within_two_seconds() {
    let mut child = Command::new(BIN)
        .args(["demo", "--listen", "127.0.0.1:0"])
        .env("PROFILE_LOOKUP__LOG__LEVEL", "off")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (base, key, throttled_heading) = {
        use std::io::BufRead;
        // The reader is leaked on purpose: the demo's stdout stays open for its whole life.
        let lines = Box::leak(Box::new(
            std::io::BufReader::new(child.stdout.take().unwrap()).lines(),
        ));
        let (mut base, mut key, mut heading) = (None, None, None);
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Some(rest) = line.strip_prefix("Listening on ") {
                base = rest.split_whitespace().next().map(str::to_owned);
                key = rest.rsplit(' ').next().map(str::to_owned);
            }
            // The throttled name's curl line says what it shows, after a `#`.
            if line.contains("throttled.demo") {
                heading = line.split_once('#').map(|(_, what)| what.to_owned());
            }
            if line.starts_with("Ctrl-C") {
                break;
            }
        }
        (
            base.unwrap(),
            key.unwrap(),
            heading.expect("a throttling line"),
        )
    };
    assert!(
        throttled_heading.contains("429") && throttled_heading.contains("upstream_blocked"),
        "the banner says what the throttled line shows: {throttled_heading}"
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (status, code, elapsed) = runtime.block_on(async {
        let started = std::time::Instant::now();
        let r = reqwest::Client::new()
            .get(format!("{base}/photo-share/profile/throttled.demo"))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let body: Value = r.json().await.unwrap();
        (status, body["code"].clone(), started.elapsed())
    });
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(status, 429);
    assert_eq!(code, "upstream_blocked");
    assert!(elapsed < Duration::from_millis(2500), "{elapsed:?}");
}

#[test]
fn healthcheck_follows_the_configured_listen_address() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(BIN)
        .arg("serve")
        .env(
            "PROFILE_LOOKUP__SERVER__LISTEN",
            format!("127.0.0.1:{port}"),
        )
        .env("PROFILE_LOOKUP__AUTH__API_KEYS", "healthcheck-test-key")
        .env("PROFILE_LOOKUP__LOG__LEVEL", "off")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let probe = |listen: &str| {
        Command::new(BIN)
            .arg("healthcheck")
            .env("PROFILE_LOOKUP__SERVER__LISTEN", listen)
            .status()
            .unwrap()
            .success()
    };
    let up = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        probe(&format!("127.0.0.1:{port}"))
    });
    // An unspecified address is probed on loopback.
    let unspecified = probe(&format!("0.0.0.0:{port}"));
    let _ = child.kill();
    let _ = child.wait();
    assert!(up, "healthcheck without --addr probes server.listen");
    assert!(unspecified, "0.0.0.0 is probed as 127.0.0.1");
    assert!(
        !probe(&format!("127.0.0.1:{port}")),
        "and fails once nothing listens there"
    );
}
