//! The flight task: one per name in the air, started by a caller's miss or a background
//! refresh, belonging to neither (see the module docs of `crate::cache`).
//!
//! A flight goes to the fleet's level before anyone else, in one call that reads the name's
//! entry or, when there is none, claims the name ([`crate::fleet::flight::NameLocks`]): an
//! entry is kept in memory and served, with its age; with the claim, the flight fetches while
//! holding the name, then stores the answer for the fleet and gives the name up in one call
//! ([`crate::fleet::entries::Entries::publish`]); or, when another replica holds the name, it
//! waits for that replica's answer, bounded by the flight deadline, and takes the name over
//! if that replica gives up or dies. Without Redis, or whenever it cannot be used, the claim is
//! granted at once and the flight fetches on its own: the fleet then costs more upstream
//! requests, never an error, and the one way is the same with and without a fleet.
//!
//! A found profile's entry lives in the fleet for its TTL and its stale-while-revalidate
//! window, so a replica that has never seen the name still answers it at once in that window.
//! A flight that wants a newer answer than the entry (a background refresh, a caller's
//! `max-age`) gives the oldest fetch time it takes: the fleet then answers only a newer entry,
//! else the claim. So the replicas refreshing one name at once make one fetch: the first claims
//! it, the others wait for (or find) its newer answer.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tracing::Instrument;

use super::{
    CACHE_REFRESHES, Came, Entry, Flight, Landed, Landing, REFRESH_RETRY, Stored, Stores,
    fetch_within,
};
use crate::fleet::SharedEntry;
use crate::fleet::flight::Claim;
use crate::platform::Failure;
use crate::platform::fetcher::{Fetch, Fetched};
use crate::telemetry::trace_context;
use crate::username::Username;

/// Starts the flight of `name` (none is in the air: the caller holds the map `flights` and has
/// looked) and puts it in the map; returns where its callers wait.
pub(super) fn start(
    stores: &Stores,
    flights: &mut HashMap<Username, Landing>,
    name: &Username,
    fetch: Arc<dyn Fetch>,
    flight: Flight,
    deadline: Duration,
) -> Landing {
    let (tx, landing) = watch::channel(None);
    flights.insert(name.clone(), landing.clone());
    let refresh = flight.refresh.is_some();
    let span = trace_context::flight_span(refresh, name.platform().as_str());
    let task = fly(stores.clone(), name.clone(), fetch, tx, deadline, flight).instrument(span);
    // In the trace of the request that started it (a refresh: its own).
    let task = trace_context::carry(refresh, task);
    // The flight's log lines carry the id of the request that started it.
    tokio::spawn(task.instrument(tracing::Span::current()));
    landing
}

/// One flight: fetches `name` unless a flight that just landed stored an answer it takes,
/// stores the result, then leaves the map and tells everyone waiting.
async fn fly(
    stores: Stores,
    name: Username,
    fetch: Arc<dyn Fetch>,
    tx: watch::Sender<Option<Landed>>,
    deadline: Duration,
    flight: Flight,
) {
    // Leaves the map however the task ends, a panic included, so a name never sticks.
    let leave = Leave {
        stores: stores.clone(),
        name: name.clone(),
    };
    // A flight started just after another landed (its caller missed before the insert) finds
    // that flight's entry instead of asking the platform again.
    let landed = match stores.fresh(&name).await {
        Some(entry) if flight.need.accepts(&entry) && stores.rules.servable(&entry) => Landed {
            outcome: Ok(entry),
            came: Came::Stored,
            refresh: false,
        },
        _ => past_memory(&stores, &name, fetch, deadline, &flight).await,
    };
    let landed = Landed {
        refresh: flight.refresh.is_some(),
        ..landed
    };
    if let Some(trigger) = &flight.refresh {
        let outcome = match &landed.outcome {
            Ok(_) if landed.came != Came::Fetched => "fleet",
            Ok(entry) => match entry.value {
                Stored::Found { .. } => "refreshed",
                Stored::NotFound => "gone",
            },
            Err(fetched) if matches!(fetched.failure(), Some(Failure::Overloaded { .. })) => {
                "skipped"
            }
            Err(_) => "failed",
        };
        metrics::counter!(CACHE_REFRESHES, "platform" => name.platform().as_str(),
            "trigger" => trigger.label(), "outcome" => outcome)
        .increment(1);
    }
    drop(leave);
    let _ = tx.send(Some(landed));
}

/// A flight that memory did not answer: the fleet's answer, another replica's fetch waited
/// for, or this flight's own fetch (see the module docs). A flight that `need`s a newer answer
/// than the fleet holds leaves the fleet's entry alone and waits for an answer that new.
async fn past_memory(
    stores: &Stores,
    name: &Username,
    fetch: Arc<dyn Fetch>,
    deadline: Duration,
    flight: &Flight,
) -> Landed {
    let (platform, key) = (name.platform().as_str(), name.as_str());
    let give_up = tokio::time::Instant::now() + deadline;
    let waiting = Instant::now();
    let claim = stores
        .names
        .claim(platform, key, flight.need.unix_ms(), give_up);
    // The fleet's answer, the claim, or the wait on another replica's fetch of the name.
    let fleet = tracing::info_span!(
        target: crate::telemetry::traces::TARGET,
        "fleet",
        profile_lookup.fleet = tracing::field::Empty,
    );
    let claimed = claim.instrument(fleet.clone()).await;
    fleet.record(
        "profile_lookup.fleet",
        match &claimed {
            Claim::Stored(_) => "stored",
            Claim::Waited(_) => "waited_on_another_replica",
            Claim::TimedOut => "timed_out",
            Claim::Fetch(_) => "claimed",
        },
    );
    let held = match claimed {
        Claim::Stored(found) => return kept(stores, name, found, Came::Stored).await,
        Claim::Waited(found) => {
            // The wait is part of another replica's fetch: a fetch time, too.
            stores.fetch_times.note(name.platform(), waiting.elapsed());
            return kept(stores, name, found, Came::Waited).await;
        }
        Claim::TimedOut => return waited_too_long(),
        Claim::Fetch(held) => held,
    };
    // One background refresh fetch per name per second for the fleet, whatever the replicas'
    // memory holds. A refresh that finds it taken fetches nothing; it has still looked for
    // (and waited on) a newer answer above.
    if flight.refresh.is_some() && !stores.refreshes.claim(platform, key).await {
        stores.names.release(platform, key, held).await;
        return Landed {
            outcome: Err(Fetched::unsent(Failure::Overloaded {
                retry_after: REFRESH_RETRY,
            })),
            came: Came::Stored,
            refresh: true,
        };
    }
    let started = Instant::now();
    let fetching = fetch_within(deadline, fetch, name.clone(), flight.mode());
    // The name is held for as long as the fetch runs, and no longer.
    let report = stores.names.hold(platform, key, &held, fetching).await;
    let outcome = stores.store(name, report, started).await;
    let answer = outcome.as_ref().ok().map(|entry| entry.to_shared());
    let publish = stores.entries.publish(platform, key, answer.as_ref(), held);
    publish.await;
    Landed {
        outcome,
        came: Came::Fetched,
        refresh: false,
    }
}

/// Serves an answer another replica fetched (stored before, or while this flight `came` to
/// wait for it), keeping it in this replica's memory.
async fn kept(stores: &Stores, name: &Username, found: SharedEntry, came: Came) -> Landed {
    let entry = Entry::from_shared(name, found);
    stores.keep(name, entry.clone()).await;
    Landed {
        outcome: Ok(entry),
        came,
        refresh: false,
    }
}

/// The failure of a flight that waited for another replica's fetch until its deadline.
fn waited_too_long() -> Landed {
    Landed {
        outcome: Err(Fetched::unsent(Failure::unavailable(
            "another replica's fetch of this name did not end in time",
        ))),
        came: Came::Stored,
        refresh: false,
    }
}

/// Removes a flight from the map when its task ends.
struct Leave {
    stores: Stores,
    name: Username,
}

impl Drop for Leave {
    fn drop(&mut self) {
        self.stores.lock_flights().remove(&self.name);
    }
}
