//! The short-video platform as the fetcher drives it: the profile page, then the embed
//! page when the profile page is blocked (or stateless) on every route left.
//!
//! The platform may answer with its WAF proof-of-work page instead: that is a hurdle, solved
//! on a blocking thread (bounded in time and in how many run at once); its cookie goes into
//! the route's jar and the page is asked once more. Blocking signals (429, a
//! `bdturing-verify` header, a redirect to the login page, a captcha state, a page without
//! state) are not waited out: retrying a captcha only digs the hole deeper. The lookup moves
//! to another proxy, then hands over to the embed page; the breaker takes it from there. The
//! embed's 400 carries its error payload: a code there that names the case decides (10221 not
//! found, 10222 private); without one it means "private or missing" alike, never not found.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, ACCEPT_LANGUAGE, HeaderMap, HeaderValue, USER_AGENT};
use tokio::sync::Semaphore;
use url::Url;

use super::challenge::{self, WafChallenge};
use super::{ShortVideoProfile, extract, stateless};
use crate::config::Settings;
use crate::platform::site::{Alone, Api, Document, Reading, Site};
use crate::platform::{Platform, Profile};
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

/// The documents of a short-video lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Doc {
    /// The profile page, `/@{name}` (`page`).
    Page,
    /// The embed page, `/embed/@{name}` (`embed`): a smaller profile, asked when the page is
    /// blocked.
    Embed,
}

impl Document for Doc {
    fn label(self) -> &'static str {
        match self {
            Doc::Page => "page",
            Doc::Embed => "embed",
        }
    }

    /// The embed gives followers and likes, never the video count.
    fn gives_posts(self) -> bool {
        self == Doc::Page
    }

    /// The embed's flat `userInfo` has no bio link, creation time or language.
    fn withholds(self) -> &'static [&'static str] {
        match self {
            Doc::Page => &[],
            Doc::Embed => &[BIO_LINK, CREATE_TIME, LANGUAGE],
        }
    }
}

/// The body's added nullable fields, as `Profile-Withheld` names them.
const BIO_LINK: &str = "userInfo.user.bioLink";
const CREATE_TIME: &str = "userInfo.user.createTime";
const LANGUAGE: &str = "userInfo.user.language";

/// The block a saved WAF proof-of-work page is, as `profile-lookup extract` names it.
pub const WAF_CHALLENGE: &str = "waf_challenge";

/// The reason of another client error on the embed: a status the embed is not known to send.
const EMBED_UNEXPECTED_STATUS: &str = "embed_unexpected_status";

/// The reason of the embed's 400 and of its error payload (`"isError": true`) when no code in
/// it names the case: the platform says so for a private account and for a missing one alike.
pub const EMBED_PRIVATE_OR_MISSING: &str = super::embed::EMBED_PRIVATE_OR_MISSING;

impl Site for ShortVideo {
    const PLATFORM: Platform = Platform::ShortVideo;
    const API: Api = Api {
        example_username: "sunny.kitchen.lab",
        found: "The profile (private accounts have `privateAccount: true` and may lack counts)",
        region_locks: true,
        restricts: true,
    };
    type Body = ShortVideoProfile;
    const RETRIES_BLOCKS: bool = false;
    type Doc = Doc;
    type Hurdle = WafChallenge;
    const DOCUMENTS: &'static [Doc] = &[Doc::Page, Doc::Embed];
    const CAPTURED_BLOCKS: &'static [&'static str] = &stateless::KINDS;

    fn new(settings: &Settings, _: &crate::fleet::Fleet) -> Self {
        Self {
            base: settings.platform(Self::PLATFORM).base_url.clone(),
            solvers: Arc::new(Semaphore::new(CONCURRENT_SOLVES)),
        }
    }

    fn url(&self, doc: Doc, name: &Username) -> Url {
        match doc {
            Doc::Page => url_with_segments(&self.base, &[&format!("@{name}")]),
            Doc::Embed => url_with_segments(&self.base, &["embed", &format!("@{name}")]),
        }
    }

    fn headers(&self, _: Doc, _: &Username, _: &RouteLease<'_>) -> HeaderMap {
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

    fn read(
        &self,
        doc: Doc,
        response: &Response,
        name: &Username,
    ) -> Reading<Box<Profile>, WafChallenge> {
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
            s if s.is_server_error() => Reading::ServerError(format!("HTTP {status}"), None),
            // The embed's error payload: its code may name the case (10221 not found, 10222
            // private); without one, private or missing alike: nothing about the user, and no
            // refusal of the route.
            StatusCode::BAD_REQUEST if doc == Doc::Embed => {
                match extract::embed_error(&response.body, name) {
                    Some(reading) => reading.map(|body| Box::new(Profile::new(&body))),
                    None => Reading::Inconclusive(EMBED_PRIVATE_OR_MISSING),
                }
            }
            s if doc == Doc::Embed && s.is_client_error() => {
                Reading::Inconclusive(EMBED_UNEXPECTED_STATUS)
            }
            // The platform answers 200 for missing users too; the page's state decides (and a
            // bare 404 without state is reported by the extractor as unreadable).
            s if s.is_success() || s == StatusCode::NOT_FOUND => {
                if let Some(hurdle) = challenge::detect(&response.body) {
                    return Reading::Hurdle(hurdle);
                }
                let reading = extract::extract(&response.body, name);
                match reading.map(|body| Box::new(Profile::new(&body))) {
                    // The embed's error payload: private or missing alike, as its 400 says.
                    Reading::Blocked {
                        reason: EMBED_PRIVATE_OR_MISSING,
                        ..
                    } => Reading::Inconclusive(EMBED_PRIVATE_OR_MISSING),
                    // The stateless kinds are what the platform answers 200 with; a 404
                    // without state is no page we know.
                    Reading::Blocked { reason, .. }
                        if !s.is_success() && stateless::KINDS.contains(&reason) =>
                    {
                        Reading::Unreadable(format!("HTTP {status} without state"))
                    }
                    reading => reading,
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

    /// Only the embed's "private or missing" can leave a plan without a block or an answer:
    /// the platform keeps the answer, so the lookup is 429 without resting the route.
    fn conclude(
        &self,
        misses: &[(Doc, Reading<Box<Profile>, WafChallenge>)],
    ) -> Reading<Box<Profile>, WafChallenge> {
        let why = misses
            .last()
            .map_or(EMBED_PRIVATE_OR_MISSING, |(_, miss)| match miss {
                Reading::Inconclusive(why) => why,
                _ => EMBED_PRIVATE_OR_MISSING,
            });
        Reading::Withheld(why)
    }

    /// The profile page of any era, or the embed page: one extractor reads them all. A saved
    /// WAF challenge page is the block it is ([`WAF_CHALLENGE`]): a lookup clears it before
    /// reading ([`Site::read`]), so it is never a page the service failed to read.
    fn extract(document: &[u8], requested: Subject<'_>) -> Reading {
        if challenge::detect(document).is_some() {
            return Reading::blocked(WAF_CHALLENGE);
        }
        extract::extract(document, requested).map(|body| Box::new(Profile::new(&body)))
    }

    /// The embed's 400 withholds private (and missing) accounts by design; any other client
    /// error there is a status the embed is not known to send: it moved.
    fn alone(_: Doc, why: &str) -> Alone {
        if why == EMBED_UNEXPECTED_STATUS {
            Alone::Unreadable
        } else {
            Alone::Withheld
        }
    }
}
