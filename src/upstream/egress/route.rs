//! One way out to a platform and the browsers presented on it: a client and a cookie jar per
//! browser profile (an [`Exit`]: a fixed proxy's for its life, a gateway's per session), the
//! route's rest and its metrics.

use std::sync::Arc;

use url::Url;

use super::exit::{Exit, Identity};
use super::gateway::Gateway;
use super::session::SessionValues;
use crate::config::{BrowserProfile, Settings};
use crate::telemetry;
use crate::upstream::Upstream;
use crate::upstream::cookies::RouteCookies;
use crate::upstream::roots::ClientBuildError;

/// How a route reaches its exit addresses.
pub(super) enum Way {
    /// A fixed proxy, or the direct route: one exit for good.
    Fixed(Arc<Exit>),
    /// A provider's gateway: an exit per session.
    Gateway(Box<Gateway>),
}

/// One way out: its exits and its metrics (its rest is the egress's `Rests`).
pub(super) struct Route {
    pub(super) label: String,
    pub(super) way: Way,
    pub(super) requests: metrics::Counter,
    pub(super) blocks: metrics::Counter,
    pub(super) resting: metrics::Gauge,
}

impl Route {
    /// The route through fixed proxy `proxy` (direct when `None`), with one client per profile.
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
        let exit = Exit {
            identities,
            session: None,
        };
        let kind = if proxy.is_some() { "fixed" } else { "direct" };
        Ok(Self::with_way(
            scope,
            label,
            kind,
            Way::Fixed(Arc::new(exit)),
        ))
    }

    /// The route through gateway `template` (a proxy URL with `{session}` in its credentials).
    pub(super) fn through_gateway(
        scope: &'static str,
        label: String,
        settings: &Settings,
        template: &str,
        profiles: &[Option<BrowserProfile>],
    ) -> Result<Self, ClientBuildError> {
        let _ = telemetry::metrics_handle();
        let gateway = Gateway::new(scope, &label, template, settings, profiles)?;
        Ok(Self::with_way(
            scope,
            label,
            "gateway",
            Way::Gateway(Box::new(gateway)),
        ))
    }

    fn with_way(scope: &'static str, label: String, kind: &'static str, way: Way) -> Self {
        // Handles taken before the recorder exists would count nowhere.
        let _ = telemetry::metrics_handle();
        let (requests, blocks, resting) = telemetry::proxy_handles(scope, &label);
        resting.set(0.0);
        telemetry::proxy_kind(scope, &label, kind);
        Self {
            label,
            way,
            requests,
            blocks,
            resting,
        }
    }

    /// The exit a lookup takes on this route now (a gateway's current session, or a new one).
    pub(super) fn exit(&self) -> Arc<Exit> {
        match &self.way {
            Way::Fixed(exit) => exit.clone(),
            Way::Gateway(gateway) => gateway.take(),
        }
    }

    /// The route's gateway, when it is one.
    pub(super) fn gateway(&self) -> Option<&Gateway> {
        match &self.way {
            Way::Fixed(_) => None,
            Way::Gateway(gateway) => Some(gateway),
        }
    }
}
