//! Whether Redis is in use right now: failures switch a replica to its local state for a short
//! back-off, one probe at a time finds Redis again, and warnings are rate-limited.
//!
//! A failure is one of two [`Trouble`]s. Redis unreachable, slow or failing is an outage,
//! warned about; Redis refusing this replica's credentials or permissions (`NOAUTH`,
//! `WRONGPASS`, `NOPERM`, a script's ACL refusal: [`refusal`]) is a configuration error that
//! no waiting mends, logged at error level and counted apart (`kind="auth"`), so that it is
//! alerted on instead of passing for an outage while every replica runs alone.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use redis::{ErrorKind, RedisError};

/// How long Redis is skipped after a failure before one call probes it again.
pub const BACKOFF: Duration = Duration::from_secs(1);
/// The least time between two warnings about Redis.
pub const WARN_EVERY: Duration = Duration::from_secs(10);

/// `profile_lookup_redis_up`: 1 while the replica uses Redis, 0 while it is on local state.
pub const REDIS_UP: &str = "profile_lookup_redis_up";
/// `profile_lookup_redis_errors_total{op, kind}`: Redis calls that failed or timed out, by
/// [`Trouble::label`]: `unavailable` (an outage) or `auth` (Redis refused our credentials or
/// permissions: a configuration error).
pub const REDIS_ERRORS: &str = "profile_lookup_redis_errors_total";
/// `profile_lookup_redis_skipped_total`: calls answered "unavailable" without trying Redis.
pub const REDIS_SKIPPED: &str = "profile_lookup_redis_skipped_total";
/// `profile_lookup_redis_full_total{op}`: writes Redis refused because its memory is full.
pub const REDIS_FULL: &str = "profile_lookup_redis_full_total";

/// Why a Redis call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trouble {
    /// Redis could not be reached, was too slow or failed: an outage, which passes.
    Unavailable,
    /// Redis refused this replica's credentials or permissions: the configuration is wrong
    /// (`redis.url`'s user and password, or the user's ACL), and stays wrong until fixed.
    Refused,
}

impl Trouble {
    /// What a failed call's `error` was.
    pub fn of(error: &RedisError) -> Self {
        if refusal(error) {
            Self::Refused
        } else {
            Self::Unavailable
        }
    }

    /// Its `kind` label in [`REDIS_ERRORS`].
    pub fn label(self) -> &'static str {
        match self {
            Self::Unavailable => "unavailable",
            Self::Refused => "auth",
        }
    }
}

/// Whether `error` is Redis refusing this client: a failed `AUTH` (wrong password or user),
/// `NOAUTH` (a password is wanted and none was given), `WRONGPASS`, `NOPERM` (the ACL forbids
/// a command or a key), or a script's call the ACL forbids (Redis 7 words that one as an `ERR`
/// about "the user executing the script").
pub fn refusal(error: &RedisError) -> bool {
    if error.kind() == ErrorKind::AuthenticationFailed {
        return true;
    }
    match error.code() {
        Some("NOAUTH" | "WRONGPASS" | "NOPERM") => true,
        Some("ERR") => error
            .detail()
            .is_some_and(|d| d.contains("user executing the script can't")),
        _ => false,
    }
}

/// The health state shared by every clone of a `Fleet`.
#[derive(Debug)]
pub(crate) struct Health {
    epoch: Instant,
    up: AtomicBool,
    /// Milliseconds since `epoch` before which Redis is not tried.
    skip_until_ms: AtomicU64,
    /// Milliseconds since `epoch` of the last warning, plus one (0 = never).
    last_warn_ms: AtomicU64,
    /// The same for the last error about a refusal: rate-limited apart, so that no outage
    /// warning hides it.
    last_refusal_ms: AtomicU64,
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
            last_refusal_ms: AtomicU64::new(0),
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

    /// A call failed or timed out (`trouble`, `why`): skip Redis for [`BACKOFF`], count, and
    /// maybe warn (an outage) or log an error (a refusal), each at most every [`WARN_EVERY`].
    pub fn failed(&self, op: &'static str, trouble: Trouble, why: &str) {
        let now = self.now_ms();
        self.skip_until_ms
            .store(now + ms(BACKOFF), Ordering::Release);
        self.up.store(false, Ordering::Release);
        metrics::gauge!(REDIS_UP).set(0.0);
        metrics::counter!(REDIS_ERRORS, "op" => op, "kind" => trouble.label()).increment(1);
        match trouble {
            Trouble::Unavailable if due(&self.last_warn_ms, now) => tracing::warn!(
                op,
                error = why,
                "redis unavailable; this replica goes on with its local state"
            ),
            Trouble::Refused if due(&self.last_refusal_ms, now) => tracing::error!(
                op,
                error = why,
                "redis refused this replica's credentials or permissions: a configuration \
                 error, not an outage; this replica runs on its local state (the fleet's \
                 quota and budget count once per replica) until redis.url's user and password, \
                 or that user's ACL, are fixed"
            ),
            _ => {}
        }
    }

    /// Redis answered but refused a write because its memory is full (`maxmemory` under
    /// `noeviction`): Redis is up (counters and locks are still written), only that answer is
    /// not shared. Counted, and warned about at most every [`WARN_EVERY`].
    pub fn full(&self, op: &'static str) {
        self.succeeded();
        metrics::counter!(REDIS_FULL, "op" => op).increment(1);
        if due(&self.last_warn_ms, self.now_ms()) {
            tracing::warn!(
                op,
                "redis memory is full (maxmemory); new answers are not shared until entries \
                 expire, quotas and locks still are"
            );
        }
    }

    /// Whether the last call found Redis working.
    pub fn is_up(&self) -> bool {
        self.up.load(Ordering::Acquire)
    }
}

/// Whether a line rate-limited by `last` (ms of the last one plus one, 0 = never) may be logged
/// at `now` (and, if so, that one is).
fn due(last: &AtomicU64, now: u64) -> bool {
    let then = last.load(Ordering::Acquire);
    let due = then == 0 || now + 1 >= then + ms(WARN_EVERY);
    due && last
        .compare_exchange(then, now + 1, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
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
        h.failed("test", Trouble::Unavailable, "boom");
        assert!(!h.is_up());
        assert!(!h.admit(), "inside the back-off nothing is tried");
        std::thread::sleep(BACKOFF + Duration::from_millis(20));
        assert!(h.admit(), "one probe after the back-off");
        assert!(!h.admit(), "only one probe at a time");
        h.succeeded();
        assert!(h.admit() && h.admit());
    }

    /// A Redis error reply, as the client reads it off the wire.
    fn reply(line: &str) -> RedisError {
        redis::parse_redis_value(format!("-{line}\r\n").as_bytes())
            .and_then(redis::Value::extract_error)
            .expect_err("an error reply")
    }

    #[test]
    fn refusals_are_told_apart_from_outages() {
        for refused in [
            reply("NOAUTH Authentication required."),
            reply("WRONGPASS invalid username-password pair or user is disabled."),
            reply("NOPERM this user has no permissions to run the 'evalsha' command"),
            reply(
                "ERR The user executing the script can't run this command or subcommand \
                 script: 67ed14c1, on @user_script:1.",
            ),
            RedisError::from((
                ErrorKind::AuthenticationFailed,
                "Password authentication failed",
            )),
        ] {
            assert_eq!(Trouble::of(&refused), Trouble::Refused, "{refused}");
        }
        for outage in [
            reply("LOADING Redis is loading the dataset in memory"),
            reply("ERR unknown command 'EVALSHA'"),
            reply("CLUSTERDOWN The cluster is down"),
            reply("READONLY You can't write against a read only replica."),
            RedisError::from(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)),
        ] {
            assert_eq!(Trouble::of(&outage), Trouble::Unavailable, "{outage}");
        }
    }
}
