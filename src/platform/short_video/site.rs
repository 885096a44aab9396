//! The short-video platform as the fetch ladder drives it: one profile page per lookup.
//!
//! The platform may answer with its WAF proof-of-work page instead: that is a hurdle, solved
//! on a blocking thread (bounded in time and in how many run at once); its cookie goes into
//! the route's jar and the page is asked once more. Blocking signals (429, a
//! `bdturing-verify` header, a redirect to the login page, a captcha state) are final here:
//! retrying a captcha only digs the hole deeper, and the breaker takes it from there.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, ACCEPT_LANGUAGE, HeaderMap, HeaderValue, USER_AGENT};
use tokio::sync::Semaphore;
use url::Url;

use super::challenge::{self, WafChallenge};
use super::{ShortVideoProfile, extract};
use crate::config::Settings;
use crate::platform::site::{Api, Document, Reading, Site};
use crate::platform::{PageVerdict, Platform, Profile};
use crate::upstream::egress::RouteLease;
use crate::upstream::{BROWSER_USER_AGENT, Response, same_origin, url_with_segments};
use crate::username::{Subject, Username};

/// How long one challenge may be worked on.
const CHALLENGE_TIMEOUT: Duration = Duration::from_secs(10);
/// Challenges worked on at once (each holds a blocking thread).
const CONCURRENT_SOLVES: usize = 2;

/// The short-video platform: its base URL and its challenge solvers.
#[derive(Debug)]
pub struct ShortVideo {
    base: Url,
    solvers: Arc<Semaphore>,
}

/// The one document of a short-video lookup: the profile page (`page`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProfilePage;

impl Document for ProfilePage {
    fn label(self) -> &'static str {
        "page"
    }
}

impl Site for ShortVideo {
    const PLATFORM: Platform = Platform::ShortVideo;
    const API: Api = Api {
        example_username: "sunny.kitchen.lab",
        found: "The profile (private accounts have `privateAccount: true` and may lack counts)",
        region_locks: true,
    };
    type Body = ShortVideoProfile;
    const RETRIES_BLOCKS: bool = false;
    type Doc = ProfilePage;
    type Hurdle = WafChallenge;
    const DOCUMENTS: &'static [ProfilePage] = &[ProfilePage];

    fn new(settings: &Settings) -> Self {
        Self {
            base: settings.platform(Self::PLATFORM).base_url.clone(),
            solvers: Arc::new(Semaphore::new(CONCURRENT_SOLVES)),
        }
    }

    fn url(&self, _: ProfilePage, name: &Username) -> Url {
        url_with_segments(&self.base, &[&format!("@{name}")])
    }

    fn headers(&self, _: ProfilePage, _: &Username, _: &RouteLease<'_>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(USER_AGENT, HeaderValue::from_static(BROWSER_USER_AGENT));
        headers.insert(
            ACCEPT,
            HeaderValue::from_static(
                "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
            ),
        );
        headers.insert(ACCEPT_LANGUAGE, HeaderValue::from_static("en-US,en;q=0.9"));
        headers
    }

    fn read(&self, _: ProfilePage, response: &Response, name: &Username) -> Reading<WafChallenge> {
        if response.headers.contains_key("bdturing-verify") {
            return Reading::blocked("bdturing_verify");
        }
        if let Some(target) = response.redirect_target() {
            return if target.path().starts_with("/login") {
                Reading::blocked("login_redirect")
            } else if same_origin(&self.base, &target) {
                Reading::Follow(target)
            } else {
                Reading::Unavailable("redirect off the platform's host".into())
            };
        }
        let status = response.status;
        match status {
            StatusCode::TOO_MANY_REQUESTS => Reading::Blocked {
                reason: "http_429",
                retry_after: response.retry_after(),
            },
            StatusCode::FORBIDDEN => Reading::blocked("http_403"),
            s if s.is_server_error() => Reading::ServerError(format!("HTTP {status}")),
            // The platform answers 200 for missing users too; the page's state decides (and a
            // bare 404 without state is reported by the extractor as unreadable).
            s if s.is_success() || s == StatusCode::NOT_FOUND => {
                match challenge::detect(&response.body) {
                    Some(hurdle) => Reading::Hurdle(hurdle),
                    None => Reading::from(Self::extract(&response.body, name.into())),
                }
            }
            _ => Reading::Unavailable(format!("HTTP {status}")),
        }
    }

    /// Solves the challenge off the async workers, a few at a time, within a deadline, and
    /// puts its cookie in the route's jar for `url`.
    async fn clear(&self, hurdle: WafChallenge, url: &Url, route: &RouteLease<'_>) -> bool {
        let Ok(_slot) = self.solvers.clone().acquire_owned().await else {
            return false;
        };
        let work =
            tokio::task::spawn_blocking(move || challenge::solve(&hurdle, challenge::MAX_ANSWER));
        match tokio::time::timeout(CHALLENGE_TIMEOUT, work).await {
            Ok(Ok(Some(cookies))) => {
                route.remember_cookies(url, &cookies);
                true
            }
            _ => false,
        }
    }

    fn extract(document: &[u8], requested: Subject<'_>) -> PageVerdict<Profile> {
        extract::extract(document, requested).map(|body| Profile::new(&body))
    }
}
