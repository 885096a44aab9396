//! Being polite to a platform: an outbound budget, a concurrency cap and a circuit breaker.
//!
//! Whatever our callers do, a platform sees at most `requests_per_second` (with `burst`) and
//! `max_concurrency` requests from one replica, and after `failure_threshold` blocked lookups in
//! a row it sees nothing at all for a cool-down, then one probe. Lookups that cannot get budget
//! within `max_queue_ms` are shed instead of piling up.
//!
//! In a fleet (`[redis]` set) the budget and the breaker are the fleet's: each request reserves
//! its send time on Redis and waits for it, so replicas space their requests instead of each
//! bursting, and a breaker that opens on one replica rests the platform for all of them. When
//! Redis cannot be used the replica's own budget and breaker stand in; the concurrency cap is
//! always the replica's own.
//!
//! Every fetch passes here in a [`Mode`], an argument from the cache down to each request:
//!
//! - a caller's lookup queues for budget (bounded) and its end is recorded by the breaker;
//! - a **background refresh** (stale-while-revalidate, hot names before they expire) is held to
//!   a [`RefreshBudget`]: `cache.refresh_share` of the platform's `requests_per_second` (and of
//!   its `burst`, at least 1), the fleet's with Redis (its own key next to the outbound
//!   budget's) and the replica's without. Each request also needs a slot and a token of the
//!   whole budget *at once*: a refresh never queues, so it never stands in front of a caller's
//!   miss, and when either has no room it is refused (`Busy`) and the refresh skipped. Callers'
//!   misses therefore always have at least `1 - refresh_share` of the budget, and the rest
//!   whenever refreshes leave it unused;
//! - the canary's **probe** of one document spends the outbound budget like a caller, is
//!   refused while the breaker is open, but never records into it: one document refused to a
//!   canary account is not the callers' lookups being refused.

use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::config::{PlatformConfig, Settings, ms};
use crate::fleet::{Fleet, Reservation};
use crate::telemetry;

/// What a fetch is, for the gate (and the routes): how its requests pass, and whether its end
/// is recorded by the breaker and rests proxies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A caller's lookup: a miss, or a fetch the caller forced.
    Caller,
    /// A background refresh: its requests are held to the refresh share and wait for nothing.
    Refresh,
    /// The canary's probe of one document: counted against the outbound budget, never recorded
    /// by the breaker, never resting a proxy.
    Probe,
}

impl Mode {
    /// Whether a route this fetch leaves for a block or a failure rests (for every lookup,
    /// fleet-wide): not for a probe, which only moves on for itself.
    pub fn rests(self) -> bool {
        self != Mode::Probe
    }
}

/// Why the gate did not let a request through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The breaker is open after repeated blocks: wait this long.
    BreakerOpen(Duration),
    /// The outbound budget or the concurrency cap had no room in time: try again after this.
    Busy(Duration),
}

/// The per-platform outbound gate.
#[derive(Debug)]
pub struct Gate {
    platform: &'static str,
    budget: DefaultDirectRateLimiter,
    slots: std::sync::Arc<Semaphore>,
    max_queue: Duration,
    breaker: Breaker,
    /// The budget's share for background refreshes.
    refresh: RefreshBudget,
    /// The fleet's budget and breaker (the replica's own stand in when it has none).
    fleet: Fleet,
    per_second: f64,
    burst: u32,
    cooldown: Duration,
}

/// Holding one of these is permission for one upstream request.
#[derive(Debug)]
pub struct Pass {
    _slot: OwnedSemaphorePermit,
}

impl Gate {
    /// Builds the gate of platform `platform` (its section `p`) from the settings' breaker and
    /// refresh share; budget and breaker are the `fleet`'s.
    pub fn new(
        platform: &'static str,
        p: &PlatformConfig,
        settings: &Settings,
        fleet: &Fleet,
    ) -> Self {
        let b = &settings.breaker;
        let per_second = NonZeroU32::new(p.requests_per_second).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(p.burst).unwrap_or(NonZeroU32::MIN);
        let cooldown = Duration::from_secs(b.cooldown_seconds);
        Self {
            platform,
            budget: RateLimiter::direct(Quota::per_second(per_second).allow_burst(burst)),
            slots: std::sync::Arc::new(Semaphore::new(p.max_concurrency)),
            max_queue: ms(p.max_queue_ms),
            breaker: Breaker::new(b.failure_threshold, cooldown),
            refresh: RefreshBudget::new(platform, p, settings.cache.refresh_share, fleet),
            fleet: fleet.clone(),
            per_second: f64::from(p.requests_per_second),
            burst: p.burst,
            cooldown,
        }
    }

    /// The platform's metric label.
    pub fn platform(&self) -> &'static str {
        self.platform
    }

    /// Whether a background refresh may ever pass (the refresh share is above 0).
    pub fn refreshes(&self) -> bool {
        self.refresh.is_open()
    }

    /// Asks the breaker whether a fetch in `mode` may go upstream at all; the ticket goes back
    /// to [`Gate::record`] with the fetch's end. A probe only reads the breaker: its ticket
    /// records nothing, and it never takes the one half-open trial from a caller.
    pub async fn admit(&self, mode: Mode) -> Result<Ticket, Refusal> {
        if self.breaker.threshold > 0
            && let Some(Some(rest)) = self.fleet.breaker_open_for(self.platform).await
        {
            // Another replica opened the breaker: this one rests the platform too.
            return Err(Refusal::BreakerOpen(rest));
        }
        let result = match mode {
            Mode::Probe => self.breaker.peek(),
            Mode::Caller | Mode::Refresh => self.breaker.admit(),
        };
        telemetry::breaker_state(self.platform, self.breaker.state_code());
        result.map_err(Refusal::BreakerOpen)
    }

    /// Waits (bounded) for a concurrency slot, then for budget, for one request.
    ///
    /// The slot comes first: a budget token is taken only by a request that will be sent, so
    /// requests shed while queueing for a slot spend none of the platform's budget (a token
    /// is only ever taken at the moment the wait for it succeeds). A refresh's request waits
    /// for nothing and is held to the refresh share (`Gate::pass_now`).
    pub async fn pass(&self, mode: Mode) -> Result<Pass, Refusal> {
        if mode == Mode::Refresh {
            return self.pass_now().await;
        }
        let deadline = tokio::time::Instant::now() + self.max_queue;
        let busy = Refusal::Busy(self.max_queue.max(Duration::from_secs(1)));
        let Ok(Ok(slot)) =
            tokio::time::timeout_at(deadline, self.slots.clone().acquire_owned()).await
        else {
            return Err(busy);
        };
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let reserved = self
            .fleet
            .outbound_reserve(self.platform, self.per_second, self.burst, left)
            .await;
        match reserved {
            Some(Reservation::Wait(wait)) => {
                tokio::time::sleep(wait).await;
                return Ok(Pass { _slot: slot });
            }
            Some(Reservation::TooLong(wait)) => {
                return Err(Refusal::Busy(wait.max(Duration::from_secs(1))));
            }
            // No Redis, or it cannot be used: the replica's own budget stands in.
            None => {}
        }
        match tokio::time::timeout_at(deadline, self.budget.until_ready()).await {
            Ok(()) => Ok(Pass { _slot: slot }),
            Err(_) => Err(busy),
        }
    }

    /// A background refresh's request: a slot, a unit of the refresh share and a token of the
    /// whole budget, each free now, or [`Refusal::Busy`] (the refresh is skipped).
    async fn pass_now(&self) -> Result<Pass, Refusal> {
        let busy = Refusal::Busy(Duration::from_secs(1));
        let Ok(slot) = self.slots.clone().try_acquire_owned() else {
            return Err(busy);
        };
        if !self.refresh.take().await {
            return Err(busy);
        }
        let reserved = self
            .fleet
            .outbound_reserve(self.platform, self.per_second, self.burst, Duration::ZERO)
            .await;
        match reserved {
            // Reserved with no wait: the budget had room at once.
            Some(Reservation::Wait(_)) => return Ok(Pass { _slot: slot }),
            Some(Reservation::TooLong(_)) => return Err(busy),
            None => {}
        }
        match self.budget.check() {
            Ok(()) => Ok(Pass { _slot: slot }),
            Err(_) => Err(busy),
        }
    }

    /// Tells the breaker how a fetch that it admitted (with `ticket`) ended.
    pub async fn record(&self, ticket: Ticket, signal: Signal) {
        let opened = self.breaker.record(ticket, signal);
        telemetry::breaker_state(self.platform, self.breaker.state_code());
        if opened {
            // Rest the platform fleet-wide; with Redis down the other replicas find out alone.
            let _ = self.fleet.breaker_open(self.platform, self.cooldown).await;
        }
    }
}

/// One platform's share of the outbound budget for background refreshes: `share` ×
/// `requests_per_second`, with `share` × `burst` (at least 1) at once; the fleet's with Redis,
/// the replica's own when Redis cannot be used. A share of 0 admits nothing.
#[derive(Debug)]
pub struct RefreshBudget {
    platform: &'static str,
    /// The share's rate and burst, or `None` for a share of 0.
    rate: Option<(f64, u32)>,
    local: Option<DefaultDirectRateLimiter>,
    fleet: Fleet,
}

impl RefreshBudget {
    /// The refresh share of platform `platform` (its section `p`) for `share` (0 to 1).
    pub fn new(platform: &'static str, p: &PlatformConfig, share: f64, fleet: &Fleet) -> Self {
        let per_second = f64::from(p.requests_per_second) * share;
        let rate = (per_second > 0.0).then(|| {
            let burst = (f64::from(p.burst) * share).floor().max(1.0) as u32;
            (per_second, burst)
        });
        let local = rate.and_then(|(per_second, burst)| {
            let period = Duration::from_secs_f64(1.0 / per_second);
            let quota = Quota::with_period(period)?
                .allow_burst(NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN));
            Some(RateLimiter::direct(quota))
        });
        Self {
            platform,
            rate,
            local,
            fleet: fleet.clone(),
        }
    }

    /// Whether any refresh can ever pass (a share above 0).
    pub fn is_open(&self) -> bool {
        self.rate.is_some()
    }

    /// Takes one unit of the share if one is free now.
    pub async fn take(&self) -> bool {
        let Some((per_second, burst)) = self.rate else {
            return false;
        };
        if let Some(reserved) = self
            .fleet
            .refresh_reserve(self.platform, per_second, burst)
            .await
        {
            return matches!(reserved, Reservation::Wait(_));
        }
        self.local.as_ref().is_some_and(|l| l.check().is_ok())
    }
}

/// A consecutive-failure circuit breaker with a single half-open probe.
#[derive(Debug)]
pub struct Breaker {
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

impl Breaker {
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
    pub fn state_code(&self) -> u8 {
        match self.lock().state {
            State::Closed { .. } => 0,
            State::Open { .. } => 1,
            State::HalfOpen { .. } => 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_the_threshold_and_lets_one_probe_through() {
        let breaker = Breaker::new(3, Duration::from_millis(50));
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
        let breaker = Breaker::new(2, Duration::from_secs(60));
        for verdict in [Signal::Blocked, Signal::Answered, Signal::Blocked] {
            let ticket = breaker.admit().unwrap();
            breaker.record(ticket, verdict);
        }
        assert!(breaker.admit().is_ok());
    }

    #[test]
    fn a_probe_that_never_reports_is_given_up_after_a_cooldown() {
        let breaker = Breaker::new(1, Duration::from_millis(20));
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
        let breaker = Breaker::new(1, Duration::from_millis(20));
        breaker.record(breaker.admit().unwrap(), Signal::Blocked);
        std::thread::sleep(Duration::from_millis(30));
        let probe = breaker.admit().unwrap();
        breaker.record(probe, Signal::Blocked);
        assert!(breaker.admit().is_err());
    }

    #[test]
    fn late_results_from_before_the_opening_keep_it_open() {
        let breaker = Breaker::new(1, Duration::from_secs(60));
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
        let breaker = Breaker::new(1, Duration::from_millis(20));
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
        let breaker = Breaker::new(1, Duration::from_millis(20));
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

    #[tokio::test]
    async fn a_request_that_never_got_a_slot_spends_no_budget() {
        let mut settings = crate::config::Settings::default();
        settings.photo_share.requests_per_second = 1;
        settings.photo_share.burst = 2;
        settings.photo_share.max_concurrency = 1;
        settings.photo_share.max_queue_ms = 100;
        let gate = Gate::new("test", &settings.photo_share, &settings, &Fleet::local());
        let held = gate
            .pass(Mode::Caller)
            .await
            .expect("the one slot, the first token");
        assert_eq!(
            gate.pass(Mode::Caller).await.unwrap_err(),
            Refusal::Busy(Duration::from_secs(1)),
            "no slot within max_queue"
        );
        drop(held);
        gate.pass(Mode::Caller)
            .await
            .expect("the second token was not spent on the request that never went out");
    }
}
