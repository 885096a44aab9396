//! Being polite to a platform: an outbound budget, a concurrency cap and a circuit breaker.
//!
//! Whatever our callers do, a platform sees at most `requests_per_second` (with `burst`) and
//! `max_concurrency` requests from one replica, and after `failure_threshold` blocked lookups in
//! a row it sees nothing at all for a cool-down, then one probe. Lookups that cannot get budget
//! within `max_queue_ms` are shed instead of piling up.
//!
//! In a fleet (`[redis]` set) the budget and the breaker are the fleet's ([`Budget`],
//! [`Breaker`]: each one type that falls back to the replica's own inside): each request
//! reserves its send time on Redis and waits for it, so replicas space their requests instead
//! of each bursting, and a breaker that opens on one replica rests the platform for all of
//! them. The concurrency cap is always the replica's own.
//!
//! Every fetch passes here in a [`Mode`], an argument from the cache down to each request:
//!
//! - a caller's lookup queues for budget (bounded) and its end is recorded by the breaker;
//! - a **background refresh** (stale-while-revalidate, hot names before they expire) is held to
//!   the refresh share (a [`Budget`]): `cache.refresh_share` of the platform's `requests_per_second` (and of
//!   its `burst`, at least 1), the fleet's with Redis (its own key next to the outbound
//!   budget's) and the replica's without. Each request also needs a slot and a token of the
//!   whole budget *at once*: a refresh never queues, so it never stands in front of a caller's
//!   miss, and when either has no room it is refused (`Busy`) and the refresh skipped. Callers'
//!   misses therefore always have at least `1 - refresh_share` of the budget, and the rest
//!   whenever refreshes leave it unused;
//! - the canary's **probe** of one document spends the outbound budget like a caller, is
//!   refused while the breaker is open, but never records into it: one document refused to a
//!   canary account is not the callers' lookups being refused.

use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tracing::Instrument;

use crate::config::{PlatformConfig, Settings, ms};
use crate::fleet::Fleet;
use crate::fleet::breaker::Breaker;
use crate::fleet::budget::{Budget, Purse};
use crate::telemetry;

pub use crate::fleet::breaker::{Signal, Ticket};

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
    slots: std::sync::Arc<Semaphore>,
    max_queue: Duration,
    /// The outbound budget (the fleet's with Redis).
    budget: Budget,
    /// The budget's share for background refreshes; `None` for a share of 0.
    refresh: Option<Budget>,
    /// The breaker (the fleet's with Redis).
    breaker: Breaker,
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
        let per_second = f64::from(p.requests_per_second.max(1));
        let share = per_second * settings.cache.refresh_share;
        let refresh = (share > 0.0).then(|| {
            let burst = (f64::from(p.burst) * settings.cache.refresh_share).floor() as u32;
            Budget::new(fleet, platform, Purse::RefreshShare, share, burst.max(1))
        });
        Self {
            platform,
            slots: std::sync::Arc::new(Semaphore::new(p.max_concurrency)),
            max_queue: ms(p.max_queue_ms),
            budget: Budget::new(fleet, platform, Purse::Outbound, per_second, p.burst),
            refresh,
            breaker: Breaker::new(
                fleet,
                platform,
                b.failure_threshold,
                Duration::from_secs(b.cooldown_seconds),
            ),
        }
    }

    /// The platform's metric label.
    pub fn platform(&self) -> &'static str {
        self.platform
    }

    /// Whether a background refresh may ever pass (the refresh share is above 0).
    pub fn refreshes(&self) -> bool {
        self.refresh.is_some()
    }

    /// Asks the breaker whether a fetch in `mode` may go upstream at all; the ticket goes back
    /// to [`Gate::record`] with the fetch's end. A probe only reads the breaker: its ticket
    /// records nothing, and it never takes the one half-open trial from a caller.
    pub async fn admit(&self, mode: Mode) -> Result<Ticket, Refusal> {
        let result = match mode {
            Mode::Probe => self.breaker.peek().await,
            Mode::Caller | Mode::Refresh => self.breaker.admit().await,
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
        let waited = tracing::info_span!(
            target: crate::telemetry::traces::TARGET,
            "budget_wait",
            profile_lookup.budget.result = tracing::field::Empty,
        );
        let taken = self.budget.take(deadline).instrument(waited.clone()).await;
        waited.record(
            "profile_lookup.budget.result",
            if taken.is_ok() { "granted" } else { "busy" },
        );
        match taken {
            Ok(()) => Ok(Pass { _slot: slot }),
            Err(Some(wait)) => Err(Refusal::Busy(wait.max(Duration::from_secs(1)))),
            Err(None) => Err(busy),
        }
    }

    /// A background refresh's request: a slot, a unit of the refresh share and a token of the
    /// whole budget, each free now, or [`Refusal::Busy`] (the refresh is skipped).
    async fn pass_now(&self) -> Result<Pass, Refusal> {
        let busy = Refusal::Busy(Duration::from_secs(1));
        let Ok(slot) = self.slots.clone().try_acquire_owned() else {
            return Err(busy);
        };
        let Some(share) = &self.refresh else {
            return Err(busy);
        };
        if share.take_now().await && self.budget.take_now().await {
            Ok(Pass { _slot: slot })
        } else {
            Err(busy)
        }
    }

    /// Tells the breaker how a fetch that it admitted (with `ticket`) ended.
    pub async fn record(&self, ticket: Ticket, signal: Signal) {
        self.breaker.record(ticket, signal).await;
        telemetry::breaker_state(self.platform, self.breaker.state_code());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_that_never_got_a_slot_spends_no_budget() {
        let mut settings = crate::config::Settings::default();
        let platform = crate::registry::Platform::PhotoShare;
        let p = settings.platform_mut(platform);
        p.requests_per_second = 1;
        p.burst = 2;
        p.max_concurrency = 1;
        p.max_queue_ms = 100;
        let gate = Gate::new(
            "test",
            settings.platform(platform),
            &settings,
            &Fleet::local(),
        );
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
