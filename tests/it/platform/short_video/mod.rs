//! The short-video platform (`src/platform/short_video`): real captures, hostile input, its
//! two sources.

mod proptest;
mod real_captures;
mod sources;
