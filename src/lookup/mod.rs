//! The one way a lookup goes: a checked name and the caller's freshness wishes in, an
//! [`Answer`] out.
//!
//! [`Lookups::look_up`] asks the cache ([`crate::cache`]) with the name's platform fetcher
//! ([`crate::platform::fetcher`]): a stored answer is served at once; otherwise the cache's
//! one flight per name runs the fetcher, whose mode
//! ([`crate::platform::fetcher::Mode`]) travels down with it to the
//! gate. A fetch the caller forces past a stored answer (`max-age`, `no-cache`) costs the
//! caller's key one more quota unit first ([`crate::quota`]); the unit's answer travels up in
//! the [`Answer`], for the edge's `RateLimit` headers. Nothing here knows HTTP beyond the
//! quota's header value and the API error of a refused unit: the edge
//! ([`crate::http::handlers`]) only translates a request in and an answer out.

use axum::http::HeaderValue;

use crate::auth::{KeyId, Keys};
use crate::cache::{ProfileCache, Served, Wants};
use crate::config::Settings;
use crate::error::ApiError;
use crate::fleet::Fleet;
use crate::platform::fetcher::Fetchers;
use crate::quota::KeyLimiter;
use crate::username::Username;

/// What one lookup came to, for the edge to answer.
#[derive(Debug)]
pub enum Answer {
    /// What the cache served; with the caller's quota state after the unit a forced fetch
    /// took (`None`: the lookup took no unit beyond the one the edge took).
    Served {
        /// How it was served.
        served: Served,
        /// The `RateLimit` value after a forced fetch's unit.
        quota: Option<HeaderValue>,
    },
    /// The caller forced a fetch and its quota had no unit left for it: the quota's 429 and
    /// its `RateLimit` value. Nothing was fetched.
    Unpaid {
        /// The quota's refusal.
        over: ApiError,
        /// The `RateLimit` value.
        quota: HeaderValue,
    },
}

/// The lookups of every platform: the cache in front of each platform's fetcher, and the
/// per-key quota that pays for forced fetches.
pub struct Lookups {
    cache: ProfileCache,
    fetchers: Fetchers,
    limiter: KeyLimiter,
}

impl Lookups {
    /// Everything a lookup passes, built from the settings: the quota of the configured
    /// `keys`, the cache and every platform's fetcher, each shared with the `fleet`.
    pub fn new(
        settings: &Settings,
        keys: &Keys,
        fleet: &Fleet,
        flight_deadline: std::time::Duration,
    ) -> Result<Self, crate::upstream::roots::ClientBuildError> {
        Ok(Self {
            cache: ProfileCache::new(settings, fleet).with_flight_deadline(flight_deadline),
            fetchers: Fetchers::new(settings, fleet)?,
            limiter: KeyLimiter::new(&settings.rate_limit, keys, fleet),
        })
    }

    /// Looks `name` up for the caller with key `key`, as fresh as it `wants`: from the cache,
    /// or through the one flight that fetches it (see [`crate::cache`]).
    pub async fn look_up(&self, name: &Username, wants: &Wants, key: KeyId) -> Answer {
        let fetch = self.fetchers.of(name.platform());
        let cache = tracing::info_span!(
            target: crate::telemetry::traces::TARGET,
            "cache",
            profile_lookup.platform = name.platform().as_str(),
            profile_lookup.cache = tracing::field::Empty,
        );
        let looked = self.cache.lookup(name, wants, fetch);
        let forced = match tracing::Instrument::instrument(looked, cache.clone()).await {
            Ok(served) => {
                cache.record("profile_lookup.cache", served.trace_label());
                return Answer::Served {
                    served,
                    quota: None,
                };
            }
            Err(forced) => {
                cache.record("profile_lookup.cache", "forced");
                forced
            }
        };
        // Boxed: a forced fetch is rare, and its futures would otherwise be part of every hit's.
        Box::pin(async move {
            match self.limiter.check_forced(key).await {
                Ok(quota) => Answer::Served {
                    served: self.cache.fly(name, wants, forced, fetch).await,
                    quota: Some(quota),
                },
                Err((over, quota)) => Answer::Unpaid { over, quota },
            }
        })
        .await
    }

    /// What a caller whose deadline passed while the lookup of `name` goes on is told: the
    /// block the platform last answered it (429 `upstream_blocked` with that block's wait),
    /// else 500 `upstream_unavailable`.
    pub fn late(&self, name: &Username) -> ApiError {
        match self.fetchers.of(name.platform()).last_block(name) {
            Some(block) => ApiError::UpstreamBlocked {
                retry_after: block.retry_after,
            },
            None => ApiError::UpstreamUnavailable(None),
        }
    }

    /// The per-key quota (the edge takes each request's unit).
    pub fn limiter(&self) -> &KeyLimiter {
        &self.limiter
    }

    /// Every platform's fetcher (the canary probes through them).
    pub fn fetchers(&self) -> &Fetchers {
        &self.fetchers
    }
}
