//! Completing a found profile: a field the source that read it could not give, asked of the
//! document the site names for it ([`Site::complement`]: the photo-share post count from its
//! embed page), on the same route, through the same gate, counted as any request.
//!
//! A server error is asked again, up to [`Site::complement_attempts`], each time on a fresh
//! session where the route is a gateway, while the lookup's retry budget lasts. Anything else
//! that gives no value (a refusal, a page without it, a failure to send) leaves the field
//! withheld: the profile is answered as it was read, and the answer names the field in
//! `Profile-Withheld`. A complement never rests a route, never moves a lookup to another one,
//! and is never evidence about the sources: the profile was read.

use std::time::Duration;

use super::run::Run;
use super::send::{Sent, send};
use crate::platform::Profile;
use crate::platform::site::{Completion, Site};
use crate::upstream::egress::RouteLease;

/// The least of the lookup's retry budget an attempt must have left to start.
const MIN_LEFT: Duration = Duration::from_millis(50);

impl<S: Site> Run<'_, S> {
    /// `found`, completed when the site names a complement and it gives the field.
    pub(super) async fn complete(&self, found: Box<Profile>) -> Box<Profile> {
        let (fetcher, name, route) = (self.fetcher, self.name, self.route);
        let site = &fetcher.site;
        let Some(doc) = site.complement(&found) else {
            return found;
        };
        let platform = S::PLATFORM.as_str();
        let url = site.url(doc, name);
        for attempt in 0..site.complement_attempts().max(1) {
            if fetcher.retry.left(self.started.elapsed()) < MIN_LEFT {
                break;
            }
            if attempt > 0 {
                route.fresh_session();
            }
            let headers = |route: &RouteLease<'_>| site.headers(doc, name, route);
            // A complement is never evidence: the profile was read.
            let until = self.deadline();
            let sent = send(
                route,
                &fetcher.gate,
                self.mode,
                (&url, None),
                headers,
                &super::send::nobody,
                until,
            );
            let response = match sent.await {
                Sent::Answered(response) => response,
                Sent::Failed(_) | Sent::Refused(_) => break,
            };
            match site.completed(doc, &response, &found, name) {
                Completion::Done(profile) => {
                    crate::telemetry::complement(platform, "read");
                    return profile;
                }
                Completion::Again => {
                    tracing::debug!(platform, status = %response.status, "complement failed; asking again");
                }
                Completion::Withheld => break,
            }
        }
        crate::telemetry::complement(platform, "withheld");
        found
    }
}
