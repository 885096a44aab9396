//! One canary round: every account of each platform through each source of the platform's
//! plan, separately: a fetch of a one-document plan in [`Mode::Probe`]. Within a platform the
//! probes go one at a time (source by source), so a round adds at most one request at a time
//! to the platform's traffic; the platforms run at once, each behind its own gate.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use super::finding::Finding;
use super::verdict::{Judged, Verdict, judge};
use crate::config::Settings;
use crate::platform::fetcher::{Fetch, Fetchers, Mode, Plan};
use crate::platform::site::Document;
use crate::platform::{Platform, Site, SiteJob, with_site};
use crate::telemetry::trace_context;
use crate::username::Username;

/// What one probe of one account on one source came to, with its evidence.
#[derive(Clone, Debug)]
pub struct Row {
    /// The platform.
    pub platform: Platform,
    /// The source, as the registry names it.
    pub source: &'static str,
    /// The canary account.
    pub account: String,
    /// Its verdict, or why it has none.
    pub judged: Judged,
    /// The HTTP status of the last answer, if one came.
    pub status: Option<u16>,
    /// The length of the last answer's body.
    pub bytes: u64,
    /// How long the probe took.
    pub elapsed: Duration,
}

/// A round's rows, in the order they ran (per platform, source by source).
#[derive(Clone, Debug, Default)]
pub struct Round {
    /// Every probe of the round.
    pub rows: Vec<Row>,
    /// How long the round took.
    pub took: Duration,
}

/// One source's result in a round: the most severe verdict of its accounts (`None` when every
/// probe was skipped), with that account and its reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceResult<'r> {
    /// The platform.
    pub platform: Platform,
    /// The source.
    pub source: &'static str,
    /// The verdict, if any probe gave one.
    pub verdict: Option<Verdict>,
    /// The reason of the account that decided it.
    pub reason: Option<&'r str>,
    /// The account that decided it.
    pub account: Option<&'r str>,
}

impl Round {
    /// Each source's result, in the order the sources were first probed.
    pub fn by_source(&self) -> Vec<SourceResult<'_>> {
        let mut out: Vec<SourceResult<'_>> = Vec::new();
        for row in &self.rows {
            let at = match out
                .iter()
                .position(|r| r.platform == row.platform && r.source == row.source)
            {
                Some(at) => at,
                None => {
                    out.push(SourceResult {
                        platform: row.platform,
                        source: row.source,
                        verdict: None,
                        reason: None,
                        account: None,
                    });
                    out.len() - 1
                }
            };
            let result = &mut out[at];
            let Some(verdict) = row.judged.verdict() else {
                continue;
            };
            let worse = result.verdict.is_none_or(|now| now.worse(verdict) != now);
            if worse {
                result.verdict = Some(verdict);
                result.reason = row.judged.reason();
                result.account = Some(&row.account);
            }
        }
        out
    }
}

/// The accounts a round asks, by platform: each platform's list from `[canary]` (only
/// `only`'s, when given), checked.
pub fn accounts(settings: &Settings, only: Option<Platform>) -> Vec<(Platform, Vec<Username>)> {
    Platform::ALL
        .iter()
        .copied()
        .filter(|p| only.is_none_or(|only| only == *p))
        .map(|p| (p, settings.canary.usernames(p)))
        .filter(|(_, names)| !names.is_empty())
        .collect()
}

/// How long a round and each of its probes may take.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The longest one probe may take (a caller's deadline, `server.request_timeout_ms`).
    pub per_probe: Duration,
    /// When the round must be over (the lease of the fleet's round ends): probes not begun by
    /// then are skipped, one running then is cut.
    pub round_ends: Instant,
}

/// A probe about to start, for a progress line.
#[derive(Clone, Copy, Debug)]
pub struct Step<'a> {
    /// Its position in the round, from 1.
    pub at: usize,
    /// How many probes the round has.
    pub of: usize,
    /// The platform.
    pub platform: Platform,
    /// The source.
    pub source: &'a str,
    /// The account.
    pub account: &'a str,
}

/// Something told of each probe as it starts.
pub type OnStep<'a> = &'a (dyn Fn(Step<'_>) + Send + Sync);

/// Runs one round over `accounts` through `fetchers` (each platform's plan, `settings`'
/// `<section>.sources`), within `limits`, telling `on_step` of each probe as it starts.
pub async fn run(
    settings: &Settings,
    fetchers: &Fetchers,
    accounts: &[(Platform, Vec<Username>)],
    limits: Limits,
    on_step: OnStep<'_>,
) -> Round {
    let started = Instant::now();
    let work: Vec<(Platform, Vec<(&'static str, &Username)>)> = accounts
        .iter()
        .map(|(platform, names)| {
            let plan = &settings.platform(*platform).sources;
            let pairs = plan
                .iter()
                .filter_map(|s| platform.source(s))
                .flat_map(|source| names.iter().map(move |name| (source, name)))
                .collect();
            (*platform, pairs)
        })
        .collect();
    let total = work.iter().map(|(_, pairs)| pairs.len()).sum();
    let counter = AtomicUsize::new(0);
    let jobs = work.into_iter().map(|(platform, pairs)| {
        let fetcher = fetchers.of(platform);
        let counter = &counter;
        async move {
            let mut rows = Vec::with_capacity(pairs.len());
            for (source, account) in pairs {
                if !fetcher.asks(source) {
                    continue;
                }
                on_step(Step {
                    at: counter.fetch_add(1, Ordering::Relaxed) + 1,
                    of: total,
                    platform,
                    source,
                    account: account.as_str(),
                });
                rows.push(probe_row(&**fetcher, platform, source, account, limits).await);
            }
            rows
        }
    });
    let rows = futures_util::future::join_all(jobs)
        .await
        .into_iter()
        .flatten()
        .collect();
    Round {
        rows,
        took: started.elapsed(),
    }
}

/// One probe of `source` about `account`, within its limits, as a row.
async fn probe_row(
    fetcher: &dyn Fetch,
    platform: Platform,
    source: &'static str,
    account: &Username,
    limits: Limits,
) -> Row {
    let started = Instant::now();
    let row = |judged, status, bytes| Row {
        platform,
        source,
        account: account.as_str().to_owned(),
        judged,
        status,
        bytes,
        elapsed: started.elapsed(),
    };
    if started >= limits.round_ends {
        return row(Judged::Skipped("round_deadline"), None, 0);
    }
    let own_deadline = started + limits.per_probe;
    let until = own_deadline.min(limits.round_ends);
    // A trace of its own (never naming the account), not part of whatever ran the round.
    let span = trace_context::root_span(|| {
        tracing::info_span!(
            target: crate::telemetry::traces::TARGET,
            parent: None,
            "canary_probe",
            profile_lookup.platform = platform.as_str(),
            profile_lookup.source = source,
        )
    });
    let probe = fetcher.fetch(account, Plan::One(source), Mode::Probe);
    let probe = trace_context::carry(true, tracing::Instrument::instrument(probe, span));
    match tokio::time::timeout_at(until, probe).await {
        Ok(fetched) => {
            let finding = Finding::of(&fetched);
            let judged = judge(account, &finding, gives_posts(platform, source));
            row(judged, fetched.status, fetched.bytes)
        }
        Err(_) if until < own_deadline => row(Judged::Skipped("round_deadline"), None, 0),
        Err(_) => {
            let why = format!("no answer within {} ms", limits.per_probe.as_millis());
            row(Judged::Verdict(Verdict::Unreachable, Some(why)), None, 0)
        }
    }
}

/// Whether `platform`'s source `source` gives a public account's post count (see
/// [`Document::gives_posts`]).
fn gives_posts(platform: Platform, source: &str) -> bool {
    struct GivesPosts<'a>(&'a str);
    impl SiteJob for GivesPosts<'_> {
        type Output = bool;
        fn run<S: Site>(self) -> bool {
            S::DOCUMENTS
                .iter()
                .find(|d| d.label() == self.0)
                .is_none_or(|d| d.gives_posts())
        }
    }
    with_site(platform, GivesPosts(source))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(source: &'static str, account: &str, judged: Judged) -> Row {
        Row {
            platform: Platform::ShortVideo,
            source,
            account: account.into(),
            judged,
            status: Some(200),
            bytes: 1,
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn a_source_takes_its_worst_accounts_verdict_and_skips_say_nothing() {
        let ok = || Judged::Verdict(Verdict::Ok, None);
        let round = Round {
            rows: vec![
                row("page", "a.a", ok()),
                row(
                    "page",
                    "b.b",
                    Judged::Verdict(Verdict::Changed, Some("moved".into())),
                ),
                row(
                    "page",
                    "c.c",
                    Judged::Verdict(Verdict::Blocked, Some("http_429".into())),
                ),
                row("embed", "a.a", ok()),
                row("embed", "q.q", Judged::Skipped("embed_private_or_missing")),
                row("json", "a.a", Judged::Skipped("overloaded")),
            ],
            took: Duration::ZERO,
        };
        let by = round.by_source();
        assert_eq!(by.len(), 3);
        assert_eq!(
            (by[0].source, by[0].verdict, by[0].reason, by[0].account),
            ("page", Some(Verdict::Changed), Some("moved"), Some("b.b"))
        );
        assert_eq!((by[1].source, by[1].verdict), ("embed", Some(Verdict::Ok)));
        assert_eq!((by[2].source, by[2].verdict), ("json", None));
    }
}
