//! Fetching a short-video profile page and turning it into a [`Lookup`].
//!
//! One page request per lookup, in the common case. The platform may answer with its WAF
//! proof-of-work page instead: we solve it on a blocking thread (bounded in time and in how
//! many run at once), send the cookie it asks for, and fetch once more. Blocking signals
//! (429, a `bdturing-verify` header, a redirect to the login page) are final here: retrying a
//! captcha only digs the hole deeper, and the breaker takes it from there.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, ACCEPT_LANGUAGE, HeaderMap, HeaderValue, USER_AGENT};
use tokio::sync::Semaphore;
use url::Url;

use super::{challenge, extract};
use crate::config::Settings;
use crate::fleet::Fleet;
use crate::platform::{
    Lookup, PageVerdict, Platform, Profile, Report, Sent, guarded, send, transport_failure,
};
use crate::upstream::capture::Capture;
use crate::upstream::gate::Gate;
use crate::upstream::retry::{Attempt, RetryPolicy};
use crate::upstream::routes::{RouteLease, Routes};
use crate::upstream::{BROWSER_USER_AGENT, Response, same_origin, url_with_segments};
use crate::username::Username;

/// Most candidate answers tried for one WAF challenge (the platform's own bound).
pub const CHALLENGE_MAX_ITERATIONS: u32 = 1_000_000;
/// How long one challenge may be worked on.
const CHALLENGE_TIMEOUT: Duration = Duration::from_secs(10);
/// Same-host redirects followed before giving up.
const MAX_REDIRECTS: usize = 3;

/// Looks up short-video profiles; one per service.
#[derive(Debug)]
pub struct ShortVideoSource {
    routes: Routes,
    base: Url,
    gate: Gate,
    retry: RetryPolicy,
    solvers: Arc<Semaphore>,
    capture: Option<Arc<Capture>>,
}

/// Where one fetch of the page got to.
enum Page {
    /// A page to extract from.
    Body(Response),
    /// A final answer without extraction.
    Answer(Lookup),
}

impl ShortVideoSource {
    /// Builds the source from the settings and its routes out (proxies or direct); with a
    /// `fleet`, its outbound budget and breaker are the fleet's.
    pub fn new(settings: &Settings, routes: Routes, fleet: Option<Fleet>) -> Self {
        Self {
            routes,
            base: settings.short_video.base_url.clone(),
            gate: Gate::new(
                Platform::ShortVideo.as_str(),
                &settings.short_video,
                &settings.breaker,
                fleet,
            ),
            // Throttles are final on this platform; only a transport fault gets a second try.
            retry: RetryPolicy::new(&settings.retry),
            solvers: Arc::new(Semaphore::new(2)),
            capture: Capture::new(&settings.upstream),
        }
    }

    /// Looks `name` up: fetch the page (solving a WAF challenge once if asked), then extract,
    /// every request through one route. The WAF's cookie goes into that route's jar, so the
    /// answer and later lookups on the route carry it.
    pub async fn lookup(&self, name: &Username) -> Report {
        guarded(
            &self.gate,
            &self.routes,
            Platform::ShortVideo,
            async |route| {
                let url = url_with_segments(&self.base, &[&format!("@{name}")]);
                for round in 0..2 {
                    let page = match self.fetch_page(url.clone(), route).await {
                        Page::Body(page) => page,
                        Page::Answer(lookup) => return lookup,
                    };
                    if let Some(ch) = challenge::detect(&page.body) {
                        if round > 0 {
                            return blocked("challenge_repeated");
                        }
                        crate::telemetry::challenge(Platform::ShortVideo.as_str());
                        match self.solve(ch).await {
                            Some(solved) => route.remember_cookies(&url, &solved),
                            None => return blocked("challenge_unsolved"),
                        }
                        continue;
                    }
                    return match extract::extract(&page.body, name) {
                        PageVerdict::Profile(p) => Lookup::Found(Box::new(Profile::ShortVideo(p))),
                        PageVerdict::NotFound => Lookup::NotFound,
                        PageVerdict::Blocked(reason) => blocked(reason),
                        PageVerdict::RegionLocked => Lookup::RegionLocked,
                        PageVerdict::Unreadable(why) => {
                            if let Some(capture) = &self.capture {
                                let verdict = format!("extraction_failed: {why}");
                                capture.save(
                                    Platform::ShortVideo.as_str(),
                                    name.as_str(),
                                    &page,
                                    &verdict,
                                );
                            }
                            Lookup::ExtractionFailed(why)
                        }
                    };
                }
                blocked("challenge_repeated")
            },
        )
        .await
    }

    /// Fetches the page, following same-host redirects, retrying one transport fault.
    async fn fetch_page(&self, start: Url, route: &RouteLease<'_>) -> Page {
        let headers = self.headers();
        let mut url = start;
        for _ in 0..=MAX_REDIRECTS {
            let step = self
                .retry
                .run(Platform::ShortVideo.as_str(), || {
                    self.attempt(url.clone(), headers.clone(), route)
                })
                .await;
            match step {
                Step::Follow(next) => url = next,
                Step::Page(page) => return page,
            }
        }
        Page::Answer(Lookup::Unavailable("too many redirects".into()))
    }

    async fn attempt(&self, url: Url, headers: HeaderMap, route: &RouteLease<'_>) -> Attempt<Step> {
        let response = match send(route, &self.gate, Platform::ShortVideo, url, headers).await {
            Sent::Refused(refused) => return Attempt::NotSent(Step::Page(Page::Answer(refused))),
            Sent::Failed(err) => return transport_failure(err),
            Sent::Answered(response) => response,
        };
        if response.headers.contains_key("bdturing-verify") {
            return Attempt::Done(Step::Page(Page::Answer(blocked("bdturing_verify"))));
        }
        if let Some(target) = response.redirect_target() {
            let answer = if target.path().starts_with("/login") {
                blocked("login_redirect")
            } else if same_origin(&self.base, &target) {
                return Attempt::Done(Step::Follow(target));
            } else {
                Lookup::Unavailable("redirect off the platform's host".into())
            };
            return Attempt::Done(Step::Page(Page::Answer(answer)));
        }
        let status = response.status;
        if status == StatusCode::TOO_MANY_REQUESTS {
            let lookup = Lookup::Blocked {
                reason: "http_429",
                retry_after: response.retry_after(),
            };
            return Attempt::Done(Step::Page(Page::Answer(lookup)));
        }
        if status.is_server_error() {
            return Attempt::Transient {
                reason: "http_5xx",
                last: Step::Page(Page::Answer(Lookup::Unavailable(format!("HTTP {status}")))),
            };
        }
        if status == StatusCode::FORBIDDEN {
            return Attempt::Done(Step::Page(Page::Answer(blocked("http_403"))));
        }
        // The platform answers 200 for missing users too; the page's state decides (and a
        // bare 404 without state is reported by the extractor as unreadable).
        if status.is_success() || status == StatusCode::NOT_FOUND {
            return Attempt::Done(Step::Page(Page::Body(response)));
        }
        Attempt::Done(Step::Page(Page::Answer(Lookup::Unavailable(format!(
            "HTTP {status}"
        )))))
    }

    fn headers(&self) -> HeaderMap {
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

    /// Solves a WAF challenge off the async workers, two at a time at most, within a deadline.
    async fn solve(&self, ch: challenge::WafChallenge) -> Option<Vec<(String, String)>> {
        let _slot = self.solvers.clone().acquire_owned().await.ok()?;
        let work =
            tokio::task::spawn_blocking(move || challenge::solve(&ch, CHALLENGE_MAX_ITERATIONS));
        tokio::time::timeout(CHALLENGE_TIMEOUT, work)
            .await
            .ok()?
            .ok()?
    }
}

/// Where one request of the page fetch ended.
enum Step {
    Follow(Url),
    Page(Page),
}

fn blocked(reason: &'static str) -> Lookup {
    Lookup::Blocked {
        reason,
        retry_after: None,
    }
}

impl From<Lookup> for Step {
    fn from(lookup: Lookup) -> Self {
        Step::Page(Page::Answer(lookup))
    }
}
