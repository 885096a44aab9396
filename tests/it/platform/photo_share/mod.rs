//! The photo-share platform (`src/platform/photo_share`): real captures, hostile input, the
//! 2026 shapes, user text, the JSON endpoint's 404s.

mod json_404;
mod proptest;
mod real_captures;
mod shapes_2026;
mod user_text;
