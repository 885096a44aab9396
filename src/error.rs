//! The API's errors and their problem documents (RFC 9457).
//!
//! One enum, one place that decides status, stable `code`, `title` and extra headers. Bodies are
//! built only from what the enum holds, which never includes an API key, an upstream body or a
//! file path. Nothing here logs: the access-log layer writes one line per request.

use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::platform::Failure;
use crate::upstream::Cause;

/// Media type of every error body.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// Why a request was not authenticated: the 401's `detail` and its RFC 6750 challenge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AuthFailure {
    /// No `Authorization` header at all.
    #[error("an API key is required: send `Authorization: Bearer <key>`")]
    Missing,
    /// An `Authorization` header that is not `Bearer <key>` (another scheme, no key, a tab,
    /// a space or a byte that is not visible ASCII in the key).
    #[error(
        "the Authorization header is malformed: send `Authorization: Bearer <key>`, one space \
         after `Bearer`, the key in visible ASCII characters"
    )]
    Malformed,
    /// A well-formed key this service does not know.
    #[error("the API key is not known to this service")]
    Unknown,
    /// More than one `Authorization` header.
    #[error(
        "more than one Authorization header was sent: send exactly one \
         `Authorization: Bearer <key>`"
    )]
    Duplicate,
}

impl AuthFailure {
    /// The `WWW-Authenticate` challenge (RFC 6750 §3): no `error` when the request carried no
    /// credentials at all (§3.1: the client may not know a key is needed), `invalid_request`
    /// for a malformed or repeated header, `invalid_token` for a key that is not valid.
    pub fn challenge(self) -> &'static str {
        match self {
            AuthFailure::Missing => "Bearer",
            AuthFailure::Malformed | AuthFailure::Duplicate => "Bearer error=\"invalid_request\"",
            AuthFailure::Unknown => "Bearer error=\"invalid_token\"",
        }
    }
}

/// Every error the API answers with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// The username breaks the format rule; the text states the rule.
    #[error("{0}")]
    InvalidUsername(String),
    /// No usable `Authorization: Bearer <key>`, or an unknown key; which of them is the
    /// `detail` (never more about a key than that it is unknown).
    #[error("{0}")]
    Unauthorized(AuthFailure),
    /// The platform says the user does not exist.
    #[error("the platform has no user of that name")]
    ProfileNotFound,
    /// The platform shows this profile only to logged-in viewers (audience controls, age
    /// gates): a fact about the account, so no older copy stands in for it, and it is not
    /// stored as a not-found.
    #[error("the platform shows this profile only to logged-in viewers")]
    ProfileRestricted,
    /// This caller's key exceeded its quota.
    #[error("this API key has used its quota; retry after the time in Retry-After")]
    RateLimited {
        /// When the key has quota again.
        retry_after: Duration,
    },
    /// The platform kept refusing us after retries (or the breaker is open).
    #[error("the platform is refusing requests for now; retry after the time in Retry-After")]
    UpstreamBlocked {
        /// When to try again.
        retry_after: Duration,
    },
    /// The page was fetched but held no readable profile.
    #[error("the platform's page held no profile this service could read")]
    ExtractionFailed,
    /// The platform could not be reached, timed out or sent something we refuse to read; with
    /// the category of the transport failure when it was one (in words in the `detail`, never
    /// an address, a host or a credential).
    #[error("the platform could not be reached or did not answer in time{}", because(*.0))]
    UpstreamUnavailable(Option<Cause>),
    /// The platform withholds the profile from the network region we ask from (every route
    /// tried).
    #[error(
        "the platform withholds this profile from the service's network region; retry after \
         the time in Retry-After"
    )]
    RegionLocked {
        /// When a route in another region may be free to try again.
        retry_after: Duration,
    },
    /// Load shedding: too many requests in flight.
    #[error("the service is at capacity; retry after the time in Retry-After")]
    Overloaded {
        /// When to try again.
        retry_after: Duration,
    },
    /// The caller sent `Cache-Control: only-if-cached` and nothing stored suits it; nothing
    /// was asked of the platform (RFC 9111 §5.2.1.7).
    #[error("only-if-cached: no stored answer suits this request, and the platform was not asked")]
    NotCached,
    /// No route matches the path.
    #[error("no such resource")]
    NotFound,
    /// The route exists but only answers GET and HEAD.
    #[error("this resource answers GET and HEAD only")]
    MethodNotAllowed,
    /// A bug: a handler panicked. Never expected; the panic guard answers with this.
    #[error("the service failed unexpectedly")]
    Internal,
}

impl From<Failure> for ApiError {
    /// The caller-facing error of a failed lookup: the one mapping, for the edge and for
    /// `profile-lookup extract`.
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Blocked { retry_after, .. } | Failure::Withheld { retry_after, .. } => {
                ApiError::UpstreamBlocked { retry_after }
            }
            Failure::RegionLocked { retry_after } => ApiError::RegionLocked { retry_after },
            Failure::Restricted => ApiError::ProfileRestricted,
            Failure::Overloaded { retry_after } => ApiError::Overloaded { retry_after },
            Failure::ExtractionFailed(_) => ApiError::ExtractionFailed,
            Failure::Unavailable { cause, .. } => ApiError::UpstreamUnavailable(cause),
        }
    }
}

impl ApiError {
    /// The HTTP status of the error.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::InvalidUsername(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::ProfileRestricted => StatusCode::FORBIDDEN,
            ApiError::ProfileNotFound | ApiError::NotFound => StatusCode::NOT_FOUND,
            ApiError::RateLimited { .. } | ApiError::UpstreamBlocked { .. } => {
                StatusCode::TOO_MANY_REQUESTS
            }
            ApiError::ExtractionFailed | ApiError::UpstreamUnavailable(_) | ApiError::Internal => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
            ApiError::Overloaded { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::RegionLocked { .. } => StatusCode::UNAVAILABLE_FOR_LEGAL_REASONS,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::NotCached => StatusCode::GATEWAY_TIMEOUT,
        }
    }

    /// The stable machine-readable code callers switch on.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::InvalidUsername(_) => "invalid_username",
            ApiError::Unauthorized(_) => "unauthorized",
            ApiError::ProfileNotFound => "profile_not_found",
            ApiError::ProfileRestricted => "profile_restricted",
            ApiError::RateLimited { .. } => "rate_limited",
            ApiError::UpstreamBlocked { .. } => "upstream_blocked",
            ApiError::ExtractionFailed => "extraction_failed",
            ApiError::UpstreamUnavailable(_) => "upstream_unavailable",
            ApiError::Overloaded { .. } => "overloaded",
            ApiError::RegionLocked { .. } => "region_locked",
            ApiError::NotFound => "not_found",
            ApiError::MethodNotAllowed => "method_not_allowed",
            ApiError::NotCached => "not_cached",
            ApiError::Internal => "internal_error",
        }
    }

    fn title(&self) -> &'static str {
        match self {
            ApiError::InvalidUsername(_) => "Invalid username",
            ApiError::Unauthorized(_) => "Unauthorized",
            ApiError::ProfileNotFound => "Profile not found",
            ApiError::ProfileRestricted => "Profile restricted",
            ApiError::RateLimited { .. } => "Rate limited",
            ApiError::UpstreamBlocked { .. } => "Upstream blocked",
            ApiError::ExtractionFailed => "Extraction failed",
            ApiError::UpstreamUnavailable(_) => "Upstream unavailable",
            ApiError::Overloaded { .. } => "Overloaded",
            ApiError::RegionLocked { .. } => "Region locked",
            ApiError::NotFound => "Not found",
            ApiError::MethodNotAllowed => "Method not allowed",
            ApiError::NotCached => "Not cached",
            ApiError::Internal => "Internal error",
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            ApiError::RateLimited { retry_after }
            | ApiError::UpstreamBlocked { retry_after }
            | ApiError::Overloaded { retry_after }
            | ApiError::RegionLocked { retry_after } => Some(*retry_after),
            _ => None,
        }
    }

    /// The problem document of this error.
    pub fn problem(&self) -> Problem {
        Problem {
            r#type: format!("{PROBLEM_TYPE_BASE}{}", self.code()),
            title: self.title().to_owned(),
            status: self.status().as_u16(),
            detail: self.to_string(),
            code: self.code().to_owned(),
            trace_id: crate::telemetry::trace_context::current(),
        }
    }
}

/// The `detail`'s words for a transport failure's category: `: the connection was refused
/// (refused)`, or nothing.
fn because(cause: Option<Cause>) -> String {
    cause.map_or_else(String::new, |c| format!(": {} ({})", c.words(), c.label()))
}

/// Prefix of every problem `type` URI; the suffix is the `code`.
pub const PROBLEM_TYPE_BASE: &str = "urn:profile-lookup:problem:";

/// An RFC 9457 problem document with this API's `code` extension member.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Problem {
    /// A URI naming the problem type: `urn:profile-lookup:problem:<code>`.
    pub r#type: String,
    /// A short human-readable summary of the problem type.
    pub title: String,
    /// The HTTP status code.
    pub status: u16,
    /// What went wrong with this request, in words.
    pub detail: String,
    /// The stable machine-readable code.
    pub code: String,
    /// The W3C trace id of the request (32 lowercase hex digits): the caller's own when it sent
    /// a `traceparent`, so a support ticket leads to the trace. Absent outside a request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "0af7651916cd43dd8448eb211c80319c")]
    pub trace_id: Option<String>,
}

/// The longest `Retry-After` a caller is ever told (SPEC): an hour, whatever the platform said.
pub const MAX_RETRY_AFTER_SECS: u64 = 3600;

/// Whole seconds for a `Retry-After` header, rounded up and at least 1.
pub fn retry_after_secs(wait: Duration) -> u64 {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    secs.max(1)
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::to_vec(&self.problem()).unwrap_or_default();
        let mut response = (self.status(), body).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if let Some(wait) = self.retry_after() {
            headers.insert(
                header::RETRY_AFTER,
                // The platform's own value may be absurd (`99999999999`): never pass it on.
                HeaderValue::from(retry_after_secs(wait).min(MAX_RETRY_AFTER_SECS)),
            );
        }
        match self {
            ApiError::Unauthorized(why) => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(why.challenge()),
                );
            }
            ApiError::MethodNotAllowed => {
                headers.insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            }
            _ => {}
        }
        response.extensions_mut().insert(self);
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_rounds_up_and_is_never_zero() {
        assert_eq!(retry_after_secs(Duration::ZERO), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(1500)), 2);
        assert_eq!(retry_after_secs(Duration::from_secs(30)), 30);
    }

    #[test]
    fn a_huge_wait_is_told_as_one_hour() {
        let response = ApiError::UpstreamBlocked {
            retry_after: Duration::from_secs(99_999_999_999),
        }
        .into_response();
        assert_eq!(response.headers()[header::RETRY_AFTER], "3600");
    }

    #[test]
    fn an_unavailable_platform_says_the_category_in_words_and_nothing_else() {
        assert_eq!(
            ApiError::UpstreamUnavailable(None).problem().detail,
            "the platform could not be reached or did not answer in time"
        );
        assert_eq!(
            ApiError::UpstreamUnavailable(Some(Cause::Refused))
                .problem()
                .detail,
            "the platform could not be reached or did not answer in time: the connection was \
             refused (refused)"
        );
    }

    #[test]
    fn a_restricted_profile_is_403_without_a_wait() {
        let response = ApiError::ProfileRestricted.into_response();
        assert_eq!(response.status(), StatusCode::FORBIDDEN);
        assert!(!response.headers().contains_key(header::RETRY_AFTER));
        let problem = ApiError::ProfileRestricted.problem();
        assert_eq!(problem.code, "profile_restricted");
        assert_eq!(
            problem.detail,
            "the platform shows this profile only to logged-in viewers"
        );
    }

    #[test]
    fn every_error_has_its_own_code_and_type() {
        let all = [
            ApiError::InvalidUsername("x".into()),
            ApiError::Unauthorized(AuthFailure::Missing),
            ApiError::ProfileNotFound,
            ApiError::ProfileRestricted,
            ApiError::RateLimited {
                retry_after: Duration::from_secs(1),
            },
            ApiError::UpstreamBlocked {
                retry_after: Duration::from_secs(1),
            },
            ApiError::ExtractionFailed,
            ApiError::UpstreamUnavailable(None),
            ApiError::Overloaded {
                retry_after: Duration::from_secs(1),
            },
            ApiError::NotFound,
            ApiError::MethodNotAllowed,
            ApiError::NotCached,
            ApiError::Internal,
        ];
        let codes: std::collections::HashSet<_> = all.iter().map(ApiError::code).collect();
        assert_eq!(codes.len(), all.len());
        for e in &all {
            let p = e.problem();
            assert_eq!(p.status, e.status().as_u16());
            assert!(p.r#type.ends_with(e.code()));
        }
    }
}
