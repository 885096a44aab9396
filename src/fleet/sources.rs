//! Which of a platform's sources are demoted, fleet-wide: what orders every lookup's plan (see
//! `crate::platform::standing`).
//!
//! Blame (`crate::blame`) decides when a refusal, a failure or an unreadable answer is a
//! source's; it then demotes the source here ([`SourceEvidence::demote`]): lookups ask it after
//! the others, except one re-probe per `reprobe_every` for the fleet
//! ([`SourceEvidence::claim_reprobe`]), and its first read restores it
//! ([`SourceEvidence::read`]). Only a read restores: evidence that is missing (Redis emptied,
//! the key expired) is unknown, and a source this replica demoted stays demoted until a read
//! is seen, here or in the fleet.
//!
//! The replica's own record answers every question at once (no Redis round trip per lookup);
//! with Redis, [`SourceEvidence::sync`] merges the replica's news into the fleet's
//! (`scripts/sources.lua`, one call for every source of the platform) and takes the fleet's
//! back, at most once per [`SYNC_EVERY`]. Redis holds, per source label, a demotion mark and
//! the time of its last read: no names, no proxy URLs.

use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use redis::Script;

use super::Fleet;
use super::keys::Keys;

/// How long the fleet keeps the marks of a platform nobody looks up.
pub const WINDOW: Duration = Duration::from_secs(600);
/// What a demotion is sent to the fleet as: a refusal count no streak of refusals reaches.
const DEMOTED_MARK: u32 = 1 << 20;
/// How often a replica merges its evidence with the fleet's.
pub const SYNC_EVERY: Duration = Duration::from_secs(1);

static MERGE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("scripts/sources.lua")));

/// Where a source stands by the evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Asked in its configured place.
    Preferred,
    /// Asked after the others (but for re-probes), until it reads.
    Demoted,
}

impl Standing {
    /// Its label in `/status` and `profile_lookup_source_standing`.
    pub fn label(self) -> &'static str {
        match self {
            Standing::Preferred => "preferred",
            Standing::Demoted => "demoted",
        }
    }
}

/// One source's marks, as this replica knows them.
#[derive(Clone, Debug, Default)]
struct Marks {
    demoted_since: Option<Instant>,
    next_probe: Option<Instant>,
}

/// What this replica learned since its last merge with the fleet.
#[derive(Debug, Default)]
struct Pending {
    read: bool,
    demoted: bool,
}

#[derive(Debug, Default)]
struct State {
    sources: Vec<Marks>,
    pending: Vec<Pending>,
    synced: Option<Instant>,
}

/// The demotions of one platform's sources (see the module's documentation).
#[derive(Debug)]
pub struct SourceEvidence {
    fleet: Fleet,
    platform: &'static str,
    labels: &'static [&'static str],
    reprobe_every: Duration,
    state: Mutex<State>,
}

impl SourceEvidence {
    /// No demotion yet among `labels`, the sources of `platform`; a demoted source is
    /// re-probed once per `reprobe_every` for the fleet.
    pub fn new(
        fleet: &Fleet,
        platform: &'static str,
        labels: &'static [&'static str],
        reprobe_every: Duration,
    ) -> Self {
        Self {
            fleet: fleet.clone(),
            platform,
            labels,
            reprobe_every,
            state: Mutex::new(State {
                sources: vec![Marks::default(); labels.len()],
                pending: labels.iter().map(|_| Pending::default()).collect(),
                synced: None,
            }),
        }
    }

    fn index(&self, source: &str) -> Option<usize> {
        self.labels.iter().position(|l| *l == source)
    }

    /// `source` read (a lookup's or a probe's answer about the user): a demoted source is
    /// restored.
    pub fn read(&self, source: &str) {
        let Some(at) = self.index(source) else { return };
        let mut state = lock(&self.state);
        let was = state.sources[at].demoted_since.is_some();
        state.sources[at] = Marks::default();
        state.pending[at] = Pending {
            read: true,
            demoted: false,
        };
        if was {
            self.announce(at, Standing::Preferred);
        }
    }

    /// Blame found `source` at fault: it is demoted (asked last) until it reads.
    pub fn demote(&self, source: &str) {
        let Some(at) = self.index(source) else { return };
        let mut state = lock(&self.state);
        self.mark_demoted(&mut state, at, Instant::now());
        state.pending[at].demoted = true;
    }

    fn mark_demoted(&self, state: &mut State, at: usize, now: Instant) {
        let marks = &mut state.sources[at];
        if marks.demoted_since.is_none() {
            marks.demoted_since = Some(now);
            marks.next_probe = Some(now + self.reprobe_every);
            self.announce(at, Standing::Demoted);
        }
    }

    /// Where `source` stands now (an unknown source is preferred).
    pub fn standing(&self, source: &str) -> Standing {
        let Some(at) = self.index(source) else {
            return Standing::Preferred;
        };
        if lock(&self.state).sources[at].demoted_since.is_some() {
            Standing::Demoted
        } else {
            Standing::Preferred
        }
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
            let marks = &mut state.sources[at];
            if marks.demoted_since.is_none() || marks.next_probe.is_some_and(|t| t > now) {
                return false;
            }
            marks.next_probe = Some(now + self.reprobe_every);
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

    /// Merges this replica's marks with the fleet's, at most once per [`SYNC_EVERY`] (and
    /// never without Redis): one call for every source of the platform. A source the fleet
    /// demoted is demoted here; one the fleet saw read after this replica demoted it is
    /// restored; a fleet that knows nothing (Redis emptied) changes nothing.
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
            let mark = if p.demoted { DEMOTED_MARK } else { 0 };
            args.push(mark.to_string());
            args.push("0".to_owned());
            args.push(String::new());
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
                pending.demoted |= old.demoted;
            }
            return;
        };
        for (at, fleet) in merged.chunks_exact(4).enumerate() {
            if state.pending[at].read {
                // It read here while the call was out: this replica's record is newer.
                continue;
            }
            let demoted_in_fleet = fleet[0] >= i64::from(DEMOTED_MARK);
            let read_ago = u64::try_from(fleet[3]).ok().map(Duration::from_millis);
            let marks = &state.sources[at];
            let read_since_demoted = match (read_ago, marks.demoted_since) {
                (Some(ago), Some(since)) => now.checked_sub(ago).is_some_and(|t| t > since),
                _ => false,
            };
            if demoted_in_fleet {
                self.mark_demoted(&mut state, at, now);
            } else if read_since_demoted {
                // Read on another replica since it was demoted here: restored.
                state.sources[at] = Marks::default();
                self.announce(at, Standing::Preferred);
            }
        }
    }

    fn announce(&self, at: usize, standing: Standing) {
        let (platform, source) = (self.platform, self.labels[at]);
        crate::telemetry::source_standing(platform, source, standing.label());
        match standing {
            Standing::Demoted => tracing::warn!(
                platform,
                source,
                "blame found this source at fault: lookups ask it last until it reads"
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

    fn evidence() -> SourceEvidence {
        SourceEvidence::new(
            &Fleet::local(),
            "photo-share",
            &["json", "page"],
            Duration::from_secs(60),
        )
    }

    #[tokio::test]
    async fn a_demoted_source_stays_demoted_until_it_reads() {
        let e = evidence();
        assert_eq!(e.standing("json"), Standing::Preferred);
        e.demote("json");
        assert_eq!(e.standing("json"), Standing::Demoted);
        assert!(e.demoted_for("json").is_some());
        // Another source reading restores nothing: only the source's own read does.
        e.read("page");
        assert_eq!(e.standing("json"), Standing::Demoted);
        assert!(!e.claim_reprobe("json").await, "not before the interval");
        e.read("json");
        assert_eq!(e.standing("json"), Standing::Preferred);
        assert!(e.demoted_for("json").is_none());
        e.demote("nope");
    }
}
