//! The fleet's share of each platform's outbound budget for background refreshes
//! (`crate::upstream::gate::RefreshBudget`): a second budget, next to the outbound one, that
//! every replica's refreshes draw from, so that the share holds for the fleet as a whole.

use std::time::Duration;

use super::{Fleet, Reservation};

impl Fleet {
    /// Takes the next slot of `platform`'s refresh share (`rps` a second, `burst` at once) if it
    /// is free now: `Reservation::Wait` when taken, `Reservation::TooLong` when not (nothing is
    /// taken then). `None`: Redis unavailable, the replica's own share stands in.
    pub async fn refresh_reserve(
        &self,
        platform: &str,
        rps: f64,
        burst: u32,
    ) -> Option<Reservation> {
        let key = self.keys().refresh_share(platform);
        self.reserve_slot("refresh_share", key, rps, burst, Duration::ZERO)
            .await
    }
}
