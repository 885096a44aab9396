//! Sending one request through the gate and the fetch's route lease, and what a fetch ends
//! as when nothing could be sent.

use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use url::Url;

use super::Mode;
use crate::blame::{Kind, Party};
use crate::platform::{Failure, Lookup};
use crate::upstream::egress::{PROXY_AUTH, PROXY_FAILED, RouteLease, Switch, is_proxy_failure};
use crate::upstream::gate::{Gate, Refusal};
use crate::upstream::{Cause, Form, Response, UpstreamError};

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

/// The judge of a request that is never evidence about anyone (a complement of a profile
/// already read, a rediscovery read): whatever befalls it is nobody's.
pub(super) fn nobody(_: Kind, _: &'static str) -> Party {
    Party::Nobody
}

/// Sends one request (a GET of `url`, or a POST of `form` to it) through the platform's gate
/// and the fetch's route, counting it.
///
/// On a proxy route, a failure of the proxy itself (see [`is_proxy_failure`], or a 407 from an
/// HTTP proxy) is the route's alone (`judge` records it so; it is never evidence about the
/// platform): the proxy rests, is logged at WARN with the OS error, and the request goes again
/// at once through another one. When every proxy failed so, the platform was never asked: 500
/// `upstream_unavailable` naming the proxies' positions and the errors, never a block. A route
/// that gave no response head in time is left for another ([`RouteLease::leave_silent`]),
/// resting only when `judge` says the silence is the route's; when no other route is left, the
/// time-out is the answer.
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
    judge: &(dyn Fn(Kind, &'static str) -> Party + Sync),
    until: Deadline,
) -> Sent {
    let mut proxy_failures: Vec<String> = Vec::new();
    loop {
        if let Some(wait) = route.exhausted() {
            return Sent::Refused(proxies_resting(wait));
        }
        // No attempt but the first starts whose head deadline falls after the lookup's: the
        // caller then gets the last block, or the stale copy when one is held, rather than a
        // late answer nobody waits for.
        if route.sent() > 0
            && let Some(left) = until.too_late()
        {
            let why = format!("no time left for another attempt ({left:?})");
            return Sent::Refused(Lookup::Failed(Failure::unavailable(why)));
        }
        let _pass = match gate.pass(mode).await {
            Ok(pass) => pass,
            Err(refusal) => return Sent::Refused(Lookup::Failed(refused(refusal))),
        };
        crate::telemetry::upstream_request(gate.platform());
        let result = route.send(url.clone(), headers(route), form).await;
        if let Some(cause) = result.as_ref().err().and_then(UpstreamError::cause) {
            crate::telemetry::upstream_failure(gate.platform(), cause.label());
        }
        let failure = match &result {
            Err(UpstreamError::NoHead(_)) => {
                let rest = judge(Kind::Silent, "silent") == Party::Route;
                if route.leave_silent(rest).await {
                    continue;
                }
                return sent(result);
            }
            Err(err) if is_proxy_failure(err) => {
                let cause = err.cause().unwrap_or(Cause::Proxy);
                proxy_failed(route, &mut proxy_failures, cause, &err.to_string());
                PROXY_FAILED
            }
            Ok(r) if r.status == StatusCode::PROXY_AUTHENTICATION_REQUIRED => {
                proxy_failed(
                    route,
                    &mut proxy_failures,
                    Cause::Proxy,
                    "HTTP 407 from the proxy",
                );
                PROXY_AUTH
            }
            _ => return sent(result),
        };
        if !route.is_proxied() {
            return sent(result);
        }
        judge(Kind::ProxyFailed, failure);
        match route.rest_and_switch(failure).await {
            Switch::Moved => continue,
            // Every proxy failed as a proxy in this lookup: the platform was never asked.
            Switch::AllResting(_) if !proxy_failures.is_empty() && route.sent_through_none() => {
                let why = format!(
                    "every proxy failed as a proxy, the platform was not asked: {}",
                    proxy_failures.join("; ")
                );
                let cause = Some(Cause::Proxy);
                return Sent::Refused(Lookup::Failed(Failure::Unavailable { why, cause }));
            }
            Switch::AllResting(wait) => return Sent::Refused(proxies_resting(wait)),
            Switch::Direct => return sent(result),
        }
    }
}

/// When a fetch must have its last response head: its start plus the lookup's deadline (a
/// little inside the caller's request deadline), and how long a head may take.
#[derive(Clone, Copy, Debug)]
pub(super) struct Deadline {
    /// The fetch's end.
    pub(super) at: std::time::Instant,
    /// `upstream.head_timeout_ms`.
    pub(super) head: Duration,
}

impl Deadline {
    /// `Some(left)` when an attempt started now could not have its head before the end.
    fn too_late(self) -> Option<Duration> {
        let left = self.at.saturating_duration_since(std::time::Instant::now());
        (left < self.head).then_some(left)
    }
}

/// Notes a proxy's own failure: logged at WARN with its position, the category and the
/// error, kept for the caller's answer should every proxy fail so.
fn proxy_failed(route: &RouteLease<'_>, failures: &mut Vec<String>, cause: Cause, error: &str) {
    let cause = cause.label();
    tracing::warn!(
        proxy = route.label(),
        cause,
        error,
        "the proxy failed as a proxy"
    );
    failures.push(format!("proxy {}: {error}", route.label()));
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

/// The failure of a fetch every proxy of whose platform rests: its `Retry-After` is when the
/// first is usable again (a second at least: never the cool-down when nothing rests).
pub(super) fn resting(wait: Duration) -> Failure {
    Failure::Blocked {
        reason: "proxies_resting",
        retry_after: wait.max(Duration::from_secs(1)),
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
