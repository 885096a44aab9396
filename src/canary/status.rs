//! What `GET /status` shows of the board: the last verdict of each source, when, and why,
//! with no account named unless `canary.public_names` is set, and no URL (a transport
//! error's text names the request's) in any reason: the endpoint is open.

use serde::Serialize;
use utoipa::ToSchema;

use super::board::Snapshot;
use super::verdict::Verdict;
use crate::config::CanaryConfig;
use crate::platform::Platform;
use crate::platform::standing::{RouteStanding, SourceStanding};

/// The canary's last round per source (`GET /status`).
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct Status {
    /// Whether rounds run (an interval and at least one account are configured).
    pub enabled: bool,
    /// Seconds between rounds (`canary.interval_seconds`).
    pub interval_seconds: u64,
    /// The last round (this replica's, or with Redis the fleet's), if there was one.
    pub last_round: Option<LastRound>,
    /// Every source the canary probes, in the order of the platforms and their plans.
    pub sources: Vec<SourceStatus>,
    /// Where lookups ask each configured source, by the canary and by the evidence of
    /// lookups and probes (filled in by the HTTP layer, which holds the fetchers).
    pub standings: Vec<SourceStanding>,
    /// The query ids each platform posts: the configured seed, and the one learned from the
    /// platform's pages that replaces it, with when and where it was learned (filled in by the
    /// HTTP layer).
    pub query_ids: Vec<QueryIdStatus>,
    /// Each route's standing: whether it rests and for how long (filled in by the HTTP layer).
    pub routes: Vec<RouteStanding>,
}

/// One query's id: its seed and the id learned from the platform, if one was.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct QueryIdStatus {
    /// The platform label.
    pub platform: String,
    /// The query's name (its `fb_api_req_friendly_name`).
    pub query: String,
    /// The configured id (`<section>.loggedout_doc_id`, `<section>.graphql_doc_id`).
    pub seed: String,
    /// The id in use when it is not the seed: learned from a page.
    pub learned: Option<String>,
    /// When it was learned (RFC 3339, UTC; kept as Unix seconds).
    #[serde(serialize_with = "crate::utc::serialize_rfc3339_opt")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub learned_at: Option<u64>,
    /// Where it was learned (`page`).
    pub learned_from: Option<String>,
}

/// When the last round ended and how long it took.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct LastRound {
    /// When it ended (RFC 3339, UTC; kept as Unix seconds).
    #[serde(serialize_with = "crate::utc::serialize_rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub ended_at: u64,
    /// How long it took (milliseconds).
    pub duration_ms: u64,
}

/// One source's last verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct SourceStatus {
    /// The platform's label (`short-video`).
    pub platform: String,
    /// The source (`page`, `embed`, `json`).
    pub source: String,
    /// The last verdict; `null` before the first round that gave one.
    pub verdict: Option<Verdict>,
    /// When the round that gave it ended (RFC 3339, UTC; kept as Unix seconds).
    #[serde(serialize_with = "crate::utc::serialize_rfc3339_opt")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub checked_at: Option<u64>,
    /// Why (a block's signal, what could not be read, …); `null` for `ok`.
    pub reason: Option<String>,
    /// When the source last read `ok` (RFC 3339, UTC; kept as Unix seconds).
    #[serde(serialize_with = "crate::utc::serialize_rfc3339_opt")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_ok: Option<u64>,
    /// Rounds in a row the source was `changed`.
    pub changed_rounds: u32,
    /// Whether lookups ask this source after the platform's others (`changed` twice in a row).
    pub demoted: bool,
    /// The account whose probe decided the verdict: only with `canary.public_names = true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
}

/// `snapshot` as `/status` shows it under `config`.
pub fn status(snapshot: &Snapshot, config: &CanaryConfig) -> Status {
    let sources = snapshot
        .sources
        .iter()
        .map(|s| {
            let reason = s.reason.as_ref().map(|why| {
                let why = without_urls(why);
                if config.public_names {
                    why
                } else {
                    unnamed(&why, &s.platform, config)
                }
            });
            SourceStatus {
                platform: s.platform.clone(),
                source: s.source.clone(),
                verdict: s.verdict,
                checked_at: s.checked_at,
                reason,
                last_ok: s.last_ok,
                changed_rounds: s.changed_rounds,
                demoted: s.demoted(),
                account: s.account.clone().filter(|_| config.public_names),
            }
        })
        .collect();
    Status {
        enabled: config.is_on(),
        interval_seconds: config.interval_seconds,
        last_round: snapshot.round.map(|r| LastRound {
            ended_at: r.ended_at_ms / 1000,
            duration_ms: r.took_ms,
        }),
        sources,
        standings: Vec::new(),
        query_ids: Vec::new(),
        routes: Vec::new(),
    }
}

/// `why` with every URL (`scheme://…` up to a space, a quote or a parenthesis) replaced by
/// `<url>`.
fn without_urls(why: &str) -> String {
    let mut out = String::with_capacity(why.len());
    let mut rest = why;
    while let Some(at) = rest.find("://") {
        let start = rest[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "+.-".contains(c)))
            .map_or(0, |i| i + 1);
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| c.is_whitespace() || "()\"'<>".contains(c))
            .unwrap_or(tail.len());
        out.push_str(&rest[..start]);
        out.push_str("<url>");
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// `why` with every account of `platform` (any case) replaced by `…`.
fn unnamed(why: &str, platform: &str, config: &CanaryConfig) -> String {
    let Some(platform) = Platform::from_label(platform) else {
        return why.to_owned();
    };
    let mut out = why.to_owned();
    for name in config.accounts(platform) {
        let name = name.to_ascii_lowercase();
        if name.is_empty() {
            continue;
        }
        loop {
            let lower = out.to_ascii_lowercase();
            let Some(at) = lower.find(&name) else { break };
            out.replace_range(at..at + name.len(), "…");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canary::board::SourceState;
    use crate::config::canary::AccountList;

    fn snapshot() -> Snapshot {
        Snapshot {
            round: None,
            sources: vec![SourceState {
                platform: "short-video".into(),
                source: "page".into(),
                verdict: Some(Verdict::Changed),
                reason: Some(
                    "the state is about another user than the requested \"sunny.kitchen.lab\""
                        .into(),
                ),
                account: Some("sunny.kitchen.lab".into()),
                checked_at: Some(10),
                last_ok: None,
                changed_rounds: 2,
            }],
        }
    }

    fn config(public_names: bool) -> CanaryConfig {
        let mut c = CanaryConfig {
            public_names,
            ..CanaryConfig::default()
        };
        c.accounts.insert(
            "short_video".into(),
            AccountList::Names(vec!["Sunny.Kitchen.Lab".into()]),
        );
        c
    }

    #[test]
    fn urls_never_reach_the_open_page() {
        let why = "error sending request for url (http://user:pw@127.0.0.1:9/@a.b?x=1): refused";
        assert_eq!(
            without_urls(why),
            "error sending request for url (<url>): refused"
        );
        assert_eq!(
            without_urls("socks5h://h:1 and https://x/y"),
            "<url> and <url>"
        );
        assert_eq!(without_urls("no url here"), "no url here");
    }

    #[test]
    fn names_are_shown_only_when_public() {
        let hidden = status(&snapshot(), &config(false));
        let text = serde_json::to_string(&hidden).unwrap();
        assert!(!text.contains("sunny"), "{text}");
        assert!(hidden.sources[0].reason.as_ref().unwrap().contains('…'));
        assert!(hidden.sources[0].demoted && hidden.enabled);
        let shown = status(&snapshot(), &config(true));
        assert_eq!(
            shown.sources[0].account.as_deref(),
            Some("sunny.kitchen.lab")
        );
        assert!(shown.sources[0].reason.as_ref().unwrap().contains("sunny"));
    }
}
