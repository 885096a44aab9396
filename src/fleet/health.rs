//! Whether Redis is in use right now: failures switch a replica to its local state for a short
//! back-off, one probe at a time finds Redis again, and warnings are rate-limited.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long Redis is skipped after a failure before one call probes it again.
pub const BACKOFF: Duration = Duration::from_secs(1);
/// The least time between two warnings about Redis.
pub const WARN_EVERY: Duration = Duration::from_secs(10);

/// `profile_lookup_redis_up`: 1 while the replica uses Redis, 0 while it is on local state.
pub const REDIS_UP: &str = "profile_lookup_redis_up";
/// `profile_lookup_redis_errors_total{op}`: Redis calls that failed or timed out.
pub const REDIS_ERRORS: &str = "profile_lookup_redis_errors_total";
/// `profile_lookup_redis_skipped_total`: calls answered "unavailable" without trying Redis.
pub const REDIS_SKIPPED: &str = "profile_lookup_redis_skipped_total";
/// `profile_lookup_redis_full_total{op}`: writes Redis refused because its memory is full.
pub const REDIS_FULL: &str = "profile_lookup_redis_full_total";

/// The health state shared by every clone of a `Fleet`.
#[derive(Debug)]
pub(crate) struct Health {
    epoch: Instant,
    up: AtomicBool,
    /// Milliseconds since `epoch` before which Redis is not tried.
    skip_until_ms: AtomicU64,
    /// Milliseconds since `epoch` of the last warning, plus one (0 = never).
    last_warn_ms: AtomicU64,
}

impl Health {
    pub fn new() -> Self {
        metrics::gauge!(REDIS_UP).set(0.0);
        Self {
            epoch: Instant::now(),
            // Optimistic: the first call tries Redis (the connection is made lazily).
            up: AtomicBool::new(true),
            skip_until_ms: AtomicU64::new(0),
            last_warn_ms: AtomicU64::new(0),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether this call may use Redis. While Redis is down, at most one call per back-off
    /// period is let through, as the probe.
    pub fn admit(&self) -> bool {
        if self.up.load(Ordering::Acquire) {
            return true;
        }
        let now = self.now_ms();
        let until = self.skip_until_ms.load(Ordering::Acquire);
        let probe = now >= until
            && self
                .skip_until_ms
                .compare_exchange(
                    until,
                    now + ms(BACKOFF),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok();
        if !probe {
            metrics::counter!(REDIS_SKIPPED).increment(1);
        }
        probe
    }

    /// A call succeeded: Redis is in use (again).
    pub fn succeeded(&self) {
        if !self.up.swap(true, Ordering::AcqRel) {
            metrics::gauge!(REDIS_UP).set(1.0);
            tracing::info!("redis is reachable again; using the fleet's shared state");
        } else {
            // Cheap enough, and keeps the gauge right after start-up.
            metrics::gauge!(REDIS_UP).set(1.0);
        }
    }

    /// A call failed or timed out: skip Redis for [`BACKOFF`], count, and maybe warn.
    pub fn failed(&self, op: &'static str, why: &str) {
        let now = self.now_ms();
        self.skip_until_ms
            .store(now + ms(BACKOFF), Ordering::Release);
        self.up.store(false, Ordering::Release);
        metrics::gauge!(REDIS_UP).set(0.0);
        metrics::counter!(REDIS_ERRORS, "op" => op).increment(1);
        if self.warning_due(now) {
            tracing::warn!(
                op,
                error = why,
                "redis unavailable; this replica goes on with its local state"
            );
        }
    }

    /// Redis answered but refused a write because its memory is full (`maxmemory` under
    /// `noeviction`): Redis is up (counters and locks are still written), only that answer is
    /// not shared. Counted, and warned about at most every [`WARN_EVERY`].
    pub fn full(&self, op: &'static str) {
        self.succeeded();
        metrics::counter!(REDIS_FULL, "op" => op).increment(1);
        if self.warning_due(self.now_ms()) {
            tracing::warn!(
                op,
                "redis memory is full (maxmemory); new answers are not shared until entries \
                 expire, quotas and locks still are"
            );
        }
    }

    /// Whether a warning may be logged now (and, if so, that one is).
    fn warning_due(&self, now: u64) -> bool {
        let last = self.last_warn_ms.load(Ordering::Acquire);
        let due = last == 0 || now + 1 >= last + ms(WARN_EVERY);
        due && self
            .last_warn_ms
            .compare_exchange(last, now + 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Whether the last call found Redis working.
    pub fn is_up(&self) -> bool {
        self.up.load(Ordering::Acquire)
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_skips_redis_then_lets_one_probe_through() {
        let h = Health::new();
        assert!(h.admit());
        h.failed("test", "boom");
        assert!(!h.is_up());
        assert!(!h.admit(), "inside the back-off nothing is tried");
        std::thread::sleep(BACKOFF + Duration::from_millis(20));
        assert!(h.admit(), "one probe after the back-off");
        assert!(!h.admit(), "only one probe at a time");
        h.succeeded();
        assert!(h.admit() && h.admit());
    }
}
