//! What the cache answers: the stored entries, how a lookup was served (for `Cache-Status`,
//! `Age` and the access log), and what a caller asked of its freshness.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::fleet::SharedEntry;
use crate::fleet::entry::now_unix_ms;
use crate::platform::fetcher::Fetched;
use crate::username::Username;

/// How soon an entry may start another background refresh here after starting one.
pub const REFRESH_RETRY: Duration = Duration::from_secs(1);

/// What a caller asked about freshness: the `Cache-Control` request directives a lookup
/// honours (read by `crate::http::directives`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wants {
    /// `max-age=N` (`no-cache`: 0): no answer older than N seconds.
    pub max_age: Option<u64>,
    /// `max-stale[=N]`: a found profile up to N seconds past its TTL is taken (`u64::MAX`:
    /// any).
    pub max_stale: Option<u64>,
    /// `only-if-cached`: no upstream request for this lookup.
    pub only_if_cached: bool,
}

/// A stored answer: what the API returns for a name.
#[derive(Debug)]
pub struct Entry {
    /// The answer.
    pub value: Stored,
    /// When the upstream gave it (to whichever replica fetched it): `Age` counts from here.
    pub stored_at: Instant,
    /// Upstream requests the fetch took (for the access log of the request that fetched).
    pub upstream_requests: u32,
    /// The platform source that gave the answer (`x-source`), when known.
    pub source: Option<&'static str>,
    /// The fields the platform withheld from a found profile, as `Profile-Withheld` lists
    /// them (`None`: none).
    pub withheld: Option<Bytes>,
    /// Hits this replica answered from it: what makes it hot.
    hits: AtomicU64,
    /// The age (ms) before which it starts no other background refresh here.
    refresh_from_ms: AtomicU64,
}

impl Entry {
    /// An answer given at `stored_at`, not yet hit.
    ///
    /// A found body is copied into a block of its own length: the buffer it was written in
    /// (serde_json's growing `Vec`, or the whole value Redis sent) can be up to twice that,
    /// and the cache weighs an entry by its length (see `stores::weight`).
    pub fn new(
        value: Stored,
        stored_at: Instant,
        upstream_requests: u32,
        source: Option<&'static str>,
    ) -> Self {
        let value = match value {
            Stored::Found { body, private } => Stored::Found {
                body: Bytes::copy_from_slice(&body),
                private,
            },
            Stored::NotFound => Stored::NotFound,
        };
        Self {
            value,
            stored_at,
            upstream_requests,
            source,
            withheld: None,
            hits: AtomicU64::new(0),
            refresh_from_ms: AtomicU64::new(0),
        }
    }

    /// The entry, naming the fields the platform withheld from its profile.
    pub fn withholding(mut self, withheld: Option<Bytes>) -> Self {
        self.withheld = withheld;
        self
    }

    /// An answer of the fleet's (`shared`, for `name`) as this replica keeps it; its age and
    /// source carry over (a source name the platform does not have, from a replica of another
    /// version, is dropped), and its body is read back and written again in this version's
    /// shape ([`crate::platform::stored`]: an older replica's body gains the keys added since,
    /// `null` or `[]`; a newer one's loses the keys this version does not know).
    pub(super) fn from_shared(name: &Username, shared: SharedEntry) -> Arc<Self> {
        let now = Instant::now();
        let stored_at = now.checked_sub(shared.age()).unwrap_or(now);
        let platform = name.platform();
        let source = platform.source(&shared.source);
        let (value, withheld) = match shared.body {
            Some(body) => {
                let (body, withheld) = match crate::platform::stored(platform, &body) {
                    Some(profile) => (
                        profile.json().clone(),
                        crate::platform::withheld(platform, source, profile.summary()),
                    ),
                    None => (body, None),
                };
                let private = shared.private;
                (Stored::Found { body, private }, withheld)
            }
            None => (Stored::NotFound, None),
        };
        Arc::new(Self::new(value, stored_at, 0, source).withholding(withheld))
    }

    /// This answer as the fleet keeps it, stamped with its fetch time.
    pub(super) fn to_shared(&self) -> SharedEntry {
        let age_ms = u64::try_from(self.stored_at.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (body, private) = match &self.value {
            Stored::Found { body, private } => (Some(body.clone()), *private),
            Stored::NotFound => (None, false),
        };
        SharedEntry {
            body,
            private,
            fetched_at_unix_ms: now_unix_ms().saturating_sub(age_ms),
            source: self.source.unwrap_or_default().to_owned(),
        }
    }

    /// Counts one hit; the hits so far, this one included.
    pub(super) fn hit(&self) -> u64 {
        self.hits.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Claims the right to start a background refresh at `age`: at most one per
    /// [`REFRESH_RETRY`], whichever hit asks first.
    pub(super) fn claim_refresh(&self, age: Duration) -> bool {
        let now = u64::try_from(age.as_millis()).unwrap_or(u64::MAX);
        let from = self.refresh_from_ms.load(Ordering::Relaxed);
        let next = now.saturating_add(REFRESH_RETRY.as_millis() as u64);
        now >= from
            && self
                .refresh_from_ms
                .compare_exchange(from, next, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
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

/// Why a lookup went to the platform (RFC 9211's `fwd`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forward {
    /// Nothing was stored for the name (`uri-miss`).
    UriMiss,
    /// Only a stale answer was stored (`stale`).
    Stale,
    /// A fresh answer was stored, but the caller's `max-age`/`no-cache` refused it (`request`).
    Request,
}

/// How a stored answer reached the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// From what was stored (memory or the fleet's), without waiting on the platform.
    Hit,
    /// Fetched from the platform for this lookup.
    Fetched {
        /// Why the lookup went to the platform.
        forward: Forward,
        /// True when another caller's flight fetched it and this lookup joined it.
        collapsed: bool,
        /// Whether the answer was kept for later lookups.
        stored: bool,
    },
}

impl Served {
    /// What the cache did, for the lookup's `cache` span: `hit`, `stale` (a copy past its
    /// freshness, revalidated in the background), `joined` (another flight's answer, here or
    /// on another replica), `miss`, `stale_if_error`, `failed` or `not_cached`.
    pub fn trace_label(&self) -> &'static str {
        match self {
            Served::Stored {
                how: How::Hit, ttl, ..
            } if *ttl < 0 => "stale",
            Served::Stored { how: How::Hit, .. } => "hit",
            Served::Stored {
                how: How::Fetched {
                    collapsed: true, ..
                },
                ..
            } => "joined",
            Served::Stored { .. } => "miss",
            Served::Stale { .. } => "stale_if_error",
            Served::Failed { .. } => "failed",
            Served::NotCached => "not_cached",
        }
    }
}

/// How a request was served, for headers and the access log.
#[derive(Debug, Clone)]
pub enum Served {
    /// A stored answer.
    Stored {
        /// The answer.
        entry: Arc<Entry>,
        /// Hit or fetched.
        how: How,
        /// Whole seconds of freshness left, negative once stale (RFC 9211's `ttl`).
        ttl: i64,
    },
    /// The fetch failed and an older profile was served instead.
    Stale {
        /// The old answer.
        entry: Arc<Entry>,
        /// What the failed fetch came to.
        failure: Fetched,
        /// Seconds of freshness left (negative).
        ttl: i64,
    },
    /// The fetch failed and nothing could stand in for it.
    Failed {
        /// What the failed fetch came to.
        report: Fetched,
        /// Why the lookup went to the platform.
        forward: Forward,
    },
    /// `only-if-cached`, and nothing stored suits the caller.
    NotCached,
}
