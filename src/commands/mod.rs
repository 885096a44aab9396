//! The `profile-lookup` subcommands, as library functions the thin binary dispatches to: each
//! takes its parsed arguments and says how the process should exit.
//!
//! Exit codes: 0 success, 1 a lookup-level failure (`extract` found no profile, a probe
//! failed), 2 a configuration, file or address problem the operator must fix.

pub mod extract;
pub mod healthcheck;
pub mod serve;

pub use extract::extract;
pub use healthcheck::healthcheck;
pub use serve::{demo, serve};

/// The multi-threaded runtime every long-running subcommand runs on.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("the tokio runtime starts")
}
