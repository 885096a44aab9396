//! What the fleet suites share: a fleet handle as one replica holds it, the names the
//! short-video stand-in serves, and a stream of lookups over replicas that must fail no request
//! while a test breaks their Redis.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use profile_lookup::config::RedisConfig;
use profile_lookup::fleet::Fleet;
use stand_in::short_video as sv;

use super::{ShortVideo, TestApp, eventually};

/// A fleet handle (one replica's) on the Redis at `url`, its keys under `prefix`, each call
/// given `timeout_ms`.
pub fn handle(url: &str, prefix: &str, timeout_ms: u64) -> Fleet {
    Fleet::new(&RedisConfig {
        url: url.to_owned(),
        key_prefix: prefix.to_owned(),
        timeout_ms,
        ..RedisConfig::default()
    })
    .expect("valid config")
}

/// The names of the short-video stand-in's sample users.
pub fn sample_names() -> Vec<String> {
    sv::sample_users()
        .into_iter()
        .map(|u| u.unique_id.to_string())
        .collect()
}

/// Lookups spread over replicas, one after another, until stopped: three of every four a
/// sample name, the fourth a new name.
pub struct Load {
    stop: Arc<AtomicBool>,
    running: tokio::task::JoinHandle<Vec<u16>>,
}

impl Load {
    /// Starts the lookups on `apps`.
    pub fn start(apps: Arc<Vec<TestApp>>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let running = tokio::spawn(async move {
            let names = sample_names();
            let mut statuses = Vec::new();
            let mut i = 0usize;
            while !stopped.load(Ordering::Relaxed) {
                let name = if i % 4 == 3 {
                    format!("fresh.name{i}")
                } else {
                    names[i % names.len()].clone()
                };
                let app = &apps[i % apps.len()];
                statuses.push(app.lookup(ShortVideo, &name).await.status());
                i += 1;
            }
            statuses
        });
        Self { stop, running }
    }

    /// Stops the lookups and checks they ran and every answer was a 200 or a 404 (none
    /// failed).
    pub async fn stop_expecting_no_failure(self) {
        self.stop.store(true, Ordering::Relaxed);
        let statuses = self.running.await.unwrap();
        assert!(
            statuses.len() > 50,
            "the load ran ({} requests)",
            statuses.len()
        );
        let failed = statuses.iter().filter(|s| !matches!(s, 200 | 404)).count();
        assert_eq!(failed, 0, "{failed} of {} failed", statuses.len());
    }
}

/// Whether every replica of `apps` uses Redis again within 5 s.
pub async fn all_back_on_redis(apps: &[TestApp]) -> bool {
    eventually(Duration::from_secs(5), || {
        apps.iter().all(|a| a.state.fleet().is_up())
    })
    .await
}
