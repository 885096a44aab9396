//! The short-video platform: its page eras, its WAF challenge, and how we fetch the page.
//!
//! `fetch` asks for the profile page and reads HTTP-level signals; `extract` runs the chain of
//! era readers (`universal`, `sigi`, `next_data`, sharing `raw`); `challenge` solves the WAF's
//! proof-of-work page.
pub mod challenge;
pub mod extract;
pub mod fetch;
mod next_data;
mod raw;
mod sigi;
mod universal;

pub use fetch::ShortVideoSource;
