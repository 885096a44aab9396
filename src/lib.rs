//! profile-lookup: public profiles of one user per request, from the registered platforms.
//!
//! [`registry`] lists the platforms, one line each (which also gives each its arm in
//! [`platform::with_site`]); everything else per platform loops over
//! [`registry::Platform::ALL`]. The binary only parses its command line and calls
//! [`commands`] (`serve`, `check`, `demo`, `extract`, `canary`, `healthcheck`). The platforms' stand-ins
//! (invented documents and loopback servers) are the workspace's `stand-in` crate, not this
//! one: [`commands::demo`](mod@commands::demo) starts them by each platform's label, and the
//! tests and benchmarks use them. A request travels down and its answer back up through these
//! modules:
//!
//! - [`server`]: the accept loop and its limits (header timeout, head size, graceful shutdown).
//! - [`http`]: the edge. Request ids, access log and metrics, load shedding, then for lookups
//!   [`http::guard`]: [`auth`] (bearer key → [`auth::KeyId`]) and [`quota`] (GCRA per key),
//!   then the handlers in [`http::handlers`], which take a checked name from
//!   [`http::path_name::Name`] and only translate HTTP in and out. One generic lookup handler
//!   is routed once per platform ([`http::router`]); [`http::openapi`] describes each
//!   platform's route and holds the document's root.
//! - [`lookup`]: the one way of a lookup, [`lookup::Lookups::look_up`]: the cache in front of the
//!   name's platform fetcher, and the quota's unit for a fetch the caller forces; its
//!   [`lookup::Answer`] goes back to the edge.
//! - [`username`]: the [`username::Username`] newtype and its rule, checked against the
//!   platform's lengths; a bad name is a 400 before any I/O.
//! - [`cache`]: one upstream flight per name, TTLs, negative entries, stale serving; in a
//!   fleet, the replica's memory in front of the fleet's entries and one flight per name for
//!   the whole fleet.
//! - [`fleet`]: the state replicas behind one load balancer share through Redis (`[redis]`):
//!   the quota, the cache's entries, flight locks and refresh limits, the outbound budget, the
//!   breaker, proxy rests, gateways' refusal counts, the sources' evidence, the ids learned for names and the canary's rounds. One [`fleet::Fleet`] handle (local with no
//!   `redis.url`) and one type per primitive, each falling back to the replica's own state
//!   inside when Redis cannot be used: nothing outside asks whether state is shared.
//! - [`platform`]: the [`platform::Lookup`] outcome and its [`platform::Failure`]s, the
//!   erased [`platform::Profile`] (each platform's exact body lives in its folder), and the
//!   platform contract: each platform is a folder implementing [`platform::Site`] (its
//!   documents, their requests, what an answer means, its extractor, how the API documents
//!   it);
//!   [`platform::fetcher::Fetcher`] runs any site for a plan and a mode (gate, egress,
//!   retries, redirects, hurdles, drift capture), and [`platform::fetcher::Fetchers`] holds
//!   every platform's, built through [`platform::with_site`], as a [`platform::fetcher::Fetch`].
//!   Every reader reads its fields through `platform::fields`: one rule set for any JSON
//!   value, one table per platform of the names it has used for each field
//!   (`src/platform/fields/names.rs`), the readers of known places, and the anchored search
//!   for a user no known place holds. [`html`] is the one HTML tokenizer (a browser's idea of
//!   tags, text and `<script>` elements, without a DOM) that every page reader uses, and
//!   [`json_skim`] finds one member of a large JSON object without parsing the others; both
//!   (and every other search over upstream bytes) count the bytes they examine in [`cost`],
//!   which is how the tests show that no page costs more than linear work.
//! - [`upstream`]: the one outbound HTTP client (deadline, decompressed-size cap, no automatic
//!   redirects), [`upstream::retry`] (backoff with full jitter), [`upstream::gate`]
//!   (outbound budget, concurrency cap, circuit breaker; the fleet's when there is one),
//!   [`upstream::egress`] (one client and cookie jar per proxy, or per session of a provider's
//!   gateway; a sticky route per lookup, rests, a silent route left for another) and [`upstream::capture`] (unreadable pages kept for `extract`).
//! - [`error`]: the API errors as RFC 9457 problem documents, and the one mapping of a
//!   lookup's failure to them; [`saved`]: what `profile-lookup extract` makes of a saved
//!   document (the same extractor and mapping); [`config`]: the layered settings (defaults
//!   from the embedded `config/default.toml`, a file, the environment; one file per section,
//!   a `*Config` that checks itself, the platforms' sections in a table reached by
//!   [`config::Settings::platform`]; it knows nothing of HTTP); [`state`]: built from the settings by
//!   [`AppState::new`], it knows no handler; [`telemetry`]: logs and metric names;
//!   [`header_text`]: the numeric header values every answer carries, built without
//!   `format!`.
//! - [`canary`]: long-lived accounts looked up through each source every interval (one
//!   replica per interval with Redis; each a fetch of a one-document plan, never recorded by
//!   the callers' breaker): a verdict per source, its metrics, `GET /status`, and
//!   the standing that moves a source found `changed` to the end of every lookup's plan
//!   (the standing also weighs the evidence of lookups and probes, [`fleet::sources`]).
//!
//! The module graph has no cycle at any depth, among the top-level modules or among the files
//! of any folder (`tests/it/docs/module_graph.rs` resolves every `crate::`, `super::` and
//! `self::` path of every file). Data moves one way: nothing below the handlers
//! knows about HTTP responses to the caller, and nothing above the platform fetchers knows
//! about page formats.

#![warn(missing_docs)]

pub mod auth;
pub mod blame;
pub mod build_info;
pub mod cache;
pub mod canary;
pub mod commands;
pub mod config;
pub mod cost;
pub mod error;
pub mod fleet;
pub mod header_text;
pub mod html;
pub mod http;
pub mod json_skim;
pub mod lookup;
pub mod platform;
pub mod quota;
pub mod registry;
pub mod saved;
pub mod server;
pub mod state;
pub mod telemetry;
pub mod upstream;
pub mod username;
pub mod utc;

use tokio::net::TcpListener;

pub use state::AppState;

/// The whole application as an axum router.
pub fn app(state: AppState) -> axum::Router {
    // Touch the recorder so /metrics has one before the first request.
    let _ = telemetry::metrics_handle();
    http::router(state)
}

/// Serves the application on `listener` until `shutdown` resolves, then drains; the canary's
/// rounds run meanwhile (when `[canary]` names accounts) and stop with it.
pub async fn run(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let rounds = {
        let state = state.clone();
        tokio::spawn(async move {
            let (settings, fetchers) = (state.settings(), state.lookups().fetchers());
            state.canary().run(settings, fetchers).await;
        })
    };
    // The rounds end with the server, however `run` ends (even dropped unfinished).
    let _rounds = AbortOnDrop(rounds.abort_handle());
    server::serve(listener, app(state.clone()), state, shutdown).await
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
