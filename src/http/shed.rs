//! Load shedding and the request deadline.
//!
//! When `server.max_in_flight` lookups are already being handled, the next one is answered at
//! once with 503 `overloaded` and a `Retry-After`, instead of queueing without bound. Every
//! lookup also has a total deadline (`server.request_timeout_ms`), so no caller waits forever
//! whatever the platform does. Only the lookup routes pass through here: operator endpoints
//! answer from memory and must keep answering when the replica is busy.

use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::AppState;

/// Middleware: admits the request if there is room, within the deadline.
pub async fn shed_and_deadline(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let Ok(_slot) = state.in_flight().try_acquire() else {
        return ApiError::Overloaded {
            retry_after: Duration::from_secs(1),
        }
        .into_response();
    };
    match tokio::time::timeout(state.request_deadline(), next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::UpstreamUnavailable.into_response(),
    }
}
