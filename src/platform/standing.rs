//! A source's standing: whether lookups ask it in its configured place, or last.
//!
//! Two things demote a source. The canary (which sits above the platform layer) finds a
//! source whose documents no longer read (`changed` two rounds in a row) and demotes it here
//! ([`Standing::set`]; one `ok` round restores it): one bit per registered source, nothing
//! here knows what a canary is. And blame (`crate::blame`), which demotes a source it found at
//! fault ([`Standing::demote`], kept fleet-wide by [`SourceEvidence`]) until it reads again.
//! The fetcher reads both when it orders the plan of each lookup, so that callers get answers
//! from the platform's other sources.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde::Serialize;
use utoipa::ToSchema;

use super::Platform;
use super::site::Document;
use crate::fleet::Fleet;
use crate::fleet::sources::{self, SourceEvidence};

/// Which of one platform's sources are demoted; read on every uncached lookup (an atomic load
/// and the evidence's local record), written by the canary once a round and by every lookup's
/// evidence.
#[derive(Debug)]
pub struct Standing {
    platform: Platform,
    /// Bit `i` set: the canary demoted the platform's `i`-th registered source
    /// (`Platform::sources`).
    demoted: AtomicU32,
    /// What lookups and probes saw of each source.
    evidence: SourceEvidence,
}

/// One source's standing as `GET /status` shows it: where lookups ask it, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct SourceStanding {
    /// The platform's label (`photo-share`).
    pub platform: String,
    /// The source (`json`, `page`, `embed`).
    pub source: String,
    /// `preferred` (asked in its place), `demoted` (blame found it at fault: asked last,
    /// re-probed once per interval, restored by a read) or `changed` (the canary found it
    /// changed twice in a row: asked last).
    pub standing: String,
    /// Why, in words.
    pub why: String,
    /// How long it has been demoted by the evidence (seconds), when it is.
    pub demoted_seconds: Option<u64>,
}

/// One route of a platform, as `GET /status` shows it (a proxy by its position, never its URL).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct RouteStanding {
    /// The platform label.
    pub platform: String,
    /// The proxy's position (`"0"`, `"1"`, …) or `"direct"`.
    pub route: String,
    /// `fixed`, `gateway` or `direct`.
    pub kind: String,
    /// `usable`, or `resting` (after blocks blame placed on it, or its own failures).
    pub standing: String,
    /// Seconds until it is usable again, while it rests.
    pub resting_seconds: Option<u64>,
}

impl Standing {
    /// Where `source` stands, and why, for `/status`.
    pub fn report(&self, source: &str) -> SourceStanding {
        let evidence = self.evidence.standing(source);
        let (standing, why) = if self.is_demoted(source) {
            (
                "changed",
                "the canary found it changed twice in a row: asked last",
            )
        } else {
            match evidence {
                sources::Standing::Preferred => ("preferred", "asked in its configured place"),
                sources::Standing::Demoted => (
                    "demoted",
                    "blame found it at fault (refused, failing or unreadable for several names while another source read): asked last, re-probed once per interval",
                ),
            }
        };
        SourceStanding {
            platform: self.platform.as_str().to_owned(),
            source: source.to_owned(),
            standing: standing.to_owned(),
            why: why.to_owned(),
            demoted_seconds: self.evidence.demoted_for(source).map(|d| d.as_secs()),
        }
    }

    /// Every source of `platform` in its place, with no evidence yet; a demoted source is
    /// re-probed once per `reprobe_every`.
    pub fn new(platform: Platform, fleet: &Fleet, reprobe_every: Duration) -> Self {
        let labels = platform.sources();
        for source in labels {
            crate::telemetry::source_standing(platform.as_str(), source, "preferred");
        }
        Self {
            platform,
            demoted: AtomicU32::new(0),
            evidence: SourceEvidence::new(fleet, platform.as_str(), labels, reprobe_every),
        }
    }

    /// The evidence of lookups and probes about the platform's sources.
    pub fn evidence(&self) -> &SourceEvidence {
        &self.evidence
    }

    /// Blame found `source` at fault: lookups ask it after the others until it reads again.
    pub fn demote(&self, source: &str) {
        self.evidence.demote(source);
    }

    /// Whether the evidence demoted `source` (refused for every recent name while another
    /// source read).
    pub fn is_refused(&self, source: &str) -> bool {
        self.evidence.standing(source) == sources::Standing::Demoted
    }

    /// `plan` as one lookup asks it, the fleet's evidence merged in first (at most once a
    /// second): a source the canary or the evidence demoted goes last, unless this lookup is
    /// the fleet's re-probe of a source the evidence demoted, which it then asks in its place.
    pub async fn order_for_lookup<'p, D: Document>(&self, plan: &'p [D]) -> Cow<'p, [D]> {
        self.evidence.sync().await;
        let mut refused = 0u32;
        for d in plan {
            if self.is_refused(d.label())
                && !self.evidence.claim_reprobe(d.label()).await
                && let Some(bit) = self.bit(d.label())
            {
                refused |= bit;
            }
        }
        self.order_with(plan, refused)
    }

    /// The bit of source `name`, if the platform has it (at most 32 sources are tracked).
    fn bit(&self, name: &str) -> Option<u32> {
        let at = self.platform.sources().iter().position(|s| *s == name)?;
        u32::try_from(at)
            .ok()
            .filter(|at| *at < 32)
            .map(|at| 1 << at)
    }

    /// Demotes source `name` (asked last) or restores it (asked in its place); an unknown name
    /// is ignored. Returns whether its standing changed.
    pub fn set(&self, name: &str, demoted: bool) -> bool {
        let Some(bit) = self.bit(name) else {
            return false;
        };
        let before = if demoted {
            self.demoted.fetch_or(bit, Ordering::Relaxed)
        } else {
            self.demoted.fetch_and(!bit, Ordering::Relaxed)
        };
        (before & bit != 0) != demoted
    }

    /// Whether source `name` is demoted.
    pub fn is_demoted(&self, name: &str) -> bool {
        self.bit(name)
            .is_some_and(|bit| self.demoted.load(Ordering::Relaxed) & bit != 0)
    }

    /// `plan` as one lookup asks it: the sources in their configured order, a demoted one
    /// after every other (demoted ones keep their order among themselves). Borrowed as it is
    /// when nothing is demoted, which is almost always.
    pub fn order<'p, D: Document>(&self, plan: &'p [D]) -> Cow<'p, [D]> {
        self.order_with(plan, 0)
    }

    /// [`Standing::order`] with the sources of `also` demoted too.
    fn order_with<'p, D: Document>(&self, plan: &'p [D], also: u32) -> Cow<'p, [D]> {
        let mask = self.demoted.load(Ordering::Relaxed) | also;
        let demoted = |d: &D| self.bit(d.label()).is_some_and(|bit| mask & bit != 0);
        if mask == 0 || !plan.iter().any(demoted) {
            return Cow::Borrowed(plan);
        }
        let (last, first): (Vec<D>, Vec<D>) = plan.iter().partition(|d| demoted(d));
        Cow::Owned(first.into_iter().chain(last).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::short_video::site::Doc;

    fn standing() -> Standing {
        Standing::new(
            Platform::ShortVideo,
            &Fleet::local(),
            Duration::from_secs(60),
        )
    }

    #[tokio::test]
    async fn a_source_blame_demoted_goes_last_but_for_its_reprobe() {
        let standing = Standing::new(Platform::ShortVideo, &Fleet::local(), Duration::ZERO);
        let plan = [Doc::Page, Doc::Embed];
        standing.demote("page");
        assert!(standing.is_refused("page"));
        // A re-probe interval of zero: every lookup is the re-probe.
        assert_eq!(&*standing.order_for_lookup(&plan).await, &plan);
        let standing = Standing::new(
            Platform::ShortVideo,
            &Fleet::local(),
            Duration::from_secs(3600),
        );
        standing.demote("page");
        assert_eq!(
            &*standing.order_for_lookup(&plan).await,
            &[Doc::Embed, Doc::Page]
        );
        standing.evidence().read("page");
        assert_eq!(&*standing.order_for_lookup(&plan).await, &plan);
    }

    #[test]
    fn a_demoted_source_goes_last_and_comes_back() {
        let standing = standing();
        let plan = [Doc::Page, Doc::Embed];
        assert!(matches!(standing.order(&plan), Cow::Borrowed(_)));
        assert!(standing.set("page", true));
        assert!(!standing.set("page", true), "already demoted");
        assert!(standing.is_demoted("page") && !standing.is_demoted("embed"));
        assert_eq!(&*standing.order(&plan), &[Doc::Embed, Doc::Page]);
        // A plan without the demoted source is as configured.
        assert!(matches!(standing.order(&[Doc::Embed]), Cow::Borrowed(_)));
        assert!(standing.set("page", false));
        assert_eq!(&*standing.order(&plan), &plan);
        assert!(!standing.set("nope", true) && !standing.is_demoted("nope"));
    }

    #[test]
    fn every_source_demoted_keeps_the_configured_order() {
        let standing = standing();
        standing.set("page", true);
        standing.set("embed", true);
        assert_eq!(
            &*standing.order(&[Doc::Page, Doc::Embed]),
            &[Doc::Page, Doc::Embed]
        );
    }
}
