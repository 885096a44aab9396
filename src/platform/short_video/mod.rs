//! The short-video platform: its page eras, its WAF challenge, and how the ladder asks it.
//!
//! `site` is the platform's contract (the profile page, its block signals, the challenge as a
//! hurdle); `extract` runs the chain of era readers (`universal`, `sigi`, `next_data`), which
//! find the state in the page and share `user_json`: the `user` and `stats` objects every era
//! carries, and the one place where a status code and a user become a verdict; `challenge`
//! solves the WAF's proof-of-work page.
pub mod body;
pub mod challenge;
mod embed;
pub mod extract;
mod next_data;
pub mod samples;
mod sigi;
pub mod site;
pub mod stateless;
mod universal;
mod user_json;

pub use body::{ShortVideoProfile, ShortVideoStats, ShortVideoUser, ShortVideoUserInfo};
pub use site::ShortVideo;
