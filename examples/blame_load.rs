//! Both platforms behind three fixed "proxies" and a gateway, and the paced load of
//! `scripts/blame.sh` (issue 40's "Done means"), on loopback only: blame decided by comparison
//! while an age-gated name is asked, a gateway hands out bad exits, the platform is slow one
//! request in five, the short-video page changes shape, a photo-share source answers 503, and
//! the platform throttles everything.
//!
//! ```text
//! cargo run --release --example blame_load -- upstream SLOW_EVERY SLOW_MS BAD_EXITS
//! cargo run --release --example blame_load -- load key=K rate=R seconds=S names=N \
//!     gated_every=G changed=A-B failing=A-B throttle=A-B service=URL upstream=URL [trace=PATH]
//! ```
//!
//! `upstream` plays both platforms for any name (the public samples, renamed) and listens on
//! five ports the OS picks: it prints `LISTENING <control> <fixed> <fixed> <fixed> <gateway>`.
//! Each port answers requests in the absolute form a client sends to an HTTP proxy, as if it
//! forwarded them; what the platform sees as the client's address (its "exit") is the port for
//! a fixed proxy, and for the gateway the session id in the user name of
//! `Proxy-Authorization` (`u-<session>`; none: 407). `BAD_EXITS` of every 10 exits of the
//! gateway are refused (429 to everything), a deterministic function of the session id (its
//! FNV-1a hash modulo 10). Every `SLOW_EVERY`-th short-video request (one counter for every
//! route and document) answers after `SLOW_MS`.
//!
//! - short-video: `GET /@{name}` the profile page (with every count under a name no reader
//!   knows while `changed` is on), `GET /embed/@{name}` the embed page; a name starting with
//!   `gated.` is shown to logged-in viewers only: both answer a 302 to `/login`;
//! - photo-share: `POST /api/graphql` the logged-out profile query (503 while `failing` is
//!   on), `GET /{name}/` the profile page, `GET /api/v1/users/web_profile_info/` the profile
//!   JSON, `GET /{name}/embed/` the embed page (the post count);
//! - while `throttle` is on, every request of either platform answers 429.
//!
//! On the control port `GET /set?changed=1&failing=0&throttle=0` (any of them) switches the
//! platform, and `GET /count` answers the requests by kind as `key=N` pairs (`sv_*` and `ps_*`
//! by document, `slow`, `bad_exit`, `throttled`, `gated`, `changed`, `failing`, and the
//! gateway's `sessions` and `bad_sessions` seen).
//!
//! `load` sends `rate` lookups a second for `seconds` to `service`, open loop (lookup `i` is
//! due at `start + i / rate`), alternating short-video and photo-share names round robin over
//! `names` names each; every `gated_every` seconds one more lookup of a short-video name the
//! platform shows to logged-in viewers only (a fresh `gated.<k>` each time, so that each is
//! decided by blame rather than answered from the names remembered). At the boundaries it
//! switches the platform: `changed` (the short-video page), `failing` (the photo-share
//! logged-out query answering 503), `throttle` (everything answering 429). Every 250 ms it
//! reads the upstream's counts, the service's `/status` (the sources' standings, the routes')
//! and `/metrics` (blame by party, proxy blocks). It prints, for each phase (the stretches
//! between switches), the lookups, the share of ordinary lookups answered 200 (each platform's
//! too), upstream requests per lookup, proxy blocks counted and rests begun (a route seen
//! resting that was usable, or whose rest grew, in `/status`), the most routes resting in any
//! sample, blame by party; then each source demoted and when it was restored, each age-gated
//! lookup (its status, the party its `Cache-Status` names, and whether a rest began up to 1 s
//! after its answer), and a `SUMMARY` line the script checks against the goals. With
//! `trace=PATH` it also writes every lookup there (sent, took, platform, name, status,
//! `x-source`, the party blamed, the service's `x-request-id`), to read beside the service's
//! log.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use base64::Engine;
use bytes::Bytes;
use stand_in::photo_share as ps;
use stand_in::short_video as sv;
use tokio::sync::Mutex;

// Only the runtime is shared: this load's requests go through reqwest.
#[allow(dead_code)]
mod support;

mod played;

/// About how large each profile page is (a real one is ~365 kB; smaller keeps the CPU on the
/// service's decisions, not on reading pages).
const PAGE_BYTES: usize = 64 * 1024;
/// About how large each profile JSON is.
const JSON_BYTES: usize = 4 * 1024;
/// How often the load reads the service's state.
const SAMPLE_EVERY: Duration = Duration::from_millis(250);
/// How long after a lookup's answer a rest counts as following it.
const FOLLOWS_WITHIN: f64 = 1.0;
/// The re-probe interval of a demoted source with the canary off (`fetcher::mod.rs`), and the
/// slack given to a restoration on top of it (a sample's period, the next lookup).
const REPROBE_S: f64 = 60.0;
const REPROBE_SLACK_S: f64 = 3.0;
/// The longest a lookup may take (the service's request deadline is 30 s).
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(40);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = support::runtime();
    match args.first().map(String::as_str) {
        Some("upstream") if args.len() == 4 => {
            let slowness = Slowness {
                every: args[1].parse().expect("SLOW_EVERY"),
                delay: Duration::from_millis(args[2].parse().expect("SLOW_MS")),
            };
            let bad_exits: u64 = args[3].parse().expect("BAD_EXITS");
            runtime.block_on(upstream(slowness, bad_exits.min(10)));
        }
        Some("load") => match Plan::parse(&args[1..]) {
            Ok(plan) => println!("{}", runtime.block_on(load(plan))),
            Err(why) => usage(&why),
        },
        _ => usage("no command"),
    }
}

fn usage(why: &str) -> ! {
    eprintln!(
        "{why}\nusage: blame_load upstream SLOW_EVERY SLOW_MS BAD_EXITS\n       \
         blame_load load key=K rate=R seconds=S names=N gated_every=G changed=A-B \
         failing=A-B throttle=A-B service=URL upstream=URL [trace=PATH]"
    );
    std::process::exit(2);
}

// --- the upstream ------------------------------------------------------------------------

/// Every `every`-th short-video request answers after `delay` (0: none).
#[derive(Clone, Copy)]
struct Slowness {
    every: u64,
    delay: Duration,
}

/// What the platform sees a request come from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Port {
    Control,
    Fixed,
    Gateway,
}

/// The kinds of request counted, in `/count`'s order.
const KINDS: [&str; 17] = [
    "sv_page",
    "sv_embed",
    "ps_query",
    "ps_page",
    "ps_json",
    "ps_embed",
    "other",
    "slow",
    "bad_exit",
    "throttled",
    "gated",
    "changed",
    "failing",
    "proxy_auth",
    "sessions",
    "bad_sessions",
    "direct",
];

#[derive(Clone)]
struct Platform {
    slowness: Slowness,
    bad_exits: u64,
    changed: Arc<AtomicBool>,
    failing: Arc<AtomicBool>,
    throttle: Arc<AtomicBool>,
    short_video_requests: Arc<AtomicU64>,
    counts: Arc<[AtomicU64; KINDS.len()]>,
    sessions: Arc<std::sync::Mutex<HashSet<String>>>,
}

impl Platform {
    fn count(&self, kind: &str) {
        if let Some(at) = KINDS.iter().position(|k| *k == kind) {
            self.counts[at].fetch_add(1, Ordering::Relaxed);
        }
    }

    fn counts(&self) -> String {
        KINDS
            .iter()
            .zip(self.counts.iter())
            .map(|(kind, n)| format!("{kind}={}", n.load(Ordering::Relaxed)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Whether the gateway's exit for `session` is one the platform refuses.
    fn refuses(&self, session: &str) -> bool {
        fnv1a(session.as_bytes()) % 10 < self.bad_exits
    }
}

/// FNV-1a, 64 bits: a deterministic spread of session ids over the exits.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

async fn upstream(slowness: Slowness, bad_exits: u64) {
    let platform = Platform {
        slowness,
        bad_exits,
        changed: Arc::default(),
        failing: Arc::default(),
        throttle: Arc::default(),
        short_video_requests: Arc::default(),
        counts: Arc::new(std::array::from_fn(|_| AtomicU64::new(0))),
        sessions: Arc::default(),
    };
    let kinds = [
        Port::Control,
        Port::Fixed,
        Port::Fixed,
        Port::Fixed,
        Port::Gateway,
    ];
    let routers = kinds
        .into_iter()
        .map(|port| {
            axum::Router::new()
                .fallback(answer)
                .with_state((platform.clone(), port))
        })
        .collect();
    played::serve_listening(routers).await;
}

fn typed(status: StatusCode, content_type: &'static str, body: impl Into<Body>) -> Response {
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn redirect(to: &str) -> Response {
    let mut response = typed(StatusCode::FOUND, "text/html; charset=utf-8", "");
    if let Ok(to) = HeaderValue::from_str(to) {
        response.headers_mut().insert(header::LOCATION, to);
    }
    response
}

/// The session id of a gateway request (`Proxy-Authorization: Basic` of `u-<id>:…`).
fn session_of(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::PROXY_AUTHORIZATION)?.to_str().ok()?;
    let encoded = value.trim().strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let id = text.split_once(':')?.0.strip_prefix("u-")?;
    (!id.is_empty()).then(|| id.to_owned())
}

/// The documents of both platforms, by path and method.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Doc {
    SvPage,
    SvEmbed,
    PsQuery,
    PsPage,
    PsJson,
    PsEmbed,
}

fn doc_of(method: &Method, path: &str) -> Option<(Doc, String)> {
    if let Some(name) = path.strip_prefix("/embed/@") {
        return Some((Doc::SvEmbed, name.to_ascii_lowercase()));
    }
    if let Some(name) = path.strip_prefix("/@") {
        return Some((Doc::SvPage, name.to_ascii_lowercase()));
    }
    if path == "/api/graphql" && method == Method::POST {
        return Some((Doc::PsQuery, String::new()));
    }
    if path == "/api/v1/users/web_profile_info/" {
        return Some((Doc::PsJson, String::new()));
    }
    let segments: Vec<&str> = path
        .strip_prefix('/')?
        .strip_suffix('/')?
        .split('/')
        .collect();
    match segments.as_slice() {
        [name, "embed"] if !name.is_empty() => Some((Doc::PsEmbed, name.to_ascii_lowercase())),
        [name] if !name.is_empty() && *name != "accounts" && *name != "login" => {
            Some((Doc::PsPage, name.to_ascii_lowercase()))
        }
        _ => None,
    }
}

async fn answer(State((platform, port)): State<(Platform, Port)>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    if port == Port::Control {
        match path.as_str() {
            "/count" => return typed(StatusCode::OK, "text/plain", platform.counts()),
            "/set" => {
                for (key, value) in url::form_urlencoded::parse(
                    request.uri().query().unwrap_or_default().as_bytes(),
                ) {
                    let switch = match key.as_ref() {
                        "changed" => &platform.changed,
                        "failing" => &platform.failing,
                        "throttle" => &platform.throttle,
                        _ => continue,
                    };
                    switch.store(value == "1", Ordering::Relaxed);
                }
                return typed(StatusCode::OK, "text/plain", "set");
            }
            // The service goes out through the proxies only.
            _ => platform.count("direct"),
        }
    }
    let exit_refused = if port == Port::Gateway {
        let Some(session) = session_of(request.headers()) else {
            platform.count("proxy_auth");
            return typed(StatusCode::PROXY_AUTHENTICATION_REQUIRED, "text/plain", "");
        };
        let refused = platform.refuses(&session);
        if platform
            .sessions
            .lock()
            .expect("not poisoned")
            .insert(session)
        {
            platform.count("sessions");
            if refused {
                platform.count("bad_sessions");
            }
        }
        refused
    } else {
        false
    };
    let Some((doc, name)) = doc_of(request.method(), &path) else {
        platform.count("other");
        return typed(StatusCode::NOT_FOUND, "text/html", "");
    };
    platform.count(match doc {
        Doc::SvPage => "sv_page",
        Doc::SvEmbed => "sv_embed",
        Doc::PsQuery => "ps_query",
        Doc::PsPage => "ps_page",
        Doc::PsJson => "ps_json",
        Doc::PsEmbed => "ps_embed",
    });
    if matches!(doc, Doc::SvPage | Doc::SvEmbed) && platform.slowness.every > 0 {
        let n = platform
            .short_video_requests
            .fetch_add(1, Ordering::Relaxed)
            + 1;
        if n.is_multiple_of(platform.slowness.every) {
            platform.count("slow");
            tokio::time::sleep(platform.slowness.delay).await;
        }
    }
    if exit_refused {
        platform.count("bad_exit");
        return typed(
            StatusCode::TOO_MANY_REQUESTS,
            "text/html",
            "Too Many Requests",
        );
    }
    if platform.throttle.load(Ordering::Relaxed) {
        platform.count("throttled");
        return typed(
            StatusCode::TOO_MANY_REQUESTS,
            "text/html",
            "Too Many Requests",
        );
    }
    match doc {
        Doc::SvPage | Doc::SvEmbed if name.starts_with("gated.") => {
            platform.count("gated");
            redirect(&format!("/login?redirect_url=%2F%40{name}"))
        }
        Doc::SvPage => {
            let changed = platform.changed.load(Ordering::Relaxed);
            if changed {
                platform.count("changed");
            }
            let body = short_video_page(&name, changed);
            typed(StatusCode::OK, "text/html; charset=utf-8", body)
        }
        Doc::SvEmbed => {
            let body = sv::embed_page(&short_video_user(&name));
            typed(StatusCode::OK, "text/html; charset=utf-8", body)
        }
        Doc::PsQuery => {
            if platform.failing.load(Ordering::Relaxed) {
                platform.count("failing");
                let body = "<!DOCTYPE html><html><body>Service Unavailable</body></html>";
                return typed(StatusCode::SERVICE_UNAVAILABLE, "text/html", body);
            }
            loggedout(request).await
        }
        Doc::PsPage => {
            let body = photo_share_page(&name);
            typed(StatusCode::OK, "text/html; charset=utf-8", body)
        }
        Doc::PsJson => {
            let name = request
                .uri()
                .query()
                .and_then(|q| q.strip_prefix("username="))
                .unwrap_or_default()
                .to_ascii_lowercase();
            let body = ps::web_profile_info(&photo_share_user(&name), JSON_BYTES);
            typed(StatusCode::OK, "application/json; charset=utf-8", body)
        }
        Doc::PsEmbed => {
            let body = ps::embed_page(&photo_share_user(&name));
            typed(StatusCode::OK, "text/html; charset=utf-8", body)
        }
    }
}

/// The logged-out profile query's answer for the form's `variables.username`.
async fn loggedout(request: Request) -> Response {
    let Ok(body) = axum::body::to_bytes(request.into_body(), 64 * 1024).await else {
        return typed(StatusCode::PAYLOAD_TOO_LARGE, "text/plain", "");
    };
    let name = url::form_urlencoded::parse(&body)
        .find(|(k, _)| k == "variables")
        .and_then(|(_, v)| serde_json::from_str::<serde_json::Value>(&v).ok())
        .and_then(|v| v["username"].as_str().map(str::to_ascii_lowercase));
    match name {
        Some(name) => typed(
            StatusCode::OK,
            "text/javascript; charset=utf-8",
            ps::loggedout_answer(&photo_share_user(&name)),
        ),
        None => typed(StatusCode::BAD_REQUEST, "application/json", "{}"),
    }
}

fn short_video_user(name: &str) -> sv::SampleUser {
    sv::SampleUser {
        unique_id: played::leaked(name),
        ..sv::PUBLIC_USER
    }
}

fn photo_share_user(name: &str) -> ps::SampleUser {
    ps::SampleUser {
        username: played::leaked(name),
        ..ps::PUBLIC_USER
    }
}

/// A page of each kind per name, built once.
fn built_once(
    pages: &'static OnceLock<std::sync::Mutex<HashMap<String, Bytes>>>,
    name: &str,
    build: impl FnOnce() -> String,
) -> Bytes {
    let pages = pages.get_or_init(Default::default);
    if let Some(page) = pages.lock().expect("not poisoned").get(name) {
        return page.clone();
    }
    let page = Bytes::from(build());
    pages
        .lock()
        .expect("not poisoned")
        .insert(name.to_owned(), page.clone());
    page
}

/// `name`'s short-video profile page, or (`changed`) the same with every count under a name
/// no reader knows.
fn short_video_page(name: &str, changed: bool) -> Bytes {
    static PAGES: OnceLock<std::sync::Mutex<HashMap<String, Bytes>>> = OnceLock::new();
    static CHANGED: OnceLock<std::sync::Mutex<HashMap<String, Bytes>>> = OnceLock::new();
    let user = short_video_user(name);
    if changed {
        built_once(&CHANGED, name, || {
            sv::unknown_counts_page(&user, PAGE_BYTES)
        })
    } else {
        built_once(&PAGES, name, || {
            sv::profile_page(sv::Era::Universal, &user, PAGE_BYTES)
        })
    }
}

fn photo_share_page(name: &str) -> Bytes {
    static PAGES: OnceLock<std::sync::Mutex<HashMap<String, Bytes>>> = OnceLock::new();
    built_once(&PAGES, name, || {
        ps::xig_profile_page(&photo_share_user(name), PAGE_BYTES)
    })
}

// --- the load ----------------------------------------------------------------------------

/// A stretch of the run, in seconds from the start.
#[derive(Clone, Copy, Debug)]
struct Span {
    from: f64,
    to: f64,
}

impl Span {
    fn parse(text: &str) -> Option<Self> {
        let (from, to) = text.split_once('-')?;
        let (from, to) = (from.parse().ok()?, to.parse().ok()?);
        (from <= to).then_some(Self { from, to })
    }

    fn holds(self, at: f64) -> bool {
        at >= self.from && at < self.to
    }
}

struct Plan {
    key: String,
    rate: f64,
    seconds: f64,
    names: usize,
    gated_every: f64,
    changed: Span,
    failing: Span,
    throttle: Span,
    service: String,
    upstream: String,
    /// Where every lookup is written, one a line (`trace=PATH`; none without it).
    trace: Option<String>,
}

impl Plan {
    fn parse(args: &[String]) -> Result<Self, String> {
        let pairs: HashMap<&str, &str> = args.iter().filter_map(|a| a.split_once('=')).collect();
        let get = |key: &str| {
            pairs
                .get(key)
                .copied()
                .ok_or_else(|| format!("missing {key}="))
        };
        let number = |key: &str| {
            get(key)?
                .parse::<f64>()
                .map_err(|_| format!("{key}= is not a number"))
        };
        let span = |key: &str| Span::parse(get(key)?).ok_or_else(|| format!("{key}= is not A-B"));
        let plan = Self {
            key: get("key")?.to_owned(),
            rate: number("rate")?,
            seconds: number("seconds")?,
            names: number("names")? as usize,
            gated_every: number("gated_every")?,
            changed: span("changed")?,
            failing: span("failing")?,
            throttle: span("throttle")?,
            service: get("service")?.trim_end_matches('/').to_owned(),
            upstream: get("upstream")?.trim_end_matches('/').to_owned(),
            trace: pairs.get("trace").map(|p| (*p).to_owned()),
        };
        if plan.rate <= 0.0 || plan.seconds <= 0.0 || plan.names == 0 || plan.gated_every <= 0.0 {
            return Err("rate, seconds, names and gated_every must be positive".into());
        }
        Ok(plan)
    }

    /// What the platform is doing at `at`: the switches on.
    fn switches(&self, at: f64) -> [bool; 3] {
        [
            self.changed.holds(at),
            self.failing.holds(at),
            self.throttle.holds(at),
        ]
    }
}

const PLATFORMS: [&str; 2] = ["short-video", "photo-share"];
const PARTIES: [&str; 7] = [
    "name", "route", "proxy", "source", "platform", "nobody", "unknown",
];

/// One lookup: which platform, whether of an age-gated name, when it was sent and answered
/// (s from the start), its status, `x-source` and the party its `Cache-Status` names.
struct Done {
    platform: usize,
    gated: bool,
    name: String,
    sent: f64,
    answered: f64,
    status: u16,
    source: String,
    blame: String,
    /// The service's `x-request-id`, to find the lookup in its log.
    request_id: String,
}

/// One route of `/status`.
#[derive(Clone, Debug, PartialEq)]
struct RouteState {
    platform: String,
    route: String,
    kind: String,
    resting: bool,
    resting_seconds: u64,
}

/// What the sampler saw at one instant (s from the start).
#[derive(Clone, Default)]
struct Sample {
    at: f64,
    /// The upstream's counts by kind.
    counts: BTreeMap<String, u64>,
    /// `(platform, source) → standing`.
    standings: BTreeMap<(String, String), String>,
    routes: Vec<RouteState>,
    /// `profile_lookup_blame_total` by platform (index) and party.
    blame: BTreeMap<(usize, String), f64>,
    /// `profile_lookup_proxy_blocks_total` by platform (index).
    proxy_blocks: [f64; 2],
}

impl Sample {
    fn requests(&self, platform: Option<usize>) -> u64 {
        let kinds: &[&str] = match platform {
            Some(0) => &["sv_page", "sv_embed"],
            Some(_) => &["ps_query", "ps_page", "ps_json", "ps_embed"],
            None => &[
                "sv_page", "sv_embed", "ps_query", "ps_page", "ps_json", "ps_embed",
            ],
        };
        kinds
            .iter()
            .map(|k| self.counts.get(*k).copied().unwrap_or(0))
            .sum()
    }

    fn resting(&self, platform: &str) -> usize {
        self.routes
            .iter()
            .filter(|r| r.platform == platform && r.resting)
            .count()
    }
}

/// A rest begun, as two samples in a row show it: a route resting that was usable, or whose
/// rest grew (rested again).
#[derive(Clone, Debug)]
struct RestBegun {
    at: f64,
    platform: String,
    route: String,
    kind: String,
}

async fn load(plan: Plan) -> String {
    let client = played::lookup_client(LOOKUP_TIMEOUT);
    let plan = Arc::new(plan);
    let done: Arc<Mutex<Vec<Done>>> = Arc::default();
    let samples: Arc<Mutex<Vec<Sample>>> = Arc::default();
    let finished = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let sampler = {
        let (client, plan, samples, finished) = (
            client.clone(),
            plan.clone(),
            samples.clone(),
            finished.clone(),
        );
        tokio::spawn(async move {
            let mut set = [false; 3];
            // Bounded: the run, then the lookups' tail (at most their time-out).
            let stop_at = plan.seconds + LOOKUP_TIMEOUT.as_secs_f64() + 5.0;
            loop {
                let at = start.elapsed().as_secs_f64();
                let want = plan.switches(at);
                if want != set {
                    set = want;
                    let url = format!(
                        "{}/set?changed={}&failing={}&throttle={}",
                        plan.upstream,
                        u8::from(want[0]),
                        u8::from(want[1]),
                        u8::from(want[2])
                    );
                    let _ = client.get(url).send().await;
                }
                let sample = sample(&client, &plan, at).await;
                samples.lock().await.push(sample);
                if at > stop_at || (at > plan.seconds + 1.0 && finished.load(Ordering::Relaxed)) {
                    break;
                }
                tokio::time::sleep(SAMPLE_EVERY).await;
            }
        })
    };
    // The ordinary lookups at `rate`, and one age-gated lookup every `gated_every` s, in one
    // schedule ordered by when each is due.
    let ordinary = (plan.rate * plan.seconds) as usize;
    let mut due: Vec<(f64, Option<usize>)> = (0..ordinary)
        .map(|i| (i as f64 / plan.rate, Some(i)))
        .collect();
    let gated = (plan.seconds / plan.gated_every).ceil() as usize;
    due.extend((0..gated).map(|k| ((k as f64 + 0.5) * plan.gated_every, None)));
    due.retain(|(at, _)| *at < plan.seconds);
    due.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut tasks = Vec::with_capacity(due.len());
    let mut gated_k = 0;
    for (at, which) in due {
        tokio::time::sleep_until((start + Duration::from_secs_f64(at)).into()).await;
        let (platform, name) = match which {
            Some(i) => {
                let platform = i % 2;
                let prefix = if platform == 0 { "sv" } else { "ps" };
                (platform, format!("{prefix}.u{:04}", (i / 2) % plan.names))
            }
            None => {
                gated_k += 1;
                (0, format!("gated.{gated_k:03}"))
            }
        };
        let (client, plan, done) = (client.clone(), plan.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            let sent = start.elapsed().as_secs_f64();
            let url = format!("{}/{}/profile/{name}", plan.service, PLATFORMS[platform]);
            let answer = client.get(url).bearer_auth(&plan.key).send().await;
            let (status, source, blame, request_id) = match answer {
                Ok(r) => {
                    let header = |h: &str| {
                        r.headers()
                            .get(h)
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or_default()
                            .to_owned()
                    };
                    let blame = header("cache-status")
                        .split(';')
                        .find_map(|p| p.trim().strip_prefix("blame=").map(str::to_owned))
                        .unwrap_or_else(|| "-".to_owned());
                    let source = header("x-source");
                    let request_id = header("x-request-id");
                    let status = r.status().as_u16();
                    let _ = r.bytes().await;
                    (status, source, blame, request_id)
                }
                Err(_) => (0, String::new(), "-".to_owned(), String::new()),
            };
            done.lock().await.push(Done {
                platform,
                gated: which.is_none(),
                name,
                sent,
                answered: start.elapsed().as_secs_f64(),
                status,
                source: if source.is_empty() {
                    "-".into()
                } else {
                    source
                },
                blame,
                request_id,
            });
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    finished.store(true, Ordering::Relaxed);
    let _ = sampler.await;
    let _ = client
        .get(format!(
            "{}/set?changed=0&failing=0&throttle=0",
            plan.upstream
        ))
        .send()
        .await;
    let mut done = std::mem::take(&mut *done.lock().await);
    done.sort_by(|a, b| a.sent.total_cmp(&b.sent));
    let samples = std::mem::take(&mut *samples.lock().await);
    if let Some(path) = &plan.trace {
        let lines: String = done
            .iter()
            .map(|d| {
                format!(
                    "{:.3}\t{:.3}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                    d.sent,
                    d.answered - d.sent,
                    PLATFORMS[d.platform],
                    d.name,
                    d.status,
                    d.source,
                    d.blame,
                    d.request_id
                )
            })
            .collect();
        let header = "sent_s\ttook_s\tplatform\tname\tstatus\tsource\tblame\trequest_id\n";
        if let Err(e) = std::fs::write(path, format!("{header}{lines}")) {
            eprintln!("could not write the trace {path}: {e}");
        }
    }
    report(&plan, &done, &samples)
}

async fn sample(client: &reqwest::Client, plan: &Plan, at: f64) -> Sample {
    let text = |url: String| played::text(client, url);
    let counts = text(format!("{}/count", plan.upstream))
        .await
        .split_whitespace()
        .filter_map(|pair| {
            let (kind, n) = pair.split_once('=')?;
            Some((kind.to_owned(), n.parse().ok()?))
        })
        .collect();
    let metrics = text(format!("{}/metrics", plan.service)).await;
    let mut blame = BTreeMap::new();
    let mut proxy_blocks = [0.0; 2];
    for line in metrics.lines() {
        let Some((series, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        let Some(platform) =
            label(series, "platform").and_then(|p| PLATFORMS.iter().position(|q| *q == p))
        else {
            continue;
        };
        if series.starts_with("profile_lookup_blame_total{") {
            let party = label(series, "party").unwrap_or_default().to_owned();
            *blame.entry((platform, party)).or_default() += value;
        } else if series.starts_with("profile_lookup_proxy_blocks_total{") {
            proxy_blocks[platform] += value;
        }
    }
    let status: serde_json::Value =
        serde_json::from_str(&text(format!("{}/status", plan.service)).await).unwrap_or_default();
    let string = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
    let standings = status["standings"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|s| {
                    (
                        (string(&s["platform"]), string(&s["source"])),
                        string(&s["standing"]),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let routes = status["routes"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|r| RouteState {
                    platform: string(&r["platform"]),
                    route: string(&r["route"]),
                    kind: string(&r["kind"]),
                    resting: r["standing"] == "resting",
                    resting_seconds: r["resting_seconds"].as_u64().unwrap_or(0),
                })
                .collect()
        })
        .unwrap_or_default();
    Sample {
        at,
        counts,
        standings,
        routes,
        blame,
        proxy_blocks,
    }
}

/// The value of label `name` in a Prometheus series (`metric{a="x",b="y"}`).
fn label<'s>(series: &'s str, name: &str) -> Option<&'s str> {
    let labels = series.split_once('{')?.1.strip_suffix('}')?;
    labels.split("\",").find_map(|pair| {
        let (key, value) = pair.split_once("=\"")?;
        (key.trim_start_matches(',') == name).then(|| value.trim_end_matches('"'))
    })
}

/// The last sample at or before `at` (the first one when none is).
fn at(samples: &[Sample], at: f64) -> &Sample {
    static EMPTY: OnceLock<Sample> = OnceLock::new();
    samples
        .iter()
        .rev()
        .find(|s| s.at <= at)
        .or(samples.first())
        .unwrap_or_else(|| EMPTY.get_or_init(Sample::default))
}

/// Every rest begun, as consecutive samples show them.
fn rests_begun(samples: &[Sample]) -> Vec<RestBegun> {
    let mut begun = Vec::new();
    for pair in samples.windows(2) {
        let (before, after) = (&pair[0], &pair[1]);
        for route in after.routes.iter().filter(|r| r.resting) {
            let was = before
                .routes
                .iter()
                .find(|r| r.platform == route.platform && r.route == route.route);
            let grew =
                |was: &RouteState| !was.resting || route.resting_seconds > was.resting_seconds + 1;
            if was.is_none_or(grew) {
                begun.push(RestBegun {
                    at: after.at,
                    platform: route.platform.clone(),
                    route: route.route.clone(),
                    kind: route.kind.clone(),
                });
            }
        }
    }
    begun
}

/// One source's stretch of demotion in `/status`: from the first sample that showed it to the
/// first that showed it preferred again (`None`: not by the end).
struct Demotion {
    platform: String,
    source: String,
    from: f64,
    to: Option<f64>,
}

fn demotions(samples: &[Sample]) -> Vec<Demotion> {
    let mut all: Vec<Demotion> = Vec::new();
    let mut open: HashMap<(String, String), usize> = HashMap::new();
    for s in samples {
        for ((platform, source), standing) in &s.standings {
            let key = (platform.clone(), source.clone());
            let demoted = standing != "preferred";
            match (open.get(&key), demoted) {
                (None, true) => {
                    open.insert(key, all.len());
                    all.push(Demotion {
                        platform: platform.clone(),
                        source: source.clone(),
                        from: s.at,
                        to: None,
                    });
                }
                (Some(&i), false) => {
                    all[i].to = Some(s.at);
                    open.remove(&key);
                }
                _ => {}
            }
        }
    }
    all
}

/// The phases: the stretches between switches, each named by what is on in it.
fn phases(plan: &Plan) -> Vec<(String, Span)> {
    let end = plan.seconds;
    let mut cuts = vec![0.0, end];
    for span in [plan.changed, plan.failing, plan.throttle] {
        cuts.extend(
            [span.from, span.to]
                .into_iter()
                .filter(|t| *t > 0.0 && *t < end),
        );
    }
    cuts.sort_by(f64::total_cmp);
    cuts.dedup();
    let mut out = Vec::new();
    for pair in cuts.windows(2) {
        let span = Span {
            from: pair[0],
            to: pair[1],
        };
        let on = plan.switches(span.from);
        let names: Vec<&str> = ["changed_page", "503_source", "throttle"]
            .iter()
            .zip(on)
            .filter_map(|(name, on)| on.then_some(*name))
            .collect();
        let name = if !names.is_empty() {
            names.join("+")
        } else if span.from
            < plan
                .changed
                .from
                .min(plan.failing.from)
                .min(plan.throttle.from)
        {
            "baseline".to_owned()
        } else if span.from >= plan.throttle.to {
            "after_throttle".to_owned()
        } else {
            "calm".to_owned()
        };
        out.push((name, span));
    }
    out
}

fn share(these: &[&Done], keep: impl Fn(&Done) -> bool) -> f64 {
    if these.is_empty() {
        return 1.0;
    }
    these.iter().filter(|d| keep(d)).count() as f64 / these.len() as f64
}

fn statuses(these: &[&Done]) -> String {
    let mut by: BTreeMap<u16, usize> = BTreeMap::new();
    for d in these {
        *by.entry(d.status).or_default() += 1;
    }
    let all: Vec<String> = by.iter().map(|(s, n)| format!("{s}:{n}")).collect();
    if all.is_empty() {
        "-".to_owned()
    } else {
        all.join(",")
    }
}

fn report(plan: &Plan, done: &[Done], samples: &[Sample]) -> String {
    let mut out = String::new();
    let rests = rests_begun(samples);
    let throttle = plan.throttle;
    for (name, span) in phases(plan) {
        let these: Vec<&Done> = done.iter().filter(|d| span.holds(d.sent)).collect();
        let ordinary: Vec<&Done> = these.iter().copied().filter(|d| !d.gated).collect();
        let on = |p: usize| -> Vec<&Done> {
            ordinary
                .iter()
                .copied()
                .filter(|d| d.platform == p)
                .collect()
        };
        let (a, b) = (at(samples, span.from), at(samples, span.to));
        let per_lookup = |p: Option<usize>, n: usize| {
            b.requests(p).saturating_sub(a.requests(p)) as f64 / n.max(1) as f64
        };
        let sv_n = these.iter().filter(|d| d.platform == 0).count();
        let ps_n = these.iter().filter(|d| d.platform == 1).count();
        let begun: Vec<&RestBegun> = rests.iter().filter(|r| span.holds(r.at)).collect();
        let count_rests = |kind: &str| begun.iter().filter(|r| r.kind == kind).count();
        let most = |platform: &str| {
            samples
                .iter()
                .filter(|s| span.holds(s.at))
                .map(|s| s.resting(platform))
                .max()
                .unwrap_or(0)
        };
        let blame = |p: usize| {
            PARTIES
                .iter()
                .map(|party| {
                    let key = (p, (*party).to_owned());
                    let n = b.blame.get(&key).copied().unwrap_or(0.0)
                        - a.blame.get(&key).copied().unwrap_or(0.0);
                    format!("{party}:{n:.0}")
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        out.push_str(&format!(
            "PHASE {name} from_s={:.0} to_s={:.0} lookups={} gated={} ok_share={:.4} sv_ok={:.4} ps_ok={:.4} requests_per_lookup={:.2} sv_per_lookup={:.2} ps_per_lookup={:.2} proxy_blocks={:.0} rests_fixed={} rests_gateway={} most_resting=sv:{},ps:{} not_200_sv={} not_200_ps={}\n",
            span.from,
            span.to,
            these.len(),
            these.len() - ordinary.len(),
            share(&ordinary, |d| d.status == 200),
            share(&on(0), |d| d.status == 200),
            share(&on(1), |d| d.status == 200),
            per_lookup(None, these.len()),
            per_lookup(Some(0), sv_n),
            per_lookup(Some(1), ps_n),
            (b.proxy_blocks[0] + b.proxy_blocks[1]) - (a.proxy_blocks[0] + a.proxy_blocks[1]),
            count_rests("fixed"),
            count_rests("gateway"),
            most("short-video"),
            most("photo-share"),
            statuses(&on(0).into_iter().filter(|d| d.status != 200).collect::<Vec<_>>()),
            statuses(&on(1).into_iter().filter(|d| d.status != 200).collect::<Vec<_>>()),
        ));
        out.push_str(&format!("BLAME {name} sv={} ps={}\n", blame(0), blame(1)));
    }
    for r in &rests {
        out.push_str(&format!(
            "REST at_s={:.2} platform={} route={} kind={}\n",
            r.at, r.platform, r.route, r.kind
        ));
    }
    // Sources demoted, and whether each was one the scenario demotes.
    let expected = |d: &Demotion| -> Option<Span> {
        match (d.platform.as_str(), d.source.as_str()) {
            ("short-video", "page") if plan.changed.holds(d.from) => Some(plan.changed),
            ("photo-share", "loggedout") if plan.failing.holds(d.from) => Some(plan.failing),
            _ => None,
        }
    };
    let demoted = demotions(samples);
    let mut unexpected = Vec::new();
    let mut unexpected_outside_throttle = Vec::new();
    for d in &demoted {
        let phase = expected(d);
        let restored = match (phase, d.to) {
            (Some(span), Some(to)) => format!("{:.1}", (to - span.to).max(0.0)),
            (_, Some(to)) => format!("{:.1}", to - d.from),
            (_, None) => "never".to_owned(),
        };
        out.push_str(&format!(
            "DEMOTED {}/{} at_s={:.1} restored_at_s={} restored_after_phase_end_s={} expected={}\n",
            d.platform,
            d.source,
            d.from,
            d.to.map_or("never".to_owned(), |t| format!("{t:.1}")),
            if phase.is_some() {
                restored
            } else {
                "-".to_owned()
            },
            if phase.is_some() { "yes" } else { "no" },
        ));
        if phase.is_none() {
            let label = format!("{}/{}@{:.0}s", d.platform, d.source, d.from);
            if !throttle.holds(d.from) {
                unexpected_outside_throttle.push(label.clone());
            }
            unexpected.push(label);
        }
    }
    // The age-gated lookups: status, the party named, and any rest begun from its sending
    // until 1 s after its answer.
    let gated: Vec<&Done> = done.iter().filter(|d| d.gated).collect();
    let mut gated_bad = 0;
    let mut gated_rested = 0;
    let mut gated_rested_outside = 0;
    for d in &gated {
        let followed: Vec<String> = rests
            .iter()
            .filter(|r| r.at > d.sent && r.at <= d.answered + FOLLOWS_WITHIN)
            .map(|r| format!("{}/{}@{:.2}", r.platform, r.route, r.at))
            .collect();
        if d.status != 403 && d.status != 429 {
            gated_bad += 1;
        }
        if !followed.is_empty() {
            gated_rested += 1;
            if !throttle.holds(d.sent) {
                gated_rested_outside += 1;
            }
        }
        out.push_str(&format!(
            "GATED {} sent_s={:.1} took_s={:.2} status={} blame={} source={} rest_within_1s={}\n",
            d.name,
            d.sent,
            d.answered - d.sent,
            d.status,
            d.blame,
            d.source,
            if followed.is_empty() {
                "no".to_owned()
            } else {
                followed.join(",")
            }
        ));
    }
    // The summary the script checks.
    let ordinary = |keep: &dyn Fn(&Done) -> bool| -> Vec<&Done> {
        done.iter().filter(|d| !d.gated && keep(d)).collect()
    };
    let before = ordinary(&|d| d.sent < throttle.from);
    let after = ordinary(&|d| d.sent >= throttle.to);
    let fixed_outside = rests
        .iter()
        .filter(|r| r.kind == "fixed" && !throttle.holds(r.at))
        .count();
    // How long after its phase ended each demotion the scenario makes was restored (the
    // longest, when there were several), "never" when one was not by the end.
    let restored = |platform: &str, source: &str, span: Span| -> String {
        let theirs: Vec<&Demotion> = demoted
            .iter()
            .filter(|d| d.platform == platform && d.source == source && span.holds(d.from))
            .collect();
        if theirs.is_empty() {
            return "not_demoted".to_owned();
        }
        if theirs.iter().any(|d| d.to.is_none()) {
            return "never".to_owned();
        }
        let latest = theirs.iter().filter_map(|d| d.to).fold(span.to, f64::max);
        format!("{:.1}", latest - span.to)
    };
    // Whether the run leaves room to see a restoration: the first re-probe of the demotion
    // (once a minute from it) after the phase's end, before the throttle begins (or the run
    // ends).
    let last = samples.last().map_or(0.0, |s| s.at);
    let observable = |platform: &str, source: &str, span: Span| {
        let until = if throttle.from >= span.to {
            throttle.from
        } else {
            last
        };
        demoted
            .iter()
            .filter(|d| d.platform == platform && d.source == source && span.holds(d.from))
            .all(|d| {
                let rounds = ((span.to - d.from) / REPROBE_S).ceil().max(1.0);
                d.from + rounds * REPROBE_S + REPROBE_SLACK_S <= until
            })
    };
    // After the throttle: the share answered 200, and when each platform first answered 200.
    let recovered = |p: usize| {
        done.iter()
            .filter(|d| !d.gated && d.platform == p && d.sent >= throttle.to && d.status == 200)
            .map(|d| d.sent - throttle.to)
            .reduce(f64::min)
            .map_or("never".to_owned(), |t| format!("{t:.1}"))
    };
    let upstream = samples
        .last()
        .map(|s| {
            s.counts
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    out.push_str(&format!("UPSTREAM {upstream}\n"));
    let none = |v: &[String]| {
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.join(",")
        }
    };
    out.push_str(&format!(
        "SUMMARY ok_before_throttle={:.4} lookups_before_throttle={} ok_after_throttle={} lookups_after_throttle={} first_200_after_throttle_s=sv:{},ps:{} fixed_rests_outside_throttle={fixed_outside} unexpected_demotions_outside_throttle={} unexpected_demotions_in_throttle={} changed_restored_after_s={} changed_restore_observable={} failing_restored_after_s={} failing_restore_observable={} gated={} gated_not_403_429={gated_bad} gated_followed_by_rest={gated_rested} gated_followed_by_rest_outside_throttle={gated_rested_outside} reprobe_s={REPROBE_S:.0}",
        share(&before, |d| d.status == 200),
        before.len(),
        if after.is_empty() {
            "none".to_owned()
        } else {
            format!("{:.4}", share(&after, |d| d.status == 200))
        },
        after.len(),
        recovered(0),
        recovered(1),
        none(&unexpected_outside_throttle),
        none(
            &unexpected
                .iter()
                .filter(|u| !unexpected_outside_throttle.contains(u))
                .cloned()
                .collect::<Vec<_>>()
        ),
        restored("short-video", "page", plan.changed),
        observable("short-video", "page", plan.changed),
        restored("photo-share", "loggedout", plan.failing),
        observable("photo-share", "loggedout", plan.failing),
        gated.len(),
    ));
    out
}
