//! Stand-ins for the platforms profile-lookup reads: invented people and numbers, written in
//! every document shape each platform has used, and loopback servers that answer as the
//! platform would.
//!
//! `profile-lookup demo`, the service's integration tests, its benchmarks and the load
//! scripts all talk to these stand-ins, so the service is exercised end to end with no
//! network. Nothing here comes from a real capture.
//!
//! This crate plays the *platforms*, which know nothing of the service: it never depends on
//! `profile-lookup` (whose `demo` depends on it). What the service must make of a sample is
//! given as JSON (each platform's `expected_body`), for the service's tests to compare with
//! its own types; where a stand-in needs the platform's side of a protocol (the short-video
//! WAF challenge), it implements that side itself.
//!
//! A platform is a folder here ([`short_video`], [`photo_share`]): its samples, its page
//! builders, its stand-in ([`StandIn`]) and the answers the service must give. Each is
//! registered by one line in [`PLATFORMS`], under the label the service gives the platform,
//! so the service finds a platform's stand-in with [`platform`] and loops over its own
//! platforms without naming any. [`drift`] switches a running stand-in to a moved document
//! shape, [`throttle`] to a platform that throttles every request; [`spawn`] serves one on a
//! free loopback port.

#![warn(missing_docs)]

mod answer;
pub mod drift;
mod json_text;
pub mod photo_share;
pub mod short_video;
mod stand_in;
mod switch;
#[cfg(test)]
mod test_call;
pub mod throttle;

use std::net::SocketAddr;

use axum::Router;
use tokio::net::TcpListener;

pub use stand_in::{DemoCall, StandIn};
pub use switch::Switch;

/// Every platform's stand-in, one line each, under the label the service gives the platform.
pub static PLATFORMS: &[StandIn] = &[short_video::STAND_IN, photo_share::STAND_IN];

/// A name every stand-in answers with HTTP 429, to show `upstream_blocked`.
pub const THROTTLED_NAME: &str = "throttled.demo";

/// The stand-in of the platform labelled `label` (`"short-video"`, `"photo-share"`), if one is
/// registered.
pub fn platform(label: &str) -> Option<&'static StandIn> {
    PLATFORMS.iter().find(|p| p.label() == label)
}

/// Serves `router` on an ephemeral loopback port; returns where.
pub async fn spawn(router: Router) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Ok(addr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stand_in_is_found_by_its_label_and_suggests_something() {
        let labels: std::collections::BTreeSet<_> = PLATFORMS.iter().map(|p| p.label()).collect();
        assert_eq!(labels.len(), PLATFORMS.len(), "a label twice");
        for stand_in in PLATFORMS {
            let found = platform(stand_in.label()).expect("registered");
            assert_eq!(found.drifted_source(), stand_in.drifted_source());
            assert!(!stand_in.demo_calls().is_empty(), "{}", stand_in.label());
            assert!(
                !stand_in.canary_accounts().is_empty(),
                "{}",
                stand_in.label()
            );
        }
        assert!(platform("no-such-platform").is_none());
    }
}
