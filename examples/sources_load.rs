//! The photo-share stand-in behind three "proxies" and the paced load of `scripts/sources.sh`,
//! on loopback only: the JSON endpoint retired mid-run, then restored.
//!
//! ```text
//! cargo run --release --example sources_load -- upstream
//! cargo run --release --example sources_load -- load KEY RATE SECONDS NAMES RETIRE_AT RESTORE_AT SERVICE UPSTREAM
//! ```
//!
//! `upstream` plays the photo-share platform for any name (the public sample, renamed): its
//! profile JSON and its profile page. It listens on four ports the OS picks and prints
//! `LISTENING <control> <proxy> <proxy> <proxy>`: the three others answer requests in the
//! absolute form a client sends to an HTTP proxy, as if they forwarded them, so the service
//! can be given them as `upstream.proxies`. On the control port, `GET /count` answers
//! `<json requests> <page requests>`, `GET /retire` makes the JSON endpoint answer every name
//! as the retired endpoint does (429 and an HTML "Please wait" page), `GET /restore` undoes it.
//!
//! `load` sends `RATE` photo-share lookups a second for `SECONDS` to `SERVICE`, round robin
//! over `NAMES` names, open loop (lookup `i` is due at `start + i / RATE`, whatever the others
//! are doing). At `RETIRE_AT` seconds it retires the JSON endpoint, at `RESTORE_AT` it
//! restores it. Every 250 ms it reads the upstream's counts, the service's `/status` (the JSON
//! source's standing) and `/metrics` (proxy blocks, each of which rests the proxy, and the
//! proxies resting). It prints, per phase (before, retired, restored), the share of 200
//! answers, upstream requests per lookup, proxy rests begun, the most proxies resting in any
//! sample, and answers by source; then when the JSON was demoted (from the retirement)
//! and restored (from the restoration), and the first time after the retirement from which
//! every 5-second window has at most 1.1 upstream requests per lookup.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use stand_in::photo_share as ps;
use tokio::sync::Mutex;

// Only the runtime is shared: this load's requests go through reqwest, not the hand-read
// exchange the latency-measuring loads use.
#[allow(dead_code)]
mod support;

mod played;

/// About how large each profile page is (a real one is ~365 kB; smaller keeps the CPU on the
/// service's decisions, not on reading pages).
const PAGE_BYTES: usize = 64 * 1024;
/// About how large each profile JSON is.
const JSON_BYTES: usize = 4 * 1024;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = support::runtime();
    match args.first().map(String::as_str) {
        Some("upstream") => runtime.block_on(upstream()),
        Some("load") if args.len() == 9 => {
            let plan = Plan {
                key: args[1].clone(),
                rate: args[2].parse().expect("RATE"),
                seconds: args[3].parse().expect("SECONDS"),
                names: args[4].parse().expect("NAMES"),
                retire_at: args[5].parse().expect("RETIRE_AT"),
                restore_at: args[6].parse().expect("RESTORE_AT"),
                service: args[7].trim_end_matches('/').to_owned(),
                upstream: args[8].trim_end_matches('/').to_owned(),
            };
            println!("{}", runtime.block_on(load(plan)));
        }
        _ => {
            eprintln!(
                "usage: sources_load upstream\n       \
                 sources_load load KEY RATE SECONDS NAMES RETIRE_AT RESTORE_AT SERVICE UPSTREAM"
            );
            std::process::exit(2);
        }
    }
}

// --- the upstream ------------------------------------------------------------------------

#[derive(Clone, Default)]
struct Platform {
    retired: Arc<AtomicBool>,
    json: Arc<AtomicU64>,
    page: Arc<AtomicU64>,
}

async fn upstream() {
    let platform = Platform::default();
    // One router on every port: its clones share the platform.
    let router = axum::Router::new().fallback(answer).with_state(platform);
    played::serve_listening(vec![router; 4]).await;
}

/// A user of `name`: the public sample, renamed (each name leaked once; the load asks a few
/// hundred).
fn user(name: &str) -> ps::SampleUser {
    ps::SampleUser {
        username: played::leaked(name),
        ..ps::PUBLIC_USER
    }
}

async fn answer(State(platform): State<Platform>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    let typed = |status: StatusCode, content_type: &'static str, body: String| {
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = status;
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        response
    };
    match path.as_str() {
        "/count" => {
            let (json, page) = (&platform.json, &platform.page);
            let counts = format!(
                "{} {}",
                json.load(Ordering::Relaxed),
                page.load(Ordering::Relaxed)
            );
            typed(StatusCode::OK, "text/plain", counts)
        }
        "/retire" | "/restore" => {
            platform.retired.store(path == "/retire", Ordering::Relaxed);
            typed(StatusCode::OK, "text/plain", path)
        }
        "/api/v1/users/web_profile_info/" => {
            platform.json.fetch_add(1, Ordering::Relaxed);
            if platform.retired.load(Ordering::Relaxed) {
                let body = ps::PLEASE_WAIT_HTML.to_owned();
                return typed(StatusCode::TOO_MANY_REQUESTS, "text/html", body);
            }
            let name = request
                .uri()
                .query()
                .and_then(|q| q.strip_prefix("username="))
                .unwrap_or_default();
            let body = ps::web_profile_info(&user(name), JSON_BYTES);
            typed(StatusCode::OK, "application/json; charset=utf-8", body)
        }
        _ => {
            platform.page.fetch_add(1, Ordering::Relaxed);
            let name = path.trim_matches('/');
            let body = ps::xig_profile_page(&user(name), PAGE_BYTES);
            typed(StatusCode::OK, "text/html; charset=utf-8", body)
        }
    }
}

// --- the load ----------------------------------------------------------------------------

struct Plan {
    key: String,
    rate: f64,
    seconds: f64,
    names: usize,
    retire_at: f64,
    restore_at: f64,
    service: String,
    upstream: String,
}

/// One lookup: when it was sent (s from the start), its status and `x-source`.
struct Done {
    sent: f64,
    status: u16,
    source: String,
}

/// What the sampler saw at one instant (s from the start).
#[derive(Clone, Default)]
struct Sample {
    at: f64,
    upstream: u64,
    proxy_blocks: f64,
    /// Proxies resting (`profile_lookup_proxy_resting`).
    resting: f64,
    standing: String,
}

async fn load(plan: Plan) -> String {
    let client = played::lookup_client(Duration::from_secs(15));
    let plan = Arc::new(plan);
    let done: Arc<Mutex<Vec<Done>>> = Arc::default();
    let samples: Arc<Mutex<Vec<Sample>>> = Arc::default();
    let start = Instant::now();
    let sampler = {
        let (client, plan, samples) = (client.clone(), plan.clone(), samples.clone());
        tokio::spawn(async move {
            let mut retired = false;
            let mut restored = false;
            loop {
                let at = start.elapsed().as_secs_f64();
                if !retired && at >= plan.retire_at {
                    retired = true;
                    let _ = client.get(format!("{}/retire", plan.upstream)).send().await;
                }
                if !restored && at >= plan.restore_at {
                    restored = true;
                    let _ = client
                        .get(format!("{}/restore", plan.upstream))
                        .send()
                        .await;
                }
                let sample = sample(&client, &plan, at).await;
                samples.lock().await.push(sample);
                if at > plan.seconds + 1.0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        })
    };
    let total = (plan.rate * plan.seconds) as usize;
    let mut tasks = Vec::with_capacity(total);
    for i in 0..total {
        let due = start + Duration::from_secs_f64(i as f64 / plan.rate);
        tokio::time::sleep_until(due.into()).await;
        let (client, plan, done) = (client.clone(), plan.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            let sent = start.elapsed().as_secs_f64();
            let url = format!(
                "{}/photo-share/profile/u{:04}",
                plan.service,
                i % plan.names
            );
            let answer = client.get(url).bearer_auth(&plan.key).send().await;
            let (status, source) = match answer {
                Ok(r) => (
                    r.status().as_u16(),
                    r.headers()
                        .get("x-source")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("-")
                        .to_owned(),
                ),
                Err(_) => (0, "-".to_owned()),
            };
            done.lock().await.push(Done {
                sent,
                status,
                source,
            });
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    let _ = sampler.await;
    let done = std::mem::take(&mut *done.lock().await);
    let samples = std::mem::take(&mut *samples.lock().await);
    report(&plan, &done, &samples)
}

async fn sample(client: &reqwest::Client, plan: &Plan, at: f64) -> Sample {
    let text = |url: String| played::text(client, url);
    let counts = text(format!("{}/count", plan.upstream)).await;
    let upstream = counts
        .split_whitespace()
        .filter_map(|n| n.parse::<u64>().ok())
        .sum();
    let metrics = text(format!("{}/metrics", plan.service)).await;
    let proxy_blocks = metrics
        .lines()
        .filter(|l| {
            l.starts_with("profile_lookup_proxy_blocks_total{") && l.contains("photo-share")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    let resting = metrics
        .lines()
        .filter(|l| l.starts_with("profile_lookup_proxy_resting{") && l.contains("photo-share"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    let status = text(format!("{}/status", plan.service)).await;
    let standing = serde_json::from_str::<serde_json::Value>(&status)
        .ok()
        .and_then(|s| {
            s["standings"].as_array()?.iter().find_map(|s| {
                (s["platform"] == "photo-share" && s["source"] == "json")
                    .then(|| s["standing"].as_str().unwrap_or_default().to_owned())
            })
        })
        .unwrap_or_default();
    Sample {
        at,
        upstream,
        proxy_blocks,
        resting,
        standing,
    }
}

/// The last sample at or before `at` (the first one when none is).
fn at(samples: &[Sample], at: f64) -> Sample {
    samples
        .iter()
        .rev()
        .find(|s| s.at <= at)
        .or(samples.first())
        .cloned()
        .unwrap_or_default()
}

fn report(plan: &Plan, done: &[Done], samples: &[Sample]) -> String {
    let mut out = String::new();
    let end = plan.seconds;
    let phases = [
        ("before", 0.0, plan.retire_at),
        ("retired", plan.retire_at, plan.restore_at.min(end)),
        ("restored", plan.restore_at.min(end), end),
    ];
    for (name, from, to) in phases {
        if to <= from {
            continue;
        }
        let these: Vec<&Done> = done
            .iter()
            .filter(|d| d.sent >= from && d.sent < to)
            .collect();
        let n = these.len().max(1) as f64;
        let ok = these.iter().filter(|d| d.status == 200).count() as f64;
        let (a, b) = (at(samples, from), at(samples, to));
        let requests = b.upstream.saturating_sub(a.upstream) as f64;
        let rests = b.proxy_blocks - a.proxy_blocks;
        let by = |source: &str| these.iter().filter(|d| d.source == source).count();
        let resting = samples
            .iter()
            .filter(|s| s.at >= from && s.at < to)
            .map(|s| s.resting)
            .fold(0.0, f64::max);
        out.push_str(&format!(
            "PHASE {name} from_s={from:.0} to_s={to:.0} lookups={} ok_share={:.4} requests_per_lookup={:.3} proxy_rests={rests:.0} most_resting={resting:.0} from_json={} from_page={} not_200={}\n",
            these.len(),
            ok / n,
            requests / n,
            by("json"),
            by("page"),
            these.iter().filter(|d| d.status != 200).count(),
        ));
    }
    let first = |from: f64, standing: &str| {
        samples
            .iter()
            .find(|s| s.at >= from && s.standing == standing)
            .map_or("never".to_owned(), |s| format!("{:.1}", s.at - from))
    };
    // The first window start after the retirement from which every 5 s window (until the
    // restoration) costs at most 1.1 requests per lookup.
    let window = 5.0;
    let mut settled = "never".to_owned();
    let mut t = plan.retire_at;
    while t + window <= plan.restore_at.min(end) {
        let all_after = {
            let mut s = t;
            let mut fine = true;
            while s + window <= plan.restore_at.min(end) {
                let (a, b) = (at(samples, s), at(samples, s + window));
                let n = done
                    .iter()
                    .filter(|d| d.sent >= s && d.sent < s + window)
                    .count()
                    .max(1);
                let ratio = b.upstream.saturating_sub(a.upstream) as f64 / n as f64;
                fine &= ratio <= 1.1;
                s += 1.0;
            }
            fine
        };
        if all_after {
            settled = format!("{:.0}", t - plan.retire_at);
            break;
        }
        t += 1.0;
    }
    out.push_str(&format!(
        "SOURCES demoted_after_s={} restored_after_s={} at_most_1.1_from_s={settled}",
        first(plan.retire_at, "demoted"),
        first(plan.restore_at, "preferred"),
    ));
    out
}
