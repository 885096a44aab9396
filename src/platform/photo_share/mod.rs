//! The photo-share platform: its profile JSON, its page shapes, and how we fetch them.
//!
//! `fetch` decides which documents to ask for and what an HTTP answer means; `extract` (and the
//! small readers behind it) turn one document into a verdict.
mod api;
mod body;
mod edge_user;
pub mod extract;
pub mod fetch;
mod markers;
mod page;
mod shared_data;
mod signals;
pub mod web_headers;
mod xig;

pub use fetch::PhotoShareSource;
