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
        .env("PROFILE_LOOKUP__AUTH__API_KEYS", "startup-key-0123456789")
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
            .env("PROFILE_LOOKUP__AUTH__API_KEYS", "startup-key-0123456789")
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

#[tokio::test]
async fn serve_logs_one_start_up_summary() {
    let listen = {
        let (held, addr) = occupied();
        drop(held);
        addr
    };
    let key = "summary-key-0123456789";
    let file = crate::support::temp_file(
        "profile-lookup-startup-",
        ".toml",
        b"[upstream]\nproxies = [\"http://a:secret-pw@proxy.invalid:3128\", \"http://u-{session}:pw@gw.invalid:7777\"]\n",
    );
    let serve = Binary::serve_with(file.path())
        .env_remove("PROFILE_LOOKUP_CONFIG")
        .env("PROFILE_LOOKUP__AUTH__API_KEYS", key)
        .env("PROFILE_LOOKUP__SERVER__LISTEN", listen.to_string())
        .env("PROFILE_LOOKUP__LOG__FORMAT", "json")
        .env("PROFILE_LOOKUP__LOG__LEVEL", "info")
        .env_remove("PROFILE_LOOKUP__REDIS__URL")
        .logs()
        .start_serving(listen, key);
    let out = stop(serve).await;
    let log = String::from_utf8_lossy(&out.stderr);
    let summaries: Vec<serde_json::Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|l| l["message"] == "starting")
        .collect();
    assert_eq!(summaries.len(), 1, "one summary line: {log}");
    let line = &summaries[0];
    assert_eq!(line["level"], "INFO");
    assert_eq!(line["version"], env!("CARGO_PKG_VERSION"));
    let commit = line["commit"].as_str().unwrap_or_default();
    assert!(!commit.is_empty(), "{line}");
    assert_eq!(commit, profile_lookup::build_info::COMMIT);
    assert_eq!(line["features"], profile_lookup::build_info::FEATURES);
    let sources = line["config_sources"].as_str().unwrap_or_default();
    for needle in [
        "defaults".to_owned(),
        file.path().display().to_string(),
        "PROFILE_LOOKUP__AUTH__API_KEYS".into(),
        "PROFILE_LOOKUP__SERVER__LISTEN".into(),
    ] {
        assert!(sources.contains(&needle), "{needle:?} not in {sources}");
    }
    assert_eq!(line["api_keys"], 1);
    assert_eq!(line["redis"], "alone");
    assert_eq!(line["proxies"], 1);
    assert_eq!(line["gateways"], 1);
    assert_eq!(line["canary"], "off");
    assert_eq!(line["client"], "plain");
    let per_platform = line["sources"].as_str().unwrap_or_default();
    assert!(
        per_platform.contains("short_video=page,embed"),
        "{per_platform}"
    );
    assert!(
        !log.contains(key) && !log.contains("secret-pw"),
        "a secret in {log}"
    );
}
