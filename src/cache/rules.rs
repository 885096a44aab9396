//! How old an answer may be: the lifetimes `[cache]` gives, what a caller asked
//! ([`Wants`]), and the decision on one stored entry.
//!
//! A found profile is fresh for `ttl`; for `window` after that (`cache.revalidate_seconds`)
//! it is still served at once while a background refresh replaces it. A not-found is fresh for
//! `negative_ttl` and has no window. A caller's `max-age` refuses anything older, its
//! `max-stale` accepts a found profile that much past its TTL (from the stale copy, too).
//! An entry hit `hot_hits` times is refreshed shortly before it expires: one fetch time
//! before ([`Rules::lead`]), so that the refreshed answer lands about when the old one expires
//! and a hot name costs the platform no more fetches than it would with refresh-ahead off.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{Entry, Stored, Wants};
use crate::fleet::entry::now_unix_ms;
use crate::platform::Platform;

/// The lifetimes and the hot threshold, from `[cache]`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Rules {
    /// Freshness of a found profile (`ttl_seconds`).
    pub found: Duration,
    /// Freshness of a not-found (`negative_ttl_seconds`).
    pub not_found: Duration,
    /// The stale-while-revalidate window past `found` (`revalidate_seconds`).
    pub window: Duration,
    /// Hits that make an entry hot (`hot_hits`; 0: no refresh-ahead).
    pub hot_hits: u64,
}

/// What to do with a stored entry for one caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Decision {
    /// Serve it; with a trigger, a background refresh is due as well.
    Serve(Option<Trigger>),
    /// The caller's `max-age` refuses it: a fetch it forces. `fresh`: it was within its TTL.
    Refused {
        /// Whether the refused entry was still fresh.
        fresh: bool,
    },
    /// Past its TTL, its window and the caller's `max-stale`: served to no one.
    Expired,
}

/// Why a background refresh of an entry starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// Served past its TTL, within the stale-while-revalidate window.
    Revalidate,
    /// A hot entry close to its TTL.
    Ahead,
    /// Served past its window to a caller whose `max-stale` allows it.
    MaxStale,
}

impl Trigger {
    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            Trigger::Revalidate => "revalidate",
            Trigger::Ahead => "ahead",
            Trigger::MaxStale => "max_stale",
        }
    }
}

impl Rules {
    /// How long `value` is fresh.
    pub fn lifetime(&self, value: &Stored) -> Duration {
        match value {
            Stored::Found { .. } => self.found,
            Stored::NotFound => self.not_found,
        }
    }

    /// How long past its freshness `value` is still served while it is refreshed.
    pub fn window(&self, value: &Stored) -> Duration {
        match value {
            Stored::Found { .. } => self.window,
            Stored::NotFound => Duration::ZERO,
        }
    }

    /// How long before it expires a hot entry of this `lifetime` is refreshed: the time a
    /// fetch of its platform takes lately (`fetch_time`; at least 100 ms), so the new answer
    /// lands as the old one expires; never more than a tenth of the lifetime (1 s to 60 s),
    /// which is also the lead while no fetch time is known (never more than the lifetime).
    pub fn lead(lifetime: Duration, fetch_time: Option<Duration>) -> Duration {
        let cap = (lifetime / 10).clamp(Duration::from_secs(1), Duration::from_secs(60));
        let lead = fetch_time.map_or(cap, |t| t.max(MIN_LEAD).min(cap));
        lead.min(lifetime)
    }

    /// Whether `entry` is still served to a caller who asks nothing (fresh or in its window):
    /// what a flight takes from memory instead of fetching.
    pub fn servable(&self, entry: &Entry) -> bool {
        entry.stored_at.elapsed() < self.lifetime(&entry.value) + self.window(&entry.value)
    }

    /// The decision on `entry`, `age` old and hit `hits` times here, for a caller who `wants`;
    /// `fetch_time` is how long a fetch of its platform takes lately (see [`Rules::lead`]).
    pub fn judge(
        &self,
        entry: &Entry,
        age: Duration,
        hits: u64,
        wants: &Wants,
        fetch_time: Option<Duration>,
    ) -> Decision {
        let lifetime = self.lifetime(&entry.value);
        if let Some(max_age) = wants.max_age
            && age > Duration::from_secs(max_age)
        {
            return Decision::Refused {
                fresh: age < lifetime,
            };
        }
        if age < lifetime {
            let hot = self.hot_hits > 0 && hits >= self.hot_hits;
            let due = hot && age + Self::lead(lifetime, fetch_time) >= lifetime;
            return Decision::Serve(due.then_some(Trigger::Ahead));
        }
        let past = age - lifetime;
        if past < self.window(&entry.value) {
            return Decision::Serve(Some(Trigger::Revalidate));
        }
        let found = matches!(entry.value, Stored::Found { .. });
        if found
            && let Some(max_stale) = wants.max_stale
            && past <= Duration::from_secs(max_stale)
        {
            return Decision::Serve(Some(Trigger::MaxStale));
        }
        Decision::Expired
    }

    /// Whole seconds of freshness `entry` has left at `age`, negative once stale (RFC 9211's
    /// `ttl`): rounded down while fresh, up while stale, so a stale entry never shows 0 left
    /// unless it went stale this instant. An answer with no lifetime (the cache off) has 0.
    pub fn ttl_left(&self, entry: &Entry, age: Duration) -> i64 {
        let lifetime = self.lifetime(&entry.value);
        if lifetime.is_zero() {
            return 0;
        }
        let secs = |d: Duration| i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
        if age < lifetime {
            secs(lifetime - age)
        } else {
            let past = age - lifetime;
            -secs(past).saturating_add(i64::from(past.subsec_nanos() > 0))
        }
    }
}

/// The shortest refresh-ahead lead, whatever the fetch time.
const MIN_LEAD: Duration = Duration::from_millis(100);

/// How long a fetch of each platform takes lately: an average weighted to the last few
/// (each new time counts an eighth), in µs, by [`Platform::index`]; 0 while none is known.
#[derive(Debug)]
pub(super) struct FetchTimes(Vec<AtomicU64>);

impl FetchTimes {
    /// No time known for any platform.
    pub fn new() -> Self {
        Self(Platform::ALL.iter().map(|_| AtomicU64::new(0)).collect())
    }

    /// Counts a fetch of `platform` that took `took` (or a wait for another replica's).
    pub fn note(&self, platform: Platform, took: Duration) {
        let Some(average) = self.0.get(platform.index()) else {
            return;
        };
        let took = u64::try_from(took.as_micros()).unwrap_or(u64::MAX).max(1);
        let old = average.load(Ordering::Relaxed);
        let new = if old == 0 {
            took
        } else {
            old - old / 8 + took / 8
        };
        average.store(new.max(1), Ordering::Relaxed);
    }

    /// The recent fetch time of `platform`, once one is known.
    pub fn recent(&self, platform: Platform) -> Option<Duration> {
        let us = self.0.get(platform.index())?.load(Ordering::Relaxed);
        (us > 0).then(|| Duration::from_micros(us))
    }
}

/// Which stored answers a flight may take instead of fetching.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Need {
    /// Whatever the stores still serve (a caller's miss).
    Any,
    /// Only an answer fetched at or after this moment (a refresh, or a caller's `max-age`).
    After(Instant),
}

impl Need {
    /// What a caller who `wants` needs, as of `now`: with `max-age=N`, an answer at most N
    /// seconds old.
    pub fn of(wants: &Wants, now: Instant) -> Need {
        match wants.max_age {
            Some(n) => now
                .checked_sub(Duration::from_secs(n))
                .map_or(Need::Any, Need::After),
            None => Need::Any,
        }
    }

    /// Whether `entry` is new enough.
    pub fn accepts(&self, entry: &Entry) -> bool {
        match self {
            Need::Any => true,
            Need::After(t) => entry.stored_at >= *t,
        }
    }

    /// The oldest fetch time taken, on the wall clock (Unix ms; 0 for any), as the fleet's
    /// entries record theirs; rounded up, so an entry a millisecond too old is not taken.
    pub fn unix_ms(&self) -> u64 {
        match self {
            Need::Any => 0,
            Need::After(t) => {
                let ago = t.elapsed();
                let ago_ms = u64::try_from(ago.as_millis()).unwrap_or(u64::MAX);
                now_unix_ms().saturating_sub(ago_ms).max(1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    const RULES: Rules = Rules {
        found: Duration::from_secs(10),
        not_found: Duration::from_secs(4),
        window: Duration::from_secs(2),
        hot_hits: 3,
    };

    fn found() -> Entry {
        Entry::new(
            Stored::Found {
                body: Bytes::from_static(b"{}"),
                private: false,
            },
            Instant::now(),
            1,
            None,
        )
    }

    fn gone() -> Entry {
        Entry::new(Stored::NotFound, Instant::now(), 1, None)
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    const NOTHING: Wants = Wants {
        max_age: None,
        max_stale: None,
        only_if_cached: false,
    };

    #[test]
    fn fresh_then_revalidated_within_the_window_then_expired() {
        let e = found();
        assert_eq!(
            RULES.judge(&e, secs(3.0), 1, &NOTHING, None),
            Decision::Serve(None)
        );
        assert_eq!(
            RULES.judge(&e, secs(10.0), 1, &NOTHING, None),
            Decision::Serve(Some(Trigger::Revalidate))
        );
        assert_eq!(
            RULES.judge(&e, secs(11.9), 1, &NOTHING, None),
            Decision::Serve(Some(Trigger::Revalidate))
        );
        assert_eq!(
            RULES.judge(&e, secs(12.0), 1, &NOTHING, None),
            Decision::Expired
        );
        // A not-found has no window.
        assert_eq!(
            RULES.judge(&gone(), secs(4.0), 1, &NOTHING, None),
            Decision::Expired
        );
    }

    #[test]
    fn hot_entries_are_refreshed_a_lead_before_they_expire() {
        let e = found();
        // Unknown fetch time: a tenth of the lifetime, 1 s to 60 s.
        assert_eq!(Rules::lead(secs(10.0), None), secs(1.0));
        assert_eq!(Rules::lead(secs(6000.0), None), secs(60.0));
        assert_eq!(Rules::lead(secs(0.5), None), secs(0.5));
        // Known: the fetch time, 100 ms at least, that cap at most.
        assert_eq!(Rules::lead(secs(10.0), Some(secs(0.3))), secs(0.3));
        assert_eq!(Rules::lead(secs(10.0), Some(secs(0.01))), secs(0.1));
        assert_eq!(Rules::lead(secs(10.0), Some(secs(5.0))), secs(1.0));
        let judge = |age, hits, fetch_time| RULES.judge(&e, secs(age), hits, &NOTHING, fetch_time);
        assert_eq!(judge(9.2, 2, None), Decision::Serve(None));
        assert_eq!(judge(9.2, 3, None), Decision::Serve(Some(Trigger::Ahead)));
        assert_eq!(
            judge(9.2, 3, Some(secs(0.3))),
            Decision::Serve(None),
            "a 300 ms fetch is started in the last 300 ms"
        );
        assert_eq!(
            judge(9.8, 3, Some(secs(0.3))),
            Decision::Serve(Some(Trigger::Ahead))
        );
        assert_eq!(judge(8.8, 30, None), Decision::Serve(None));
        let cold = Rules {
            hot_hits: 0,
            ..RULES
        };
        assert_eq!(
            cold.judge(&e, secs(9.9), 99, &NOTHING, None),
            Decision::Serve(None)
        );
    }

    #[test]
    fn a_callers_max_age_refuses_and_max_stale_extends() {
        let e = found();
        let max_age = |n| Wants {
            max_age: Some(n),
            ..NOTHING
        };
        assert_eq!(
            RULES.judge(&e, secs(0.001), 1, &max_age(0), None),
            Decision::Refused { fresh: true }
        );
        assert_eq!(
            RULES.judge(&e, secs(5.0), 1, &max_age(5), None),
            Decision::Serve(None)
        );
        assert_eq!(
            RULES.judge(&e, secs(11.0), 1, &max_age(10), None),
            Decision::Refused { fresh: false }
        );
        let stale_ok = Wants {
            max_stale: Some(30),
            ..NOTHING
        };
        assert_eq!(
            RULES.judge(&e, secs(39.0), 1, &stale_ok, None),
            Decision::Serve(Some(Trigger::MaxStale))
        );
        assert_eq!(
            RULES.judge(&e, secs(41.0), 1, &stale_ok, None),
            Decision::Expired
        );
        assert_eq!(
            RULES.judge(&gone(), secs(5.0), 1, &stale_ok, None),
            Decision::Expired
        );
    }

    #[test]
    fn fetch_times_average_the_last_few() {
        let times = FetchTimes::new();
        let p = Platform::ALL[0];
        assert_eq!(times.recent(p), None);
        times.note(p, secs(0.8));
        assert_eq!(times.recent(p), Some(secs(0.8)));
        for _ in 0..40 {
            times.note(p, secs(0.2));
        }
        let recent = times.recent(p).unwrap();
        assert!(recent > secs(0.19) && recent < secs(0.21), "{recent:?}");
    }

    #[test]
    fn ttl_left_is_negative_once_stale() {
        let e = found();
        assert_eq!(RULES.ttl_left(&e, secs(0.5)), 9);
        assert_eq!(RULES.ttl_left(&e, secs(9.9)), 0);
        assert_eq!(RULES.ttl_left(&e, secs(10.0)), 0);
        assert_eq!(RULES.ttl_left(&e, secs(10.2)), -1);
        assert_eq!(RULES.ttl_left(&e, secs(13.0)), -3);
    }

    #[test]
    fn a_need_takes_what_was_fetched_after_its_moment() {
        let e = found();
        assert!(Need::Any.accepts(&e));
        assert!(Need::After(e.stored_at).accepts(&e));
        assert!(!Need::After(e.stored_at + secs(0.001)).accepts(&e));
        assert_eq!(Need::Any.unix_ms(), 0);
        let now = now_unix_ms();
        let then = Need::After(Instant::now() - secs(5.0)).unix_ms();
        assert!(
            (now - 5_100..=now - 4_900).contains(&then),
            "{then} vs {now}"
        );
        let huge = Wants {
            max_age: Some(u64::MAX / 4),
            ..NOTHING
        };
        // A max-age beyond any entry's age takes any entry, wherever the clock's origin is.
        let need = Need::of(&huge, Instant::now());
        assert!(need.accepts(&e));
        assert!(need.unix_ms() <= 1);
    }
}
