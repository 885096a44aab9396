//! The access log over a real socket: the client's address (the connection's, or
//! `X-Forwarded-For`'s through `server.trusted_proxies` only), the key's id and never the key,
//! whole microseconds, probes and scrapes at DEBUG.
//!
//! These tests read the process-wide log, so they run in a child process of their own
//! ([`crate::support::own_process`]).

use axum::http::StatusCode;

use crate::support::logs;
use crate::support::routers::status;
use crate::support::{KEY, ShortVideo, TestApp, profile_path};

/// The access-log line of the request whose id is `id`.
fn line_of(id: &str) -> serde_json::Value {
    logs::with_message("request")
        .into_iter()
        .find(|l| l["request_id"] == id)
        .unwrap_or_else(|| panic!("no access-log line for {id}"))
}

#[tokio::test]
async fn a_line_names_the_client_and_the_keys_id_in_whole_microseconds() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::a_line_names_the_client_and_the_keys_id_in_whole_microseconds"
    )) {
        return;
    }
    logs::capture();
    let app = TestApp::on(status(StatusCode::NOT_FOUND)).start().await;
    let path = profile_path(ShortVideo, "someone");
    let forged = [
        ("x-request-id", "direct-1"),
        ("x-forwarded-for", "203.0.113.9"),
    ];
    app.get_as(&path, Some(KEY), &forged).await;
    let line = line_of("direct-1");
    // No trusted proxy: the header is the caller's text and is not believed.
    assert_eq!(line["client"], "127.0.0.1", "{line}");
    assert_eq!(line["key_id"], crate::support::key_id(KEY), "{line}");
    assert!(!line.to_string().contains(KEY), "{line}");
    assert!(
        line["latency_us"].as_u64().is_some_and(|us| us > 0),
        "{line}"
    );
    assert!(line.get("latency_ms").is_none(), "{line}");
    assert_eq!(line["level"], "INFO", "{line}");
    // An unknown key has no id.
    app.get_as(&path, Some("not-a-key"), &[("x-request-id", "nokey-1")])
        .await;
    assert_eq!(line_of("nokey-1")["key_id"], "-");
}

#[tokio::test]
async fn through_a_trusted_proxy_the_forwarded_client_is_logged() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::through_a_trusted_proxy_the_forwarded_client_is_logged"
    )) {
        return;
    }
    logs::capture();
    let app = TestApp::on(status(StatusCode::NOT_FOUND))
        .with(|s| s.server.trusted_proxies = vec!["127.0.0.0/8".into()])
        .start()
        .await;
    let headers = [
        ("x-request-id", "proxied-1"),
        ("x-forwarded-for", "198.51.100.1, 203.0.113.9, 127.0.0.2"),
    ];
    app.get_as("/healthz", None, &headers).await;
    let line = line_of("proxied-1");
    assert_eq!(line["client"], "203.0.113.9", "{line}");
}

#[tokio::test]
async fn probes_and_scrapes_are_debug_lines_and_the_rest_info() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::probes_and_scrapes_are_debug_lines_and_the_rest_info"
    )) {
        return;
    }
    logs::capture();
    let app = TestApp::on(status(StatusCode::NOT_FOUND)).start().await;
    for (path, id, level) in [
        ("/healthz", "probe-1", "DEBUG"),
        ("/readyz", "probe-2", "DEBUG"),
        ("/metrics", "scrape-1", "DEBUG"),
        ("/status", "status-1", "INFO"),
        ("/", "index-1", "INFO"),
    ] {
        app.get_as(path, None, &[("x-request-id", id)]).await;
        assert_eq!(line_of(id)["level"], level, "{path}");
    }
}
