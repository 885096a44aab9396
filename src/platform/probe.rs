//! One source asked on its own about one account: what the canary learns from a document, in
//! the platform layer's words and without its page formats.
//!
//! A lookup asks a platform's sources in turn and answers the caller with whatever the plan
//! came to; a probe ([`ladder::Source::probe`](super::ladder::Source::probe)) asks exactly one
//! document, through the same gate, routes, retries and hurdles, and reports what that
//! document said ([`Finding`]) with the evidence of its last answer (HTTP status, bytes, time).
//! It never touches the cache, a flight or any key's quota.

use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::time::Duration;

use super::site::{Alone, Miss};
use super::{Failure, Lookup, Platform, Profile};
use crate::upstream::Response;

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
    /// The document withholds this kind of account by design (see [`Alone::Withheld`]).
    Withheld(&'static str),
    /// The platform could not be reached, timed out, failed, or answered something we do not
    /// read (an unexpected status, a redirect off its host).
    Unreachable(String),
    /// Nothing was sent: this service's own outbound budget to the platform is spent, which
    /// says nothing about the platform.
    NotSent,
}

impl Finding {
    /// What a lookup-shaped ending of one document says (an answer, or a failure before or
    /// after the document was read).
    pub fn from_lookup(lookup: Lookup) -> Self {
        match lookup {
            Lookup::Found(profile) => Finding::Profile(profile),
            Lookup::NotFound => Finding::NotFound,
            Lookup::Failed(failure) => match failure {
                Failure::Blocked { reason, .. } => Finding::Blocked(reason),
                Failure::RegionLocked { .. } => Finding::Blocked("region_locked"),
                // The account's own setting, not the source's fault nor a refusal of us.
                Failure::Restricted => Finding::Withheld("profile_restricted"),
                Failure::Overloaded { .. } => Finding::NotSent,
                Failure::ExtractionFailed(why) => Finding::Unreadable(why),
                Failure::Unavailable(why) => Finding::Unreachable(why),
            },
        }
    }

    /// What a document with nothing usable says; `alone` is the site's reading of an
    /// inconclusive answer ([`super::Site::alone`]).
    pub fn from_miss(miss: Miss, alone: impl FnOnce(&'static str) -> Alone) -> Self {
        match miss {
            Miss::Blocked { reason, .. } => Finding::Blocked(reason),
            Miss::Unreadable(why) => Finding::Unreadable(why),
            Miss::Inconclusive(why) => match alone(why) {
                Alone::Withheld => Finding::Withheld(why),
                Alone::Unreadable => Finding::Unreadable(why.to_owned()),
                Alone::Refused => Finding::Blocked(why),
            },
        }
    }
}

/// The status and size of the last answer a request got: the evidence a probe reports.
#[derive(Debug, Default)]
pub struct Seen {
    /// The last HTTP status, 0 before any answer.
    status: AtomicU16,
    /// The last answer's body length (after decompression).
    bytes: AtomicU64,
}

impl Seen {
    /// Keeps `response`'s status and size (the last one wins).
    pub fn note(&self, response: &Response) {
        self.status
            .store(response.status.as_u16(), Ordering::Relaxed);
        let len = u64::try_from(response.body.len()).unwrap_or(u64::MAX);
        self.bytes.store(len, Ordering::Relaxed);
    }

    /// The last answer's HTTP status; `None` when nothing was answered.
    pub fn status(&self) -> Option<u16> {
        Some(self.status.load(Ordering::Relaxed)).filter(|s| *s != 0)
    }

    /// The last answer's body length in bytes (0 when nothing was answered).
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// One source's answer to a probe, with its evidence.
#[derive(Clone, Debug)]
pub struct Probe {
    /// The platform asked.
    pub platform: Platform,
    /// The source asked, as its registry line names it.
    pub source: &'static str,
    /// What the document said.
    pub finding: Finding,
    /// The HTTP status of the last answer, if one came.
    pub status: Option<u16>,
    /// The length of the last answer's body.
    pub bytes: u64,
    /// How long the probe took, waits for budget and retries included.
    pub elapsed: Duration,
    /// How many requests it sent upstream.
    pub upstream_requests: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_documents_ending_maps_to_one_finding() {
        let blocked = Lookup::Failed(Failure::Blocked {
            reason: "breaker_open",
            retry_after: Duration::from_secs(1),
        });
        assert_eq!(
            Finding::from_lookup(blocked),
            Finding::Blocked("breaker_open")
        );
        let region = Lookup::Failed(Failure::RegionLocked {
            retry_after: Duration::ZERO,
        });
        assert_eq!(
            Finding::from_lookup(region),
            Finding::Blocked("region_locked")
        );
        assert_eq!(
            Finding::from_lookup(Lookup::Failed(Failure::Restricted)),
            Finding::Withheld("profile_restricted")
        );
        let busy = Lookup::Failed(Failure::Overloaded {
            retry_after: Duration::ZERO,
        });
        assert_eq!(Finding::from_lookup(busy), Finding::NotSent);
        assert_eq!(Finding::from_lookup(Lookup::NotFound), Finding::NotFound);
        assert!(matches!(
            Finding::from_lookup(Lookup::unavailable("HTTP 502")),
            Finding::Unreachable(_)
        ));
    }

    #[test]
    fn an_inconclusive_answer_is_what_the_site_says_it_is_alone() {
        let miss = || Miss::Inconclusive("why");
        assert_eq!(
            Finding::from_miss(miss(), |_| Alone::Withheld),
            Finding::Withheld("why")
        );
        assert_eq!(
            Finding::from_miss(miss(), |_| Alone::Unreadable),
            Finding::Unreadable("why".into())
        );
        assert_eq!(
            Finding::from_miss(miss(), |_| Alone::Refused),
            Finding::Blocked("why")
        );
        assert_eq!(
            Finding::from_miss(Miss::blocked("http_429"), |_| Alone::Withheld),
            Finding::Blocked("http_429")
        );
    }
}
