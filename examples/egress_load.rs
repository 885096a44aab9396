//! The loopback platform and proxies of `scripts/egress.sh`.
//!
//! ```text
//! cargo run --release --example egress_load -- BLOCK_AFTER
//! ```
//!
//! Starts, on ports the OS picks, and prints `LISTENING <platform> <gateway> <auth407>
//! <silent> <reset> <fixed>`:
//!
//! - a photo-share platform stand-in that answers the profile JSON of any name (the public
//!   sample, renamed) and trusts the header `x-exit` as the address a request came from: from
//!   an exit's `BLOCK_AFTER + 1`-th request on it answers 429 (`GET /stats` prints
//!   `exits=… blocked=…`);
//! - a provider's gateway: an HTTP forward proxy (absolute-form requests) whose Basic user name
//!   holds `-session-<id>`; the id is the exit (sent on as `x-exit`); no id: 407;
//! - four fixed proxies: one that answers 407, one that takes the request and never answers,
//!   one that resets the connection, and one that works (its exit is `fixed`).
//!
//! Loopback only: a proxy forwards to 127.0.0.1 and nothing else.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use base64::Engine;
use stand_in::photo_share as ps;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// About how large each profile JSON is.
const BODY_BYTES: usize = 4 * 1024;
/// The largest request head a proxy reads.
const MAX_HEAD: usize = 64 * 1024;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Gateway,
    Auth407,
    Silent,
    Reset,
    Fixed,
}

#[derive(Clone, Default)]
struct Platform {
    block_after: usize,
    seen: Arc<Mutex<HashMap<String, usize>>>,
    blocked: Arc<Mutex<u64>>,
}

fn main() {
    let block_after: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| {
            eprintln!("usage: egress_load BLOCK_AFTER");
            std::process::exit(2);
        });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(run(block_after));
}

async fn run(block_after: usize) {
    let platform = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let platform_addr = platform.local_addr().expect("bound");
    let state = Platform {
        block_after,
        ..Platform::default()
    };
    let app = axum::Router::new()
        .route("/stats", get(stats))
        .route("/api/v1/users/web_profile_info/", get(profile))
        .with_state(state);
    tokio::spawn(async move { axum::serve(platform, app).await.expect("serves") });
    let mut ports = vec![platform_addr.port()];
    for kind in [
        Kind::Gateway,
        Kind::Auth407,
        Kind::Silent,
        Kind::Reset,
        Kind::Fixed,
    ] {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        ports.push(listener.local_addr().expect("bound").port());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let _ = proxy(kind, stream, platform_addr).await;
                });
            }
        });
    }
    let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
    println!("LISTENING {}", ports.join(" "));
    std::future::pending::<()>().await;
}

async fn stats(State(state): State<Platform>) -> String {
    let exits = state.seen.lock().expect("not poisoned").len();
    let blocked = *state.blocked.lock().expect("not poisoned");
    format!("exits={exits} blocked={blocked}")
}

async fn profile(
    State(state): State<Platform>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> axum::response::Response {
    let exit = headers
        .get("x-exit")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-")
        .to_owned();
    let n = {
        let mut seen = state.seen.lock().expect("not poisoned");
        let n = seen.entry(exit).or_default();
        *n += 1;
        *n
    };
    if n > state.block_after {
        *state.blocked.lock().expect("not poisoned") += 1;
        return (StatusCode::TOO_MANY_REQUESTS, "slow down").into_response();
    }
    let name = query.get("username").cloned().unwrap_or_default();
    let username: &'static str = Box::leak(name.to_ascii_lowercase().into_boxed_str());
    let user = ps::SampleUser {
        username,
        ..ps::PUBLIC_USER
    };
    let body = ps::web_profile_info(&user, BODY_BYTES);
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "application/json; charset=utf-8",
        )],
        body,
    )
        .into_response()
}

/// One proxy connection: one request, answered as `kind` answers it.
async fn proxy(kind: Kind, mut client: TcpStream, platform: SocketAddr) -> std::io::Result<()> {
    if kind == Kind::Silent {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        return Ok(());
    }
    let mut head = Vec::new();
    let mut buf = [0u8; 8192];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = client.read(&mut buf).await?;
        if n == 0 || head.len() > MAX_HEAD {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let exit = match kind {
        Kind::Reset => {
            #[allow(deprecated)]
            client.set_linger(Some(Duration::ZERO))?;
            return Ok(());
        }
        Kind::Auth407 => None,
        Kind::Fixed => Some("fixed".to_owned()),
        Kind::Gateway => session_of(&text),
        Kind::Silent => unreachable!("answered above"),
    };
    let Some(exit) = exit else {
        client
            .write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await?;
        return Ok(());
    };
    let mut lines = text.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or("GET"), parts.next().unwrap_or("/"));
    let path = target
        .strip_prefix("http://")
        .and_then(|rest| rest.find('/').map(|at| &rest[at..]))
        .unwrap_or("/");
    let mut request = format!("{method} {path} HTTP/1.1\r\n");
    for line in lines.take_while(|l| !l.is_empty()) {
        let name = line
            .split(':')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        if !matches!(
            name.as_str(),
            "proxy-authorization" | "proxy-connection" | "connection" | "keep-alive"
        ) {
            request.push_str(line);
            request.push_str("\r\n");
        }
    }
    request.push_str(&format!("x-exit: {exit}\r\nconnection: close\r\n\r\n"));
    let mut upstream = TcpStream::connect(platform).await?;
    upstream.write_all(request.as_bytes()).await?;
    tokio::io::copy(&mut upstream, &mut client).await?;
    client.shutdown().await
}

/// The session id in a gateway request's `Proxy-Authorization: Basic …` (user `…-session-<id>`).
fn session_of(head: &str) -> Option<String> {
    let value = head.split("\r\n").find_map(|l| {
        l.strip_prefix("proxy-authorization: ")
            .or_else(|| l.strip_prefix("Proxy-Authorization: "))
    })?;
    let encoded = value.trim().strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let user = text.split_once(':')?.0;
    let id = user.split_once("-session-")?.1;
    (!id.is_empty()).then(|| id.to_owned())
}
