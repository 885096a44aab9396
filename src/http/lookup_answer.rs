//! How what the cache served becomes the caller's answer: the status and body, and the
//! freshness headers (`Cache-Control`, a true `Age`, RFC 9211's `Cache-Status`, the deprecated
//! `x-cache`) with `x-source`; and the access-log fields that go with it.

use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::cache::{Entry, Forward, How, Served, Stored};
use crate::error::ApiError;
use crate::header_text::{self, Part};
use crate::http::access_log::LookupLog;
use crate::lookup::Answer;
use crate::platform::fetcher::Fetched;

/// A lookup's answer as HTTP, its access-log fields, and the caller's quota state when the
/// lookup took a unit more (for the `RateLimit` headers).
pub(super) fn respond(answer: Answer) -> (Response, LookupLog, Option<HeaderValue>) {
    let (response, log, quota) = match answer {
        Answer::Served { served, quota } => {
            let (response, log) = answer_served(served);
            (response, log, quota)
        }
        // Unpaid: the quota's own 429, with its wait.
        Answer::Unpaid { over, quota } => (
            not_fetched(over, "profile-lookup; detail=quota"),
            NOT_FETCHED,
            Some(quota),
        ),
    };
    (response, log, quota)
}

/// The answer and the access-log fields of what the cache served.
fn answer_served(served: Served) -> (Response, LookupLog) {
    match served {
        Served::Stored { entry, how, ttl } => {
            // A fetch joined from another caller is logged as a hit (as `x-cache` says): its
            // upstream work is the caller's that started it.
            let own_fetch = matches!(
                how,
                How::Fetched {
                    collapsed: false,
                    ..
                }
            );
            let cache = if own_fetch { "miss" } else { "hit" };
            let log = LookupLog {
                cache,
                upstream: if own_fetch {
                    outcome_label(&entry.value)
                } else {
                    "-"
                },
                upstream_requests: if own_fetch {
                    entry.upstream_requests
                } else {
                    0
                },
                source: entry.source.unwrap_or("-"),
                blame: "-",
            };
            let status = status_of(&entry.value);
            let cache_status = match how {
                How::Hit => cache_status(&[Part::Text("hit")], Some(ttl)),
                How::Fetched {
                    forward,
                    collapsed,
                    stored,
                } => {
                    let mut parts = [Part::Text(""); 6];
                    parts[0] = Part::Text(forward_param(forward));
                    parts[1] = Part::Text("; fwd-status=");
                    parts[2] = Part::Number(u64::from(status.as_u16()));
                    let mut n = 3;
                    if stored {
                        parts[n] = Part::Text("; stored");
                        n += 1;
                    }
                    if collapsed {
                        parts[n] = Part::Text("; collapsed");
                        n += 1;
                    }
                    cache_status(&parts[..n], Some(ttl))
                }
            };
            (stored_response(&entry, ttl, cache, cache_status), log)
        }
        Served::Stale {
            entry,
            failure,
            ttl,
        } => {
            let log = LookupLog {
                cache: "stale",
                upstream: failure.lookup.label(),
                upstream_requests: failure.upstream_requests,
                source: entry.source.unwrap_or("-"),
                blame: blamed(&failure),
            };
            let status = api_error(&failure).status();
            let cache_status = cache_status(
                &[
                    Part::Text(forward_param(Forward::Stale)),
                    Part::Text("; fwd-status="),
                    Part::Number(u64::from(status.as_u16())),
                    Part::Text("; detail=stale-if-error"),
                    Part::Text(blame_param(&failure)),
                    Part::Text(blamed_or_empty(&failure)),
                ],
                Some(ttl),
            );
            (stored_response(&entry, ttl, "stale", cache_status), log)
        }
        Served::Failed { report, forward } => {
            let log = LookupLog {
                cache: "miss",
                upstream: report.lookup.label(),
                upstream_requests: report.upstream_requests,
                source: report.source.unwrap_or("-"),
                blame: blamed(&report),
            };
            let mut response = api_error(&report).into_response();
            let status = response.status();
            let headers = response.headers_mut();
            if let Some(source) = report.source {
                headers.insert(X_SOURCE.clone(), HeaderValue::from_static(source));
            }
            headers.insert(
                CACHE_STATUS.clone(),
                cache_status(
                    &[
                        Part::Text(forward_param(forward)),
                        Part::Text("; fwd-status="),
                        Part::Number(u64::from(status.as_u16())),
                        Part::Text(blame_param(&report)),
                        Part::Text(blamed_or_empty(&report)),
                    ],
                    None,
                ),
            );
            (response, log)
        }
        Served::NotCached => (
            not_fetched(ApiError::NotCached, "profile-lookup; detail=only-if-cached"),
            NOT_FETCHED,
        ),
    }
}

/// The API error of a fetch that failed (one without a failure is the platform unavailable:
/// the cache hands only failures here).
fn api_error(fetched: &Fetched) -> ApiError {
    fetched
        .failure()
        .cloned()
        .map_or(ApiError::UpstreamUnavailable(None), ApiError::from)
}

/// The access-log fields of a lookup that asked the platform nothing and served nothing.
const NOT_FETCHED: LookupLog = LookupLog {
    cache: "miss",
    upstream: "-",
    upstream_requests: 0,
    source: "-",
    blame: "-",
};

/// The party blame named for a failed fetch, or `-`.
fn blamed(fetched: &Fetched) -> &'static str {
    fetched.blame.map_or("-", crate::blame::Party::label)
}

/// The party blame placed the failed fetch on, when it placed it (not `unknown` or
/// `nobody`).
fn placed(fetched: &Fetched) -> Option<crate::blame::Party> {
    use crate::blame::Party;
    fetched
        .blame
        .filter(|p| !matches!(p, Party::Unknown | Party::Nobody))
}

/// `; blame=` when blame placed the failed fetch on a party (an RFC 9211 extension
/// parameter).
fn blame_param(fetched: &Fetched) -> &'static str {
    if placed(fetched).is_some() {
        "; blame="
    } else {
        ""
    }
}

/// The party's label, or nothing.
fn blamed_or_empty(fetched: &Fetched) -> &'static str {
    placed(fetched).map_or("", crate::blame::Party::label)
}

/// `error`'s answer with `cache_status`.
fn not_fetched(error: ApiError, cache_status: &'static str) -> Response {
    let mut response = error.into_response();
    response
        .headers_mut()
        .insert(CACHE_STATUS.clone(), HeaderValue::from_static(cache_status));
    response
}

fn outcome_label(stored: &Stored) -> &'static str {
    match stored {
        Stored::Found { private: true, .. } => "private",
        Stored::Found { .. } => "ok",
        Stored::NotFound => "not_found",
    }
}

/// The status a stored answer is given: 200, or 404 for a not-found.
fn status_of(stored: &Stored) -> StatusCode {
    match stored {
        Stored::Found { .. } => StatusCode::OK,
        Stored::NotFound => StatusCode::NOT_FOUND,
    }
}

/// RFC 9211's `fwd` parameter for why a lookup went to the platform.
fn forward_param(forward: Forward) -> &'static str {
    match forward {
        Forward::UriMiss => "fwd=uri-miss",
        Forward::Stale => "fwd=stale",
        Forward::Request => "fwd=request",
    }
}

/// `Cache-Status: profile-lookup; <params>` (RFC 9211), with `; ttl=<ttl>` last when given.
fn cache_status(params: &[Part<'_>], ttl: Option<i64>) -> HeaderValue {
    let mut parts = [Part::Text(""); 12];
    parts[0] = Part::Text("profile-lookup; ");
    let mut n = 1;
    for &param in params.iter().take(parts.len() - 4) {
        parts[n] = param;
        n += 1;
    }
    if let Some(ttl) = ttl {
        parts[n] = Part::Text(if ttl < 0 { "; ttl=-" } else { "; ttl=" });
        parts[n + 1] = Part::Number(ttl.unsigned_abs());
        n += 2;
    }
    header_text::joined(&parts[..n]).unwrap_or(HeaderValue::from_static("profile-lookup"))
}

/// The `Cache-Status` header (RFC 9211): how this cache handled the lookup.
pub(super) static CACHE_STATUS: HeaderName = HeaderName::from_static("cache-status");
/// The `x-cache` header: whether the answer came from the cache (`hit`, `miss`, `stale`).
/// Deprecated: `Cache-Status` says the same and more; kept for one more release.
static X_CACHE: HeaderName = HeaderName::from_static("x-cache");
/// The `x-source` header: the platform source whose answer this is (`page`, `json`, …).
static X_SOURCE: HeaderName = HeaderName::from_static("x-source");

/// Headers a lookup answer ends up with (content type, cache control, age, cache status,
/// x-cache, x-source, `Profile-Withheld`, the two `RateLimit` headers, the request id): room for them up front, so
/// the map is allocated once instead of growing twice on every answer.
const ANSWER_HEADERS: usize = 11;

/// The answer a stored entry gives: the profile body with its freshness headers, or the 404;
/// both with a true `Age` and their `Cache-Status`.
fn stored_response(
    entry: &Entry,
    ttl: i64,
    cache: &'static str,
    cache_status: HeaderValue,
) -> Response {
    let source = entry.source.map(HeaderValue::from_static);
    let age = seconds_value("", entry.stored_at.elapsed().as_secs());
    let Stored::Found { body, .. } = &entry.value else {
        let mut response = ApiError::ProfileNotFound.into_response();
        let headers = response.headers_mut();
        if let Some(source) = source {
            headers.insert(X_SOURCE.clone(), source);
        }
        headers.insert(header::AGE, age);
        headers.insert(CACHE_STATUS.clone(), cache_status);
        return response;
    };
    let mut response = Response::new(Body::from(body.clone()));
    let headers = response.headers_mut();
    headers.reserve(ANSWER_HEADERS);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        seconds_value("private, max-age=", u64::try_from(ttl).unwrap_or(0)),
    );
    headers.insert(header::AGE, age);
    headers.insert(CACHE_STATUS.clone(), cache_status);
    headers.insert(X_CACHE.clone(), HeaderValue::from_static(cache));
    if let Some(source) = source {
        headers.insert(X_SOURCE.clone(), source);
    }
    if let Some(withheld) = entry
        .withheld
        .clone()
        .and_then(|list| HeaderValue::from_maybe_shared(list).ok())
    {
        headers.insert(PROFILE_WITHHELD.clone(), withheld);
    }
    response
}

/// `Profile-Withheld`: the fields of a found profile that are `null` because the platform
/// withheld them (a private account's counts, a post count no guest form gives).
static PROFILE_WITHHELD: HeaderName = HeaderName::from_static("profile-withheld");

/// `prefix` then `seconds` in decimal, as a header value.
fn seconds_value(prefix: &str, seconds: u64) -> HeaderValue {
    header_text::joined(&[Part::Text(prefix), Part::Number(seconds)])
        .unwrap_or(HeaderValue::from_static("0"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_values_are_written_whole_up_to_the_largest_u64() {
        assert_eq!(seconds_value("", 0), "0");
        assert_eq!(
            seconds_value("private, max-age=", 599),
            "private, max-age=599"
        );
        assert_eq!(
            seconds_value("private, max-age=", u64::MAX),
            "private, max-age=18446744073709551615"
        );
    }
}
