//! The one fetch ladder: how any [`Site`] is looked up, written once for every platform.
//!
//! A lookup passes the platform's breaker, takes a route (a proxy in turn, or the direct
//! route), and asks the site's documents in order. Each request goes through the gate
//! (outbound budget, concurrency cap), is read by the site, and is retried by the platform's
//! [`RetryPolicy`]: a block is waited out when the site retries blocks and the route is
//! direct, a transport fault or 5xx gets one more try. Redirects on the platform's host are
//! followed (three at most), one hurdle per document is cleared, an unreadable document is
//! kept by drift capture. A lookup blocked on a proxy rests that proxy and starts again on
//! another. Every wait the caller is told is decided here, where it is known.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use url::Url;

use super::last_word::{Block, LastWords};
use super::site::{Document, Miss, Reading, Site};
use super::{Failure, Lookup, Platform, Report};
use crate::config::{Settings, ms};
use crate::fleet::Fleet;
use crate::upstream::capture::Capture;
use crate::upstream::egress::{Egress, RouteLease, Switch, is_proxy_failure};
use crate::upstream::gate::{Gate, Refusal, Verdict};
use crate::upstream::retry::{Attempt, RetryPolicy};
use crate::upstream::roots::ClientBuildError;
use crate::upstream::{Response, UpstreamError};
use crate::username::Username;

/// Same-host redirects followed for one document before giving up.
const MAX_REDIRECTS: usize = 3;
/// The longest a caller is told to wait for a block whose platform named no wait.
const MAX_DEFAULT_WAIT: Duration = Duration::from_secs(60);

/// One platform's source: its site and everything the ladder needs around it.
#[derive(Debug)]
pub struct Source<S: Site> {
    site: S,
    /// The documents a lookup asks, in order (`<section>.sources`).
    plan: Vec<S::Doc>,
    egress: Egress,
    gate: Gate,
    retry: RetryPolicy,
    capture: Option<Arc<Capture>>,
    block_wait: Duration,
    /// The platform's last answer to each lookup in flight (for callers whose deadline passes).
    last_words: LastWords,
}

/// Where one request of a document ended, once its retries are done.
enum Outcome<H> {
    /// The platform answered and the site read it.
    Read(Reading<H>),
    /// No answer to read: the gate refused the request, every proxy rests, or the transport
    /// failed. The lookup's answer is this.
    Ended(Lookup),
}

impl<S: Site> Source<S> {
    /// Builds the source of `S` from the settings: its routes out (proxies or direct), gate,
    /// retry policy and drift capture; with a `fleet`, budget, breaker and rests are shared.
    pub fn new(settings: &Settings, fleet: Option<&Fleet>) -> Result<Self, ClientBuildError> {
        let config = settings.platform(S::PLATFORM);
        let scope = S::PLATFORM.as_str();
        // Validated names (`Settings::validate`); an unknown one could only come from settings
        // built in code, and is left out rather than guessed.
        let plan = config
            .sources
            .iter()
            .filter_map(|name| S::DOCUMENTS.iter().copied().find(|d| d.label() == name))
            .collect();
        Ok(Self {
            site: S::new(settings),
            plan,
            egress: Egress::new(scope, settings, config, fleet.cloned())?,
            gate: Gate::new(scope, config, &settings.breaker, fleet.cloned()),
            retry: RetryPolicy::new(&settings.retry),
            capture: Capture::new(&settings.upstream),
            // A block without the platform's `Retry-After`: the breaker's cooldown (at most a
            // minute) or the longest backoff, whichever is longer.
            block_wait: ms(settings.retry.max_delay_ms)
                .max(Duration::from_secs(settings.breaker.cooldown_seconds).min(MAX_DEFAULT_WAIT)),
            last_words: LastWords::default(),
        })
    }

    /// What the platform last said to each lookup still running: a caller whose deadline
    /// passes first is told the block it is waiting out, if it is one (`crate::http::guard`).
    pub fn last_words(&self) -> &LastWords {
        &self.last_words
    }

    /// Looks `name` up: behind the platform's breaker, on one route (another proxy each time
    /// the lookup ends blocked on one), reported to the metrics and the log.
    pub async fn lookup(&self, name: &Username) -> Report {
        let platform = S::PLATFORM.as_str();
        let mut sent = 0;
        let mut source = None;
        let lookup = match self.gate.admit().await {
            Err(refusal) => refused(refusal),
            Ok(ticket) => match self.egress.lease().await {
                // Nothing was sent, so the breaker learns nothing.
                Err(wait) => {
                    self.gate.record(ticket, Verdict::Inconclusive).await;
                    proxies_resting(wait)
                }
                Ok(route) => {
                    let (lookup, decided_by) = self.through_routes(name, &route).await;
                    sent = route.sent();
                    source = decided_by.map(Document::label);
                    let verdict = match &lookup {
                        Lookup::Failed(Failure::Blocked { .. }) => Verdict::Blocked,
                        Lookup::Failed(Failure::Overloaded { .. }) => Verdict::Inconclusive,
                        _ => Verdict::Answered,
                    };
                    self.gate.record(ticket, verdict).await;
                    lookup
                }
            },
        };
        match &lookup {
            Lookup::Failed(Failure::ExtractionFailed(why) | Failure::Unavailable(why)) => {
                tracing::warn!(platform, outcome = lookup.label(), why = %why, "lookup failed");
            }
            Lookup::Failed(Failure::Blocked { reason, .. }) => {
                tracing::info!(platform, reason, "platform refused the lookup");
            }
            _ => {}
        }
        crate::telemetry::lookup_outcome(platform, lookup.label());
        Report {
            lookup,
            upstream_requests: sent,
            source,
        }
    }

    /// Runs the plan on `route`, and again from the start on another proxy each time it ends
    /// blocked (or region-locked) on one; a lookup rests each proxy at most once, so this ends.
    /// Also says which document the ending came from.
    async fn through_routes(
        &self,
        name: &Username,
        route: &RouteLease<'_>,
    ) -> (Lookup, Option<S::Doc>) {
        loop {
            let (lookup, doc) = self.run_plan(name, route).await;
            if let Some(wait) = route.exhausted() {
                return (proxies_resting(wait), doc);
            }
            let reason = match &lookup {
                Lookup::Failed(Failure::Blocked { reason, .. }) => *reason,
                // A region lock is tried on another proxy, then answered 451.
                Lookup::Failed(Failure::RegionLocked { .. }) => "region_locked",
                _ => return (lookup, doc),
            };
            match route.rest_and_switch(reason).await {
                Switch::Moved => {
                    tracing::debug!(
                        reason,
                        proxy = route.label(),
                        "trying the lookup on another proxy"
                    );
                }
                Switch::AllResting(_) if reason == "region_locked" => return (lookup, doc),
                Switch::AllResting(wait) => return (proxies_resting(wait), doc),
                Switch::Direct => return (lookup, doc),
            }
        }
    }

    /// Asks the plan's documents in order until one answers, then lets the site conclude;
    /// with the document that answered (the last one asked, when none did).
    async fn run_plan(&self, name: &Username, route: &RouteLease<'_>) -> (Lookup, Option<S::Doc>) {
        let mut misses = Vec::with_capacity(self.plan.len());
        for &doc in &self.plan {
            match self.read_document(doc, name, route).await {
                Ok(lookup) => return (lookup, Some(doc)),
                Err(miss) => misses.push((doc, miss)),
            }
        }
        let last = misses.last().map(|(doc, _)| *doc);
        let ending = self.site.conclude(&misses);
        (self.answer(ending), last)
    }

    /// One document: its request with retries, same-host redirects, one hurdle cleared.
    /// `Err` when it had nothing usable and the next document should be asked.
    async fn read_document(
        &self,
        doc: S::Doc,
        name: &Username,
        route: &RouteLease<'_>,
    ) -> Result<Lookup, Miss> {
        let mut url = self.site.url(doc, name);
        let mut redirects = 0;
        let mut hurdle_cleared = false;
        loop {
            let reading = match self.request(doc, &url, name, route).await {
                Outcome::Read(reading) => reading,
                Outcome::Ended(lookup) => return Ok(lookup),
            };
            match reading {
                Reading::Follow(next) if redirects < MAX_REDIRECTS => {
                    redirects += 1;
                    url = next;
                }
                Reading::Follow(_) => return Ok(Lookup::unavailable("too many redirects")),
                Reading::Hurdle(_) if hurdle_cleared => {
                    return Ok(self.answer(Reading::blocked("challenge_repeated")));
                }
                Reading::Hurdle(hurdle) => {
                    crate::telemetry::challenge(S::PLATFORM.as_str());
                    if !self.site.clear(hurdle, &url, route).await {
                        return Ok(self.answer(Reading::blocked("challenge_unsolved")));
                    }
                    hurdle_cleared = true;
                }
                Reading::Inconclusive(why) => return Err(Miss::Inconclusive(why)),
                Reading::Unreadable(why) => return Err(Miss::Unreadable(why)),
                ending => return Ok(self.answer(ending)),
            }
        }
    }

    /// One request of `doc` at `url`, retried by the platform's policy on this route; an
    /// unreadable answer is kept by drift capture.
    async fn request(
        &self,
        doc: S::Doc,
        url: &Url,
        name: &Username,
        route: &RouteLease<'_>,
    ) -> Outcome<S::Hurdle> {
        let platform = S::PLATFORM;
        let policy = self.retry.on(route, S::RETRIES_BLOCKS);
        policy
            .run(platform.as_str(), || async {
                // Built for whichever route the request goes through (see `send`).
                let headers = |route: &RouteLease<'_>| self.site.headers(doc, name, route);
                let response = match send(route, &self.gate, platform, url.clone(), headers).await {
                    Sent::Answered(response) => response,
                    Sent::Refused(lookup) => return Attempt::NotSent(Outcome::Ended(lookup)),
                    Sent::Failed(err) => return transport_failure(err),
                };
                let reading = self.site.read(doc, &response, name);
                self.last_words.note(name, self.block_of(&reading));
                if let (Reading::Unreadable(why), Some(capture)) = (&reading, &self.capture) {
                    let verdict = format!("unreadable: {why}");
                    capture.save(platform.as_str(), name.as_str(), &response, &verdict);
                }
                match reading {
                    Reading::Blocked {
                        reason,
                        retry_after,
                    } => Attempt::Throttled {
                        reason,
                        retry_after,
                        last: Outcome::Read(reading),
                    },
                    Reading::ServerError(_) => Attempt::Transient {
                        reason: "http_5xx",
                        last: Outcome::Read(reading),
                    },
                    reading => Attempt::Done(Outcome::Read(reading)),
                }
            })
            .await
    }

    /// The block a reading is, with the wait a caller would be told (as [`answer`] tells it).
    fn block_of(&self, reading: &Reading<S::Hurdle>) -> Option<Block> {
        match reading {
            Reading::Blocked {
                reason,
                retry_after,
            } => Some(Block {
                reason,
                retry_after: (*retry_after).unwrap_or(self.block_wait),
            }),
            _ => None,
        }
    }

    /// The lookup a final reading answers, with the caller's wait filled in.
    fn answer(&self, reading: Reading<S::Hurdle>) -> Lookup {
        answer(reading, self.block_wait)
    }
}

/// The lookup a final reading answers; `block_wait` is what a caller is told to wait after a
/// block whose platform named no wait, or a region lock. Every reading maps: one that is not
/// final (a redirect, a hurdle, a miss) is answered as what it left the lookup with.
pub fn answer<H>(reading: Reading<H>, block_wait: Duration) -> Lookup {
    let failure = match reading {
        Reading::Found(profile) => return Lookup::Found(profile),
        Reading::NotFound => return Lookup::NotFound,
        Reading::RegionLocked => Failure::RegionLocked {
            retry_after: block_wait,
        },
        Reading::Blocked {
            reason,
            retry_after,
        } => Failure::Blocked {
            reason,
            retry_after: retry_after.unwrap_or(block_wait),
        },
        Reading::ServerError(why) | Reading::Unavailable(why) => Failure::Unavailable(why),
        Reading::Unreadable(why) => Failure::ExtractionFailed(why),
        Reading::Inconclusive(why) => Failure::ExtractionFailed(why.to_owned()),
        Reading::Follow(_) => Failure::Unavailable("a redirect was left unfollowed".into()),
        Reading::Hurdle(_) => Failure::Unavailable("a challenge was left unsolved".into()),
    };
    Lookup::Failed(failure)
}

/// An upstream error as an attempt: transport faults may be retried once, the rest are final.
fn transport_failure<H>(err: UpstreamError) -> Attempt<Outcome<H>> {
    let lookup = Lookup::unavailable(err.to_string());
    if err.is_transient() {
        Attempt::Transient {
            reason: "transport",
            last: Outcome::Ended(lookup),
        }
    } else {
        Attempt::Done(Outcome::Ended(lookup))
    }
}

/// What a lookup the gate refused answers: an open breaker is the platform's refusal
/// (`upstream_blocked`), a spent outbound budget is ours (`overloaded`).
fn refused(refusal: Refusal) -> Lookup {
    Lookup::Failed(match refusal {
        Refusal::BreakerOpen(wait) => Failure::Blocked {
            reason: "breaker_open",
            retry_after: wait,
        },
        Refusal::Busy(retry_after) => Failure::Overloaded { retry_after },
    })
}

/// The answer when every proxy of a platform rests: 429 until the first is back.
fn proxies_resting(wait: Duration) -> Lookup {
    Lookup::Failed(Failure::Blocked {
        reason: "proxies_resting",
        retry_after: wait,
    })
}

/// What became of one request [`send`] was asked to make.
enum Sent {
    /// The platform answered (any status).
    Answered(Response),
    /// The request went out and no readable answer came back.
    Failed(UpstreamError),
    /// The request was not sent: the gate refused it, or every proxy rests. The lookup's
    /// answer is this.
    Refused(Lookup),
}

/// Sends one request through the platform's gate and the lookup's route, counting it.
///
/// On a proxy route, a failure of the proxy itself (see [`is_proxy_failure`], or a 407 from an
/// HTTP proxy) rests that proxy and the request goes again at once through another one; when
/// none is left, the answer is 429 `upstream_blocked` until the first proxy is back.
///
/// `headers` builds the request's headers for the route it is about to go through, on every
/// attempt: what a site derives from a route's session (the `X-CSRFToken` echoing that route's
/// cookie) must never travel through the next route after a move.
async fn send(
    route: &RouteLease<'_>,
    gate: &Gate,
    platform: Platform,
    url: Url,
    headers: impl Fn(&RouteLease<'_>) -> HeaderMap,
) -> Sent {
    loop {
        if let Some(wait) = route.exhausted() {
            return Sent::Refused(proxies_resting(wait));
        }
        let _pass = match gate.pass().await {
            Ok(pass) => pass,
            Err(refusal) => return Sent::Refused(refused(refusal)),
        };
        crate::telemetry::upstream_request(platform.as_str());
        let result = route.get(url.clone(), headers(route)).await;
        let failure = match &result {
            Err(err) if is_proxy_failure(err) => "proxy_failed",
            Ok(r) if r.status == StatusCode::PROXY_AUTHENTICATION_REQUIRED => "proxy_auth",
            _ => return sent(result),
        };
        if !route.is_proxied() {
            return sent(result);
        }
        match route.rest_and_switch(failure).await {
            Switch::Moved => continue,
            Switch::AllResting(wait) => return Sent::Refused(proxies_resting(wait)),
            Switch::Direct => return sent(result),
        }
    }
}

fn sent(result: Result<Response, UpstreamError>) -> Sent {
    match result {
        Ok(response) => Sent::Answered(response),
        Err(err) => Sent::Failed(err),
    }
}
