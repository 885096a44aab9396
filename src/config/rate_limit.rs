//! `[rate_limit]`: the quota of each API key.

use serde::{Deserialize, Serialize};

use super::Section;

/// `[rate_limit]`: a GCRA quota per API key.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimitConfig {
    /// Sustained requests per minute per key.
    pub per_key_per_minute: u32,
    /// Requests a key may send at once before the sustained rate applies.
    pub burst: u32,
    /// Whether each key's requests are counted in `profile_lookup_key_requests_total`, by its
    /// id (a digest's head, never the key): series bounded by the configured keys, off by
    /// default so that a service with many keys does not grow its metrics unasked.
    pub key_id_metrics: bool,
}

impl Section for RateLimitConfig {
    fn check(&self) -> Result<(), String> {
        if self.per_key_per_minute == 0 || self.burst == 0 {
            return Err(
                "rate_limit.per_key_per_minute and rate_limit.burst must be at least 1".into(),
            );
        }
        Ok(())
    }
}
