//! The outcomes of a platform's attempts, shared by the fleet: what blame compares
//! (`crate::blame`). Each replica appends what it recorded since its last merge and takes the
//! fleet's recent records back, at most once a second, in one call (`scripts/evidence.lua`):
//! a list per platform, its newest [`MAX_SHARED`] records, expiring one window after the last
//! merge. A record is `MS,POSITION,SESSION,SOURCE,KIND,NAME,REPLICA`: when (Unix ms), the
//! route (a proxy's position, a session's digest), the source's index, what it came to, the
//! name's digest and the replica's random id. No name, no credential, no session id.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use super::keys::Keys;
use super::{Fleet, expiry_ms};

/// The most records the fleet keeps per platform.
pub const MAX_SHARED: usize = 1024;

static MERGE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/evidence.lua")));

impl Keys {
    /// The fleet's records of `platform`'s outcomes.
    pub fn evidence(&self, platform: &str) -> String {
        self.tag("e", &[platform])
    }
}

impl Fleet {
    /// Appends `records` to `platform`'s shared evidence and answers the fleet's newest
    /// records (the appended ones included); kept one `window` after this merge. `None`
    /// without Redis, or when it cannot be used (the caller keeps its records for next time).
    pub async fn evidence_merge(
        &self,
        platform: &str,
        records: Vec<String>,
        window: Duration,
    ) -> Option<Vec<String>> {
        let key = self.keys()?.evidence(platform);
        self.run("evidence_merge", |mut conn| async move {
            let mut call = MERGE.prepare_invoke();
            call.key(key).arg(expiry_ms(window)).arg(MAX_SHARED);
            for record in records {
                call.arg(record);
            }
            call.invoke_async(&mut conn).await
        })
        .await
    }
}
