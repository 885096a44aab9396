//! When rounds run: every `canary.interval_seconds`, give or take `canary.jitter` of it, on
//! each replica. With Redis, each replica that wakes tries the fleet's round lease (it lives
//! one interval): the one that takes it runs the round and publishes the board, the others
//! adopt the published board, so the fleet runs one round per interval and every replica
//! shows its verdicts. When Redis cannot be used, each replica runs its own rounds, as
//! without Redis.

use std::time::Duration;

use tokio::time::Instant;

use super::board::{Board, now_ms};
use super::round::{self, Limits};
use super::verdict::Judged;
use crate::config::{Settings, ms};
use crate::fleet::canary::Rounds;
use crate::platform::fetcher::Fetchers;
use crate::telemetry::canary as metrics;

/// The wait before the first round: a random part of `jitter` of the interval, so that a fleet
/// started at once does not ask for the lease in the same millisecond (none at all with
/// `jitter = 0`).
pub fn first_wait(interval: Duration, jitter: f64) -> Duration {
    interval.mul_f64(jitter * fastrand::f64())
}

/// The wait between two rounds: the interval, longer or shorter by up to `jitter` of it.
pub fn next_wait(interval: Duration, jitter: f64) -> Duration {
    interval.mul_f64(1.0 + jitter * (2.0 * fastrand::f64() - 1.0))
}

/// Runs rounds for as long as the returned future is polled, taking turns with the fleet's
/// `rounds`; returns at once when the canary is off.
pub async fn run(board: &Board, rounds: &Rounds, settings: &Settings, fetchers: &Fetchers) {
    let config = &settings.canary;
    if !config.is_on() {
        return;
    }
    let interval = Duration::from_secs(config.interval_seconds);
    metrics::started(config.interval_seconds, now_ms() / 1000);
    tokio::time::sleep(first_wait(interval, config.jitter)).await;
    loop {
        tick(board, rounds, settings, fetchers, interval).await;
        tokio::time::sleep(next_wait(interval, config.jitter)).await;
    }
}

/// One wake-up: the fleet's last board, adopted when it is newer than this replica's (the
/// last round may have been another replica's), then this replica's round when the turn is
/// its own, published for the others.
async fn tick(
    board: &Board,
    rounds: &Rounds,
    settings: &Settings,
    fetchers: &Fetchers,
    interval: Duration,
) {
    let turn = rounds.turn(interval).await;
    if let Some(bytes) = rounds.last_board(turn).await
        && let Some(shared) = Board::decode(&bytes)
    {
        board.adopt(shared, fetchers);
    }
    if turn.is_ours() {
        run_round(board, settings, fetchers, interval).await;
        rounds.publish(turn, board.encode(), interval).await;
    }
}

/// Runs one round of every configured account, ending within `interval` (the lease), and
/// records it.
pub async fn run_round(
    board: &Board,
    settings: &Settings,
    fetchers: &Fetchers,
    interval: Duration,
) {
    let limits = Limits {
        per_probe: ms(settings.server.request_timeout_ms),
        round_ends: Instant::now() + interval,
    };
    let accounts = round::accounts(settings, None);
    let round = round::run(settings, fetchers, &accounts, limits, &|_| {}).await;
    metrics::round_run();
    for row in &round.rows {
        match &row.judged {
            Judged::Skipped(reason) => {
                metrics::skipped(row.platform.as_str(), row.source, reason);
            }
            judged => tracing::debug!(
                platform = row.platform.as_str(),
                source = row.source,
                verdict = judged.label(),
                reason = judged.reason().unwrap_or("-"),
                status = row.status.unwrap_or(0),
                ms = u64::try_from(row.elapsed.as_millis()).unwrap_or(u64::MAX),
                "canary probe"
            ),
        }
    }
    for result in round.by_source() {
        if let Some(verdict) = result.verdict.filter(|v| *v != super::Verdict::Ok) {
            tracing::warn!(
                platform = result.platform.as_str(),
                source = result.source,
                verdict = verdict.label(),
                reason = result.reason.unwrap_or("-"),
                "canary: a source did not read ok"
            );
        }
    }
    board.record(&round, now_ms(), fetchers);
    tracing::info!(
        probes = round.rows.len(),
        took_ms = u64::try_from(round.took.as_millis()).unwrap_or(u64::MAX),
        "canary round done"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_stay_within_the_jitter() {
        let interval = Duration::from_secs(600);
        for _ in 0..1000 {
            let next = next_wait(interval, 0.1);
            assert!(next >= Duration::from_secs(540) && next <= Duration::from_secs(660));
            assert!(first_wait(interval, 0.1) <= Duration::from_secs(60));
        }
        assert_eq!(next_wait(interval, 0.0), interval);
        assert_eq!(first_wait(interval, 0.0), Duration::ZERO);
    }
}
