//! The request headers the platform's own web client sends, in one place: the values below
//! change with the platform's releases, and the JSON endpoint refuses requests without them.
//!
//! Sources (2026): the headers a desktop Chrome sends to `web_profile_info` from a profile
//! page, as recorded by the peers that follow the platform closely (yt-dlp's and gallery-dl's
//! extractors, instaloader). When the platform starts refusing with 401/`require_login` or a
//! 400 on the JSON endpoint while pages still load, compare these with a browser's first.

use std::sync::Mutex;

use reqwest::header::{ACCEPT, ACCEPT_LANGUAGE, HeaderMap, HeaderName, HeaderValue, REFERER};
use url::Url;

use crate::upstream::{BROWSER_USER_AGENT, Response};

/// `X-IG-App-ID`: the web client's application id (unchanged since 2019 in every peer).
pub const WEB_APP_ID: &str = "936619743392459";
/// `X-ASBD-ID`: a build id of the web client; yt-dlp sends 359341 since 2026-06 (gallery-dl
/// still 129477, which the platform also accepts for now).
pub const ASBD_ID: &str = "359341";
/// The `X-IG-WWW-Claim` of a client that has not been given one yet.
const NO_CLAIM: &str = "0";
/// The response header in which the platform hands out a new claim.
const SET_CLAIM: &str = "x-ig-set-www-claim";
/// The longest claim kept (real ones are about 50 characters).
const MAX_CLAIM_LEN: usize = 256;

/// The `X-IG-WWW-Claim` to send: `0` until the platform hands one out, then that one.
#[derive(Debug)]
pub struct WwwClaim(Mutex<HeaderValue>);

impl Default for WwwClaim {
    fn default() -> Self {
        Self(Mutex::new(HeaderValue::from_static(NO_CLAIM)))
    }
}

impl WwwClaim {
    /// The claim to send now.
    pub fn current(&self) -> HeaderValue {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Keeps the claim a response hands out, when it is a plausible one.
    pub fn observe(&self, response: &Response) {
        let Some(value) = response.headers.get(SET_CLAIM) else {
            return;
        };
        let plausible = !value.is_empty()
            && value.len() <= MAX_CLAIM_LEN
            && value.as_bytes().iter().all(u8::is_ascii_graphic);
        if plausible {
            *self.0.lock().unwrap_or_else(|p| p.into_inner()) = value.clone();
        }
    }
}

/// Headers of the profile JSON request, as the web client sends it from the profile page
/// `referer`.
pub fn api(referer: &Url, claim: HeaderValue) -> HeaderMap {
    let mut h = common();
    h.insert(ACCEPT, HeaderValue::from_static("*/*"));
    h.insert(name("x-ig-app-id"), HeaderValue::from_static(WEB_APP_ID));
    h.insert(name("x-asbd-id"), HeaderValue::from_static(ASBD_ID));
    h.insert(name("x-ig-www-claim"), claim);
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

    fn response_with(claim: &str) -> Response {
        let mut headers = HeaderMap::new();
        headers.insert(SET_CLAIM, HeaderValue::from_str(claim).unwrap());
        Response {
            status: reqwest::StatusCode::OK,
            headers,
            url: "https://example.test/".parse().unwrap(),
            body: bytes::Bytes::new(),
        }
    }

    #[test]
    fn the_claim_starts_at_zero_and_follows_the_platform() {
        let claim = WwwClaim::default();
        assert_eq!(claim.current(), "0");
        claim.observe(&response_with("hmac.AR2example"));
        assert_eq!(claim.current(), "hmac.AR2example");
        claim.observe(&response_with(&"x".repeat(MAX_CLAIM_LEN + 1)));
        assert_eq!(
            claim.current(),
            "hmac.AR2example",
            "an oversized claim is ignored"
        );
    }

    #[test]
    fn the_json_request_carries_the_web_clients_headers() {
        let referer: Url = "https://photo.test/some.user/".parse().unwrap();
        let h = api(&referer, HeaderValue::from_static("0"));
        for (key, value) in [
            ("x-ig-app-id", WEB_APP_ID),
            ("x-asbd-id", ASBD_ID),
            ("x-ig-www-claim", "0"),
            ("x-requested-with", "XMLHttpRequest"),
            ("sec-fetch-dest", "empty"),
            ("sec-fetch-mode", "cors"),
            ("sec-fetch-site", "same-origin"),
            ("referer", "https://photo.test/some.user/"),
        ] {
            assert_eq!(h[key], value, "{key}");
        }
        assert_eq!(page()["sec-fetch-mode"], "navigate");
    }
}
