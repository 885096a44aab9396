//! The photo-share platform as the fetcher drives it, as it answers a client without a
//! session since 2026-09: the logged-out profile query by username first (`loggedout`), the
//! profile page second, the profile JSON third, and, when configured, the profile query by the
//! account's pk (`graphql`); a public profile whose source gave no post count is completed from
//! the profile embed page (`embed`, `photo_share.post_count`).
//!
//! The platform throttles hard, so every blocking signal is waited out with backoff before the
//! caller hears `upstream_blocked`; a JSON answer that is not JSON (a login page, the app
//! shell, with 200 or 404) and a page that is the app shell or a login wall are such signals:
//! the JSON's 404 says "no such user" only in the endpoint's own JSON, the page's only as the
//! "page not found" page, the logged-out query's only as its `field_exception`. A `"user":
//! null` answer is not trusted as absence (the platform also sends it when throttling). A
//! query that answers "changed" (its id retired, its variables moved) is unreadable: the next
//! source is asked, drift capture keeps it, the canary says `changed`, and a learned id that
//! did it is dropped for the seed. `docs/photo-share.md` lists every signal with its answer and
//! where it was seen.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap};
use url::Url;

use super::embed::{self, PostCount};
use super::query::{self, LOGGEDOUT_QUERY, PROFILE_QUERY, Said};
use super::{PhotoShareProfile, bundles, extract, preloads, web_headers};
use crate::config::{PostCount as PostCountSetting, Settings};
use crate::fleet::Fleet;
use crate::fleet::query_ids::QueryIds;
use crate::platform::site::{Alone, Api, Completion, Document, Reading, Site};
use crate::platform::{Platform, Profile};
use crate::upstream::egress::RouteLease;
use crate::upstream::{Form, Response, same_origin, url_with_segments};
use crate::username::{Subject, Username};

/// What the JSON endpoint's `"user": null` is, until the page confirms it.
const USER_NULL: &str = "user_null";

/// What a business account's schema 400 on the JSON endpoint is: the page answers instead.
const BUSINESS_ACCOUNT: &str = "business_account";

/// The seeds of the query ids when the settings name none (settings built in code).
const LOGGEDOUT_SEED: &str = "27981003384861049";
const PROFILE_QUERY_SEED: &str = "28036671149327607";

/// The queries whose ids a page's preloaders teach.
const QUERIES: [&str; 2] = [LOGGEDOUT_QUERY, PROFILE_QUERY];

/// The photo-share platform: its base URL, the query ids it posts and learns, and how it
/// completes a profile without a post count. Session values (the claim, the CSRF token) are
/// the route's, never the site's.
#[derive(Debug)]
pub struct PhotoShare {
    base: Url,
    /// The site's origin, for the queries' `Origin` header.
    origin: String,
    /// The queries' ids: the configured seeds, and those learned from the platform's pages.
    ids: QueryIds,
    /// The Relay provider variables the profile query sends (`photo_share.graphql_provider_variables`).
    providers: Vec<String>,
    /// Where a missing post count comes from (`photo_share.post_count`).
    post_count: PostCountSetting,
    /// How many times the embed page is asked (`photo_share.embed_attempts`).
    embed_attempts: u32,
    /// How often at most the fleet looks for new ids (`photo_share.rediscover_seconds`).
    rediscover_every: Duration,
    /// The configured canary accounts: the pages a rediscovery reads first.
    accounts: Vec<String>,
    /// A query answered "changed" since the last rediscovery began.
    changed: AtomicBool,
}

/// How often at most the fleet reads the JS bundles for the queries' ids (peer A: 6 h).
const BUNDLES_EVERY: Duration = Duration::from_secs(6 * 3600);

/// The documents a photo-share lookup asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Doc {
    /// `POST /api/graphql`, the logged-out profile query by username: what still answers a
    /// guest since 2026-09.
    LoggedOut,
    /// `/{username}/`: its logged-out forms preload the user; its 404 confirms absence.
    ProfilePage,
    /// `/api/v1/users/web_profile_info/?username=`: the web client's own source until 2026-09,
    /// since then 401 `require_login` for every guest.
    ProfileJson,
    /// `POST /api/graphql`: the web client's profile query, by the account's pk learned from
    /// an earlier answer about the name (`query`); asked only when configured.
    ProfileQuery,
    /// `/{username}/embed/`: never a source of the plan; the complement that gives a public
    /// profile's post count ([`Site::complement`]).
    Embed,
}

impl Document for Doc {
    fn label(self) -> &'static str {
        match self {
            Doc::LoggedOut => "loggedout",
            Doc::ProfileJson => "json",
            Doc::ProfilePage => "page",
            Doc::ProfileQuery => "graphql",
            Doc::Embed => "embed",
        }
    }

    /// Only the JSON (and, for a logged-in viewer, the queries) ever gave every public
    /// account's post count; since 2026-09 no guest form does (the embed completes it).
    fn gives_posts(self) -> bool {
        self == Doc::ProfileJson
    }

    /// The profile query is posted by the account's pk: `graphql`, the registry line's one
    /// source `by_id`.
    fn by_id(self) -> bool {
        self == Doc::ProfileQuery
    }
}

impl Doc {
    /// The query this document posts, when it is one.
    fn query(self) -> Option<&'static str> {
        match self {
            Doc::LoggedOut => Some(LOGGEDOUT_QUERY),
            Doc::ProfileQuery => Some(PROFILE_QUERY),
            _ => None,
        }
    }
}

/// What a JSON answer the extractor could not read is, before the page is asked.
const JSON_UNREADABLE: &str = "unreadable";

/// What a JSON answer with a status the endpoint is not known to send is.
const UNEXPECTED_STATUS: &str = "unexpected status";

impl Site for PhotoShare {
    const PLATFORM: Platform = Platform::PhotoShare;
    const API: Api = Api {
        example_username: "lumen.trails",
        found: "The profile (private accounts have `is_private: true`)",
        region_locks: false,
        restricts: true,
    };
    type Body = PhotoShareProfile;
    const RETRIES_BLOCKS: bool = true;
    type Doc = Doc;
    type Hurdle = Infallible;
    const DOCUMENTS: &'static [Doc] = &[
        Doc::LoggedOut,
        Doc::ProfilePage,
        Doc::ProfileJson,
        Doc::ProfileQuery,
    ];

    fn new(settings: &Settings, fleet: &Fleet) -> Self {
        let config = settings.platform(Self::PLATFORM);
        let seed = |id: &Option<String>, default: &str| id.clone().unwrap_or(default.to_owned());
        let seeds = vec![
            (
                LOGGEDOUT_QUERY,
                seed(&config.loggedout_doc_id, LOGGEDOUT_SEED),
            ),
            (
                PROFILE_QUERY,
                seed(&config.graphql_doc_id, PROFILE_QUERY_SEED),
            ),
        ];
        let base = config.base_url.clone();
        Self {
            origin: base.origin().ascii_serialization(),
            base,
            ids: QueryIds::new(fleet, Self::PLATFORM.as_str(), seeds),
            providers: config
                .graphql_provider_variables
                .clone()
                .unwrap_or_default(),
            post_count: config.post_count.unwrap_or_default(),
            embed_attempts: config.embed_attempts.unwrap_or(3),
            rediscover_every: Duration::from_secs(config.rediscover_seconds.unwrap_or(600)),
            accounts: settings.canary.accounts(Self::PLATFORM).to_vec(),
            changed: AtomicBool::new(false),
        }
    }

    fn url(&self, doc: Doc, name: &Username) -> Url {
        match doc {
            Doc::ProfileJson => {
                let mut url =
                    url_with_segments(&self.base, &["api", "v1", "users", "web_profile_info", ""]);
                url.query_pairs_mut().append_pair("username", name.as_str());
                url
            }
            Doc::ProfilePage => url_with_segments(&self.base, &[name.as_str(), ""]),
            Doc::LoggedOut | Doc::ProfileQuery => {
                url_with_segments(&self.base, &["api", "graphql"])
            }
            Doc::Embed => url_with_segments(&self.base, &[name.as_str(), "embed", ""]),
        }
    }

    /// The JSON request carries, as the web client does, the `csrftoken` cookie this route was
    /// given as `X-CSRFToken` (the route's jar sends the cookie itself) and the claim this
    /// route was handed as `X-IG-WWW-Claim` (`0` before): both read from the route in use, so
    /// a lookup that moved to another proxy never repeats the first one's. The queries send
    /// the same and the site's `Origin` (their form adds `X-FB-LSD` and
    /// `X-FB-Friendly-Name`); the page and the embed are navigations.
    fn headers(&self, doc: Doc, name: &Username, route: &RouteLease<'_>) -> HeaderMap {
        if matches!(doc, Doc::ProfilePage | Doc::Embed) {
            return web_headers::page();
        }
        let csrf = route.cookie(&self.base, web_headers::CSRF_COOKIE);
        let api = web_headers::api(
            &self.url(Doc::ProfilePage, name),
            route.handed(web_headers::SET_CLAIM),
            csrf.as_deref(),
        );
        match doc {
            Doc::LoggedOut | Doc::ProfileQuery => query::headers(api, &self.origin),
            _ => api,
        }
    }

    /// The queries post their forms (the name, or the pk), with the id in use for the query;
    /// the other documents are GETs.
    async fn form(
        &self,
        doc: Doc,
        name: &Username,
        id: Option<&str>,
        route: &RouteLease<'_>,
    ) -> Option<Form> {
        // The token a page this route read handed out, else a fresh one.
        let lsd = route
            .kept(query::LSD_VALUE)
            .and_then(|v| v.to_str().ok().map(str::to_owned))
            .unwrap_or_else(query::random_lsd);
        match doc {
            Doc::LoggedOut => {
                let doc_id = self.ids.id(LOGGEDOUT_QUERY).await;
                Some(query::loggedout_form(&doc_id, name.as_str(), &lsd))
            }
            Doc::ProfileQuery => {
                let doc_id = self.ids.id(PROFILE_QUERY).await;
                Some(query::by_pk_form(&doc_id, id?, &self.providers, &lsd))
            }
            _ => None,
        }
    }

    /// A page teaches the ids its preloaders name and the `lsd` token the route's queries then
    /// repeat; a query that answered "changed" drops the learned id it was posted with.
    async fn learn(
        &self,
        doc: Doc,
        form: Option<&Form>,
        response: &Response,
        route: &RouteLease<'_>,
    ) {
        let platform = Self::PLATFORM.as_str();
        if doc == Doc::ProfilePage && response.status.is_success() {
            if let Some(token) = query::page_lsd(&response.body) {
                route.keep(query::LSD_VALUE, token);
            }
            for (query, id) in preloads::query_ids(&response.body, &QUERIES) {
                if self.ids.learn(query, &id, "page").await {
                    crate::telemetry::query_id_learned(platform, query, "page");
                    tracing::info!(platform, query, id = %id, "learned a query id from a page");
                }
            }
            return;
        }
        let (Some(query), Some(form)) = (doc.query(), form) else {
            return;
        };
        if !response.status.is_success() {
            return;
        }
        if let Said::Changed(part) = query::said(query::unguarded(&response.body)) {
            let Some(posted) = form_value(form, "doc_id") else {
                return;
            };
            crate::telemetry::query_changed(platform, query, part);
            self.changed.store(true, Ordering::Relaxed);
            let was_seed = self.ids.changed(query, &posted).await;
            tracing::warn!(
                platform,
                query,
                part,
                doc_id = %posted,
                seed = was_seed,
                "the platform says a query changed"
            );
        }
    }

    fn query_ids(&self) -> Option<&QueryIds> {
        Some(&self.ids)
    }

    /// After a query answered "changed", once per `photo_share.rediscover_seconds` for the
    /// fleet: the page of the first configured canary account (its preloaders), then the login
    /// page (its JS bundles, [`Site::linked`]).
    async fn rediscovery(&self) -> Vec<Url> {
        if !self.changed.load(Ordering::Relaxed)
            || !self.ids.claim_turn("page", self.rediscover_every).await
        {
            return Vec::new();
        }
        self.changed.store(false, Ordering::Relaxed);
        let mut urls: Vec<Url> = self
            .accounts
            .iter()
            .filter_map(|a| Username::parse(Self::PLATFORM, a).ok())
            .take(1)
            .map(|name| self.url(Doc::ProfilePage, &name))
            .collect();
        urls.push(url_with_segments(&self.base, &["accounts", "login", ""]));
        urls
    }

    fn discovery_headers(&self) -> HeaderMap {
        web_headers::page()
    }

    /// A page's preloaders, or a bundle's query modules.
    async fn learn_from(&self, response: &Response) -> bool {
        if !response.status.is_success() {
            return false;
        }
        let (found, from) = match preloads::query_ids(&response.body, &QUERIES) {
            found if !found.is_empty() => (found, "page"),
            _ => (bundles::operation_ids(&response.body, &QUERIES), "bundle"),
        };
        let mut learned = false;
        for (query, id) in found {
            if self.ids.learn(query, &id, from).await {
                let platform = Self::PLATFORM.as_str();
                crate::telemetry::query_id_learned(platform, query, from);
                tracing::info!(platform, query, id = %id, from, "learned a query id");
                learned = true;
            }
        }
        learned
    }

    /// A page's JS bundles, at most once per 6 h for the fleet.
    async fn linked(&self, response: &Response) -> Vec<Url> {
        let scripts = bundles::linked_scripts(&response.body, &response.url);
        if scripts.is_empty() || !self.ids.claim_turn("bundles", BUNDLES_EVERY).await {
            return Vec::new();
        }
        scripts
    }

    /// A public profile without a post count is completed from the embed page, unless
    /// `photo_share.post_count = "skip"`.
    fn complement(&self, found: &Profile) -> Option<Doc> {
        let summary = found.summary();
        let wants = self.post_count == PostCountSetting::Embed
            && !summary.private
            && summary.posts.1.is_none();
        wants.then_some(Doc::Embed)
    }

    fn complement_attempts(&self) -> u32 {
        self.embed_attempts
    }

    fn completed(
        &self,
        _: Doc,
        response: &Response,
        found: &Profile,
        name: &Username,
    ) -> Completion {
        if response.status.is_server_error() {
            return Completion::Again;
        }
        if !response.status.is_success() || response.redirect_target().is_some() {
            return Completion::Withheld;
        }
        let PostCount::Read(posts) = embed::post_count(&response.body, name) else {
            return Completion::Withheld;
        };
        let Ok(mut body) = serde_json::from_slice::<PhotoShareProfile>(found.json()) else {
            return Completion::Withheld;
        };
        body.edge_owner_to_timeline_media.count = Some(posts);
        Completion::Done(Box::new(Profile::new(&body)))
    }

    fn read(&self, doc: Doc, response: &Response, name: &Username) -> Reading {
        let retry_after = response.retry_after();
        let blocked = |reason| Reading::Blocked {
            reason,
            retry_after,
        };
        if let Some(target) = response.redirect_target() {
            // A redirect is never followed here. On the platform's own host, a login, challenge
            // or home-page target is its way of refusing us; anything else is not a profile.
            if same_origin(&response.url, &target) && extract::redirect_is_block(target.path()) {
                return blocked("login_redirect");
            }
            return Reading::Unavailable("unexpected redirect".into());
        }
        let status = response.status;
        if let Some(reason) = extract::block_signal(status.as_u16(), &response.body) {
            return blocked(reason);
        }
        if status.is_server_error() {
            return Reading::ServerError(format!("HTTP {status}"), None);
        }
        let body = &response.body;
        let reading = match (doc, status) {
            // Only the endpoint's own JSON says "no such user"; a 404 with a login page, the
            // app shell or nothing is the platform refusing us, like the same bodies with 200.
            (Doc::ProfileJson, StatusCode::NOT_FOUND) => {
                let content_type = response.headers.get(CONTENT_TYPE).map(|v| v.as_bytes());
                return match extract::refused_404(content_type, body) {
                    Some(reason) => blocked(reason),
                    None => Reading::NotFound,
                };
            }
            (Doc::ProfileJson, s) if s.is_success() => {
                let content_type = response.headers.get(CONTENT_TYPE).map(|v| v.as_bytes());
                if let Some(reason) = extract::not_json(content_type, body) {
                    return blocked(reason);
                }
                extract::from_api(body, name)
            }
            (Doc::ProfileJson, s) if extract::is_business_schema_error(s.as_u16(), body) => {
                return Reading::Inconclusive(BUSINESS_ACCOUNT);
            }
            (Doc::ProfilePage, s) if s.is_success() || s == StatusCode::NOT_FOUND => {
                extract::from_page_answer(body, name)
            }
            // Any content type (`text/javascript`, SimpleInstaBot#329), a `for (;;);` guard
            // stripped; not JSON (HTML, nothing) is refusal.
            (Doc::LoggedOut | Doc::ProfileQuery, s) if s.is_success() => {
                let content_type = response.headers.get(CONTENT_TYPE).map(|v| v.as_bytes());
                let body = query::unguarded(body);
                if let Some(reason) = extract::not_json(content_type, body) {
                    return blocked(reason);
                }
                match query::said(body) {
                    Said::LoginRequired => return blocked("login_required"),
                    Said::Changed(part) => {
                        return Reading::Unreadable(format!("the query changed: {part}"));
                    }
                    Said::NoSuchUser if doc == Doc::LoggedOut => return Reading::NotFound,
                    Said::NoSuchUser => return Reading::Inconclusive(USER_NULL),
                    Said::Data if doc == Doc::LoggedOut => query::read_loggedout(body, name),
                    Said::Data => query::read_by_pk(body, name),
                }
            }
            // Without a CSRF token, or anonymous where a session is wanted (instaloader#2688,
            // #2706): the platform refusing us.
            (Doc::LoggedOut | Doc::ProfileQuery, StatusCode::FORBIDDEN) => {
                return blocked("http_403");
            }
            // A 400 `invalid request` is a retired doc_id (instaloader#2695, #2701).
            (Doc::LoggedOut | Doc::ProfileQuery, _) => {
                return Reading::Inconclusive(UNEXPECTED_STATUS);
            }
            (Doc::ProfileJson, _) => return Reading::Inconclusive(UNEXPECTED_STATUS),
            (Doc::ProfilePage, _) => return Reading::Unavailable(format!("HTTP {status}")),
            // Asked only as a complement, never read as a source.
            (Doc::Embed, _) => return Reading::Inconclusive(UNEXPECTED_STATUS),
        };
        match (doc, reading) {
            (_, Reading::Blocked { reason, .. }) => blocked(reason),
            // The logged-out query's own "no such user" is its `field_exception` (above): a
            // bare null user is what throttling looks like too.
            (Doc::LoggedOut | Doc::ProfileJson | Doc::ProfileQuery, Reading::NotFound) => {
                Reading::Inconclusive(USER_NULL)
            }
            (Doc::ProfileJson, Reading::Unreadable(why)) => {
                tracing::debug!(why = %why, "profile JSON unreadable; asking the page");
                Reading::Inconclusive(JSON_UNREADABLE)
            }
            (_, reading) => reading.map(|body| Box::new(Profile::new(&body))),
        }
    }

    async fn clear(&self, hurdle: Infallible, _: &Url, _: &RouteLease<'_>) -> bool {
        match hurdle {}
    }

    /// The JSON said "no user" and the page shows no profile and no 404: that is what
    /// throttling looks like, so it is reported as a block, not as absence.
    fn conclude(&self, misses: &[(Doc, Reading)]) -> Reading {
        let json_said_no_user = misses.iter().any(|(doc, miss)| {
            matches!(doc, Doc::ProfileJson | Doc::LoggedOut)
                && *miss == Reading::Inconclusive(USER_NULL)
        });
        if json_said_no_user {
            return Reading::blocked("unconfirmed_absence");
        }
        let why = misses
            .iter()
            .map(|(doc, miss)| match doc {
                Doc::LoggedOut => format!("logged-out query: {}", miss.why()),
                Doc::ProfileJson => format!("profile JSON: {}", miss.why()),
                Doc::ProfilePage => format!("profile page: {}", miss.why()),
                Doc::ProfileQuery => format!("profile query: {}", miss.why()),
                Doc::Embed => format!("embed page: {}", miss.why()),
            })
            .collect::<Vec<_>>();
        Reading::Unreadable(why.join("; "))
    }

    /// Asked alone: a business account's 400 withholds it by design, `"user": null` is how
    /// the platform also throttles, and an unreadable JSON (or a status it never sends) means
    /// the endpoint moved.
    fn alone(_: Doc, why: &str) -> Alone {
        match why {
            USER_NULL => Alone::Refused,
            JSON_UNREADABLE | UNEXPECTED_STATUS => Alone::Unreadable,
            _ => Alone::Withheld,
        }
    }

    /// A JSON document is read as the profile JSON (or a query's answer, whose user the same
    /// reader finds), anything else as the profile page.
    fn extract(document: &[u8], requested: Subject<'_>) -> Reading {
        let document = query::unguarded(document);
        let is_json = document
            .trim_ascii_start()
            .first()
            .is_some_and(|b| matches!(b, b'{' | b'['));
        let reading = if is_json {
            extract::from_api(document, requested)
        } else {
            extract::from_page(document, requested)
        };
        reading.map(|body| Box::new(Profile::new(&body)))
    }
}

/// The value of `field` in `form`'s body.
fn form_value(form: &Form, field: &str) -> Option<String> {
    url::form_urlencoded::parse(&form.body())
        .find(|(k, _)| k == field)
        .map(|(_, v)| v.into_owned())
}
