//! What this binary was built from, in one place: the start-up summary, `check` and
//! `--version` print it, so an operator can tell which build is running.

/// The optional cargo features compiled in, as a literal (for `concat!`).
#[cfg(feature = "browser")]
macro_rules! features {
    () => {
        "browser"
    };
}
/// The optional cargo features compiled in, as a literal (for `concat!`).
#[cfg(not(feature = "browser"))]
macro_rules! features {
    () => {
        "none"
    };
}

/// The crate's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The short git commit the binary was built from (embedded by `build.rs`), or `unknown`
/// when it was built without git or outside a repository.
pub const COMMIT: &str = env!("PROFILE_LOOKUP_COMMIT");

/// The optional cargo features compiled in: `browser`, or `none`.
pub const FEATURES: &str = features!();

/// `--version`'s text after the program name: `0.1.0 (commit abc1234, features: none)`.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("PROFILE_LOOKUP_COMMIT"),
    ", features: ",
    features!(),
    ")"
);
