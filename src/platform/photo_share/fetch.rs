//! Fetching a photo-share profile: the profile JSON first, the profile page second.
//!
//! The platform throttles hard, so every blocking signal on either request is retried with
//! backoff ([`RetryPolicy`]) before the caller hears `upstream_blocked`. A `"user": null` answer
//! from the JSON endpoint is not trusted as absence (the platform also sends it when throttling):
//! only the profile page's own 404 confirms it.

use std::sync::Arc;
use std::sync::atomic::AtomicU32;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use url::Url;

use super::web_headers::WwwClaim;
use super::{extract, web_headers};
use crate::config::Settings;
use crate::fleet::Fleet;
use crate::platform::{
    Lookup, PageVerdict, PhotoShareProfile, Platform, Profile, Report, guarded, send,
    transport_failure,
};
use crate::upstream::capture::Capture;
use crate::upstream::politeness::Gate;
use crate::upstream::retry::{Attempt, RetryPolicy};
use crate::upstream::{Response, Upstream, same_origin, url_with_segments};
use crate::username::Username;

/// Looks up photo-share profiles; one per service.
#[derive(Debug)]
pub struct PhotoShareSource {
    upstream: Upstream,
    base: Url,
    gate: Gate,
    retry: RetryPolicy,
    claim: WwwClaim,
    capture: Option<Arc<Capture>>,
}

/// What one of the two documents said, once retries are done.
#[derive(Debug, Clone)]
enum Said {
    /// A final answer.
    Answer(Lookup),
    /// The JSON endpoint had nothing usable (user null, not JSON): ask the page.
    AskThePage(&'static str),
}

impl From<Lookup> for Said {
    fn from(lookup: Lookup) -> Self {
        Said::Answer(lookup)
    }
}

/// Which document a request is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Doc {
    Api,
    Page,
}

impl PhotoShareSource {
    /// Builds the source from the settings and the shared client; with a `fleet`, its
    /// outbound budget and breaker are the fleet's.
    pub fn new(settings: &Settings, upstream: Upstream, fleet: Option<Fleet>) -> Self {
        Self {
            upstream,
            base: settings.photo_share.base_url.clone(),
            gate: Gate::new(
                Platform::PhotoShare.as_str(),
                &settings.photo_share,
                &settings.breaker,
                fleet,
            ),
            retry: RetryPolicy::new(&settings.retry),
            claim: WwwClaim::default(),
            capture: Capture::new(&settings.upstream),
        }
    }

    /// Looks `name` up: the JSON endpoint, then the profile page when the JSON was inconclusive.
    pub async fn lookup(&self, name: &Username) -> Report {
        guarded(&self.gate, Platform::PhotoShare, async |sent| {
            let api = self.step(Doc::Api, name, sent).await;
            let why = match api {
                Said::Answer(lookup) => return lookup,
                Said::AskThePage(why) => why,
            };
            match self.step(Doc::Page, name, sent).await {
                Said::Answer(lookup) => lookup,
                // The JSON said "no user" and the page shows no profile and no 404: that is
                // what throttling looks like, so it is reported as a block, not as absence.
                Said::AskThePage(_) if why == "user_null" => Lookup::Blocked {
                    reason: "unconfirmed_absence",
                    retry_after: None,
                },
                Said::AskThePage(page_why) => Lookup::ExtractionFailed(format!(
                    "profile JSON: {why}; profile page: {page_why}"
                )),
            }
        })
        .await
    }

    async fn step(&self, doc: Doc, name: &Username, sent: &AtomicU32) -> Said {
        self.retry
            .run(Platform::PhotoShare.as_str(), || {
                self.attempt(doc, name, sent)
            })
            .await
    }

    async fn attempt(&self, doc: Doc, name: &Username, sent: &AtomicU32) -> Attempt<Said> {
        let url = self.url(doc, name);
        let response = match send(
            &self.upstream,
            &self.gate,
            Platform::PhotoShare,
            url,
            self.headers(doc, name),
            sent,
        )
        .await
        {
            Err(refused) => return Attempt::NotSent(Said::Answer(refused)),
            Ok(Err(err)) => return transport_failure(err),
            Ok(Ok(response)) => response,
        };
        self.claim.observe(&response);
        classify(doc, &response, name, self.capture.as_deref())
    }

    fn url(&self, doc: Doc, name: &Username) -> Url {
        match doc {
            Doc::Api => {
                let mut url =
                    url_with_segments(&self.base, &["api", "v1", "users", "web_profile_info", ""]);
                url.query_pairs_mut().append_pair("username", name.as_str());
                url
            }
            Doc::Page => url_with_segments(&self.base, &[name.as_str(), ""]),
        }
    }

    fn headers(&self, doc: Doc, name: &Username) -> HeaderMap {
        match doc {
            Doc::Api => web_headers::api(&self.url(Doc::Page, name), self.claim.current()),
            Doc::Page => web_headers::page(),
        }
    }
}

/// Reads one response: a block to retry, a fault to retry once, or an answer.
///
/// A profile page that cannot be read is kept by drift `capture`, when it is on.
fn classify(
    doc: Doc,
    response: &Response,
    name: &Username,
    capture: Option<&Capture>,
) -> Attempt<Said> {
    let retry_after = response.retry_after();
    let throttled = |reason| Attempt::Throttled {
        reason,
        retry_after,
        last: Said::Answer(Lookup::Blocked {
            reason,
            retry_after,
        }),
    };
    if let Some(target) = response.redirect_target() {
        // A redirect is never followed here. On the platform's own host, a login, challenge
        // or home-page target is its way of refusing us; anything else is not a profile.
        if same_origin(&response.url, &target) && extract::redirect_is_block(target.path()) {
            return throttled("login_redirect");
        }
        return Attempt::Done(Said::Answer(Lookup::Unavailable(
            "unexpected redirect".into(),
        )));
    }
    let status = response.status;
    if let Some(reason) = extract::block_signal(status.as_u16(), &response.body) {
        return throttled(reason);
    }
    if status.is_server_error() {
        return Attempt::Transient {
            reason: "http_5xx",
            last: Said::Answer(Lookup::Unavailable(format!("HTTP {status}"))),
        };
    }
    let verdict = match (doc, status) {
        (Doc::Api, StatusCode::NOT_FOUND) => return Attempt::Done(Said::Answer(Lookup::NotFound)),
        (Doc::Api, s) if s.is_success() => extract::from_api(&response.body, name),
        (Doc::Page, s) if s.is_success() || s == StatusCode::NOT_FOUND => {
            extract::from_page(&response.body, name)
        }
        (Doc::Api, _) => return Attempt::Done(Said::AskThePage("unexpected status")),
        (Doc::Page, _) => {
            return Attempt::Done(Said::Answer(Lookup::Unavailable(format!("HTTP {status}"))));
        }
    };
    match verdict {
        PageVerdict::Profile(profile) => Attempt::Done(Said::Answer(found(profile))),
        PageVerdict::NotFound if doc == Doc::Api => Attempt::Done(Said::AskThePage("user_null")),
        PageVerdict::NotFound => Attempt::Done(Said::Answer(Lookup::NotFound)),
        PageVerdict::Blocked(reason) => throttled(reason),
        PageVerdict::RegionLocked => Attempt::Done(Said::Answer(Lookup::RegionLocked)),
        PageVerdict::Unreadable(why) if doc == Doc::Api => {
            tracing::debug!(why = %why, "profile JSON unreadable; asking the page");
            Attempt::Done(Said::AskThePage("unreadable"))
        }
        PageVerdict::Unreadable(why) => {
            tracing::debug!(why = %why, "profile page unreadable");
            if let Some(capture) = capture {
                let verdict = format!("unreadable page: {why}");
                capture.save(
                    Platform::PhotoShare.as_str(),
                    name.as_str(),
                    response,
                    &verdict,
                );
            }
            Attempt::Done(Said::AskThePage("no profile in page"))
        }
    }
}

fn found(profile: PhotoShareProfile) -> Lookup {
    Lookup::Found(Box::new(Profile::PhotoShare(profile)))
}
