//! The canary: long-lived public accounts (`[canary]`) looked up through each source of their
//! platform separately every interval, so that the service notices a platform moving before
//! its callers do, and says which document stopped reading.
//!
//! - [`round`] runs one round: each account through each source of the platform's plan, each
//!   a fetch of a one-document plan in [`crate::platform::fetcher::Mode::Probe`] (the callers'
//!   gate, budget, proxies, browser profiles, retries and fleet politeness; never their cache
//!   or quota, and never recorded by their breaker or resting a proxy).
//! - [`finding`] is what the fetch of one document says, and [`verdict`] turns it into `ok`, `blocked`, `changed`, `missing` or
//!   `unreachable` (the table is there), and a source's accounts into the source's verdict.
//! - [`board`] keeps each source's last verdict, demotes a source `changed` twice in a row
//!   (lookups ask it last, through [`crate::platform::standing`]) and restores it on its next
//!   `ok` round, and sets the metrics; with Redis the board is the fleet's.
//! - [`schedule`] runs rounds every interval, one per fleet with Redis (a lease).
//! - [`status`] is what `GET /status` shows.
//!
//! `profile-lookup canary` runs one round on demand with the same code
//! (`crate::commands::canary`).

pub mod board;
pub mod finding;
pub mod round;
pub mod schedule;
pub mod status;
pub mod verdict;

use crate::config::Settings;
use crate::fleet::Fleet;
use crate::fleet::canary::Rounds;
use crate::platform::fetcher::Fetchers;

pub use board::Board;
pub use status::Status;
pub use verdict::Verdict;

/// One replica's canary: its board, and its turns at the fleet's rounds.
#[derive(Debug)]
pub struct Canary {
    board: Board,
    rounds: Rounds,
}

impl Canary {
    /// The canary `settings` describe, before its first round, taking turns with `fleet`.
    pub fn new(settings: &Settings, fleet: &Fleet) -> Self {
        let holder = format!("replica-{}", uuid::Uuid::new_v4().simple());
        Self {
            board: Board::new(settings),
            rounds: Rounds::new(fleet, holder),
        }
    }

    /// The last verdicts.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// What `GET /status` shows under `settings`.
    pub fn status(&self, settings: &Settings) -> Status {
        status::status(&self.board.snapshot(), &settings.canary)
    }

    /// Runs rounds every interval for as long as it is polled (returns at once when the
    /// canary is off): this replica's, or with Redis one per interval for the fleet.
    pub async fn run(&self, settings: &Settings, fetchers: &Fetchers) {
        schedule::run(&self.board, &self.rounds, settings, fetchers).await;
    }
}
