//! The short-video platform: its page eras, its embed page, its WAF challenge, and how the
//! fetcher asks it.
//!
//! `site` is the platform's contract (the profile page then the embed page, their block
//! signals, the challenge as a hurdle); `extract` runs the era readers (`universal`, `sigi`,
//! `next_data`) and the embed page's (`embed`), which find the state in the document and share
//! `user_json`: the `user` and `stats` objects every era carries (read through the platform's
//! table of names, `platform::fields`), and the one place where a status code and a user
//! become a reading; when no state's known place holds the user, `extract` runs the anchored
//! search over the page's JSON; `stateless` tells apart the pages that carry no state at all;
//! `challenge` solves the WAF's proof-of-work page.
pub mod body;
pub mod challenge;
mod embed;
pub mod extract;
mod next_data;
mod sigi;
pub mod site;
pub mod stateless;
mod universal;
mod user_json;

pub use body::{
    ShortVideoBioLink, ShortVideoProfile, ShortVideoStats, ShortVideoUser, ShortVideoUserInfo,
};
pub use site::ShortVideo;
