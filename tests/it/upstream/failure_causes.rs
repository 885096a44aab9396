//! Each kind of transport failure, made for real on loopback, is told apart: a name that does
//! not resolve, a closed port, a reset, a TLS handshake that fails, a silence, a proxy that is
//! down or refuses the tunnel. The category reaches the client's error here; the lookup's log
//! line, metric and problem are checked in `failure_reports`.

use profile_lookup::config::Settings;
use profile_lookup::upstream::{Cause, Upstream, UpstreamError};
use reqwest::header::HeaderMap;
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use url::Url;

use crate::support::closed_port;
use crate::support::fingerprint::{Alpn, FingerprintServer};
use crate::support::forward_proxy::{ForwardProxy, Mode};

/// Settings with a short deadline, so the silent peer ends the test quickly.
fn settings() -> Settings {
    let mut settings = Settings::default();
    settings.upstream.timeout_ms = 600;
    settings.upstream.head_timeout_ms = 600;
    settings
}

/// The error of `GET url`, straight or through `proxy`.
async fn failure(url: &str, proxy: Option<&str>) -> UpstreamError {
    let proxy = proxy.map(|p| Url::parse(p).unwrap());
    let upstream = Upstream::via(&settings(), proxy.as_ref()).unwrap();
    upstream
        .get(Url::parse(url).unwrap(), HeaderMap::new())
        .await
        .expect_err("the request fails")
}

/// A peer that accepts, reads the request, then resets the connection (`SO_LINGER` 0).
pub async fn resetting() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf).await;
            stream.set_zero_linger().unwrap();
            drop(stream);
        }
    });
    addr
}

/// A peer that accepts and never answers.
pub async fn silent() -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    (addr, task)
}

#[tokio::test]
async fn a_name_that_does_not_resolve_is_dns() {
    let err = failure("http://profile-lookup-test.invalid/", None).await;
    assert_eq!(err.cause(), Some(Cause::Dns), "{err}");
}

#[tokio::test]
async fn a_closed_port_is_refused() {
    let err = failure(&format!("http://{}/", closed_port().await), None).await;
    assert_eq!(err.cause(), Some(Cause::Refused), "{err}");
    assert!(err.to_string().contains("(refused)"), "{err}");
}

#[tokio::test]
async fn a_peer_that_resets_is_reset() {
    let err = failure(&format!("http://{}/", resetting().await), None).await;
    assert_eq!(err.cause(), Some(Cause::Reset), "{err}");
}

#[tokio::test]
async fn an_untrusted_certificate_or_a_plain_http_peer_is_tls() {
    let server = FingerprintServer::start(Alpn::Http1Only).await;
    let err = failure(server.url("/").as_str(), None).await;
    assert_eq!(err.cause(), Some(Cause::Tls), "{err}");
    let plain = crate::support::spawn_upstream(axum::Router::new()).await;
    let err = failure(&format!("https://{}/", plain.addr), None).await;
    assert_eq!(err.cause(), Some(Cause::Tls), "{err}");
}

#[tokio::test]
async fn a_silent_peer_is_timeout() {
    let (addr, task) = silent().await;
    let err = failure(&format!("http://{addr}/"), None).await;
    assert_eq!(err.cause(), Some(Cause::Timeout), "{err}");
    task.abort();
}

#[tokio::test]
async fn a_proxy_that_is_down_or_refuses_the_tunnel_is_proxy() {
    let target = format!("http://{}/", closed_port().await);
    let down = ForwardProxy::refusing().await;
    let err = failure(&target, Some(&down.url())).await;
    assert_eq!(err.cause(), Some(Cause::Proxy), "{err}");
    let server = FingerprintServer::start(Alpn::Http1Only).await;
    let refusing = ForwardProxy::start("r", Mode::Always407, None).await;
    let err = failure(server.url("/").as_str(), Some(&refusing.url())).await;
    assert_eq!(err.cause(), Some(Cause::Proxy), "{err}");
}

/// The browser-grade client's failures are told apart as the plain client's are.
#[cfg(feature = "browser")]
#[tokio::test]
async fn the_browser_client_tells_the_same_kinds_apart() {
    let mut settings = settings();
    settings.upstream.client = profile_lookup::config::UpstreamClient::Browser;
    let get = |url: String, proxy: Option<String>| {
        let settings = settings.clone();
        async move {
            let proxy = proxy.map(|p| Url::parse(&p).unwrap());
            Upstream::via(&settings, proxy.as_ref())
                .unwrap()
                .get(Url::parse(&url).unwrap(), HeaderMap::new())
                .await
                .expect_err("the request fails")
        }
    };
    let refused = format!("http://{}/", closed_port().await);
    let plain = crate::support::spawn_upstream(axum::Router::new()).await;
    let down = ForwardProxy::refusing().await;
    let untrusted = FingerprintServer::start(Alpn::Http1Only).await;
    for (url, proxy, cause) in [
        (untrusted.url("/").to_string(), None, Cause::Tls),
        (
            "http://profile-lookup-test.invalid/".to_owned(),
            None,
            Cause::Dns,
        ),
        (refused.clone(), None, Cause::Refused),
        (format!("http://{}/", resetting().await), None, Cause::Reset),
        (format!("https://{}/", plain.addr), None, Cause::Tls),
        (refused, Some(down.url()), Cause::Proxy),
    ] {
        let err = get(url.clone(), proxy).await;
        assert_eq!(err.cause(), Some(cause), "{url}: {err}");
    }
}
