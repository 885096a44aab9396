//! One way out to a platform and the browsers presented on it: a client and a cookie jar per
//! browser profile, the route's rest and its metrics.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use url::Url;

use super::session::SessionValues;
use crate::config::{BrowserProfile, Settings};
use crate::telemetry;
use crate::upstream::Upstream;
use crate::upstream::cookies::RouteCookies;
use crate::upstream::roots::ClientBuildError;

/// One browser presented on one route: its client and its cookies (a browser's cookies are
/// its own, so a cookie set to one profile is never sent by another).
pub(super) struct Identity {
    pub(super) upstream: Upstream,
    pub(super) cookies: RouteCookies,
    /// The values the platform handed this browser in response headers (see
    /// [`RouteLease::handed`]): a browser's session, like its cookies.
    pub(super) session: SessionValues,
}

/// One way out: its identities (one per profile, in [`Egress::profiles`] order), its rest and
/// its metrics.
pub(super) struct Route {
    pub(super) label: String,
    pub(super) identities: Vec<Identity>,
    pub(super) rest_until: Mutex<Option<Instant>>,
    pub(super) requests: metrics::Counter,
    pub(super) blocks: metrics::Counter,
    pub(super) resting: metrics::Gauge,
}

impl Route {
    /// The route through `proxy` (direct when `None`), with one client per profile.
    pub(super) fn new(
        scope: &'static str,
        label: String,
        settings: &Settings,
        proxy: Option<&Url>,
        profiles: &[Option<BrowserProfile>],
    ) -> Result<Self, ClientBuildError> {
        let mut identities = Vec::with_capacity(profiles.len());
        for &profile in profiles {
            identities.push(Identity {
                upstream: Upstream::build(settings, proxy, profile)?,
                cookies: RouteCookies::default(),
                session: SessionValues::default(),
            });
        }
        // Handles taken before the recorder exists would count nowhere.
        let _ = telemetry::metrics_handle();
        let (requests, blocks, resting) = telemetry::proxy_handles(scope, &label);
        resting.set(0.0);
        Ok(Self {
            label,
            identities,
            rest_until: Mutex::new(None),
            requests,
            blocks,
            resting,
        })
    }

    fn rest_until(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.rest_until
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How long this route still rests, by the replica's own record.
    pub(super) fn resting_for(&self, now: Instant) -> Option<Duration> {
        let until = (*self.rest_until())?;
        (until > now).then(|| until - now)
    }

    /// Rests the route until `now + rest`, unless it already rests longer.
    pub(super) fn rest(&self, now: Instant, rest: Duration) {
        let mut until = self.rest_until();
        let new = now + rest;
        if until.is_none_or(|u| u < new) {
            *until = Some(new);
        }
        self.resting.set(1.0);
    }
}
