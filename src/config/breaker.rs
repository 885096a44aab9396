//! `[breaker]`: when a platform that keeps refusing us is left alone for a while.

use serde::{Deserialize, Serialize};

use super::Section;
use super::limits::{self, DAY_S, range};

/// `[breaker]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BreakerConfig {
    /// Consecutive blocked lookups that open the breaker.
    pub failure_threshold: u32,
    /// How long an open breaker answers at once before letting a probe through.
    pub cooldown_seconds: u64,
}

impl Section for BreakerConfig {
    fn check(&self) -> Result<(), String> {
        limits::check(&[range(
            "breaker.cooldown_seconds",
            self.cooldown_seconds,
            0,
            DAY_S,
            "1 day",
        )])
    }
}
