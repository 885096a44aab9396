//! `[retry]`: how throttled requests are asked again.

use serde::{Deserialize, Serialize};

use super::Section;
use super::limits::{self, HOUR_MS, range};

/// `[retry]`: exponential backoff with full jitter for throttled photo-share requests.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryConfig {
    /// Upstream requests per lookup step, the first included.
    pub max_attempts: u32,
    /// The first backoff delay.
    pub base_delay_ms: u64,
    /// The largest single delay (also caps an upstream `Retry-After`).
    pub max_delay_ms: u64,
    /// The most time one lookup may spend on retries, sleeps included.
    pub max_total_ms: u64,
}

impl Section for RetryConfig {
    fn check(&self) -> Result<(), String> {
        let hour = |key: &str, value| range(format!("retry.{key}"), value, 0, HOUR_MS, "1 hour");
        limits::check(&[
            hour("base_delay_ms", self.base_delay_ms),
            hour("max_delay_ms", self.max_delay_ms),
            hour("max_total_ms", self.max_total_ms),
        ])?;
        if self.max_attempts == 0 {
            return Err("retry.max_attempts counts the first request, so it is at least 1".into());
        }
        if self.base_delay_ms > self.max_delay_ms {
            return Err("retry.base_delay_ms must not exceed retry.max_delay_ms".into());
        }
        Ok(())
    }
}
