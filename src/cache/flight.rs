//! The flight task: one per name in the air, started by a caller's miss or a background
//! refresh, belonging to neither (see the module docs of `crate::cache`).

use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::watch;
use tracing::Instrument;

use std::sync::Arc;

use super::{CACHE_REFRESHES, Came, Flight, Landed, Landing, Stored, Stores};
use crate::platform::Failure;
use crate::platform::fetcher::Fetch;
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
    let task = fly(stores.clone(), name.clone(), fetch, tx, deadline, flight);
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
    let landed = match stores.fresh.get(&name).await {
        Some(entry) if flight.need.accepts(&entry) && stores.rules.servable(&entry) => Landed {
            outcome: Ok(entry),
            came: Came::Stored,
            refresh: false,
        },
        _ => {
            let shared = stores.shared.clone();
            shared.fly(&stores, &name, fetch, deadline, &flight).await
        }
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
