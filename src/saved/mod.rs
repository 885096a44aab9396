//! What the service makes of a saved document: `profile-lookup extract`.
//!
//! It runs the platform's own extractor and the edge's own error mapping, so a saved page
//! that fails here fails in production the same way: the first thing to run when a platform
//! changes its pages (drift capture keeps such pages for it).

use std::time::Duration;

use crate::error::{ApiError, Problem};
use crate::platform::fetcher;
use crate::platform::{Failure, Lookup, Platform, Profile};
use crate::username::{Subject, Username};

mod owner;

use owner::Owner;

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
    answer(platform, document, username)
        .map(|profile| String::from_utf8_lossy(profile.json()).into_owned())
        .map_err(|e| serde_json::to_string(&e.problem()).unwrap_or_default())
}

/// Whose `document` is when no name was given: `Ok(Some(name))` when its markup names its
/// user, `Ok(None)` when it is read as about its own user, `Err` (why, and what settles it)
/// when it names none and holds several accounts, so that reading it would be a guess.
pub fn whose(platform: Platform, document: &[u8]) -> Result<Option<String>, String> {
    let document = document.strip_prefix(BYTE_ORDER_MARK).unwrap_or(document);
    match owner::owner(platform, document) {
        Owner::Named(name) => Ok(Some(name)),
        Owner::Itself => Ok(None),
        Owner::Unclear(names) => Err(format!(
            "cannot tell whose page this is: it names no account (no canonical link or og:url) \
             and holds several ({}); say whose with --username NAME",
            names.join(", ")
        )),
    }
}

/// Why a saved document gives no profile: the error the service would answer and, for a
/// document that is a block, which one (a caller of the API is told only that the platform
/// refuses; someone reading a saved page wants to know what it is), and for a page that could
/// not be read, the reason the service logs (never in the API's answer).
#[derive(Debug)]
struct Refusal {
    error: ApiError,
    block: Option<&'static str>,
    why: Option<String>,
}

impl Refusal {
    /// The problem document, its detail naming the block or the reason.
    fn problem(&self) -> Problem {
        let mut problem = self.error.problem();
        if let Some(block) = self.block {
            problem.detail = format!("{} (this document is a block: {block})", problem.detail);
        }
        if let Some(why) = &self.why {
            problem.detail = format!("{} (why: {why})", problem.detail);
        }
        problem
    }

    /// The code, and the block in parentheses.
    fn summary(&self) -> String {
        match self.block {
            Some(block) => format!("{} ({block})", self.error.code()),
            None => self.error.code().to_owned(),
        }
    }
}

impl From<ApiError> for Refusal {
    fn from(error: ApiError) -> Self {
        Self {
            error,
            block: None,
            why: None,
        }
    }
}

/// One line about one saved document, for `extract PLATFORM DIR`: whether a profile came out,
/// then the user and counts, or the problem code the service would answer. `username` is the
/// name it was fetched for (its sidecar's), as for [`extract`].
pub fn summary(platform: Platform, document: &[u8], username: Option<&str>) -> (bool, String) {
    match answer(platform, document, username) {
        Ok(profile) => (true, format!("ok {}", profile.summary())),
        Err(refusal) => (false, refusal.summary()),
    }
}

/// The UTF-8 byte-order mark some tools put in front of a page or JSON document they save.
const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// The profile the service would answer for `document`, or its error. A leading byte-order
/// mark is dropped first: the platforms never send one, and left in it hides a JSON document's
/// opening brace, so the document would be read as a page.
fn answer(
    platform: Platform,
    document: &[u8],
    username: Option<&str>,
) -> Result<Box<Profile>, Refusal> {
    let requested = username
        .map(|raw| Username::parse(platform, raw))
        .transpose()
        .map_err(|e| Refusal::from(ApiError::InvalidUsername(e.to_string())))?;
    let subject = requested.as_ref().map_or(Subject::Anyone, Subject::Named);
    let document = document.strip_prefix(BYTE_ORDER_MARK).unwrap_or(document);
    let reading = crate::platform::extract(platform, document, subject);
    // A saved document has no Retry-After to tell: the problem body carries none anyway.
    match fetcher::answer(reading, Duration::ZERO) {
        Lookup::Found(profile) => Ok(profile),
        Lookup::NotFound => Err(ApiError::ProfileNotFound.into()),
        Lookup::Failed(failure) => {
            let (block, why) = match &failure {
                Failure::Blocked { reason, .. } => (Some(*reason), None),
                Failure::ExtractionFailed(why) | Failure::Unavailable { why, .. } => {
                    (None, Some(why.clone()))
                }
                _ => (None, None),
            };
            Err(Refusal {
                error: ApiError::from(failure),
                block,
                why,
            })
        }
    }
}
