//! The photo-share platform: its profile JSON, its page shapes, and how we fetch them.
//!
//! `site` is the platform's contract (which documents to ask for, their headers, what an HTTP
//! answer means); `extract` (and the small readers behind it) turn one document into a reading.
mod api;
pub mod body;
mod bundles;
mod embed;
pub mod extract;
mod markers;
mod page;
mod parts;
mod preloads;
pub mod query;
mod shared_data;
mod signals;
pub mod site;
pub mod web_headers;
mod xig;

pub use body::{PhotoShareBioLink, PhotoShareProfile};
pub use site::PhotoShare;
