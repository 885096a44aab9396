//! A source's standing: whether lookups ask it in its configured place, or last.
//!
//! The canary (which sits above the platform layer) finds a source whose documents no longer
//! read (`changed` two rounds in a row) and demotes it here; the fetcher reads the
//! standing when it orders the plan of each lookup, so that callers get answers from the
//! platform's other source while an engineer fixes the reader. One `ok` round restores it.
//! Nothing here knows what a canary is: it is one bit per registered source.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU32, Ordering};

use super::Platform;
use super::site::Document;

/// Which of one platform's sources are demoted; read on every uncached lookup (one atomic
/// load), written by the canary once a round.
#[derive(Debug)]
pub struct Standing {
    platform: Platform,
    /// Bit `i` set: the platform's `i`-th registered source (`Platform::sources`) is demoted.
    demoted: AtomicU32,
}

impl Standing {
    /// Every source of `platform` in its place.
    pub fn new(platform: Platform) -> Self {
        Self {
            platform,
            demoted: AtomicU32::new(0),
        }
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
        let mask = self.demoted.load(Ordering::Relaxed);
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

    #[test]
    fn a_demoted_source_goes_last_and_comes_back() {
        let standing = Standing::new(Platform::ShortVideo);
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
        let standing = Standing::new(Platform::ShortVideo);
        standing.set("page", true);
        standing.set("embed", true);
        assert_eq!(
            &*standing.order(&[Doc::Page, Doc::Embed]),
            &[Doc::Page, Doc::Embed]
        );
    }
}
