//! The short-video platform: its page eras, its WAF challenge, and how the ladder asks it.
//!
//! `site` is the platform's contract (the profile page, its block signals, the challenge as a
//! hurdle); `extract` runs the chain of era readers (`universal`, `sigi`, `next_data`, sharing
//! `raw`); `challenge` solves the WAF's proof-of-work page.
pub mod challenge;
pub mod extract;
mod next_data;
mod raw;
mod sigi;
pub mod site;
mod universal;

pub use site::ShortVideo;
