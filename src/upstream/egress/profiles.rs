//! Browser-profile rotation: a lookup presents one profile, the next in turn for each new
//! lookup, and a block moves it to the next profile as it moves it to the next proxy.

use std::sync::atomic::Ordering;

use super::lease::RouteLease;
use crate::config::BrowserProfile;

impl RouteLease<'_> {
    /// The browser the lease presents; `None` for the plain client.
    pub fn profile(&self) -> Option<BrowserProfile> {
        self.routes.profiles[self.profile.load(Ordering::Relaxed)]
    }

    /// Whether a block on this lease moves it somewhere else at once (another proxy, or on
    /// the direct route a profile the lookup has not presented yet) instead of being waited
    /// out where it is: the retry policy waits blocks out only when this is false.
    pub fn moves_on_block(&self) -> bool {
        self.routes.proxied || self.presented.load(Ordering::Relaxed) < self.routes.profiles.len()
    }

    /// Presents the next profile from now on (a no-op with one), and starts the next lookup's
    /// turn past it.
    pub(super) fn next_profile(&self, reason: &'static str) {
        let n = self.routes.profiles.len();
        if n < 2 {
            return;
        }
        let from = self.profile.load(Ordering::Relaxed);
        let to = (from + 1) % n;
        self.profile.store(to, Ordering::Relaxed);
        self.presented.fetch_add(1, Ordering::Relaxed);
        self.routes
            .next_profile
            .store((to + 1) % n, Ordering::Relaxed);
        tracing::info!(
            platform = self.routes.scope,
            proxy = %self.label(),
            reason,
            profile = ?self.routes.profiles[from],
            next = ?self.routes.profiles[to],
            "the lookup moves to the next browser profile"
        );
    }
}
