//! A platform's circuit breaker: after `failure_threshold` blocked lookups in a row the
//! platform sees nothing for a cool-down, then one trial lookup. One type, two
//! implementations: the replica's own state machine ([`Local`]), and with Redis the fleet's
//! mark, which a breaker that opens on one replica sets for all of them and every replica reads
//! before it admits a lookup. Without Redis, or when it cannot be used, the replica's own
//! breaker decides alone.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::Fleet;
use super::keys::Keys;
use super::marks::remaining;

/// One platform's breaker, for the fleet when the handle is on Redis.
#[derive(Debug)]
pub struct Breaker {
    local: Local,
    fleet: Fleet,
    platform: &'static str,
}

impl Breaker {
    /// `platform`'s breaker: it opens after `threshold` blocks in a row (0 disables it) for
    /// `cooldown`, on every replica of `fleet`.
    pub fn new(fleet: &Fleet, platform: &'static str, threshold: u32, cooldown: Duration) -> Self {
        Self {
            local: Local::new(threshold, cooldown),
            fleet: fleet.clone(),
            platform,
        }
    }

    /// `Ok(ticket)` when a lookup may go upstream (its end goes back to [`Breaker::record`]);
    /// `Err(wait)` while this replica's breaker or the fleet's is open, or the trial runs.
    pub async fn admit(&self) -> Result<Ticket, Duration> {
        self.fleet_rest().await?;
        self.local.admit()
    }

    /// `Ok(ticket)` unless the breaker (this replica's or the fleet's) is open, without moving
    /// it: for a probe, whose ticket records nothing.
    pub async fn peek(&self) -> Result<Ticket, Duration> {
        self.fleet_rest().await?;
        self.local.peek()
    }

    /// Records how a lookup admitted with `ticket` ended; one that opens this replica's
    /// breaker rests the platform fleet-wide (with Redis down the others find out alone).
    pub async fn record(&self, ticket: Ticket, signal: Signal) {
        if self.local.record(ticket, signal) {
            let _ = self
                .fleet
                .breaker_open(self.platform, self.local.cooldown)
                .await;
        }
    }

    /// 0 closed, 1 open, 2 half-open: the value of the breaker gauge (this replica's).
    pub fn state_code(&self) -> u8 {
        self.local.state_code()
    }

    /// `Err(rest)` while another replica opened the breaker.
    async fn fleet_rest(&self) -> Result<(), Duration> {
        if self.local.threshold > 0
            && let Some(Some(rest)) = self.fleet.breaker_open_for(self.platform).await
        {
            return Err(rest);
        }
        Ok(())
    }
}

/// The replica's own breaker: consecutive blocks open it, one half-open trial closes it.
#[derive(Debug)]
pub struct Local {
    threshold: u32,
    cooldown: Duration,
    state: Mutex<Phase>,
}

/// The state and its generation, which changes on every transition.
#[derive(Debug, Clone, Copy)]
struct Phase {
    state: State,
    generation: u64,
}

/// The breaker's admission of one lookup: which phase let it through.
///
/// Only a ticket of the current phase counts when the lookup ends, so a lookup admitted before
/// the breaker opened cannot close it by ending late, and only the half-open probe's own
/// result decides whether it closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    /// The phase that let the lookup through; `None` for a fetch that only read the breaker
    /// (a probe): its end is not recorded.
    generation: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Closed {
        blocked_in_a_row: u32,
    },
    Open {
        until: Instant,
    },
    /// One probe is out since `since`; a probe that never reports (cancelled, or shed before
    /// it went upstream) is given up after one cool-down, so the breaker cannot stick here.
    HalfOpen {
        since: Instant,
    },
}

impl Phase {
    /// Moves to `state` as a new phase: tickets of the old one stop counting.
    fn enter(&mut self, state: State) {
        self.state = state;
        self.generation = self.generation.wrapping_add(1);
    }
}

/// How a lookup that the breaker let through ended, as far as the breaker cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// The platform refused us.
    Blocked,
    /// The platform answered (a profile, a not-found, even a broken page).
    Answered,
    /// Nothing was learned about the platform (the request was never sent).
    Inconclusive,
}

impl Local {
    /// A closed breaker that opens after `threshold` blocks in a row (0 disables it).
    pub fn new(threshold: u32, cooldown: Duration) -> Self {
        Self {
            threshold,
            cooldown,
            state: Mutex::new(Phase {
                state: State::Closed {
                    blocked_in_a_row: 0,
                },
                generation: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Phase> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `Ok(ticket)` when a lookup may go upstream; `Err(wait)` while open or while the probe
    /// runs.
    pub fn admit(&self) -> Result<Ticket, Duration> {
        let mut phase = self.lock();
        match phase.state {
            State::Closed { .. } => {}
            State::Open { until } => {
                let now = Instant::now();
                if now < until {
                    return Err(until - now);
                }
                phase.enter(State::HalfOpen { since: now });
            }
            State::HalfOpen { since } if since.elapsed() >= self.cooldown => {
                // The last probe is given up; a late result of it no longer counts.
                phase.enter(State::HalfOpen {
                    since: Instant::now(),
                });
            }
            State::HalfOpen { .. } => return Err(self.cooldown),
        }
        Ok(Ticket {
            generation: Some(phase.generation),
        })
    }

    /// `Ok(ticket)` unless the breaker is open (`Err(wait)`), without moving it: the ticket
    /// records nothing, and a half-open breaker's one trial is left to a lookup.
    pub fn peek(&self) -> Result<Ticket, Duration> {
        if let State::Open { until } = self.lock().state {
            let now = Instant::now();
            if now < until {
                return Err(until - now);
            }
        }
        Ok(Ticket { generation: None })
    }

    /// Records a lookup's end: a block counts towards opening, an answer closes, and an
    /// inconclusive probe hands the probe to the next lookup.
    ///
    /// A ticket of an earlier phase is ignored: its lookup was admitted under other conditions
    /// (closed before the breaker opened, or a probe given up), and it must not move this one.
    ///
    /// Returns whether this record opened the breaker (for a block, not a lost probe).
    pub fn record(&self, ticket: Ticket, signal: Signal) -> bool {
        if self.threshold == 0 {
            return false;
        }
        let mut phase = self.lock();
        if ticket.generation != Some(phase.generation) {
            return false;
        }
        let next = match (phase.state, signal) {
            (State::HalfOpen { .. }, Signal::Inconclusive) => State::Open {
                until: Instant::now(),
            },
            (current, Signal::Inconclusive) => current,
            (_, Signal::Answered) => State::Closed {
                blocked_in_a_row: 0,
            },
            (State::Closed { blocked_in_a_row }, Signal::Blocked)
                if blocked_in_a_row + 1 < self.threshold =>
            {
                State::Closed {
                    blocked_in_a_row: blocked_in_a_row + 1,
                }
            }
            (_, Signal::Blocked) => State::Open {
                until: Instant::now() + self.cooldown,
            },
        };
        let opened = signal == Signal::Blocked && matches!(next, State::Open { .. });
        if next != phase.state {
            match (phase.state, next) {
                // Counting blocks while closed is not a new phase.
                (State::Closed { .. }, State::Closed { .. }) => phase.state = next,
                _ => phase.enter(next),
            }
        }
        opened
    }

    /// 0 closed, 1 open, 2 half-open: the value of the breaker gauge.
    fn state_code(&self) -> u8 {
        match self.lock().state {
            State::Closed { .. } => 0,
            State::Open { .. } => 1,
            State::HalfOpen { .. } => 2,
        }
    }
}

impl Keys {
    /// The breaker of `platform`.
    pub fn breaker(&self, platform: &str) -> String {
        self.tag("b", &[platform])
    }
}

/// The Redis implementation of [`Breaker`]: a mark that lasts the rest.
impl Fleet {
    /// Opens `platform`'s breaker for every replica for `rest` (a longer open rest is kept).
    pub async fn breaker_open(&self, platform: &str, rest: Duration) -> Option<()> {
        let key = self.keys()?.breaker(platform);
        self.mark_resting("breaker", key, rest).await
    }

    /// How long `platform`'s breaker stays open: `Some(None)` closed, `None` Redis unavailable.
    pub async fn breaker_open_for(&self, platform: &str) -> Option<Option<Duration>> {
        let key = self.keys()?.breaker(platform);
        let left: i64 = self
            .run("breaker", |mut conn| async move {
                redis::cmd("PTTL").arg(key).query_async(&mut conn).await
            })
            .await?;
        Some(remaining(left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_the_threshold_and_lets_one_probe_through() {
        let breaker = Local::new(3, Duration::from_millis(50));
        for _ in 0..2 {
            let ticket = breaker.admit().unwrap();
            breaker.record(ticket, Signal::Blocked);
        }
        let ticket = breaker.admit().unwrap();
        breaker.record(ticket, Signal::Blocked);
        assert!(breaker.admit().is_err(), "open after three blocks");
        std::thread::sleep(Duration::from_millis(60));
        let probe = breaker.admit().expect("the probe");
        assert!(breaker.admit().is_err(), "only one probe at a time");
        breaker.record(probe, Signal::Answered);
        assert!(breaker.admit().is_ok(), "a good probe closes it");
    }

    #[test]
    fn a_success_resets_the_count() {
        let breaker = Local::new(2, Duration::from_secs(60));
        for verdict in [Signal::Blocked, Signal::Answered, Signal::Blocked] {
            let ticket = breaker.admit().unwrap();
            breaker.record(ticket, verdict);
        }
        assert!(breaker.admit().is_ok());
    }

    #[test]
    fn a_probe_that_never_reports_is_given_up_after_a_cooldown() {
        let breaker = Local::new(1, Duration::from_millis(20));
        breaker.record(breaker.admit().unwrap(), Signal::Blocked);
        std::thread::sleep(Duration::from_millis(30));
        let lost = breaker.admit().expect("the probe, which is then lost");
        assert!(breaker.admit().is_err());
        std::thread::sleep(Duration::from_millis(30));
        let probe = breaker.admit().expect("another probe after a cool-down");
        breaker.record(lost, Signal::Answered);
        assert!(
            breaker.admit().is_err(),
            "the given-up probe's late answer does not close it"
        );
        breaker.record(probe, Signal::Inconclusive);
        assert!(
            breaker.admit().is_ok(),
            "an inconclusive probe hands over at once"
        );
    }

    #[test]
    fn a_failed_probe_reopens() {
        let breaker = Local::new(1, Duration::from_millis(20));
        breaker.record(breaker.admit().unwrap(), Signal::Blocked);
        std::thread::sleep(Duration::from_millis(30));
        let probe = breaker.admit().unwrap();
        breaker.record(probe, Signal::Blocked);
        assert!(breaker.admit().is_err());
    }

    #[test]
    fn late_results_from_before_the_opening_keep_it_open() {
        let breaker = Local::new(1, Duration::from_secs(60));
        let answers_late = breaker.admit().unwrap();
        let times_out_late = breaker.admit().unwrap();
        let blocked = breaker.admit().unwrap();
        breaker.record(blocked, Signal::Blocked);
        assert!(breaker.admit().is_err(), "open");
        breaker.record(answers_late, Signal::Answered);
        breaker.record(times_out_late, Signal::Answered);
        assert!(
            breaker.admit().is_err(),
            "late answers from before the opening must not close it"
        );
    }

    #[test]
    fn only_the_probe_closes_a_half_open_breaker() {
        let breaker = Local::new(1, Duration::from_millis(20));
        let from_before = breaker.admit().unwrap();
        breaker.record(breaker.admit().unwrap(), Signal::Blocked);
        std::thread::sleep(Duration::from_millis(30));
        let probe = breaker.admit().expect("the probe");
        breaker.record(from_before, Signal::Answered);
        assert!(breaker.admit().is_err(), "still half-open, probe out");
        breaker.record(probe, Signal::Blocked);
        assert!(breaker.admit().is_err(), "the probe's block reopens it");
    }

    #[test]
    fn a_peek_records_nothing_and_leaves_the_half_open_trial_to_a_lookup() {
        let breaker = Local::new(1, Duration::from_millis(20));
        let peeked = breaker.peek().expect("closed");
        assert!(
            !breaker.record(peeked, Signal::Blocked),
            "a probe's end counts for nothing"
        );
        assert!(
            breaker.admit().is_ok(),
            "still closed after a probe's block"
        );
        breaker.record(breaker.admit().unwrap(), Signal::Blocked);
        assert!(
            breaker.peek().is_err(),
            "a probe is refused while it is open"
        );
        std::thread::sleep(Duration::from_millis(30));
        assert!(breaker.peek().is_ok(), "past the rest a probe may go");
        assert!(
            breaker.admit().is_ok(),
            "the half-open trial is still a lookup's"
        );
    }
}
