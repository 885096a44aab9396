//! The short-video platform: its page eras, its WAF challenge, and how we fetch the page.
pub mod challenge;
pub mod extract;
pub mod fetch;

pub use fetch::ShortVideoSource;
