//! Random extra headers on page requests (`<section>.junk_headers`), on loopback: a recording
//! upstream serves the platforms' samples and keeps every request's headers. Short-video page
//! requests carry 2 to 8 headers whose names and values are consonants only (on by default);
//! `short_video.junk_headers = false` sends none; photo-share's JSON request never carries
//! them, and its page request only when `photo_share.junk_headers` is turned on.

use axum::http::HeaderMap;
use profile_lookup::config::Settings;
use profile_lookup::registry::Platform;
use stand_in::photo_share as ps;
use stand_in::short_video as sv;

use crate::support::app::Target;
use crate::support::{self, AppBuilder, PhotoShare, ShortVideo, TestApp, spawn_upstream};

/// The letters a junk header's name and value are made of: no vowel, no `y`, so no name can
/// spell a real header.
const CONSONANTS: &str = "bcdfghjklmnpqrstvwxz";

/// The app on `upstream` with the cache off, so every lookup goes out.
fn uncached(upstream: impl Into<Target>) -> AppBuilder {
    TestApp::on(upstream).with(|s| s.cache.enabled = false)
}

/// Every request `app`'s upstream received: its path and query, and its headers.
fn requests(app: &TestApp) -> Vec<(String, HeaderMap)> {
    app.upstream()
        .seen()
        .into_iter()
        .map(|s| (s.target, s.headers))
        .collect()
}

fn is_consonants(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| CONSONANTS.contains(c))
}

/// The junk headers of one request: names of 8 to 24 consonants. Each is checked to carry one
/// value of 16 to 32 consonants.
fn junk(headers: &HeaderMap) -> Vec<String> {
    let names: Vec<String> = headers
        .keys()
        .map(|n| n.as_str())
        .filter(|n| is_consonants(n))
        .map(str::to_owned)
        .collect();
    for name in &names {
        assert!((8..=24).contains(&name.len()), "name {name}");
        let values: Vec<_> = headers.get_all(name.as_str()).iter().collect();
        assert_eq!(values.len(), 1, "{name} is sent once");
        let value = values[0].to_str().unwrap();
        assert!(
            (16..=32).contains(&value.len()) && is_consonants(value),
            "{name}: {value}"
        );
    }
    names
}

#[tokio::test]
async fn short_video_page_requests_carry_two_to_eight_random_junk_headers() {
    let app = uncached(sv::router()).start().await;
    for _ in 0..24 {
        app.lookup(ShortVideo, sv::PUBLIC_USER.unique_id)
            .await
            .expect_status(200);
    }
    let requests = requests(&app);
    assert_eq!(requests.len(), 24, "one page request per lookup");
    let mut counts = std::collections::BTreeSet::new();
    let mut names = std::collections::BTreeSet::new();
    for (path, headers) in &requests {
        let junk = junk(headers);
        assert!(
            (2..=8).contains(&junk.len()),
            "{path}: {} junk headers in {headers:?}",
            junk.len()
        );
        counts.insert(junk.len());
        names.extend(junk);
        // Everything else is what the page request always sends.
        for name in headers.keys() {
            assert!(
                is_consonants(name.as_str())
                    || [
                        "host",
                        "user-agent",
                        "accept",
                        "accept-language",
                        "accept-encoding",
                        "cookie"
                    ]
                    .contains(&name.as_str()),
                "unexpected header {name}"
            );
        }
    }
    assert!(
        counts.len() > 1,
        "the count is drawn per request: {counts:?}"
    );
    assert!(
        names.len() > 2 * 24,
        "names are drawn per request: {} distinct",
        names.len()
    );
}

#[tokio::test]
async fn short_video_junk_headers_false_sends_none() {
    let app = uncached(sv::router())
        .with(|s| s.platform_mut(Platform::ShortVideo).junk_headers = false)
        .start()
        .await;
    for _ in 0..4 {
        app.lookup(ShortVideo, sv::PUBLIC_USER.unique_id)
            .await
            .expect_status(200);
    }
    let requests = requests(&app);
    assert_eq!(requests.len(), 4);
    for (path, headers) in &requests {
        assert_eq!(junk(headers), Vec::<String>::new(), "{path}");
    }
}

#[tokio::test]
async fn photo_share_json_requests_never_carry_junk_headers() {
    let upstream = spawn_upstream(ps::router()).await;
    assert!(
        !uncached(&upstream)
            .settings()
            .platform(Platform::PhotoShare)
            .junk_headers,
        "off by default"
    );
    // Off by default on photo-share: neither the JSON nor the page request carries any; turned
    // on, the page request carries them, the JSON request still never does.
    for (junk_headers, sources) in [
        (false, &["json", "page"][..]),
        (false, &["page"]),
        (true, &["page"]),
        (true, &["json"]),
    ] {
        let app = uncached(&upstream)
            .with(|s| {
                let platform = s.platform_mut(Platform::PhotoShare);
                platform.junk_headers = junk_headers;
                platform.sources = sources.iter().map(|s| (*s).to_owned()).collect();
            })
            .start()
            .await;
        app.lookup(PhotoShare, ps::PUBLIC_USER.username)
            .await
            .expect_status(200);
    }
    let requests: Vec<(String, HeaderMap)> = upstream
        .seen()
        .into_iter()
        .map(|s| (s.target, s.headers))
        .collect();
    let kinds: Vec<(bool, usize)> = requests
        .iter()
        .map(|(path, headers)| (path.starts_with("/api/"), junk(headers).len()))
        .collect();
    assert_eq!(kinds.len(), 4, "{kinds:?}");
    assert_eq!(kinds[0], (true, 0), "JSON, off");
    assert_eq!(kinds[1], (false, 0), "page, off");
    assert!(!kinds[2].0 && (2..=8).contains(&kinds[2].1), "page, on");
    assert_eq!(kinds[3], (true, 0), "JSON, on");
}

#[test]
fn junk_headers_are_a_key_of_every_platform_section_in_default_toml() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/config/default.toml"))
        .unwrap();
    let loaded: Settings = toml_free_load(&text);
    assert!(loaded.platform(Platform::ShortVideo).junk_headers);
    assert!(!loaded.platform(Platform::PhotoShare).junk_headers);
}

/// `config/default.toml` through the service's own loader.
fn toml_free_load(text: &str) -> Settings {
    let file = support::temp_file("default-", ".toml", text.as_bytes());
    Settings::load(Some(file.path())).expect("default.toml loads")
}
