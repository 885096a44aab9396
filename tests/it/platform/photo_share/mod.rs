//! The photo-share platform (`src/platform/photo_share`): real captures, hostile input, the
//! 2026 shapes, the profile query's user shape, user text, the JSON endpoint's 404s.

mod added_fields;
mod graphql;
mod guest_2026_09;
mod json_404;
mod profile_query;
mod proptest;
mod real_captures;
mod shapes_2026;
mod user_text;
