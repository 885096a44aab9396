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
//! # Background refreshes
//!
//! The cache refreshes entries in the background (stale-while-revalidate, hot names before
//! they expire) through the same lookup as a caller's miss, run inside [`background`]. Every
//! request such a lookup sends is held to a [`RefreshBudget`]: `cache.refresh_share` of the
//! platform's `requests_per_second` (and of its `burst`, at least 1), the fleet's with Redis
//! (its own key next to the outbound budget's) and the replica's without. It also needs a slot
//! and a token of the whole budget *at once*: a refresh never queues, so it never stands in
//! front of a caller's miss, and when either has no room it is refused (`Busy`) and the refresh
//! skipped. Callers' misses therefore always have at least `1 - refresh_share` of the budget,
//! and the rest whenever refreshes leave it unused.

use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::config::{BreakerConfig, PlatformConfig, ms};
use crate::fleet::{Fleet, Reservation};
use crate::telemetry;

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
    fleet: Option<FleetBudget>,
}

/// The fleet's side of the gate: the shared state and the budget to reserve from it.
#[derive(Debug)]
struct FleetBudget {
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
    /// Builds the gate of one platform from its settings and the breaker settings; with a
    /// `fleet`, budget and breaker are shared with the other replicas.
    pub fn new(
        platform: &'static str,
        p: &PlatformConfig,
        b: &BreakerConfig,
        fleet: Option<Fleet>,
    ) -> Self {
        let per_second = NonZeroU32::new(p.requests_per_second).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(p.burst).unwrap_or(NonZeroU32::MIN);
        Self {
            platform,
            budget: RateLimiter::direct(Quota::per_second(per_second).allow_burst(burst)),
            slots: std::sync::Arc::new(Semaphore::new(p.max_concurrency)),
            max_queue: ms(p.max_queue_ms),
            breaker: Breaker::new(b.failure_threshold, Duration::from_secs(b.cooldown_seconds)),
            fleet: fleet.map(|fleet| FleetBudget {
                fleet,
                per_second: f64::from(p.requests_per_second),
                burst: p.burst,
                cooldown: Duration::from_secs(b.cooldown_seconds),
            }),
        }
    }

    /// Asks the breaker whether a lookup may go upstream at all; the ticket goes back to
    /// [`Gate::record`] with the lookup's end.
    pub async fn admit(&self) -> Result<Ticket, Refusal> {
        if let Some(shared) = &self.fleet
            && self.breaker.threshold > 0
            && let Some(Some(rest)) = shared.fleet.breaker_open_for(self.platform).await
        {
            // Another replica opened the breaker: this one rests the platform too.
            return Err(Refusal::BreakerOpen(rest));
        }
        let result = self.breaker.admit().map_err(Refusal::BreakerOpen);
        telemetry::breaker_state(self.platform, self.breaker.state_code());
        result
    }

    /// Waits (bounded) for a concurrency slot, then for budget, for one request.
    ///
    /// The slot comes first: a budget token is taken only by a request that will be sent, so
    /// requests shed while queueing for a slot spend none of the platform's budget (a token
    /// is only ever taken at the moment the wait for it succeeds). Inside [`background`] the
    /// request waits for nothing and is held to the refresh share (`Gate::pass_now`).
    pub async fn pass(&self) -> Result<Pass, Refusal> {
        if let Ok(share) = REFRESH.try_with(Arc::clone) {
            return self.pass_now(&share).await;
        }
        let deadline = tokio::time::Instant::now() + self.max_queue;
        let busy = Refusal::Busy(self.max_queue.max(Duration::from_secs(1)));
        let Ok(Ok(slot)) =
            tokio::time::timeout_at(deadline, self.slots.clone().acquire_owned()).await
        else {
            return Err(busy);
        };
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        if let Some(shared) = &self.fleet {
            let reserved = shared
                .fleet
                .outbound_reserve(self.platform, shared.per_second, shared.burst, left)
                .await;
            match reserved {
                Some(Reservation::Wait(wait)) => {
                    tokio::time::sleep(wait).await;
                    return Ok(Pass { _slot: slot });
                }
                Some(Reservation::TooLong(wait)) => {
                    return Err(Refusal::Busy(wait.max(Duration::from_secs(1))));
                }
                // Redis cannot be used: the replica's own budget stands in.
                None => {}
            }
        }
        match tokio::time::timeout_at(deadline, self.budget.until_ready()).await {
            Ok(()) => Ok(Pass { _slot: slot }),
            Err(_) => Err(busy),
        }
    }

    /// A background refresh's request: a slot, a unit of the refresh share and a token of the
    /// whole budget, each free now, or [`Refusal::Busy`] (the refresh is skipped).
    async fn pass_now(&self, share: &RefreshBudget) -> Result<Pass, Refusal> {
        let busy = Refusal::Busy(Duration::from_secs(1));
        let Ok(slot) = self.slots.clone().try_acquire_owned() else {
            return Err(busy);
        };
        if !share.take().await {
            return Err(busy);
        }
        if let Some(shared) = &self.fleet {
            let reserved = shared
                .fleet
                .outbound_reserve(
                    self.platform,
                    shared.per_second,
                    shared.burst,
                    Duration::ZERO,
                )
                .await;
            match reserved {
                // Reserved with no wait: the budget had room at once.
                Some(Reservation::Wait(_)) => return Ok(Pass { _slot: slot }),
                Some(Reservation::TooLong(_)) => return Err(busy),
                None => {}
            }
        }
        match self.budget.check() {
            Ok(()) => Ok(Pass { _slot: slot }),
            Err(_) => Err(busy),
        }
    }

    /// Tells the breaker how a lookup that it admitted (with `ticket`) ended.
    pub async fn record(&self, ticket: Ticket, verdict: Verdict) {
        let opened = self.breaker.record(ticket, verdict);
        telemetry::breaker_state(self.platform, self.breaker.state_code());
        if opened && let Some(shared) = &self.fleet {
            // Rest the platform fleet-wide; with Redis down the other replicas find out alone.
            let _ = shared
                .fleet
                .breaker_open(self.platform, shared.cooldown)
                .await;
        }
    }
}

tokio::task_local! {
    /// The refresh share of the background lookup running in this task, if it is one.
    static REFRESH: Arc<RefreshBudget>;
}

/// Runs `work` (a lookup) as a background refresh held to `share`: every request it sends
/// through a [`Gate`] takes a unit of the share and waits for nothing.
pub fn background<F: Future>(
    share: Arc<RefreshBudget>,
    work: F,
) -> impl Future<Output = F::Output> {
    REFRESH.scope(share, work)
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
    fleet: Option<Fleet>,
}

impl RefreshBudget {
    /// The refresh share of platform `platform` (its section `p`) for `share` (0 to 1).
    pub fn new(
        platform: &'static str,
        p: &PlatformConfig,
        share: f64,
        fleet: Option<Fleet>,
    ) -> Self {
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
            fleet,
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
        if let Some(fleet) = &self.fleet
            && let Some(reserved) = fleet
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
    generation: u64,
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
pub enum Verdict {
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
            generation: phase.generation,
        })
    }

    /// Records a lookup's end: a block counts towards opening, an answer closes, and an
    /// inconclusive probe hands the probe to the next lookup.
    ///
    /// A ticket of an earlier phase is ignored: its lookup was admitted under other conditions
    /// (closed before the breaker opened, or a probe given up), and it must not move this one.
    ///
    /// Returns whether this record opened the breaker (for a block, not a lost probe).
    pub fn record(&self, ticket: Ticket, verdict: Verdict) -> bool {
        if self.threshold == 0 {
            return false;
        }
        let mut phase = self.lock();
        if ticket.generation != phase.generation {
            return false;
        }
        let next = match (phase.state, verdict) {
            (State::HalfOpen { .. }, Verdict::Inconclusive) => State::Open {
                until: Instant::now(),
            },
            (current, Verdict::Inconclusive) => current,
            (_, Verdict::Answered) => State::Closed {
                blocked_in_a_row: 0,
            },
            (State::Closed { blocked_in_a_row }, Verdict::Blocked)
                if blocked_in_a_row + 1 < self.threshold =>
            {
                State::Closed {
                    blocked_in_a_row: blocked_in_a_row + 1,
                }
            }
            (_, Verdict::Blocked) => State::Open {
                until: Instant::now() + self.cooldown,
            },
        };
        let opened = verdict == Verdict::Blocked && matches!(next, State::Open { .. });
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
            breaker.record(ticket, Verdict::Blocked);
        }
        let ticket = breaker.admit().unwrap();
        breaker.record(ticket, Verdict::Blocked);
        assert!(breaker.admit().is_err(), "open after three blocks");
        std::thread::sleep(Duration::from_millis(60));
        let probe = breaker.admit().expect("the probe");
        assert!(breaker.admit().is_err(), "only one probe at a time");
        breaker.record(probe, Verdict::Answered);
        assert!(breaker.admit().is_ok(), "a good probe closes it");
    }

    #[test]
    fn a_success_resets_the_count() {
        let breaker = Breaker::new(2, Duration::from_secs(60));
        for verdict in [Verdict::Blocked, Verdict::Answered, Verdict::Blocked] {
            let ticket = breaker.admit().unwrap();
            breaker.record(ticket, verdict);
        }
        assert!(breaker.admit().is_ok());
    }

    #[test]
    fn a_probe_that_never_reports_is_given_up_after_a_cooldown() {
        let breaker = Breaker::new(1, Duration::from_millis(20));
        breaker.record(breaker.admit().unwrap(), Verdict::Blocked);
        std::thread::sleep(Duration::from_millis(30));
        let lost = breaker.admit().expect("the probe, which is then lost");
        assert!(breaker.admit().is_err());
        std::thread::sleep(Duration::from_millis(30));
        let probe = breaker.admit().expect("another probe after a cool-down");
        breaker.record(lost, Verdict::Answered);
        assert!(
            breaker.admit().is_err(),
            "the given-up probe's late answer does not close it"
        );
        breaker.record(probe, Verdict::Inconclusive);
        assert!(
            breaker.admit().is_ok(),
            "an inconclusive probe hands over at once"
        );
    }

    #[test]
    fn a_failed_probe_reopens() {
        let breaker = Breaker::new(1, Duration::from_millis(20));
        breaker.record(breaker.admit().unwrap(), Verdict::Blocked);
        std::thread::sleep(Duration::from_millis(30));
        let probe = breaker.admit().unwrap();
        breaker.record(probe, Verdict::Blocked);
        assert!(breaker.admit().is_err());
    }

    #[test]
    fn late_results_from_before_the_opening_keep_it_open() {
        let breaker = Breaker::new(1, Duration::from_secs(60));
        let answers_late = breaker.admit().unwrap();
        let times_out_late = breaker.admit().unwrap();
        let blocked = breaker.admit().unwrap();
        breaker.record(blocked, Verdict::Blocked);
        assert!(breaker.admit().is_err(), "open");
        breaker.record(answers_late, Verdict::Answered);
        breaker.record(times_out_late, Verdict::Answered);
        assert!(
            breaker.admit().is_err(),
            "late answers from before the opening must not close it"
        );
    }

    #[test]
    fn only_the_probe_closes_a_half_open_breaker() {
        let breaker = Breaker::new(1, Duration::from_millis(20));
        let from_before = breaker.admit().unwrap();
        breaker.record(breaker.admit().unwrap(), Verdict::Blocked);
        std::thread::sleep(Duration::from_millis(30));
        let probe = breaker.admit().expect("the probe");
        breaker.record(from_before, Verdict::Answered);
        assert!(breaker.admit().is_err(), "still half-open, probe out");
        breaker.record(probe, Verdict::Blocked);
        assert!(breaker.admit().is_err(), "the probe's block reopens it");
    }

    #[tokio::test]
    async fn a_request_that_never_got_a_slot_spends_no_budget() {
        let mut settings = crate::config::Settings::default();
        let platform = crate::registry::Platform::PhotoShare;
        let p = settings.platform_mut(platform);
        p.requests_per_second = 1;
        p.burst = 2;
        p.max_concurrency = 1;
        p.max_queue_ms = 100;
        let gate = Gate::new("test", settings.platform(platform), &settings.breaker, None);
        let held = gate.pass().await.expect("the one slot, the first token");
        assert_eq!(
            gate.pass().await.unwrap_err(),
            Refusal::Busy(Duration::from_secs(1)),
            "no slot within max_queue"
        );
        drop(held);
        gate.pass()
            .await
            .expect("the second token was not spent on the request that never went out");
    }
}
