//! The one integration-test binary: every suite is a module here, in folders that mirror
//! `src/`, so a test run links the crate once, and the rig in [`support`] is written once.

mod blame;
mod cache;
mod canary;
mod commands;
mod config;
mod docs;
mod fleet;
mod html;
mod http;
mod lookup;
mod platform;
mod server;
mod support;
mod telemetry;
mod upstream;
