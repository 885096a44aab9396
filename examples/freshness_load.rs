//! The slow upstream and the paced Zipf load of `scripts/freshness.sh`, on loopback only.
//!
//! ```text
//! cargo run --release --example freshness_load -- upstream DELAY_MS
//! cargo run --release --example freshness_load -- load KEY RATE SECONDS NAMES SEED GAP URL...
//! ```
//!
//! `upstream` plays the photo-share platform for any name: its profile JSON (the public
//! sample, renamed) after `DELAY_MS`. It listens on a port the OS picks, prints
//! `LISTENING <port>`, and answers `GET /count` with the profile requests it has had.
//!
//! `load` sends `RATE` lookups a second for `SECONDS` to the photo-share route of the services
//! at `URL...` (in turn), each of one of `NAMES` names (`zipf.0001` …) drawn Zipf(1.0) from a
//! generator seeded with `SEED` (the same seed draws the same names in the same order). It is
//! open-loop: lookup `i` is due at `start + i / RATE` and is sent then on an idle keep-alive
//! connection (a new one when none is idle), whatever the ones before it are doing, and is
//! timed from the moment it is sent (the client's timer wakes on whole milliseconds, so a
//! lookup may go out a little after it is due; that is the client's delay, not the service's).
//! It prints one line:
//!
//! `FRESH lookups=… bad=… late=… first_seen=… waited=… seen=… seen_waited=… long_gaps=…
//! fetches=… fetch_ms=… seen_p50_ms=… seen_p99_ms=… seen_p999_ms=… p99_ms=…`
//!
//! - a lookup is of a name *already seen* when an earlier lookup of that name had been
//!   answered before it was sent (the first lookup of a name, and those sent while it was still
//!   being fetched, are not);
//! - it *waited* on the upstream when its `Cache-Status` says `fwd=` (the platform was asked
//!   for it, or it joined a fetch in flight, on its replica or another: `collapsed`);
//! - `first_seen` is the share of lookups that were a name's first, `waited` the share that
//!   waited, `seen` the share of already-seen lookups and `seen_waited` the share of those that
//!   waited; latencies in ms; `late` counts lookups sent more than 5 ms behind schedule;
//! - `long_gaps` is the share of lookups of a name last asked more than `GAP` seconds (a
//!   decimal) before: with `GAP` = twice the TTL + a fetch time, those find their name's entry
//!   past its window whatever the cache does, as long as it fetches only what is asked for, so
//!   `first_seen + long_gaps` is the least `waited` can be;
//! - `fetches` counts the lookups that waited without `collapsed` (each made a fetch) and
//!   `fetch_ms` is their median time: a fetch time as callers see it.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Query, State};
use axum::routing::get;
use stand_in::photo_share as ps;
use tokio::net::TcpStream;

mod support;

/// About how large each profile JSON is.
const BODY_BYTES: usize = 4 * 1024;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = support::runtime();
    match args.first().map(String::as_str) {
        Some("upstream") if args.len() == 2 => {
            let delay = Duration::from_millis(args[1].parse().expect("DELAY_MS"));
            runtime.block_on(upstream(delay));
        }
        Some("load") if args.len() >= 8 => {
            let rate: f64 = args[2].parse().expect("RATE");
            let seconds: f64 = args[3].parse().expect("SECONDS");
            let names: usize = args[4].parse().expect("NAMES");
            let seed: u64 = args[5].parse().expect("SEED");
            let gap: f64 = args[6].parse().expect("GAP");
            let plan = Plan {
                key: args[1].clone(),
                rate,
                total: (rate * seconds) as usize,
                names,
                seed,
                gap: Duration::from_secs_f64(gap),
                targets: args[7..].iter().map(|u| target(u)).collect(),
            };
            println!("{}", runtime.block_on(load(plan)));
        }
        _ => {
            eprintln!(
                "usage: freshness_load upstream DELAY_MS\n       \
                 freshness_load load KEY RATE SECONDS NAMES SEED GAP URL..."
            );
            std::process::exit(2);
        }
    }
}

// --- the upstream ------------------------------------------------------------------------

#[derive(Clone, Default)]
struct Upstream {
    count: Arc<AtomicU64>,
    bodies: Arc<Mutex<HashMap<String, bytes::Bytes>>>,
}

async fn upstream(delay: Duration) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let port = listener.local_addr().expect("bound").port();
    let state = Upstream::default();
    let app = axum::Router::new()
        .route("/count", get(count))
        .route(
            "/api/v1/users/web_profile_info/",
            get(
                move |state: State<Upstream>, query: Query<HashMap<String, String>>| {
                    profile(state, query, delay)
                },
            ),
        )
        .with_state(state);
    println!("LISTENING {port}");
    axum::serve(listener, app).await.expect("serves");
}

async fn count(State(state): State<Upstream>) -> String {
    state.count.load(Ordering::Relaxed).to_string()
}

async fn profile(
    State(state): State<Upstream>,
    Query(query): Query<HashMap<String, String>>,
    delay: Duration,
) -> axum::response::Response {
    state.count.fetch_add(1, Ordering::Relaxed);
    tokio::time::sleep(delay).await;
    let name = query.get("username").cloned().unwrap_or_default();
    let body = {
        let mut bodies = state.bodies.lock().expect("not poisoned");
        bodies
            .entry(name.to_ascii_lowercase())
            .or_insert_with_key(|name| {
                let username: &'static str = Box::leak(name.clone().into_boxed_str());
                let user = ps::SampleUser {
                    username,
                    ..ps::PUBLIC_USER
                };
                bytes::Bytes::from(ps::web_profile_info(&user, BODY_BYTES))
            })
            .clone()
    };
    let mut response = axum::response::Response::new(axum::body::Body::from(body));
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json; charset=utf-8"),
    );
    response
}

// --- the load ----------------------------------------------------------------------------

struct Plan {
    key: String,
    rate: f64,
    total: usize,
    names: usize,
    seed: u64,
    /// A name asked again after longer than this is a long gap.
    gap: Duration,
    targets: Vec<SocketAddr>,
}

/// One lookup's record.
struct Done {
    name: usize,
    /// When it was sent, from the start.
    sent: Duration,
    took: Duration,
    ok: bool,
    waited: bool,
    /// Waited and not `collapsed`: this lookup's own fetch.
    fetched: bool,
}

fn target(url: &str) -> SocketAddr {
    url.strip_prefix("http://")
        .and_then(|rest| rest.trim_end_matches('/').parse().ok())
        .expect("URL: http://127.0.0.1:PORT")
}

/// The names in the order the lookups ask them: Zipf(1.0) over `names`, seeded.
fn draws(plan: &Plan) -> Vec<usize> {
    let weights: Vec<f64> = (1..=plan.names).map(|k| 1.0 / k as f64).collect();
    let sum: f64 = weights.iter().sum();
    let mut acc = 0.0;
    let cdf: Vec<f64> = weights
        .iter()
        .map(|w| {
            acc += w / sum;
            acc
        })
        .collect();
    let mut rng = fastrand::Rng::with_seed(plan.seed);
    (0..plan.total)
        .map(|_| {
            let u = rng.f64();
            cdf.partition_point(|&c| c < u).min(plan.names - 1)
        })
        .collect()
}

async fn load(plan: Plan) -> String {
    let names = draws(&plan);
    let pools: Arc<Vec<Mutex<Vec<TcpStream>>>> =
        Arc::new(plan.targets.iter().map(|_| Mutex::default()).collect());
    let targets = Arc::new(plan.targets.clone());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Done>();
    let start = Instant::now() + Duration::from_millis(50);
    let mut late = 0u64;
    for (i, &name) in names.iter().enumerate() {
        let due = Duration::from_secs_f64(i as f64 / plan.rate);
        tokio::time::sleep_until((start + due).into()).await;
        if start.elapsed() > due + Duration::from_millis(5) {
            late += 1;
        }
        let request = format!(
            "GET /photo-share/profile/zipf.{:04} HTTP/1.1\r\nHost: 127.0.0.1\r\n\
             Authorization: Bearer {}\r\n\r\n",
            name + 1,
            plan.key
        );
        let (pools, targets, tx) = (pools.clone(), targets.clone(), tx.clone());
        let at = i % targets.len();
        tokio::spawn(async move {
            let sent = start.elapsed();
            let answer = lookup(&pools[at], targets[at], request.as_bytes()).await;
            let took = start.elapsed().saturating_sub(sent);
            let said = answer.unwrap_or_default();
            let _ = tx.send(Done {
                name,
                sent,
                took,
                ok: said.ok,
                waited: said.waited,
                fetched: said.fetched,
            });
        });
    }
    drop(tx);
    let mut done = Vec::with_capacity(names.len());
    while let Some(d) = rx.recv().await {
        done.push(d);
    }
    summary(&done, plan.names, plan.gap, late)
}

/// What one answer said.
#[derive(Clone, Copy, Default)]
struct Said {
    /// 2xx.
    ok: bool,
    /// `Cache-Status` says `fwd=`: the caller waited on the upstream.
    waited: bool,
    /// It waited and does not say `collapsed`: its own flight fetched.
    fetched: bool,
}

/// One lookup on a pooled connection: what its answer said, or `None` when the
/// connection broke. An idle connection the service has closed meanwhile (it closes keep-alive
/// connections idle for `server.header_read_timeout_ms`) is replaced by a new one, once, as any
/// HTTP client does.
async fn lookup(pool: &Mutex<Vec<TcpStream>>, target: SocketAddr, request: &[u8]) -> Option<Said> {
    let mut buf = Vec::with_capacity(16 * 1024);
    let mut idle = pool.lock().expect("not poisoned").pop();
    loop {
        let reused = idle.is_some();
        let mut stream = match idle.take() {
            Some(stream) => stream,
            None => {
                let stream = TcpStream::connect(target).await.ok()?;
                let _ = stream.set_nodelay(true);
                stream
            }
        };
        // The service's answers always give their length.
        let answer = support::exchange(&mut stream, request, &mut buf)
            .await
            .and_then(|(status, head)| {
                support::header(head, "content-length")?;
                let cache_status = support::header(head, "cache-status").unwrap_or_default();
                let waited = cache_status.contains("fwd=");
                Some(Said {
                    ok: (200..300).contains(&status),
                    waited,
                    fetched: waited && !cache_status.contains("collapsed"),
                })
            });
        match answer {
            Some(answer) => {
                pool.lock().expect("not poisoned").push(stream);
                return Some(answer);
            }
            // Closed while idle: nothing of an answer came; ask again on a new connection.
            None if reused && buf.is_empty() => {}
            None => return None,
        }
    }
}

fn summary(done: &[Done], names: usize, gap: Duration, late: u64) -> String {
    // The first moment each name had an answer.
    let mut answered = vec![Duration::MAX; names];
    for d in done {
        let end = d.sent + d.took;
        answered[d.name] = answered[d.name].min(end);
    }
    let mut first = vec![true; names];
    let (mut first_seen, mut waited, mut bad) = (0usize, 0usize, 0usize);
    let mut all: Vec<Duration> = Vec::with_capacity(done.len());
    let mut seen: Vec<Duration> = Vec::with_capacity(done.len());
    let mut seen_waited = 0usize;
    // When each name was last asked, and the lookups that came longer than `gap` after it.
    let mut last_asked: Vec<Option<Duration>> = vec![None; names];
    let mut long_gaps = 0usize;
    let mut fetches: Vec<Duration> = Vec::new();
    let mut by_sent: Vec<&Done> = done.iter().collect();
    by_sent.sort_by_key(|d| d.sent);
    for d in by_sent {
        if std::mem::take(&mut first[d.name]) {
            first_seen += 1;
        }
        waited += usize::from(d.waited);
        bad += usize::from(!d.ok);
        if let Some(before) = last_asked[d.name].replace(d.sent) {
            long_gaps += usize::from(d.sent - before > gap);
        }
        if d.fetched {
            fetches.push(d.took);
        }
        all.push(d.took);
        if answered[d.name] < d.sent {
            seen.push(d.took);
            seen_waited += usize::from(d.waited);
        }
    }
    let n = done.len().max(1) as f64;
    format!(
        "FRESH lookups={} bad={bad} late={late} first_seen={:.4} waited={:.4} seen={:.4} \
         seen_waited={:.4} long_gaps={:.4} fetches={} fetch_ms={:.2} seen_p50_ms={:.2} \
         seen_p99_ms={:.2} seen_p999_ms={:.2} p99_ms={:.2}",
        done.len(),
        first_seen as f64 / n,
        waited as f64 / n,
        seen.len() as f64 / n,
        seen_waited as f64 / seen.len().max(1) as f64,
        long_gaps as f64 / n,
        fetches.len(),
        percentile(&mut fetches, 0.5),
        percentile(&mut seen, 0.5),
        percentile(&mut seen, 0.99),
        percentile(&mut seen, 0.999),
        percentile(&mut all, 0.99),
    )
}

/// The `p` quantile of `times`, in ms.
fn percentile(times: &mut [Duration], p: f64) -> f64 {
    if times.is_empty() {
        return f64::NAN;
    }
    times.sort_unstable();
    let at = ((times.len() - 1) as f64 * p).round() as usize;
    times[at].as_secs_f64() * 1000.0
}
