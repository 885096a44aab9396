//! What every platform's invented samples share: the [`Samples`] contract, JSON string
//! literals as the samples write them, and the loopback server a stand-in runs on.
//!
//! Each platform's folder has a `samples/` of its own: invented people and numbers in every
//! page shape the platform has used, and a stand-in that serves them as the platform would.
//! `profile-lookup demo`, the integration tests, the benchmarks and the load scripts all talk
//! to these stand-ins, so the service is exercised end to end with no network. Nothing there
//! comes from a real capture.

pub mod drift;
pub(crate) mod json_text;

use std::net::SocketAddr;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use tokio::net::TcpListener;

/// A name every stand-in answers with HTTP 429, to show `upstream_blocked`.
pub const THROTTLED_NAME: &str = "throttled.demo";

/// One platform's samples, as the demo and the tests use them.
pub trait Samples {
    /// The source [`Samples::drifted_stand_in`] serves in a moved shape.
    const DRIFTED_SOURCE: &'static str;

    /// The platform's stand-in: a router that answers the platform's requests with the
    /// invented samples (a profile, a private one, a missing one, a throttled one, …).
    fn stand_in() -> Router;

    /// The stand-in as it would be after the platform moved one of its documents: the
    /// samples' documents of [`Samples::DRIFTED_SOURCE`] in a shape no reader knows (fetched
    /// fine, unreadable), every other answer as [`Samples::stand_in`] gives it. The demo's
    /// drift switch ([`drift`]) and the canary's tests serve it.
    fn drifted_stand_in() -> Router;

    /// The lookups the demo suggests for this platform, each a name its stand-in serves and
    /// what it shows.
    fn demo_calls() -> Vec<DemoCall>;

    /// The accounts the demo's canary watches: long-lived samples of each kind the stand-in
    /// serves (public, private, business where the platform has them).
    fn canary_accounts() -> Vec<&'static str>;
}

/// One lookup the demo's banner suggests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DemoCall {
    /// The username to look up (as the caller may spell it).
    pub username: String,
    /// What the answer shows, in a few words.
    pub shows: &'static str,
}

impl DemoCall {
    /// A suggested lookup of `username` that shows `shows`.
    pub fn new(username: impl Into<String>, shows: &'static str) -> Self {
        Self {
            username: username.into(),
            shows,
        }
    }
}

/// Serves `router` on an ephemeral loopback port; returns where.
pub async fn spawn(router: Router) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Ok(addr)
}

/// An HTML answer.
pub(crate) fn html(body: Bytes) -> Response {
    typed(body, "text/html; charset=utf-8")
}

/// A JSON answer.
pub(crate) fn json(body: Bytes) -> Response {
    typed(body, "application/json; charset=utf-8")
}

fn typed(body: Bytes, content_type: &'static str) -> Response {
    let mut response = Response::new(Body::from(body));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// The platforms' throttle: 429 with a short `Retry-After`.
pub(crate) fn throttled() -> Response {
    (
        StatusCode::TOO_MANY_REQUESTS,
        // One second, so the demo's single retry waits briefly and the line answers at once.
        [(header::RETRY_AFTER, "1")],
        "Please wait a few minutes before you try again.",
    )
        .into_response()
}
