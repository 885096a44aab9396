//! `extract` without `--username`: the page's own user, read from the page itself (its
//! canonical link, its `og:url`, the state's own user), or a refusal to guess, never another
//! account the page holds; a failure says why, as the service logs it; `-` reads stdin.
//!
//! The pages are the project's invented samples (the `stand-in` crate), whose current
//! photo-share profile page holds a suggested account's hovercard before the profile.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use stand_in::photo_share as ps;
use stand_in::short_video as sv;

use crate::support::binary::Binary;

fn run(platform: &str, page: &[u8], args: &[&str]) -> Output {
    let file = crate::support::temp_file("profile-lookup-owner-", ".html", page);
    let mut command = Binary::new(&["extract", platform]).arg(file.path());
    for arg in args {
        command = command.arg(arg);
    }
    command.output()
}

fn body(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is the JSON body")
}

/// The sample page, with `tag` put in its head.
fn with_head_tag(page: &str, tag: &str) -> Vec<u8> {
    page.replacen("<title>", &format!("{tag}<title>"), 1)
        .into_bytes()
}

#[test]
fn a_page_holding_a_suggested_account_is_never_answered_for_it() {
    let owner = &ps::PUBLIC_USER;
    let page = ps::xig_profile_page(owner, 64 * 1024);
    // Neither the page's markup nor its state says whose page it is: refused, naming the
    // accounts it holds and the option that settles it.
    let out = run("photo-share", page.as_bytes(), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(stderr.contains("--username"), "{stderr}");
    assert!(stderr.contains(owner.username), "{stderr}");
    // Its og:url or canonical link names the owner: the owner's profile.
    let expected = ps::expected_body(owner);
    let url = format!("https://www.photo-share.example/{}/", owner.username);
    for tag in [
        format!(r#"<meta property="og:url" content="{url}">"#),
        format!(r#"<link rel="canonical" href="{url}">"#),
    ] {
        let out = run("photo-share", &with_head_tag(&page, &tag), &[]);
        assert_eq!(body(&out), expected, "{tag}");
    }
    // --username settles it too.
    let out = run(
        "photo-share",
        page.as_bytes(),
        &["--username", owner.username],
    );
    assert_eq!(body(&out), expected);
}

#[test]
fn a_canonical_link_naming_another_account_is_a_failure_with_its_reason() {
    let page = sv::profile_page(sv::Era::ALL[0], &sv::PUBLIC_USER, 32 * 1024);
    let tag = r#"<link rel="canonical" href="https://www.short-video.example/@someone.else">"#;
    let out = run("short-video", &with_head_tag(&page, tag), &[]);
    assert_eq!(out.status.code(), Some(1));
    let problem: Value = serde_json::from_slice(&out.stderr).expect("the problem document");
    assert_eq!(problem["code"], "extraction_failed", "{problem}");
    // The reason the service logs, which the API's detail leaves out.
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("another user"), "{detail}");
}

#[test]
fn a_failure_says_why() {
    let out = run(
        "photo-share",
        b"<html><body>a new page format</body></html>",
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let problem: Value = serde_json::from_slice(&out.stderr).expect("the problem document");
    assert_eq!(problem["code"], "extraction_failed", "{problem}");
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("no profile in page"), "{detail}");
}

#[test]
fn a_dash_reads_the_document_from_stdin() {
    let json = ps::web_profile_info(&ps::PUBLIC_USER, 16 * 1024);
    let mut child = Command::new(crate::support::binary::BIN)
        .args(["extract", "photo-share", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(json.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(body(&out), ps::expected_body(&ps::PUBLIC_USER));
    assert!(!Path::new("-").exists());
}
