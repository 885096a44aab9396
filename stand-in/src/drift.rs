//! The drift switch: a stand-in that serves its platform as it is, or as it would be after the
//! platform moved one of its documents ([`StandIn::drifted_router`](crate::StandIn::drifted_router)),
//! switched while it runs. The demo turns it on after `--drift-after` (and off again after as
//! long), and each stand-in takes `POST /__drift/on` and `POST /__drift/off` (`GET /__drift`
//! says which it serves): on the stand-in only, never on the service.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tower::ServiceExt;

/// The control path on a stand-in.
pub const CONTROL_PATH: &str = "/__drift";

/// Whether a stand-in serves its drifted shape; clones share one switch.
#[derive(Clone, Debug, Default)]
pub struct DriftSwitch(Arc<AtomicBool>);

impl DriftSwitch {
    /// Turns the drifted shape on or off.
    pub fn set(&self, on: bool) {
        self.0.store(on, Ordering::Relaxed);
    }

    /// Whether the drifted shape is served.
    pub fn is_on(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// `normal` or `drifted`, as `switch` says, with the switch's control routes.
pub fn switchable(normal: Router, drifted: Router, switch: DriftSwitch) -> Router {
    let serve = {
        let switch = switch.clone();
        move |request: Request| {
            let router = if switch.is_on() {
                drifted.clone()
            } else {
                normal.clone()
            };
            async move {
                match router.oneshot(request).await {
                    Ok(response) => response,
                    Err(never) => match never {},
                }
            }
        }
    };
    Router::new()
        .route(CONTROL_PATH, get(shown))
        .route(&format!("{CONTROL_PATH}/on"), post(turn_on))
        .route(&format!("{CONTROL_PATH}/off"), post(turn_off))
        .with_state(switch)
        .fallback(serve)
}

async fn shown(State(switch): State<DriftSwitch>) -> Response {
    say(&switch)
}

async fn turn_on(State(switch): State<DriftSwitch>) -> Response {
    switch.set(true);
    say(&switch)
}

async fn turn_off(State(switch): State<DriftSwitch>) -> Response {
    switch.set(false);
    say(&switch)
}

fn say(switch: &DriftSwitch) -> Response {
    let body = if switch.is_on() {
        "{\"drift\":\"on\"}"
    } else {
        "{\"drift\":\"off\"}"
    };
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_call::call;
    use axum::http::Method;

    #[tokio::test]
    async fn the_switch_picks_the_router_and_its_routes_turn_it() {
        let normal = Router::new().fallback(|| async { "normal" });
        let drifted = Router::new().fallback(|| async { "drifted" });
        let switch = DriftSwitch::default();
        let router = switchable(normal, drifted, switch.clone());
        assert_eq!(call(&router, Method::GET, "/@x").await.body, "normal");
        assert_eq!(
            call(&router, Method::POST, "/__drift/on").await.body,
            "{\"drift\":\"on\"}"
        );
        assert!(switch.is_on());
        assert_eq!(call(&router, Method::GET, "/@x").await.body, "drifted");
        // A photo-share page of a user called `__drift` is not the control route.
        assert_eq!(
            call(&router, Method::GET, "/__drift/").await.body,
            "drifted"
        );
        call(&router, Method::POST, "/__drift/off").await;
        assert_eq!(call(&router, Method::GET, "/@x").await.body, "normal");
        assert_eq!(
            call(&router, Method::GET, "/__drift").await.body,
            "{\"drift\":\"off\"}"
        );
    }
}
