//! A forward proxy the tests start on 127.0.0.1:0: absolute-form HTTP requests and CONNECT,
//! optional Basic auth (407 without it), and the ways a proxy fails (refusing, 407, hanging,
//! resetting). Each proxy tags what it forwards with `x-test-proxy: <tag>` and counts it, so
//! an upstream can tell (and block) the requests that came through one chosen proxy.
//!
//! It only ever connects to loopback: a target other than 127.0.0.1 or localhost is refused.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// The header a proxy adds to every request it forwards (absolute-form only: a tunnel's bytes
/// are the client's).
pub const TAG_HEADER: &str = "x-test-proxy";

/// The tag of the proxy a request came through, as the upstream reads it; `None` when it came
/// straight.
pub fn tag_of(headers: &axum::http::HeaderMap) -> Option<&str> {
    headers.get(TAG_HEADER).and_then(|v| v.to_str().ok())
}

/// How a proxy behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Forwards requests and tunnels CONNECTs.
    Forward,
    /// Answers every request with 407, whatever credentials it is given.
    Always407,
    /// Accepts connections and never answers.
    Hang,
    /// Accepts, reads the request head, and resets the connection.
    Reset,
    /// A provider's gateway: the session id in the Basic user name (`…-sessid-<id>`, see
    /// [`ForwardProxy::url`]) picks the exit, and the requests forwarded carry that id as their
    /// tag (the exit identity the upstream sees); without a session id, 407.
    Gateway,
}

/// The password of a [`Mode::Gateway`] proxy's URL (tests look for it where it must not be).
pub const GATEWAY_PASSWORD: &str = "gw-pass-Xq7-never-shown";

/// A running proxy (or, for [`ForwardProxy::refusing`], a port where nothing listens).
pub struct ForwardProxy {
    /// Where it listens.
    pub addr: SocketAddr,
    mode: Mode,
    credentials: Option<(String, String)>,
    forwarded: Arc<AtomicUsize>,
    tunnels: Arc<AtomicUsize>,
    refused_auth: Arc<AtomicUsize>,
    held: Arc<AtomicUsize>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for ForwardProxy {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl ForwardProxy {
    /// Starts a proxy tagged `tag`; with `credentials`, a request without those Basic
    /// credentials gets 407.
    pub async fn start(tag: &str, mode: Mode, credentials: Option<(&str, &str)>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let credentials = credentials.map(|(u, p)| (u.to_owned(), p.to_owned()));
        let expected = credentials.as_ref().map(|(u, p)| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
            )
        });
        let forwarded = Arc::new(AtomicUsize::new(0));
        let tunnels = Arc::new(AtomicUsize::new(0));
        let refused_auth = Arc::new(AtomicUsize::new(0));
        let held = Arc::new(AtomicUsize::new(0));
        let shared = Shared {
            tag: tag.to_owned(),
            mode,
            expected,
            forwarded: forwarded.clone(),
            tunnels: tunnels.clone(),
            refused_auth: refused_auth.clone(),
            held: held.clone(),
        };
        let shared = Arc::new(shared);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let shared = shared.clone();
                tokio::spawn(async move {
                    let _ = shared.serve(stream).await;
                });
            }
        });
        Self {
            addr,
            mode,
            credentials,
            forwarded,
            tunnels,
            refused_auth,
            held,
            task: Some(task),
        }
    }

    /// One forwarding proxy, without credentials, for each of `tags`.
    pub async fn start_each(tags: &[&str]) -> Vec<Self> {
        let mut proxies = Vec::new();
        for tag in tags {
            proxies.push(Self::start(tag, Mode::Forward, None).await);
        }
        proxies
    }

    /// A proxy address where nothing listens (connections are refused).
    pub async fn refusing() -> Self {
        Self {
            addr: crate::support::closed_port().await,
            mode: Mode::Forward,
            credentials: None,
            forwarded: Arc::default(),
            tunnels: Arc::default(),
            refused_auth: Arc::default(),
            held: Arc::default(),
            task: None,
        }
    }

    /// Stops the proxy: from now on its port refuses connections.
    pub async fn stop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            // The listener is dropped with the accept loop, once the abort has landed.
            let _ = task.await;
        }
    }

    /// `http://[user:pass@]127.0.0.1:port`, with the credentials it was started with.
    /// A [`Mode::Gateway`] proxy's is a gateway URL:
    /// `http://customer-test-sessid-{session}:<GATEWAY_PASSWORD>@127.0.0.1:port`.
    pub fn url(&self) -> String {
        if self.mode == Mode::Gateway {
            return format!(
                "http://customer-test-sessid-{{session}}:{GATEWAY_PASSWORD}@{}",
                self.addr
            );
        }
        match &self.credentials {
            Some((u, p)) => format!("http://{u}:{p}@{}", self.addr),
            None => format!("http://{}", self.addr),
        }
    }

    /// `http://127.0.0.1:port`: no credentials, whatever the proxy wants.
    pub fn url_without_credentials(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests forwarded in absolute form.
    pub fn forwarded(&self) -> usize {
        self.forwarded.load(Ordering::SeqCst)
    }

    /// CONNECT tunnels opened.
    pub fn tunnels(&self) -> usize {
        self.tunnels.load(Ordering::SeqCst)
    }

    /// Requests answered 407.
    pub fn refused_auth(&self) -> usize {
        self.refused_auth.load(Ordering::SeqCst)
    }

    /// Connections a [`Mode::Hang`] proxy accepted and never answered.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::SeqCst)
    }
}

struct Shared {
    tag: String,
    mode: Mode,
    expected: Option<String>,
    forwarded: Arc<AtomicUsize>,
    tunnels: Arc<AtomicUsize>,
    refused_auth: Arc<AtomicUsize>,
    held: Arc<AtomicUsize>,
}

/// A request head: the request line's parts and the header lines.
struct Head {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
}

async fn read_head(reader: &mut BufReader<TcpStream>) -> Option<Head> {
    let mut line = String::new();
    reader.read_line(&mut line).await.ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let target = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    Some(Head {
        method,
        target,
        headers,
    })
}

/// The session id in a gateway's `Proxy-Authorization: Basic …` (user `…-sessid-<id>`, the
/// password [`GATEWAY_PASSWORD`]).
fn session_of(header: &str) -> Option<String> {
    let encoded = header.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    let id = user.split_once("-sessid-")?.1;
    (password == GATEWAY_PASSWORD && !id.is_empty()).then(|| id.to_owned())
}

/// The loopback address of `host:port`, or `None` for anything not on loopback.
fn loopback(host_port: &str) -> Option<SocketAddr> {
    let (host, port) = host_port.rsplit_once(':')?;
    if !matches!(host, "127.0.0.1" | "localhost") {
        return None;
    }
    Some(SocketAddr::from(([127, 0, 0, 1], port.parse().ok()?)))
}

impl Shared {
    async fn serve(&self, stream: TcpStream) -> std::io::Result<()> {
        match self.mode {
            Mode::Hang => {
                self.held.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return Ok(());
            }
            Mode::Reset => {
                let mut reader = BufReader::new(stream);
                let _ = read_head(&mut reader).await;
                let stream = reader.into_inner();
                // A zero linger makes the close a reset, at once: nothing is left to block on.
                #[allow(deprecated)]
                stream.set_linger(Some(Duration::ZERO))?;
                drop(stream);
                return Ok(());
            }
            Mode::Forward | Mode::Always407 | Mode::Gateway => {}
        }
        let mut reader = BufReader::new(stream);
        // One request per connection: the answer says `connection: close`.
        let Some(head) = read_head(&mut reader).await else {
            return Ok(());
        };
        let given = head
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("proxy-authorization"))
            .map(|(_, v)| v.as_str());
        let authorised = match &self.expected {
            Some(expected) => given == Some(expected.as_str()),
            None => true,
        };
        let exit = (self.mode == Mode::Gateway)
            .then(|| given.and_then(session_of))
            .flatten();
        let authorised = authorised && (self.mode != Mode::Gateway || exit.is_some());
        let tag = exit.unwrap_or_else(|| self.tag.clone());
        // A posted body (a form) goes on with the head: read it before the buffer is let go.
        let length = head
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(0)
            .min(1 << 20);
        let mut body = vec![0; length];
        reader.read_exact(&mut body).await?;
        let mut client = reader.into_inner();
        if self.mode == Mode::Always407 || !authorised {
            self.refused_auth.fetch_add(1, Ordering::SeqCst);
            client
                .write_all(
                    b"HTTP/1.1 407 Proxy Authentication Required\r\n\
                      proxy-authenticate: Basic realm=\"test\"\r\n\
                      content-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await?;
            return Ok(());
        }
        if head.method.eq_ignore_ascii_case("CONNECT") {
            let Some(target) = loopback(&head.target) else {
                client
                    .write_all(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n")
                    .await?;
                return Ok(());
            };
            let mut upstream = TcpStream::connect(target).await?;
            self.tunnels.fetch_add(1, Ordering::SeqCst);
            client
                .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                .await?;
            tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
            return Ok(());
        }
        // Absolute form: http://host:port/path?query
        let Some(rest) = head.target.strip_prefix("http://") else {
            client
                .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                .await?;
            return Ok(());
        };
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, "/"),
        };
        let Some(target) = loopback(authority) else {
            client
                .write_all(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n")
                .await?;
            return Ok(());
        };
        let mut request = format!("{} {path} HTTP/1.1\r\n", head.method);
        for (name, value) in &head.headers {
            let lower = name.to_ascii_lowercase();
            if matches!(
                lower.as_str(),
                "proxy-authorization" | "proxy-connection" | "connection" | "keep-alive"
            ) {
                continue;
            }
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str(&format!("{TAG_HEADER}: {tag}\r\nconnection: close\r\n\r\n"));
        let mut upstream = TcpStream::connect(target).await?;
        self.forwarded.fetch_add(1, Ordering::SeqCst);
        upstream.write_all(request.as_bytes()).await?;
        upstream.write_all(&body).await?;
        // The answer, with `connection: close` added to its head, then the rest as it comes.
        let mut answer = Vec::new();
        let mut buf = [0u8; 8192];
        let head_end = loop {
            let n = upstream.read(&mut buf).await?;
            if n == 0 {
                return Ok(());
            }
            answer.extend_from_slice(&buf[..n]);
            if let Some(at) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
                break at;
            }
        };
        let head_text = String::from_utf8_lossy(&answer[..head_end]);
        let mut out = String::new();
        for line in head_text.split("\r\n") {
            if line
                .split(':')
                .next()
                .is_some_and(|n| n.trim().eq_ignore_ascii_case("connection"))
            {
                continue;
            }
            out.push_str(line);
            out.push_str("\r\n");
        }
        out.push_str("connection: close\r\n\r\n");
        client.write_all(out.as_bytes()).await?;
        client.write_all(&answer[head_end + 4..]).await?;
        tokio::io::copy(&mut upstream, &mut client).await?;
        client.shutdown().await?;
        Ok(())
    }
}
