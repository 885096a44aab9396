//! An exit address and what is presented through it: a client, a cookie jar and the values
//! the platform handed, per browser profile. A fixed proxy (or the direct route) has one exit
//! for its life; a gateway has one per session, with that session's bookkeeping.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Instant;

use super::session::SessionValues;
use crate::upstream::Upstream;
use crate::upstream::cookies::RouteCookies;

/// One browser presented on one route: its client and its cookies (a browser's cookies are
/// its own, so a cookie set to one profile is never sent by another).
pub(super) struct Identity {
    pub(super) upstream: Upstream,
    pub(super) cookies: RouteCookies,
    /// The values the platform handed this browser in response headers (see
    /// [`RouteLease::handed`]): a browser's session, like its cookies.
    pub(super) session: SessionValues,
}

/// One exit address and the identities presented through it (one per profile, in
/// [`Egress::profiles`] order): a fixed proxy's (or the direct route's) for its life, or one
/// gateway session's, with that session's bookkeeping.
pub(super) struct Exit {
    pub(super) identities: Vec<Identity>,
    /// A gateway session's bookkeeping; `None` on a fixed proxy or the direct route.
    pub(super) session: Option<Session>,
}

/// One gateway session's bookkeeping (its id is only in its clients).
#[derive(Debug)]
pub(super) struct Session {
    /// A number no other session of this process had: what blame knows the session by (never
    /// its id, which is part of the gateway's credentials).
    pub(super) serial: u64,
    pub(super) started: Instant,
    /// Lookups that took it.
    pub(super) lookups: AtomicU32,
    /// Whether it ever brought back an answer that was not a refusal: a session refused before
    /// that is a fresh one refused, which counts toward `upstream.gateway_block_threshold`.
    answered: AtomicBool,
    pub(super) retired: AtomicBool,
}

impl Session {
    /// A session just started: no lookup, no answer yet.
    pub(super) fn new() -> Self {
        static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Self {
            serial: SERIAL.fetch_add(1, Ordering::Relaxed),
            started: Instant::now(),
            lookups: AtomicU32::new(0),
            answered: AtomicBool::new(false),
            retired: AtomicBool::new(false),
        }
    }

    /// Notes an answer that was not a refusal; `true` the first time.
    pub(super) fn first_answer(&self) -> bool {
        !self.answered.swap(true, Ordering::Relaxed)
    }

    /// Whether it never brought back an answer that was not a refusal.
    pub(super) fn is_fresh(&self) -> bool {
        !self.answered.load(Ordering::Relaxed)
    }
}
