//! The upstream clients against a loopback TLS server that fingerprints them: the plain client
//! (rustls, HTTP/1.1) always, the browser-grade client (`--features browser`) when built.
//! The observed fingerprints are printed (`--nocapture`) for the release notes.

#[cfg(feature = "browser")]
use crate::support::fingerprint::PROFILE_PAGE;
use crate::support::fingerprint::akamai::parse_opening;
use crate::support::fingerprint::ja4::parse_client_hello;
use crate::support::fingerprint::{Alpn, FingerprintServer, Recording};
use profile_lookup::config::{Settings, UpstreamClient};
use profile_lookup::upstream::Upstream;
use reqwest::header::HeaderMap;

/// Settings trusting `server`'s throwaway CA, with a short deadline and a small body cap.
pub(crate) fn settings_for(server: &FingerprintServer) -> Settings {
    let mut settings = Settings::default();
    settings.upstream.ca_file = server.pki.write_ca_file();
    settings.upstream.timeout_ms = 3_000;
    settings.upstream.max_body_bytes = 64 * 1024;
    settings
}

pub(crate) fn only_recording(server: &FingerprintServer) -> Recording {
    let mut all = server.recordings();
    assert_eq!(all.len(), 1, "one connection expected");
    all.remove(0)
}

#[tokio::test]
async fn the_plain_client_trusts_ca_file_and_speaks_http1() {
    let server = FingerprintServer::start(Alpn::H2AndHttp1).await;
    let upstream = Upstream::new(&settings_for(&server)).unwrap();
    server.expect_profile_page(&upstream).await;
    let rec = only_recording(&server);
    let hello = parse_client_hello(&rec.raw).unwrap();
    let ja4 = hello.ja4();
    println!("plain client: JA4 {ja4}, ALPN {:?}", rec.alpn);
    assert!(
        ja4.starts_with("t13d") && ja4[..10].ends_with("h1"),
        "{ja4}"
    );
    assert_eq!(rec.alpn.as_deref(), Some("http/1.1"));
    assert!(rec.plain.starts_with(b"GET /profile HTTP/1.1\r\n"));
    assert!(
        parse_opening(&rec.plain).is_err(),
        "no HTTP/2, so no Akamai fingerprint"
    );
}

#[tokio::test]
async fn the_plain_client_refuses_the_test_ca_without_ca_file() {
    let server = FingerprintServer::start(Alpn::H2AndHttp1).await;
    let mut settings = settings_for(&server);
    settings.upstream.ca_file = Default::default();
    let upstream = Upstream::new(&settings).unwrap();
    let err = upstream
        .get(server.url("/profile"), HeaderMap::new())
        .await
        .unwrap_err();
    println!("without ca_file: {err}");
}

#[test]
fn ca_file_is_checked_when_the_config_is_validated() {
    let mut settings = Settings::default();
    settings.upstream.ca_file = "/nonexistent/extra-roots.pem".into();
    let err = settings.validate().unwrap_err().to_string();
    assert!(err.contains("/nonexistent/extra-roots.pem"), "{err}");
}

#[test]
fn serve_with_the_browser_client_needs_the_feature() {
    let mut settings = Settings::default();
    settings.auth.api_keys = vec!["browser-feature-test-key".into()];
    settings.upstream.client = UpstreamClient::Browser;
    let verdict = settings.validate_for_serve();
    if cfg!(feature = "browser") {
        verdict.unwrap();
    } else {
        let err = verdict.unwrap_err().to_string();
        assert!(
            err.contains("cargo build --release --features browser"),
            "{err}"
        );
    }
}

#[test]
fn the_service_client_follows_upstream_client() {
    let mut settings = Settings::default();
    assert!(!Upstream::new(&settings).unwrap().is_browser());
    settings.upstream.client = UpstreamClient::Browser;
    let built = Upstream::new(&settings);
    #[cfg(feature = "browser")]
    assert!(built.unwrap().is_browser());
    #[cfg(not(feature = "browser"))]
    {
        let err = built.unwrap_err().to_string();
        assert!(err.contains("--features browser"), "{err}");
    }
}

#[cfg(feature = "browser")]
mod browser {
    use super::*;
    use crate::support::fingerprint::ja4::{X25519_MLKEM768, is_grease};
    use profile_lookup::upstream::UpstreamError;
    use profile_lookup::upstream::browser::BrowserClient;
    use reqwest::header::{HeaderValue, USER_AGENT};
    use std::time::Duration;

    /// Chrome ≥ 133 with the new ALPS code point, and before it.
    const CHROME_JA4: [&str; 2] = [
        "t13d1516h2_8daaf6152771_d8a2da3f94cd",
        "t13d1516h2_8daaf6152771_02713d6af862",
    ];
    const CHROME_AKAMAI: &str = "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p";

    fn caller_headers() -> HeaderMap {
        let mut headers = HeaderMap::new();
        // What the platform sources send today: an older Chrome's UA, which must not leak.
        headers.insert(
            USER_AGENT,
            HeaderValue::from_static(profile_lookup::upstream::BROWSER_USER_AGENT),
        );
        headers.insert(
            "accept-language",
            HeaderValue::from_static("en-US,en;q=0.9"),
        );
        // A page, as the sources ask for profile pages: a navigation.
        headers.insert(
            "accept",
            HeaderValue::from_static(
                "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
            ),
        );
        headers
    }

    /// The seam every platform source sends through speaks Chrome when configured to.
    #[tokio::test]
    async fn the_service_upstream_with_client_browser_looks_like_chrome() {
        let server = FingerprintServer::start(Alpn::H2AndHttp1).await;
        let mut settings = settings_for(&server);
        settings.upstream.client = UpstreamClient::Browser;
        let upstream = Upstream::new(&settings).unwrap();
        let response = upstream
            .get(server.url("/profile"), caller_headers())
            .await
            .unwrap();
        assert_eq!(response.body, PROFILE_PAGE.as_bytes());
        let rec = only_recording(&server);
        let ja4 = parse_client_hello(&rec.raw).unwrap().ja4();
        assert!(CHROME_JA4.contains(&ja4.as_str()), "{ja4}");
        assert_eq!(parse_opening(&rec.plain).unwrap().akamai(), CHROME_AKAMAI);
    }

    #[tokio::test]
    async fn the_browser_client_looks_like_chrome() {
        let server = FingerprintServer::start(Alpn::H2AndHttp1).await;
        let settings = settings_for(&server);
        // Two clients, so two connections and two ClientHellos.
        for _ in 0..2 {
            let client = BrowserClient::new(&settings).unwrap();
            let response = client
                .get(server.url("/profile"), caller_headers())
                .await
                .unwrap();
            assert_eq!(response.status, 200);
            assert_eq!(response.body, PROFILE_PAGE.as_bytes());
        }
        let recs = server.recordings();
        assert_eq!(recs.len(), 2);
        let mut orders = Vec::new();
        for rec in &recs {
            let hello = parse_client_hello(&rec.raw).unwrap();
            let ja4 = hello.ja4();
            let h2 = parse_opening(&rec.plain).unwrap();
            println!("browser client: JA4 {ja4}, Akamai {}", h2.akamai());
            println!("  extension order {:04x?}", hello.extension_order());
            println!("  key shares {:04x?}", hello.key_share_groups());
            println!("  headers {:?}", h2.headers);
            assert!(CHROME_JA4.contains(&ja4.as_str()), "{ja4}");
            assert_eq!(h2.akamai(), CHROME_AKAMAI);
            assert_eq!(rec.alpn.as_deref(), Some("h2"));
            // Chrome sends a GREASE key share first, then the hybrid post-quantum one.
            let shares = hello.key_share_groups();
            assert!(is_grease(shares[0]), "{shares:04x?}");
            assert_eq!(shares.get(1), Some(&X25519_MLKEM768));
            assert!(hello.ciphers.iter().any(|c| is_grease(*c)));
            orders.push(hello.extension_order());

            let ua = h2.header("user-agent").unwrap();
            let sec_ch_ua = h2.header("sec-ch-ua").unwrap();
            let major = ua
                .split("Chrome/")
                .nth(1)
                .and_then(|v| v.split('.').next())
                .unwrap();
            assert!(ua.contains("Windows NT 10.0"), "{ua}");
            assert!(
                sec_ch_ua.contains(&format!("\"Google Chrome\";v=\"{major}\"")),
                "{sec_ch_ua} vs {ua}"
            );
            assert_eq!(h2.header("sec-ch-ua-mobile"), Some("?0"));
            assert_eq!(h2.header("sec-ch-ua-platform"), Some("\"Windows\""));
            assert_eq!(h2.header("accept-language"), Some("en-US,en;q=0.9"));
            assert_eq!(
                h2.header("accept-encoding"),
                Some("gzip, deflate, br, zstd")
            );
            let names = h2.header_names();
            let position = |n: &str| names.iter().position(|x| *x == n).unwrap();
            let expected = crate::support::fingerprint::CHROME_NAVIGATION_ORDER;
            assert_eq!(h2.header("upgrade-insecure-requests"), Some("1"));
            assert_eq!(h2.header("sec-fetch-user"), Some("?1"));
            assert_eq!(h2.header("sec-fetch-mode"), Some("navigate"));
            let positions: Vec<usize> = expected.iter().map(|n| position(n)).collect();
            assert!(positions.is_sorted(), "header order {names:?}");
            assert_eq!(
                names.iter().filter(|n| **n == "user-agent").count(),
                1,
                "one User-Agent"
            );
        }
        assert_ne!(
            orders[0], orders[1],
            "extension order is randomised per connection"
        );
    }

    #[tokio::test]
    async fn the_browser_client_has_a_total_deadline() {
        // A peer that accepts and never answers, not even the TLS handshake.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let held = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                held.push(stream);
            }
        });
        let server = FingerprintServer::start(Alpn::H2AndHttp1).await;
        let mut settings = settings_for(&server);
        settings.upstream.timeout_ms = 300;
        let client = BrowserClient::new(&settings).unwrap();
        let url = url::Url::parse(&format!("https://localhost:{port}/")).unwrap();
        let err = client.get(url, HeaderMap::new()).await.unwrap_err();
        // The handshake is part of connecting: it ends at the connect deadline, half the
        // upstream deadline, as a failure to connect (a proxy route's fault, not the platform's).
        assert_eq!(
            err,
            UpstreamError::ConnectTimeout(Duration::from_millis(150))
        );
        // A server that completes TLS and never answers the request: no response head, a
        // silence (blame places it by comparison).
        let err = client
            .get(server.url("/hang"), HeaderMap::new())
            .await
            .unwrap_err();
        assert_eq!(err, UpstreamError::NoHead(Duration::from_millis(300)));
        held.abort();
    }

    #[tokio::test]
    async fn the_browser_client_decodes_every_coding_within_the_cap() {
        let server = FingerprintServer::start(Alpn::H2AndHttp1).await;
        let client = BrowserClient::new(&settings_for(&server)).unwrap();
        for coding in ["gzip", "br", "zstd", "deflate"] {
            let small = client
                .get(
                    server.url(&format!("/enc/{coding}/small")),
                    HeaderMap::new(),
                )
                .await
                .unwrap();
            assert_eq!(
                small.body.len(),
                crate::support::fingerprint::SMALL_BYTES,
                "{coding}"
            );
            assert!(small.body.iter().all(|b| *b == b'a'), "{coding}");
            let bomb = client
                .get(server.url(&format!("/enc/{coding}/bomb")), HeaderMap::new())
                .await
                .unwrap_err();
            assert_eq!(bomb, UpstreamError::TooLarge(64 * 1024), "{coding}");
        }
    }

    #[tokio::test]
    async fn the_browser_client_follows_no_redirect() {
        let other = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let other_port = other.local_addr().unwrap().port();
        let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = hits.clone();
        let counter = tokio::spawn(async move {
            while let Ok(_conn) = other.accept().await {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        });
        let server = FingerprintServer::start(Alpn::H2AndHttp1).await;
        let client = BrowserClient::new(&settings_for(&server)).unwrap();
        let target = format!("https://localhost:{other_port}/elsewhere");
        let response = client
            .get(server.url(&format!("/redirect?{target}")), HeaderMap::new())
            .await
            .unwrap();
        assert_eq!(response.status, 302);
        assert_eq!(response.redirect_target().unwrap().as_str(), target);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 0);
        counter.abort();
    }

    #[tokio::test]
    async fn the_browser_client_bounds_response_headers_for_every_profile() {
        // Every profile. Over HTTP/1 the read buffer limit refuses 1 MiB. Over HTTP/2 the bound
        // is the emulated browser's: Chrome advertises SETTINGS_MAX_HEADER_LIST_SIZE (256 KiB);
        // Firefox and Safari advertise none, so the HTTP/2 layer's own 16 MiB applies (shown
        // once, with Firefox: 17 MiB of HPACK takes seconds in a debug build; Safari's
        // connection is the same code with another SETTINGS frame).
        use profile_lookup::config::BrowserProfile;
        for profile in BrowserProfile::ALL {
            let h2_route = match profile {
                BrowserProfile::Chrome | BrowserProfile::ChromePrevious => Some("/big-header"),
                BrowserProfile::Firefox => Some("/huge-header"),
                BrowserProfile::Safari => None,
            };
            let cases = [
                h2_route.map(|route| (Alpn::H2AndHttp1, route)),
                Some((Alpn::Http1Only, "/big-header")),
            ];
            for (alpn, route) in cases.into_iter().flatten() {
                let server = FingerprintServer::start(alpn).await;
                let client =
                    BrowserClient::presenting(&settings_for(&server), None, profile).unwrap();
                let err = client
                    .get(server.url(route), HeaderMap::new())
                    .await
                    .map(|r| r.status)
                    .unwrap_err();
                println!("{profile}: {route} over {alpn:?}: {err}");
                assert!(
                    matches!(err, UpstreamError::Transport(..)),
                    "{profile} {alpn:?}: {err:?}"
                );
            }
        }
    }

    #[tokio::test]
    async fn the_browser_client_reads_retry_after() {
        let server = FingerprintServer::start(Alpn::H2AndHttp1).await;
        let client = BrowserClient::new(&settings_for(&server)).unwrap();
        let response = client
            .get(server.url("/throttled"), HeaderMap::new())
            .await
            .unwrap();
        assert_eq!(response.status, 429);
        assert_eq!(response.retry_after(), Some(Duration::from_secs(7)));
    }
}
