//! The platforms (`src/platform`, `src/registry.rs`): the readers on the samples and end to
//! end, the lenient fields, the sources, and each platform's own folder.

pub(crate) mod fall_through;
mod fields;
mod photo_share;
mod readers;
mod registry;
mod samples;
mod short_video;
mod sources;
