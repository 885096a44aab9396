//! Retrying one upstream step: exponential backoff with full jitter, `Retry-After` honoured.
//!
//! Per SPEC, a platform's blocking signals are retried up to `retry.max_attempts` requests in
//! all (the first included), each wait drawn uniformly from zero to
//! `min(max_delay, base_delay × 2ⁿ)` ("full jitter", so many replicas do not retry in step),
//! or the platform's own `Retry-After` when it sent one (never less than that exponential
//! delay). Every wait of one lookup counts towards `retry.max_total_ms` (whichever source
//! it was for: [`RetryPolicy::within`]), a `Retry-After` included: a wait that does not fit in
//! what is left ends the retries at once. Transport
//! faults and 5xx are retried once at most; everything else (a 404, an oversized body, a
//! timeout) is final.

use std::time::Duration;

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
    /// The request was never sent: our own outbound budget refused it. Not the platform's
    /// answer, so on a retry the lookup ends as what the platform last said (a block stays a
    /// block, counted by the breaker), not as `overloaded`.
    NotSent(T),
    /// A transport fault or 5xx: worth one more try.
    Transient {
        /// The fault, for logs and metrics.
        reason: &'static str,
        /// What to answer if no retry is left.
        last: T,
    },
}

/// The retry settings of one platform, ready to drive attempts.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    max_attempts: u32,
    retry_throttles: bool,
    base_delay: Duration,
    max_delay: Duration,
    max_total: Duration,
}

impl RetryPolicy {
    /// Reads `[retry]`.
    pub fn new(settings: &RetryConfig) -> Self {
        Self {
            max_attempts: settings.max_attempts.max(1),
            retry_throttles: true,
            base_delay: ms(settings.base_delay_ms),
            max_delay: ms(settings.max_delay_ms),
            max_total: ms(settings.max_total_ms),
        }
    }

    /// This policy for a lookup on `route` of a platform that does (`retries_blocks`) or does
    /// not wait its blocks out. Through a proxy, or while another browser profile is left to
    /// present, a block is not waited out where it is either: it ends the step at once, and
    /// the lookup moves to another proxy or profile (the fetcher). Transport faults and
    /// 5xx keep their one retry.
    pub fn on(
        &self,
        route: &crate::upstream::egress::RouteLease<'_>,
        retries_blocks: bool,
    ) -> Self {
        Self {
            retry_throttles: retries_blocks && !route.moves_on_block(),
            ..self.clone()
        }
    }

    /// This policy for a step of a lookup that has run for `spent` already: its waits fit in
    /// what is left of `max_total`, so that every source a lookup asks shares one retry budget.
    pub fn within(self, spent: Duration) -> Self {
        Self {
            max_total: self.max_total.saturating_sub(spent),
            ..self
        }
    }

    /// What is left of the lookup's retry budget after `spent` (`retry.max_total_ms`): how
    /// long a lookup may still go on asking after its answer was found.
    pub fn left(&self, spent: Duration) -> Duration {
        self.max_total.saturating_sub(spent)
    }

    /// Runs `attempt` until it is `Done`, or retries are spent; returns the last value.
    ///
    /// Every wait counts against `max_total`, the platform's `Retry-After` included: when the
    /// next wait does not fit in what is left, the retries end at once with the last answer
    /// (for a block, `upstream_blocked` carrying the platform's `Retry-After`).
    pub async fn run<T, F, Fut>(&self, platform: &'static str, mut attempt: F) -> T
    where
        T: Send,
        F: FnMut() -> Fut,
        Fut: Future<Output = Attempt<T>>,
    {
        let mut waited = Duration::ZERO;
        let mut retries = 0u32;
        let mut transient_retried = false;
        let mut previous: Option<T> = None;
        loop {
            let (reason, asked, last) = match attempt().await {
                Attempt::Done(v) => return v,
                Attempt::NotSent(v) => return previous.unwrap_or(v),
                Attempt::Throttled { last, .. } if !self.retry_throttles => return last,
                Attempt::Throttled {
                    reason,
                    retry_after,
                    last,
                } => (reason, retry_after, last),
                Attempt::Transient { last, .. } if transient_retried => return last,
                Attempt::Transient { reason, last } => {
                    transient_retried = true;
                    (reason, None, last)
                }
            };
            if retries + 1 >= self.max_attempts {
                return last;
            }
            let Some(wait) = self.next_wait(retries, asked, self.max_total.saturating_sub(waited))
            else {
                return last;
            };
            retries += 1;
            waited += wait;
            previous = Some(last);
            telemetry::retry(platform, reason);
            tracing::debug!(platform, reason, ?wait, "retrying upstream request");
            let backoff = tracing::info_span!(
                target: crate::telemetry::traces::TARGET,
                "backoff",
                profile_lookup.retry.reason = reason,
                profile_lookup.retry.number = retries,
            );
            tracing::Instrument::instrument(tokio::time::sleep(wait), backoff).await;
        }
    }

    /// The wait before retry `n` (from 0), or `None` when it does not fit in `left`.
    ///
    /// Without a `Retry-After` it is full jitter over `min(max_delay, base_delay × 2ⁿ)`. With
    /// one it is what the platform asked, but never less than that exponential delay, so
    /// `Retry-After: 0` (or a date in the past) cannot make retries back to back.
    fn next_wait(&self, n: u32, asked: Option<Duration>, left: Duration) -> Option<Duration> {
        let factor = 1u32.checked_shl(n).unwrap_or(u32::MAX);
        let exponential = self.base_delay.saturating_mul(factor).min(self.max_delay);
        let wait = match asked {
            Some(asked) => asked.max(exponential),
            None => full_jitter(exponential),
        };
        (wait <= left).then_some(wait)
    }
}

/// "Full jitter": a uniformly random wait between zero and the exponential delay.
fn full_jitter(delay: Duration) -> Duration {
    delay.mul_f64(fastrand::f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 4,
            retry_throttles: true,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(5),
            max_total: Duration::from_millis(1_500),
        }
    }

    #[test]
    fn a_retry_after_longer_than_what_is_left_ends_the_retries() {
        let left = Duration::from_millis(500);
        assert_eq!(
            policy().next_wait(1, Some(Duration::from_secs(1)), left),
            None
        );
        assert_eq!(
            policy().next_wait(
                0,
                Some(Duration::from_secs(1)),
                Duration::from_millis(1_500)
            ),
            Some(Duration::from_secs(1))
        );
    }

    #[test]
    fn a_zero_retry_after_waits_the_exponential_delay() {
        let left = Duration::from_secs(10);
        assert_eq!(
            policy().next_wait(0, Some(Duration::ZERO), left),
            Some(Duration::from_millis(100))
        );
        assert_eq!(
            policy().next_wait(2, Some(Duration::ZERO), left),
            Some(Duration::from_millis(400))
        );
        assert_eq!(
            policy().next_wait(40, Some(Duration::ZERO), left),
            Some(Duration::from_secs(5)),
            "capped at max_delay, no overflow"
        );
    }
}
