//! One fetch on its route lease: what each of its steps needs, and where a step got to.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::Fetcher;
use super::send::Seen;
use crate::platform::site::{Reading, Site};
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
    /// Whether a source refused this lookup with a refusal that is the source's (see
    /// `Standing::is_source_wide`).
    pub(super) refused_by_source: AtomicBool,
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
            refused_by_source: AtomicBool::new(false),
            started: Instant::now(),
        }
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
