//! `cache.max_bytes` bounds the memory of the whole cache, measured on the process: a `serve`
//! child whose fresh and stale stores are both filled (past eviction) with photo-share profiles
//! whose long biography makes each body a little over 64 KiB (the size a growing buffer holds
//! in twice its length) grows by no more than the bound plus a stated overhead.
//!
//! `PROFILE_LOOKUP_TEST_CACHE_MIB` sets the bound (default 32); the test prints what it
//! measured (`--nocapture`).

use std::time::Duration;

use axum::Router;
use axum::extract::Query;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use futures_util::StreamExt;
use stand_in::photo_share as ps;

use crate::support::binary::{Binary, Running};
use crate::support::{self, KEY, PhotoShare};

const MIB: u64 = 1024 * 1024;
/// A biography of this many bytes makes a body a little over 64 KiB.
const BIO_BYTES: usize = 65 * 1024;
/// What the process may grow by beyond the bound: the allocator's and the stores' bookkeeping,
/// the runtime, a few bodies in flight.
const OVERHEAD: u64 = 16 * MIB;
/// Lookups in flight at once.
const PARALLEL: usize = 8;

/// The bound under test, in MiB.
fn bound_mib() -> u64 {
    std::env::var("PROFILE_LOOKUP_TEST_CACHE_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(32)
}

/// The photo-share JSON endpoint answering every name with a profile whose biography is
/// [`BIO_BYTES`] long; the stand-in for everything else.
fn big_profiles() -> Router {
    let bio: &'static str = Box::leak("x".repeat(BIO_BYTES).into_boxed_str());
    let endpoint = move |Query(q): Query<std::collections::HashMap<String, String>>| async move {
        let username: &'static str = Box::leak(
            q.get("username")
                .cloned()
                .unwrap_or_default()
                .into_boxed_str(),
        );
        let user = ps::SampleUser {
            username,
            biography: bio,
            ..ps::PUBLIC_USER
        };
        (
            [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
            ps::web_profile_info(&user, 0),
        )
            .into_response()
    };
    Router::new()
        .route("/api/v1/users/web_profile_info/", get(endpoint))
        .merge(ps::router())
}

/// `serve` on `upstream` with a cache of `bound` bytes whose fresh entries expire after a
/// second while stale copies are kept for an hour.
fn serving(
    upstream: std::net::SocketAddr,
    listen: std::net::SocketAddr,
    bound: u64,
) -> (Running, tempfile::NamedTempFile) {
    let file = support::temp_file(
        "profile-lookup-cache-memory-",
        ".toml",
        format!(
            "[server]\nlisten = \"{listen}\"\n\
             [auth]\napi_keys = [\"{KEY}\"]\n\
             [rate_limit]\nper_key_per_minute = 1000000\nburst = 100000\n\
             [short_video]\nbase_url = \"http://{upstream}\"\n\
             [photo_share]\nbase_url = \"http://{upstream}\"\nrequests_per_second = 100000\n\
             burst = 100000\nsources = [\"json\"]\n\
             [cache]\nmax_bytes = {bound}\nttl_seconds = 1\nrevalidate_seconds = 0\n\
             max_stale_seconds = 3600\nhot_hits = 0\n\
             [log]\nlevel = \"error\"\n"
        )
        .as_bytes(),
    );
    let running = Binary::serve_with(file.path()).start_serving(listen, KEY);
    (running, file)
}

/// `process_resident_memory_bytes` from the process's `/metrics`.
async fn resident(running: &Running) -> u64 {
    let metrics = running.get_anonymous("/metrics").await.text();
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("process_resident_memory_bytes "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|v| v as u64)
        .unwrap_or_else(|| panic!("no resident memory in {metrics}"))
}

/// Looks up `count` names starting with `prefix`, [`PARALLEL`] at a time; each must be found.
async fn look_up(running: &Running, prefix: &str, count: usize) {
    futures_util::stream::iter(0..count)
        .map(|i| async move {
            running
                .lookup(PhotoShare, &format!("{prefix}{i}"))
                .await
                .expect_status(200);
        })
        .buffer_unordered(PARALLEL)
        .collect::<Vec<()>>()
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filling_both_stores_grows_the_process_by_the_bound_at_most() {
    let bound = bound_mib() * MIB;
    let upstream = support::spawn_upstream(big_profiles()).await;
    let listen = support::closed_port().await;
    let (running, _file) = serving(upstream.addr, listen, bound);
    // Warm up: the runtime, the client, the allocator's first pages, with a few entries.
    look_up(&running, "warm.", 16).await;
    let before = resident(&running).await;
    // Twice the bound's worth of names, then again with other names once the first ones have
    // left the fresh store but not the stale one: both stores are full, of different names.
    let per_round = usize::try_from(2 * bound / (BIO_BYTES as u64)).unwrap();
    look_up(&running, "first.", per_round).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    look_up(&running, "second.", per_round).await;
    // The stores' maintenance (eviction) runs on their next calls.
    tokio::time::sleep(Duration::from_millis(500)).await;
    look_up(&running, "after.", 16).await;
    let after = resident(&running).await;
    let growth = after.saturating_sub(before);
    eprintln!(
        "cache.max_bytes = {} MiB, {per_round} names a round: resident {} -> {} MiB, \
         growth {} MiB (allowed: {} MiB)",
        bound / MIB,
        before / MIB,
        after / MIB,
        growth / MIB,
        (bound + OVERHEAD) / MIB,
    );
    assert!(
        growth >= bound / 4,
        "the process grew by {} MiB only: is the cache holding anything?",
        growth / MIB
    );
    assert!(
        growth <= bound + OVERHEAD,
        "the process grew by {} MiB with cache.max_bytes = {} MiB (allowed: {} MiB more)",
        growth / MIB,
        bound / MIB,
        OVERHEAD / MIB
    );
}
