//! What a platform's sources did lately, fleet-wide: the evidence that orders every lookup's
//! plan (see `crate::platform::standing`).
//!
//! Each lookup and canary probe tells [`SourceEvidence`] when a source read (a profile, an
//! absence, any answer about the user) and when a source refused us, on which route and for
//! which name (kept as a digest). A read starts the source's streak again. From the streak
//! two rules follow, both in [`SourceEvidence::standing`]:
//!
//! - **refused everywhere**: since it last read, the source was refused on every route of the
//!   platform, at least [`WIDE_REFUSALS`] times, while another of the platform's sources was
//!   not (when every source is, the routes are to blame: they rest). Its refusals are the source's, not the
//!   route's: they rest no proxy (the rests they caused are lifted), and the lookup goes on
//!   to the next source at once.
//! - **demoted**: at least [`DEMOTE_REFUSALS`] refusals over at least [`DEMOTE_NAMES`]
//!   distinct names since it last read, while another source of the platform read within
//!   [`WINDOW`]. Lookups ask it after the others, except one re-probe per
//!   `reprobe_every` for the fleet ([`SourceEvidence::claim_reprobe`]); it is restored by its
//!   first read.
//!
//! The replica's own record answers every question at once (no Redis round trip per lookup);
//! with Redis, [`SourceEvidence::sync`] merges the replica's new evidence into the fleet's
//! (`scripts/sources.lua`, one call for every source of the platform) and takes the fleet's
//! back, at most once per [`SYNC_EVERY`]. Redis holds refusal counts, a route mask, name
//! digests and a timestamp per source label: no names, no proxy URLs.

use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use redis::Script;
use sha2::{Digest, Sha256};

use super::Fleet;
use super::keys::Keys;

/// Refusals since its last read that demote a source (with [`DEMOTE_NAMES`] names).
pub const DEMOTE_REFUSALS: u32 = 10;
/// Distinct names those refusals must cover.
pub const DEMOTE_NAMES: usize = 3;
/// Refusals on every route that make them the source's (two: the direct route is one route).
pub const WIDE_REFUSALS: u32 = 2;
/// How recently another source must have read for a refused one to be demoted, and how long
/// the fleet keeps the evidence of a platform nobody looks up.
pub const WINDOW: Duration = Duration::from_secs(600);
/// How often a replica merges its evidence with the fleet's.
pub const SYNC_EVERY: Duration = Duration::from_secs(1);
/// Name digests kept per source (enough for every rule).
const MAX_NAMES: usize = 8;
/// Routes told apart (the rest count as the last one).
const MAX_ROUTES: usize = 31;

static MERGE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("scripts/sources.lua")));

/// Where a source stands by the evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Asked in its configured place; its refusals are the route's.
    Preferred,
    /// Refused on every route for several names: asked in its place, but a refusal rests no
    /// proxy and hands the lookup to the next source at once.
    RefusedEverywhere,
    /// Asked after the others (but for re-probes); its refusals rest no proxy.
    Demoted,
}

impl Standing {
    /// Its label in `/status` and `profile_lookup_source_standing`.
    pub fn label(self) -> &'static str {
        match self {
            Standing::Preferred => "preferred",
            Standing::RefusedEverywhere => "refused",
            Standing::Demoted => "demoted",
        }
    }

    /// Whether a refusal of the source is the source's: no proxy rests for it.
    pub fn is_source_wide(self) -> bool {
        self != Standing::Preferred
    }
}

/// One source's streak since its last read, as this replica knows it.
#[derive(Clone, Debug, Default)]
struct Streak {
    refused: u32,
    routes: u32,
    names: Vec<String>,
    /// Distinct names by the fleet's count (may exceed the digests kept here).
    fleet_names: usize,
    read_at: Option<Instant>,
    demoted_since: Option<Instant>,
    next_probe: Option<Instant>,
}

impl Streak {
    fn names(&self) -> usize {
        self.names.len().max(self.fleet_names)
    }

    fn restart(&mut self, now: Instant) {
        *self = Streak {
            read_at: Some(now),
            ..Streak::default()
        };
    }

    fn refuse(&mut self, routes: u32, digest: &str) {
        self.refused = self.refused.saturating_add(1);
        self.routes |= routes;
        if self.names.len() < MAX_NAMES && !self.names.iter().any(|n| n == digest) {
            self.names.push(digest.to_owned());
        }
    }
}

/// What this replica learned since its last merge with the fleet.
#[derive(Debug, Default)]
struct Pending {
    read: bool,
    streak: Streak,
}

#[derive(Debug, Default)]
struct State {
    sources: Vec<Streak>,
    pending: Vec<Pending>,
    synced: Option<Instant>,
}

/// The evidence about one platform's sources (see the module's documentation).
#[derive(Debug)]
pub struct SourceEvidence {
    fleet: Fleet,
    platform: &'static str,
    labels: &'static [&'static str],
    /// The mask with a bit for every route of the platform.
    every_route: u32,
    /// The sources whose not being refused everywhere tells a source's refusal from the
    /// routes' (a bit per label): every one the plan asks by name (see
    /// [`SourceEvidence::witnessed_by`]); any other counts only once it read.
    witnesses: u32,
    reprobe_every: Duration,
    state: Mutex<State>,
}

impl SourceEvidence {
    /// No evidence yet about `labels`, the sources of `platform`, which goes out on `routes`
    /// routes (its proxies, or 1: the direct route); a demoted source is re-probed once per
    /// `reprobe_every` for the fleet.
    pub fn new(
        fleet: &Fleet,
        platform: &'static str,
        labels: &'static [&'static str],
        routes: usize,
        reprobe_every: Duration,
    ) -> Self {
        let routes = routes.clamp(1, MAX_ROUTES);
        Self {
            fleet: fleet.clone(),
            platform,
            labels,
            every_route: u32::MAX >> (32 - routes),
            witnesses: u32::MAX,
            reprobe_every,
            state: Mutex::new(State {
                sources: vec![Streak::default(); labels.len()],
                pending: labels.iter().map(|_| Pending::default()).collect(),
                synced: None,
            }),
        }
    }

    /// Only the sources named in `witnesses` (those a plan always asks when it gets to them)
    /// speak for the routes by not being refused; a source left out of the plan, or asked only
    /// for some names (by an id learned earlier), counts only once it read lately.
    #[must_use]
    pub fn witnessed_by<'a>(mut self, witnesses: impl IntoIterator<Item = &'a str>) -> Self {
        self.witnesses = witnesses
            .into_iter()
            .filter_map(|w| self.index(w))
            .filter(|&at| at < 32)
            .fold(0, |mask, at| mask | (1 << at));
        self
    }

    fn index(&self, source: &str) -> Option<usize> {
        self.labels.iter().position(|l| *l == source)
    }

    /// `source` read (a lookup's or a probe's answer about the user): its streak starts
    /// again, and a demoted source is restored.
    pub fn read(&self, source: &str) {
        let Some(at) = self.index(source) else { return };
        let mut state = lock(&self.state);
        let now = Instant::now();
        let before: Vec<Standing> = (0..self.labels.len())
            .map(|i| self.judge(&state, i, now))
            .collect();
        state.sources[at].restart(now);
        state.pending[at] = Pending {
            read: true,
            streak: Streak::default(),
        };
        // Another source reading may be what demotes a refused one.
        for (i, before) in before.into_iter().enumerate() {
            self.settle(&mut state, i, before);
        }
    }

    /// `source` refused us on route `route` (its position; 0 for the direct route) for `name`.
    pub fn refused(&self, source: &str, route: usize, name: &str) {
        let Some(at) = self.index(source) else { return };
        let bit = 1u32 << route.min(MAX_ROUTES - 1);
        let digest = digest(name);
        let mut state = lock(&self.state);
        let before = self.judge(&state, at, Instant::now());
        state.sources[at].refuse(bit, &digest);
        state.pending[at].streak.refuse(bit, &digest);
        self.settle(&mut state, at, before);
    }

    /// Where `source` stands now (an unknown source is preferred).
    pub fn standing(&self, source: &str) -> Standing {
        let Some(at) = self.index(source) else {
            return Standing::Preferred;
        };
        let state = lock(&self.state);
        self.judge(&state, at, Instant::now())
    }

    /// How long `source` has been demoted, if it is.
    pub fn demoted_for(&self, source: &str) -> Option<Duration> {
        let at = self.index(source)?;
        let since = lock(&self.state).sources[at].demoted_since?;
        Some(since.elapsed())
    }

    /// Whether this lookup re-probes demoted `source` (asks it in its place): at most once per
    /// `reprobe_every` for the fleet (with Redis, the replica that claims the turn first).
    pub async fn claim_reprobe(&self, source: &str) -> bool {
        let Some(at) = self.index(source) else {
            return false;
        };
        let now = Instant::now();
        {
            let mut state = lock(&self.state);
            let streak = &mut state.sources[at];
            if streak.demoted_since.is_none() || streak.next_probe.is_some_and(|t| t > now) {
                return false;
            }
            streak.next_probe = Some(now + self.reprobe_every);
        }
        match self.fleet.keys() {
            Some(keys) => {
                let key = format!("{}:p:{source}", keys.source_evidence(self.platform));
                self.fleet
                    .claim_turn(key, self.reprobe_every)
                    .await
                    .unwrap_or(true)
            }
            None => true,
        }
    }

    /// Merges this replica's evidence with the fleet's, at most once per [`SYNC_EVERY`] (and
    /// never without Redis): one call for every source of the platform.
    pub async fn sync(&self) {
        let Some(keys) = self.fleet.keys() else {
            return;
        };
        let now = Instant::now();
        let sent: Vec<Pending> = {
            let mut state = lock(&self.state);
            if state
                .synced
                .is_some_and(|t| now.duration_since(t) < SYNC_EVERY)
            {
                return;
            }
            state.synced = Some(now);
            state.pending.iter_mut().map(std::mem::take).collect()
        };
        let key = keys.source_evidence(self.platform);
        let mut args: Vec<String> = vec![super::expiry_ms(WINDOW).to_string()];
        for (label, p) in self.labels.iter().zip(&sent) {
            args.push((*label).to_owned());
            args.push(if p.read { "1" } else { "0" }.to_owned());
            args.push(p.streak.refused.to_string());
            args.push(p.streak.routes.to_string());
            args.push(p.streak.names.join(","));
        }
        let merged: Option<Vec<i64>> = self
            .fleet
            .run("source_evidence", |mut conn| async move {
                let mut call = MERGE.prepare_invoke();
                call.key(key);
                for arg in args {
                    call.arg(arg);
                }
                call.invoke_async(&mut conn).await
            })
            .await;
        let mut state = lock(&self.state);
        let Some(merged) = merged.filter(|m| m.len() == 4 * self.labels.len()) else {
            // Redis unusable: what was sent goes back into the next merge.
            for (pending, old) in state.pending.iter_mut().zip(sent) {
                pending.read |= old.read;
                pending.streak.refused += old.streak.refused;
                pending.streak.routes |= old.streak.routes;
                for name in old.streak.names {
                    pending.streak.refuse(0, &name);
                    pending.streak.refused -= 1;
                }
            }
            return;
        };
        for (at, fleet) in merged.chunks_exact(4).enumerate() {
            if state.pending[at].read {
                // It read here while the call was out: this replica's record is newer.
                continue;
            }
            let before = self.judge(&state, at, now);
            let streak = &mut state.sources[at];
            streak.refused = u32::try_from(fleet[0]).unwrap_or(0);
            streak.routes = u32::try_from(fleet[1]).unwrap_or(0);
            streak.fleet_names = usize::try_from(fleet[2]).unwrap_or(0);
            streak.read_at = u64::try_from(fleet[3])
                .ok()
                .and_then(|ms| now.checked_sub(Duration::from_millis(ms)));
            if streak.refused == 0 {
                // It read on another replica since: its streak starts again here too.
                streak.names.clear();
                streak.demoted_since = None;
            }
            // What this replica learned while the call was out.
            let newer = state.pending[at].streak.clone();
            let streak = &mut state.sources[at];
            streak.refused += newer.refused;
            streak.routes |= newer.routes;
            for name in &newer.names {
                if streak.names.len() < MAX_NAMES && !streak.names.contains(name) {
                    streak.names.push(name.clone());
                }
            }
            self.settle(&mut state, at, before);
        }
    }

    /// Where source `at` stands by `state` as of `now`.
    fn judge(&self, state: &State, at: usize, now: Instant) -> Standing {
        let streak = &state.sources[at];
        if streak.demoted_since.is_some() {
            return Standing::Demoted;
        }
        let other_read = state
            .sources
            .iter()
            .enumerate()
            .any(|(i, s)| i != at && s.read_at.is_some_and(|t| now.duration_since(t) < WINDOW));
        if streak.refused >= DEMOTE_REFUSALS && streak.names() >= DEMOTE_NAMES && other_read {
            return Standing::Demoted;
        }
        // A refusal on every route is the source's only while some other source is not
        // refused everywhere too (a witness of the plan, or any source that read lately): when
        // every source is, nothing tells the source from the routes (a banned pool, a gateway
        // whose every exit is refused), and the routes rest.
        let wide = |s: &Streak| {
            s.refused >= WIDE_REFUSALS && s.routes & self.every_route == self.every_route
        };
        let read_lately = |s: &Streak| s.read_at.is_some_and(|t| now.duration_since(t) < WINDOW);
        let witness = |i: usize| i < 32 && self.witnesses & (1 << i) != 0;
        let another_unrefused = state
            .sources
            .iter()
            .enumerate()
            .any(|(i, s)| i != at && ((witness(i) && !wide(s)) || read_lately(s)));
        if wide(streak) && another_unrefused {
            return Standing::RefusedEverywhere;
        }
        Standing::Preferred
    }

    /// Records a change of source `at`'s standing from `before`: the demotion's start, the
    /// metric and the log.
    fn settle(&self, state: &mut State, at: usize, before: Standing) {
        let now = Instant::now();
        let after = self.judge(state, at, now);
        let streak = &mut state.sources[at];
        if after == Standing::Demoted && streak.demoted_since.is_none() {
            streak.demoted_since = Some(now);
            streak.next_probe = Some(now + self.reprobe_every);
        }
        if after != Standing::Demoted {
            streak.demoted_since = None;
        }
        if after != before {
            self.announce(at, after);
        }
    }

    fn announce(&self, at: usize, standing: Standing) {
        let (platform, source) = (self.platform, self.labels[at]);
        crate::telemetry::source_standing(platform, source, standing.label());
        match standing {
            Standing::Demoted => tracing::warn!(
                platform,
                source,
                "this source was refused for every recent name while another read: lookups ask it last"
            ),
            Standing::RefusedEverywhere => tracing::warn!(
                platform,
                source,
                "this source is refused on every route: its refusals rest no proxy"
            ),
            Standing::Preferred => {
                tracing::info!(
                    platform,
                    source,
                    "this source reads again: asked in its place"
                );
            }
        }
    }
}

/// A name as the evidence keeps it: 16 hex digits of its SHA-256, never the name.
fn digest(name: &str) -> String {
    let hash = Sha256::digest(name.as_bytes());
    hash[..8].iter().map(|b| format!("{b:02x}")).collect()
}

impl Keys {
    /// The evidence about `platform`'s sources (a hash) and its re-probe turns (`…:p:SOURCE`).
    pub fn source_evidence(&self, platform: &str) -> String {
        self.tag("s", &[platform])
    }
}

impl Fleet {
    /// Claims a turn named `key` for `every`: true for the first caller in that time, false
    /// for the others; `None` when Redis cannot be used.
    pub async fn claim_turn(&self, key: String, every: Duration) -> Option<bool> {
        let set: Option<String> = self
            .run("claim_turn", |mut conn| async move {
                redis::cmd("SET")
                    .arg(key)
                    .arg("1")
                    .arg("NX")
                    .arg("PX")
                    .arg(super::expiry_ms(every))
                    .query_async(&mut conn)
                    .await
            })
            .await?;
        Some(set.is_some())
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(routes: usize) -> SourceEvidence {
        SourceEvidence::new(
            &Fleet::local(),
            "photo-share",
            &["json", "page"],
            routes,
            Duration::from_secs(60),
        )
    }

    #[tokio::test]
    async fn every_source_refused_everywhere_blames_the_routes() {
        let e = evidence(1);
        for name in ["a", "b"] {
            e.refused("json", 0, name);
        }
        assert_eq!(e.standing("json"), Standing::RefusedEverywhere);
        for name in ["a", "b"] {
            e.refused("page", 0, name);
        }
        // Both refused on the one route: nothing tells a source from the route.
        assert_eq!(e.standing("json"), Standing::Preferred);
        assert_eq!(e.standing("page"), Standing::Preferred);
    }

    /// A source the plan does not ask, or asks only by an id learned earlier (photo-share's
    /// `graphql`), does not speak for the routes until it reads.
    #[tokio::test]
    async fn a_source_that_is_not_a_witness_speaks_for_the_routes_only_once_it_read() {
        let e = SourceEvidence::new(
            &Fleet::local(),
            "photo-share",
            &["json", "page", "graphql"],
            1,
            Duration::from_secs(60),
        )
        .witnessed_by(["json", "page"]);
        for source in ["json", "page"] {
            for name in ["a", "b"] {
                e.refused(source, 0, name);
            }
        }
        assert_eq!(e.standing("json"), Standing::Preferred);
        assert_eq!(e.standing("page"), Standing::Preferred);
        e.read("graphql");
        assert_eq!(e.standing("json"), Standing::RefusedEverywhere);
    }

    #[tokio::test]
    async fn a_source_the_plan_does_not_ask_is_no_evidence() {
        let e = evidence(1).witnessed_by(["json"]);
        for name in ["a", "b"] {
            e.refused("json", 0, name);
        }
        assert_eq!(e.standing("json"), Standing::Preferred);
    }

    #[tokio::test]
    async fn refused_on_every_route_is_the_sources() {
        let e = evidence(3);
        e.refused("json", 0, "a");
        e.refused("json", 1, "a");
        assert_eq!(
            e.standing("json"),
            Standing::Preferred,
            "two routes of three"
        );
        e.refused("json", 2, "a");
        assert_eq!(e.standing("json"), Standing::RefusedEverywhere);
        e.read("json");
        assert_eq!(e.standing("json"), Standing::Preferred);
        // The direct route: twice.
        let e = evidence(1);
        e.refused("json", 0, "a");
        assert_eq!(e.standing("json"), Standing::Preferred);
        e.refused("json", 0, "b");
        assert_eq!(e.standing("json"), Standing::RefusedEverywhere);
    }

    #[tokio::test]
    async fn demoted_after_ten_refusals_over_three_names_while_another_reads() {
        let e = evidence(1);
        for i in 0..12 {
            e.refused("json", 0, ["a", "b", "c"][i % 3]);
        }
        assert_eq!(
            e.standing("json"),
            Standing::RefusedEverywhere,
            "no other source read"
        );
        e.read("page");
        assert_eq!(e.standing("json"), Standing::Demoted);
        assert!(e.demoted_for("json").is_some());
        // One re-probe per interval.
        assert!(!e.claim_reprobe("json").await, "not before the interval");
        e.read("json");
        assert_eq!(e.standing("json"), Standing::Preferred);
        assert!(e.demoted_for("json").is_none());
        let e = evidence(1);
        e.read("page");
        for _ in 0..12 {
            e.refused("json", 0, "a");
        }
        assert_ne!(
            e.standing("json"),
            Standing::Demoted,
            "one name is not enough"
        );
    }

    #[test]
    fn names_are_kept_as_digests() {
        assert_eq!(digest("lumen.trails").len(), 16);
        assert_ne!(digest("lumen.trails"), digest("lumen.trail"));
    }
}
