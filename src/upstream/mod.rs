//! The one HTTP client every platform source uses to talk to its platform.
//!
//! It owns the rules that keep a broken or hostile upstream from hurting us: a total deadline
//! per request (connect, headers and body alike, so a slow drip ends too), a body cap counted on
//! *decompressed* bytes while streaming (a gzip bomb is refused at the cap, never inflated), and
//! no automatic redirects (a platform source decides what a redirect means, and we never follow
//! one off the configured host). Politeness towards the platform (budget, concurrency, breaker)
//! lives in [`gate`].

#[cfg(feature = "browser")]
pub mod browser;
pub mod capture;
pub mod cause;
pub mod cookies;
pub mod egress;
pub mod form;
pub mod gate;
pub mod junk_headers;
pub mod retry;
pub mod roots;

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, LOCATION};
use url::Url;

use crate::config::{BrowserProfile, Settings, ms};

pub use cause::Cause;
pub use form::Form;

/// A desktop Chrome User-Agent: the platforms serve their normal public pages to browsers.
pub const BROWSER_USER_AGENT: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 \
     (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36";

/// The longest a connection may take to come up (TCP, a proxy's CONNECT, TLS).
const MAX_CONNECT: Duration = Duration::from_secs(5);

/// How long making a connection may take within an upstream deadline of `timeout`: half of it,
/// at most `MAX_CONNECT` (5 s). Strictly shorter than the whole deadline, so a connection that
/// never comes up ends as [`UpstreamError::ConnectTimeout`] (the route's failure) before the
/// whole deadline could end it as [`UpstreamError::Timeout`] (the platform's).
pub fn connect_deadline(timeout: Duration) -> Duration {
    (timeout / 2).min(MAX_CONNECT)
}

/// The shared upstream client: cheap to clone, one connection pool, and the one seam every
/// platform source sends through, whichever backend `upstream.client` chose.
#[derive(Clone, Debug)]
pub struct Upstream {
    backend: Backend,
    timeout: Duration,
    /// How long the response head may take (`upstream.head_timeout_ms`).
    head_timeout: Duration,
    max_body: usize,
    /// Whether requests go through a proxy (whose failures while connecting are its own).
    proxied: bool,
}

/// The HTTP stack behind [`Upstream`]: rustls over HTTP/1.1, or one desktop browser's TLS and
/// HTTP/2 (cargo feature `browser`). Both keep the same guards.
#[derive(Clone, Debug)]
enum Backend {
    Plain(reqwest::Client),
    #[cfg(feature = "browser")]
    Browser(browser::BrowserClient),
}

/// A fully read upstream response.
#[derive(Clone, Debug)]
pub struct Response {
    /// The HTTP status.
    pub status: StatusCode,
    /// The response headers.
    pub headers: HeaderMap,
    /// The URL that was requested.
    pub url: Url,
    /// The decompressed body, at most `upstream.max_body_bytes` long.
    pub body: Bytes,
}

impl Response {
    /// The redirect target resolved against the request URL, for 3xx responses with a Location.
    pub fn redirect_target(&self) -> Option<Url> {
        if !self.status.is_redirection() {
            return None;
        }
        let location = self.headers.get(LOCATION)?.to_str().ok()?;
        self.url.join(location).ok()
    }

    /// The `Retry-After` the upstream asked for, as seconds or an HTTP date.
    pub fn retry_after(&self) -> Option<Duration> {
        let value = self
            .headers
            .get(reqwest::header::RETRY_AFTER)?
            .to_str()
            .ok()?;
        parse_retry_after(value, std::time::SystemTime::now())
    }
}

/// Why an upstream request produced no response we will read.
///
/// The variants say where the failure happened, which decides whose it is on a proxy route
/// ([`egress::is_proxy_failure`]): while the connection was being made (TCP to the proxy or
/// the platform, a proxy's CONNECT tunnel and its 407, TLS) it is the route's; once the request
/// went through, a late or broken answer is the platform's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpstreamError {
    /// Connected, and the request went out, but the answer did not finish within
    /// `upstream.timeout_ms`: the platform is slow (behind a proxy, the proxy worked).
    #[error("the upstream did not answer within {0:?}")]
    Timeout(Duration),
    /// No response head within `upstream.head_timeout_ms` (connect included): the route is
    /// silent (blame decides whether that is the route's).
    #[error("no response head from the upstream within {0:?}")]
    NoHead(Duration),
    /// No connection could be made (refused, a proxy's CONNECT refused or answered 407, TLS):
    /// its category, and the text of why, as the connector and the OS said it (never a URL).
    #[error("the upstream could not be reached ({0}): {1}")]
    Connect(Cause, String),
    /// The connection (TCP, a proxy's CONNECT tunnel, TLS) was not up within the connect
    /// deadline ([`connect_deadline`]): a proxy that accepts and never answers its CONNECT.
    #[error("no connection to the upstream within {0:?}")]
    ConnectTimeout(Duration),
    /// The body (after decompression) is larger than `upstream.max_body_bytes`.
    #[error("the upstream body is larger than {0} bytes")]
    TooLarge(usize),
    /// The connection broke: its category, and the text of why.
    #[error("the upstream response could not be read ({0}): {1}")]
    Transport(Cause, String),
    /// The body arrived but its content coding (gzip, br, …) could not be decoded: the
    /// platform's doing, never a proxy's (so it rests no proxy).
    #[error("the upstream body could not be decoded: {0}")]
    Decode(String),
}

impl UpstreamError {
    /// Whether one more attempt could plausibly help (a reset connection might; a timeout or an
    /// oversized body will not, and retrying them only doubles the caller's wait).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            UpstreamError::Connect(..) | UpstreamError::Transport(..) | UpstreamError::Decode(_)
        )
    }

    /// The category of a transport failure; `None` for an answer we refused to read (too
    /// large, not decodable), which is no failure to reach anyone.
    pub fn cause(&self) -> Option<Cause> {
        match self {
            UpstreamError::Connect(cause, _) | UpstreamError::Transport(cause, _) => Some(*cause),
            UpstreamError::Timeout(_)
            | UpstreamError::NoHead(_)
            | UpstreamError::ConnectTimeout(_) => Some(Cause::Timeout),
            UpstreamError::TooLarge(_) | UpstreamError::Decode(_) => None,
        }
    }
}

impl Upstream {
    /// Builds the client from `[upstream]`, going straight out (the browser client as the
    /// first of `upstream.browser_profiles`).
    pub fn new(settings: &Settings) -> Result<Self, roots::ClientBuildError> {
        Self::via(settings, None)
    }

    /// Builds the client from `[upstream]` through `proxy` when one is given (the browser
    /// client as the first of `upstream.browser_profiles`); see [`Upstream::build`].
    pub fn via(settings: &Settings, proxy: Option<&Url>) -> Result<Self, roots::ClientBuildError> {
        let first = settings.upstream.browser_profiles.first().copied();
        Self::build(settings, proxy, first)
    }

    /// The browsers a route presents, one client each: `upstream.browser_profiles` for the
    /// browser client, a single `None` for the plain client, which presents no browser.
    pub fn profiles(settings: &Settings) -> Vec<Option<BrowserProfile>> {
        let browser = settings.upstream.client == crate::config::UpstreamClient::Browser;
        match settings.upstream.browser_profiles.as_slice() {
            profiles if browser && !profiles.is_empty() => {
                profiles.iter().copied().map(Some).collect()
            }
            _ => vec![None],
        }
    }

    /// Builds the client from `[upstream]`, sending every request through `proxy` (an
    /// `http://`, `https://` or `socks5h://` URL, already validated, credentials included)
    /// when one is given: one client per route and profile, so connections and pools are never
    /// shared between proxies or between the browsers presented. The browser client presents
    /// `profile` (Chrome when `None`); the plain client ignores it.
    pub fn build(
        settings: &Settings,
        proxy: Option<&Url>,
        profile: Option<BrowserProfile>,
    ) -> Result<Self, roots::ClientBuildError> {
        let timeout = ms(settings.upstream.timeout_ms);
        let head_timeout = ms(settings.upstream.head_timeout_ms).min(timeout);
        let max_body = settings.upstream.max_body_bytes;
        if settings.upstream.client == crate::config::UpstreamClient::Browser {
            #[cfg(feature = "browser")]
            return Ok(Self {
                backend: Backend::Browser(browser::BrowserClient::presenting(
                    settings,
                    proxy,
                    profile.unwrap_or(BrowserProfile::Chrome),
                )?),
                timeout,
                head_timeout,
                max_body,
                proxied: proxy.is_some(),
            });
            #[cfg(not(feature = "browser"))]
            let _ = profile;
            #[cfg(not(feature = "browser"))]
            return Err(roots::ClientBuildError::Browser(
                "upstream.client = \"browser\" needs a build with --features browser".into(),
            ));
        }
        let mut builder = reqwest::Client::builder();
        if let Some(proxy) = proxy {
            // reqwest's error would quote the URL, password included: it is not passed on.
            let proxy =
                reqwest::Proxy::all(proxy.as_str()).map_err(|_| roots::ClientBuildError::Proxy)?;
            builder = builder.proxy(proxy);
        }
        if let Some(path) = settings.upstream.ca_file() {
            for root in roots::plain_roots(path)? {
                builder = builder.add_root_certificate(root);
            }
        }
        let http = builder
            .redirect(reqwest::redirect::Policy::none())
            .retry(reqwest::retry::never())
            .connect_timeout(connect_deadline(timeout))
            .timeout(timeout)
            .pool_idle_timeout(Duration::from_secs(30))
            .tcp_nodelay(true)
            .build()?;
        Ok(Self {
            backend: Backend::Plain(http),
            timeout,
            head_timeout,
            max_body,
            proxied: proxy.is_some(),
        })
    }

    /// Sends `GET url` with `headers` and reads the whole body within the deadline and the cap.
    pub async fn get(&self, url: Url, headers: HeaderMap) -> Result<Response, UpstreamError> {
        self.send(url, headers, None).await
    }

    /// Sends `url` with `headers`: a GET, or a POST of `form` when one is given. The whole body
    /// is read within the deadline and the cap either way.
    pub async fn send(
        &self,
        url: Url,
        headers: HeaderMap,
        form: Option<&Form>,
    ) -> Result<Response, UpstreamError> {
        match &self.backend {
            Backend::Plain(http) => self.plain_send(http, url, headers, form).await,
            #[cfg(feature = "browser")]
            Backend::Browser(client) => client.send(url, headers, form, self.head_timeout).await,
        }
    }

    /// Whether requests go out with a desktop browser's TLS and HTTP/2 fingerprint.
    pub fn is_browser(&self) -> bool {
        !matches!(self.backend, Backend::Plain(_))
    }

    /// The browser this client presents; `None` for the plain client.
    pub fn profile(&self) -> Option<BrowserProfile> {
        match &self.backend {
            Backend::Plain(_) => None,
            #[cfg(feature = "browser")]
            Backend::Browser(client) => Some(client.profile()),
        }
    }

    async fn plain_send(
        &self,
        http: &reqwest::Client,
        url: Url,
        headers: HeaderMap,
        form: Option<&Form>,
    ) -> Result<Response, UpstreamError> {
        let request = match form {
            None => http.get(url.clone()).headers(headers),
            Some(form) => http
                .post(url.clone())
                .headers(headers)
                .header(CONTENT_TYPE, Form::content_type())
                .body(form.body()),
        };
        let got_head = std::sync::atomic::AtomicBool::new(false);
        let read = async {
            let mut response = head_within(self.head_timeout, request.send())
                .await?
                .map_err(|e| headless(classify(e, self.timeout, self.proxied)))?;
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
        // reqwest's own timeout covers the same span; this one also bounds our own reading.
        tokio::time::timeout(self.timeout, read)
            .await
            .unwrap_or_else(|_| Err(late(&got_head, self.timeout)))
    }
}

/// An error before the response head: a time-out there is a silence.
fn headless(err: UpstreamError) -> UpstreamError {
    match err {
        UpstreamError::Timeout(t) => UpstreamError::NoHead(t),
        other => other,
    }
}

/// What a request that ran out of `timeout` is: silent when no head came, else slow.
fn late(got_head: &std::sync::atomic::AtomicBool, timeout: Duration) -> UpstreamError {
    if got_head.load(std::sync::atomic::Ordering::Relaxed) {
        UpstreamError::Timeout(timeout)
    } else {
        UpstreamError::NoHead(timeout)
    }
}

/// Waits for a response head at most `deadline`: a route that gives none in time is silent
/// ([`UpstreamError::NoHead`]), whatever the body would have taken.
async fn head_within<T>(
    deadline: Duration,
    head: impl Future<Output = T>,
) -> Result<T, UpstreamError> {
    tokio::time::timeout(deadline, head)
        .await
        .map_err(|_| UpstreamError::NoHead(deadline))
}

/// Reads a response whose head has arrived into a [`Response`]: the body chunk by chunk into one
/// buffer, refused at `max_body` decompressed bytes (a declared length over the cap before any
/// byte is read). Both backends finish through this, so the cap is one piece of code.
async fn read_capped<E>(
    (status, headers, length): (StatusCode, HeaderMap, Option<u64>),
    chunks: impl futures_util::Stream<Item = Result<Bytes, E>>,
    url: Url,
    max_body: usize,
    classify: impl Fn(E) -> UpstreamError,
) -> Result<Response, UpstreamError> {
    use futures_util::StreamExt;
    if length.is_some_and(|len| len > max_body as u64) {
        return Err(UpstreamError::TooLarge(max_body));
    }
    let hint = length.unwrap_or(64 * 1024) as usize;
    let mut body = BytesMut::with_capacity(hint.min(max_body));
    let mut chunks = std::pin::pin!(chunks);
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(&classify)?;
        if body.len() + chunk.len() > max_body {
            return Err(UpstreamError::TooLarge(max_body));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Response {
        status,
        headers,
        url,
        body: body.freeze(),
    })
}

/// An error of reqwest as ours; `timeout` is the deadline its own timer enforced, `proxied`
/// whether the request went through a proxy. An error of the connector (TCP, the proxy's
/// CONNECT, TLS) is a connect failure, timed out or not; a time-out anywhere else came after
/// the request went out. Either keeps its [`Cause`], read from the whole chain.
fn classify(err: reqwest::Error, timeout: Duration, proxied: bool) -> UpstreamError {
    if err.is_connect() {
        if err.is_timeout() {
            UpstreamError::ConnectTimeout(connect_deadline(timeout))
        } else {
            UpstreamError::Connect(Cause::of(&err, true, proxied), causes(&err))
        }
    } else if err.is_timeout() {
        UpstreamError::Timeout(timeout)
    } else if err.is_decode() {
        UpstreamError::Decode(error_chain(&err))
    } else {
        // reqwest's text names the failing step (reset, decode, …) but never the body.
        UpstreamError::Transport(Cause::of(&err, false, proxied), error_chain(&err))
    }
}

/// Whether `headers` ask for a page as a browser tab does (`Accept` leads with HTML): a
/// navigation, as opposed to a script's request for JSON.
pub fn is_navigation(headers: &HeaderMap) -> bool {
    headers
        .get(ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.starts_with("text/html"))
}

/// An error and its sources on one line.
/// Why `err` happened: the chain of its sources, without its own text (which names the URL).
pub(crate) fn causes(err: &dyn std::error::Error) -> String {
    match err.source() {
        Some(source) => error_chain(source),
        None => "no cause given".to_owned(),
    }
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

/// Whether `target` is on the same scheme, host and port as `base`: the only redirects a
/// platform source may follow.
pub fn same_origin(base: &Url, target: &Url) -> bool {
    base.scheme() == target.scheme()
        && base.host_str() == target.host_str()
        && base.port_or_known_default() == target.port_or_known_default()
}

/// Parses a `Retry-After` value: delay-seconds or an HTTP date (relative to `now`).
pub fn parse_retry_after(value: &str, now: std::time::SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Builds `{base}/{segments…}` with each segment percent-encoded by the URL library, so no
/// segment can add path levels, a query or a fragment.
pub fn url_with_segments(base: &Url, segments: &[&str]) -> Url {
    let mut url = base.clone();
    url.set_query(None);
    url.set_fragment(None);
    if let Ok(mut path) = url.path_segments_mut() {
        path.pop_if_empty().extend(segments);
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_encoded_not_interpreted() {
        let base = Url::parse("http://127.0.0.1:9/").unwrap();
        assert_eq!(
            url_with_segments(&base, &["@name"]).as_str(),
            "http://127.0.0.1:9/@name"
        );
        let url = url_with_segments(&base, &["a/b?c#d"]);
        assert_eq!(url.path(), "/a%2Fb%3Fc%23d");
        assert_eq!(url.query(), None);
        let with_prefix = Url::parse("http://127.0.0.1:9/prefix").unwrap();
        assert_eq!(
            url_with_segments(&with_prefix, &["x", ""]).path(),
            "/prefix/x/"
        );
    }

    #[tokio::test]
    async fn a_timeout_names_the_configured_deadline() {
        // A peer that accepts and never answers.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let held = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            tokio::time::sleep(Duration::from_secs(5)).await;
            drop(stream);
        });
        let mut settings = Settings::default();
        settings.upstream.timeout_ms = 200;
        let upstream = Upstream::new(&settings).unwrap();
        let url = Url::parse(&format!("http://{addr}/")).unwrap();
        let err = upstream.get(url, HeaderMap::new()).await.unwrap_err();
        // No head at all within the (whole) deadline: a silence.
        assert_eq!(err, UpstreamError::NoHead(Duration::from_millis(200)));
        held.abort();
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(
            parse_retry_after(&later, now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn same_origin_compares_scheme_host_and_port() {
        let base = Url::parse("https://www.example.com").unwrap();
        assert!(same_origin(
            &base,
            &Url::parse("https://www.example.com:443/x").unwrap()
        ));
        assert!(!same_origin(
            &base,
            &Url::parse("http://www.example.com/x").unwrap()
        ));
        assert!(!same_origin(
            &base,
            &Url::parse("https://169.254.169.254/").unwrap()
        ));
    }
}
