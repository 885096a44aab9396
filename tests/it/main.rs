//! The one integration-test binary: every suite is a module here, so a test run links the
//! crate once, and the rig in [`support`] is written once.

mod cli;
mod config;
mod edge;
mod lookups;
mod openapi;
mod photo_share_proptest;
mod photo_share_real_captures;
mod short_video_proptest;
mod short_video_real_captures;
mod support;
mod upstream_faults;
