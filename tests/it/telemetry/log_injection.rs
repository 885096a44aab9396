//! Upstream text cannot forge log lines: the real binary (`serve`) against a loopback
//! short-video upstream whose page state carries a `statusMsg` holding a newline and a fake log
//! line. The service logs the unexpected status code and never the page's own text (the reasons
//! given for an unreadable page never quote it), so the message must not reach the log at
//! all, and every line of it stays one line (one JSON object), in both log formats.

use axum::http::{StatusCode, header};
use axum::response::IntoResponse;

use crate::support::binary::Binary;
use crate::support::routers::always;
use crate::support::{ShortVideo, closed_port, profile_path, spawn_upstream};

const KEY: &str = "log-injection-key";
const FORGED: &str = "2026-01-01T00:00:00Z  INFO forged line";

/// A short-video page whose state reports an unexpected status with a forged-line message.
fn forged_page() -> String {
    let message = serde_json::to_string(&format!("x\n{FORGED}")).unwrap();
    let state = format!(
        r#"{{"__DEFAULT_SCOPE__":{{"webapp.user-detail":{{"statusCode":12345,"statusMsg":{message},"userInfo":{{}}}}}}}}"#
    );
    format!(
        r#"<!DOCTYPE html><html><head></head><body><script type="application/json" id="__UNIVERSAL_DATA_FOR_REHYDRATION__">{state}</script></body></html>"#
    )
}

/// Runs `serve` with `format`, makes one lookup that hits the forged page, stops the service
/// with SIGTERM and returns its stderr, which must name the status code and not the message.
async fn captured_log(format: &str) -> String {
    let page = forged_page();
    let upstream = spawn_upstream(always(move || {
        let html = [(header::CONTENT_TYPE, "text/html; charset=utf-8")];
        (StatusCode::OK, html, page.clone()).into_response()
    }))
    .await
    .addr;
    let listen = closed_port().await;
    let serve = Binary::new(&["serve"])
        .env_remove("PROFILE_LOOKUP_CONFIG")
        .env_remove("RUST_LOG")
        .env("PROFILE_LOOKUP__AUTH__API_KEYS", KEY)
        .env("PROFILE_LOOKUP__SERVER__LISTEN", listen.to_string())
        .env(
            "PROFILE_LOOKUP__SHORT_VIDEO__BASE_URL",
            format!("http://{upstream}"),
        )
        .env("PROFILE_LOOKUP__LOG__FORMAT", format)
        .env("PROFILE_LOOKUP__LOG__LEVEL", "info")
        .logs()
        .start_serving(listen, KEY);
    serve
        .get_as(
            &profile_path(ShortVideo, "someone"),
            Some(KEY),
            &[("x-request-id", "inject-1")],
        )
        .await
        .about("an unexpected status is a failed extraction")
        .expect_status(500);
    let out = serve.stop().await;
    let log = String::from_utf8(out.stderr).unwrap();
    assert!(log.contains("12345"), "the status code is logged: {log}");
    assert!(
        !log.contains("forged line"),
        "the status message reached the log: {log}"
    );
    log
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forged_status_message_stays_inside_its_pretty_log_line() {
    let log = captured_log("pretty").await;
    for line in log.lines() {
        assert!(
            !line.trim_start().starts_with(FORGED),
            "a forged line: {line:?}\n{log}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forged_status_message_stays_inside_its_json_log_line() {
    let log = captured_log("json").await;
    for line in log.lines() {
        let event: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|_| panic!("not one JSON object: {line:?}"));
        assert!(event.is_object(), "{line}");
    }
    // The platform layer's warning carries the id of the request it happened in.
    let warning = log
        .lines()
        .find(|l| l.contains("lookup failed"))
        .expect("the failed lookup's warning");
    let event: serde_json::Value = serde_json::from_str(warning).unwrap();
    assert_eq!(event["spans"][0]["request_id"], "inject-1", "{warning}");
}
