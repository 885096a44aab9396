//! `healthcheck` says why it failed (on stderr: nothing listening, no answer in time, a status
//! other than 200) and reads `--config FILE` as `serve` does.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::Output;
use std::time::Duration;

use crate::support::binary::Binary;
use crate::support::temp_file;

/// A loopback address nothing listens on (the port was free a moment ago).
fn closed_address() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// A loopback server that answers every connection's request with `status_line`.
fn answering(status_line: &'static str) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut request = [0u8; 1024];
            let _ = stream.read(&mut request);
            let _ = write!(stream, "{status_line}\r\nContent-Length: 0\r\n\r\n");
        }
    });
    addr
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_failed_probe_says_why() {
    let closed = closed_address();
    let out = Binary::new(&["healthcheck", "--addr", &closed.to_string()]).output();
    assert_eq!(out.status.code(), Some(1));
    let said = stderr(&out);
    assert!(said.contains(&closed.to_string()), "{said}");
    assert!(said.contains("refused"), "{said}");

    let unhealthy = answering("HTTP/1.1 503 Service Unavailable");
    let out = Binary::new(&["healthcheck", "--addr", &unhealthy.to_string()]).output();
    assert_eq!(out.status.code(), Some(1));
    let said = stderr(&out);
    assert!(said.contains("503"), "{said}");

    let healthy = answering("HTTP/1.1 200 OK");
    let out = Binary::new(&["healthcheck", "--addr", &healthy.to_string()]).output();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn a_silent_instance_is_a_time_out() {
    // Accepts (the backlog does) and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent = listener.local_addr().unwrap();
    let out = Binary::new(&["healthcheck", "--addr", &silent.to_string()])
        .output_within(Duration::from_secs(10))
        .expect("the probe gives up by itself");
    assert_eq!(out.status.code(), Some(1));
    let said = stderr(&out);
    assert!(said.contains("no answer"), "{said}");
    drop(listener);
}

#[test]
fn the_config_file_says_where_to_probe() {
    let healthy = answering("HTTP/1.1 200 OK");
    let config = temp_file(
        "profile-lookup-healthcheck-",
        ".toml",
        format!("[server]\nlisten = \"{healthy}\"\n").as_bytes(),
    );
    let out = Binary::new(&["healthcheck", "--config"])
        .arg(config.path())
        .env_remove("PROFILE_LOOKUP_CONFIG")
        .env_remove("PROFILE_LOOKUP__SERVER__LISTEN")
        .output();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let broken = temp_file(
        "profile-lookup-healthcheck-",
        ".toml",
        b"[server]\nlisten = 8\n",
    );
    let out = Binary::new(&["healthcheck", "--config"])
        .arg(broken.path())
        .env_remove("PROFILE_LOOKUP__SERVER__LISTEN")
        .output();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("listen"), "{}", stderr(&out));
}
