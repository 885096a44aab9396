//! The photo-share platform as the fetcher drives it: the profile JSON first, the profile
//! page second, and, when configured, the profile query by the account's pk (`query`).
//!
//! The platform throttles hard, so every blocking signal on either request is waited out with
//! backoff before the caller hears `upstream_blocked`; a JSON answer that is not JSON (a login
//! page, the app shell, with 200 or 404) and a page that is the app shell are such signals: the
//! JSON's 404 says "no such user" only in the endpoint's own JSON, the page's only as the
//! "page not found" page. A
//! `"user": null` answer from the JSON endpoint is not trusted as absence (the platform also
//! sends it when throttling): only the profile page's own 404 confirms it. A business
//! account's schema 400 sends the lookup to the page at once. `docs/photo-share.md` lists every
//! signal with its answer and where it was seen.

use std::convert::Infallible;

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap};
use url::Url;

use super::{PhotoShareProfile, extract};
use super::{query, web_headers};
use crate::config::Settings;
use crate::platform::site::{Alone, Api, Document, Reading, Site};
use crate::platform::{Platform, Profile};
use crate::upstream::egress::RouteLease;
use crate::upstream::{Form, Response, same_origin, url_with_segments};
use crate::username::{Subject, Username};

/// What the JSON endpoint's `"user": null` is, until the page confirms it.
const USER_NULL: &str = "user_null";

/// What a business account's schema 400 on the JSON endpoint is: the page answers instead.
const BUSINESS_ACCOUNT: &str = "business_account";

/// The photo-share platform: its base URL. Session values (the claim, the CSRF token) are the
/// route's, never the site's.
#[derive(Debug)]
pub struct PhotoShare {
    base: Url,
    /// The profile query's persisted id (`photo_share.graphql_doc_id`).
    doc_id: String,
}

/// The documents a photo-share lookup asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Doc {
    /// `/api/v1/users/web_profile_info/?username=`: small, and the web client's own source.
    ProfileJson,
    /// `/{username}/`: asked when the JSON had nothing usable; its 404 confirms absence.
    ProfilePage,
    /// `POST /graphql/query`: the web client's profile query, by the account's pk learned from
    /// an earlier answer about the name (`query`); asked only when configured.
    ProfileQuery,
}

impl Document for Doc {
    fn label(self) -> &'static str {
        match self {
            Doc::ProfileJson => "json",
            Doc::ProfilePage => "page",
            Doc::ProfileQuery => "graphql",
        }
    }

    /// The page hides a business account's post count; the JSON and the query give every
    /// public one's.
    fn gives_posts(self) -> bool {
        self != Doc::ProfilePage
    }

    fn by_id(self) -> bool {
        self == Doc::ProfileQuery
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
        restricts: false,
    };
    type Body = PhotoShareProfile;
    const RETRIES_BLOCKS: bool = true;
    type Doc = Doc;
    type Hurdle = Infallible;
    const DOCUMENTS: &'static [Doc] = &[Doc::ProfileJson, Doc::ProfilePage, Doc::ProfileQuery];

    fn new(settings: &Settings) -> Self {
        let config = settings.platform(Self::PLATFORM);
        Self {
            base: config.base_url.clone(),
            doc_id: config.graphql_doc_id.clone().unwrap_or_default(),
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
            Doc::ProfileQuery => url_with_segments(&self.base, &["graphql", "query"]),
        }
    }

    /// The JSON request carries, as the web client does, the `csrftoken` cookie this route was
    /// given as `X-CSRFToken` (the route's jar sends the cookie itself) and the claim this
    /// route was handed as `X-IG-WWW-Claim` (`0` before): both read from the route in use, so
    /// a lookup that moved to another proxy never repeats the first one's. The profile query
    /// sends the same, and its friendly name.
    fn headers(&self, doc: Doc, name: &Username, route: &RouteLease<'_>) -> HeaderMap {
        if doc == Doc::ProfilePage {
            return web_headers::page();
        }
        let csrf = route.cookie(&self.base, web_headers::CSRF_COOKIE);
        let api = web_headers::api(
            &self.url(Doc::ProfilePage, name),
            route.handed(web_headers::SET_CLAIM),
            csrf.as_deref(),
        );
        match doc {
            Doc::ProfileQuery => query::headers(api),
            _ => api,
        }
    }

    /// The profile query posts its form, the pk in it; the other documents are GETs.
    fn form(&self, doc: Doc, id: &str) -> Option<Form> {
        (doc == Doc::ProfileQuery).then(|| query::form(&self.doc_id, id))
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
            return Reading::ServerError(format!("HTTP {status}"));
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
            // Any content type (`text/javascript`, SimpleInstaBot#329); not JSON is refusal.
            (Doc::ProfileQuery, s) if s.is_success() => {
                let content_type = response.headers.get(CONTENT_TYPE).map(|v| v.as_bytes());
                if let Some(reason) = extract::not_json(content_type, body) {
                    return blocked(reason);
                }
                query::read(body, name)
            }
            // Without a CSRF token, or anonymous where a session is wanted (instaloader#2688,
            // #2706): the platform refusing us.
            (Doc::ProfileQuery, StatusCode::FORBIDDEN) => return blocked("http_403"),
            // A 400 `invalid request` is a retired doc_id (instaloader#2695, #2701).
            (Doc::ProfileQuery, _) => return Reading::Inconclusive(UNEXPECTED_STATUS),
            (Doc::ProfileJson, _) => return Reading::Inconclusive(UNEXPECTED_STATUS),
            (Doc::ProfilePage, _) => return Reading::Unavailable(format!("HTTP {status}")),
        };
        match (doc, reading) {
            (_, Reading::Blocked { reason, .. }) => blocked(reason),
            (Doc::ProfileJson | Doc::ProfileQuery, Reading::NotFound) => {
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
        let json_said_no_user =
            misses.contains(&(Doc::ProfileJson, Reading::Inconclusive(USER_NULL)));
        if json_said_no_user {
            return Reading::blocked("unconfirmed_absence");
        }
        let why = misses
            .iter()
            .map(|(doc, miss)| match doc {
                Doc::ProfileJson => format!("profile JSON: {}", miss.why()),
                Doc::ProfilePage => format!("profile page: {}", miss.why()),
                Doc::ProfileQuery => format!("profile query: {}", miss.why()),
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

    /// A JSON document is read as the profile JSON, anything else as the profile page.
    fn extract(document: &[u8], requested: Subject<'_>) -> Reading {
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
