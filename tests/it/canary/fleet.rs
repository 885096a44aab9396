//! The canary in a fleet: three `serve` processes on one real `redis-server` run one round
//! per interval between them (the round's lease), and every replica shows the verdicts of the
//! replica that ran it, orders its lookups by them, and exports them.

use std::time::{Duration, Instant};

use serde_json::Value;
use stand_in::drift::{DriftSwitch, switchable};
use stand_in::short_video as sv;

use crate::support::replica_process::{self, ReplicaProcess};
use crate::support::{KEY, spawn_upstream, test_redis};

const CANARY: &str = sv::PUBLIC_USER.unique_id;
const CALLER: &str = sv::SMALL_USER.unique_id;
/// Seconds between rounds, and the jitter of each replica's wake-ups.
const INTERVAL: f64 = 1.0;

async fn get(client: &reqwest::Client, url: String) -> reqwest::Response {
    client.get(url).bearer_auth(KEY).send().await.unwrap()
}

async fn status(client: &reqwest::Client, replica: &ReplicaProcess) -> Value {
    get(client, replica.url("/status"))
        .await
        .json()
        .await
        .unwrap()
}

/// `profile_lookup_canary_rounds_total` of one replica (0 before its first round).
async fn rounds(client: &reqwest::Client, replica: &ReplicaProcess) -> u64 {
    let text = get(client, replica.url("/metrics"))
        .await
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("profile_lookup_canary_rounds_total "))
        .map_or(0, |n| n.trim().parse().unwrap())
}

fn page_demoted(status: &Value) -> bool {
    status["sources"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["source"] == "page"))
        .is_some_and(|page| page["demoted"] == true && page["verdict"] == "changed")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_on_redis_run_one_round_per_interval_and_share_its_verdicts() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    // The short-video stand-in with its page moved from the start.
    let drift = DriftSwitch::default();
    drift.set(true);
    let upstream = spawn_upstream(switchable(sv::router(), sv::drifted_router(), drift)).await;
    let (url, addr) = (redis.url(), upstream.addr);
    let started = Instant::now();
    let replicas = tokio::task::spawn_blocking(move || {
        let extra = [
            ("PROFILE_LOOKUP__CANARY__SHORT_VIDEO", CANARY),
            ("PROFILE_LOOKUP__CANARY__INTERVAL_SECONDS", "1"),
            ("PROFILE_LOOKUP__CANARY__JITTER", "0.2"),
            ("PROFILE_LOOKUP__CACHE__ENABLED", "false"),
        ];
        (0..3)
            .map(|_| replica_process::start(addr, &url, &extra))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    let client = reqwest::Client::new();

    // Every replica shows the page changed twice and demoted, the one that ran those rounds
    // and the others alike.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mut all = true;
        for replica in &replicas {
            all &= page_demoted(&status(&client, replica).await);
        }
        if all {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not every replica shows the page demoted"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // So every replica's lookups go to the embed first, and never to the moved page.
    for replica in &replicas {
        let response = get(
            &client,
            replica.url(&format!("/short-video/profile/{CALLER}")),
        )
        .await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["x-source"], "embed");
    }
    let caller_paths: Vec<String> = upstream
        .paths()
        .into_iter()
        .filter(|p| p.contains(CALLER))
        .collect();
    assert_eq!(caller_paths, vec![format!("/embed/@{CALLER}"); 3]);

    // A few more rounds, then count them: one per interval for the fleet, not one per replica.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let mut per_replica = Vec::new();
    for replica in &replicas {
        per_replica.push(rounds(&client, replica).await);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let total: u64 = per_replica.iter().sum();
    let probes: Vec<Instant> = upstream
        .seen()
        .iter()
        .filter(|s| s.path() == format!("/@{CANARY}"))
        .map(|s| s.at)
        .collect();
    // Each round asks the page once; a round may be under way while the counters are read.
    assert!(
        probes.len() as u64 >= total && probes.len() as u64 <= total + 1,
        "{} page probes for {total} rounds {per_replica:?}",
        probes.len()
    );
    let most = (elapsed / INTERVAL).ceil() as u64 + 1;
    assert!(
        (4..=most).contains(&total),
        "{total} rounds {per_replica:?} in {elapsed:.1} s: at most one per interval for the fleet"
    );
    // No two rounds at once: each began at least (nearly) an interval after the one before.
    for pair in probes.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= Duration::from_millis(900),
            "two rounds {gap:?} apart: {per_replica:?}"
        );
    }
    // Every replica shows the fleet's last round.
    let ended: Vec<Value> = {
        let mut ended = Vec::new();
        for replica in &replicas {
            ended.push(status(&client, replica).await["last_round"]["ended_at"].clone());
        }
        ended
    };
    // Times are RFC 3339 strings.
    assert!(ended.iter().all(Value::is_string), "{ended:?}");
    drop(redis);
}
