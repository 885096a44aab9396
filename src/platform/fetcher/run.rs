//! One fetch on its route lease: what each of its steps needs, and where a step got to.

use std::sync::Mutex;
use std::time::Instant;

use super::Fetcher;
use super::send::Seen;
use crate::blame::{Kind, Party};
use crate::platform::site::{Document, Reading, Site};
use crate::platform::{Lookup, Profile};
use crate::upstream::egress::RouteLease;
use crate::username::Username;

pub(super) use crate::upstream::gate::Mode;

/// One fetch of `name` on its lease: what every step of it needs.
pub(super) struct Run<'a, S: Site> {
    pub(super) fetcher: &'a Fetcher<S>,
    pub(super) name: &'a Username,
    pub(super) route: &'a RouteLease<'a>,
    pub(super) mode: Mode,
    /// The status and size of the platform's last answer.
    pub(super) seen: Seen,
    /// Who blame said the last refusal belongs to, for the plan to act on.
    pub(super) party: Mutex<Option<Party>>,
    /// When the fetch began: every source it asks shares one retry budget.
    pub(super) started: Instant,
}

impl<'a, S: Site> Run<'a, S> {
    pub(super) fn new(
        fetcher: &'a Fetcher<S>,
        name: &'a Username,
        route: &'a RouteLease<'a>,
        mode: Mode,
    ) -> Self {
        Self {
            fetcher,
            name,
            route,
            mode,
            seen: Seen::default(),
            party: Mutex::new(None),
            started: Instant::now(),
        }
    }
}

impl<S: Site> Run<'_, S> {
    /// Records that `doc` came to `kind` on the current route for this lookup's name, and
    /// says who it belongs to (`signal`: the block's reason, or what failed).
    pub(super) fn judge(&self, doc: S::Doc, kind: Kind, signal: &'static str) -> Party {
        let party = self.fetcher.blame.judge(
            self.name.as_str(),
            self.route.route_id(),
            doc.label(),
            kind,
            signal,
        );
        tracing::debug!(
            source = doc.label(),
            signal,
            party = party.label(),
            "blamed"
        );
        party
    }

    /// When this fetch's last response head must come ([`Fetcher::deadline`]).
    pub(super) fn deadline(&self) -> super::send::Deadline {
        super::send::Deadline {
            at: self.started + self.fetcher.deadline,
            head: self.fetcher.head_timeout,
        }
    }

    /// Keeps the party a refusal was blamed on, for the plan.
    pub(super) fn keep_party(&self, party: Party) {
        *self
            .party
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(party);
    }

    /// The party the last refusal was blamed on, taken.
    pub(super) fn take_party(&self) -> Option<Party> {
        self.party
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    /// `doc` read for this lookup's name on the current route: the evidence learns it, and
    /// the routes this lookup left unrested after that source refused there rest now.
    pub(super) async fn read(&self, doc: S::Doc) {
        self.fetcher
            .blame
            .read(self.name.as_str(), self.route.route_id(), doc.label());
        self.fetcher.standing.evidence().read(doc.label());
        self.route.rest_suspects(doc.label()).await;
    }
}

/// Where one document (or one request of it) got to.
pub(super) enum Step<H> {
    /// The platform answered and the site read it (a request's end).
    Read(Reading<Box<Profile>, H>),
    /// The document had nothing usable (it was inconclusive, unreadable or blocked): ask the
    /// next one (a document's end).
    Missed(Reading<Box<Profile>, H>),
    /// No more to ask: the lookup's answer is this (an answer, the gate's refusal, every
    /// proxy resting, a transport failure).
    Ended(Lookup),
}
