//! The gate of the lookup routes, as an extractor: a slot among the requests in flight (load
//! shedding), who is calling ([`crate::auth`]), then whether their quota allows it ([`crate::quota`]).
//!
//! An extractor rather than middleware: it runs inside the handler's own future, so the gate
//! costs no service clone and no boxed future per request on the hottest path of the service.
//! When `server.max_in_flight` lookups are already being handled, the next one is answered at
//! once with 503 `overloaded` and a `Retry-After`, instead of queueing without bound. Operator
//! endpoints do not pass here: they answer from memory and must keep answering when the
//! replica is busy.

use std::pin::{Pin, pin};
use std::task::Poll;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::HeaderValue;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;
use tracing::Instrument;

use crate::auth::KeyId;
use crate::error::ApiError;
use crate::state::AppState;
use crate::telemetry::traces::TARGET;

/// A lookup let in: its slot among the requests in flight (held until the answer is built),
/// the caller's quota state for the `RateLimit` headers, and the request's deadline, which
/// counts from the gate (the quota check included).
pub struct Admitted {
    _slot: OwnedSemaphorePermit,
    key: KeyId,
    quota: HeaderValue,
    deadline: Instant,
}

impl FromRequestParts<AppState> for Admitted {
    /// 503 when the replica is full, 401 without a configured key, 429 over its quota (the
    /// last two with the `RateLimit` headers).
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let deadline = Instant::now() + state.request_deadline();
        let Ok(slot) = state.in_flight().try_acquire_owned() else {
            return Err(ApiError::Overloaded {
                retry_after: Duration::from_secs(1),
            }
            .into_response());
        };
        let gate = tracing::info_span!(
            target: TARGET,
            "auth_and_quota",
            profile_lookup.key_id = tracing::field::Empty,
            profile_lookup.quota = tracing::field::Empty,
        );
        let key = gate
            .in_scope(|| state.keys().authenticate(&parts.headers))
            .map_err(IntoResponse::into_response)?;
        // The key's id (never the key: the access log's digest head) on the request's server
        // span and the gate's.
        let key_id = state.keys().log_id(key);
        tracing::Span::current().record("profile_lookup.key_id", key_id);
        gate.record("profile_lookup.key_id", key_id);
        let limiter = state.limiter();
        let check = pin!(limiter.check(key).instrument(gate.clone()));
        let Some(checked) = within(deadline, check).await else {
            gate.record("profile_lookup.quota", "timed_out");
            return Err(ApiError::UpstreamUnavailable(None).into_response());
        };
        gate.record(
            "profile_lookup.quota",
            if checked.is_ok() { "ok" } else { "over" },
        );
        if state.settings().rate_limit.key_id_metrics {
            let result = if checked.is_ok() {
                "admitted"
            } else {
                "rate_limited"
            };
            crate::telemetry::key_request(state.keys().log_id(key), result);
        }
        match checked {
            Ok(quota) => Ok(Admitted {
                _slot: slot,
                key,
                quota,
                deadline,
            }),
            Err((over, quota)) => {
                let mut response = over.into_response();
                limiter.stamp(&mut response, quota);
                response.extensions_mut().insert(key);
                Err(response)
            }
        }
    }
}

impl Admitted {
    /// The caller's key, for a unit more of its quota (a fetch it forces).
    pub fn key(&self) -> KeyId {
        self.key
    }

    /// `work`'s output (a lookup's answer) within what is left of the request deadline, or
    /// `None` once it has passed (the lookup goes on without this caller).
    ///
    /// `work` comes pinned by the caller: a future passed by value is kept once as this
    /// function's argument and again in each future it is handed to, and a lookup's is the
    /// largest part of every request's (a hit's included).
    pub async fn within<F: Future>(&self, work: Pin<&mut F>) -> Option<F::Output> {
        within(self.deadline, work).await
    }

    /// `response` with the caller's `RateLimit` headers: `quota`, the state after a unit more
    /// the lookup took for a fetch the caller forced, or the one the gate took.
    pub fn stamp(
        self,
        state: &AppState,
        mut response: Response,
        quota: Option<HeaderValue>,
    ) -> Response {
        state
            .limiter()
            .stamp(&mut response, quota.unwrap_or(self.quota));
        // For the access log's key id.
        response.extensions_mut().insert(self.key);
        response
    }
}

/// `work`'s output, or `None` once `deadline` has passed. The timer is armed only when `work`
/// does not finish on its first poll: a quota answered from the local lease and a lookup
/// answered from memory (most requests) then cost no timer entry.
async fn within<F: Future>(deadline: Instant, mut work: Pin<&mut F>) -> Option<F::Output> {
    if let Poll::Ready(output) = futures_util::poll!(work.as_mut()) {
        return Some(output);
    }
    tokio::time::timeout_at(deadline, work).await.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn work_done_at_once_is_kept_and_work_past_the_deadline_is_cut() {
        let passed = Instant::now() - Duration::from_secs(1);
        // Finished on the first poll: its output, even with the deadline already gone.
        assert_eq!(within(passed, pin!(async { 7 })).await, Some(7));
        // Not finished: bounded by the deadline.
        let deadline = Instant::now() + Duration::from_millis(50);
        let slow = tokio::time::sleep(Duration::from_secs(5));
        assert_eq!(within(deadline, pin!(slow)).await, None);
        assert!(Instant::now() >= deadline);
        // Finishing after a first pending poll, before the deadline.
        let deadline = Instant::now() + Duration::from_secs(5);
        let later = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            8
        };
        assert_eq!(within(deadline, pin!(later)).await, Some(8));
    }
}
