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
        PageVerdict::Unreadable(_) => Err(problem(ApiError::ExtractionFailed)),
    }
}
