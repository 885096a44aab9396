//! A loopback TLS server that records what a client sends and computes its fingerprints.
//!
//! It makes a throwaway CA and a `localhost` certificate, tees the raw TCP bytes (for the
//! ClientHello and JA4) and the decrypted bytes (for the HTTP/2 opening and the Akamai
//! fingerprint), and serves the routes of [`route`] over HTTP/2 or HTTP/1.1 as ALPN decides.
//! Each request's headers are kept too ([`FingerprintServer::requests`]), and the server can
//! answer 429 to the browsers it is told to block ([`FingerprintServer::block_agents`]), as a
//! platform that keys its blocks on the fingerprint does.
#![allow(dead_code)]

pub mod akamai;
pub mod ja4;

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio_rustls::rustls;

/// At most this much of each direction is recorded.
const RECORD_CAP: usize = 256 * 1024;

/// The headers of a desktop Chrome navigation, in the order Chrome sends them: the client
/// hints, `upgrade-insecure-requests`, the user agent, `accept`, then `sec-fetch-*` as site,
/// mode, user, dest, then encodings, languages and priority.
pub const CHROME_NAVIGATION_ORDER: &[&str] = &[
    "sec-ch-ua",
    "sec-ch-ua-mobile",
    "sec-ch-ua-platform",
    "upgrade-insecure-requests",
    "user-agent",
    "accept",
    "sec-fetch-site",
    "sec-fetch-mode",
    "sec-fetch-user",
    "sec-fetch-dest",
    "accept-encoding",
    "accept-language",
    "priority",
];

/// The profile page every fingerprint test expects back.
pub const PROFILE_PAGE: &str = "<!doctype html><html><body><h1>@loopback</h1>\
    <p>12 followers</p></body></html>";

/// What one connection's client sent.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// The raw bytes from the client (TLS records).
    pub raw: Vec<u8>,
    /// The decrypted bytes from the client (HTTP/2 frames or an HTTP/1.1 request).
    pub plain: Vec<u8>,
    /// The ALPN protocol the server chose.
    pub alpn: Option<String>,
}

/// One request as the server's router saw it.
#[derive(Debug, Clone)]
pub struct SeenRequest {
    /// Path and query.
    pub path: String,
    /// The request headers (HTTP/2 or HTTP/1.1 alike).
    pub headers: hyper::HeaderMap,
    /// The `User-Agent`, or "".
    pub user_agent: String,
}

/// What the router shares with the test: the requests seen, the agents refused.
#[derive(Default)]
struct Shared {
    requests: Mutex<Vec<SeenRequest>>,
    /// A request whose `User-Agent` contains one of these is answered 429.
    blocked_agents: Mutex<Vec<String>>,
}

/// Appends what is read through it to a shared buffer, up to [`RECORD_CAP`].
struct Tee<S> {
    inner: S,
    log: Arc<Mutex<Vec<u8>>>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Tee<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &poll {
            let mut log = self.log.lock().unwrap();
            let room = RECORD_CAP.saturating_sub(log.len());
            let new = &buf.filled()[before..];
            log.extend_from_slice(&new[..new.len().min(room)]);
        }
        poll
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Tee<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        b: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, b)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A throwaway CA and a `localhost` certificate it signed.
pub struct TestPki {
    /// The CA certificate, PEM: what `upstream.ca_file` names.
    pub ca_pem: String,
    leaf_der: rustls::pki_types::CertificateDer<'static>,
    leaf_key_der: Vec<u8>,
    /// The leaf certificate and its key, PEM: what a server other than this rig's is given
    /// (`redis-server --tls-cert-file`, `--tls-key-file`).
    leaf_pem: String,
    leaf_key_pem: String,
    /// Where [`TestPki::write_ca_file`] writes, removed with this value.
    dir: tempfile::TempDir,
}

impl TestPki {
    /// Makes a new CA and leaf (fresh keys every time).
    pub fn new() -> Self {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(
            rcgen::DnType::CommonName,
            "profile-lookup throwaway test CA",
        );
        ca_params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        // `localhost` and its address, for servers reached by either.
        let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
        let mut leaf_params = rcgen::CertificateParams::new(names).unwrap();
        leaf_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "localhost");
        let leaf = leaf_params.signed_by(&leaf_key, &issuer).unwrap();
        Self {
            ca_pem: ca_cert.pem(),
            leaf_der: leaf.der().clone(),
            leaf_key_der: leaf_key.serialize_der(),
            leaf_pem: leaf.pem(),
            leaf_key_pem: leaf_key.serialize_pem(),
            dir: tempfile::Builder::new()
                .prefix("fingerprint-ca-")
                .tempdir()
                .expect("a temp dir"),
        }
    }

    /// Writes the CA certificate to a file that lives as long as this value, and returns its
    /// path.
    pub fn write_ca_file(&self) -> std::path::PathBuf {
        let path = self.dir.path().join("ca.pem");
        std::fs::write(&path, &self.ca_pem).unwrap();
        path
    }

    /// Writes the leaf certificate and its key (PEM) beside the CA file, and returns their
    /// paths: a server of its own (a `redis-server --tls-port`) serves them.
    pub fn write_server_files(&self) -> (std::path::PathBuf, std::path::PathBuf) {
        let (cert, key) = (
            self.dir.path().join("leaf.pem"),
            self.dir.path().join("leaf.key"),
        );
        std::fs::write(&cert, &self.leaf_pem).unwrap();
        std::fs::write(&key, &self.leaf_key_pem).unwrap();
        (cert, key)
    }

    fn server_config(&self, alpn: &[&[u8]]) -> Arc<rustls::ServerConfig> {
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(self.leaf_key_der.clone().into());
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![self.leaf_der.clone()], key)
            .unwrap();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Arc::new(config)
    }
}

/// Which application protocols the server offers in ALPN.
#[derive(Clone, Copy, Debug)]
pub enum Alpn {
    /// `h2` then `http/1.1`, as a platform's edge does.
    H2AndHttp1,
    /// `http/1.1` only, to test a client's HTTP/1 path.
    Http1Only,
}

/// The running server.
pub struct FingerprintServer {
    /// Where it listens (127.0.0.1, a free port).
    pub addr: SocketAddr,
    /// The PKI whose CA the client must trust.
    pub pki: Arc<TestPki>,
    recordings: Arc<Mutex<Vec<Arc<Mutex<Recording>>>>>,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FingerprintServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FingerprintServer {
    /// Starts a server on 127.0.0.1:0.
    pub async fn start(alpn: Alpn) -> Self {
        let pki = Arc::new(TestPki::new());
        let protocols: &[&[u8]] = match alpn {
            Alpn::H2AndHttp1 => &[b"h2", b"http/1.1"],
            Alpn::Http1Only => &[b"http/1.1"],
        };
        let acceptor = tokio_rustls::TlsAcceptor::from(pki.server_config(protocols));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let recordings: Arc<Mutex<Vec<Arc<Mutex<Recording>>>>> = Arc::default();
        let all = recordings.clone();
        let shared: Arc<Shared> = Arc::default();
        let router_state = shared.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let acceptor = acceptor.clone();
                let state = router_state.clone();
                let raw_log = Arc::new(Mutex::new(Vec::new()));
                let plain_log = Arc::new(Mutex::new(Vec::new()));
                let recording = Arc::new(Mutex::new(Recording::default()));
                all.lock().unwrap().push(recording.clone());
                tokio::spawn(async move {
                    let tee = Tee {
                        inner: tcp,
                        log: raw_log.clone(),
                    };
                    let accepted = acceptor.accept(tee).await;
                    recording.lock().unwrap().raw = raw_log.lock().unwrap().clone();
                    let Ok(tls) = accepted else { return };
                    recording.lock().unwrap().alpn = tls
                        .get_ref()
                        .1
                        .alpn_protocol()
                        .map(|p| String::from_utf8_lossy(p).into_owned());
                    let tee = Tee {
                        inner: tls,
                        log: plain_log.clone(),
                    };
                    let recorded = recording.clone();
                    let service = hyper::service::service_fn(move |req| {
                        // Every request updates the recording so a test sees the bytes read so far.
                        recorded.lock().unwrap().plain = plain_log.lock().unwrap().clone();
                        route(req, state.clone())
                    });
                    let _ = hyper_util::server::conn::auto::Builder::new(
                        hyper_util::rt::TokioExecutor::new(),
                    )
                    .serve_connection(hyper_util::rt::TokioIo::new(tee), service)
                    .await;
                });
            }
        });
        Self {
            addr,
            pki,
            recordings,
            shared,
            task,
        }
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<SeenRequest> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// From now on, answers 429 (no `Retry-After`) to requests whose `User-Agent` contains any
    /// of `markers`: a block both platforms read as one.
    pub fn block_agents(&self, markers: &[&str]) {
        *self.shared.blocked_agents.lock().unwrap() =
            markers.iter().map(|m| (*m).to_owned()).collect();
    }

    /// Asks `client` for this server's profile page, which must come whole with a 200.
    pub async fn expect_profile_page(&self, client: &profile_lookup::upstream::Upstream) {
        let response = client
            .get(self.url("/profile"), Default::default())
            .await
            .expect("the profile page");
        assert_eq!(response.status, 200);
        assert_eq!(response.body, PROFILE_PAGE.as_bytes());
    }

    /// `https://localhost:{port}{path}`.
    pub fn url(&self, path: &str) -> url::Url {
        url::Url::parse(&format!("https://localhost:{}{path}", self.addr.port())).unwrap()
    }

    /// What each connection's client sent so far, in accept order.
    pub fn recordings(&self) -> Vec<Recording> {
        self.recordings
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.lock().unwrap().clone())
            .collect()
    }
}

/// The short-video sample's profile page for its public user, the not-found page otherwise.
fn short_video_page(name: &str) -> Response<Full<Bytes>> {
    use stand_in::short_video as sv;
    let html = [("content-type", "text/html; charset=utf-8")];
    if name == sv::PUBLIC_USER.unique_id {
        respond(
            StatusCode::OK,
            &html,
            sv::profile_page(sv::Era::Universal, &sv::PUBLIC_USER, 16 * 1024),
        )
    } else {
        respond(
            StatusCode::OK,
            &html,
            sv::not_found_page(sv::Era::Universal, name),
        )
    }
}

fn respond(
    status: StatusCode,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    for (name, value) in headers {
        response.headers_mut().append(
            hyper::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            hyper::header::HeaderValue::from_str(value).unwrap(),
        );
    }
    response
}

/// Bodies larger than any test cap once decoded, and small ones that must decode.
pub mod bodies {
    use std::io::Write;

    /// `n` bytes of `b'a'` gzip-compressed (a gzip bomb when `n` is large).
    pub fn gzip(n: usize) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        write_repeated(&mut enc, n);
        enc.finish().unwrap()
    }
    /// `n` bytes of `b'a'` in zlib-wrapped deflate (HTTP's `deflate`).
    pub fn deflate(n: usize) -> Vec<u8> {
        let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        write_repeated(&mut enc, n);
        enc.finish().unwrap()
    }
    /// `n` bytes of `b'a'` brotli-compressed.
    pub fn br(n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut enc = brotli::CompressorWriter::new(&mut out, 4096, 1, 22);
            write_repeated(&mut enc, n);
        }
        out
    }
    /// `n` bytes of `b'a'` zstd-compressed.
    pub fn zstd(n: usize) -> Vec<u8> {
        let mut enc = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
        write_repeated(&mut enc, n);
        enc.finish().unwrap()
    }
    fn write_repeated(w: &mut impl Write, n: usize) {
        let block = [b'a'; 64 * 1024];
        let mut left = n;
        while left > 0 {
            let k = left.min(block.len());
            w.write_all(&block[..k]).unwrap();
            left -= k;
        }
    }
}

/// The header `/huge-header` sends: past the 16 MiB the HTTP/2 layer accepts from a server when
/// the client advertised no `SETTINGS_MAX_HEADER_LIST_SIZE` (as Firefox and Safari do not).
pub const HUGE_HEADER_BYTES: usize = 17 * 1024 * 1024;

/// Large decoded size for the bombs: far above any cap the tests set.
pub const BOMB_BYTES: usize = 8 * 1024 * 1024;
/// Small decoded size that must come through every decoder intact.
pub const SMALL_BYTES: usize = 10_000;

/// The routes: `/profile` (the page), `/@{name}` (a short-video profile page of the sample
/// user, 404 for anyone else), `/enc/{gzip|br|zstd|deflate}/{small|bomb}`, `/redirect?{url}`
/// (302), `/big-header` (1 MiB header), `/huge-header` (17 MiB header), `/throttled` (429 Retry-After), `/hang` (never
/// answers). Any of them answers 429 to a blocked agent.
async fn route(
    req: Request<hyper::body::Incoming>,
    shared: Arc<Shared>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().to_string();
    let user_agent = req
        .headers()
        .get(hyper::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    shared.requests.lock().unwrap().push(SeenRequest {
        path: req
            .uri()
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_default(),
        headers: req.headers().clone(),
        user_agent: user_agent.clone(),
    });
    let blocked = shared
        .blocked_agents
        .lock()
        .unwrap()
        .iter()
        .any(|marker| user_agent.contains(marker.as_str()));
    if blocked {
        return Ok(respond(StatusCode::TOO_MANY_REQUESTS, &[], "blocked"));
    }
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    Ok(match parts.as_slice() {
        [at_name] if at_name.starts_with('@') => short_video_page(&at_name[1..]),
        ["profile"] => respond(
            StatusCode::OK,
            &[("content-type", "text/html; charset=utf-8")],
            PROFILE_PAGE,
        ),
        ["enc", coding, size] => {
            let n = if *size == "bomb" {
                BOMB_BYTES
            } else {
                SMALL_BYTES
            };
            let body = match *coding {
                "gzip" => bodies::gzip(n),
                "br" => bodies::br(n),
                "zstd" => bodies::zstd(n),
                _ => bodies::deflate(n),
            };
            respond(StatusCode::OK, &[("content-encoding", *coding)], body)
        }
        ["redirect"] => {
            let to = req.uri().query().unwrap_or("").to_string();
            respond(StatusCode::FOUND, &[("location", to.as_str())], "")
        }
        ["big-header"] => {
            let value = "x".repeat(1024 * 1024);
            respond(StatusCode::OK, &[("x-big", value.as_str())], "small body")
        }
        ["huge-header"] => {
            let value = "x".repeat(HUGE_HEADER_BYTES);
            respond(StatusCode::OK, &[("x-huge", value.as_str())], "small body")
        }
        ["throttled"] => respond(StatusCode::TOO_MANY_REQUESTS, &[("retry-after", "7")], ""),
        ["hang"] => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            respond(StatusCode::OK, &[], "")
        }
        _ => respond(StatusCode::NOT_FOUND, &[], "no such route"),
    })
}
