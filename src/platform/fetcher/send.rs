//! Sending one request through the gate and the fetch's route lease, and what a fetch ends
//! as when nothing could be sent.

use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use url::Url;

use super::Mode;
use crate::platform::{Failure, Lookup};
use crate::upstream::egress::{PROXY_AUTH, PROXY_FAILED, RouteLease, Switch, is_proxy_failure};
use crate::upstream::gate::{Gate, Refusal};
use crate::upstream::{Form, Response, UpstreamError};

/// What became of one request [`send`] was asked to make.
pub(super) enum Sent {
    /// The platform answered (any status).
    Answered(Response),
    /// The request went out and no readable answer came back.
    Failed(UpstreamError),
    /// The request was not sent: the gate refused it, or every proxy rests. The lookup's
    /// answer is this.
    Refused(Lookup),
}

/// Sends one request (a GET of `url`, or a POST of `form` to it) through the platform's gate
/// and the fetch's route, counting it.
///
/// On a proxy route, a failure of the proxy itself (see [`is_proxy_failure`], or a 407 from an
/// HTTP proxy) leaves that proxy (resting it, unless the lease rests nothing) and the request
/// goes again at once through another one; when none is left, the answer is 429
/// `upstream_blocked` until the first proxy is back. A route that gave no answer in time is
/// left too, unrested ([`RouteLease::leave_silent`]: it rests only once another route
/// answers); when no other route is left, the time-out is the answer.
///
/// `headers` builds the request's headers for the route it is about to go through, on every
/// attempt: what a site derives from a route's session (the `X-CSRFToken` echoing that route's
/// cookie) must never travel through the next route after a move.
pub(super) async fn send(
    route: &RouteLease<'_>,
    gate: &Gate,
    mode: Mode,
    (url, form): (&Url, Option<&Form>),
    headers: impl Fn(&RouteLease<'_>) -> HeaderMap,
) -> Sent {
    loop {
        if let Some(wait) = route.exhausted() {
            return Sent::Refused(proxies_resting(wait));
        }
        let _pass = match gate.pass(mode).await {
            Ok(pass) => pass,
            Err(refusal) => return Sent::Refused(Lookup::Failed(refused(refusal))),
        };
        crate::telemetry::upstream_request(gate.platform());
        let result = route.send(url.clone(), headers(route), form).await;
        let failure = match &result {
            Err(UpstreamError::Timeout(_)) => {
                if route.leave_silent().await {
                    continue;
                }
                return sent(result);
            }
            Err(err) if is_proxy_failure(err) => PROXY_FAILED,
            Ok(r) if r.status == StatusCode::PROXY_AUTHENTICATION_REQUIRED => PROXY_AUTH,
            _ => return sent(result),
        };
        if !route.is_proxied() {
            return sent(result);
        }
        match route.rest_and_switch(failure).await {
            Switch::Moved => continue,
            Switch::AllResting(wait) => return Sent::Refused(proxies_resting(wait)),
            Switch::Direct => return sent(result),
        }
    }
}

fn sent(result: Result<Response, UpstreamError>) -> Sent {
    match result {
        Ok(response) => Sent::Answered(response),
        Err(err) => Sent::Failed(err),
    }
}

/// What a fetch the gate refused answers: an open breaker is the platform's refusal
/// (`upstream_blocked`), a spent outbound budget is ours (`overloaded`).
pub(super) fn refused(refusal: Refusal) -> Failure {
    match refusal {
        Refusal::BreakerOpen(wait) => Failure::Blocked {
            reason: "breaker_open",
            retry_after: wait,
        },
        Refusal::Busy(retry_after) => Failure::Overloaded { retry_after },
    }
}

/// The answer when every proxy of a platform rests: 429 until the first is back.
pub(super) fn proxies_resting(wait: Duration) -> Lookup {
    Lookup::Failed(resting(wait))
}

/// The failure of a fetch every proxy of whose platform rests.
pub(super) fn resting(wait: Duration) -> Failure {
    Failure::Blocked {
        reason: "proxies_resting",
        retry_after: wait,
    }
}

/// The status and size of the last answer a fetch got: the evidence a probe reports.
#[derive(Debug, Default)]
pub(super) struct Seen {
    /// The last HTTP status, 0 before any answer.
    status: AtomicU16,
    /// The last answer's body length (after decompression).
    bytes: AtomicU64,
}

impl Seen {
    /// Keeps `response`'s status and size (the last one wins).
    pub(super) fn note(&self, response: &Response) {
        self.status
            .store(response.status.as_u16(), Ordering::Relaxed);
        let len = u64::try_from(response.body.len()).unwrap_or(u64::MAX);
        self.bytes.store(len, Ordering::Relaxed);
    }

    /// The last answer's HTTP status; `None` when nothing was answered.
    pub(super) fn status(&self) -> Option<u16> {
        Some(self.status.load(Ordering::Relaxed)).filter(|s| *s != 0)
    }

    /// The last answer's body length in bytes (0 when nothing was answered).
    pub(super) fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}
