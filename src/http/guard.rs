//! The gate of the lookup routes: who is calling ([`auth`]), then whether their quota allows
//! it ([`quota`]).
//!
//! One middleware runs both checks in order, so the two cost one layer (one service clone and
//! one boxed future per request) instead of two on the hottest path of the service.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::state::AppState;
use crate::{auth, quota};

/// Middleware: 401 without a configured key, 429 over its quota, else the handler; limited
/// responses carry the `RateLimit` headers.
pub async fn authenticate_and_limit(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let key: auth::KeyId = match state.keys().authenticate(request.headers()) {
        Ok(key) => key,
        Err(refused) => return refused.into_response(),
    };
    let limiter: &quota::KeyLimiter = state.limiter();
    let (mut response, quota) = match limiter.check(key).await {
        Ok(quota) => (next.run(request).await, quota),
        Err((over, quota)) => (over.into_response(), quota),
    };
    limiter.stamp(&mut response, quota);
    response
}
