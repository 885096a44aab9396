//! The one integration-test binary: every suite is a module here, so a test run links the
//! crate once, and the rig in [`support`] is written once.

mod browser_client;
mod cli;
mod config;
mod config_api_keys;
mod config_limits;
mod docs;
mod drift_capture;
mod edge;
mod fleet;
mod fleet_budget;
mod fleet_cluster;
mod fleet_gone;
mod fleet_memory;
mod fleet_quota_lease;
mod fleet_takeover;
mod flight_and_retry;
mod hangups;
mod html_script_finder;
mod lenient_fields;
mod log_injection;
mod lookups;
mod module_graph;
mod openapi;
mod photo_share_proptest;
mod photo_share_real_captures;
mod photo_share_user_text;
mod proxies;
mod readme_and_docs;
mod registry;
mod short_video_proptest;
mod short_video_real_captures;
mod sources;
mod startup;
mod support;
mod upstream_faults;
