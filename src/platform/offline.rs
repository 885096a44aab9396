//! Extraction without the network: what `profile-lookup extract` runs on a saved document.
//!
//! It goes through the same extractors as the service, so a saved page that fails here fails
//! in production the same way: the first thing to run when a platform changes its pages.

use crate::error::ApiError;
use crate::platform::{PageVerdict, Platform, photo_share, short_video};
use crate::username::Username;

/// The JSON body the service would answer for `document`, or the problem document it would
/// answer instead (as JSON text).
///
/// `username` is the name the document was fetched for; without it, the document's own user is
/// taken (see [`Username::any`]).
pub fn extract(
    platform: Platform,
    document: &[u8],
    username: Option<&str>,
) -> Result<String, String> {
    let problem = |e: ApiError| serde_json::to_string(&e.problem()).unwrap_or_default();
    let name = match username {
        Some(raw) => Username::parse(platform, raw)
            .map_err(|e| problem(ApiError::InvalidUsername(e.to_string())))?,
        None => Username::any(platform),
    };
    let verdict = match platform {
        Platform::ShortVideo => {
            short_video::extract::extract(document, &name).map(super::Profile::ShortVideo)
        }
        Platform::PhotoShare => {
            let is_json = document
                .trim_ascii_start()
                .first()
                .is_some_and(|b| matches!(b, b'{' | b'['));
            let verdict = if is_json {
                photo_share::extract::from_api(document, &name)
            } else {
                photo_share::extract::from_page(document, &name)
            };
            verdict.map(super::Profile::PhotoShare)
        }
    };
    match verdict {
        PageVerdict::Profile(profile) => {
            Ok(String::from_utf8(profile.to_json()).unwrap_or_default())
        }
        PageVerdict::NotFound => Err(problem(ApiError::ProfileNotFound)),
        PageVerdict::Blocked(_) => Err(problem(ApiError::UpstreamBlocked {
            retry_after: std::time::Duration::from_secs(60),
        })),
        PageVerdict::RegionLocked => Err(problem(ApiError::RegionLocked {
            retry_after: std::time::Duration::from_secs(60),
        })),
        PageVerdict::Unreadable(_) => Err(problem(ApiError::ExtractionFailed)),
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
