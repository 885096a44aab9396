//! The sample upstream: a loopback stand-in for both platforms, serving the invented samples.
//!
//! `profile-lookup demo`, the integration tests and the load scripts all talk to this, so the
//! service is exercised end to end with no network. Pages are built once and served from
//! memory, at full size and with noise, in the current page shape of each platform.

use std::net::SocketAddr;
use std::sync::OnceLock;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use tokio::net::TcpListener;

use super::samples::{photo_share as ps, short_video as sv};

/// A name both sample platforms answer with HTTP 429, to show `upstream_blocked`.
pub const THROTTLED_NAME: &str = "throttled.demo";

/// Serves `router` on an ephemeral loopback port; returns where.
pub async fn spawn(router: Router) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Ok(addr)
}

/// The short-video stand-in: `GET /@{name}` → a profile page, a not-found page, or a 429.
pub fn short_video_router() -> Router {
    Router::new().fallback(|request: Request| async move {
        let path = request.uri().path();
        let Some(name) = path.strip_prefix("/@") else {
            return StatusCode::NOT_FOUND.into_response();
        };
        if name.eq_ignore_ascii_case(THROTTLED_NAME) {
            return throttled();
        }
        match sv::sample_user(name) {
            Some(user) => html(short_video_page(user.unique_id)),
            None => html(Bytes::from(sv::not_found_page(sv::Era::Universal, name))),
        }
    })
}

/// The photo-share stand-in: the profile JSON endpoint and the profile page.
pub fn photo_share_router() -> Router {
    Router::new().fallback(|request: Request| async move {
        let path = request.uri().path();
        if path == "/api/v1/users/web_profile_info/" {
            let name = request
                .uri()
                .query()
                .and_then(|q| {
                    url::form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "username")
                })
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default();
            if name.eq_ignore_ascii_case(THROTTLED_NAME) {
                return throttled();
            }
            return match photo_share_user(&name) {
                Some(user) => json(photo_share_json(user.username)),
                None => json(Bytes::from(ps::user_null_json())),
            };
        }
        let name = path.trim_matches('/');
        if name.eq_ignore_ascii_case(THROTTLED_NAME) {
            return throttled();
        }
        match photo_share_user(name) {
            Some(user) => html(Bytes::from(ps::xig_profile_page(
                &user,
                sv::DEFAULT_PAGE_SIZE,
            ))),
            None => {
                let mut response = html(Bytes::from(ps::not_found_page()));
                *response.status_mut() = StatusCode::NOT_FOUND;
                response
            }
        }
    })
}

/// The photo-share sample accounts, by name (case-insensitive).
pub fn photo_share_user(name: &str) -> Option<ps::SampleUser> {
    [ps::PUBLIC_USER, ps::PRIVATE_USER]
        .into_iter()
        .find(|u| u.username.eq_ignore_ascii_case(name))
}

fn short_video_page(unique_id: &str) -> Bytes {
    static PAGES: OnceLock<Vec<(&'static str, Bytes)>> = OnceLock::new();
    let pages = PAGES.get_or_init(|| {
        sv::sample_users()
            .into_iter()
            .map(|u| {
                (
                    u.unique_id,
                    Bytes::from(sv::profile_page(
                        sv::Era::Universal,
                        &u,
                        sv::DEFAULT_PAGE_SIZE,
                    )),
                )
            })
            .collect()
    });
    pages
        .iter()
        .find(|(id, _)| *id == unique_id)
        .map(|(_, page)| page.clone())
        .unwrap_or_default()
}

fn photo_share_json(username: &str) -> Bytes {
    static DOCS: OnceLock<Vec<(&'static str, Bytes)>> = OnceLock::new();
    let docs = DOCS.get_or_init(|| {
        [ps::PUBLIC_USER, ps::PRIVATE_USER]
            .into_iter()
            .map(|u| (u.username, Bytes::from(ps::web_profile_info(&u, 64 * 1024))))
            .collect()
    });
    docs.iter()
        .find(|(name, _)| *name == username)
        .map(|(_, doc)| doc.clone())
        .unwrap_or_default()
}

fn html(body: Bytes) -> Response {
    typed(body, "text/html; charset=utf-8")
}

fn json(body: Bytes) -> Response {
    typed(body, "application/json; charset=utf-8")
}

fn typed(body: Bytes, content_type: &'static str) -> Response {
    let mut response = Response::new(Body::from(body));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn throttled() -> Response {
    (
        StatusCode::TOO_MANY_REQUESTS,
        // One second, so the demo's single retry waits briefly and the line answers at once.
        [(header::RETRY_AFTER, "1")],
        "Please wait a few minutes before you try again.",
    )
        .into_response()
}
