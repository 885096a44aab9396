//! The one fetch ladder: how any [`Site`] is looked up, written once for every platform.
//!
//! A lookup passes the platform's breaker, takes a route (a proxy in turn, or the direct
//! route), and asks the site's documents in order. Each request goes through the gate
//! (outbound budget, concurrency cap), is read by the site, and is retried by the platform's
//! [`RetryPolicy`]: a block is waited out when the site retries blocks and the route is
//! direct, a transport fault or 5xx gets one more try. Redirects on the platform's host are
//! followed (three at most), one hurdle per document is cleared, an unreadable document (and a
//! block the site names) is kept by drift capture. A lookup blocked on a proxy rests that proxy
//! and starts again on another; a site that hands blocks over asks its next source once no
//! other route is left. Every wait the caller is told is decided here, where it is known.
//!
//! Each lookup asks the configured plan in the order of the sources' [`Standing`]: a source the
//! canary found `changed` is asked after the others until it reads again. [`Source::probe`]
//! asks one document alone, through the same gate, route, retries and hurdles, for the canary.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use url::Url;

use super::last_word::{Block, LastWords};
use super::probe::{Finding, Probe, Seen};
use super::site::{Alone, Document, Miss, Reading, Site};
use super::standing::Standing;
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
    /// Which sources the canary moved to the end of the plan.
    standing: Standing,
}

/// How a run of the plan, or the whole lookup, ended.
struct Ending<D> {
    lookup: Lookup,
    /// The document the ending came from; `None` when none was asked.
    doc: Option<D>,
    /// Whether a block or region lock in `lookup` is the route's: the lookup may move to
    /// another proxy and the breaker counts it. Not so for an answer the platform withheld.
    on_route: bool,
}

impl<D> Ending<D> {
    /// An ending one document decided.
    fn decided(lookup: Lookup, doc: D) -> Self {
        Self {
            lookup,
            doc: Some(doc),
            on_route: true,
        }
    }
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
            standing: Standing::new(S::PLATFORM),
        })
    }

    /// The standing of the platform's sources: the canary demotes a source whose documents no
    /// longer read, and every lookup asks it last until it reads again.
    pub fn standing(&self) -> &Standing {
        &self.standing
    }

    /// The configured plan (`<section>.sources`), in its configured order.
    pub fn plan(&self) -> &[S::Doc] {
        &self.plan
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
                    let plan = self.standing.order(&self.plan);
                    let ending = self.through_routes(&plan, name, &route).await;
                    sent = route.sent();
                    source = ending.doc.map(Document::label);
                    let verdict = match &ending.lookup {
                        Lookup::Failed(Failure::Blocked { .. }) if ending.on_route => {
                            Verdict::Blocked
                        }
                        Lookup::Failed(Failure::Overloaded { .. }) => Verdict::Inconclusive,
                        _ => Verdict::Answered,
                    };
                    self.gate.record(ticket, verdict).await;
                    ending.lookup
                }
            },
        };
        let from = source.unwrap_or("-");
        match &lookup {
            Lookup::Failed(Failure::ExtractionFailed(why) | Failure::Unavailable(why)) => {
                tracing::warn!(platform, source = from, outcome = lookup.label(), why = %why, "lookup failed");
            }
            Lookup::Failed(Failure::Blocked { reason, .. }) => {
                tracing::info!(
                    platform,
                    source = from,
                    reason,
                    "platform refused the lookup"
                );
            }
            _ => {}
        }
        crate::telemetry::lookup_outcome(platform, lookup.label());
        if let (Lookup::Found(_) | Lookup::NotFound, Some(source)) = (&lookup, source) {
            crate::telemetry::source_answer(platform, source);
        }
        Report {
            lookup,
            upstream_requests: sent,
            source,
        }
    }

    /// Runs the plan on `route`, and again from the start on another proxy each time it ends
    /// blocked (or region-locked) on one; a lookup rests each proxy at most once, so this ends.
    async fn through_routes(
        &self,
        plan: &[S::Doc],
        name: &Username,
        route: &RouteLease<'_>,
    ) -> Ending<S::Doc> {
        loop {
            let ending = self.run_plan(plan, name, route).await;
            if let Some(wait) = route.exhausted() {
                return Ending {
                    lookup: proxies_resting(wait),
                    on_route: true,
                    ..ending
                };
            }
            let reason = match &ending.lookup {
                Lookup::Failed(Failure::Blocked { reason, .. }) if ending.on_route => *reason,
                // A region lock is tried on another proxy, then answered 451.
                Lookup::Failed(Failure::RegionLocked { .. }) => "region_locked",
                _ => return ending,
            };
            match route.rest_and_switch(reason).await {
                Switch::Moved => {
                    tracing::debug!(
                        reason,
                        proxy = route.label(),
                        "trying the lookup on another proxy"
                    );
                }
                Switch::AllResting(_) if reason == "region_locked" => return ending,
                Switch::AllResting(wait) => {
                    return Ending {
                        lookup: proxies_resting(wait),
                        ..ending
                    };
                }
                Switch::Direct => return ending,
            }
        }
    }

    /// Asks the plan's documents in order until one answers, then lets the site conclude.
    ///
    /// A blocked document ends the run blocked, so that the lookup moves to another route;
    /// when the site hands blocks over and the route is the last one left (or direct), the
    /// next document is asked on it instead, and the run ends blocked only if every document
    /// was (with the longest wait, and the reason and source of that block). An unreadable
    /// document ends the run at once unless the site hands those over too.
    async fn run_plan(
        &self,
        plan: &[S::Doc],
        name: &Username,
        route: &RouteLease<'_>,
    ) -> Ending<S::Doc> {
        let mut misses = Vec::with_capacity(plan.len());
        let seen = Seen::default();
        for (at, &doc) in plan.iter().enumerate() {
            let miss = match self.read_document(doc, name, route, &seen).await {
                // A source handed over to that cannot be reached leaves the block standing.
                Ok(Lookup::Failed(Failure::Unavailable(why))) if !misses.is_empty() => {
                    if let Some(block) = self.longest_block(&misses) {
                        return block;
                    }
                    return Ending::decided(Lookup::unavailable(why), doc);
                }
                Ok(lookup) => return Ending::decided(lookup, doc),
                Err(miss) => miss,
            };
            match &miss {
                Miss::Blocked { reason, .. } => {
                    self.note_block(doc, reason, route);
                    let next = at + 1 < plan.len();
                    let hands_over = S::FALLS_BACK_ON_BLOCK && next && !route.can_move();
                    misses.push((doc, miss));
                    if !hands_over {
                        break;
                    }
                }
                Miss::Unreadable(why) if !S::FALLS_BACK_ON_UNREADABLE => {
                    let lookup = self.answer(Reading::Unreadable(why.clone()));
                    return Ending::decided(lookup, doc);
                }
                _ => misses.push((doc, miss)),
            }
        }
        if let Some(ending) = self.longest_block(&misses) {
            return ending;
        }
        let doc = misses.last().map(|(doc, _)| *doc);
        match self.site.conclude(&misses) {
            Reading::Withheld(reason) => Ending {
                lookup: self.answer(Reading::Withheld(reason)),
                doc,
                on_route: false,
            },
            reading => Ending {
                lookup: self.answer(reading),
                doc,
                on_route: true,
            },
        }
    }

    /// The ending of a run some documents were blocked in: the block with the longest wait
    /// (the earlier of equals), so the caller is not told to come back before every source
    /// may answer; `None` when none was blocked.
    fn longest_block(&self, misses: &[(S::Doc, Miss)]) -> Option<Ending<S::Doc>> {
        let (doc, reason, wait) = misses
            .iter()
            .filter_map(|(doc, miss)| match miss {
                Miss::Blocked {
                    reason,
                    retry_after,
                } => Some((*doc, *reason, retry_after.unwrap_or(self.block_wait))),
                _ => None,
            })
            .reduce(|longest, next| if next.2 > longest.2 { next } else { longest })?;
        let lookup = Lookup::Failed(Failure::Blocked {
            reason,
            retry_after: wait,
        });
        Some(Ending::decided(lookup, doc))
    }

    /// Counts and logs a document the platform refused, by source and reason.
    fn note_block(&self, doc: S::Doc, reason: &'static str, route: &RouteLease<'_>) {
        let (platform, source) = (S::PLATFORM.as_str(), doc.label());
        crate::telemetry::upstream_block(platform, source, reason);
        tracing::info!(
            platform,
            source,
            reason,
            proxy = route.label(),
            "the platform refused a document"
        );
    }

    /// One document: its request with retries, same-host redirects, one hurdle cleared.
    /// `Err` when it had nothing usable and the next document should be asked.
    async fn read_document(
        &self,
        doc: S::Doc,
        name: &Username,
        route: &RouteLease<'_>,
        seen: &Seen,
    ) -> Result<Lookup, Miss> {
        let mut url = self.site.url(doc, name);
        let mut redirects = 0;
        let mut hurdle_cleared = false;
        loop {
            let reading = match self.request(doc, &url, name, route, seen).await {
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
                    return Err(Miss::blocked("challenge_repeated"));
                }
                Reading::Hurdle(hurdle) => {
                    crate::telemetry::challenge(S::PLATFORM.as_str());
                    if !self.site.clear(hurdle, &url, route).await {
                        return Err(Miss::blocked("challenge_unsolved"));
                    }
                    hurdle_cleared = true;
                }
                Reading::Blocked {
                    reason,
                    retry_after,
                } => {
                    return Err(Miss::Blocked {
                        reason,
                        retry_after,
                    });
                }
                // A document that withholds the answer said nothing usable: the plan goes on.
                Reading::Inconclusive(why) | Reading::Withheld(why) => {
                    return Err(Miss::Inconclusive(why));
                }
                Reading::Unreadable(why) => return Err(Miss::Unreadable(why)),
                ending => return Ok(self.answer(ending)),
            }
        }
    }

    /// One request of `doc` at `url`, retried by the platform's policy on this route; an
    /// unreadable answer is kept by drift capture, and every answer's status and size by
    /// `seen`.
    async fn request(
        &self,
        doc: S::Doc,
        url: &Url,
        name: &Username,
        route: &RouteLease<'_>,
        seen: &Seen,
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
                seen.note(&response);
                let reading = self.site.read(doc, &response, name);
                self.last_words.note(name, self.block_of(&reading));
                if let (Some(verdict), Some(capture)) =
                    (drift_verdict::<S>(doc, &reading), &self.capture)
                {
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

/// The canary's probe: one document alone.
impl<S: Site> Source<S> {
    /// The plan's document called `source`, if the plan asks it.
    pub fn document(&self, source: &str) -> Option<S::Doc> {
        self.plan.iter().copied().find(|d| d.label() == source)
    }

    /// Asks document `doc` alone about `name`, as a lookup would ask it: behind the breaker,
    /// on one route (another proxy each time it is blocked on one, resting the one that
    /// blocked), through the gate (each request counts against the outbound budget, the
    /// fleet's too), with the platform's retries, redirects and hurdles and drift capture. The
    /// breaker and the proxies' rests learn from it as from a lookup: a block the canary meets
    /// is as real as a caller's. It touches no cache, flight or quota, and is not counted as a
    /// lookup in the metrics.
    pub async fn probe(&self, doc: S::Doc, name: &Username) -> Probe {
        let started = tokio::time::Instant::now();
        let seen = Seen::default();
        let mut sent = 0;
        let finding = match self.gate.admit().await {
            Err(refusal) => Finding::from_lookup(refused(refusal)),
            Ok(ticket) => match self.egress.lease().await {
                Err(wait) => {
                    self.gate.record(ticket, Verdict::Inconclusive).await;
                    Finding::from_lookup(proxies_resting(wait))
                }
                Ok(route) => {
                    let finding = self.probe_on_routes(doc, name, &route, &seen).await;
                    sent = route.sent();
                    let verdict = match finding {
                        Finding::Blocked(_) => Verdict::Blocked,
                        Finding::NotSent => Verdict::Inconclusive,
                        _ => Verdict::Answered,
                    };
                    self.gate.record(ticket, verdict).await;
                    finding
                }
            },
        };
        Probe {
            platform: S::PLATFORM,
            source: doc.label(),
            finding,
            status: seen.status(),
            bytes: seen.bytes(),
            elapsed: started.elapsed(),
            upstream_requests: sent,
        }
    }

    /// `doc` on `route`, and again on another proxy each time it is blocked (or region-locked)
    /// on one, as [`Source::through_routes`] runs a plan.
    async fn probe_on_routes(
        &self,
        doc: S::Doc,
        name: &Username,
        route: &RouteLease<'_>,
        seen: &Seen,
    ) -> Finding {
        loop {
            let result = self.read_document(doc, name, route, seen).await;
            if let Some(wait) = route.exhausted() {
                return Finding::from_lookup(proxies_resting(wait));
            }
            let reason = match &result {
                Err(Miss::Blocked { reason, .. }) => {
                    self.note_block(doc, reason, route);
                    *reason
                }
                Ok(Lookup::Failed(Failure::RegionLocked { .. })) => "region_locked",
                _ => return probe_finding::<S>(doc, result),
            };
            match route.rest_and_switch(reason).await {
                Switch::Moved => continue,
                Switch::AllResting(wait) if reason != "region_locked" => {
                    return Finding::from_lookup(proxies_resting(wait));
                }
                Switch::AllResting(_) | Switch::Direct => return probe_finding::<S>(doc, result),
            }
        }
    }
}

/// What one document's ending says when it was asked alone.
fn probe_finding<S: Site>(doc: S::Doc, result: Result<Lookup, Miss>) -> Finding {
    match result {
        Ok(lookup) => Finding::from_lookup(lookup),
        Err(miss) => Finding::from_miss(miss, |why| S::alone(doc, why)),
    }
}

/// The verdict drift capture keeps a document under, when it keeps it: every unreadable one
/// (an inconclusive answer the site calls unreadable on its own, [`Site::alone`], included),
/// and the blocks the site names ([`Site::CAPTURED_BLOCKS`]).
fn drift_verdict<S: Site>(doc: S::Doc, reading: &Reading<S::Hurdle>) -> Option<String> {
    match reading {
        Reading::Unreadable(why) => Some(format!("unreadable: {why}")),
        Reading::Inconclusive(why) if S::alone(doc, why) == Alone::Unreadable => {
            Some(format!("unreadable: {why}"))
        }
        Reading::Blocked { reason, .. } if S::CAPTURED_BLOCKS.contains(reason) => {
            Some(format!("blocked: {reason}"))
        }
        _ => None,
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
        Reading::Restricted => Failure::Restricted,
        Reading::Blocked {
            reason,
            retry_after,
        } => Failure::Blocked {
            reason,
            retry_after: retry_after.unwrap_or(block_wait),
        },
        Reading::Withheld(reason) => Failure::Blocked {
            reason,
            retry_after: block_wait,
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
