//! One platform's stand-in as the demo and the tests use it, whichever platform it plays.

use axum::Router;

use crate::drift::{DriftSwitch, switchable};
use crate::switch::Switch;
use crate::throttle::throttleable;

/// One platform's stand-in: its routers, the source its drifted twin moves, and the lookups
/// and accounts the demo shows on it. Each platform's folder defines one, registered in
/// [`PLATFORMS`](crate::PLATFORMS).
#[derive(Clone, Copy, Debug)]
pub struct StandIn {
    pub(crate) label: &'static str,
    pub(crate) drifted_source: &'static str,
    pub(crate) router: fn() -> Router,
    pub(crate) drifted_router: fn() -> Router,
    pub(crate) demo_calls: fn() -> Vec<DemoCall>,
    pub(crate) canary_accounts: fn() -> Vec<&'static str>,
}

impl StandIn {
    /// The platform's label, as the service names it (`short-video`).
    pub fn label(&self) -> &'static str {
        self.label
    }

    /// The stand-in: a router that answers the platform's requests with the invented samples
    /// (a profile, a private one, a missing one, a throttled one, …).
    pub fn router(&self) -> Router {
        (self.router)()
    }

    /// The stand-in as it would be after the platform moved one of its documents: the
    /// samples' documents of [`StandIn::drifted_source`] in a shape no reader knows (fetched
    /// fine, unreadable), every other answer as [`StandIn::router`] gives it.
    pub fn drifted_router(&self) -> Router {
        (self.drifted_router)()
    }

    /// The source (as the service names the platform's documents) the drifted stand-in serves
    /// in a moved shape.
    pub fn drifted_source(&self) -> &'static str {
        self.drifted_source
    }

    /// The stand-in serving its usual or its drifted shape as `switch` says, with the switch's
    /// control routes (see [`drift`](crate::drift)), and a throttle switch of its own, off,
    /// turned by its control routes only (see [`throttle`](crate::throttle)).
    pub fn switchable(&self, switch: DriftSwitch) -> Router {
        let drifting = switchable(self.router(), self.drifted_router(), switch);
        throttleable(drifting, Switch::default())
    }

    /// The lookups the demo suggests on this platform, each a name the stand-in serves and
    /// what it shows.
    pub fn demo_calls(&self) -> Vec<DemoCall> {
        (self.demo_calls)()
    }

    /// The accounts the demo's canary watches: long-lived samples of each kind the stand-in
    /// serves (public, private, business where the platform has them).
    pub fn canary_accounts(&self) -> Vec<&'static str> {
        (self.canary_accounts)()
    }
}

/// One lookup the demo's banner suggests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DemoCall {
    /// The username to look up (as the caller may spell it).
    pub username: String,
    /// What the answer shows, in a few words.
    pub shows: &'static str,
}

impl DemoCall {
    /// A suggested lookup of `username` that shows `shows`.
    pub fn new(username: impl Into<String>, shows: &'static str) -> Self {
        Self {
            username: username.into(),
            shows,
        }
    }
}
