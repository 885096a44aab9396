//! Drift capture end to end: unreadable pages from a loopback upstream land in
//! `upstream.capture_dir` with sidecars, never beyond the cap, and `extract` on a saved page
//! gives the answer the service gave.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use axum::Router;
use axum::http::header;
use serde_json::Value;
use stand_in::short_video as sv;

use crate::support::{eventually, problem, settings, spawn_app, spawn_upstream};

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("it-capture-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[tokio::test]
async fn unreadable_pages_are_captured_with_sidecars_up_to_the_cap() {
    let upstream = spawn_upstream(Router::new().fallback(|| async {
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
    }))
    .await;
    let dir = temp_dir("sv");
    let mut s = settings(upstream.addr);
    s.upstream.capture_dir = dir.clone();
    s.upstream.capture_max_files = 2;
    s.validate_for_serve()
        .expect("the folder is created and writable");
    let app = spawn_app(s).await;
    for name in ["drift.one", "drift.two", "drift.three"] {
        let response = app.get(&format!("/short-video/profile/{name}")).await;
        assert_eq!(problem(response).await["code"], "extraction_failed");
        // One capture at a time: let this one land before the next lookup.
        assert!(
            eventually(Duration::from_secs(5), || names(&dir)
                .iter()
                .any(|n| n.contains(name) && n.ends_with(".meta.json")))
            .await,
            "{name} was captured: {:?}",
            names(&dir)
        );
    }
    let kept = names(&dir);
    assert_eq!(kept.len(), 4, "two pages and their sidecars: {kept:?}");
    assert!(
        !kept.iter().any(|n| n.contains("drift.one")),
        "the oldest went first"
    );
    let page = kept
        .iter()
        .find(|n| n.ends_with("-drift.three.html"))
        .unwrap();
    let sidecar = page.replace(".html", ".meta.json");
    let meta: Value = serde_json::from_slice(&std::fs::read(dir.join(&sidecar)).unwrap()).unwrap();
    assert_eq!(meta["platform"], "short-video");
    assert_eq!(meta["username"], "drift.three");
    assert_eq!(meta["status"], 200);
    assert!(
        meta["verdict"].as_str().unwrap().contains("10555"),
        "{meta}"
    );
    assert!(!meta.to_string().contains("cookie-value-never-kept"));

    // `extract` on the saved page says what the service said.
    let out = Command::new(env!("CARGO_BIN_EXE_profile-lookup"))
        .args(["extract", "short-video"])
        .arg(dir.join(page))
        .args(["--username", "drift.three"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said: Value = serde_json::from_slice(&out.stderr).expect("a problem document");
    assert_eq!(said["code"], "extraction_failed");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn readable_pages_and_not_found_are_never_captured() {
    let upstream = spawn_upstream(sv::router()).await;
    let dir = temp_dir("ok");
    let mut s = settings(upstream.addr);
    s.upstream.capture_dir = dir.clone();
    s.validate_for_serve().unwrap();
    let app = spawn_app(s).await;
    let found = &sv::sample_users()[0].unique_id;
    assert_eq!(
        app.get(&format!("/short-video/profile/{found}"))
            .await
            .status(),
        200
    );
    assert_eq!(
        app.get("/short-video/profile/nobody.at.all").await.status(),
        404
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(names(&dir).is_empty(), "{:?}", names(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_capture_dir_that_cannot_be_written_stops_serve() {
    let file = temp_dir("file");
    std::fs::write(&file, "not a folder").unwrap();
    let mut s = settings("127.0.0.1:1".parse().unwrap());
    s.upstream.capture_dir = file.clone();
    let err = s.validate_for_serve().unwrap_err().to_string();
    assert!(err.contains("upstream.capture_dir"), "{err}");
    std::fs::remove_file(&file).unwrap();
}
