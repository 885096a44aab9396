//! Drift capture end to end: unreadable pages from a loopback upstream land in
//! `upstream.capture_dir` with sidecars, never beyond the cap, and `extract` on a saved page
//! gives the answer the service gave.

use std::time::Duration;

use axum::http::header;
use axum::response::IntoResponse;
use serde_json::Value;
use stand_in::short_video as sv;

use crate::support::binary::Binary;
use crate::support::capture_dir::CaptureDir;
use crate::support::routers::always;
use crate::support::{ShortVideo, TestApp, settings};

#[tokio::test]
async fn unreadable_pages_are_captured_with_sidecars_up_to_the_cap() {
    let upstream = always(|| {
        (
            [
                (header::CONTENT_TYPE, "text/html"),
                (
                    header::SET_COOKIE,
                    "tt_webid=cookie-value-never-kept; Path=/",
                ),
            ],
            sv::status_page(10_555),
        )
            .into_response()
    });
    let dir = CaptureDir::new();
    let app = TestApp::on(upstream)
        .with(|s| s.upstream.capture_max_files = 2)
        .capturing_into(&dir)
        .start()
        .await;
    for name in ["drift.one", "drift.two", "drift.three"] {
        let answer = app.lookup(ShortVideo, name).await;
        assert_eq!(answer.problem()["code"], "extraction_failed");
        // One capture at a time: let this one land before the next lookup.
        dir.expect_capture(name, ".meta.json").await;
    }
    let kept = dir.names();
    assert_eq!(kept.len(), 4, "two pages and their sidecars: {kept:?}");
    assert!(
        !kept.iter().any(|n| n.contains("drift.one")),
        "the oldest went first"
    );
    let page = kept
        .iter()
        .find(|n| n.ends_with("-drift.three.html"))
        .unwrap();
    // Named by a readable UTC time to the millisecond: `20261128T064512.123Z-…`.
    let stamp = &page[..20];
    assert!(
        stamp.starts_with("20")
            && stamp.as_bytes()[8] == b'T'
            && stamp.as_bytes()[15] == b'.'
            && stamp.ends_with('Z')
            && page.as_bytes()[20] == b'-',
        "{page}"
    );
    let sidecar = page.replace(".html", ".meta.json");
    let meta: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join(&sidecar)).unwrap()).unwrap();
    assert_eq!(meta["platform"], "short-video");
    assert_eq!(meta["username"], "drift.three");
    assert_eq!(meta["status"], 200);
    assert!(
        meta["verdict"].as_str().unwrap().contains("10555"),
        "{meta}"
    );
    assert!(!meta.to_string().contains("cookie-value-never-kept"));

    // `extract` on the saved page says what the service said.
    let out = Binary::new(&["extract", "short-video"])
        .arg(dir.path().join(page))
        .arg("--username")
        .arg("drift.three")
        .output();
    assert!(!out.status.success());
    let said: Value = serde_json::from_slice(&out.stderr).expect("a problem document");
    assert_eq!(said["code"], "extraction_failed");
}

#[tokio::test]
async fn readable_pages_and_not_found_are_never_captured() {
    let dir = CaptureDir::new();
    let app = TestApp::on(sv::router()).capturing_into(&dir).start().await;
    let found = &sv::sample_users()[0].unique_id;
    app.lookup(ShortVideo, found).await.expect_status(200);
    app.lookup(ShortVideo, "nobody.at.all")
        .await
        .expect_status(404);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(dir.names().is_empty(), "{:?}", dir.names());
}

#[test]
fn a_capture_dir_that_cannot_be_written_stops_serve() {
    let file = crate::support::temp_file("it-capture-file-", "", b"not a folder");
    let mut s = settings("127.0.0.1:1".parse().unwrap());
    s.upstream.capture_dir = file.path().to_owned();
    let err = s.validate_for_serve().unwrap_err().to_string();
    assert!(err.contains("upstream.capture_dir"), "{err}");
}
