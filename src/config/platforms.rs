//! A platform's section (`[<section>]`, one per registered platform): where
//! the platform is, how hard we may knock, through which proxies and asking which sources; and
//! the table that holds every platform's section.
//!
//! Nothing here names a platform: the sections are found by [`Platform::section`], their
//! defaults are in `config/default.toml`, and every check names the key by its section.

use serde::{Deserialize, Serialize};
use url::Url;

use super::limits::{self, HOUR_MS, n, range};
use super::words::{Words, deserialize_words};
use super::{proxies, secret_list};
use crate::registry::Platform;

/// A platform's section: where the platform is and how hard we may knock.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlatformConfig {
    /// The platform's base URL (scheme and host, optionally a port).
    pub base_url: Url,
    /// Outbound requests per second to the platform, sustained.
    pub requests_per_second: u32,
    /// Outbound requests allowed at once above the sustained rate.
    pub burst: u32,
    /// Outbound requests in flight to the platform at once.
    pub max_concurrency: usize,
    /// How long a lookup may wait for outbound budget before it is shed with 503.
    pub max_queue_ms: u64,
    /// This platform's own proxies; when non-empty they replace `upstream.proxies` for it.
    /// Read like a secret list: errors name a position, never a value (URLs hold passwords).
    #[serde(deserialize_with = "secret_list::proxies")]
    pub proxies: Vec<String>,
    /// The sources a lookup asks, in order (names from the platform's registry line); one
    /// left out is never asked.
    pub sources: Vec<String>,
    /// Whether page requests (navigations) carry 2 to 8 random extra headers, as browsers'
    /// extensions add: a request's header fingerprint then differs every time. Never on
    /// requests for JSON.
    pub junk_headers: bool,
    /// The persisted-query id the `graphql` source posts (the profile query's `doc_id`), on a
    /// platform that has that source; the platform rotates it every few months.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graphql_doc_id: Option<String>,
    /// The Relay provider variables the `graphql` source's query requires since mid-2026, each
    /// sent as `false` beside its own variables (`__relay_internal__pv__…relayprovider`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graphql_provider_variables: Option<Vec<String>>,
    /// The seed `doc_id` of the logged-out profile query by username (the `loggedout`
    /// source); an id learned from the platform's pages replaces it until it stops answering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loggedout_doc_id: Option<String>,
    /// Where a public profile's post count comes from when the source that read it gave none
    /// (no guest form carries it since 2026-09): `"embed"`, the profile embed page, one more
    /// request; `"skip"`, none (the answer says the count was withheld).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_count: Option<PostCount>,
    /// How many times the embed page is asked for the post count (it answers 500 about one
    /// fetch in four), each on a fresh session where the route has sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed_attempts: Option<u32>,
    /// How often, at most, the fleet looks for a query's new id after the query answered
    /// "changed" (seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rediscover_seconds: Option<u64>,
}

/// `<section>.post_count`: where a public profile's missing post count comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PostCount {
    /// Ask the profile embed page (one more upstream request per lookup that needs it).
    #[default]
    Embed,
    /// Ask nothing more: the count stays `null`, named in `Profile-Withheld`.
    Skip,
}

impl Words for PostCount {
    const WHAT: &'static str = "a post count source";
    const ALL: &'static [(&'static str, Self)] =
        &[("embed", PostCount::Embed), ("skip", PostCount::Skip)];
}

deserialize_words!(PostCount);

/// The source the guest queries' keys belong with (the logged-out profile query by name):
/// a platform without it has no query ids to seed, no embed to count posts from.
const LOGGEDOUT: &str = "loggedout";

/// The longest list of Relay provider variables accepted, and the longest name.
const MAX_PROVIDER_VARIABLES: usize = 32;
const MAX_PROVIDER_VARIABLE_LEN: usize = 128;

/// The longest `graphql_doc_id` accepted (real ones are 15 to 17 digits).
const MAX_DOC_ID_LEN: usize = 32;

/// The source that posts `graphql_doc_id`.
const GRAPHQL: &str = "graphql";

impl PlatformConfig {
    /// The section of `platform` makes sense: its values in range, an http(s) base URL with a
    /// host, a budget of at least one request, its proxies and its sources.
    pub fn check(&self, platform: Platform) -> Result<(), String> {
        let name = platform.section();
        limits::check(&[
            range(
                format!("{name}.max_queue_ms"),
                self.max_queue_ms,
                0,
                HOUR_MS,
                "1 hour",
            ),
            range(
                format!("{name}.max_concurrency"),
                n(self.max_concurrency),
                1,
                100_000,
                "100000",
            ),
        ])?;
        let url = &self.base_url;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(format!(
                "{name}.base_url must be an http(s) URL with a host"
            ));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(format!("{name}.base_url must not have a query or fragment"));
        }
        if self.requests_per_second == 0 || self.burst == 0 || self.max_concurrency == 0 {
            return Err(format!(
                "{name}.requests_per_second, burst and max_concurrency must be at least 1"
            ));
        }
        proxies::check_proxies(&format!("{name}.proxies"), &self.proxies)?;
        check_sources(platform, &self.sources)?;
        self.check_doc_id(platform)?;
        self.check_guest_queries(platform)
    }

    /// The guest queries' keys (`loggedout_doc_id`, `graphql_provider_variables`,
    /// `post_count`, `embed_attempts`, `rediscover_seconds`): only on a platform with a
    /// `loggedout` source, each in range.
    fn check_guest_queries(&self, platform: Platform) -> Result<(), String> {
        let section = platform.section();
        let set: Vec<&str> = [
            ("loggedout_doc_id", self.loggedout_doc_id.is_some()),
            (
                "graphql_provider_variables",
                self.graphql_provider_variables.is_some(),
            ),
            ("post_count", self.post_count.is_some()),
            ("embed_attempts", self.embed_attempts.is_some()),
            ("rediscover_seconds", self.rediscover_seconds.is_some()),
        ]
        .into_iter()
        .filter_map(|(key, is_set)| is_set.then_some(key))
        .collect();
        if platform.source(LOGGEDOUT).is_none() {
            return match set.first() {
                Some(key) => Err(format!(
                    "{section}.{key} is set but {platform} has no {LOGGEDOUT} source"
                )),
                None => Ok(()),
            };
        }
        if let Some(id) = &self.loggedout_doc_id {
            check_doc_id_value(&format!("{section}.loggedout_doc_id"), id, "logged-out")?;
        }
        if let Some(names) = &self.graphql_provider_variables {
            let key = format!("{section}.graphql_provider_variables");
            if names.len() > MAX_PROVIDER_VARIABLES {
                return Err(format!(
                    "{key} lists {} names: at most {MAX_PROVIDER_VARIABLES}",
                    names.len()
                ));
            }
            for (at, name) in names.iter().enumerate() {
                let fine = !name.is_empty()
                    && name.len() <= MAX_PROVIDER_VARIABLE_LEN
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                if !fine {
                    return Err(format!(
                        "{key}[{at}] {name:?} is not a Relay variable name: 1 to \
                         {MAX_PROVIDER_VARIABLE_LEN} ASCII letters, digits and `_`"
                    ));
                }
            }
        }
        limits::check(&[
            range(
                format!("{section}.embed_attempts"),
                u64::from(self.embed_attempts.unwrap_or(1)),
                1,
                10,
                "10",
            ),
            range(
                format!("{section}.rediscover_seconds"),
                self.rediscover_seconds.unwrap_or(60),
                60,
                86_400,
                "86400 (1 day)",
            ),
        ])
    }

    /// `<section>.graphql_doc_id`: only on a platform with a `graphql` source, digits only,
    /// and set whenever `sources` lists that source.
    fn check_doc_id(&self, platform: Platform) -> Result<(), String> {
        let key = format!("{}.graphql_doc_id", platform.section());
        match &self.graphql_doc_id {
            Some(_) if platform.source(GRAPHQL).is_none() => {
                Err(format!("{key} is set but {platform} has no graphql source"))
            }
            Some(id) => check_doc_id_value(&key, id, "profile"),
            None if self.sources.iter().any(|s| s == GRAPHQL) => Err(format!(
                "{}.sources lists \"graphql\" but {key} is not set",
                platform.section()
            )),
            _ => Ok(()),
        }
    }
}

/// A query's `doc_id` at `key`: 1 to [`MAX_DOC_ID_LEN`] digits.
fn check_doc_id_value(key: &str, id: &str, query: &str) -> Result<(), String> {
    if id.is_empty() || id.len() > MAX_DOC_ID_LEN || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{key} must be the {query} query's doc_id: 1 to {MAX_DOC_ID_LEN} digits"
        ));
    }
    Ok(())
}

/// `<section>.sources`: at least one, each a source of the platform, none twice, and a source
/// asked by the account id ([`Platform::sources_by_id`]) only after one asked by name: the id
/// it asks by is learned from a source asked by name, so alone it never has one (every lookup
/// failed without a request), and listed first it is asked before the source that teaches it.
fn check_sources(platform: Platform, sources: &[String]) -> Result<(), String> {
    let key = format!("{}.sources", platform.section());
    let known = platform.sources().join("\", \"");
    if sources.is_empty() {
        return Err(format!(
            "{key} is empty: list at least one of [\"{known}\"]"
        ));
    }
    for (at, source) in sources.iter().enumerate() {
        if platform.source(source).is_none() {
            return Err(format!(
                "{key}[{at}] {source:?} is not a source of {platform}: use [\"{known}\"]"
            ));
        }
        if sources[..at].contains(source) {
            return Err(format!("{key}[{at}] {source:?} is listed twice"));
        }
        if platform.source_by_id(source) && sources[..at].iter().all(|s| platform.source_by_id(s)) {
            let by_name: Vec<&str> = platform
                .sources()
                .iter()
                .copied()
                .filter(|s| !platform.source_by_id(s))
                .collect();
            return Err(format!(
                "{key}[{at}] {source:?} asks by the account id an earlier source learned: list a \
                 source that asks by name before it (one of [\"{}\"])",
                by_name.join("\", \"")
            ));
        }
    }
    Ok(())
}

/// Every registered platform's section, at the platform's [`Platform::index`]: the settings
/// hold no field per platform.
#[derive(Clone, Debug)]
pub struct Platforms(Vec<PlatformConfig>);

impl Platforms {
    /// The sections as read, one per [`Platform::ALL`] in its order; the first platform whose
    /// section is missing otherwise.
    pub fn new(mut read: Vec<Option<PlatformConfig>>) -> Result<Self, Platform> {
        Platform::ALL
            .iter()
            .map(|&p| read.get_mut(p.index()).and_then(Option::take).ok_or(p))
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// The section of `platform`.
    pub fn get(&self, platform: Platform) -> &PlatformConfig {
        &self.0[platform.index()]
    }

    /// The section of `platform`, to change.
    pub fn get_mut(&mut self, platform: Platform) -> &mut PlatformConfig {
        &mut self.0[platform.index()]
    }
}
