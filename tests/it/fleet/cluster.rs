//! The fleet of [`crate::fleet::shared`] on a real 3-node Redis Cluster started by the test
//! ([`crate::support::test_redis::start_cluster`]), the replicas given its seed list: one quota, one
//! flight and one cache for the fleet; a name's keys on one slot and a key's quota on its own,
//! every key with an expiry; a flight's holder killed and taken over; and a node killed, a node
//! hung and the whole cluster killed under load without a single failed request, the replicas
//! back on the cluster after each.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};
use stand_in::short_video as sv;

use crate::fleet::shared::{one_flight_and_one_cache, one_quota_for_three_replicas};
use crate::fleet::takeover::a_killed_holder_is_taken_over;
use crate::support::fleet::{Load, all_back_on_redis, sample_names};
use crate::support::routers::slow;
use crate::support::test_redis::{self, TestCluster};
use crate::support::{KEY, ShortVideo, TestApp, eventually};

#[tokio::test]
async fn a_key_gets_one_quota_from_three_replicas_on_a_cluster() {
    test_redis::on_a_cluster(one_quota_for_three_replicas).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_killed_mid_flight_on_a_cluster_is_taken_over_within_seconds() {
    let Some(cluster) = test_redis::start_cluster() else {
        return;
    };
    let name = sample_names()[0].clone();
    let lock = format!("it:{{n:short-video:{name}}}:l");
    let url = cluster.url();
    let cluster = Arc::new(cluster);
    let looking = cluster.clone();
    let held = move || {
        looking
            .keys_on_nodes("it:*")
            .iter()
            .flatten()
            .any(|(k, _)| *k == lock)
    };
    a_killed_holder_is_taken_over(&url, &name, held).await;
}

#[tokio::test]
async fn concurrent_misses_on_a_cluster_make_one_upstream_request_and_one_cache() {
    test_redis::on_a_cluster(one_flight_and_one_cache).await;
}

/// The fleet's quota key of the test key (`it:` is the replicas' prefix).
fn quota_key() -> String {
    let digest: [u8; 32] = Sha256::digest(KEY.as_bytes()).into();
    format!("it:{{q:{}}}", profile_lookup::fleet::key_id(&digest))
}

/// Every key the fleet wrote, with its node and remaining life (ms).
fn every_key(cluster: &TestCluster) -> Vec<(String, usize, i64)> {
    cluster
        .keys_on_nodes("it:*")
        .into_iter()
        .enumerate()
        .flat_map(|(node, keys)| keys.into_iter().map(move |(k, ttl)| (k, node, ttl)))
        .collect()
}

#[tokio::test]
async fn a_names_keys_share_one_slot_a_quota_has_its_own_and_every_key_expires() {
    let Some(cluster) = test_redis::start_cluster() else {
        return;
    };
    let apps = TestApp::on(slow(sv::router(), Duration::from_millis(500)))
        .with(|s| {
            // One unit a second: the quota's key lives (its bucket is not whole) while we look.
            s.rate_limit.per_key_per_minute = 60;
            s.rate_limit.burst = 1_000;
        })
        .on_redis(&cluster.url())
        .replicas(3)
        .await;
    let names = sample_names();

    // While a lookup is in flight its lock is in Redis, on the name's slot.
    let first = names[0].clone();
    let in_flight = {
        let (apps, first) = (apps.clone(), first.clone());
        tokio::spawn(async move { apps[0].lookup(ShortVideo, &first).await.status() })
    };
    let lock = format!("it:{{n:short-video:{first}}}:l");
    let mut lock_seen = false;
    for _ in 0..40 {
        if every_key(&cluster).iter().any(|(k, _, _)| *k == lock) {
            lock_seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(lock_seen, "the flight lock {lock} was written");
    let name_slot = |name: &str| cluster.keyslot(&format!("n:short-video:{name}"));
    assert_eq!(cluster.keyslot(&lock), name_slot(&first));
    assert_eq!(in_flight.await.unwrap(), 200);

    for (i, name) in names.iter().chain([&"no.such.user".to_owned()]).enumerate() {
        let status = apps[i % 3].lookup(ShortVideo, name).await.status();
        assert!(matches!(status, 200 | 404), "{name}: {status}");
    }
    let written = every_key(&cluster);
    for (key, node, ttl) in &written {
        assert!(*ttl > 0, "{key} (node {node}) has no expiry ({ttl})");
        assert!(!key.contains(KEY), "{key} holds the API key");
    }
    let slots: BTreeSet<u16> = written.iter().map(|(k, _, _)| cluster.keyslot(k)).collect();
    for name in &names {
        for suffix in ["e", "s"] {
            let key = format!("it:{{n:short-video:{name}}}:{suffix}");
            assert!(
                written.iter().any(|(k, _, _)| *k == key),
                "{key} is written: {written:?}"
            );
            assert_eq!(cluster.keyslot(&key), name_slot(name), "{key}");
        }
    }
    let quota = quota_key();
    assert!(written.iter().any(|(k, _, _)| *k == quota), "{written:?}");
    let quota_slot = cluster.keyslot(&quota);
    assert_eq!(
        quota_slot,
        cluster.keyslot(&quota[3..]),
        "hashed on its tag"
    );
    for name in names.iter().chain([&"no.such.user".to_owned()]) {
        assert_ne!(quota_slot, name_slot(name), "the quota has its own slot");
    }
    let nodes: BTreeSet<usize> = written.iter().map(|(_, n, _)| *n).collect();
    assert!(
        nodes.len() >= 2 && slots.len() > names.len(),
        "the keys are spread over the cluster: {written:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_killed_paused_or_the_whole_cluster_down_under_load_fails_no_request() {
    let Some(mut cluster) = test_redis::start_cluster() else {
        return;
    };
    let apps = TestApp::on(sv::router())
        .with(|s| {
            s.redis.timeout_ms = 100;
            // Ten units a second and a bucket nothing here empties: never a 429, and the
            // quota's key (whose life is the time until the bucket is whole) outlives the gaps
            // between requests.
            s.rate_limit.per_key_per_minute = 600;
            s.rate_limit.burst = 100_000;
        })
        .on_redis(&cluster.url())
        .replicas(3)
        .await;
    let load = Load::start(apps.clone());
    tokio::time::sleep(Duration::from_millis(300)).await;

    // The node holding the key's quota: every request asks it.
    let quota = quota_key();
    let on_node = |cluster: &TestCluster| {
        every_key(cluster)
            .into_iter()
            .find(|(k, _, _)| *k == quota)
            .map(|(_, node, _)| node)
    };
    let victim = on_node(&cluster).expect("the quota is in the cluster");
    cluster.kill_node(victim);
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    for app in apps.iter() {
        assert_eq!(
            app.get("/readyz").await.status(),
            200,
            "ready with a node down"
        );
        app.lookup(ShortVideo, &sample_names()[0])
            .await
            .expect_status(200);
    }

    // An empty node on the same ports and cluster config: the same node, its slots back.
    let mut cluster = cluster.off_runtime(move |c| c.restart_node(victim)).await;
    assert!(
        all_back_on_redis(&apps).await,
        "back on the cluster within 5 s of its return"
    );
    let requota = eventually(Duration::from_secs(5), || on_node(&cluster) == Some(victim)).await;
    assert!(requota, "the quota is kept on the restarted node again");

    // The same node hung (SIGSTOP) under load, then resumed.
    cluster.pause_node(victim);
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let mut cluster = cluster.off_runtime(move |c| c.resume_node(victim)).await;
    assert!(
        all_back_on_redis(&apps).await,
        "back on the cluster within 5 s of the node's resumption"
    );

    // The whole cluster down under load, then back (empty): the same again.
    cluster.kill_all();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _cluster = cluster.off_runtime(move |c| c.restart_all()).await;
    assert!(
        all_back_on_redis(&apps).await,
        "back on the cluster within 5 s of its restart"
    );

    load.stop_expecting_no_failure().await;
}
