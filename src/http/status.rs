//! `GET /status`: the canary's last round per source, open like `/healthz` (no key, never
//! shed). JSON by default; a small HTML page of the same for `Accept: text/html`, with inline
//! CSS only: no script, no image, no external asset (its `Content-Security-Policy` forbids
//! them too), refreshing itself every interval (at most every minute) with a `<meta>` tag.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};

use crate::canary::Status;
use crate::canary::status::QueryIdStatus;
use crate::canary::status::SourceStatus;
use crate::platform::Platform;
use crate::platform::fetcher::Fetchers;
use crate::platform::standing::SourceStanding;
use crate::state::AppState;

/// What the page allows the browser to load: its own inline style, nothing else.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The canary's last verdict per platform and source.
#[utoipa::path(get, path = "/status", tag = "operations",
    responses((status = 200,
        description = "The canary's last round per source: its verdict (`ok`, `blocked`, `changed`, `missing`, `unreachable`; `null` before the first round), when, and why; and where lookups ask each configured source (`standings`: `preferred`, `refused`, `demoted` or `changed`, and why). No account is named unless `canary.public_names` is set. With `Accept: text/html`, the same as a small page.",
        content((Status = "application/json"), (String = "text/html")))))]
pub async fn status(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let mut status = state.canary().status(state.settings());
    status.standings = standings(state.lookups().fetchers());
    status.query_ids = query_ids(state.lookups().fetchers());
    for &platform in Platform::ALL {
        status
            .routes
            .extend(state.lookups().fetchers().of(platform).routes().await);
    }
    let mut response = if wants_html(&headers) {
        let mut response = Response::new(Body::from(page(&status, SystemTime::now())));
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        );
        response
    } else {
        Json(status).into_response()
    };
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::VARY, HeaderValue::from_static("accept"));
    response
}

/// Every configured source's standing, platform by platform.
fn standings(fetchers: &Fetchers) -> Vec<SourceStanding> {
    Platform::ALL
        .iter()
        .flat_map(|&p| {
            let fetcher = fetchers.of(p);
            p.sources()
                .iter()
                .filter(|s| fetcher.asks(s))
                .map(|s| fetcher.standing().report(s))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Every platform's query ids: each seed, and what was learned in its place.
fn query_ids(fetchers: &Fetchers) -> Vec<QueryIdStatus> {
    Platform::ALL
        .iter()
        .filter_map(|&p| fetchers.of(p).query_ids().map(|ids| (p, ids)))
        .flat_map(|(p, ids)| {
            let learned = ids.learned();
            ids.seeds()
                .iter()
                .map(|(query, seed)| {
                    let learned = learned.iter().find(|(q, _)| q == query).map(|(_, l)| l);
                    QueryIdStatus {
                        platform: p.as_str().to_owned(),
                        query: (*query).to_owned(),
                        seed: seed.clone(),
                        learned: learned.map(|l| l.id.clone()),
                        learned_at: learned.map(|l| l.at_unix_ms / 1000),
                        learned_from: learned.map(|l| l.from.clone()),
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Whether the caller asks for HTML (a browser): its `Accept` names `text/html`.
fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.to_ascii_lowercase().contains("text/html"))
}

/// The page of `status`, as of `now`.
pub fn page(status: &Status, now: SystemTime) -> String {
    let refresh = status.interval_seconds.clamp(5, 60);
    let mut out = String::with_capacity(4096);
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta http-equiv=\"refresh\" content=\"{refresh}\">\
         <title>profile-lookup: canary status</title><style>{STYLE}</style></head><body>\
         <h1>Canary status</h1>"
    );
    out.push_str("<p class=\"summary\">");
    if !status.enabled {
        out.push_str(
            "The canary is off: <code>[canary]</code> names no account, or \
             <code>interval_seconds</code> is 0.",
        );
    } else {
        let _ = write!(out, "A round every {} s. ", status.interval_seconds);
        match status.last_round {
            Some(round) => {
                let _ = write!(
                    out,
                    "Last round: <time>{}</time> ({}), {} ms.",
                    http_date(round.ended_at),
                    ago(round.ended_at, now),
                    round.duration_ms
                );
            }
            None => out.push_str("No round yet."),
        }
    }
    out.push_str("</p>");
    if !status.sources.is_empty() {
        // Accounts are named only with `canary.public_names`.
        let named = status.sources.iter().any(|s| s.account.is_some());
        out.push_str("<table><thead><tr><th>Platform</th><th>Source</th>");
        if named {
            out.push_str("<th>Account</th>");
        }
        out.push_str(
            "<th>Verdict</th><th>Checked</th><th>Last ok</th><th>In lookups</th>\
             <th>Reason</th></tr></thead><tbody>",
        );
        for source in &status.sources {
            row(&mut out, source, named, now);
        }
        out.push_str("</tbody></table>");
    }
    if !status.standings.is_empty() {
        out.push_str(
            "<h2>Sources in lookups</h2><table><thead><tr><th>Platform</th><th>Source</th>\
             <th>Standing</th><th>Why</th></tr></thead><tbody>",
        );
        for s in &status.standings {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"why\">{}</td></tr>",
                escape(&s.platform),
                escape(&s.source),
                escape(&s.standing),
                escape(&s.why)
            );
        }
        out.push_str("</tbody></table>");
    }
    if !status.routes.is_empty() {
        out.push_str(
            "<h2>Routes</h2><table><thead><tr><th>Platform</th><th>Route</th><th>Kind</th>\
             <th>Standing</th><th>Usable in</th></tr></thead><tbody>",
        );
        for r in &status.routes {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&r.platform),
                escape(&r.route),
                escape(&r.kind),
                escape(&r.standing),
                r.resting_seconds
                    .map(|s| format!("{s} s"))
                    .unwrap_or_default()
            );
        }
        out.push_str("</tbody></table>");
    }
    if !status.query_ids.is_empty() {
        out.push_str(
            "<h2>Query ids</h2><table><thead><tr><th>Platform</th><th>Query</th>\
             <th>Seed</th><th>Learned</th><th>When</th></tr></thead><tbody>",
        );
        for q in &status.query_ids {
            let when = q.learned_at.map(|at| ago(at, now)).unwrap_or_default();
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&q.platform),
                escape(&q.query),
                escape(&q.seed),
                escape(q.learned.as_deref().unwrap_or("-")),
                escape(&when)
            );
        }
        out.push_str("</tbody></table>");
    }
    out.push_str(
        "<p class=\"note\">A source is <b>changed</b> when its document was fetched but could \
         not be read: the platform moved it. Changed twice in a row, lookups ask it after the \
         platform's other source until it reads again. The same as JSON: <code>GET /status</code> \
         with <code>Accept: application/json</code>.</p></body></html>\n",
    );
    out
}

/// One source's row (with the account's cell when `named`).
fn row(out: &mut String, s: &SourceStatus, named: bool, now: SystemTime) {
    let verdict = s.verdict.map_or("pending", |v| v.label());
    let when = |at: Option<u64>| {
        at.map_or_else(
            || "never".to_owned(),
            |at| format!("<time title=\"{}\">{}</time>", http_date(at), ago(at, now)),
        )
    };
    let place = if s.demoted {
        format!("asked last ({} changed rounds)", s.changed_rounds)
    } else {
        "in its place".to_owned()
    };
    let _ = write!(
        out,
        "<tr><td>{}</td><td>{}</td>",
        escape(&s.platform),
        escape(&s.source)
    );
    if named {
        let _ = write!(
            out,
            "<td>{}</td>",
            escape(s.account.as_deref().unwrap_or(""))
        );
    }
    let _ = write!(
        out,
        "<td><span class=\"v {verdict}\">{verdict}</span></td>\
         <td>{}</td><td>{}</td><td>{}</td><td class=\"why\">{}</td></tr>",
        when(s.checked_at),
        when(s.last_ok),
        escape(&place),
        escape(s.reason.as_deref().unwrap_or("")),
    );
}

/// `at` (Unix seconds) as an HTTP date.
fn http_date(at: u64) -> String {
    httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(at))
}

/// How long before `now` the time `at` (Unix seconds) was, in words.
fn ago(at: u64, now: SystemTime) -> String {
    let now = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    match now.saturating_sub(at) {
        s if s < 120 => format!("{s} s ago"),
        s if s < 7200 => format!("{} min ago", s / 60),
        s => format!("{} h ago", s / 3600),
    }
}

/// `text` with the five characters HTML gives meaning to escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page's whole style.
const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:64rem;\
padding:0 1rem;color:#1f2328;background:#fff}h1{font-size:1.4rem;margin:0 0 .5rem}\
.summary{color:#444}table{border-collapse:collapse;width:100%;margin:1rem 0}\
th,td{text-align:left;padding:.45rem .6rem;border-bottom:1px solid #d8dee4;vertical-align:top;\
white-space:nowrap}
th{font-weight:600;background:#f6f8fa}.why{color:#57606a;font-size:.9em;white-space:normal;word-break:break-word}\
.v{display:inline-block;min-width:6.5em;text-align:center;border-radius:1em;padding:.1em .7em;\
font-weight:600;color:#fff}.ok{background:#1a7f37}.changed{background:#cf222e}\
.blocked{background:#bc4c00}.unreachable{background:#8250df}.missing{background:#6e7781}\
.pending{background:#afb8c1;color:#1f2328}.note{color:#57606a;font-size:.9em}\
code{background:#f6f8fa;padding:0 .25em;border-radius:3px}";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canary::Verdict;
    use crate::canary::status::LastRound;

    fn status() -> Status {
        Status {
            enabled: true,
            interval_seconds: 600,
            last_round: Some(LastRound {
                ended_at: 1_800_000_000,
                duration_ms: 1234,
            }),
            sources: vec![SourceStatus {
                platform: "short-video".into(),
                source: "page".into(),
                verdict: Some(Verdict::Changed),
                checked_at: Some(1_800_000_000),
                reason: Some("<script>alert(1)</script> \"quoted\"".into()),
                last_ok: None,
                changed_rounds: 2,
                demoted: true,
                account: None,
            }],
            standings: vec![SourceStanding {
                platform: "photo-share".into(),
                source: "json".into(),
                standing: "demoted".into(),
                why: "<refused>".into(),
                demoted_seconds: Some(5),
            }],
            query_ids: Vec::new(),
            routes: Vec::new(),
        }
    }

    #[test]
    fn the_page_has_no_script_and_escapes_every_text() {
        let now = UNIX_EPOCH + Duration::from_secs(1_800_000_030);
        let html = page(&status(), now);
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &quot;quoted&quot;"));
        assert!(html.contains("class=\"v changed\">changed<"));
        assert!(html.contains("asked last (2 changed rounds)"));
        assert!(html.contains("30 s ago"));
        assert!(html.contains("<td>demoted</td><td class=\"why\">&lt;refused&gt;</td>"));
        assert!(!html.contains("<th>Account</th>"), "no name unless public");
        let mut public = status();
        public.sources[0].account = Some("a&b".into());
        let html = page(&public, now);
        assert!(html.contains("<th>Account</th>") && html.contains("<td>a&amp;b</td>"));
        for asset in ["src=", "href=", "url(", "@import"] {
            assert!(!html.contains(asset), "{asset} in {html}");
        }
    }

    #[test]
    fn only_an_html_accept_gets_the_page() {
        let mut headers = HeaderMap::new();
        assert!(!wants_html(&headers));
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        assert!(!wants_html(&headers));
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/html,application/xhtml+xml,*/*;q=0.8"),
        );
        assert!(wants_html(&headers));
    }

    #[test]
    fn an_off_canary_says_so() {
        let off = Status {
            enabled: false,
            interval_seconds: 600,
            last_round: None,
            sources: Vec::new(),
            standings: Vec::new(),
            query_ids: Vec::new(),
            routes: Vec::new(),
        };
        let html = page(&off, SystemTime::now());
        assert!(html.contains("The canary is off") && !html.contains("<table"));
    }
}
