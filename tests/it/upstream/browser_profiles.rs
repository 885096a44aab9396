//! The browser profiles (`upstream.browser_profiles`) against the loopback TLS server that
//! fingerprints clients ([`crate::support::fingerprint`]): each profile's handshake against
//! the browser's published fingerprint and its own identity headers; lookups that take the
//! profiles in turn and move to the next one after a block; the list checked at load.

/// The browser profiles (`upstream.browser_profiles`): each one's handshake against the
/// browser's published fingerprint, its own identity headers, and the lookups that take them
/// in turn and move to the next one after a block.
///
/// Where each expected value comes from (all stored public material, none fetched here):
/// - **Chrome** (current 149 and previous 148; `wreq-util` builds both with its Chrome 132+
///   handshake): JA4 `t13d1516h2_8daaf6152771_d8a2da3f94cd` and HTTP/2
///   `1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p` (MD5 `52d84b11737d980aef856699f885ca86`)
///   are what tls.browserleaks.com reports for Chrome 133–137 in `wreq-util` 3.0.0-rc.14's own
///   `tests/emulate_chrome.rs`, and for a real Chrome 143 in a capture published in
///   `service0427/v2_cp_app` (`tls.md`). FoxIO's `ja4plus-mapping.csv` lists the same JA4 with
///   the older ALPS code point (`…_02713d6af862`), before Chrome 133.
/// - **Firefox** (151; built with the Firefox 135 handshake): JA4
///   `t13d1717h2_5b57614c22b0_3cbfd9057e0d` and HTTP/2
///   `1:65536;2:0;4:131072;5:16384|12517377|0|m,p,a,s` (MD5 `6ea73faa8fc5aac76bded7bd238f6433`)
///   from `wreq-util`'s `tests/emulate_firefox.rs` (Firefox 135–143, the same handshake).
/// - **Safari** (26.4 on macOS; built with the Safari 18.5 handshake): JA4
///   `t13d2014h2_a09f3c656075_e42f34c56612` and HTTP/2
///   `2:0;3:100;4:2097152;9:1|10420225|0|m,s,a,p` (MD5 `c52879e43202aeb92740be6e8c86ea96`)
///   from `wreq-util`'s `tests/emulate_safari.rs` (Safari 18.5; the JA4 also for 26.1).
///
/// The MD5s are of the HTTP/2 text as the loopback server computes it; they were checked
/// against the recorded hashes with `md5sum`, so the text and the published hash agree.
#[cfg(feature = "browser")]
mod profiles {
    use crate::support::fingerprint::akamai::parse_opening;
    use crate::support::fingerprint::ja4::{is_grease, parse_client_hello};
    use crate::support::fingerprint::{
        Alpn, CHROME_NAVIGATION_ORDER, FingerprintServer, PROFILE_PAGE,
    };
    use crate::upstream::browser_client::{only_recording, settings_for};
    use profile_lookup::config::{BrowserProfile, Settings, UpstreamClient};
    use profile_lookup::registry::Platform;
    use profile_lookup::upstream::Upstream;
    use reqwest::header::HeaderMap;

    /// What a profile must show on the wire.
    struct Published {
        profile: BrowserProfile,
        ja4: &'static str,
        akamai: &'static str,
        /// Text the User-Agent holds.
        agent: &'static str,
        /// The `sec-ch-ua` brand and version, for Chromium; none for Firefox and Safari.
        hints: Option<&'static str>,
        /// The page request's header order (names after the pseudo-headers).
        order: &'static [&'static str],
    }

    const PUBLISHED: [Published; 4] = [
        Published {
            profile: BrowserProfile::Chrome,
            ja4: "t13d1516h2_8daaf6152771_d8a2da3f94cd",
            akamai: "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p",
            agent: "(Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/149.0.0.0 Safari/537.36",
            hints: Some("\"Google Chrome\";v=\"149\""),
            order: CHROME_NAVIGATION_ORDER,
        },
        Published {
            profile: BrowserProfile::ChromePrevious,
            ja4: "t13d1516h2_8daaf6152771_d8a2da3f94cd",
            akamai: "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p",
            agent: "(Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/148.0.0.0 Safari/537.36",
            hints: Some("\"Google Chrome\";v=\"148\""),
            order: CHROME_NAVIGATION_ORDER,
        },
        Published {
            profile: BrowserProfile::Firefox,
            ja4: "t13d1717h2_5b57614c22b0_3cbfd9057e0d",
            akamai: "1:65536;2:0;4:131072;5:16384|12517377|0|m,p,a,s",
            agent: "(Windows NT 10.0; Win64; x64; rv:151.0) Gecko/20100101 Firefox/151.0",
            hints: None,
            order: &[
                "user-agent",
                "accept",
                "accept-language",
                "accept-encoding",
                "upgrade-insecure-requests",
                "sec-fetch-dest",
                "sec-fetch-mode",
                "sec-fetch-site",
                "sec-fetch-user",
                "priority",
                "te",
            ],
        },
        Published {
            profile: BrowserProfile::Safari,
            ja4: "t13d2014h2_a09f3c656075_e42f34c56612",
            akamai: "2:0;3:100;4:2097152;9:1|10420225|0|m,s,a,p",
            agent: "(Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.4 Safari/605.1.15",
            hints: None,
            order: &[
                "sec-fetch-dest",
                "user-agent",
                "accept",
                "sec-fetch-site",
                "sec-fetch-mode",
                "accept-language",
                "priority",
                "accept-encoding",
            ],
        },
    ];

    /// A page request as the sources make it, with a caller's User-Agent that must not leak.
    fn page_headers() -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            "user-agent",
            profile_lookup::upstream::BROWSER_USER_AGENT
                .parse()
                .unwrap(),
        );
        headers.insert("accept-language", "en-US,en;q=0.9".parse().unwrap());
        headers.insert("accept", "text/html,*/*;q=0.8".parse().unwrap());
        headers
    }

    #[tokio::test]
    async fn each_profile_shows_its_browsers_published_fingerprint() {
        for expected in &PUBLISHED {
            let server = FingerprintServer::start(Alpn::H2AndHttp1).await;
            let mut settings = settings_for(&server);
            settings.upstream.client = UpstreamClient::Browser;
            let upstream = Upstream::build(&settings, None, Some(expected.profile)).unwrap();
            assert_eq!(upstream.profile(), Some(expected.profile));
            let response = upstream
                .get(server.url("/profile"), page_headers())
                .await
                .unwrap();
            assert_eq!(response.body, PROFILE_PAGE.as_bytes());
            let rec = only_recording(&server);
            let hello = parse_client_hello(&rec.raw).unwrap();
            let h2 = parse_opening(&rec.plain).unwrap();
            let name = expected.profile.as_str();
            println!(
                "{name}: JA4 {}, HTTP/2 {}, headers {:?}",
                hello.ja4(),
                h2.akamai(),
                h2.header_names()
            );
            assert_eq!(hello.ja4(), expected.ja4, "{name} JA4");
            assert_eq!(h2.akamai(), expected.akamai, "{name} HTTP/2");
            assert_eq!(rec.alpn.as_deref(), Some("h2"), "{name}");

            let agent = h2.header("user-agent").unwrap();
            assert!(
                agent.starts_with("Mozilla/5.0 ") && agent.ends_with(expected.agent),
                "{name}: {agent}"
            );
            let names = h2.header_names();
            let hints: Vec<&&str> = names.iter().filter(|n| n.starts_with("sec-ch-")).collect();
            match expected.hints {
                Some(brand) => {
                    let sec_ch_ua = h2.header("sec-ch-ua").unwrap();
                    assert!(sec_ch_ua.contains(brand), "{name}: {sec_ch_ua}");
                    assert_eq!(h2.header("sec-ch-ua-mobile"), Some("?0"));
                    assert_eq!(h2.header("sec-ch-ua-platform"), Some("\"Windows\""));
                    assert!(hello.ciphers.iter().any(|c| is_grease(*c)), "{name}");
                }
                None => assert!(hints.is_empty(), "{name} sends no client hints: {hints:?}"),
            }
            assert_eq!(
                names, expected.order,
                "{name}: a navigation's headers, in the browser's order"
            );
            match expected.profile {
                BrowserProfile::Firefox => {
                    // Firefox sends no GREASE anywhere, its own Accept and Accept-Language.
                    assert!(!hello.ciphers.iter().any(|c| is_grease(*c)));
                    assert!(!hello.extension_order().iter().any(|e| is_grease(*e)));
                    assert_eq!(h2.header("te"), Some("trailers"));
                    assert_eq!(h2.header("accept-language"), Some("en-US,en;q=0.5"));
                    assert_eq!(
                        h2.header("accept"),
                        Some("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
                    );
                }
                BrowserProfile::Safari => {
                    assert!(hello.ciphers.iter().any(|c| is_grease(*c)));
                    assert_eq!(h2.header("accept-language"), Some("en-US,en;q=0.9"));
                }
                _ => {
                    assert_eq!(h2.header("accept-language"), Some("en-US,en;q=0.9"));
                    assert!(
                        h2.header("accept")
                            .unwrap()
                            .ends_with("application/signed-exchange;v=b3;q=0.7"),
                        "Chrome's own navigation Accept"
                    );
                }
            }
        }
    }

    /// Settings of an app whose short-video platform is `server`, with the browser client, every
    /// profile, and the cache off so that every lookup goes out.
    fn app_settings(server: &FingerprintServer) -> Settings {
        let mut settings = crate::support::settings(server.addr);
        settings.platform_mut(Platform::ShortVideo).base_url = server.url("/");
        settings.upstream.ca_file = server.pki.write_ca_file();
        settings.upstream.timeout_ms = 3_000;
        settings.upstream.client = UpstreamClient::Browser;
        settings.upstream.browser_profiles = BrowserProfile::ALL.to_vec();
        settings.cache.enabled = false;
        settings
    }

    fn lookup_path() -> String {
        use stand_in::short_video as sv;
        format!("/short-video/profile/{}", sv::PUBLIC_USER.unique_id)
    }

    /// Which profile each request came from, by its User-Agent.
    fn agents(server: &FingerprintServer) -> Vec<&'static str> {
        server
            .requests()
            .iter()
            .map(|r| {
                PUBLISHED
                    .iter()
                    .find(|p| r.user_agent.ends_with(p.agent))
                    .map_or("?", |p| p.profile.as_str())
            })
            .collect()
    }

    #[tokio::test]
    async fn lookups_take_the_profiles_in_turn() {
        let server = FingerprintServer::start(Alpn::H2AndHttp1).await;
        let app = crate::support::spawn_app(app_settings(&server)).await;
        for _ in 0..8 {
            assert_eq!(app.get(&lookup_path()).await.status(), 200);
        }
        let all = ["chrome", "chrome_previous", "firefox", "safari"];
        assert_eq!(agents(&server), [all, all].concat());
        for request in server.requests() {
            let is_junk = |n: &str| n.bytes().all(|b| b"bcdfghjklmnpqrstvwxz".contains(&b));
            let names: Vec<&str> = request.headers.keys().map(|n| n.as_str()).collect();
            let junk = names.iter().filter(|n| is_junk(n)).count();
            assert!((2..=8).contains(&junk), "junk headers with every profile");
            // After the browser's own headers, never among them.
            assert!(
                names[names.len() - junk..].iter().all(|n| is_junk(n)),
                "{} {names:?}",
                request.user_agent
            );
        }
    }

    #[tokio::test]
    async fn a_block_moves_the_lookup_to_the_next_profile_and_the_lookup_ends() {
        let server = FingerprintServer::start(Alpn::H2AndHttp1).await;
        let app = crate::support::spawn_app(app_settings(&server)).await;
        // Blocks keyed on the Chrome version: the current one is refused.
        server.block_agents(&["Chrome/149."]);
        let response = app.get(&lookup_path()).await;
        assert_eq!(response.status(), 200);
        assert_eq!(agents(&server), ["chrome", "chrome_previous"]);

        // Every profile refused: nothing compares yet (one name), so the page is tried with
        // the next profile in turn without a rest, and with the last one the embed is asked;
        // then the lookup ends.
        server.block_agents(&["Chrome/", "Firefox/", "Version/26.4"]);
        let response = app.get(&lookup_path()).await;
        assert_eq!(response.status(), 429);
        assert_eq!(
            agents(&server)[2..],
            [
                "firefox",
                "safari",
                "chrome",
                "chrome_previous",
                "chrome_previous"
            ],
            "the page with each profile, then the embed with the last one"
        );
        let paths: Vec<bool> = server.requests()[2..]
            .iter()
            .map(|r| r.path.starts_with("/embed/@"))
            .collect();
        assert_eq!(
            paths,
            [false, false, false, false, true],
            "the page with each profile, then the embed"
        );
    }

    /// Photo-share waits its blocks out with backoff on the direct route; with profiles left
    /// to present, a block moves to the next one at once instead, and only the last profile's
    /// block is waited out.
    #[tokio::test]
    async fn a_platform_that_waits_blocks_out_moves_to_the_next_profile_first() {
        use stand_in::photo_share as ps;
        let server = FingerprintServer::start(Alpn::H2AndHttp1).await;
        let mut settings = app_settings(&server);
        settings.platform_mut(Platform::PhotoShare).base_url = server.url("/");
        settings.platform_mut(Platform::PhotoShare).sources = vec!["json".into()];
        settings.retry.max_attempts = 3;
        let app = crate::support::spawn_app(settings).await;
        server.block_agents(&["Chrome/", "Firefox/", "Version/26.4"]);
        let response = app
            .get(&format!(
                "/photo-share/profile/{}",
                ps::PUBLIC_USER.username
            ))
            .await;
        assert_eq!(response.status(), 429);
        assert_eq!(
            agents(&server),
            [
                "chrome",
                "chrome_previous",
                "firefox",
                "safari",
                "safari",
                "safari"
            ],
            "one request per profile, then the last one's retries"
        );
    }
}

/// `upstream.browser_profiles`: checked at load whatever the build, ignored by the plain
/// client.
mod profile_settings {
    use profile_lookup::config::{BrowserProfile, Settings, UpstreamClient};

    #[test]
    fn every_profile_is_on_by_default_and_a_list_is_checked() {
        let mut settings = Settings::default();
        assert_eq!(settings.upstream.browser_profiles, BrowserProfile::ALL);
        settings.upstream.browser_profiles = vec![BrowserProfile::Firefox, BrowserProfile::Firefox];
        let err = settings.validate().unwrap_err().to_string();
        assert!(
            err.contains("browser_profiles[1]") && err.contains("twice"),
            "{err}"
        );
        settings.upstream.browser_profiles.clear();
        // The plain client presents no browser: an empty list is fine for it...
        settings.validate().unwrap();
        // ...and not for the browser client, which needs one to present.
        settings.upstream.client = UpstreamClient::Browser;
        let err = settings.validate().unwrap_err().to_string();
        assert!(err.contains("upstream.browser_profiles"), "{err}");
    }

    #[test]
    fn profile_names_are_checked_when_the_config_is_loaded() {
        let file = crate::support::temp_file(
            "profiles-",
            ".toml",
            b"[upstream]\nbrowser_profiles = [\"chrome\", \"opera\"]\n",
        );
        let err = Settings::load(Some(file.path())).unwrap_err().to_string();
        assert!(
            err.contains("opera") && err.contains("chrome_previous"),
            "names the bad one and the known ones: {err}"
        );
    }

    #[test]
    fn the_plain_client_presents_no_profile() {
        let settings = Settings::default();
        let upstream = profile_lookup::upstream::Upstream::new(&settings).unwrap();
        assert_eq!(upstream.profile(), None);
    }
}
