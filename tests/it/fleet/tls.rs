//! `rediss://`: the fleet layer over TLS, against a loopback `redis-server --tls-port` serving a
//! certificate a throwaway CA signed (made by rcgen for each test), with `redis.ca_file`
//! naming that CA; without it the server's certificate is checked against the system's roots,
//! which do not know the CA, and no call goes through.

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use profile_lookup::config::RedisConfig;
use profile_lookup::fleet::entry::now_unix_ms;
use profile_lookup::fleet::{Fleet, SharedEntry};

use crate::support::fingerprint::TestPki;
use crate::support::test_redis::{free_port, installed};

/// A `redis-server` that speaks TLS only, on a loopback port; stopped on drop.
struct TlsRedis {
    child: Child,
    port: u16,
}

impl Drop for TlsRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `redis-server` on 127.0.0.1 with TLS only (`--port 0`), serving `pki`'s leaf certificate
/// and asking clients for none; `None` without `redis-server` (under `CI=true`, a failure).
fn start(pki: &TestPki) -> Option<TlsRedis> {
    if !installed("redis-server", "redis-server", "the TLS fleet tests") {
        return None;
    }
    let (cert, key) = pki.write_server_files();
    let ca = pki.write_ca_file();
    for _ in 0..10 {
        let port = free_port();
        let mut child = Command::new("redis-server")
            .args(["--port", "0", "--tls-port", &port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--tls-cert-file")
            .arg(&cert)
            .arg("--tls-key-file")
            .arg(&key)
            .arg("--tls-ca-cert-file")
            .arg(&ca)
            .args(["--tls-auth-clients", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server");
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = child.try_wait() {
                break; // the port was taken after all: another one
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(TlsRedis { child, port });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    panic!("could not start redis-server --tls-port on a free port");
}

fn fleet(url: &str, ca_file: Option<&Path>) -> Fleet {
    Fleet::new(&RedisConfig {
        url: url.to_owned(),
        key_prefix: "tls:".into(),
        timeout_ms: 2_000,
        ca_file: ca_file.map(Path::to_path_buf).unwrap_or_default(),
        ..RedisConfig::default()
    })
    .expect("a valid [redis] section")
}

fn entry() -> SharedEntry {
    SharedEntry {
        body: Some(Bytes::from_static(b"{\"over\":\"tls\"}")),
        private: false,
        fetched_at_unix_ms: now_unix_ms(),
        source: "page".into(),
    }
}

#[tokio::test]
async fn a_rediss_url_with_its_ca_file_shares_state_over_tls() {
    let pki = TestPki::new();
    let Some(redis) = start(&pki) else {
        return;
    };
    let url = format!("rediss://127.0.0.1:{}/0", redis.port);
    let ca = pki.write_ca_file();
    let (a, b) = (fleet(&url, Some(&ca)), fleet(&url, Some(&ca)));
    let minute = Duration::from_secs(60);
    let put = a
        .cache_put("short-video", "over.tls", &entry(), minute, minute, None)
        .await;
    assert!(put.is_some(), "the write went through");
    let got = b.cache_get("short-video", "over.tls").await;
    let got = got.expect("Redis answered").expect("the entry is there");
    assert_eq!(got.body, entry().body);
    assert!(a.is_up() && b.is_up());
}

#[tokio::test]
async fn without_the_ca_the_servers_certificate_is_refused() {
    let pki = TestPki::new();
    let Some(redis) = start(&pki) else {
        return;
    };
    let url = format!("rediss://127.0.0.1:{}/0", redis.port);
    let unknown = fleet(&url, None);
    assert_eq!(
        unknown.cache_get("short-video", "over.tls").await,
        None,
        "the system's roots do not know the throwaway CA: no call goes through"
    );
    // And a plain redis:// URL on the TLS port gets nowhere either.
    let plain = fleet(&format!("redis://127.0.0.1:{}/0", redis.port), None);
    assert_eq!(plain.cache_get("short-video", "over.tls").await, None);
}
