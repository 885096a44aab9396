//! One fetch on its route lease: the plan's documents in order until one answers, and the
//! plan again from the start on another route each time it ends blocked on one.

use std::sync::atomic::Ordering;

use super::Fetched;
use super::run::{Mode, Run, Step};
use crate::platform::site::{Alone, Document, Reading, Site, SiteReading};
use crate::platform::{Failure, Lookup};
use crate::upstream::egress::Switch;

/// How a run of the plan ended: the lookup's answer, and the document it came from (`None`
/// when none was asked).
struct Ended<D> {
    lookup: Lookup,
    doc: Option<D>,
    /// Whether every refusal of the run was its source's: no reason to leave the route.
    sources_refused: bool,
}

impl<D> Ended<D> {
    fn by(lookup: Lookup, doc: D) -> Self {
        Self {
            lookup,
            doc: Some(doc),
            sources_refused: false,
        }
    }
}

impl<'a, S: Site> Run<'a, S> {
    /// Runs `plan` on the lease, and again from the start on another route each time it ends
    /// blocked (or region-locked) on one; a fetch leaves each route at most once, so this
    /// ends.
    pub(super) async fn through_routes(&self, plan: &[S::Doc]) -> Fetched {
        let ended = self.on_routes(plan).await;
        Fetched {
            lookup: ended.lookup,
            upstream_requests: self.route.sent(),
            source: ended.doc.map(Document::label),
            status: self.seen.status(),
            bytes: self.seen.bytes(),
        }
    }

    async fn on_routes(&self, plan: &[S::Doc]) -> Ended<S::Doc> {
        let route = self.route;
        loop {
            let ended = self.run_plan(plan).await;
            if let Some(wait) = route.exhausted() {
                return Ended {
                    lookup: super::send::proxies_resting(wait),
                    ..ended
                };
            }
            let reason = match &ended.lookup {
                // Refusals that are the sources' are no reason to leave the route.
                Lookup::Failed(Failure::Blocked { .. }) if ended.sources_refused => return ended,
                Lookup::Failed(Failure::Blocked { reason, .. }) => *reason,
                // A region lock is tried on another proxy, then answered 451.
                Lookup::Failed(Failure::RegionLocked { .. }) => "region_locked",
                _ => {
                    // Answered by another source after a refusal that proved the source's:
                    // the routes this lookup left for that refusal did nothing wrong.
                    if self.refused_by_source.load(Ordering::Relaxed) {
                        route.lift_rests().await;
                    }
                    return ended;
                }
            };
            match route.rest_and_switch(reason).await {
                Switch::Moved => {
                    tracing::debug!(
                        reason,
                        proxy = route.label(),
                        "trying the lookup on another proxy"
                    );
                }
                Switch::AllResting(_) if reason == "region_locked" => return ended,
                Switch::AllResting(wait) => {
                    return Ended {
                        lookup: super::send::proxies_resting(wait),
                        ..ended
                    };
                }
                Switch::Direct => return ended,
            }
        }
    }

    /// Asks the plan's documents in order until one answers, then lets the site conclude (a
    /// plan of one document asked alone concludes by [`Site::alone`]).
    ///
    /// A blocked document ends the run blocked, so that the lookup moves to another route;
    /// when the route is the last one left (or direct), or the refusal is the source's, the
    /// next document is asked on it instead, and the run ends blocked only if every document
    /// was (with the longest wait, and the reason and source of that block). An unreadable
    /// document ends the run at once unless the site hands those over too.
    async fn run_plan(&self, plan: &[S::Doc]) -> Ended<S::Doc> {
        let mut misses = Vec::with_capacity(plan.len());
        for (at, &doc) in plan.iter().enumerate() {
            let miss = match self.read_document(doc).await {
                // A source handed over to that cannot be reached (or that our budget kept us
                // from asking) leaves the block standing.
                Step::Ended(
                    lookup @ Lookup::Failed(Failure::Unavailable(_) | Failure::Overloaded { .. }),
                ) if !misses.is_empty() => {
                    if let Some(block) = self.longest_block(&misses) {
                        return block;
                    }
                    return Ended::by(lookup, doc);
                }
                Step::Ended(lookup) => return Ended::by(lookup, doc),
                Step::Read(reading) => return Ended::by(self.answer(reading), doc),
                Step::Missed(miss) => miss,
            };
            match &miss {
                Reading::Blocked { reason, .. } => {
                    self.note_block(doc, reason);
                    if self.source_wide(doc) {
                        self.refused_by_source.store(true, Ordering::Relaxed);
                    }
                    // Blocked on every route left, or refused by the source itself: the next
                    // source, on this route, at once.
                    let next = at + 1 < plan.len();
                    let hands_over = next && (!self.route.can_move() || self.source_wide(doc));
                    misses.push((doc, miss));
                    if !hands_over {
                        break;
                    }
                }
                Reading::Unreadable(_) if !S::FALLS_BACK_ON_UNREADABLE => {
                    return Ended::by(self.answer(miss), doc);
                }
                _ => misses.push((doc, miss)),
            }
        }
        if let Some(ended) = self.longest_block(&misses) {
            return ended;
        }
        let doc = misses.last().map(|(doc, _)| *doc);
        let reading = if self.mode == Mode::Probe
            && misses.len() == 1
            && let Some((doc, miss)) = misses.pop()
        {
            alone::<S>(doc, miss)
        } else {
            self.fetcher.site.conclude(&misses)
        };
        Ended {
            lookup: self.answer(reading),
            doc,
            sources_refused: false,
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
        let sources_refused = misses
            .iter()
            .filter(|(_, miss)| matches!(miss, Reading::Blocked { .. }))
            .all(|(doc, _)| self.source_wide(*doc));
        Some(Ended {
            sources_refused,
            ..Ended::by(lookup, doc)
        })
    }

    /// Whether the refusals of `doc` are the source's (see [`Standing::is_source_wide`]).
    ///
    /// [`Standing::is_source_wide`]: crate::platform::standing::Standing::is_source_wide
    pub(super) fn source_wide(&self, doc: S::Doc) -> bool {
        self.fetcher.standing.is_source_wide(doc.label())
    }

    /// Counts and logs a document the platform refused, by source and reason, and tells the
    /// evidence on which route and for which name.
    fn note_block(&self, doc: S::Doc, reason: &'static str) {
        let (platform, source) = (S::PLATFORM.as_str(), doc.label());
        let route = self.route.label().parse().unwrap_or(0);
        let evidence = self.fetcher.standing.evidence();
        evidence.refused(source, route, self.name.as_str());
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
