//! The photo-share stand-in: the profile JSON endpoint and the profile page of the samples,
//! `"user": null` and the page's 404 for anyone else, and the platform's throttle.

use std::sync::OnceLock;

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;

use super::{DEFAULT_PAGE_SIZE, NOT_FOUND_NAME, PRIVATE_USER, PUBLIC_USER, SampleUser};
use crate::platform::photo_share::PhotoShare;
use crate::platform::samples::{self, DemoCall, THROTTLED_NAME, html, json, throttled};

impl samples::Samples for PhotoShare {
    fn stand_in() -> Router {
        Router::new().fallback(answer)
    }

    fn demo_calls() -> Vec<DemoCall> {
        vec![
            DemoCall::new(PUBLIC_USER.username, "a public user"),
            DemoCall::new(PRIVATE_USER.username, "a private user"),
            DemoCall::new(NOT_FOUND_NAME, "a missing user (404)"),
            DemoCall::new(
                THROTTLED_NAME,
                "a throttling platform: 429 upstream_blocked with Retry-After, after one retry (~1 s)",
            ),
        ]
    }
}

async fn answer(request: Request) -> Response {
    let path = request.uri().path();
    if path == "/api/v1/users/web_profile_info/" {
        let name = request
            .uri()
            .query()
            .and_then(|q| url::form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "username"))
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        if name.eq_ignore_ascii_case(THROTTLED_NAME) {
            return throttled();
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

/// The photo-share sample accounts, by name (case-insensitive).
pub fn sample_user(name: &str) -> Option<SampleUser> {
    [PUBLIC_USER, PRIVATE_USER]
        .into_iter()
        .find(|u| u.username.eq_ignore_ascii_case(name))
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
