//! `canary [--config FILE] [--platform P] [--json]`: one canary round now, with the sources
//! the service would build from the same settings (the same proxies, browser profiles, gate
//! and, with `[redis]`, the fleet's outbound budget; the fleet's breaker is read, never
//! written, and no proxy is rested: a probe is not a lookup), and the same probe code.
//!
//! It prints one row per probe (platform, source, account, verdict, HTTP status, bytes, ms,
//! reason) and exits 0 when every source is `ok`, 1 when any is `changed`, 2 otherwise (only
//! blocks, unreachable or missing sources, or sources whose every probe was skipped), 3 when
//! the settings cannot be used. On a terminal a progress line runs on standard error. It does
//! not publish its verdicts to the fleet, and touches no cache or quota.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use serde::Serialize;

use super::runtime;
use crate::canary::Verdict;
use crate::canary::round::{self, Limits, Round, Step};
use crate::config::{Settings, UpstreamClient, ms};
use crate::fleet::Fleet;
use crate::platform::Platform;
use crate::platform::fetcher::Fetchers;

/// What to say when no account is configured for `platform` (or any): where the lists go, in
/// the file and in the environment, for every registered platform.
fn no_accounts(platform: Option<Platform>) -> String {
    let which = platform.map_or("any platform".to_owned(), |p| p.to_string());
    let lists: Vec<String> = Platform::ALL
        .iter()
        .map(|p| format!("{} = [\"name\"]", p.section()))
        .collect();
    let first = Platform::ALL.first().map_or("", |p| p.section());
    format!(
        "no canary account is configured for {which}: list long-lived public accounts in \
         [canary] ({}) or in PROFILE_LOOKUP__CANARY__{}=name,…",
        lists.join(", "),
        first.to_ascii_uppercase()
    )
}

/// The exit code when the settings cannot be used (2 is a verdict here).
const SETTINGS_PROBLEM: u8 = 3;
/// The longest a whole on-demand round may take.
const ROUND_LIMIT: Duration = Duration::from_secs(3600);

/// Runs one round of the configured accounts (of `platform` only, when given) and reports it.
pub fn canary(config: Option<&Path>, platform: Option<Platform>, json: bool) -> ExitCode {
    let settings = match Settings::load(config) {
        Ok(settings) => settings,
        Err(err) => return settings_problem(&err.to_string()),
    };
    if settings.upstream.client == UpstreamClient::Browser && !cfg!(feature = "browser") {
        return settings_problem(
            "upstream.client = \"browser\" needs a build with the browser-grade client: \
             cargo build --release --features browser",
        );
    }
    let accounts = round::accounts(&settings, platform);
    if accounts.is_empty() {
        return settings_problem(&no_accounts(platform));
    }
    runtime().block_on(async move {
        let fleet = match Fleet::new(&settings.redis) {
            Ok(fleet) => fleet,
            Err(err) => return settings_problem(&err.to_string()),
        };
        let fetchers = match Fetchers::new(&settings, &fleet) {
            Ok(fetchers) => fetchers,
            Err(err) => return settings_problem(&err.to_string()),
        };
        let progress = Progress(std::io::stderr().is_terminal());
        let limits = Limits {
            per_probe: ms(settings.server.request_timeout_ms),
            round_ends: tokio::time::Instant::now() + ROUND_LIMIT,
        };
        let on_step = |step: Step<'_>| progress.show(step);
        let round = round::run(&settings, &fetchers, &accounts, limits, &on_step).await;
        progress.clear();
        let code = exit_code(&round);
        let text = if json {
            json_report(&round, code)
        } else {
            table(&round)
        };
        // Written with `writeln!` so a closed pipe (`| head`) is an exit, not a panic.
        let _ = writeln!(std::io::stdout().lock(), "{text}");
        ExitCode::from(code)
    })
}

fn settings_problem(why: &str) -> ExitCode {
    eprintln!("profile-lookup canary: {why}");
    ExitCode::from(SETTINGS_PROBLEM)
}

/// 0 when every source is `ok`, 1 when any is `changed`, 2 otherwise.
pub fn exit_code(round: &Round) -> u8 {
    let verdicts: Vec<Option<Verdict>> = round.by_source().iter().map(|s| s.verdict).collect();
    if verdicts.contains(&Some(Verdict::Changed)) {
        1
    } else if !verdicts.is_empty() && verdicts.iter().all(|v| *v == Some(Verdict::Ok)) {
        0
    } else {
        2
    }
}

/// The progress line on standard error, when it is a terminal.
struct Progress(bool);

impl Progress {
    fn show(&self, step: Step<'_>) {
        if self.0 {
            let mut err = std::io::stderr().lock();
            let _ = write!(
                err,
                "\r\x1b[2K[{}/{}] {} {} @{}…",
                step.at, step.of, step.platform, step.source, step.account
            );
            let _ = err.flush();
        }
    }

    fn clear(&self) {
        if self.0 {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    }
}

/// The rows as an aligned table, then a line per source.
pub fn table(round: &Round) -> String {
    let header = [
        "PLATFORM", "SOURCE", "ACCOUNT", "VERDICT", "STATUS", "BYTES", "MS", "REASON",
    ];
    let mut rows: Vec<[String; 8]> = vec![header.map(str::to_owned)];
    for row in &round.rows {
        rows.push([
            row.platform.to_string(),
            row.source.to_owned(),
            row.account.clone(),
            row.judged.label().to_owned(),
            row.status.map_or_else(|| "-".to_owned(), |s| s.to_string()),
            row.bytes.to_string(),
            row.elapsed.as_millis().to_string(),
            one_line(row.judged.reason().unwrap_or("")),
        ]);
    }
    let mut widths = [0usize; 8];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (at, cell) in row.iter().enumerate() {
            if at + 1 == row.len() {
                line.push_str(cell);
            } else {
                let pad = widths[at] - cell.chars().count();
                line.push_str(cell);
                line.push_str(&" ".repeat(pad + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let sources = round.by_source();
    let summary: Vec<String> = sources
        .iter()
        .map(|s| {
            let verdict = s
                .verdict
                .map_or("no verdict (every probe skipped)", Verdict::label);
            format!("{} {}: {verdict}", s.platform, s.source)
        })
        .collect();
    out.push_str(&summary.join("; "));
    out
}

/// A reason on one line (the table is one line per probe).
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[derive(Serialize)]
struct JsonReport<'a> {
    probes: Vec<JsonProbe<'a>>,
    sources: Vec<JsonSource<'a>>,
    exit: u8,
}

#[derive(Serialize)]
struct JsonProbe<'a> {
    platform: &'static str,
    source: &'a str,
    account: &'a str,
    verdict: &'static str,
    status: Option<u16>,
    bytes: u64,
    ms: u64,
    reason: Option<&'a str>,
}

#[derive(Serialize)]
struct JsonSource<'a> {
    platform: &'static str,
    source: &'a str,
    verdict: Option<Verdict>,
    reason: Option<&'a str>,
}

/// The round as one JSON document, for scripts.
pub fn json_report(round: &Round, exit: u8) -> String {
    let report = JsonReport {
        probes: round
            .rows
            .iter()
            .map(|row| JsonProbe {
                platform: row.platform.as_str(),
                source: row.source,
                account: &row.account,
                verdict: row.judged.label(),
                status: row.status,
                bytes: row.bytes,
                ms: u64::try_from(row.elapsed.as_millis()).unwrap_or(u64::MAX),
                reason: row.judged.reason(),
            })
            .collect(),
        sources: round
            .by_source()
            .into_iter()
            .map(|s| JsonSource {
                platform: s.platform.as_str(),
                source: s.source,
                verdict: s.verdict,
                reason: s.reason,
            })
            .collect(),
        exit,
    };
    serde_json::to_string_pretty(&report).unwrap_or_else(|_| "{}".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canary::round::Row;
    use crate::canary::verdict::Judged;

    #[test]
    fn with_no_account_it_says_where_every_platforms_list_goes() {
        assert_eq!(
            no_accounts(None),
            "no canary account is configured for any platform: list long-lived public accounts \
             in [canary] (short_video = [\"name\"], photo_share = [\"name\"]) or in \
             PROFILE_LOOKUP__CANARY__SHORT_VIDEO=name,…"
        );
        let one = no_accounts(Some(Platform::PhotoShare));
        assert!(
            one.starts_with("no canary account is configured for photo-share: "),
            "{one}"
        );
    }

    fn round(verdicts: &[(&'static str, Judged)]) -> Round {
        Round {
            rows: verdicts
                .iter()
                .map(|(source, judged)| Row {
                    platform: Platform::ShortVideo,
                    source,
                    account: "sunny.kitchen.lab".into(),
                    judged: judged.clone(),
                    status: Some(200),
                    bytes: 1234,
                    elapsed: Duration::from_millis(56),
                })
                .collect(),
            took: Duration::ZERO,
        }
    }

    fn v(verdict: Verdict) -> Judged {
        Judged::Verdict(verdict, None)
    }

    #[test]
    fn exit_codes_follow_the_worst_source() {
        assert_eq!(
            exit_code(&round(&[
                ("page", v(Verdict::Ok)),
                ("embed", v(Verdict::Ok))
            ])),
            0
        );
        let changed = round(&[
            ("page", v(Verdict::Changed)),
            ("embed", v(Verdict::Blocked)),
        ]);
        assert_eq!(exit_code(&changed), 1);
        let blocked = round(&[("page", v(Verdict::Ok)), ("embed", v(Verdict::Blocked))]);
        assert_eq!(exit_code(&blocked), 2);
        let skipped = round(&[
            ("page", v(Verdict::Ok)),
            ("embed", Judged::Skipped("overloaded")),
        ]);
        assert_eq!(exit_code(&skipped), 2);
        assert_eq!(exit_code(&round(&[])), 2);
    }

    #[test]
    fn the_table_has_a_row_per_probe_and_a_line_per_source() {
        let text = table(&round(&[
            (
                "page",
                Judged::Verdict(Verdict::Changed, Some("no\nstate".into())),
            ),
            ("embed", v(Verdict::Ok)),
        ]));
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("PLATFORM") && lines[0].ends_with("REASON"));
        assert!(lines[1].contains("changed") && lines[1].ends_with("no state"));
        assert!(lines[2].contains("200") && lines[2].contains("1234") && lines[2].contains("56"));
        assert_eq!(lines[3], "short-video page: changed; short-video embed: ok");
        let json: serde_json::Value =
            serde_json::from_str(&json_report(&round(&[("page", v(Verdict::Ok))]), 0)).unwrap();
        assert_eq!(json["probes"][0]["verdict"], "ok");
        assert_eq!(json["sources"][0]["verdict"], "ok");
        assert_eq!(json["exit"], 0);
    }
}
