//! The profile cache: one upstream flight per name, TTLs, negative entries, stale serving.
//!
//! Two moka stores share the same entries:
//!
//! - `fresh` answers within `ttl_seconds` (found) or `negative_ttl_seconds` (not found). Its
//!   `try_get_with` runs one fetch per key however many callers miss at once; the others wait
//!   for that fetch and share its result, success or failure. Failures are never stored.
//! - `stale` keeps found profiles for `ttl + max_stale_seconds`, and is read only when a fetch
//!   fails, so a platform outage degrades to slightly old answers instead of errors.
//!
//! Entries hold the response body already serialised, so a hit costs a reference-count bump.
//! With `cache.enabled = false` entries expire at once but concurrent misses still coalesce.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use moka::Expiry;
use moka::future::Cache;

use crate::config::CacheConfig;
use crate::platform::{Lookup, Report};
use crate::telemetry;
use crate::username::Username;

/// A stored answer: what the API returns for a name.
#[derive(Debug)]
pub struct Entry {
    /// The answer.
    pub value: Stored,
    /// When the upstream gave it.
    pub stored_at: Instant,
    /// Upstream requests the fetch took (for the access log of the request that fetched).
    pub upstream_requests: u32,
}

/// The cacheable answers.
#[derive(Debug, Clone)]
pub enum Stored {
    /// A profile body (serialised once) and its private flag.
    Found {
        /// The exact JSON response body.
        body: Bytes,
        /// Whether the account is private.
        private: bool,
    },
    /// The platform says there is no such user.
    NotFound,
}

/// How a request was served, for headers and the access log.
#[derive(Debug, Clone)]
pub enum Served {
    /// From a stored answer; `fetched` tells whether this request's own fetch stored it.
    Fresh {
        /// The answer.
        entry: Arc<Entry>,
        /// True for the caller whose fetch produced the entry (a miss), false for a hit.
        fetched: bool,
        /// Seconds the entry may still be served fresh.
        max_age: u64,
    },
    /// The fetch failed and an older profile was served instead.
    Stale {
        /// The old answer.
        entry: Arc<Entry>,
        /// What the failed fetch reported.
        failure: Report,
    },
    /// The fetch failed and nothing could stand in for it.
    Failed(Report),
}

/// The cache; see the module docs.
pub struct ProfileCache {
    fresh: Cache<Username, Arc<Entry>>,
    stale: Option<Cache<Username, Arc<Entry>>>,
    ttl: Duration,
    negative_ttl: Duration,
}

struct TtlByOutcome {
    found: Duration,
    not_found: Duration,
}

impl Expiry<Username, Arc<Entry>> for TtlByOutcome {
    fn expire_after_create(
        &self,
        _: &Username,
        entry: &Arc<Entry>,
        _: Instant,
    ) -> Option<Duration> {
        Some(match entry.value {
            Stored::Found { .. } => self.found,
            Stored::NotFound => self.not_found,
        })
    }
}

fn weight(_: &Username, entry: &Arc<Entry>) -> u32 {
    let body = match &entry.value {
        Stored::Found { body, .. } => body.len(),
        Stored::NotFound => 0,
    };
    u32::try_from(body + 64).unwrap_or(u32::MAX)
}

impl ProfileCache {
    /// Builds both stores from `[cache]`.
    pub fn new(settings: &CacheConfig) -> Self {
        let (ttl, negative_ttl) = if settings.enabled {
            (
                Duration::from_secs(settings.ttl_seconds),
                Duration::from_secs(settings.negative_ttl_seconds),
            )
        } else {
            (Duration::ZERO, Duration::ZERO)
        };
        let fresh = Cache::builder()
            .max_capacity(settings.max_bytes)
            .weigher(weight)
            .expire_after(TtlByOutcome {
                found: ttl,
                not_found: negative_ttl,
            })
            .build();
        let stale = (settings.enabled && settings.max_stale_seconds > 0).then(|| {
            Cache::builder()
                .max_capacity(settings.max_bytes)
                .weigher(weight)
                .time_to_live(ttl + Duration::from_secs(settings.max_stale_seconds))
                .build()
        });
        Self {
            fresh,
            stale,
            ttl,
            negative_ttl,
        }
    }

    /// Answers `name` from the cache, or runs `fetch()` once for all concurrent callers.
    ///
    /// `fetch` is called only on a miss, and its (large) future is boxed there, so a hit
    /// neither builds nor moves the upstream state machine.
    pub async fn get_or_fetch<C, F>(&self, name: &Username, fetch: C) -> Served
    where
        C: FnOnce() -> F,
        F: Future<Output = Report>,
    {
        let platform = name.platform().as_str();
        let mut fetched = false;
        let init = async {
            fetched = true;
            let report = Box::pin(fetch()).await;
            let value = match &report.lookup {
                Lookup::Found(profile) => Stored::Found {
                    body: Bytes::from(profile.to_json()),
                    private: profile.is_private(),
                },
                Lookup::NotFound => Stored::NotFound,
                _ => return Err(report),
            };
            Ok(Arc::new(Entry {
                value,
                stored_at: Instant::now(),
                upstream_requests: report.upstream_requests,
            }))
        };
        match self.fresh.try_get_with_by_ref(name, init).await {
            Ok(entry) => {
                telemetry::cache(platform, if fetched { "miss" } else { "hit" });
                if fetched && let (Some(stale), Stored::Found { .. }) = (&self.stale, &entry.value)
                {
                    stale.insert(name.clone(), entry.clone()).await;
                }
                let ttl = match entry.value {
                    Stored::Found { .. } => self.ttl,
                    Stored::NotFound => self.negative_ttl,
                };
                let max_age = ttl.saturating_sub(entry.stored_at.elapsed()).as_secs();
                Served::Fresh {
                    entry,
                    fetched,
                    max_age,
                }
            }
            Err(report) => {
                let failure = Report::clone(&report);
                let stale = match &self.stale {
                    Some(stale) => stale.get(name).await,
                    None => None,
                };
                match stale {
                    Some(entry) if stale_worthy(&failure.lookup) => {
                        telemetry::cache(platform, "stale");
                        Served::Stale { entry, failure }
                    }
                    _ => {
                        telemetry::cache(platform, "miss");
                        Served::Failed(failure)
                    }
                }
            }
        }
    }
}

/// Failures that an older answer may stand in for: the platform's trouble, not ours.
fn stale_worthy(lookup: &Lookup) -> bool {
    matches!(
        lookup,
        Lookup::Blocked { .. }
            | Lookup::Unavailable(_)
            | Lookup::ExtractionFailed(_)
            | Lookup::Overloaded { .. }
    )
}
