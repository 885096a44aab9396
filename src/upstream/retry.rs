//! Retrying one upstream step: exponential backoff with full jitter, `Retry-After` honoured.
//!
//! Per SPEC, a platform's blocking signals are retried up to `retry.max_attempts` requests in
//! all (the first included), each wait drawn uniformly from zero to
//! `min(max_delay, base_delay × 2ⁿ)` ("full jitter", so many replicas do not retry in step),
//! or the platform's own `Retry-After` when it sent one (capped at `max_delay`). All waits of one
//! lookup add up to at most `retry.max_total_ms`. Transport faults and 5xx are retried once at
//! most; everything else (a 404, an oversized body, a timeout) is final.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder, Retryable};

use crate::config::{RetryConfig, ms};
use crate::telemetry;

/// What one attempt of a step came to.
#[derive(Debug, Clone)]
pub enum Attempt<T> {
    /// A final answer: stop here.
    Done(T),
    /// The platform throttled or walled us: worth waiting and trying again.
    Throttled {
        /// The signal seen, for logs and metrics.
        reason: &'static str,
        /// The platform's `Retry-After`, if any.
        retry_after: Option<Duration>,
        /// What to answer if this was the last attempt.
        last: T,
    },
    /// A transport fault or 5xx: worth one more try.
    Transient {
        /// The fault, for logs and metrics.
        reason: &'static str,
        /// What to answer if no retry is left.
        last: T,
    },
}

impl<T> Attempt<T> {
    fn into_value(self) -> T {
        match self {
            Attempt::Done(v)
            | Attempt::Throttled { last: v, .. }
            | Attempt::Transient { last: v, .. } => v,
        }
    }
}

/// The retry settings of one platform, ready to drive attempts.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    max_attempts: u32,
    base_delay: Duration,
    max_delay: Duration,
    max_total: Duration,
}

impl RetryPolicy {
    /// Reads `[retry]`.
    pub fn new(settings: &RetryConfig) -> Self {
        Self {
            max_attempts: settings.max_attempts.max(1),
            base_delay: ms(settings.base_delay_ms),
            max_delay: ms(settings.max_delay_ms),
            max_total: ms(settings.max_total_ms),
        }
    }

    /// A policy that never retries transport faults or throttles (used where SPEC asks for none).
    pub fn once() -> Self {
        Self {
            max_attempts: 1,
            base_delay: Duration::ZERO,
            max_delay: Duration::ZERO,
            max_total: Duration::ZERO,
        }
    }

    /// The longest a caller should be told to wait when retries ran out.
    pub fn max_delay(&self) -> Duration {
        self.max_delay
    }

    /// Runs `attempt` until it is `Done`, or retries are spent; returns the last value.
    pub async fn run<T, F, Fut>(&self, platform: &'static str, mut attempt: F) -> T
    where
        T: Send,
        F: FnMut() -> Fut,
        Fut: Future<Output = Attempt<T>>,
    {
        let backoff = ExponentialBuilder::default()
            .with_min_delay(self.base_delay)
            .with_max_delay(self.max_delay)
            .with_factor(2.0)
            .with_max_times(self.max_attempts.saturating_sub(1) as usize)
            .with_total_delay(Some(self.max_total))
            .build()
            .map(full_jitter as fn(Duration) -> Duration);
        let transient_retries = Arc::new(AtomicU32::new(0));
        let max_delay = self.max_delay;
        let result = (|| {
            let fut = attempt();
            async move {
                match fut.await {
                    Attempt::Done(v) => Ok(v),
                    other => Err(other),
                }
            }
        })
        .retry(backoff)
        .when(|e: &Attempt<T>| match e {
            Attempt::Throttled { .. } => true,
            Attempt::Transient { .. } => transient_retries.fetch_add(1, Ordering::Relaxed) == 0,
            Attempt::Done(_) => false,
        })
        .adjust(move |e: &Attempt<T>, planned| match (e, planned) {
            (
                Attempt::Throttled {
                    retry_after: Some(wait),
                    ..
                },
                Some(_),
            ) => Some((*wait).min(max_delay)),
            _ => planned,
        })
        .notify(|e: &Attempt<T>, _| match e {
            Attempt::Throttled { reason, .. } | Attempt::Transient { reason, .. } => {
                telemetry::retry(platform, reason);
                tracing::debug!(platform, reason, "retrying upstream request");
            }
            Attempt::Done(_) => {}
        })
        .await;
        match result {
            Ok(v) => v,
            Err(e) => e.into_value(),
        }
    }
}

/// "Full jitter": a uniformly random wait between zero and the exponential delay.
fn full_jitter(delay: Duration) -> Duration {
    delay.mul_f64(fastrand::f64())
}
