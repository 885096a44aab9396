//! The short-video stand-in: `GET /@{name}` answers a sample's profile page (the current
//! page shape, full size), the not-found page, or the platform's throttle.

use std::sync::OnceLock;

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

use super::{DEFAULT_PAGE_SIZE, Era, NOT_FOUND_USER, PRIVATE_USER, PUBLIC_USER};
use crate::platform::samples::{self, DemoCall, THROTTLED_NAME, html, throttled};
use crate::platform::short_video::ShortVideo;

impl samples::Samples for ShortVideo {
    fn stand_in() -> Router {
        Router::new().fallback(answer)
    }

    fn demo_calls() -> Vec<DemoCall> {
        vec![
            DemoCall::new(PUBLIC_USER.unique_id, "a public user"),
            DemoCall::new(
                PRIVATE_USER.unique_id.to_uppercase(),
                "a private user, in capitals (names are case-insensitive)",
            ),
            DemoCall::new(NOT_FOUND_USER, "a missing user (404)"),
            DemoCall::new("..%2Fadmin", "a bad name (400 invalid_username)"),
        ]
    }
}

async fn answer(request: Request) -> Response {
    let path = request.uri().path();
    let Some(name) = path.strip_prefix("/@") else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if name.eq_ignore_ascii_case(THROTTLED_NAME) {
        return throttled();
    }
    match super::sample_user(name) {
        Some(user) => html(profile_page(user.unique_id)),
        None => html(Bytes::from(super::not_found_page(Era::Universal, name))),
    }
}

/// A sample's profile page, built once.
fn profile_page(unique_id: &str) -> Bytes {
    static PAGES: OnceLock<Vec<(&'static str, Bytes)>> = OnceLock::new();
    let pages = PAGES.get_or_init(|| {
        super::sample_users()
            .into_iter()
            .map(|u| {
                let page = super::profile_page(Era::Universal, &u, DEFAULT_PAGE_SIZE);
                (u.unique_id, Bytes::from(page))
            })
            .collect()
    });
    pages
        .iter()
        .find(|(id, _)| *id == unique_id)
        .map(|(_, page)| page.clone())
        .unwrap_or_default()
}
