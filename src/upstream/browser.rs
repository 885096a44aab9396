//! The browser-grade upstream client (`upstream.client = "browser"`, cargo feature `browser`).
//!
//! The platforms answer 403, 429 or a login wall to clients whose TLS ClientHello and HTTP/2
//! connection are not a browser's. This client speaks BoringSSL with the ClientHello of a
//! current stable desktop Chrome (cipher suites, GREASE, extension order randomised per
//! connection, ALPS, the X25519MLKEM768 key share) and Chrome's HTTP/2 SETTINGS,
//! WINDOW_UPDATE, pseudo-header and header order, through `wreq` and a `wreq-util` profile.
//!
//! Crate choice: `wreq` (pinned, see `Cargo.toml`) because it builds with this toolchain, its
//! Chrome profiles are checked on loopback by `tests/browser_client.rs` (JA4 and the Akamai
//! HTTP/2 fingerprint), and its API is reqwest's, so the guards below are the plain client's.
//!
//! It keeps every guard of [`super::Upstream`]: a total deadline, a body cap counted on
//! decompressed bytes while streaming (gzip, br, zstd and deflate decoders enabled
//! explicitly), no redirect followed, bounded response headers (Chrome's own HTTP/2
//! `SETTINGS_MAX_HEADER_LIST_SIZE` and the HTTP/1 read buffer limit), and the same
//! [`Response`] with its `Retry-After` reading.

use std::time::Duration;

use reqwest::header::{ACCEPT, HeaderMap, HeaderName, HeaderValue, USER_AGENT};
use url::Url;
use wreq::header::OrigHeaderMap;
use wreq_util::{Emulation, Platform, Profile};

use super::roots::{ClientBuildError, read_pem_roots};
use super::{Response, UpstreamError, connect_deadline, error_chain, read_capped};
use crate::config::{Settings, ms};

/// The Chrome release presented: the newest profile of the pinned `wreq-util`. Its
/// `User-Agent` and `sec-ch-ua` name this same version.
pub const CHROME_PROFILE: Profile = Profile::Chrome149;

/// The desktop platform presented (`sec-ch-ua-platform`, the `User-Agent`'s OS).
pub const CHROME_PLATFORM: Platform = Platform::Windows;

/// Headers that name the client; the profile sets them, so a caller's values (which may name
/// another Chrome version) are dropped rather than contradicting the handshake.
const IDENTITY_HEADERS: [&str; 4] = [
    "user-agent",
    "sec-ch-ua",
    "sec-ch-ua-mobile",
    "sec-ch-ua-platform",
];

/// A desktop Chrome's header order on a navigation (a profile page opened in a tab), after the
/// pseudo-headers. The profile's own order puts `sec-fetch-*` before `accept` and sends neither
/// `upgrade-insecure-requests` nor `sec-fetch-user`, which Chrome sends on every navigation;
/// bot checks compare exactly this. Headers not listed keep their place after these.
const NAVIGATION_ORDER: [&str; 15] = [
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
    "referer",
    "accept-encoding",
    "accept-language",
    "cookie",
    "priority",
];

/// [`NAVIGATION_ORDER`] in wreq's form, built once.
static NAVIGATION: std::sync::LazyLock<OrigHeaderMap> = std::sync::LazyLock::new(|| {
    let mut order = OrigHeaderMap::with_capacity(NAVIGATION_ORDER.len());
    for name in NAVIGATION_ORDER {
        order.insert(name);
    }
    order
});

/// Whether `headers` ask for a page as a browser tab does (`Accept` leads with HTML), as
/// opposed to a script's request for JSON.
fn is_navigation(headers: &HeaderMap) -> bool {
    headers
        .get(ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.starts_with("text/html"))
}

/// The browser-grade client: cheap to clone, one connection pool.
#[derive(Clone)]
pub struct BrowserClient {
    http: wreq::Client,
    timeout: Duration,
    max_body: usize,
}

impl std::fmt::Debug for BrowserClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrowserClient")
            .field("profile", &CHROME_PROFILE)
            .field("timeout", &self.timeout)
            .field("max_body", &self.max_body)
            .finish_non_exhaustive()
    }
}

impl BrowserClient {
    /// Builds the client from `[upstream]` (deadline, body cap, `ca_file`), going straight out.
    pub fn new(settings: &Settings) -> Result<Self, ClientBuildError> {
        Self::via(settings, None)
    }

    /// Builds the client from `[upstream]`, sending every request through `proxy` when one is
    /// given (credentials in the URL are wreq's to use), as [`super::Upstream::via`] does.
    pub fn via(settings: &Settings, proxy: Option<&Url>) -> Result<Self, ClientBuildError> {
        let timeout = ms(settings.upstream.timeout_ms);
        let emulation = Emulation::builder()
            .profile(CHROME_PROFILE)
            .platform(CHROME_PLATFORM)
            .build();
        let mut builder = wreq::Client::builder()
            .emulation(emulation)
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
            timeout,
            max_body: settings.upstream.max_body_bytes,
        })
    }

    /// Sends `GET url` with `headers` (less the identity headers the profile owns) and reads
    /// the whole body within the deadline and the cap.
    pub async fn get(&self, url: Url, mut headers: HeaderMap) -> Result<Response, UpstreamError> {
        headers.remove(USER_AGENT);
        for name in IDENTITY_HEADERS {
            headers.remove(HeaderName::from_static(name));
        }
        let navigation = is_navigation(&headers);
        if navigation {
            headers.insert(
                HeaderName::from_static("upgrade-insecure-requests"),
                HeaderValue::from_static("1"),
            );
            headers.insert(
                HeaderName::from_static("sec-fetch-user"),
                HeaderValue::from_static("?1"),
            );
        }
        let mut request = self.http.get(url.as_str()).headers(headers);
        if navigation {
            request = request.orig_headers(NAVIGATION.clone());
        }
        let read = async {
            let mut response = request
                .send()
                .await
                .map_err(|e| classify(e, self.timeout))?;
            let head = (
                response.status(),
                std::mem::take(response.headers_mut()),
                response.content_length(),
            );
            read_capped(head, response.bytes_stream(), url, self.max_body, |e| {
                classify(e, self.timeout)
            })
            .await
        };
        // wreq's own timeout covers the same span; this one also bounds our own reading.
        tokio::time::timeout(self.timeout, read)
            .await
            .unwrap_or(Err(UpstreamError::Timeout(self.timeout)))
    }
}

/// An error of wreq as ours, classified as the plain client's are (`super::classify`): a
/// connector error (TCP, the proxy's CONNECT, TLS) is a connect failure, timed out or not; a
/// time-out anywhere else came after the request went out. `timeout` is the whole deadline.
fn classify(err: wreq::Error, timeout: Duration) -> UpstreamError {
    if err.is_connect() || err.is_proxy_connect() {
        if err.is_timeout() {
            UpstreamError::ConnectTimeout(connect_deadline(timeout))
        } else {
            UpstreamError::Connect
        }
    } else if err.is_timeout() {
        UpstreamError::Timeout(timeout)
    } else if err.is_decode() {
        UpstreamError::Decode(error_chain(&err))
    } else {
        UpstreamError::Transport(error_chain(&err))
    }
}
