//! Upstreams the suites play the platforms with, beyond the stand-ins themselves: one fixed
//! answer (of any media type), a stand-in made slow, both stand-ins on one host, one router
//! for some paths and another for the rest, and a stand-in a test can switch between
//! answering, saying every name is gone, and failing.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use tower::ServiceExt;

/// Answers every request with `status` and no body.
pub fn status(status: StatusCode) -> Router {
    Router::new().fallback(move || async move { status })
}

/// Answers every request with `status` and `body` as `text/html`.
pub fn fixed(status: StatusCode, body: impl Into<String>) -> Router {
    typed(status, "text/html", body)
}

/// Answers every request with `status` and `body` as `content_type` (the photo-share JSON as
/// `application/json`, or as the `text/javascript` it is sometimes sent as).
pub fn typed(status: StatusCode, content_type: &'static str, body: impl Into<String>) -> Router {
    let body = body.into();
    Router::new().fallback(move || {
        let body = body.clone();
        async move { (status, [(header::CONTENT_TYPE, content_type)], body).into_response() }
    })
}

/// Answers every request with `status` and `body` as axum sends a string (`text/plain`).
pub fn plain(status: StatusCode, body: impl Into<String>) -> Router {
    let body = body.into();
    Router::new().fallback(move || {
        let body = body.clone();
        async move { (status, body).into_response() }
    })
}

/// Answers every request with what `answer` builds.
pub fn always<F>(answer: F) -> Router
where
    F: Fn() -> Response + Clone + Send + Sync + 'static,
{
    Router::new().fallback(move || {
        let answer = answer.clone();
        async move { answer() }
    })
}

/// `router`, answering every request after `delay`, so that lookups overlap.
pub fn slow(router: Router, delay: Duration) -> Router {
    router.layer(axum::middleware::from_fn(
        move |request: Request, next: axum::middleware::Next| async move {
            tokio::time::sleep(delay).await;
            next.run(request).await
        },
    ))
}

/// `matched` for the requests whose path starts with `prefix`, `rest` for the others: the
/// photo-share JSON (`/api/`) or the short-video embed (`/embed/`) apart from the page.
pub fn split(prefix: &'static str, matched: Router, rest: Router) -> Router {
    Router::new().fallback(move |request: Request| {
        let router = if request.uri().path().starts_with(prefix) {
            matched.clone()
        } else {
            rest.clone()
        };
        async move { router.oneshot(request).await.into_response() }
    })
}

/// Both platforms' stand-ins on one host: short-video's for the paths of its pages (`/@name`),
/// photo-share's for every other.
pub fn both_platforms() -> Router {
    split(
        "/@",
        stand_in::short_video::router(),
        stand_in::photo_share::router(),
    )
}

/// The short-video page of the public sample behind the WAF challenge whose answer is
/// `answer`: the challenge until a request carries the cookie that answers it.
pub fn behind_the_waf(answer: u32) -> Router {
    use stand_in::short_video as sv;
    let page = sv::profile_page(sv::Era::Universal, &sv::PUBLIC_USER, 64 * 1024);
    Router::new().fallback(move |request: Request| {
        let page = page.clone();
        async move {
            let cookie = request
                .headers()
                .get(header::COOKIE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            if sv::waf_cookie_is_valid(cookie, answer) {
                (StatusCode::OK, page).into_response()
            } else {
                (StatusCode::OK, sv::waf_challenge_page(answer)).into_response()
            }
        }
    })
}

/// `router` with every request's path and query replaced by `target`.
pub fn rewritten(router: Router, target: &'static str) -> Router {
    router.layer(axum::middleware::from_fn(
        move |mut request: Request, next: axum::middleware::Next| {
            *request.uri_mut() = target.parse().unwrap();
            next.run(request)
        },
    ))
}

/// Which of a [`switchable`] upstream's routers answers; shared with the upstream it made.
#[derive(Clone, Default)]
pub struct Switch(Arc<AtomicUsize>);

impl Switch {
    /// From now on the router at `index` answers.
    pub fn set(&self, index: usize) {
        self.0.store(index, Ordering::SeqCst);
    }
}

/// An upstream answering with one of `routers` at a time, the first until its [`Switch`] says
/// otherwise.
pub fn switchable(routers: Vec<Router>) -> (Router, Switch) {
    let switch = Switch::default();
    let at = switch.clone();
    let router = Router::new().fallback(move |request: Request| {
        let router = routers[at.0.load(Ordering::SeqCst)].clone();
        async move { router.oneshot(request).await.into_response() }
    });
    (router, switch)
}

/// [`Switch`] positions of [`found_gone_failing`]: the platform answers as usual.
pub const FOUND: usize = 0;
/// The platform says every name is gone.
pub const GONE: usize = 1;
/// The platform fails every request (503).
pub const FAILING: usize = 2;

/// `found`, or `gone`, or 503 to everything, as the [`Switch`] says ([`FOUND`], [`GONE`],
/// [`FAILING`]).
pub fn found_gone_failing(found: Router, gone: Router) -> (Router, Switch) {
    switchable(vec![found, gone, status(StatusCode::SERVICE_UNAVAILABLE)])
}

/// The short-video stand-in as [`found_gone_failing`], a gone name being its not-found page.
pub fn short_video_found_gone_failing() -> (Router, Switch) {
    let router = stand_in::short_video::router;
    found_gone_failing(router(), rewritten(router(), "/@nobody.here.at.all"))
}
