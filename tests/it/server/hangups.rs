//! Clients that go away or stop reading: the connection is reclaimed, and every request that
//! started still ends in the in-flight gauge and in the access log.
//!
//! These tests install a process-wide log subscriber to read the access log back, and read the
//! process-wide metrics, so they run in a child process of their own, apart from the other
//! tests: see [`crate::support::own_process`].

use std::time::{Duration, Instant};

use crate::support::logs::{self, metric};
use crate::support::{KEY, TestApp, spawn_slow_not_found};
use axum::Router;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};

const IN_FLIGHT: &str = "profile_lookup_http_requests_in_flight";

#[tokio::test]
async fn a_caller_that_hangs_up_mid_lookup_leaves_the_gauge_and_gets_a_499_line() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::a_caller_that_hangs_up_mid_lookup_leaves_the_gauge_and_gets_a_499_line"
    )) {
        return;
    }
    logs::capture();
    let app = TestApp::on(&spawn_slow_not_found(Duration::from_secs(30)).await)
        .with(|s| s.upstream.timeout_ms = 20_000)
        .start()
        .await;
    let mut caller = TcpStream::connect(app.addr).await.unwrap();
    caller
        .write_all(
            format!(
                "GET /photo-share/profile/gone.away HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\nX-Request-Id: hangup-1\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    assert!(
        crate::support::eventually(Duration::from_secs(10), || app.hits() == 1).await,
        "the lookup reached the upstream"
    );
    drop(caller);
    let deadline = Instant::now() + Duration::from_secs(10);
    let line = loop {
        let found = logs::with_message("request")
            .into_iter()
            .find(|l| l["request_id"] == "hangup-1");
        if found.is_some() || Instant::now() > deadline {
            break found;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let line = line.expect("the hung-up request has its access-log line");
    assert_eq!(line["status"], 499, "{line}");
    assert_eq!(line["route"], "/photo-share/profile/{username}", "{line}");
    assert!(
        crate::support::eventually(Duration::from_secs(5), || metric(IN_FLIGHT, &[]) == 0.0).await,
        "the in-flight gauge is back to 0, not {}",
        metric(IN_FLIGHT, &[])
    );
    assert!(metric("profile_lookup_http_requests_total", &["status=\"499\""]) == 1.0);
}

#[tokio::test]
async fn a_client_that_pipelines_and_never_reads_is_disconnected() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::a_client_that_pipelines_and_never_reads_is_disconnected"
    )) {
        return;
    }
    logs::capture();
    let app = TestApp::on(Router::new())
        // The write-progress limit follows the request deadline; keep it short here.
        .with(|s| s.server.request_timeout_ms = 1_000)
        .start()
        .await;
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut greedy = socket.connect(app.addr).await.unwrap();
    // Pipelines requests for as long as the server takes them, never reading an answer.
    let started = Instant::now();
    let pipeline = tokio::spawn(async move {
        let request = b"GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n".repeat(64);
        let mut sent = 0usize;
        loop {
            if greedy.write_all(&request).await.is_err() {
                return (sent, started.elapsed());
            }
            sent += 64;
        }
    });
    // Meanwhile other clients are served.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(app.get("/healthz").await.status(), 200);
    let (sent, closed_after) = tokio::time::timeout(Duration::from_secs(15), pipeline)
        .await
        .expect("the server closed the connection that never read")
        .unwrap();
    assert!(closed_after < Duration::from_secs(10), "{closed_after:?}");
    let served = metric(
        "profile_lookup_http_requests_total",
        &["route=\"/openapi.json\""],
    );
    eprintln!("pipelined {sent} requests; the server answered {served} before closing");
    // What one connection queues is bounded by its buffers, not by what the client sends.
    assert!(
        served < 1_000.0,
        "{served} answers queued for a client that reads none"
    );
    assert_eq!(app.get("/healthz").await.status(), 200);
}
