//! The short-video platform: its page eras, its WAF challenge, and how we fetch the page.
//!
//! `fetch` asks for the profile page and reads HTTP-level signals; `extract` runs the chain of
//! era readers (`universal`, `sigi`, `next_data`), which find the state in the page and share
//! `user_json`: the `user` and `stats` objects every era carries, and the one place where a
//! status code and a user become a verdict; `challenge` solves the WAF's proof-of-work page.
pub mod challenge;
pub mod extract;
pub mod fetch;
mod next_data;
mod sigi;
mod universal;
mod user_json;

pub use fetch::ShortVideoSource;
