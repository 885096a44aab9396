//! The canary's metrics: the verdict of each source, when it last read, the rounds.
//!
//! With Redis every replica shows the fleet's verdicts (the one that ran the round publishes
//! them, the others read them once per interval), so alert rules aggregate over replicas
//! (`max by (job, platform, source)`) instead of alerting once per replica.

use metrics::{counter, gauge};

/// Gauge: 1 for the current verdict of a source, 0 for the others, by `platform`, `source` and
/// `verdict` (`ok`, `blocked`, `changed`, `missing`, `unreachable`).
pub const VERDICT: &str = "profile_lookup_canary_verdict";
/// Gauge: when a source last read `ok` (Unix seconds), by `platform` and `source`.
pub const LAST_OK: &str = "profile_lookup_canary_last_ok_timestamp_seconds";
/// Gauge: rounds in a row a source was `changed` (2 demote it), by `platform` and `source`.
pub const CHANGED_ROUNDS: &str = "profile_lookup_canary_changed_rounds";
/// Gauge: 1 while lookups ask a source last (the canary found it `changed`), by `platform`
/// and `source`.
pub const DEMOTED: &str = "profile_lookup_canary_demoted";
/// Gauge: how long the last round took, in seconds.
pub const ROUND_DURATION: &str = "profile_lookup_canary_round_duration_seconds";
/// Gauge: when the last round ended (Unix seconds); the canary's start until its first round.
pub const LAST_ROUND: &str = "profile_lookup_canary_last_round_timestamp_seconds";
/// Gauge: `canary.interval_seconds`, so that an alert can tell a late round from an early one.
pub const INTERVAL: &str = "profile_lookup_canary_interval_seconds";
/// Counter: rounds this replica ran (with Redis, one replica runs each round for the fleet).
pub const ROUNDS: &str = "profile_lookup_canary_rounds_total";
/// Counter: probes that said nothing about their source, by `platform`, `source` and `reason`
/// (`overloaded`: our own outbound budget was spent; or the source's own word for an account
/// it withholds by design, `embed_private_or_missing`, `business_account`).
pub const SKIPPED: &str = "profile_lookup_canary_skipped_total";

/// The verdicts, as the `verdict` label spells them.
pub const VERDICTS: [&str; 5] = ["ok", "blocked", "changed", "missing", "unreachable"];

pub(super) fn describe() {
    metrics::describe_gauge!(
        VERDICT,
        "Canary: 1 for the current verdict of each source, by platform, source and verdict"
    );
    metrics::describe_gauge!(
        LAST_OK,
        metrics::Unit::Seconds,
        "Canary: when each source last read ok (Unix time)"
    );
    metrics::describe_gauge!(
        CHANGED_ROUNDS,
        "Canary: rounds in a row each source was changed (2 move it last in lookups)"
    );
    metrics::describe_gauge!(
        DEMOTED,
        "Canary: 1 while lookups ask this source last, by platform and source"
    );
    metrics::describe_gauge!(
        ROUND_DURATION,
        metrics::Unit::Seconds,
        "Canary: how long the last round took"
    );
    metrics::describe_gauge!(
        LAST_ROUND,
        metrics::Unit::Seconds,
        "Canary: when the last round ended (Unix time; the canary's start before its first)"
    );
    metrics::describe_gauge!(
        INTERVAL,
        metrics::Unit::Seconds,
        "Canary: the configured interval between rounds"
    );
    metrics::describe_counter!(ROUNDS, "Canary: rounds this replica ran");
    metrics::describe_counter!(
        SKIPPED,
        "Canary: probes that said nothing about their source, by platform, source and reason"
    );
}

/// Sets one source's verdict gauges (1 for `verdict`, 0 for the others), its last `ok` time
/// (when it has one), its `changed` rounds in a row and whether lookups ask it last.
pub fn source(
    platform: &'static str,
    source: &'static str,
    verdict: &'static str,
    last_ok: Option<u64>,
    changed_rounds: u32,
    demoted: bool,
) {
    let _ = super::metrics_handle();
    for v in VERDICTS {
        let on = if v == verdict { 1.0 } else { 0.0 };
        gauge!(VERDICT, "platform" => platform, "source" => source, "verdict" => v).set(on);
    }
    if let Some(at) = last_ok {
        gauge!(LAST_OK, "platform" => platform, "source" => source).set(at as f64);
    }
    gauge!(CHANGED_ROUNDS, "platform" => platform, "source" => source)
        .set(f64::from(changed_rounds));
    gauge!(DEMOTED, "platform" => platform, "source" => source).set(if demoted {
        1.0
    } else {
        0.0
    });
}

/// Records the end of a round (this replica's, or the fleet's as read from Redis): when, and
/// how long it took.
pub fn round_ended(at_unix_seconds: u64, took_seconds: f64) {
    let _ = super::metrics_handle();
    gauge!(LAST_ROUND).set(at_unix_seconds as f64);
    gauge!(ROUND_DURATION).set(took_seconds);
}

/// Records that the canary started, with its interval: the last-round gauge starts at the
/// start, so a canary that never completes a round is seen as stale.
pub fn started(interval_seconds: u64, at_unix_seconds: u64) {
    let _ = super::metrics_handle();
    gauge!(INTERVAL).set(interval_seconds as f64);
    gauge!(LAST_ROUND).set(at_unix_seconds as f64);
}

/// Counts one round this replica ran.
pub fn round_run() {
    let _ = super::metrics_handle();
    counter!(ROUNDS).increment(1);
}

/// Counts one probe that said nothing about its source.
pub fn skipped(platform: &'static str, source: &'static str, reason: &'static str) {
    let _ = super::metrics_handle();
    counter!(SKIPPED, "platform" => platform, "source" => source, "reason" => reason).increment(1);
}
