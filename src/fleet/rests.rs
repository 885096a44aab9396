//! The rests of a platform's proxies: a proxy that blocked or failed is left alone for a
//! cool-down. One type, two implementations: the replica's own record of each proxy's rest,
//! and with Redis the fleet's (a proxy blocked on one replica rests on all), merged into the
//! replica's own when read so that it outlives Redis. A proxy is named by its position only.

use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use redis::Script;

use super::Fleet;
use super::keys::Keys;
use super::marks::remaining;

/// The most proxies one [`Fleet::proxy_resting`] call asks about.
pub const MAX_PROXIES: usize = 1024;

static RESTING: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/resting.lua")));

/// The rests of the proxies of one scope (a platform), for the fleet when the handle is on
/// Redis.
#[derive(Debug)]
pub struct Rests {
    fleet: Fleet,
    scope: &'static str,
    /// Until when each proxy rests, by this replica's record.
    until: Vec<Mutex<Option<Instant>>>,
}

impl Rests {
    /// No rest for any of the `count` proxies of `scope`, shared through `fleet`.
    pub fn new(fleet: &Fleet, scope: &'static str, count: usize) -> Self {
        Self {
            fleet: fleet.clone(),
            scope,
            until: (0..count).map(|_| Mutex::new(None)).collect(),
        }
    }

    /// How long each proxy still rests (`None`: usable), as of `now`: the fleet's rests (one
    /// call for all) taken into this replica's record first, which then answers alone when
    /// Redis cannot be used.
    pub async fn resting(&self, now: Instant) -> Vec<Option<Duration>> {
        let count = self.until.len();
        if self.fleet.is_shared() {
            let indexes: Vec<usize> = (0..count).collect();
            if let Some(shared) = self.fleet.proxy_resting(self.scope, &indexes).await {
                for (index, left) in shared.into_iter().enumerate() {
                    if let Some(left) = left {
                        self.keep(index, now, left);
                    }
                }
            }
        }
        (0..count).map(|i| self.resting_for(i, now)).collect()
    }

    /// How long proxy `index` still rests as of `now`, by this replica's record.
    pub fn resting_for(&self, index: usize, now: Instant) -> Option<Duration> {
        let until = (*lock(self.until.get(index)?))?;
        (until > now).then(|| until - now)
    }

    /// Rests proxy `index` for `rest`, here and for the fleet (with Redis down the other
    /// replicas find out by themselves).
    pub async fn rest(&self, index: usize, rest: Duration) {
        self.keep(index, Instant::now(), rest);
        let _ = self.fleet.proxy_rest(self.scope, index, rest).await;
    }

    /// Keeps a rest of proxy `index` until `now + rest`, unless it already rests longer.
    fn keep(&self, index: usize, now: Instant, rest: Duration) {
        let Some(until) = self.until.get(index) else {
            return;
        };
        let mut until = lock(until);
        let new = now + rest;
        if until.is_none_or(|u| u < new) {
            *until = Some(new);
        }
    }
}

impl Keys {
    /// The rest of proxy `index` of `scope`: one tag per scope, so one script reads them all.
    pub fn proxy(&self, scope: &str, index: usize) -> String {
        format!("{}:{index}", self.tag("r", &[scope]))
    }
}

/// The Redis implementation of [`Rests`].
impl Fleet {
    /// Rests proxy `index` of `scope` (e.g. a platform) for every replica for `rest`. A proxy
    /// is named by its position only, never by its URL or credentials.
    pub async fn proxy_rest(&self, scope: &str, index: usize, rest: Duration) -> Option<()> {
        let key = self.keys()?.proxy(scope, index);
        self.mark_resting("proxy_rest", key, rest).await
    }

    /// For each of `indexes` (at most [`MAX_PROXIES`]), how long that proxy of `scope` still
    /// rests (`None` = usable). One call for all. `None`: Redis unavailable.
    pub async fn proxy_resting(
        &self,
        scope: &str,
        indexes: &[usize],
    ) -> Option<Vec<Option<Duration>>> {
        if indexes.is_empty() {
            return Some(Vec::new());
        }
        if indexes.len() > MAX_PROXIES {
            return None;
        }
        let names = self.keys()?;
        let keys: Vec<String> = indexes.iter().map(|&i| names.proxy(scope, i)).collect();
        let left: Vec<i64> = self
            .run("proxy_resting", |mut conn| async move {
                let mut call = RESTING.prepare_invoke();
                for key in keys {
                    call.key(key);
                }
                call.invoke_async(&mut conn).await
            })
            .await?;
        Some(left.into_iter().map(remaining).collect())
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
