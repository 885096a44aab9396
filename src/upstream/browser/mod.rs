//! The browser-grade upstream client (`upstream.client = "browser"`, cargo feature `browser`).
//!
//! The platforms answer 403, 429 or a login wall to clients whose TLS ClientHello and HTTP/2
//! connection are not a browser's. This client speaks BoringSSL with the ClientHello of one
//! desktop browser (`upstream.browser_profiles`: Chrome current or previous, Firefox, Safari;
//! see [`identity`]): its cipher suites, extensions, GREASE where the browser sends it, its
//! key shares, and its HTTP/2 SETTINGS, WINDOW_UPDATE, pseudo-header and header order, through
//! `wreq` and a `wreq-util` emulation. One client presents one browser, and the headers that
//! name the client (User-Agent, Chromium's client hints) are always that browser's own.
//!
//! Crate choice: `wreq` (pinned, see `Cargo.toml`) because it builds with this toolchain, its
//! browser emulations are checked on loopback by `tests/it/upstream/browser_client.rs` (JA4 and the
//! Akamai HTTP/2 fingerprint against each browser's published values), and its API is
//! reqwest's, so the guards below are the plain client's.
//!
//! It keeps every guard of [`super::Upstream`]: a total deadline, a body cap counted on
//! decompressed bytes while streaming (gzip, br, zstd and deflate decoders enabled
//! explicitly), no redirect followed, bounded response headers (over HTTP/2 Chrome's own
//! `SETTINGS_MAX_HEADER_LIST_SIZE`, 256 KiB; Firefox and Safari advertise none, so the HTTP/2
//! layer's own 16 MiB; over HTTP/1 the read buffer limit), and the same [`Response`] with its
//! `Retry-After` reading.

pub mod identity;

use std::time::Duration;

use reqwest::header::{ACCEPT, ACCEPT_LANGUAGE, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use url::Url;

use super::roots::{ClientBuildError, read_pem_roots};
use super::{
    Cause, Form, Response, UpstreamError, connect_deadline, error_chain, is_navigation, read_capped,
};
use crate::config::{BrowserProfile, Settings, ms};

/// Headers that name the client; the profile sets them, so a caller's values (which may name
/// another browser or version) are dropped rather than contradicting the handshake. Firefox
/// and Safari send no client hints, so for them the hints are dropped and none added.
const IDENTITY_HEADERS: [&str; 4] = [
    "user-agent",
    "sec-ch-ua",
    "sec-ch-ua-mobile",
    "sec-ch-ua-platform",
];

/// The browser-grade client: cheap to clone, one connection pool.
#[derive(Clone)]
pub struct BrowserClient {
    http: wreq::Client,
    profile: BrowserProfile,
    timeout: Duration,
    max_body: usize,
    /// Whether requests go through a proxy (whose failures while connecting are its own).
    proxied: bool,
}

impl std::fmt::Debug for BrowserClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrowserClient")
            .field("profile", &self.profile)
            .field("timeout", &self.timeout)
            .field("max_body", &self.max_body)
            .finish_non_exhaustive()
    }
}

impl BrowserClient {
    /// Builds the client from `[upstream]` (deadline, body cap, `ca_file`), going straight out
    /// as the first of `upstream.browser_profiles` (Chrome when the list is empty).
    pub fn new(settings: &Settings) -> Result<Self, ClientBuildError> {
        let profile = settings
            .upstream
            .browser_profiles
            .first()
            .copied()
            .unwrap_or(BrowserProfile::Chrome);
        Self::presenting(settings, None, profile)
    }

    /// Builds the client from `[upstream]` presenting `profile`, sending every request through
    /// `proxy` when one is given (credentials in the URL are wreq's to use), as
    /// [`super::Upstream::build`] does.
    pub fn presenting(
        settings: &Settings,
        proxy: Option<&Url>,
        profile: BrowserProfile,
    ) -> Result<Self, ClientBuildError> {
        let timeout = ms(settings.upstream.timeout_ms);
        let mut builder = wreq::Client::builder()
            .emulation(identity::emulation(profile))
            .redirect(wreq::redirect::Policy::none())
            .retry(wreq::retry::Policy::never())
            .gzip(true)
            .brotli(true)
            .zstd(true)
            .deflate(true)
            .connect_timeout(connect_deadline(timeout))
            .timeout(timeout)
            .pool_idle_timeout(Duration::from_secs(30))
            .tcp_nodelay(true);
        if let Some(proxy) = proxy {
            // wreq's error would quote the URL, password included: it is not passed on.
            let proxy = wreq::Proxy::all(proxy.as_str()).map_err(|_| ClientBuildError::Proxy)?;
            builder = builder.proxy(proxy);
        }
        if let Some(path) = settings.upstream.ca_file() {
            let pem = read_pem_roots(path)?;
            let store = wreq::tls::trust::CertStore::builder()
                .add_der_certs(webpki_root_certs::TLS_SERVER_ROOT_CERTS)
                .add_stack_pem_certs(&pem)
                .build()
                .map_err(|e| ClientBuildError::CaFile {
                    path: path.to_path_buf(),
                    reason: error_chain(&e),
                })?;
            builder = builder.tls_cert_store(store);
        }
        let http = builder
            .build()
            .map_err(|e| ClientBuildError::Browser(error_chain(&e)))?;
        Ok(Self {
            http,
            profile,
            timeout,
            max_body: settings.upstream.max_body_bytes,
            proxied: proxy.is_some(),
        })
    }

    /// The browser this client presents.
    pub fn profile(&self) -> BrowserProfile {
        self.profile
    }

    /// Sends `GET url` with `headers` (see [`BrowserClient::send`]).
    pub async fn get(&self, url: Url, headers: HeaderMap) -> Result<Response, UpstreamError> {
        self.send(url, headers, None, self.timeout).await
    }

    /// Sends `url` with `headers` (less the identity headers the profile owns), a GET or a POST
    /// of `form`, and reads the whole body within the deadline and the cap. A page request (a
    /// navigation) goes out as the browser sends one: its own `Accept` and `Accept-Language` (a
    /// page cannot choose them), the headers it adds to navigations, in its order.
    pub async fn send(
        &self,
        url: Url,
        mut headers: HeaderMap,
        form: Option<&Form>,
        head_timeout: Duration,
    ) -> Result<Response, UpstreamError> {
        for name in IDENTITY_HEADERS {
            headers.remove(HeaderName::from_static(name));
        }
        let navigation = is_navigation(&headers).then(|| identity::navigation(self.profile));
        if let Some(navigation) = navigation {
            headers.remove(ACCEPT);
            headers.remove(ACCEPT_LANGUAGE);
            for (name, value) in navigation.extra {
                headers.insert(
                    HeaderName::from_static(name),
                    HeaderValue::from_static(value),
                );
            }
        }
        let mut request = match form {
            None => self.http.get(url.as_str()).headers(headers),
            Some(form) => self
                .http
                .post(url.as_str())
                .headers(headers)
                .header(CONTENT_TYPE, Form::content_type())
                .body(form.body()),
        };
        if let Some(navigation) = navigation {
            request = request.orig_headers((*navigation.order).clone());
        }
        let got_head = std::sync::atomic::AtomicBool::new(false);
        let read = async {
            let mut response = super::head_within(head_timeout, request.send())
                .await?
                .map_err(|e| super::headless(classify(e, self.timeout, self.proxied)))?;
            got_head.store(true, std::sync::atomic::Ordering::Relaxed);
            let head = (
                response.status(),
                std::mem::take(response.headers_mut()),
                response.content_length(),
            );
            read_capped(head, response.bytes_stream(), url, self.max_body, |e| {
                classify(e, self.timeout, self.proxied)
            })
            .await
        };
        // wreq's own timeout covers the same span; this one also bounds our own reading.
        tokio::time::timeout(self.timeout, read)
            .await
            .unwrap_or_else(|_| Err(super::late(&got_head, self.timeout)))
    }
}

/// An error of wreq as ours, classified as the plain client's are (`super::classify`): a
/// connector error (TCP, the proxy's CONNECT, TLS) is a connect failure, timed out or not; a
/// time-out anywhere else came after the request went out. `timeout` is the whole deadline,
/// `proxied` whether the request went through a proxy; the [`Cause`] is read from the chain.
fn classify(err: wreq::Error, timeout: Duration, proxied: bool) -> UpstreamError {
    if err.is_proxy_connect() && !err.is_timeout() {
        UpstreamError::Connect(Cause::Proxy, super::causes(&err))
    } else if err.is_connect() || err.is_proxy_connect() {
        if err.is_timeout() {
            UpstreamError::ConnectTimeout(connect_deadline(timeout))
        } else {
            UpstreamError::Connect(Cause::of(&err, true, proxied), super::causes(&err))
        }
    } else if err.is_timeout() {
        UpstreamError::Timeout(timeout)
    } else if err.is_decode() {
        UpstreamError::Decode(error_chain(&err))
    } else {
        UpstreamError::Transport(Cause::of(&err, false, proxied), error_chain(&err))
    }
}
