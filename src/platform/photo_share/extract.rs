//! Reading photo-share upstream documents: the profile JSON API, the profile HTML page, and the
//! block signals the fetch layer needs to decide whether to retry.
//!
//! The functions live in small sibling modules (`api`, `page`, `signals`); this module is the
//! one public door to them, so the fetch layer imports everything from one place.
//!
//! Shared rules of every extractor here:
//!
//! - the returned `username` must equal the requested name ASCII case-insensitively, otherwise
//!   the reading is [`Reading::Unreadable`](crate::platform::Reading::Unreadable);
//! - every field is read through the platform's table of names (`platform::fields`, its
//!   `names.rs`): `follower_count` or `edge_followed_by.count`, `pk` over `id`, …, the first
//!   usable name winning; when no known place holds the requested user, the anchored search
//!   finds their object anywhere in the document's JSON (never another user's);
//! - a count is a non-negative integer that fits a `u64`, an integral float up to 2^53 or a
//!   string of digits; anything else, or no count, is `None` (never a made-up 0), and a
//!   public account without a follower count is unreadable (never a 200 with `null`);
//! - a missing (or `null`, or wrongly typed) string is `""`, a missing boolean is `false`;
//! - `profile_pic_url_hd` falls back to `profile_pic_url` when the document has no HD picture;
//! - strings are JSON-decoded (`\u002F` becomes `/`) and never HTML-entity decoded;
//! - nothing but the body's own keys is read, and no input makes them panic.

pub use super::api::from_api;
pub use super::page::{NO_PROFILE, from_page, from_page_answer};
pub use super::signals::{
    block_signal, is_business_schema_error, not_json, redirect_is_block, refused_404,
};
