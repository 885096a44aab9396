//! One fetch on its route lease: the plan's documents in order until one answers, and the
//! plan again from the start on another route when blame says the route (or, on a platform
//! that throttles everything, the platform) is at fault.
//!
//! Every document that does not read is judged by blame ([`crate::blame`]), and the plan acts
//! on the party it names, deciding nothing itself: the **name**'s ends the lookup at once (no
//! rest, no evidence for the source, no breaker count); the **route**'s (or the proxy's) rests
//! the route and runs the plan again on another; the **source**'s demotes it and asks the next
//! source on the same route at once; the **platform**'s moves to another route resting this
//! one and those the lookup left unrested (after the backoff the document's retries already
//! waited on a route that cannot move);
//! **unknown** moves to another route without resting this one (it rests once the same source
//! reads the name elsewhere), and, where no route is left, asks the next source. A document
//! that failed (5xx, no answer) or could not be read falls through to the next source exactly
//! as a refused one does.

use tracing::Instrument;

use super::Fetched;
use super::run::{Mode, Run, Step};
use crate::blame::{Kind, Party};
use crate::platform::site::{Alone, Document, NO_KNOWN_ID, Reading, Site, SiteReading};
use crate::platform::{Failure, Lookup};
use crate::upstream::egress::Switch;

/// How a run of the plan left its route, when it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Leave {
    /// Rest the route (its blame, or the platform's) for `reason`, and run the plan again.
    Rest(&'static str),
    /// Leave it unrested (too little evidence): it rests if `source` reads the name elsewhere.
    Unrested(&'static str),
}

/// How a run of the plan ended: the lookup's answer, the document it came from (`None` when
/// none was asked), who its last refusal was blamed on, and whether it leaves the route.
struct Ended<D> {
    lookup: Lookup,
    doc: Option<D>,
    party: Option<Party>,
    leave: Option<Leave>,
}

impl<D> Ended<D> {
    fn by(lookup: Lookup, doc: D) -> Self {
        Self {
            lookup,
            doc: Some(doc),
            party: None,
            leave: None,
        }
    }
}

impl<'a, S: Site> Run<'a, S> {
    /// Runs `plan` on the lease, and again from the start on another route each time a run
    /// leaves its route; a fetch leaves each route at most once, so this ends.
    pub(super) async fn through_routes(&self, plan: &[S::Doc]) -> Fetched {
        let ended = self.on_routes(plan).await;
        Fetched {
            lookup: ended.lookup,
            upstream_requests: self.route.sent(),
            source: ended.doc.map(Document::label),
            status: self.seen.status(),
            bytes: self.seen.bytes(),
            blame: ended.party,
        }
    }

    async fn on_routes(&self, plan: &[S::Doc]) -> Ended<S::Doc> {
        let route = self.route;
        loop {
            let ended = self.run_plan(plan).await;
            // Every route rests after blocks: 429 until the first is back (a run that ended
            // otherwise, every proxy failing as a proxy, keeps its own answer).
            if let Some(wait) = route.exhausted()
                && matches!(ended.lookup, Lookup::Failed(Failure::Blocked { .. }))
            {
                return Ended {
                    lookup: super::send::proxies_resting(wait),
                    ..ended
                };
            }
            // A region lock is tried on another proxy, then answered 451.
            let leave = match (&ended.lookup, ended.leave) {
                (Lookup::Failed(Failure::RegionLocked { .. }), _) => Leave::Rest("region_locked"),
                (_, Some(leave)) => leave,
                (_, None) => return ended,
            };
            if ended.party == Some(Party::Platform) {
                route.rest_every_suspect().await;
            }
            let switch = match leave {
                Leave::Rest(reason) => route.rest_and_switch(reason).await,
                Leave::Unrested(source) => route.leave_unrested(source).await,
            };
            match switch {
                Switch::Moved => {
                    tracing::debug!(
                        ?leave,
                        proxy = route.label(),
                        "the lookup moves to another route"
                    );
                }
                // Every other route rests: the first is back after `wait`.
                Switch::AllResting(wait) if matches!(leave, Leave::Rest(r) if r != "region_locked") =>
                {
                    return Ended {
                        lookup: super::send::proxies_resting(wait),
                        ..ended
                    };
                }
                // Nowhere else to go (or a region lock everywhere): the run's own answer.
                Switch::AllResting(_) | Switch::Direct => return ended,
            }
        }
    }

    /// Asks the plan's documents in order until one answers, acting on blame's verdict for
    /// each that did not (see the module docs), then lets the site conclude (a plan of one
    /// document asked alone concludes by [`Site::alone`]). A run in which every document was
    /// blocked ends blocked (with the longest wait, and the reason and source of that block).
    async fn run_plan(&self, plan: &[S::Doc]) -> Ended<S::Doc> {
        let mut misses = Vec::with_capacity(plan.len());
        let mut last_party = None;
        for (at, &doc) in plan.iter().enumerate() {
            let last = at + 1 == plan.len();
            // Why it is asked: first in the plan, or after what the one before it came to.
            let asked = tracing::info_span!(
                target: crate::telemetry::traces::TARGET,
                "source",
                profile_lookup.platform = S::PLATFORM.as_str(),
                profile_lookup.source = doc.label(),
                profile_lookup.source.why = misses
                    .last()
                    .map_or("first", |(_, miss): &(S::Doc, SiteReading<S>)| miss.why_static()),
                profile_lookup.source.outcome = tracing::field::Empty,
            );
            let step = self.read_document(doc).instrument(asked.clone()).await;
            asked.record(
                "profile_lookup.source.outcome",
                match &step {
                    Step::Ended(lookup) => lookup.label(),
                    Step::Read(reading) | Step::Missed(reading) => reading.why_static(),
                },
            );
            let miss = match step {
                // A source handed over to that cannot be reached, or that our budget or the
                // deadline kept us from asking, leaves the block standing.
                Step::Ended(
                    lookup @ Lookup::Failed(
                        Failure::Unavailable { .. } | Failure::Overloaded { .. },
                    ),
                ) if !misses.is_empty() => {
                    let mut ended = self
                        .longest_block(&misses)
                        .unwrap_or_else(|| Ended::by(lookup, doc));
                    ended.party = last_party;
                    return ended;
                }
                Step::Ended(lookup) => {
                    if matches!(lookup, Lookup::NotFound) {
                        for confirmed in confirmed_by_absence::<S>(&misses) {
                            self.read(confirmed).await;
                        }
                    }
                    return Ended::by(lookup, doc);
                }
                Step::Read(reading) => return Ended::by(self.answer(reading), doc),
                Step::Missed(miss) => miss,
            };
            let party = match &miss {
                Reading::Blocked { reason, .. } => {
                    self.note_block(doc, reason);
                    self.take_party().unwrap_or(Party::Unknown)
                }
                Reading::ServerError(..) => self.judge(doc, Kind::Failed, "failed"),
                Reading::Unreadable(_) => self.judge(doc, Kind::Unreadable, "unreadable"),
                _ => {
                    misses.push((doc, miss));
                    continue;
                }
            };
            last_party = Some(party);
            let blocked = matches!(miss, Reading::Blocked { .. });
            let can_move = self.route.can_move();
            let leave = match party {
                Party::Name => return self.for_the_name(doc, &miss),
                Party::Source => {
                    self.fetcher.standing.demote(doc.label());
                    None
                }
                Party::Route | Party::Proxy if can_move => Some(Leave::Rest(miss.why_static())),
                // The platform's: routes rest, this one and those left unrested before (on a
                // route that cannot move, once no other source is left to ask on it).
                Party::Platform if blocked && (can_move || last) => {
                    Some(Leave::Rest(miss.why_static()))
                }
                Party::Unknown if blocked && can_move => Some(Leave::Unrested(doc.label())),
                _ => None,
            };
            misses.push((doc, miss));
            if let Some(leave) = leave {
                let mut ended = self
                    .longest_block(&misses)
                    .unwrap_or_else(|| self.concluded(&mut misses));
                ended.party = Some(party);
                ended.leave = Some(leave);
                return ended;
            }
        }
        let mut ended = match self.longest_block(&misses) {
            Some(ended) => ended,
            None => self.concluded(&mut misses),
        };
        ended.party = last_party;
        ended
    }

    /// What a run whose documents all missed without a block comes to: every one failed →
    /// the platform is unavailable; else what the site concludes (a probe's one document: what
    /// it is alone).
    fn concluded(&self, misses: &mut Vec<(S::Doc, SiteReading<S>)>) -> Ended<S::Doc> {
        let doc = misses.last().map(|(doc, _)| *doc);
        let all_failed = !misses.is_empty()
            && misses
                .iter()
                .all(|(_, m)| matches!(m, Reading::ServerError(..)));
        let reading = if all_failed {
            let why = misses
                .iter()
                .map(|(d, m)| format!("{}: {}", d.label(), m.why()))
                .collect::<Vec<_>>()
                .join("; ");
            // The category of the last transport failure: what the caller is told.
            let cause = misses.iter().rev().find_map(|(_, m)| match m {
                Reading::ServerError(_, cause) => *cause,
                _ => None,
            });
            Reading::ServerError(why, cause)
        } else if self.mode == Mode::Probe
            && misses.len() == 1
            && let Some((doc, miss)) = misses.pop()
        {
            alone::<S>(doc, miss)
        } else {
            let unreadable = misses.iter().find_map(|(d, m)| match m {
                Reading::Unreadable(why) => Some(format!("{}: {why}", d.label())),
                _ => None,
            });
            match (self.fetcher.site.conclude(misses), unreadable) {
                // A document that moved, and no other that answered: the platform moved.
                (Reading::Withheld(_), Some(why)) => Reading::Unreadable(why),
                (reading, _) => reading,
            }
        };
        Ended {
            lookup: self.answer(reading),
            doc,
            party: None,
            leave: None,
        }
    }

    /// The name's blame: the lookup ends for this name alone. A login wall is the platform
    /// showing the profile to logged-in viewers only (403 `profile_restricted`); any other
    /// refusal is 429 for the negative TTL. Remembered for the negative TTL, so asking again
    /// costs no request.
    fn for_the_name(&self, doc: S::Doc, miss: &SiteReading<S>) -> Ended<S::Doc> {
        let failure = match miss {
            Reading::Blocked { reason, .. } if crate::blame::is_login_wall(reason) => {
                Failure::Restricted
            }
            miss => Failure::Blocked {
                reason: miss.why_static(),
                retry_after: self.fetcher.names.remembered_for(),
            },
        };
        self.fetcher.names.remember(self.name, failure.clone());
        Ended {
            lookup: Lookup::Failed(failure),
            doc: Some(doc),
            party: Some(Party::Name),
            leave: None,
        }
    }

    /// The ending of a run some documents were blocked in: the block with the longest wait
    /// (the earlier of equals), so the caller is not told to come back before every source
    /// may answer; `None` when none was blocked.
    fn longest_block(&self, misses: &[(S::Doc, SiteReading<S>)]) -> Option<Ended<S::Doc>> {
        let block_wait = self.fetcher.block_wait;
        let (doc, reason, wait) = misses
            .iter()
            .filter_map(|(doc, miss)| match miss {
                Reading::Blocked {
                    reason,
                    retry_after,
                } => Some((*doc, *reason, retry_after.unwrap_or(block_wait))),
                _ => None,
            })
            .reduce(|longest, next| if next.2 > longest.2 { next } else { longest })?;
        let lookup = Lookup::Failed(Failure::Blocked {
            reason,
            retry_after: wait,
        });
        Some(Ended::by(lookup, doc))
    }

    /// Counts and logs a document the platform refused, by source and reason.
    fn note_block(&self, doc: S::Doc, reason: &'static str) {
        let (platform, source) = (S::PLATFORM.as_str(), doc.label());
        crate::telemetry::upstream_block(platform, source, reason);
        tracing::info!(
            platform,
            source,
            reason,
            proxy = self.route.label(),
            "the platform refused a document"
        );
    }

    /// The lookup a final reading answers, with the caller's wait filled in.
    pub(super) fn answer(&self, reading: SiteReading<S>) -> Lookup {
        super::answer(reading, self.fetcher.block_wait)
    }
}

/// The documents of `misses` (a run's documents before the one that read the name as not
/// found, on the same route) that answered the name there without refusing it: each that
/// answered inconclusively (a "no such user" the site wants confirmed, a withheld answer;
/// not one skipped unasked), an answer the absence confirms. Each counts as read
/// ([`Run::read`]: blame's evidence, the source's standing, and the routes the lookup left
/// unrested after that source refused there rest). A found profile confirms no such answer
/// (a "no such user" before it was the platform refusing us), so only an absence counts.
fn confirmed_by_absence<S: Site>(misses: &[(S::Doc, SiteReading<S>)]) -> Vec<S::Doc> {
    misses
        .iter()
        .filter(|(_, miss)| matches!(miss, Reading::Inconclusive(why) if *why != NO_KNOWN_ID))
        .map(|(doc, _)| *doc)
        .collect()
}

/// What the one document of a probe that had nothing usable says about itself: an
/// inconclusive answer is what the site says it is alone ([`Site::alone`]).
fn alone<S: Site>(doc: S::Doc, miss: SiteReading<S>) -> SiteReading<S> {
    match miss {
        Reading::Inconclusive(why) => match S::alone(doc, why) {
            Alone::Withheld => Reading::Withheld(why),
            Alone::Unreadable => Reading::Unreadable(why.to_owned()),
            Alone::Refused => Reading::blocked(why),
        },
        miss => miss,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::photo_share::PhotoShare;
    use crate::platform::photo_share::site::Doc;

    #[test]
    fn an_absence_confirms_the_answers_before_it_but_no_refusal_and_no_skip() {
        let misses = [
            (Doc::ProfileJson, Reading::Inconclusive("user_null")),
            (Doc::ProfileQuery, Reading::Inconclusive(NO_KNOWN_ID)),
            (Doc::LoggedOut, Reading::blocked("http_429")),
            (Doc::ProfilePage, Reading::Unreadable("moved".into())),
        ];
        assert_eq!(
            confirmed_by_absence::<PhotoShare>(&misses),
            [Doc::ProfileJson]
        );
    }

    #[test]
    fn an_inconclusive_answer_is_what_the_site_says_it_is_alone() {
        let alone = |why| alone::<PhotoShare>(Doc::ProfileJson, Reading::Inconclusive(why));
        // A business account's 400: the document withholds it by design.
        assert!(matches!(
            alone("business_account"),
            Reading::Withheld("business_account")
        ));
        // Unreadable JSON: the document moved.
        assert!(matches!(alone("unreadable"), Reading::Unreadable(why) if why == "unreadable"));
        // `"user": null`: how the platform also refuses us.
        assert!(matches!(
            alone("user_null"),
            Reading::Blocked {
                reason: "user_null",
                retry_after: None
            }
        ));
        let blocked = super::alone::<PhotoShare>(Doc::ProfileJson, Reading::blocked("http_429"));
        assert!(matches!(
            blocked,
            Reading::Blocked {
                reason: "http_429",
                ..
            }
        ));
    }
}
