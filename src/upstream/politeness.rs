//! Being polite to a platform: an outbound budget, a concurrency cap and a circuit breaker.
//!
//! Whatever our callers do, a platform sees at most `requests_per_second` (with `burst`) and
//! `max_concurrency` requests from one replica, and after `failure_threshold` blocked lookups in
//! a row it sees nothing at all for a cool-down, then one probe. Lookups that cannot get budget
//! within `max_queue_ms` are shed instead of piling up.

use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::config::{BreakerConfig, PlatformConfig, ms};
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
}

/// Holding one of these is permission for one upstream request.
#[derive(Debug)]
pub struct Pass {
    _slot: OwnedSemaphorePermit,
}

impl Gate {
    /// Builds the gate of one platform from its settings and the breaker settings.
    pub fn new(platform: &'static str, p: &PlatformConfig, b: &BreakerConfig) -> Self {
        let per_second = NonZeroU32::new(p.requests_per_second).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(p.burst).unwrap_or(NonZeroU32::MIN);
        Self {
            platform,
            budget: RateLimiter::direct(Quota::per_second(per_second).allow_burst(burst)),
            slots: std::sync::Arc::new(Semaphore::new(p.max_concurrency)),
            max_queue: ms(p.max_queue_ms),
            breaker: Breaker::new(b.failure_threshold, Duration::from_secs(b.cooldown_seconds)),
        }
    }

    /// Asks the breaker whether a lookup may go upstream at all.
    pub fn admit(&self) -> Result<(), Refusal> {
        let result = self.breaker.admit().map_err(Refusal::BreakerOpen);
        telemetry::breaker_state(self.platform, self.breaker.state_code());
        result
    }

    /// Waits (bounded) for budget and a concurrency slot for one request.
    pub async fn pass(&self) -> Result<Pass, Refusal> {
        let deadline = tokio::time::Instant::now() + self.max_queue;
        let wait = async {
            self.budget.until_ready().await;
            self.slots.clone().acquire_owned().await
        };
        match tokio::time::timeout_at(deadline, wait).await {
            Ok(Ok(slot)) => Ok(Pass { _slot: slot }),
            _ => Err(Refusal::Busy(self.max_queue.max(Duration::from_secs(1)))),
        }
    }

    /// Tells the breaker how a lookup that it admitted ended.
    pub fn record(&self, verdict: Verdict) {
        self.breaker.record(verdict);
        telemetry::breaker_state(self.platform, self.breaker.state_code());
    }
}

/// A consecutive-failure circuit breaker with a single half-open probe.
#[derive(Debug)]
pub struct Breaker {
    threshold: u32,
    cooldown: Duration,
    state: Mutex<State>,
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
            state: Mutex::new(State::Closed {
                blocked_in_a_row: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `Ok` when a lookup may go upstream; `Err(wait)` while open or while the probe runs.
    pub fn admit(&self) -> Result<(), Duration> {
        let mut state = self.lock();
        match *state {
            State::Closed { .. } => Ok(()),
            State::Open { until } => {
                let now = Instant::now();
                if now >= until {
                    *state = State::HalfOpen { since: now };
                    Ok(())
                } else {
                    Err(until - now)
                }
            }
            State::HalfOpen { since } if since.elapsed() >= self.cooldown => {
                *state = State::HalfOpen {
                    since: Instant::now(),
                };
                Ok(())
            }
            State::HalfOpen { .. } => Err(self.cooldown),
        }
    }

    /// Records a lookup's end: a block counts towards opening, an answer closes, and an
    /// inconclusive probe hands the probe to the next lookup.
    pub fn record(&self, verdict: Verdict) {
        if self.threshold == 0 {
            return;
        }
        let mut state = self.lock();
        *state = match (*state, verdict) {
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
    }

    /// 0 closed, 1 open, 2 half-open: the value of the breaker gauge.
    pub fn state_code(&self) -> u8 {
        match *self.lock() {
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
            breaker.record(Verdict::Blocked);
            assert!(breaker.admit().is_ok());
        }
        breaker.record(Verdict::Blocked);
        assert!(breaker.admit().is_err(), "open after three blocks");
        std::thread::sleep(Duration::from_millis(60));
        assert!(breaker.admit().is_ok(), "the probe");
        assert!(breaker.admit().is_err(), "only one probe at a time");
        breaker.record(Verdict::Answered);
        assert!(breaker.admit().is_ok(), "a good probe closes it");
    }

    #[test]
    fn a_success_resets_the_count() {
        let breaker = Breaker::new(2, Duration::from_secs(60));
        breaker.record(Verdict::Blocked);
        breaker.record(Verdict::Answered);
        breaker.record(Verdict::Blocked);
        assert!(breaker.admit().is_ok());
    }

    #[test]
    fn a_probe_that_never_reports_is_given_up_after_a_cooldown() {
        let breaker = Breaker::new(1, Duration::from_millis(20));
        breaker.record(Verdict::Blocked);
        std::thread::sleep(Duration::from_millis(30));
        assert!(breaker.admit().is_ok(), "the probe, which is then lost");
        assert!(breaker.admit().is_err());
        std::thread::sleep(Duration::from_millis(30));
        assert!(breaker.admit().is_ok(), "another probe after a cool-down");
        breaker.record(Verdict::Inconclusive);
        assert!(
            breaker.admit().is_ok(),
            "an inconclusive probe hands over at once"
        );
    }

    #[test]
    fn a_failed_probe_reopens() {
        let breaker = Breaker::new(1, Duration::from_millis(20));
        breaker.record(Verdict::Blocked);
        std::thread::sleep(Duration::from_millis(30));
        assert!(breaker.admit().is_ok());
        breaker.record(Verdict::Blocked);
        assert!(breaker.admit().is_err());
    }
}
