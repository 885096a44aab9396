//! Start-up as a newcomer meets it, through the real binary: a taken address (`demo` moves to
//! a free port and says so, `serve` fails naming the address and what to do), a config file
//! that cannot be read, and logs piped to a file carrying no colour escapes.

use std::io::BufRead;
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_profile-lookup");

/// A loopback address the OS chose, held by this test for as long as the listener lives.
fn occupied() -> (TcpListener, SocketAddr) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    (listener, addr)
}

/// The demo's banner lines, up to its last one (`Ctrl-C stops.`).
fn banner(child: &mut Child) -> Vec<String> {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(20)) {
        let last = line.starts_with("Ctrl-C");
        lines.push(line);
        if last {
            break;
        }
    }
    lines
}

fn stop(child: Child) -> std::process::Output {
    let out = crate::support::terminate(child);
    assert!(out.status.code().is_some(), "ended by SIGTERM's handler");
    out
}

fn healthz(base: &str) -> u16 {
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(async { reqwest::get(format!("{base}/healthz")).await })
        .map(|r| r.status().as_u16())
        .unwrap_or(0)
}

#[test]
fn demo_moves_to_a_free_port_when_its_default_address_is_taken() {
    let (_held, taken) = occupied();
    // The demo's default address is `server.listen`: here one this test holds.
    let mut child = Command::new(BIN)
        .arg("demo")
        .env_remove("PROFILE_LOOKUP_CONFIG")
        .env("PROFILE_LOOKUP__SERVER__LISTEN", taken.to_string())
        .env("PROFILE_LOOKUP__LOG__LEVEL", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = banner(&mut child);
    let text = lines.join("\n");
    assert!(
        text.contains(&format!("{taken} is in use")),
        "the demo says the address was taken: {text}"
    );
    let base = lines
        .iter()
        .find_map(|l| l.strip_prefix("Listening on "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in the banner: {text}"))
        .to_owned();
    assert_ne!(base, format!("http://{taken}"), "a different port");
    let curls: Vec<&String> = lines
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
    assert_eq!(
        healthz(&base),
        200,
        "the demo answers on the port it printed"
    );
    let out = stop(child);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn serve_on_a_taken_address_names_it_and_says_what_to_do() {
    let (_held, taken) = occupied();
    let out = Command::new(BIN)
        .arg("serve")
        .env_remove("PROFILE_LOOKUP_CONFIG")
        .env("PROFILE_LOOKUP__AUTH__API_KEYS", "startup-key")
        .env("PROFILE_LOOKUP__SERVER__LISTEN", taken.to_string())
        .env("PROFILE_LOOKUP__LOG__LEVEL", "warn")
        .output()
        .unwrap();
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
        let out = Command::new(BIN)
            .arg("serve")
            .arg("--config")
            .arg(path)
            .env("PROFILE_LOOKUP__AUTH__API_KEYS", "startup-key")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&path.display().to_string()) && stderr.contains("--config"),
            "{}: {stderr}",
            path.display()
        );
    }
}

#[test]
fn piped_pretty_logs_carry_no_colour_escapes() {
    let mut child = Command::new(BIN)
        .args(["demo", "--listen", "127.0.0.1:0"])
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .env("PROFILE_LOOKUP__LOG__FORMAT", "pretty")
        .env("PROFILE_LOOKUP__LOG__LEVEL", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = banner(&mut child);
    let base = lines
        .iter()
        .find_map(|l| l.strip_prefix("Listening on "))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("banner")
        .to_owned();
    assert_eq!(healthz(&base), 200);
    let out = stop(child);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("INFO"), "the log was captured: {log}");
    assert!(
        !log.contains('\u{1b}'),
        "colour escapes in a piped log: {log:?}"
    );
}
