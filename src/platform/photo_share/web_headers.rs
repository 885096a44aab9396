//! The request headers the platform's own web client sends, in one place: the values below
//! change with the platform's releases, and the JSON endpoint refuses requests without them.
//!
//! Each value says since when, and who recorded it (`docs/photo-share.md` lists the same, in
//! one table). When the platform starts refusing with 401/`require_login` or a 400 on the JSON
//! endpoint while pages still load, compare these with a browser's first.
//!
//! The session values (`X-IG-WWW-Claim`, `X-CSRFToken`) are never kept here: the platform
//! hands them to one client address, so they belong to the route that was handed them (its
//! cookie jar, and [`RouteLease::handed`](crate::upstream::egress::RouteLease::handed)), and
//! the headers are built per request from the route in use.

use reqwest::header::{ACCEPT, ACCEPT_LANGUAGE, HeaderMap, HeaderName, HeaderValue, REFERER};
use url::Url;

use crate::upstream::BROWSER_USER_AGENT;

/// `X-IG-App-ID`: the web client's application id (yt-dlp's `web` app id; instaloader sends it
/// since its 2026-06 web API fallback, instaloader/instaloader#2701). Unchanged since 2019.
pub const WEB_APP_ID: &str = "936619743392459";
/// `X-ASBD-ID`: a build id of the web client; yt-dlp sends 359341 since 2026-06-28 (commit
/// f49b551a0c, before that 198387).
pub const ASBD_ID: &str = "359341";
/// The cookie whose value the web client repeats as `X-CSRFToken` (yt-dlp f49b551a0c,
/// 2026-06-28: the header is left out when the cookie was never set).
pub const CSRF_COOKIE: &str = "csrftoken";
/// The longest CSRF token repeated as a header (real ones are 32 characters).
const MAX_CSRF_LEN: usize = 256;
/// The `X-IG-WWW-Claim` of a client that has not been handed one yet (yt-dlp since
/// 2021-10-22, ab2ffab22d, and still in f49b551a0c; instaloader's default headers).
pub const NO_CLAIM: &str = "0";
/// The response header in which the platform hands a client its claim.
pub const SET_CLAIM: &str = "x-ig-set-www-claim";
/// The longest claim repeated (real ones are about 50 characters).
const MAX_CLAIM_LEN: usize = 256;

/// Headers of the profile JSON request, as the web client sends it from the profile page
/// `referer`: with the claim this route was handed (else `0`) and the route's `csrftoken`
/// cookie value when it has one.
pub fn api(referer: &Url, claim: Option<HeaderValue>, csrf: Option<&str>) -> HeaderMap {
    let mut h = common();
    h.insert(ACCEPT, HeaderValue::from_static("*/*"));
    h.insert(name("x-ig-app-id"), HeaderValue::from_static(WEB_APP_ID));
    h.insert(name("x-asbd-id"), HeaderValue::from_static(ASBD_ID));
    let claim = claim.filter(|c| {
        !c.is_empty() && c.len() <= MAX_CLAIM_LEN && c.as_bytes().iter().all(u8::is_ascii_graphic)
    });
    h.insert(
        name("x-ig-www-claim"),
        claim.unwrap_or(HeaderValue::from_static(NO_CLAIM)),
    );
    h.insert(
        name("x-requested-with"),
        HeaderValue::from_static("XMLHttpRequest"),
    );
    h.insert(name("sec-fetch-dest"), HeaderValue::from_static("empty"));
    h.insert(name("sec-fetch-mode"), HeaderValue::from_static("cors"));
    h.insert(
        name("sec-fetch-site"),
        HeaderValue::from_static("same-origin"),
    );
    if let Ok(value) = HeaderValue::from_str(referer.as_str()) {
        h.insert(REFERER, value);
    }
    let csrf =
        csrf.filter(|t| t.len() <= MAX_CSRF_LEN && t.bytes().all(|b| b.is_ascii_alphanumeric()));
    if let Some(value) = csrf.and_then(|t| HeaderValue::from_str(t).ok()) {
        h.insert(name("x-csrftoken"), value);
    }
    h
}

/// Headers of the profile page request, as a browser navigating to it sends them.
pub fn page() -> HeaderMap {
    let mut h = common();
    h.insert(
        ACCEPT,
        HeaderValue::from_static("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
    );
    h.insert(name("sec-fetch-dest"), HeaderValue::from_static("document"));
    h.insert(name("sec-fetch-mode"), HeaderValue::from_static("navigate"));
    h.insert(name("sec-fetch-site"), HeaderValue::from_static("none"));
    h
}

fn common() -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(
        reqwest::header::USER_AGENT,
        HeaderValue::from_static(BROWSER_USER_AGENT),
    );
    h.insert(ACCEPT_LANGUAGE, HeaderValue::from_static("en-US,en;q=0.9"));
    h
}

fn name(n: &'static str) -> HeaderName {
    HeaderName::from_static(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every header of both requests, pinned: a change here is a change of what the platform
    /// sees, and belongs in `docs/photo-share.md` with its date and source.
    #[test]
    fn every_header_value_is_pinned() {
        let referer: Url = "https://photo.test/some.user/".parse().unwrap();
        let h = api(&referer, None, Some("Tok3n"));
        let pinned = [
            ("user-agent", BROWSER_USER_AGENT),
            ("accept-language", "en-US,en;q=0.9"),
            ("accept", "*/*"),
            // yt-dlp's and instaloader's web app id, since 2019 (instaloader#2701, 2026-06).
            ("x-ig-app-id", "936619743392459"),
            // yt-dlp f49b551a0c, 2026-06-28 (was 198387).
            ("x-asbd-id", "359341"),
            // `0` until the platform hands this route one (yt-dlp since 2021-10-22).
            ("x-ig-www-claim", "0"),
            ("x-requested-with", "XMLHttpRequest"),
            ("sec-fetch-dest", "empty"),
            ("sec-fetch-mode", "cors"),
            ("sec-fetch-site", "same-origin"),
            ("referer", "https://photo.test/some.user/"),
            // The route's own `csrftoken` cookie (yt-dlp f49b551a0c, 2026-06-28).
            ("x-csrftoken", "Tok3n"),
        ];
        for (key, value) in pinned {
            assert_eq!(h[key], value, "{key}");
        }
        assert_eq!(h.len(), pinned.len(), "no header beyond the pinned ones");
        let p = page();
        let pinned = [
            ("user-agent", BROWSER_USER_AGENT),
            ("accept-language", "en-US,en;q=0.9"),
            (
                "accept",
                "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            ),
            ("sec-fetch-dest", "document"),
            ("sec-fetch-mode", "navigate"),
            ("sec-fetch-site", "none"),
        ];
        for (key, value) in pinned {
            assert_eq!(p[key], value, "{key}");
        }
        assert_eq!(p.len(), pinned.len(), "no header beyond the pinned ones");
    }

    #[test]
    fn the_claim_is_the_routes_and_only_plausible_values_are_repeated() {
        let referer: Url = "https://photo.test/a/".parse().unwrap();
        let claim = |c: &str| api(&referer, Some(HeaderValue::from_str(c).unwrap()), None);
        assert_eq!(
            claim("hmac.AR2example")["x-ig-www-claim"],
            "hmac.AR2example"
        );
        for odd in ["", "a b", &"x".repeat(MAX_CLAIM_LEN + 1)] {
            assert_eq!(claim(odd)["x-ig-www-claim"], NO_CLAIM, "{odd:?}");
        }
        let without = api(&referer, None, None);
        assert!(!without.contains_key("x-csrftoken"));
        let odd = api(&referer, None, Some("a b\r\n"));
        assert!(
            !odd.contains_key("x-csrftoken"),
            "only a plausible token is repeated"
        );
    }
}
