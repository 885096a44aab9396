//! The short-video stand-in: `GET /@{name}` answers a sample's profile page (the current
//! page shape, full size; one sample's with its state under an unknown id, one's with 32-bit
//! wrapped counts), the not-found page, a page without state, a restricted account's page
//! (status 209002), the captcha page in either of its forms, or the platform's throttle;
//! `GET /embed/@{name}` answers a public sample's embed page, or 400 with the embed's error
//! payload: naming its case for two names whose profile page is the stateless shell
//! (`"errorCode": 10222` private, `10221` missing), "private or missing" alike for anyone else
//! (the older payload, without a code).
//!
//! Its drifted twin serves the samples' profile pages with every count under a name the
//! platform never used (the platform moving its page): fetched fine, unreadable, since a
//! public profile without a follower count is never answered; the embed is as before.

use std::sync::OnceLock;

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

use super::{
    CAPTCHA_CONFIG_NAME, DEFAULT_PAGE_SIZE, EMBED_MISSING_CODE, EMBED_ONLY_USER,
    EMBED_PRIVATE_CODE, Era, MISSING_EMBED_NAME, MOVED_PAGE_USER, NOT_FOUND_USER,
    PRIVATE_EMBED_NAME, PRIVATE_USER, PUBLIC_USER, RESTRICTED_NAME, SHELL_PAGE_USER,
    STATELESS_BLOCK_NAMES, SampleUser, WRAPPED_COUNTS_USER,
};
use crate::answer::{html, throttled};
use crate::{DemoCall, StandIn, THROTTLED_NAME};

/// The short-video stand-in, as [`crate::PLATFORMS`] registers it.
pub const STAND_IN: StandIn = StandIn {
    label: "short-video",
    drifted_source: "page",
    router,
    drifted_router,
    demo_calls,
    canary_accounts,
};

/// The stand-in (see the module's documentation).
pub fn router() -> Router {
    Router::new().fallback(answer)
}

/// The drifted stand-in: the samples' profile pages with their counts renamed.
pub fn drifted_router() -> Router {
    Router::new().fallback(drifted)
}

fn canary_accounts() -> Vec<&'static str> {
    vec![PUBLIC_USER.unique_id, PRIVATE_USER.unique_id]
}

fn demo_calls() -> Vec<DemoCall> {
    vec![
        DemoCall::new(PUBLIC_USER.unique_id, "a public user"),
        DemoCall::new(
            PRIVATE_USER.unique_id.to_uppercase(),
            "a private user, in capitals (names are case-insensitive)",
        ),
        DemoCall::new(NOT_FOUND_USER, "a missing user (404)"),
        DemoCall::new(
            RESTRICTED_NAME,
            "an account shown only to logged-in viewers (403 profile_restricted)",
        ),
        DemoCall::new(
            SHELL_PAGE_USER.unique_id,
            "a profile page without state: the embed answers (x-source: embed)",
        ),
        DemoCall::new(
            EMBED_ONLY_USER.unique_id,
            "a captcha page every time: only the embed answers (x-source: embed)",
        ),
        DemoCall::new("..%2Fadmin", "a bad name (400 invalid_username)"),
    ]
}

async fn answer(request: Request) -> Response {
    let path = request.uri().path();
    if let Some(name) = path.strip_prefix("/embed/@") {
        return embed(name);
    }
    let Some(name) = path.strip_prefix("/@") else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if name.eq_ignore_ascii_case(THROTTLED_NAME) {
        return throttled();
    }
    if let Some(page) = stateless(name) {
        return html(Bytes::from(page));
    }
    if name.eq_ignore_ascii_case(MOVED_PAGE_USER.unique_id) {
        return html(moved_state_page());
    }
    if name.eq_ignore_ascii_case(RESTRICTED_NAME) {
        return html(Bytes::from(super::restricted_page(RESTRICTED_NAME)));
    }
    if name.eq_ignore_ascii_case(WRAPPED_COUNTS_USER.unique_id) {
        let page = super::wrapped_counts_page(&WRAPPED_COUNTS_USER, 64 * 1024);
        return html(Bytes::from(page));
    }
    match super::sample_user(name) {
        Some(user) => html(profile_page(user.unique_id)),
        None => html(Bytes::from(super::not_found_page(Era::Universal, name))),
    }
}

/// As [`answer`], but a sample's profile page has its counts renamed.
async fn drifted(request: Request) -> Response {
    let sample = request
        .uri()
        .path()
        .strip_prefix("/@")
        .and_then(super::sample_user);
    match sample {
        Some(user) => html(moved_page(user.unique_id)),
        None => answer(request).await,
    }
}

/// A sample's profile page with its counts renamed, built once.
fn moved_page(unique_id: &str) -> Bytes {
    static PAGES: OnceLock<Vec<(&'static str, Bytes)>> = OnceLock::new();
    built_once(&PAGES, unique_id, |u| {
        Bytes::from(super::unknown_counts_page(u, DEFAULT_PAGE_SIZE))
    })
}

/// The moved page of [`MOVED_PAGE_USER`], built once.
fn moved_state_page() -> Bytes {
    static PAGE: OnceLock<Bytes> = OnceLock::new();
    PAGE.get_or_init(|| Bytes::from(super::moved_state_page(&MOVED_PAGE_USER, DEFAULT_PAGE_SIZE)))
        .clone()
}

/// The page without state the stand-in answers `name` with, if it is one of those names.
fn stateless(name: &str) -> Option<String> {
    let is = |other: &str| name.eq_ignore_ascii_case(other);
    if is(SHELL_PAGE_USER.unique_id) {
        return Some(super::stateless_shell_page(true));
    }
    if is(EMBED_ONLY_USER.unique_id) {
        return Some(super::captcha_page(10000));
    }
    if is(CAPTCHA_CONFIG_NAME) {
        return Some(super::captcha_config_page(10000));
    }
    if is(PRIVATE_EMBED_NAME) || is(MISSING_EMBED_NAME) {
        return Some(super::stateless_shell_page(false));
    }
    let (_, reason) = STATELESS_BLOCK_NAMES.iter().find(|(n, _)| is(n))?;
    Some(match *reason {
        "maintenance" => super::maintenance_page(),
        "empty_body" => String::new(),
        "captcha_page" => super::captcha_page(10000),
        _ => super::stateless_shell_page(false),
    })
}

/// The embed page of a public sample; 400 with the error payload naming its case for
/// [`PRIVATE_EMBED_NAME`] and [`MISSING_EMBED_NAME`]; 400 with the older payload, private or
/// missing alike, for anyone else.
fn embed(name: &str) -> Response {
    if name.eq_ignore_ascii_case(THROTTLED_NAME) {
        return throttled();
    }
    for (coded, code) in [
        (PRIVATE_EMBED_NAME, EMBED_PRIVATE_CODE),
        (MISSING_EMBED_NAME, EMBED_MISSING_CODE),
    ] {
        if name.eq_ignore_ascii_case(coded) {
            let page = super::embed_coded_error_page(name, code);
            return bad_request(html(Bytes::from(page)));
        }
    }
    let user = super::sample_users()
        .into_iter()
        .chain(super::embed_users())
        .find(|u| u.unique_id.eq_ignore_ascii_case(name) && !u.private);
    match user {
        Some(user) => html(Bytes::from(super::embed_page(&user))),
        None => bad_request(html(Bytes::from(super::embed_error_page(name)))),
    }
}

/// `response` with the status the embed sends its error payload with.
fn bad_request(mut response: Response) -> Response {
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response
}

/// A sample's profile page, built once.
fn profile_page(unique_id: &str) -> Bytes {
    static PAGES: OnceLock<Vec<(&'static str, Bytes)>> = OnceLock::new();
    built_once(&PAGES, unique_id, |u| {
        Bytes::from(super::profile_page(Era::Universal, u, DEFAULT_PAGE_SIZE))
    })
}

/// `unique_id`'s page of the kind `build` writes (empty for a name that is no sample): every
/// sample's is built into `pages` on first use, so the stand-in answers without formatting.
fn built_once(
    pages: &'static OnceLock<Vec<(&'static str, Bytes)>>,
    unique_id: &str,
    build: impl Fn(&SampleUser) -> Bytes,
) -> Bytes {
    pages
        .get_or_init(|| {
            super::sample_users()
                .into_iter()
                .map(|u| (u.unique_id, build(&u)))
                .collect()
        })
        .iter()
        .find(|(id, _)| *id == unique_id)
        .map(|(_, page)| page.clone())
        .unwrap_or_default()
}
