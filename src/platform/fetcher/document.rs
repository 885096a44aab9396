//! One document of a plan: its request with retries, same-host redirects and one hurdle
//! cleared; what each answer means, and what drift capture keeps.

use std::time::Duration;

use tracing::Instrument;
use url::Url;

use super::run::{Mode, Run, Step};
use super::send::{Sent, send};
use crate::blame::{Kind, Party};
use crate::platform::last_word::Block;
use crate::platform::site::{Alone, Document, NO_KNOWN_ID, Reading, Site, SiteReading};
use crate::platform::{Failure, Lookup, Profile};
use crate::upstream::egress::RouteLease;
use crate::upstream::retry::Attempt;
use crate::upstream::{Form, UpstreamError};

/// Same-host redirects followed for one document before giving up.
const MAX_REDIRECTS: usize = 3;

impl<S: Site> Run<'_, S> {
    /// One document: its request with retries, same-host redirects, one hurdle cleared; it
    /// ends the lookup ([`Step::Ended`]) or had nothing usable ([`Step::Missed`]).
    pub(super) async fn read_document(&self, doc: S::Doc) -> Step<S::Hurdle> {
        let site = &self.fetcher.site;
        let form = match self.form(doc).await {
            Ok(form) => form,
            Err(missed) => return missed,
        };
        let mut url = site.url(doc, self.name);
        let mut redirects = 0;
        let mut hurdle_cleared = false;
        loop {
            let reading = match self.request(doc, &url, form.as_ref()).await {
                Step::Read(reading) => reading,
                ended => return ended,
            };
            let miss = match reading {
                Reading::Follow(next) if redirects < MAX_REDIRECTS => {
                    redirects += 1;
                    url = next;
                    continue;
                }
                Reading::Follow(_) => {
                    return Step::Ended(Lookup::unavailable("too many redirects"));
                }
                Reading::Hurdle(_) if hurdle_cleared => Reading::blocked("challenge_repeated"),
                Reading::Hurdle(hurdle) => {
                    crate::telemetry::challenge(S::PLATFORM.as_str());
                    if !site.clear(hurdle, &url, self.route).await {
                        return Step::Missed(Reading::blocked("challenge_unsolved"));
                    }
                    hurdle_cleared = true;
                    continue;
                }
                // A document that withholds the answer said nothing usable: the plan goes on.
                Reading::Withheld(why) => Reading::Inconclusive(why),
                miss @ (Reading::Blocked { .. }
                | Reading::Inconclusive(_)
                | Reading::Unreadable(_)
                | Reading::ServerError(..)) => miss,
                ending => {
                    if matches!(
                        ending,
                        Reading::Found(_)
                            | Reading::NotFound
                            | Reading::Restricted
                            | Reading::RegionLocked
                    ) {
                        self.read(doc).await;
                    }
                    let ending = match ending {
                        Reading::Found(profile) => Reading::Found(self.complete(profile).await),
                        ending => ending,
                    };
                    return Step::Ended(self.answer(ending));
                }
            };
            return Step::Missed(miss);
        }
    }

    /// The form `doc` posts ([`Site::form`]), with the id learned for the name when the
    /// document is asked by id; a name no answer taught an id skips such a document.
    async fn form(&self, doc: S::Doc) -> Result<Option<Form>, Step<S::Hurdle>> {
        let site = &self.fetcher.site;
        if !doc.by_id() {
            return Ok(site.form(doc, self.name, None, self.route).await);
        }
        let known = match &self.fetcher.ids {
            Some(ids) => ids.recall(self.name.as_str()).await,
            None => None,
        };
        match known {
            Some(id) => Ok(site.form(doc, self.name, Some(&id), self.route).await),
            None => Err(Step::Missed(Reading::Inconclusive(NO_KNOWN_ID))),
        }
    }

    /// One request of `doc` at `url` (posting `form` when there is one), retried by the
    /// platform's policy on this route; an unreadable answer is kept by drift capture, and
    /// every answer's status and size noted.
    async fn request(&self, doc: S::Doc, url: &Url, form: Option<&Form>) -> Step<S::Hurdle> {
        let (fetcher, route) = (self.fetcher, self.route);
        let platform = S::PLATFORM;
        // Only the platform's refusals are waited out (blame decides, at each refusal).
        let policy = fetcher
            .retry
            .on(route, S::RETRIES_BLOCKS)
            .within(self.started.elapsed());
        policy
            .run(platform.as_str(), || {
                let attempt = attempt_span(doc, route, form.is_some());
                self.attempt(doc, url, form).instrument(attempt)
            })
            .await
    }

    /// One attempt of [`Run::request`], in its own span ([`attempt_span`]): what the platform
    /// answered and what it was read as.
    async fn attempt(
        &self,
        doc: S::Doc,
        url: &Url,
        form: Option<&Form>,
    ) -> Attempt<Step<S::Hurdle>> {
        let (fetcher, name, route) = (self.fetcher, self.name, self.route);
        let platform = S::PLATFORM;
        let span = tracing::Span::current();
        // Built for whichever route the request goes through (see `send`).
        let headers = |route: &RouteLease<'_>| fetcher.site.headers(doc, name, route);
        let judge = |kind, signal| self.judge(doc, kind, signal);
        let until = self.deadline();
        let sent = send(
            route,
            &fetcher.gate,
            self.mode,
            (url, form),
            headers,
            &judge,
            until,
        )
        .await;
        let response = match sent {
            Sent::Answered(response) => response,
            Sent::Refused(lookup) => {
                span.record("profile_lookup.reading", "not_sent");
                return Attempt::NotSent(Step::Ended(lookup));
            }
            Sent::Failed(err) => {
                span.record("profile_lookup.reading", "transport_failed");
                return transport_failure(err);
            }
        };
        self.seen.note(&response);
        span.record("http.response.status_code", response.status.as_u16());
        span.record("profile_lookup.response_bytes", response.body.len());
        fetcher.site.learn(doc, form, &response, route).await;
        let extract = tracing::info_span!(
            target: crate::telemetry::traces::TARGET,
            "extract",
            profile_lookup.source = doc.label(),
        );
        let reading = extract.in_scope(|| fetcher.site.read(doc, &response, name));
        span.record("profile_lookup.reading", reading.why_static());
        if let Reading::Blocked { reason, .. } = &reading {
            span.record("profile_lookup.block_reason", *reason);
        }
        if self.mode != Mode::Probe {
            fetcher
                .last_words
                .note(name, block_of(&reading, fetcher.block_wait));
        }
        if let (Some(verdict), Some(capture)) =
            (drift_verdict::<S>(doc, &reading), &fetcher.capture)
        {
            capture.save(platform.as_str(), name.as_str(), &response, &verdict);
        }
        match reading {
            // Waited out and asked again only when blame says it is the platform's.
            Reading::Blocked {
                reason,
                retry_after,
            } => {
                let party = self.judge(doc, Kind::Refused, reason);
                self.keep_party(party);
                // Too little evidence: today's per-lookup behaviour (the policy
                // backs off only on a route that cannot move).
                if matches!(party, Party::Platform | Party::Unknown) {
                    Attempt::Throttled {
                        reason,
                        retry_after,
                        last: Step::Read(reading),
                    }
                } else {
                    Attempt::Done(Step::Read(reading))
                }
            }
            Reading::ServerError(..) => Attempt::Transient {
                reason: "http_5xx",
                last: Step::Read(reading),
            },
            reading => Attempt::Done(Step::Read(reading)),
        }
    }
}

/// The span of one upstream attempt: the source, the route's position and kind, the browser
/// profile; never the URL (its path or query may hold the name) nor a proxy's credentials or
/// session.
fn attempt_span<D: Document>(doc: D, route: &RouteLease<'_>, posts: bool) -> tracing::Span {
    tracing::info_span!(
        target: crate::telemetry::traces::TARGET,
        "upstream_attempt",
        otel.kind = "client",
        http.request.method = if posts { "POST" } else { "GET" },
        profile_lookup.source = doc.label(),
        profile_lookup.route.position = route.label(),
        profile_lookup.route.kind = route.kind(),
        profile_lookup.browser_profile = route.profile().map_or("plain", |p| p.as_str()),
        http.response.status_code = tracing::field::Empty,
        profile_lookup.response_bytes = tracing::field::Empty,
        profile_lookup.reading = tracing::field::Empty,
        profile_lookup.block_reason = tracing::field::Empty,
    )
}

/// The block a reading is, with the wait a caller would be told (as [`answer`] tells it).
fn block_of<P, H>(reading: &Reading<P, H>, block_wait: Duration) -> Option<Block> {
    match reading {
        Reading::Blocked {
            reason,
            retry_after,
        } => Some(Block {
            reason,
            retry_after: (*retry_after).unwrap_or(block_wait),
        }),
        _ => None,
    }
}

/// The verdict drift capture keeps a document under, when it keeps it: every unreadable one
/// (an inconclusive answer the site calls unreadable on its own, [`Site::alone`], included),
/// and the blocks the site names ([`Site::CAPTURED_BLOCKS`]).
fn drift_verdict<S: Site>(doc: S::Doc, reading: &SiteReading<S>) -> Option<String> {
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
pub fn answer<H>(reading: Reading<Box<Profile>, H>, block_wait: Duration) -> Lookup {
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
        Reading::Withheld(reason) => Failure::Withheld {
            reason,
            retry_after: block_wait,
        },
        Reading::ServerError(why, cause) => Failure::Unavailable { why, cause },
        Reading::Unavailable(why) => Failure::unavailable(why),
        Reading::Unreadable(why) => Failure::ExtractionFailed(why),
        Reading::Inconclusive(why) => Failure::ExtractionFailed(why.to_owned()),
        Reading::Follow(_) => Failure::unavailable("a redirect was left unfollowed"),
        Reading::Hurdle(_) => Failure::unavailable("a challenge was left unsolved"),
    };
    Lookup::Failed(failure)
}

/// An upstream error as an attempt: transport faults may be retried once; what is left is
/// the document failing (a miss blame judges, the next source asked), never the lookup's end.
fn transport_failure<H>(err: UpstreamError) -> Attempt<Step<H>> {
    let failed = Step::Read(Reading::ServerError(err.to_string(), err.cause()));
    if err.is_transient() {
        Attempt::Transient {
            reason: "transport",
            last: failed,
        }
    } else {
        Attempt::Done(failed)
    }
}
