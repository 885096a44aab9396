//! A switch on a running stand-in: it serves one router or another as the switch says, and
//! takes `POST /__<name>/on`, `POST /__<name>/off` and `GET /__<name>` (which one it serves)
//! on the stand-in only, never on the service. [`drift`](crate::drift) and
//! [`throttle`](crate::throttle) are the two the stand-ins have.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tower::ServiceExt;

/// Whether a switch is on; clones share one switch.
#[derive(Clone, Debug, Default)]
pub struct Switch(Arc<AtomicBool>);

impl Switch {
    /// Turns the switch on or off.
    pub fn set(&self, on: bool) {
        self.0.store(on, Ordering::Relaxed);
    }

    /// Whether the switch is on.
    pub fn is_on(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// `off` or `on`, as `switch` says, with the switch's control routes under `/__<name>`.
pub(crate) fn switched(name: &'static str, off: Router, on: Router, switch: Switch) -> Router {
    let serve = {
        let switch = switch.clone();
        move |request: Request| {
            let router = if switch.is_on() {
                on.clone()
            } else {
                off.clone()
            };
            async move {
                match router.oneshot(request).await {
                    Ok(response) => response,
                    Err(never) => match never {},
                }
            }
        }
    };
    let control = format!("/__{name}");
    let state = Control { name, switch };
    Router::new()
        .route(&control, get(shown))
        .route(&format!("{control}/on"), post(turn_on))
        .route(&format!("{control}/off"), post(turn_off))
        .with_state(state)
        .fallback(serve)
}

/// A switch and the name its control routes and answers carry.
#[derive(Clone)]
struct Control {
    name: &'static str,
    switch: Switch,
}

async fn shown(State(control): State<Control>) -> Response {
    say(&control)
}

async fn turn_on(State(control): State<Control>) -> Response {
    control.switch.set(true);
    say(&control)
}

async fn turn_off(State(control): State<Control>) -> Response {
    control.switch.set(false);
    say(&control)
}

fn say(control: &Control) -> Response {
    let state = if control.switch.is_on() { "on" } else { "off" };
    let body = format!("{{\"{}\":\"{state}\"}}", control.name);
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}
