//! profile-lookup: public profiles of one user per request, from two platforms.
//!
//! A request travels down and its answer back up through these modules:
//!
//! - [`server`]: the accept loop and its limits (header timeout, head size, graceful shutdown).
//! - [`http`]: the edge. Request ids, access log and metrics, load shedding, then for lookups
//!   [`http::auth`] (bearer key → [`http::auth::KeyId`]) and [`http::rate_limit`] (GCRA per key),
//!   then the handlers in [`http::routes`].
//! - [`username`]: the [`username::Username`] newtype; a bad name is a 400 before any I/O.
//! - [`cache`]: one upstream flight per name, TTLs, negative entries, stale serving.
//! - [`platform`]: the [`platform::Lookup`] outcome and the exact response bodies; one folder
//!   per platform with its `fetch` (requests, retries, block signals) and its `extract` (page
//!   formats). [`scan`] finds `<script>` elements in a page without building a DOM, and
//!   [`json_skim`] finds one member of a large JSON object without parsing the others.
//! - [`upstream`]: the one outbound HTTP client (deadline, decompressed-size cap, no automatic
//!   redirects), [`upstream::retry`] (backoff with full jitter) and [`upstream::politeness`]
//!   (outbound budget, concurrency cap, circuit breaker).
//! - [`error`]: the API errors as RFC 9457 problem documents; [`config`]: the layered settings;
//!   [`telemetry`]: logs and metric names; [`openapi`]: the contract document; [`demo`]: the
//!   built-in sample upstream.
//!
//! Data moves one way: nothing below the handlers knows about HTTP responses to the caller, and
//! nothing above the platform sources knows about page formats.

#![warn(missing_docs)]

pub mod cache;
pub mod config;
pub mod demo;
pub mod error;
pub mod fleet;
pub mod http;
pub mod json_skim;
pub mod openapi;
pub mod platform;
pub mod scan;
pub mod server;
pub mod state;
pub mod telemetry;
pub mod upstream;
pub mod username;

use tokio::net::TcpListener;

pub use state::AppState;

/// The whole application as an axum router.
pub fn app(state: AppState) -> axum::Router {
    // Touch the recorder so /metrics has one before the first request.
    let _ = telemetry::metrics_handle();
    http::router(state)
}

/// Serves the application on `listener` until `shutdown` resolves, then drains.
pub async fn run(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    server::serve(listener, app(state.clone()), state, shutdown).await
}
