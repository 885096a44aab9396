//! Start-up as a newcomer meets it, through the real binary: a taken address (`demo` moves to
//! a free port and says so, `serve` fails naming the address and what to do), a config file
//! that cannot be read, and logs piped to a file carrying no colour escapes.

use std::net::{SocketAddr, TcpListener};
use std::process::Output;

use crate::support::binary::{Binary, Running};

/// A loopback address the OS chose, held by this test for as long as the listener lives.
fn occupied() -> (TcpListener, SocketAddr) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    (listener, addr)
}

/// SIGTERM, and what the demo wrote; it ended by its handler of the signal.
async fn stop(demo: Running) -> Output {
    let out = demo.stop().await;
    assert!(out.status.code().is_some(), "ended by SIGTERM's handler");
    out
}

#[tokio::test]
async fn demo_moves_to_a_free_port_when_its_default_address_is_taken() {
    let (_held, taken) = occupied();
    // The demo's default address is `server.listen`: here one this test holds.
    let demo = Binary::new(&["demo"])
        .env_remove("PROFILE_LOOKUP_CONFIG")
        .env("PROFILE_LOOKUP__SERVER__LISTEN", taken.to_string())
        .env("PROFILE_LOOKUP__LOG__LEVEL", "warn")
        .logs()
        .start_demo();
    let text = demo.banner.join("\n");
    assert!(
        text.contains(&format!("{taken} is in use")),
        "the demo says the address was taken: {text}"
    );
    let base = demo.base.clone();
    assert_ne!(base, format!("http://{taken}"), "a different port");
    let curls: Vec<&String> = demo
        .banner
        .iter()
        .filter(|l| l.trim_start().starts_with("curl "))
        .collect();
    assert!(curls.len() >= 6, "{text}");
    for curl in curls {
        assert!(
            curl.contains(&base),
            "the curl line uses the real port: {curl}"
        );
    }
    demo.get_anonymous("/healthz")
        .await
        .about("the demo answers on the port it printed")
        .expect_status(200);
    let out = stop(demo).await;
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn serve_on_a_taken_address_names_it_and_says_what_to_do() {
    let (_held, taken) = occupied();
    let out = Binary::new(&["serve"])
        .env_remove("PROFILE_LOOKUP_CONFIG")
        .env("PROFILE_LOOKUP__AUTH__API_KEYS", "startup-key")
        .env("PROFILE_LOOKUP__SERVER__LISTEN", taken.to_string())
        .env("PROFILE_LOOKUP__LOG__LEVEL", "warn")
        .output();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for needle in [
        format!("cannot listen on {taken}: address already in use"),
        "another process holds it".into(),
        "server.listen".into(),
        "PROFILE_LOOKUP__SERVER__LISTEN".into(),
    ] {
        assert!(stderr.contains(&needle), "{needle:?} missing from {stderr}");
    }
}

#[test]
fn serve_names_a_config_file_it_cannot_read() {
    let missing = std::env::temp_dir().join(format!(
        "profile-lookup-startup-{}-missing.toml",
        std::process::id()
    ));
    let directory = std::env::temp_dir();
    for path in [&missing, &directory] {
        let out = Binary::new(&["serve", "--config"])
            .arg(path)
            .env("PROFILE_LOOKUP__AUTH__API_KEYS", "startup-key")
            .output();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&path.display().to_string()) && stderr.contains("--config"),
            "{}: {stderr}",
            path.display()
        );
    }
}

#[tokio::test]
async fn piped_pretty_logs_carry_no_colour_escapes() {
    let demo = Binary::demo()
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .env("PROFILE_LOOKUP__LOG__FORMAT", "pretty")
        .env("PROFILE_LOOKUP__LOG__LEVEL", "info")
        .logs()
        .start_demo();
    demo.get_anonymous("/healthz").await.expect_status(200);
    let out = stop(demo).await;
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("INFO"), "the log was captured: {log}");
    assert!(
        !log.contains('\u{1b}'),
        "colour escapes in a piped log: {log:?}"
    );
}
