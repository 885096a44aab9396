//! The canary's board: the last verdict of each source, what `/status` shows, what the fleet
//! shares, and what turns into the sources' standing and the metrics.
//!
//! Each round's results are recorded here ([`Board::record`]); with Redis, the replica that
//! ran the round publishes the board ([`Board::encode`]) and the others adopt it
//! ([`Board::adopt`]), so the whole fleet shows one board and orders its lookups alike.
//!
//! A source is **demoted** (lookups ask it after the platform's other sources) once it was
//! `changed` in [`DEMOTE_AFTER`] rounds in a row, and restored by its next `ok` round. A round
//! in which the source was `blocked`, `unreachable` or `missing` says nothing about its reader
//! and leaves the count as it is; a round in which every probe of the source was skipped
//! leaves the source's whole state as it is.

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::round::Round;
use super::verdict::Verdict;
use crate::config::Settings;
use crate::platform::Platform;
use crate::platform::fetcher::Fetchers;

/// `changed` rounds in a row that demote a source.
pub const DEMOTE_AFTER: u32 = 2;
/// The longest reason kept (longer ones are cut, on a character boundary).
const MAX_REASON_CHARS: usize = 200;

/// One source's last verdict and its history, as kept and shared.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceState {
    /// The platform's label.
    pub platform: String,
    /// The source's name.
    pub source: String,
    /// The last verdict; `None` before the first round that gave one.
    pub verdict: Option<Verdict>,
    /// Its reason (none for `ok`).
    pub reason: Option<String>,
    /// The account whose probe decided it.
    pub account: Option<String>,
    /// When the round that gave it ended (Unix seconds).
    pub checked_at: Option<u64>,
    /// When the source last read `ok` (Unix seconds).
    pub last_ok: Option<u64>,
    /// Rounds in a row the source was `changed`.
    pub changed_rounds: u32,
}

impl SourceState {
    /// Whether lookups ask this source last.
    pub fn demoted(&self) -> bool {
        self.changed_rounds >= DEMOTE_AFTER
    }
}

/// The last round as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundFacts {
    /// The round's number: one more than the round before it (the fleet's, with Redis, since
    /// the replica that runs a round first adopts the fleet's board), so that boards are
    /// compared without trusting the replicas' clocks to agree.
    #[serde(default)]
    pub seq: u64,
    /// When it ended (Unix milliseconds).
    pub ended_at_ms: u64,
    /// How long it took (milliseconds).
    pub took_ms: u64,
}

/// The board as a value: what is shared through the fleet.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The last round, if there was one.
    pub round: Option<RoundFacts>,
    /// Every source the canary probes.
    pub sources: Vec<SourceState>,
}

/// The last verdicts of a replica (or of its fleet).
#[derive(Debug)]
pub struct Board {
    state: Mutex<Snapshot>,
}

impl Board {
    /// A board with every source the canary will probe (each platform with accounts, the
    /// sources of its plan), none judged yet.
    pub fn new(settings: &Settings) -> Self {
        let sources = Platform::ALL
            .iter()
            .filter(|p| !settings.canary.accounts(**p).is_empty())
            .flat_map(|p| {
                settings
                    .platform(*p)
                    .sources
                    .iter()
                    .map(move |source| SourceState {
                        platform: p.as_str().to_owned(),
                        source: source.clone(),
                        verdict: None,
                        reason: None,
                        account: None,
                        checked_at: None,
                        last_ok: None,
                        changed_rounds: 0,
                    })
            })
            .collect();
        Self {
            state: Mutex::new(Snapshot {
                round: None,
                sources,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Snapshot> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The board as it is now.
    pub fn snapshot(&self) -> Snapshot {
        self.lock().clone()
    }

    /// Records `round`, which ended at `now` (Unix milliseconds), and applies the new standing
    /// and metrics to `fetchers`.
    pub fn record(&self, round: &Round, now_ms: u64, fetchers: &Fetchers) {
        let now = now_ms / 1000;
        let mut state = self.lock();
        for result in round.by_source() {
            let Some(verdict) = result.verdict else {
                continue;
            };
            let Some(entry) = state
                .sources
                .iter_mut()
                .find(|s| s.platform == result.platform.as_str() && s.source == result.source)
            else {
                continue;
            };
            entry.verdict = Some(verdict);
            entry.reason = result.reason.map(cut);
            entry.account = result.account.map(str::to_owned);
            entry.checked_at = Some(now);
            match verdict {
                Verdict::Ok => {
                    entry.changed_rounds = 0;
                    entry.last_ok = Some(now);
                }
                Verdict::Changed => entry.changed_rounds = entry.changed_rounds.saturating_add(1),
                _ => {}
            }
        }
        let seq = state.round.map_or(0, |r| r.seq).saturating_add(1);
        state.round = Some(RoundFacts {
            seq,
            ended_at_ms: now_ms,
            took_ms: u64::try_from(round.took.as_millis()).unwrap_or(u64::MAX),
        });
        apply(&state, fetchers);
    }

    /// Takes the fleet's board when its last round is newer than this one's (another replica
    /// ran it: a higher number, or the same number ended later), keeping only the sources
    /// this replica knows; returns whether it did.
    pub fn adopt(&self, shared: Snapshot, fetchers: &Fetchers) -> bool {
        let mut state = self.lock();
        let newer = match (shared.round, state.round) {
            (Some(theirs), Some(ours)) => {
                (theirs.seq, theirs.ended_at_ms) > (ours.seq, ours.ended_at_ms)
            }
            (Some(_), None) => true,
            (None, _) => false,
        };
        if !newer {
            return false;
        }
        for entry in &mut state.sources {
            if let Some(theirs) = shared
                .sources
                .iter()
                .find(|s| s.platform == entry.platform && s.source == entry.source)
            {
                *entry = SourceState {
                    reason: theirs.reason.as_deref().map(cut),
                    ..theirs.clone()
                };
            }
        }
        state.round = shared.round;
        apply(&state, fetchers);
        true
    }

    /// The board as the fleet shares it.
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(&*self.lock()).unwrap_or_default()
    }

    /// A shared board, if it is one (anything else at the key is ignored).
    pub fn decode(bytes: &[u8]) -> Option<Snapshot> {
        serde_json::from_slice(bytes).ok()
    }
}

/// The state's standing and metrics, applied to `fetchers` and the recorder.
fn apply(state: &Snapshot, fetchers: &Fetchers) {
    for entry in &state.sources {
        let Some(platform) = Platform::from_label(&entry.platform) else {
            continue;
        };
        let Some(source) = platform.source(&entry.source) else {
            continue;
        };
        if fetchers
            .of(platform)
            .standing()
            .set(source, entry.demoted())
        {
            if entry.demoted() {
                tracing::warn!(
                    platform = platform.as_str(),
                    source,
                    "the canary found this source changed twice in a row: lookups ask it last"
                );
            } else {
                tracing::info!(
                    platform = platform.as_str(),
                    source,
                    "the canary found this source reading again: lookups ask it in its place"
                );
            }
        }
        if let Some(verdict) = entry.verdict {
            crate::telemetry::canary::source(
                platform.as_str(),
                source,
                verdict.label(),
                entry.last_ok,
                entry.changed_rounds,
                entry.demoted(),
            );
        }
    }
    if let Some(round) = state.round {
        crate::telemetry::canary::round_ended(round.ended_at_ms / 1000, round.took_ms as f64 / 1e3);
    }
}

/// `why`, cut to [`MAX_REASON_CHARS`] characters.
fn cut(why: &str) -> String {
    match why.char_indices().nth(MAX_REASON_CHARS) {
        Some((at, _)) => format!("{}…", &why[..at]),
        None => why.to_owned(),
    }
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canary::round::Row;
    use crate::canary::verdict::Judged;
    use std::time::Duration;

    fn settings() -> Settings {
        let mut s = Settings::default();
        s.canary.accounts.insert(
            "short_video".into(),
            crate::config::canary::AccountList::Names(vec!["sunny.kitchen.lab".into()]),
        );
        s
    }

    fn round(page: Judged) -> Round {
        let row = |source, judged| Row {
            platform: Platform::ShortVideo,
            source,
            account: "sunny.kitchen.lab".into(),
            judged,
            status: Some(200),
            bytes: 10,
            elapsed: Duration::ZERO,
        };
        Round {
            rows: vec![
                row("page", page),
                row("embed", Judged::Verdict(Verdict::Ok, None)),
            ],
            took: Duration::from_millis(5),
        }
    }

    fn changed() -> Judged {
        Judged::Verdict(Verdict::Changed, Some("moved".into()))
    }

    #[tokio::test]
    async fn two_changed_rounds_demote_and_one_ok_round_restores() {
        let s = settings();
        let sources = Fetchers::new(&s, &crate::fleet::Fleet::local()).unwrap();
        let board = Board::new(&s);
        let page = |b: &Board| b.snapshot().sources[0].clone();
        assert_eq!(board.snapshot().sources.len(), 2, "page and embed");
        board.record(&round(changed()), 1_000_000, &sources);
        assert_eq!(page(&board).changed_rounds, 1);
        assert!(
            !sources
                .of(Platform::ShortVideo)
                .standing()
                .is_demoted("page")
        );
        // A blocked round says nothing about the reader; a skipped one nothing at all.
        let blocked = Judged::Verdict(Verdict::Blocked, Some("http_429".into()));
        board.record(&round(blocked), 2_000_000, &sources);
        board.record(&round(Judged::Skipped("overloaded")), 3_000_000, &sources);
        assert_eq!(page(&board).verdict, Some(Verdict::Blocked));
        assert_eq!(page(&board).checked_at, Some(2_000));
        board.record(&round(changed()), 4_000_000, &sources);
        assert!(page(&board).demoted());
        assert!(
            sources
                .of(Platform::ShortVideo)
                .standing()
                .is_demoted("page")
        );
        assert_eq!(page(&board).last_ok, None);
        board.record(
            &round(Judged::Verdict(Verdict::Ok, None)),
            5_000_000,
            &sources,
        );
        assert!(
            !sources
                .of(Platform::ShortVideo)
                .standing()
                .is_demoted("page")
        );
        assert_eq!(page(&board).last_ok, Some(5_000));
    }

    #[tokio::test]
    async fn a_newer_fleet_board_is_adopted_and_an_older_one_is_not() {
        let s = settings();
        let (ours, theirs) = (
            Fetchers::new(&s, &crate::fleet::Fleet::local()).unwrap(),
            Fetchers::new(&s, &crate::fleet::Fleet::local()).unwrap(),
        );
        let runner = Board::new(&s);
        runner.record(&round(changed()), 1_000, &theirs);
        runner.record(&round(changed()), 2_000, &theirs);
        let shared = Board::decode(&runner.encode()).expect("its own encoding");
        let follower = Board::new(&s);
        assert!(follower.adopt(shared.clone(), &ours));
        assert!(ours.of(Platform::ShortVideo).standing().is_demoted("page"));
        assert!(!follower.adopt(shared, &ours), "not newer");
        assert_eq!(follower.snapshot(), runner.snapshot());
        // The follower runs the next round (on a clock behind the runner's): it is still the
        // newer board, by its number.
        follower.record(&round(changed()), 1_500, &ours);
        assert_eq!(follower.snapshot().round.unwrap().seq, 3);
        assert!(runner.adopt(follower.snapshot(), &theirs));
        assert_eq!(runner.snapshot().sources[0].changed_rounds, 3);
        assert!(Board::decode(b"not json").is_none());
    }

    #[test]
    fn long_reasons_are_cut_on_a_character_boundary() {
        let long = "é".repeat(500);
        let kept = cut(&long);
        assert_eq!(kept.chars().count(), MAX_REASON_CHARS + 1);
        assert_eq!(cut("short"), "short");
    }
}
