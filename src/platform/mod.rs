//! The platform layer: what a lookup can come to, the exact bodies the API returns, and the one
//! fetcher every platform runs on.
//!
//! Everything below this module knows page formats; nothing above it does. A platform is a
//! folder that implements [`Site`] (its documents, their requests, how to read an
//! answer, its extractor); [`fetcher::Fetcher`] runs any `Site` through the outbound gate, the
//! routes, retries, redirects and drift capture, and turns its readings into a [`Lookup`]
//! ([`fetcher::Fetched`]: with what it cost). Everything above sees a platform's fetcher as a
//! [`fetcher::Fetch`], one per platform in [`fetcher::Fetchers`]. The HTTP edge maps the
//! outcome to a status code, once. [`standing`] holds which sources the canary moved to the end
//! of the plan.

pub mod fetcher;
pub(crate) mod fields;
pub mod last_word;
pub mod profile;
pub mod site;
pub mod standing;

// The platforms' folders. Declared by hand, not by the registry's macro: rustfmt, and every
// tool that walks `mod` items, does not see modules a macro declares.
pub mod photo_share;
pub mod short_video;

/// Builds [`with_site`], the arm of each registered platform, from its line in
/// `crate::registry`: the line names the platform's folder and site type.
macro_rules! platform_folders {
    ($(
        $(#[$doc:meta])*
        $variant:ident: $folder:ident::$site:ident { $($facts:tt)* };
    )+) => {
        /// Runs `job` with the site type of `platform`: the one place a [`Platform`] meets its
        /// code. Every per-platform list (sources, routes, the OpenAPI operations, the demo's
        /// stand-ins, the extractor of `profile-lookup extract`) is built by looping over
        /// [`Platform::ALL`] through here.
        pub fn with_site<J: SiteJob>(platform: Platform, job: J) -> J::Output {
            match platform {
                $(Platform::$variant => job.run::<$folder::$site>(),)+
            }
        }
    };
}

crate::registry::for_each_platform!(platform_folders);

use std::time::Duration;

use crate::username::Subject;

pub use crate::registry::Platform;
pub use profile::{Body, Count, Profile, Summary};
pub use site::{Reading, Site};

/// What a lookup came to: the platform layer's whole vocabulary.
#[derive(Clone, Debug, PartialEq)]
pub enum Lookup {
    /// The profile was read; private accounts are `Found` with their private flag set.
    Found(Box<Profile>),
    /// The platform says the user does not exist (or is banned).
    NotFound,
    /// No answer to give or to store.
    Failed(Failure),
}

/// Why a lookup has no answer; every wait in it is decided where it is known (the platform's
/// `Retry-After`, the breaker, the outbound budget, the proxies' rests).
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// The platform refused us (throttle, login wall, captcha) and retries did not help.
    Blocked {
        /// Why we think it is a block, for logs and metrics.
        reason: &'static str,
        /// How long the caller should wait.
        retry_after: Duration,
    },
    /// The platform withholds the profile from the network region we asked from.
    RegionLocked {
        /// How long the caller should wait before asking again.
        retry_after: Duration,
    },
    /// No document said anything about the user and none refused us (a source that answers
    /// "private or missing" alike): answered like a block (429 `upstream_blocked`, labelled
    /// `blocked`), since the platform keeps the answer from us, but the route is not to blame:
    /// no proxy rests for it and the breaker does not count it.
    Withheld {
        /// Why, for logs.
        reason: &'static str,
        /// How long the caller should wait.
        retry_after: Duration,
    },
    /// The platform shows the profile only to logged-in viewers (audience controls, age
    /// gates): about the account, not a refusal of us; never stored, and no older copy
    /// stands in for it.
    Restricted,
    /// We chose not to send the request: the outbound budget for the platform is spent.
    Overloaded {
        /// When the budget will have room again.
        retry_after: Duration,
    },
    /// The page was fetched but held no readable profile; the text says why (log only).
    ExtractionFailed(String),
    /// The platform could not be reached, timed out, or sent something we would not read.
    Unavailable {
        /// Why, for logs.
        why: String,
        /// The category of the transport failure it was, if it was one: what the log line,
        /// the metric, the caller's `detail` and the canary's reason say.
        cause: Option<crate::upstream::Cause>,
    },
}

impl Lookup {
    /// A short, stable label of the outcome for metrics and the access log.
    pub fn label(&self) -> &'static str {
        match self {
            Lookup::Found(profile) if profile.is_private() => "private",
            Lookup::Found(_) => "ok",
            Lookup::NotFound => "not_found",
            Lookup::Failed(failure) => failure.label(),
        }
    }

    /// A lookup that could not reach the platform or read its answer.
    pub fn unavailable(why: impl Into<String>) -> Self {
        Lookup::Failed(Failure::unavailable(why))
    }
}

impl Failure {
    /// The platform unavailable for a reason that is no transport failure (an unexpected
    /// status, a redirect off its host, no time left).
    pub fn unavailable(why: impl Into<String>) -> Self {
        Failure::Unavailable {
            why: why.into(),
            cause: None,
        }
    }

    /// A short, stable label of the failure for metrics and the access log.
    pub fn label(&self) -> &'static str {
        match self {
            Failure::Blocked { .. } | Failure::Withheld { .. } => "blocked",
            Failure::Overloaded { .. } => "overloaded",
            Failure::RegionLocked { .. } => "region_locked",
            Failure::Restricted => "restricted",
            Failure::ExtractionFailed(_) => "extraction_failed",
            Failure::Unavailable { .. } => "unavailable",
        }
    }

    /// Failures an older answer may stand in for: the platform's trouble (or our budget), not
    /// a verdict about the user.
    pub fn may_serve_stale(&self) -> bool {
        !matches!(self, Failure::RegionLocked { .. } | Failure::Restricted)
    }
}

/// Something done with one platform's [`Site`] type, whichever it is: what [`with_site`]
/// calls for a [`Platform`].
pub trait SiteJob {
    /// What the job gives back.
    type Output;

    /// Runs the job with platform `S`'s site type.
    fn run<S: Site>(self) -> Self::Output;
}

/// The `Profile-Withheld` list of a profile of `platform` that its source `source` gave:
/// the counts it withheld ([`Body::withheld`]) and the fields that source never gives which
/// are `null` ([`site::Document::withholds`]; none for a source this version does not know).
pub fn withheld(
    platform: Platform,
    source: Option<&str>,
    summary: &Summary,
) -> Option<bytes::Bytes> {
    struct Withholds<'a>(Option<&'a str>);
    impl SiteJob for Withholds<'_> {
        type Output = &'static [&'static str];
        fn run<S: Site>(self) -> Self::Output {
            use site::Document as _;
            S::DOCUMENTS
                .iter()
                .find(|d| Some(d.label()) == self.0)
                .map_or(&[], |d| d.withholds())
        }
    }
    summary.withheld_list(with_site(platform, Withholds(source)))
}

/// A body of `platform` that another replica stored, as this version answers it: read back
/// (the keys added since it was written `null`, `false` or `[]`; keys of a newer version
/// dropped) and written again, so that a rolling upgrade answers every documented key. `None`
/// for a body this version cannot read (a newer replica's that changed a key's type): it is
/// served as stored, naming no withheld field.
pub fn stored(platform: Platform, body: &[u8]) -> Option<Profile> {
    struct Stored<'a>(&'a [u8]);
    impl SiteJob for Stored<'_> {
        type Output = Option<Profile>;
        fn run<S: Site>(self) -> Self::Output {
            let body: S::Body = serde_json::from_slice(self.0).ok()?;
            Some(Profile::new(&body))
        }
    }
    with_site(platform, Stored(body))
}

/// What a document of `platform` says about `requested`, through the same extractor a lookup
/// runs: `profile-lookup extract` and the tests use it.
pub fn extract(platform: Platform, document: &[u8], requested: Subject<'_>) -> Reading {
    struct Extract<'a>(&'a [u8], Subject<'a>);
    impl SiteJob for Extract<'_> {
        type Output = Reading;
        fn run<S: Site>(self) -> Self::Output {
            S::extract(self.0, self.1)
        }
    }
    with_site(platform, Extract(document, requested))
}
