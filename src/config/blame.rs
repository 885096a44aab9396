//! `[blame]`: how much comparison it takes to blame a name, a route or a source for a
//! refusal, a failure or a silence (see `crate::blame` and docs/architecture.md, "Blame").

use serde::{Deserialize, Serialize};

use super::Section;
use super::limits::{self, DAY_S, range};

/// `[blame]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlameConfig {
    /// How long an outcome stays evidence (seconds): the window every comparison looks at.
    pub window_seconds: u64,
    /// Routes a name must be refused on (by one source that reads other names there) to be
    /// the name's refusal.
    pub name_routes: u32,
    /// Names a route must be refused or failing for (since it last read, while another route
    /// reads) to be the route's.
    pub route_names: u32,
    /// Names a source must be refused, failing or unreadable for (since it last read, while
    /// another source reads now) to be the source's.
    pub source_names: u32,
    /// Routes those must span (or every route, when the platform has fewer).
    pub source_routes: u32,
}

impl Section for BlameConfig {
    fn check(&self) -> Result<(), String> {
        limits::check(&[
            range(
                "blame.window_seconds",
                self.window_seconds,
                10,
                DAY_S,
                "1 day",
            ),
            range(
                "blame.name_routes",
                u64::from(self.name_routes),
                1,
                32,
                "32",
            ),
            range(
                "blame.route_names",
                u64::from(self.route_names),
                1,
                32,
                "32",
            ),
            range(
                "blame.source_names",
                u64::from(self.source_names),
                1,
                32,
                "32",
            ),
            range(
                "blame.source_routes",
                u64::from(self.source_routes),
                1,
                32,
                "32",
            ),
        ])
    }
}

impl BlameConfig {
    /// The window, as a duration.
    pub fn window(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.window_seconds)
    }
}
