//! The state every handler shares: settings, keys, the lookups (quota, cache, fetchers), the
//! canary's board, readiness.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::auth::Keys;
use crate::canary::Canary;
use crate::config::{Settings, ms};
use crate::fleet::{Fleet, FleetError};
use crate::lookup::Lookups;
use crate::quota::KeyLimiter;

/// Cheap-to-clone handle on the shared state.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

struct Inner {
    settings: Settings,
    keys: Keys,
    lookups: Lookups,
    canary: Canary,
    in_flight: Arc<Semaphore>,
    ready: AtomicBool,
    fleet: Fleet,
}

/// The longest one flight may run: a caller's whole deadline plus the retry budget and one
/// more upstream timeout, so a flight outlives the callers that started it but never hangs.
/// It also bounds how long a flight waits for another replica's fetch of the same name. It is
/// not the life of the fleet's lock on the name: that is a short lease the holder renews while
/// it fetches (`fleet::flight`), so a dead holder is taken over within the lease, not after
/// this deadline.
fn flight_deadline(settings: &Settings) -> Duration {
    ms(settings.server.request_timeout_ms)
        .saturating_add(ms(settings.retry.max_total_ms))
        .saturating_add(ms(settings.upstream.timeout_ms))
}

/// Why the state could not be built.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The upstream HTTP client could not be built.
    #[error("the upstream HTTP client could not be built: {0}")]
    Client(#[from] crate::upstream::roots::ClientBuildError),
    /// `[redis]` could not be used (never because Redis is down: that is handled at run time).
    #[error("the fleet's shared state could not be set up: {0}")]
    Fleet(#[from] FleetError),
}

impl AppState {
    /// Builds everything the settings describe; ready at once. With `[redis]` set, quota,
    /// cache, flights, outbound budget and breaker are shared with the fleet (this never waits
    /// for Redis, and Redis being down is no error). Must run inside a Tokio runtime.
    pub fn new(settings: Settings) -> Result<Self, StateError> {
        let fleet = Fleet::new(&settings.redis)?;
        let keys = Keys::new(&settings.auth);
        let lookups = Lookups::new(&settings, &keys, &fleet, flight_deadline(&settings))?;
        Ok(Self(Arc::new(Inner {
            keys,
            lookups,
            canary: Canary::new(&settings, &fleet),
            in_flight: Arc::new(Semaphore::new(settings.server.max_in_flight)),
            ready: AtomicBool::new(true),
            fleet,
            settings,
        })))
    }

    /// The fleet's shared state (local when `[redis]` is not set).
    pub fn fleet(&self) -> &Fleet {
        &self.0.fleet
    }

    /// The settings the state was built from.
    pub fn settings(&self) -> &Settings {
        &self.0.settings
    }

    /// The configured API keys.
    pub fn keys(&self) -> &Keys {
        &self.0.keys
    }

    /// The per-key rate limiter.
    pub fn limiter(&self) -> &KeyLimiter {
        self.0.lookups.limiter()
    }

    /// The one way of a lookup: the quota of forced fetches, the cache, every platform's
    /// fetcher.
    pub fn lookups(&self) -> &Lookups {
        &self.0.lookups
    }

    /// The canary: its board, and the rounds [`crate::run`] runs while the replica serves.
    pub fn canary(&self) -> &Canary {
        &self.0.canary
    }

    /// Slots for requests in flight (load shedding).
    pub fn in_flight(&self) -> Arc<Semaphore> {
        self.0.in_flight.clone()
    }

    /// The total deadline of one request.
    pub fn request_deadline(&self) -> Duration {
        ms(self.0.settings.server.request_timeout_ms)
    }

    /// Whether `/readyz` says ready.
    pub fn is_ready(&self) -> bool {
        self.0.ready.load(Ordering::Relaxed)
    }

    /// Marks the replica as draining (shutdown has begun) or ready.
    pub fn set_ready(&self, ready: bool) {
        self.0.ready.store(ready, Ordering::Relaxed);
    }
}
