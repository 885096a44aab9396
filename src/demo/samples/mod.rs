//! Invented sample upstream documents in every real page shape, with full-size noise.
//!
//! Used by the demo upstream, the integration tests and the benchmarks; never real data.
mod json_text;
pub mod photo_share;
pub mod short_video;
