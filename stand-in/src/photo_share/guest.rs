//! What the platform answers a client without a session since 2026-09: the logged-out profile
//! query by username and the profile query by pk, both `POST /api/graphql`; the profile embed
//! page, the one guest surface with the post count; the profile JSON's 401 `require_login`.
//!
//! The queries answer only the ids the stand-in's pages preload ([`LOGGEDOUT_DOC_ID`],
//! [`PROFILE_QUERY_DOC_ID`]); any other id, or the profile query without its required variables,
//! answers 200 with a CRITICAL `execution error` and `"data": null`, as the platform does. The
//! logged-out query gives no post count (`media_count: null`, as for guests); the embed page
//! gives it as `"posts_count":N` in its escaped `contextJSON`. Every value is invented.

use std::fmt::Write as _;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

use super::json::push_count;
use super::{Counts, SampleUser, push_xig_user};

/// The logged-out profile query's id the stand-in answers (the seed peers sent in 2026-09).
pub const LOGGEDOUT_DOC_ID: &str = "27981003384861049";

/// The profile query's id the stand-in answers (what the web app sent on 2026-09-29).
pub const PROFILE_QUERY_DOC_ID: &str = "28036671149327607";

/// The logged-out query's friendly name.
pub const LOGGEDOUT_QUERY: &str = "PolarisLoggedOutDesktopWWWProfileRootContentQuery";

/// The profile query's friendly name.
pub const PROFILE_QUERY: &str = "PolarisProfilePageContentQuery";

/// The Relay provider variables the profile query requires.
pub const PROVIDER_VARIABLES: [&str; 5] = [
    "__relay_internal__pv__PolarisCASB976ProfileEnabledrelayprovider",
    "__relay_internal__pv__PolarisCannesGuardianExperienceEnabledrelayprovider",
    "__relay_internal__pv__PolarisRepostsConsumptionEnabledrelayprovider",
    "__relay_internal__pv__PolarisShortDramaEnabledrelayprovider",
    "__relay_internal__pv__PolarisWebSchoolsEnabledrelayprovider",
];

/// The answer of a query whose id retired or whose variables moved.
pub const CHANGED_ANSWER: &str =
    r#"{"errors":[{"message":"execution error","severity":"CRITICAL"}],"data":null}"#;

/// The logged-out query's answer for a name no account has.
pub const NO_SUCH_USER_ANSWER: &str = r#"{"data":{"xig_user_by_username":null},"errors":[{"message":"A server error field_exception occured. Check server logs for details.","severity":"ERROR","path":["xig_user_by_username"]}],"extensions":{"is_final":true}}"#;

/// The profile JSON's answer to every guest since 2026-09 (HTTP 401).
pub const REQUIRE_LOGIN_2026: &str = r#"{"message":"Please wait a few minutes before you try again.","require_login":true,"igweb_rollout":true,"status":"fail"}"#;

/// The logged-out query's answer for `user`: its user in the page's xig names, without the post
/// count (guests do not get it).
pub fn loggedout_answer(user: &SampleUser) -> String {
    let guest = SampleUser {
        posts: None,
        ..*user
    };
    let mut out = String::with_capacity(2048);
    out.push_str("{\"data\":{\"xig_user_by_username\":");
    push_xig_user(&mut out, &guest, Counts::Flat);
    out.push_str("},\"extensions\":{\"is_final\":true}}");
    out.replacen(
        "\"is_embeds_disabled\":false,",
        "\"is_embeds_disabled\":false,\"media_count\":null,",
        1,
    )
}

/// The profile embed page of `user`: its `contextJSON` names the user with `posts_count` (when
/// the account has one), beside a suggested account's.
pub fn embed_page(user: &SampleUser) -> String {
    let mut context = String::from("{\"context\":{");
    let _ = write!(context, "\"username\":\"{}\",", user.username);
    push_count(&mut context, "posts_count", user.posts);
    push_count(&mut context, "followers_count", user.followers);
    context.push_str(
        "\"is_private\":false},\"suggested\":[{\"username\":\"someone.else\",\"posts_count\":7}]}",
    );
    let escaped = serde_json::to_string(&context).unwrap_or_default();
    format!(
        "<!DOCTYPE html><html><head><title>Embed</title></head><body><div class=\"Embed\"></div>\
         <script type=\"text/javascript\">requireLazy([\"EmbedProfileAsyncBootstrap\"],function(m){{m.init({{\"contextJSON\":{escaped},\"isLoggedIn\":false}})}});</script></body></html>"
    )
}

/// The preloaders a current profile page names: each query it ran, by id and name.
pub(super) fn preloaders_blob(out: &mut String) {
    let _ = write!(
        out,
        "<script type=\"application/json\" data-sjs>{{\"require\":[[\"RelayPrefetchedStreamCache\",\"setPreloaders\",[],[[{{\"queryID\":\"{PROFILE_QUERY_DOC_ID}\",\"variables\":{{\"render_surface\":\"PROFILE\"}},\"queryName\":\"{PROFILE_QUERY}\"}},{{\"queryID\":\"{LOGGEDOUT_DOC_ID}\",\"queryName\":\"{LOGGEDOUT_QUERY}\"}}]]]]}}</script>"
    );
}

/// Answers a `POST /api/graphql`: the logged-out query by the name in its variables, or the
/// profile query by the pk in them (with its required variables); a retired id or a missing
/// variable is the CRITICAL execution error; another query is 400.
pub(crate) async fn answer_graphql(request: axum::extract::Request) -> Response {
    let Ok(body) = axum::body::to_bytes(request.into_body(), 64 * 1024).await else {
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let fields: Vec<(String, String)> = url::form_urlencoded::parse(&body)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let field = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let variables = field("variables")
        .and_then(|v| serde_json::from_str::<serde_json::Value>(v).ok())
        .unwrap_or_default();
    let text =
        |v: &serde_json::Value, key: &str| v.get(key).and_then(|x| x.as_str()).map(str::to_owned);
    let changed = || crate::answer::script(Bytes::from_static(CHANGED_ANSWER.as_bytes()));
    match field("fb_api_req_friendly_name") {
        Some(LOGGEDOUT_QUERY) => {
            if field("doc_id") != Some(LOGGEDOUT_DOC_ID) {
                return changed();
            }
            let Some(name) = text(&variables, "username") else {
                return changed();
            };
            // The platform throttling, or refusing this client with a login page, as the other
            // sources of these names do.
            if name.eq_ignore_ascii_case(crate::THROTTLED_NAME) {
                return crate::answer::throttled();
            }
            if name.eq_ignore_ascii_case(super::HTML_FOR_JSON_NAME) {
                return crate::answer::html(Bytes::from(super::login_page()));
            }
            match super::sample_by_name(&name) {
                Some(user) => crate::answer::script(Bytes::from(loggedout_answer(&user))),
                None => crate::answer::script(Bytes::from_static(NO_SUCH_USER_ANSWER.as_bytes())),
            }
        }
        Some(PROFILE_QUERY) => {
            let complete = variables.get("enable_integrity_filters") == Some(&true.into())
                && PROVIDER_VARIABLES
                    .iter()
                    .all(|p| variables.get(*p) == Some(&false.into()));
            if field("doc_id") != Some(PROFILE_QUERY_DOC_ID) || !complete {
                return changed();
            }
            let body = match text(&variables, "id").and_then(|pk| super::sample_by_pk(&pk)) {
                Some(user) => super::profile_query_answer(&user, false),
                None => r#"{"data":{"user":null},"extensions":{"is_final":true}}"#.to_owned(),
            };
            crate::answer::script(Bytes::from(body))
        }
        _ => {
            let invalid = r#"{"message":"invalid request","status":"fail"}"#;
            (
                StatusCode::BAD_REQUEST,
                crate::answer::json(Bytes::from_static(invalid.as_bytes())),
            )
                .into_response()
        }
    }
}
