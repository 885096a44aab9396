//! The photo-share stand-in: the profile JSON endpoint and the profile page of the samples,
//! `"user": null` and the page's 404 for anyone else, the platform's throttle, a business
//! account the JSON refuses with its schema 400 (the page answers), a creator account refused
//! the same way whose page preloads the profile query's answer, and a name whose JSON
//! endpoint answers a login page with 200 (its page is the app shell), and an account whose
//! JSON endpoint answers as the retired one does (429, "Please wait"; its page answers). The
//! profile query (`POST /graphql/query`) answers every sample by its pk, as `text/javascript`.
//!
//! Its drifted twin answers the samples' profile JSON with every count under a name no reader
//! knows (the platform moving its endpoint): fetched fine, unreadable, since a public profile
//! without a follower count is never answered; the page is as before.

use std::sync::OnceLock;

use axum::Router;
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::response::Response;
use bytes::Bytes;

use super::{
    BUSINESS_USER, CREATOR_USER, DEFAULT_PAGE_SIZE, HTML_FOR_JSON_NAME, NOT_FOUND_NAME,
    PLEASE_WAIT_HTML, PRIVATE_USER, PUBLIC_USER, RETIRED_JSON_USER, SampleUser,
};
use crate::answer::{html, json, throttled};
use crate::{DemoCall, StandIn, THROTTLED_NAME};

/// The photo-share stand-in, as [`crate::PLATFORMS`] registers it.
pub const STAND_IN: StandIn = StandIn {
    label: "photo-share",
    drifted_source: "json",
    router,
    drifted_router,
    demo_calls,
    canary_accounts,
};

/// The stand-in (see the module's documentation).
pub fn router() -> Router {
    Router::new().fallback(answer)
}

/// The drifted stand-in: the samples' profile JSON with its counts renamed.
pub fn drifted_router() -> Router {
    Router::new().fallback(drifted)
}

fn canary_accounts() -> Vec<&'static str> {
    vec![
        PUBLIC_USER.username,
        PRIVATE_USER.username,
        BUSINESS_USER.username,
    ]
}

fn demo_calls() -> Vec<DemoCall> {
    vec![
        DemoCall::new(
            PUBLIC_USER.username,
            "a public user: the logged-out query answers (x-source: loggedout), the post count from the embed page",
        ),
        DemoCall::new(
            PRIVATE_USER.username,
            "a private user: Profile-Withheld names its post count",
        ),
        DemoCall::new(
            NOT_FOUND_NAME,
            "a missing user (404: the query's field_exception)",
        ),
        DemoCall::new(
            BUSINESS_USER.username,
            "a business account whose embed gives no post count: null, named in Profile-Withheld",
        ),
        DemoCall::new(
            HTML_FOR_JSON_NAME,
            "every source answering a login page: 429 upstream_blocked, never 500",
        ),
        DemoCall::new(
            THROTTLED_NAME,
            "a throttling platform: 429 upstream_blocked with Retry-After, after one retry (~1 s)",
        ),
    ]
}

async fn answer(request: Request) -> Response {
    let path = request.uri().path();
    if path == "/api/graphql" && request.method() == Method::POST {
        return super::guest::answer_graphql(request).await;
    }
    if let Some(name) = path
        .strip_suffix("/embed/")
        .and_then(|p| p.strip_prefix('/'))
        .filter(|n| !n.contains('/'))
    {
        return match sample_by_name(name) {
            Some(user) => html(Bytes::from(super::embed_page(&user))),
            None => {
                let mut response = html(Bytes::from(super::not_found_page()));
                *response.status_mut() = StatusCode::NOT_FOUND;
                response
            }
        };
    }
    if path == "/api/v1/users/web_profile_info/" {
        let name = requested_name(&request);
        if name.eq_ignore_ascii_case(THROTTLED_NAME) {
            return throttled();
        }
        if name.eq_ignore_ascii_case(BUSINESS_USER.username)
            || name.eq_ignore_ascii_case(CREATOR_USER.username)
        {
            let mut response = json(Bytes::from(super::business_schema_json()));
            *response.status_mut() = StatusCode::BAD_REQUEST;
            return response;
        }
        if name.eq_ignore_ascii_case(HTML_FOR_JSON_NAME) {
            return html(Bytes::from(super::login_page()));
        }
        if name.eq_ignore_ascii_case(RETIRED_JSON_USER.username) {
            let mut response = html(Bytes::from_static(PLEASE_WAIT_HTML.as_bytes()));
            *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
            return response;
        }
        return match sample_user(&name) {
            Some(user) => json(profile_json(user.username)),
            None => json(Bytes::from(super::user_null_json())),
        };
    }
    let name = path.trim_matches('/');
    if name.eq_ignore_ascii_case(THROTTLED_NAME) {
        return throttled();
    }
    if name.eq_ignore_ascii_case(BUSINESS_USER.username) {
        return html(Bytes::from(super::web_profile_info_preload_page(
            &BUSINESS_USER,
            DEFAULT_PAGE_SIZE,
        )));
    }
    if name.eq_ignore_ascii_case(CREATOR_USER.username) {
        return html(Bytes::from(super::profile_query_preload_page(
            &CREATOR_USER,
            DEFAULT_PAGE_SIZE,
        )));
    }
    if name.eq_ignore_ascii_case(HTML_FOR_JSON_NAME) {
        return html(Bytes::from(super::shell_page(HTML_FOR_JSON_NAME)));
    }
    if name.eq_ignore_ascii_case(RETIRED_JSON_USER.username) {
        return html(Bytes::from(super::xig_profile_page(
            &RETIRED_JSON_USER,
            DEFAULT_PAGE_SIZE,
        )));
    }
    match sample_user(name) {
        Some(user) => html(Bytes::from(super::xig_profile_page(
            &user,
            DEFAULT_PAGE_SIZE,
        ))),
        None => {
            let mut response = html(Bytes::from(super::not_found_page()));
            *response.status_mut() = StatusCode::NOT_FOUND;
            response
        }
    }
}

/// As [`answer`], but a sample's profile JSON has its counts renamed.
async fn drifted(request: Request) -> Response {
    if request.uri().path() == "/api/v1/users/web_profile_info/" {
        let name = requested_name(&request);
        if let Some(user) = sample_user(&name) {
            return json(Bytes::from(super::unknown_counts_json(&user, 64 * 1024)));
        }
    }
    answer(request).await
}

/// The `username` query parameter of a profile JSON request.
fn requested_name(request: &Request) -> String {
    request
        .uri()
        .query()
        .and_then(|q| url::form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "username"))
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// The photo-share sample accounts, by name (case-insensitive).
pub fn sample_user(name: &str) -> Option<SampleUser> {
    [PUBLIC_USER, PRIVATE_USER]
        .into_iter()
        .find(|u| u.username.eq_ignore_ascii_case(name))
}

/// Every photo-share sample account, by name (case-insensitive): what the logged-out query
/// and the embed page answer.
pub fn sample_by_name(name: &str) -> Option<SampleUser> {
    [
        PUBLIC_USER,
        PRIVATE_USER,
        BUSINESS_USER,
        CREATOR_USER,
        RETIRED_JSON_USER,
    ]
    .into_iter()
    .find(|u| u.username.eq_ignore_ascii_case(name))
}

/// Every photo-share sample account, by pk: what the profile query is asked by.
pub fn sample_by_pk(pk: &str) -> Option<SampleUser> {
    [
        PUBLIC_USER,
        PRIVATE_USER,
        BUSINESS_USER,
        CREATOR_USER,
        RETIRED_JSON_USER,
    ]
    .into_iter()
    .find(|u| u.pk == pk)
}

/// A sample's profile JSON, built once.
fn profile_json(username: &str) -> Bytes {
    static DOCS: OnceLock<Vec<(&'static str, Bytes)>> = OnceLock::new();
    let docs = DOCS.get_or_init(|| {
        [PUBLIC_USER, PRIVATE_USER]
            .into_iter()
            .map(|u| {
                (
                    u.username,
                    Bytes::from(super::web_profile_info(&u, 64 * 1024)),
                )
            })
            .collect()
    });
    docs.iter()
        .find(|(name, _)| *name == username)
        .map(|(_, doc)| doc.clone())
        .unwrap_or_default()
}
