//! A lookup that could not reach the platform says why, the same word everywhere: the `cause`
//! of its WARN line, the `cause` label of `profile_lookup_upstream_failures_total`, and the
//! problem's `detail` (in words, never an address or a host), for each kind of failure made
//! for real on loopback.
//!
//! These tests read the process-wide log and metrics, so they run in a child process of their
//! own ([`crate::support::own_process`]).

use profile_lookup::config::Settings;

use crate::support::forward_proxy::ForwardProxy;
use crate::support::logs::{self, metric};
use crate::support::{ShortVideo, TestApp, closed_port, settings};
use crate::upstream::failure_causes::{resetting, silent};

const FAILURES: &str = "profile_lookup_upstream_failures_total";

/// Looks a name up on an app whose short-video platform is `base_url` (through `proxy` when
/// given), and checks that the answer, the log line and the metric all say `cause`.
async fn reported(base_url: &str, proxy: Option<&ForwardProxy>, cause: &str) {
    logs::capture();
    let mut s: Settings = settings(closed_port().await);
    s.platform_mut(ShortVideo).base_url = base_url.parse().unwrap();
    s.upstream.timeout_ms = 500;
    s.upstream.head_timeout_ms = 500;
    let label = format!("cause=\"{cause}\"");
    let labels = ["platform=\"short-video\"", label.as_str()];
    let before = metric(FAILURES, &labels);
    let warned = logs::with_message("lookup failed").len();
    let mut app = TestApp::on(axum::Router::new()).with(|settings| *settings = s);
    if let Some(proxy) = proxy {
        app = app.through([proxy]);
    }
    let app = app.start().await;
    let answer = app.lookup(ShortVideo, "someone").await;
    let problem = answer.about(cause).expect_status(500).problem();
    assert_eq!(problem["code"], "upstream_unavailable", "{problem}");
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.ends_with(&format!("({cause})")), "{cause}: {detail}");
    for never in ["127.0.0.1", ".invalid", "http"] {
        assert!(!detail.contains(never), "{detail}");
    }
    assert!(
        metric(FAILURES, &labels) > before,
        "{cause}: no {FAILURES}{{{label}}}"
    );
    let lines = logs::with_message("lookup failed");
    let line = lines
        .get(warned)
        .unwrap_or_else(|| panic!("{cause}: no WARN line"));
    assert_eq!(line["level"], "WARN", "{line}");
    assert_eq!(line["cause"], cause, "{line}");
}

#[tokio::test]
async fn each_kind_of_failure_is_named_in_the_answer_the_log_and_the_metric() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::each_kind_of_failure_is_named_in_the_answer_the_log_and_the_metric"
    )) {
        return;
    }
    reported("http://profile-lookup-test.invalid", None, "dns").await;
    reported(&format!("http://{}", closed_port().await), None, "refused").await;
    reported(&format!("http://{}", resetting().await), None, "reset").await;
    let plain = crate::support::spawn_upstream(axum::Router::new()).await;
    reported(&format!("https://{}", plain.addr), None, "tls").await;
    let (addr, task) = silent().await;
    reported(&format!("http://{addr}"), None, "timeout").await;
    task.abort();
    let down = ForwardProxy::refusing().await;
    let target = format!("http://{}", closed_port().await);
    reported(&target, Some(&down), "proxy").await;
}

#[tokio::test]
async fn a_blocked_lookup_is_a_warn_line() {
    if !crate::support::own_process(concat!(module_path!(), "::a_blocked_lookup_is_a_warn_line")) {
        return;
    }
    use axum::http::StatusCode;
    logs::capture();
    let app = TestApp::on(crate::support::routers::status(
        StatusCode::TOO_MANY_REQUESTS,
    ))
    .start()
    .await;
    app.lookup(ShortVideo, "someone").await.expect_status(429);
    let refused = logs::with_message("platform refused the lookup");
    let line = refused.last().expect("a line for the blocked lookup");
    assert_eq!(line["level"], "WARN", "{line}");
    assert_eq!(line["outcome"], "blocked", "{line}");
}
