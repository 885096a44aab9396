//! What the service makes of a saved document: `profile-lookup extract`.
//!
//! It runs the platform's own extractor and the edge's own error mapping, so a saved page
//! that fails here fails in production the same way: the first thing to run when a platform
//! changes its pages (drift capture keeps such pages for it).

use std::convert::Infallible;
use std::time::Duration;

use crate::error::ApiError;
use crate::platform::ladder::answer;
use crate::platform::site::Reading;
use crate::platform::{Lookup, Platform};
use crate::username::{Subject, Username};

/// The JSON body the service would answer for `document`, or the problem document it would
/// answer instead (as JSON text).
///
/// `username` is the name the document was fetched for; without it, the document is read as
/// being about whoever it is about.
pub fn extract(
    platform: Platform,
    document: &[u8],
    username: Option<&str>,
) -> Result<String, String> {
    let problem = |e: ApiError| serde_json::to_string(&e.problem()).unwrap_or_default();
    let requested = username
        .map(|raw| Username::parse(platform, raw))
        .transpose()
        .map_err(|e| problem(ApiError::InvalidUsername(e.to_string())))?;
    let subject = requested.as_ref().map_or(Subject::Anyone, Subject::Named);
    let verdict = crate::platform::extract(platform, document, subject);
    // A saved document has no Retry-After to tell: the problem body carries none anyway.
    match answer(Reading::<Infallible>::from(verdict), Duration::ZERO) {
        Lookup::Found(profile) => Ok(String::from_utf8(profile.to_json()).unwrap_or_default()),
        Lookup::NotFound => Err(problem(ApiError::ProfileNotFound)),
        Lookup::Failed(failure) => Err(problem(ApiError::from(failure))),
    }
}

/// One line about one saved document, for `extract PLATFORM DIR`: whether a profile came out,
/// then the user and counts, or the problem code the service would answer.
pub fn summary(platform: Platform, document: &[u8]) -> (bool, String) {
    let field = |v: &serde_json::Value, path: &[&str]| {
        let mut at = v;
        for key in path {
            at = &at[*key];
        }
        match at {
            serde_json::Value::Null => "null".to_owned(),
            serde_json::Value::String(s) => s.escape_debug().to_string(),
            other => other.to_string(),
        }
    };
    match extract(platform, document, None) {
        Ok(body) => {
            let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            let line = match platform {
                Platform::ShortVideo => format!(
                    "ok @{} followers={} videos={} private={}",
                    field(&v, &["userInfo", "user", "uniqueId"]),
                    field(&v, &["userInfo", "stats", "followerCount"]),
                    field(&v, &["userInfo", "stats", "videoCount"]),
                    field(&v, &["userInfo", "user", "privateAccount"]),
                ),
                Platform::PhotoShare => format!(
                    "ok @{} followers={} posts={} private={}",
                    field(&v, &["username"]),
                    field(&v, &["edge_followed_by", "count"]),
                    field(&v, &["edge_owner_to_timeline_media", "count"]),
                    field(&v, &["is_private"]),
                ),
            };
            (true, line)
        }
        Err(problem) => {
            let v: serde_json::Value = serde_json::from_str(&problem).unwrap_or_default();
            (false, field(&v, &["code"]))
        }
    }
}
