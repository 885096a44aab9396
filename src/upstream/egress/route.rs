//! One way out to a platform and the browsers presented on it: a client and a cookie jar per
//! browser profile, the route's rest and its metrics.

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

/// One way out: its identities (one per profile, in [`Egress::profiles`] order) and its
/// metrics (its rest is the egress's `Rests`).
pub(super) struct Route {
    pub(super) label: String,
    pub(super) identities: Vec<Identity>,
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
            requests,
            blocks,
            resting,
        })
    }
}
