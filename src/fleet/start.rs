//! The one check `serve` makes of Redis before it serves: Redis refusing this replica's
//! credentials or permissions is a settings error, and the replica does not start; a Redis that
//! cannot be reached is no error (see "When Redis refuses us" in [`crate::fleet`]).

use std::time::Duration;

use super::Fleet;
use super::health::Trouble;

/// How many times [`Fleet::check_at_start`] asks Redis before the replica starts on its own
/// state (each try bounded by `redis.timeout_ms`).
pub const START_TRIES: u32 = 3;
/// The pause between two tries: a Redis restarting alongside the replica has a moment more.
const PAUSE: Duration = Duration::from_millis(100);

/// Redis refused this replica's credentials or permissions when `serve` asked it at start-up.
/// Its text names the setting and the redacted URL, never a password.
#[derive(Debug, thiserror::Error)]
#[error(
    "redis.url: Redis at {target} refused this replica ({why}); a replica that started anyway \
     would run alone, with its own quota and outbound budget: give the user and password Redis \
     expects in redis.url (redis://USER:PASSWORD@HOST:PORT/DB), or grant that user the commands \
     the service runs (docs/deployment.md, \"Redis\")"
)]
pub struct Refused {
    /// `redis.url` with any password replaced.
    target: String,
    /// Redis's answer (its error code and text carry no password).
    why: String,
}

/// What Redis said when it was asked at start-up, when it did not refuse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AtStart {
    /// No `redis.url`: the replica keeps its own state.
    Alone,
    /// Redis answered `PING`.
    Answered,
    /// Redis could not be reached (why, with no password): the replica starts on its own
    /// state and uses the fleet's as soon as Redis answers.
    Unreachable(String),
}

impl Fleet {
    /// Asks Redis once (`PING`, up to [`START_TRIES`] tries within `redis.timeout_ms` each)
    /// before `serve` serves: [`Refused`] when Redis refuses this replica; otherwise what it
    /// said ([`AtStart`]): it answered, it could not be reached (warned about: the replica
    /// starts on its local state and uses Redis as soon as it answers), or at once for a local
    /// handle.
    pub async fn check_at_start(&self) -> Result<AtStart, Refused> {
        let Some(redis) = &self.redis else {
            return Ok(AtStart::Alone);
        };
        let mut last = String::new();
        for attempt in 1..=START_TRIES {
            let mut conn = redis.conn.clone();
            let ping = redis::cmd("PING");
            let answer = ping.query_async::<String>(&mut conn);
            match tokio::time::timeout(redis.timeout, answer).await {
                Ok(Ok(_)) => {
                    redis.health.succeeded();
                    return Ok(AtStart::Answered);
                }
                Ok(Err(e)) if Trouble::of(&e) == Trouble::Refused => {
                    return Err(Refused {
                        target: redis.shown.clone(),
                        why: e.to_string(),
                    });
                }
                Ok(Err(e)) => last = e.to_string(),
                Err(_) => last = format!("no answer within {:?}", redis.timeout),
            }
            if attempt < START_TRIES {
                tokio::time::sleep(PAUSE).await;
            }
        }
        tracing::warn!(
            tries = START_TRIES,
            error = %last,
            "redis could not be reached at start-up; this replica starts on its local state and \
             uses the fleet's as soon as Redis answers"
        );
        Ok(AtStart::Unreachable(last))
    }
}
