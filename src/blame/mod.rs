//! Blame: who a refusal, a failure or a silence belongs to, decided in one place, by
//! comparison.
//!
//! One refused request says nothing about whom to blame: the platform may refuse that name (an
//! age gate), that exit address (a burnt proxy, a gateway session), that document (a retired
//! endpoint) or everyone (a throttle). Only comparison across names, routes and sources in
//! the same window tells which. Every attempt's outcome is recorded here ([`Blame::read`],
//! [`Blame::judge`]) against its name (a digest), its route, its source and its platform, in a
//! window of `blame.window_seconds`, merged fleet-wide through the shared-state seam
//! (`fleet::evidence`: digests and positions, no names, no credentials). Missing evidence (it
//! expired, or Redis lost it) is unknown, never a read.
//!
//! The rules are pure functions over the window ([`rules`], tested as a table); the fetch
//! plan, the routes and the sources' standing act on the [`Party`] they name and decide
//! nothing themselves:
//!
//! | Party | What the fetcher does |
//! |---|---|
//! | name | stops: 403 `profile_restricted` for a login wall, else 429; nothing rests, no source learns, the breaker does not count; the answer is remembered for the negative TTL |
//! | route | rests the route (retires a gateway session) and asks again through another |
//! | proxy | the same; the platform was never asked |
//! | source | demotes the source and asks the next one on the same route at once (no rest, no backoff) |
//! | platform | backoff (the SPEC's retries), routes rest, the breaker counts |
//! | nobody | moves on (a silence not worth a rest) |
//! | unknown | moves on; rests at most one route for the lookup, and only once another route read the name (the same comparison, inside one lookup) |

pub mod outcome;
pub mod rules;
pub mod window;

use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use outcome::{Kind, Record, RouteId, name_digest};
pub use rules::{Attempt, Party, Scope};
use window::Window;

use crate::config::BlameConfig;
use crate::fleet::Fleet;
use crate::registry::Platform;

/// Whether a block's reason is a login wall: the platform showing a profile to logged-in
/// viewers only, which for one name alone is that profile's restriction (403
/// `profile_restricted`), not a refusal of the client.
pub fn is_login_wall(reason: &str) -> bool {
    reason.contains("login")
}

/// How often a replica merges its records with the fleet's.
pub const SYNC_EVERY: Duration = Duration::from_secs(1);

/// The blame of one platform: its window of evidence (this replica's, and the fleet's) and
/// the rules' settings.
#[derive(Debug)]
pub struct Blame {
    platform: Platform,
    fleet: Fleet,
    rules: BlameConfig,
    /// The sources the plan asks, by index in the platform's registry line.
    plan: Vec<u8>,
    /// How many routes the platform goes out on (a gateway counts as many).
    routes: usize,
    /// This replica's random id in the fleet's records.
    replica: u64,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// This replica's records.
    own: Window,
    /// The other replicas' records, as of the last merge.
    fleet: Window,
    /// Own records not merged yet.
    pending: Vec<Record>,
    synced: Option<Instant>,
}

impl Blame {
    /// The blame of `platform`, whose plan asks the sources labelled `plan`, going out on
    /// `routes` routes.
    pub fn new(
        platform: Platform,
        plan: &[&str],
        routes: usize,
        rules: &BlameConfig,
        fleet: &Fleet,
    ) -> Self {
        let plan = plan
            .iter()
            .filter_map(|label| platform.sources().iter().position(|s| s == label))
            .filter_map(|at| u8::try_from(at).ok())
            .collect();
        Self {
            platform,
            fleet: fleet.clone(),
            rules: rules.clone(),
            plan,
            routes,
            replica: fastrand::u64(..),
            state: Mutex::new(State::default()),
        }
    }

    fn source_index(&self, source: &str) -> Option<u8> {
        self.platform
            .sources()
            .iter()
            .position(|s| *s == source)
            .and_then(|at| u8::try_from(at).ok())
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn record(&self, name: &str, route: RouteId, source: &str, kind: Kind) -> Option<Attempt> {
        let source = self.source_index(source)?;
        let record = Record {
            at: Instant::now(),
            name: name_digest(name),
            route,
            source,
            kind,
        };
        let mut state = self.state();
        state.own.push(record);
        if state.pending.len() < window::MAX_RECORDS {
            state.pending.push(record);
        }
        Some(Attempt {
            name: record.name,
            route,
            source,
            kind,
        })
    }

    /// `source` read (answered about the user) for `name` on `route`.
    pub fn read(&self, name: &str, route: RouteId, source: &str) {
        self.record(name, route, source, Kind::Read);
    }

    /// Records that `source` came to `kind` for `name` on `route` (`signal`: the block's
    /// reason, or what failed, for the metric), and says who it belongs to.
    pub fn judge(
        &self,
        name: &str,
        route: RouteId,
        source: &str,
        kind: Kind,
        signal: &'static str,
    ) -> Party {
        let Some(attempt) = self.record(name, route, source, kind) else {
            return Party::Unknown;
        };
        let party = {
            let mut state = self.state();
            let now = Instant::now();
            let window = self.rules.window();
            state.own.expire(now, window);
            state.fleet.expire(now, window);
            let mut all = Window::default();
            all.merge(state.fleet.records().copied());
            all.merge(state.own.records().copied());
            let scope = Scope {
                sources: &self.plan,
                routes: self.routes,
            };
            rules::decide(&attempt, &all, &self.rules, scope)
        };
        crate::telemetry::blame(self.platform.as_str(), party.label(), signal);
        party
    }

    /// Merges this replica's records with the fleet's, at most once per [`SYNC_EVERY`] (never
    /// without Redis; records Redis could not take are offered again next time).
    pub async fn sync(&self) {
        if self.fleet.keys().is_none() {
            return;
        }
        let now = Instant::now();
        let sent: Vec<Record> = {
            let mut state = self.state();
            if state
                .synced
                .is_some_and(|t| now.duration_since(t) < SYNC_EVERY)
            {
                return;
            }
            state.synced = Some(now);
            std::mem::take(&mut state.pending)
        };
        let now_ms = unix_ms();
        let encoded = sent
            .iter()
            .map(|r| encode(r, now, now_ms, self.replica))
            .collect();
        let merged = self
            .fleet
            .evidence_merge(self.platform.as_str(), encoded, self.rules.window())
            .await;
        let mut state = self.state();
        let Some(merged) = merged else {
            let mut kept = sent;
            kept.append(&mut state.pending);
            kept.truncate(window::MAX_RECORDS);
            state.pending = kept;
            return;
        };
        let mut fleet = Window::default();
        fleet.merge(
            merged
                .iter()
                .filter_map(|line| decode(line, now, now_ms, self.replica)),
        );
        state.fleet = fleet;
    }
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A record as the fleet keeps it (see `fleet::evidence`).
fn encode(r: &Record, now: Instant, now_ms: u64, replica: u64) -> String {
    let age = u64::try_from(now.saturating_duration_since(r.at).as_millis()).unwrap_or(0);
    format!(
        "{},{},{},{},{},{:016x},{:016x}",
        now_ms.saturating_sub(age),
        r.route.position,
        r.route.session,
        r.source,
        r.kind.label(),
        r.name,
        replica
    )
}

/// A fleet record of another replica; `None` for this replica's own or a malformed one.
fn decode(line: &str, now: Instant, now_ms: u64, replica: u64) -> Option<Record> {
    let mut parts = line.split(',');
    let ms: u64 = parts.next()?.parse().ok()?;
    let position: u16 = parts.next()?.parse().ok()?;
    let session: u32 = parts.next()?.parse().ok()?;
    let source: u8 = parts.next()?.parse().ok()?;
    let kind = Kind::from_label(parts.next()?)?;
    let name = u64::from_str_radix(parts.next()?, 16).ok()?;
    let from = u64::from_str_radix(parts.next()?, 16).ok()?;
    if from == replica || parts.next().is_some() {
        return None;
    }
    let age = Duration::from_millis(now_ms.saturating_sub(ms));
    Some(Record {
        at: now.checked_sub(age)?,
        name,
        route: RouteId { position, session },
        source,
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_travels_the_fleet_whole_and_comes_back_to_no_one_but_the_others() {
        let now = Instant::now();
        let record = Record {
            at: now - Duration::from_secs(3),
            name: name_digest("a"),
            route: RouteId::session(2, "s"),
            source: 1,
            kind: Kind::Refused,
        };
        let line = encode(&record, now, 1_700_000_000_000, 7);
        assert_eq!(decode(&line, now, 1_700_000_000_000, 7), None, "our own");
        let back = decode(&line, now, 1_700_000_000_000, 8).unwrap();
        assert_eq!(
            (back.name, back.route, back.source, back.kind),
            (record.name, record.route, 1, Kind::Refused)
        );
        assert!(back.at <= now - Duration::from_secs(2));
        for odd in [
            "",
            "1,2,3",
            "x,0,0,0,read,00,01",
            "1,0,0,0,nope,00,01",
            "1,0,0,0,read,00,01,extra",
        ] {
            assert_eq!(decode(odd, now, 1_700_000_000_000, 8), None, "{odd:?}");
        }
    }

    #[test]
    fn an_unknown_source_is_never_blamed() {
        let blame = Blame::new(
            Platform::PhotoShare,
            &["page", "json"],
            1,
            &crate::config::Settings::default().blame,
            &Fleet::local(),
        );
        assert_eq!(
            blame.judge("a", RouteId::direct(0), "nope", Kind::Refused, "http_429"),
            Party::Unknown
        );
    }
}
