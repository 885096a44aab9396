//! The short-video platform (`src/platform/short_video`): real captures, hostile input, its
//! two sources, the signals of 2026-09, the embed's error codes.

mod added_fields;
mod embed_codes;
mod proptest;
mod real_captures;
mod signals_2026_09;
mod sources;
