//! What one source asked on its own said about one account: the canary's reading of the
//! fetcher's outcome of a one-document plan, in the platform layer's words and without its
//! page formats.

use crate::platform::fetcher::Fetched;
use crate::platform::{Failure, Lookup, Profile};

/// What one document said about one account, asked on its own.
#[derive(Clone, Debug, PartialEq)]
pub enum Finding {
    /// The document gave a profile (the canary then checks its name and counts).
    Profile(Box<Profile>),
    /// The document says the account does not exist.
    NotFound,
    /// The platform refused us (a block signal, its breaker open, every proxy resting, a
    /// region lock): the reader is not at fault.
    Blocked(&'static str),
    /// The document was fetched and could not be read: its shape moved.
    Unreadable(String),
    /// The document withholds this kind of account by design (see
    /// [`crate::platform::site::Alone::Withheld`]).
    Withheld(&'static str),
    /// The platform could not be reached, timed out, failed, or answered something we do not
    /// read (an unexpected status, a redirect off its host).
    Unreachable(String),
    /// Nothing was sent: this service's own outbound budget to the platform is spent, which
    /// says nothing about the platform.
    NotSent,
}

impl Finding {
    /// What the fetch of one document came to (the fetcher judged an inconclusive answer by
    /// what the site says it is alone).
    pub fn of(fetched: &Fetched) -> Self {
        match &fetched.lookup {
            Lookup::Found(profile) => Finding::Profile(profile.clone()),
            Lookup::NotFound => Finding::NotFound,
            Lookup::Failed(failure) => match failure {
                Failure::Blocked { reason, .. } => Finding::Blocked(reason),
                Failure::Withheld { reason, .. } => Finding::Withheld(reason),
                Failure::RegionLocked { .. } => Finding::Blocked("region_locked"),
                // The account's own setting, not the source's fault nor a refusal of us.
                Failure::Restricted => Finding::Withheld("profile_restricted"),
                Failure::Overloaded { .. } => Finding::NotSent,
                Failure::ExtractionFailed(why) => Finding::Unreadable(why.clone()),
                // The category first, so a reason says why at a glance.
                Failure::Unavailable { why, cause } => Finding::Unreachable(match cause {
                    Some(cause) => format!("{cause}: {why}"),
                    None => why.clone(),
                }),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn finding(lookup: Lookup) -> Finding {
        Finding::of(&Fetched {
            lookup,
            upstream_requests: 1,
            source: Some("page"),
            status: Some(200),
            bytes: 1,
            blame: None,
        })
    }

    #[test]
    fn a_documents_ending_maps_to_one_finding() {
        let failed = |failure| finding(Lookup::Failed(failure));
        let wait = Duration::from_secs(1);
        assert_eq!(
            failed(Failure::Blocked {
                reason: "breaker_open",
                retry_after: wait,
            }),
            Finding::Blocked("breaker_open")
        );
        assert_eq!(
            failed(Failure::Withheld {
                reason: "private",
                retry_after: wait,
            }),
            Finding::Withheld("private")
        );
        assert_eq!(
            failed(Failure::RegionLocked { retry_after: wait }),
            Finding::Blocked("region_locked")
        );
        assert_eq!(
            failed(Failure::Restricted),
            Finding::Withheld("profile_restricted")
        );
        assert_eq!(
            failed(Failure::Overloaded { retry_after: wait }),
            Finding::NotSent
        );
        assert_eq!(
            failed(Failure::ExtractionFailed("moved".into())),
            Finding::Unreadable("moved".into())
        );
        assert_eq!(finding(Lookup::NotFound), Finding::NotFound);
        assert_eq!(
            finding(Lookup::unavailable("HTTP 502")),
            Finding::Unreachable("HTTP 502".into())
        );
        // A transport failure's reason starts with its category.
        assert_eq!(
            failed(Failure::Unavailable {
                why: "tcp connect error".into(),
                cause: Some(crate::upstream::Cause::Refused),
            }),
            Finding::Unreachable("refused: tcp connect error".into())
        );
    }
}
