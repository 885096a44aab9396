//! PLACEHOLDER while the extractor is written in parallel; replaced before any commit.
use crate::platform::{PageVerdict, PhotoShareProfile};
use crate::username::Username;
/// Placeholder.
pub fn from_api(_body: &[u8], _requested: &Username) -> PageVerdict<PhotoShareProfile> {
    PageVerdict::Unreadable("placeholder".into())
}
/// Placeholder.
pub fn from_page(_body: &[u8], _requested: &Username) -> PageVerdict<PhotoShareProfile> {
    PageVerdict::Unreadable("placeholder".into())
}
/// Placeholder.
pub fn block_signal(_status: u16, _body: &[u8]) -> Option<&'static str> {
    None
}
/// Placeholder.
pub fn redirect_is_block(_path: &str) -> bool {
    false
}
/// Placeholder.
pub fn claimed_name(_document: &[u8]) -> Option<String> {
    None
}
