//! The photo-share platform as it answers a guest since 2026-09 (issue 39), behind three
//! "proxies", and the paced load of `scripts/guest.sh`, on loopback only: every lookup of a
//! name the service has never seen.
//!
//! ```text
//! cargo run --release --example guest_load -- upstream
//! cargo run --release --example guest_load -- load KEY RATE SECONDS SERVICE UPSTREAM
//! ```
//!
//! `upstream` plays the platform for any name (the public sample, renamed, as
//! `examples/sources_load.rs` does). It listens on four ports the OS picks and prints
//! `LISTENING <control> <proxy> <proxy> <proxy>`: the three others answer requests in the
//! absolute form a client sends to an HTTP proxy, as if they forwarded them, so the service
//! can be given them as `upstream.proxies`. Every port answers:
//!
//! - `POST /api/graphql` with `fb_api_req_friendly_name=`[`ps::LOGGEDOUT_QUERY`]: the logged-out
//!   query's answer for the form's `variables.username` ([`ps::loggedout_answer`], no post
//!   count, as `text/javascript`); a `doc_id` other than [`ps::LOGGEDOUT_DOC_ID`] (or no
//!   username) answers the CRITICAL execution error [`ps::CHANGED_ANSWER`]; another query, 400.
//! - `GET /api/v1/users/web_profile_info/`: 401 with [`ps::REQUIRE_LOGIN_2026`] as JSON.
//! - `GET /{name}/embed/`: every 4th embed request (one counter for all names) answers 500,
//!   the others [`ps::embed_page`], whose `contextJSON` has the post count.
//! - `GET /{name}/`: the login wall, 302 to `/accounts/login/?next=/{name}/`.
//!
//! On the control port `GET /count` answers the requests by kind, as `query=N json=N page=N
//! embed=N embed_500=N changed=N other=N` (`embed_500` of the `embed`, `changed` of the
//! `query`; `other` is anything else).
//!
//! `load` sends `RATE` photo-share lookups a second for `SECONDS` to `SERVICE`, open loop
//! (lookup `i` is due at `start + i / RATE`, whatever the others are doing), each of a name
//! never asked before (`guest.{i}`). Each answer is checked: 200, the body's `username` the
//! name asked, `id` not empty, `edge_followed_by.count` and `edge_follow.count` numbers (every
//! seed field but the post count), and whether `edge_owner_to_timeline_media.count` is a
//! number (the post count read). Every 250 ms it reads the service's `/metrics` (the proxies
//! resting); at the end the upstream's counts and the proxy blocks (each of which rests a
//! proxy). It prints the lookups, the shares answered 200, with the seed fields read and with
//! the post count read, upstream requests per lookup (every kind), proxy rests, and answers
//! by `x-source`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use stand_in::photo_share as ps;
use tokio::sync::Mutex;

// Only the runtime is shared: this load's requests go through reqwest, not the hand-read
// exchange the latency-measuring loads use.
#[allow(dead_code)]
mod support;

mod played;

/// The embed page answers 500 to one request in this many (the platform's "about one fetch in
/// four", made deterministic).
const EMBED_FAILS_ONE_IN: u64 = 4;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = support::runtime();
    match args.first().map(String::as_str) {
        Some("upstream") => runtime.block_on(upstream()),
        Some("load") if args.len() == 6 => {
            let plan = Plan {
                key: args[1].clone(),
                rate: args[2].parse().expect("RATE"),
                seconds: args[3].parse().expect("SECONDS"),
                service: args[4].trim_end_matches('/').to_owned(),
                upstream: args[5].trim_end_matches('/').to_owned(),
            };
            println!("{}", runtime.block_on(load(plan)));
        }
        _ => {
            eprintln!(
                "usage: guest_load upstream\n       \
                 guest_load load KEY RATE SECONDS SERVICE UPSTREAM"
            );
            std::process::exit(2);
        }
    }
}

// --- the upstream ------------------------------------------------------------------------

/// The requests the platform was asked, by kind.
#[derive(Clone, Default)]
struct Platform {
    query: Arc<AtomicU64>,
    json: Arc<AtomicU64>,
    page: Arc<AtomicU64>,
    embed: Arc<AtomicU64>,
    embed_500: Arc<AtomicU64>,
    changed: Arc<AtomicU64>,
    other: Arc<AtomicU64>,
}

impl Platform {
    fn counts(&self) -> String {
        let kinds = [
            ("query", &self.query),
            ("json", &self.json),
            ("page", &self.page),
            ("embed", &self.embed),
            ("embed_500", &self.embed_500),
            ("changed", &self.changed),
            ("other", &self.other),
        ];
        kinds
            .iter()
            .map(|(kind, n)| format!("{kind}={}", n.load(Ordering::Relaxed)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

async fn upstream() {
    let platform = Platform::default();
    // One router on every port: its clones share the platform.
    let router = axum::Router::new().fallback(answer).with_state(platform);
    played::serve_listening(vec![router; 4]).await;
}

/// A user of `name`: the public sample, renamed (each name leaked once; a run asks a few
/// thousand).
fn user(name: &str) -> ps::SampleUser {
    ps::SampleUser {
        username: played::leaked(name),
        ..ps::PUBLIC_USER
    }
}

fn typed(status: StatusCode, content_type: &'static str, body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

async fn answer(State(platform): State<Platform>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    if path == "/count" {
        return typed(StatusCode::OK, "text/plain", platform.counts());
    }
    if path == "/api/graphql" && request.method() == Method::POST {
        platform.query.fetch_add(1, Ordering::Relaxed);
        return loggedout(&platform, request).await;
    }
    if path == "/api/v1/users/web_profile_info/" {
        platform.json.fetch_add(1, Ordering::Relaxed);
        let body = ps::REQUIRE_LOGIN_2026.to_owned();
        return typed(
            StatusCode::UNAUTHORIZED,
            "application/json; charset=utf-8",
            body,
        );
    }
    let segments: Vec<&str> = path
        .strip_prefix('/')
        .and_then(|p| p.strip_suffix('/'))
        .map(|p| p.split('/').collect())
        .unwrap_or_default();
    match segments.as_slice() {
        [name, "embed"] if !name.is_empty() => {
            let n = platform.embed.fetch_add(1, Ordering::Relaxed);
            if n % EMBED_FAILS_ONE_IN == EMBED_FAILS_ONE_IN - 1 {
                platform.embed_500.fetch_add(1, Ordering::Relaxed);
                let body = "<!DOCTYPE html><html><body>Something went wrong</body></html>";
                return typed(StatusCode::INTERNAL_SERVER_ERROR, "text/html", body.into());
            }
            let body = ps::embed_page(&user(name));
            typed(StatusCode::OK, "text/html; charset=utf-8", body)
        }
        [name] if !name.is_empty() && *name != "accounts" => {
            platform.page.fetch_add(1, Ordering::Relaxed);
            let mut response = typed(StatusCode::FOUND, "text/html; charset=utf-8", String::new());
            let target = format!("/accounts/login/?next=%2F{name}%2F");
            if let Ok(target) = HeaderValue::from_str(&target) {
                response.headers_mut().insert(header::LOCATION, target);
            }
            response
        }
        _ => {
            platform.other.fetch_add(1, Ordering::Relaxed);
            typed(StatusCode::OK, "text/html; charset=utf-8", ps::login_page())
        }
    }
}

/// The logged-out profile query: the user the form's variables name, when its doc_id is the
/// one the platform answers.
async fn loggedout(platform: &Platform, request: Request) -> Response {
    let script = "text/javascript; charset=utf-8";
    let Ok(body) = axum::body::to_bytes(request.into_body(), 64 * 1024).await else {
        return typed(StatusCode::PAYLOAD_TOO_LARGE, "text/plain", String::new());
    };
    let fields: BTreeMap<String, String> = url::form_urlencoded::parse(&body)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if fields.get("fb_api_req_friendly_name").map(String::as_str) != Some(ps::LOGGEDOUT_QUERY) {
        let invalid = r#"{"message":"invalid request","status":"fail"}"#;
        return typed(StatusCode::BAD_REQUEST, "application/json", invalid.into());
    }
    let name = fields
        .get("variables")
        .and_then(|v| serde_json::from_str::<serde_json::Value>(v).ok())
        .and_then(|v| v["username"].as_str().map(str::to_owned));
    match name {
        Some(name) if fields.get("doc_id").map(String::as_str) == Some(ps::LOGGEDOUT_DOC_ID) => {
            typed(StatusCode::OK, script, ps::loggedout_answer(&user(&name)))
        }
        _ => {
            platform.changed.fetch_add(1, Ordering::Relaxed);
            typed(StatusCode::OK, script, ps::CHANGED_ANSWER.to_owned())
        }
    }
}

// --- the load ----------------------------------------------------------------------------

struct Plan {
    key: String,
    rate: f64,
    seconds: f64,
    service: String,
    upstream: String,
}

/// One lookup: its status, `x-source`, what its body read, and how long it took.
struct Done {
    status: u16,
    source: String,
    /// 200, the name asked, an id, and both follow counts.
    seed: bool,
    /// The post count is a number.
    posts: bool,
    /// `Profile-Withheld` was sent.
    withheld: bool,
    ms: f64,
}

async fn load(plan: Plan) -> String {
    let client = played::lookup_client(Duration::from_secs(15));
    let plan = Arc::new(plan);
    let done: Arc<Mutex<Vec<Done>>> = Arc::default();
    let most_resting = Arc::new(Mutex::new(0.0_f64));
    let before = counts(&client, &plan).await;
    let blocks_before = metric(&client, &plan, "profile_lookup_proxy_blocks_total").await;
    let start = Instant::now();
    let sampler = {
        let (client, plan, most_resting) = (client.clone(), plan.clone(), most_resting.clone());
        tokio::spawn(async move {
            loop {
                let resting = metric(&client, &plan, "profile_lookup_proxy_resting").await;
                let mut most = most_resting.lock().await;
                *most = most.max(resting);
                drop(most);
                if start.elapsed().as_secs_f64() > plan.seconds + 1.0 {
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
            let name = format!("guest.{i}");
            let url = format!("{}/photo-share/profile/{name}", plan.service);
            let sent = Instant::now();
            let answer = client.get(url).bearer_auth(&plan.key).send().await;
            let one = match answer {
                Ok(r) => {
                    let status = r.status().as_u16();
                    let header = |h: &str| {
                        r.headers()
                            .get(h)
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_owned)
                    };
                    let source = header("x-source").unwrap_or_else(|| "-".to_owned());
                    let withheld = header("profile-withheld").is_some();
                    let body: serde_json::Value = r.json().await.unwrap_or_default();
                    let number = |field: &str| body[field]["count"].is_number();
                    let seed = status == 200
                        && body["username"].as_str() == Some(name.as_str())
                        && body["id"].as_str().is_some_and(|id| !id.is_empty())
                        && number("edge_followed_by")
                        && number("edge_follow");
                    Done {
                        status,
                        source,
                        seed,
                        posts: seed && number("edge_owner_to_timeline_media"),
                        withheld,
                        ms: sent.elapsed().as_secs_f64() * 1000.0,
                    }
                }
                Err(_) => Done {
                    status: 0,
                    source: "-".to_owned(),
                    seed: false,
                    posts: false,
                    withheld: false,
                    ms: sent.elapsed().as_secs_f64() * 1000.0,
                },
            };
            done.lock().await.push(one);
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    let _ = sampler.await;
    let after = counts(&client, &plan).await;
    let blocks = metric(&client, &plan, "profile_lookup_proxy_blocks_total").await - blocks_before;
    let most_resting = *most_resting.lock().await;
    let done = std::mem::take(&mut *done.lock().await);
    report(&done, &before, &after, blocks, most_resting)
}

/// The upstream's counts by kind.
async fn counts(client: &reqwest::Client, plan: &Plan) -> BTreeMap<String, u64> {
    let text = played::text(client, format!("{}/count", plan.upstream)).await;
    text.split_whitespace()
        .filter_map(|pair| {
            let (kind, n) = pair.split_once('=')?;
            Some((kind.to_owned(), n.parse().ok()?))
        })
        .collect()
}

/// The sum of the service's photo-share series of `metric`.
async fn metric(client: &reqwest::Client, plan: &Plan, metric: &str) -> f64 {
    let metrics = played::text(client, format!("{}/metrics", plan.service)).await;
    let prefix = format!("{metric}{{");
    metrics
        .lines()
        .filter(|l| l.starts_with(&prefix) && l.contains("photo-share"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn report(
    done: &[Done],
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
    blocks: f64,
    most_resting: f64,
) -> String {
    let n = done.len().max(1) as f64;
    let share = |keep: &dyn Fn(&Done) -> bool| done.iter().filter(|d| keep(d)).count() as f64 / n;
    let delta = |kind: &str| {
        after
            .get(kind)
            .copied()
            .unwrap_or(0)
            .saturating_sub(before.get(kind).copied().unwrap_or(0))
    };
    // Every request the platform was asked (the 500s and the changed answers are already
    // among the embeds and the queries).
    let requests: u64 = ["query", "json", "page", "embed", "other"]
        .iter()
        .map(|k| delta(k))
        .sum();
    let mut ms: Vec<f64> = done.iter().map(|d| d.ms).collect();
    ms.sort_by(f64::total_cmp);
    let mut by_source: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_status: BTreeMap<u16, usize> = BTreeMap::new();
    for d in done {
        *by_source.entry(d.source.as_str()).or_default() += 1;
        *by_status.entry(d.status).or_default() += 1;
    }
    let join = |pairs: Vec<String>| pairs.join(" ");
    let mut out = String::new();
    out.push_str(&format!(
        "GUEST lookups={} ok_share={:.4} seed_share={:.4} posts_share={:.4} requests_per_lookup={:.3} proxy_rests={blocks:.0} most_resting={most_resting:.0} withheld_header={} p50_ms={:.1} p99_ms={:.1}\n",
        done.len(),
        share(&|d| d.status == 200),
        share(&|d| d.seed),
        share(&|d| d.posts),
        requests as f64 / n,
        done.iter().filter(|d| d.withheld).count(),
        percentile(&ms, 0.5),
        percentile(&ms, 0.99),
    ));
    out.push_str(&format!(
        "UPSTREAM requests={requests} {}\n",
        join(
            [
                "query",
                "json",
                "page",
                "embed",
                "embed_500",
                "changed",
                "other"
            ]
            .iter()
            .map(|k| format!("{k}={}", delta(k)))
            .collect()
        )
    ));
    out.push_str(&format!(
        "SOURCES {}\n",
        join(by_source.iter().map(|(s, c)| format!("{s}={c}")).collect())
    ));
    out.push_str(&format!(
        "STATUSES {}",
        join(by_status.iter().map(|(s, c)| format!("{s}={c}")).collect())
    ));
    out
}
