//! PLACEHOLDER while the extractor is written in parallel; replaced before any commit.
use crate::platform::{PageVerdict, ShortVideoProfile};
use crate::username::Username;
/// Placeholder.
pub fn extract(_page: &[u8], _requested: &Username) -> PageVerdict<ShortVideoProfile> {
    PageVerdict::Unreadable("placeholder".into())
}
/// Placeholder.
pub fn claimed_name(_document: &[u8]) -> Option<String> {
    None
}
