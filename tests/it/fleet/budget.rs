//! The fleet's budgets hold while replicas disagree on their limits, as they do during a
//! rollout: a replica willing to queue less (`max_queue_ms`) or allowing a smaller burst reads
//! the state the others wrote as it is, never as junk to overwrite.

use std::sync::Arc;
use std::time::Duration;

use profile_lookup::fleet::{Reservation, key_id};
use profile_lookup::registry::Platform;
use stand_in::short_video as sv;

use crate::support::fleet::handle;
use crate::support::{ShortVideo, TestApp, spawn_upstream, test_redis};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_queueing_differently_send_no_more_than_the_fleets_budget() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let upstream = spawn_upstream(sv::router()).await;
    let replica = |max_queue_ms: u64| {
        TestApp::on(&upstream)
            .on_redis(&redis.url())
            .with(|s| {
                let platform = s.platform_mut(Platform::ShortVideo);
                platform.requests_per_second = 2;
                platform.burst = 1;
                platform.max_queue_ms = max_queue_ms;
            })
            .start()
    };
    // The patient replica queues up to 5 s; the other (a new version, say) 600 ms.
    let apps: Arc<Vec<TestApp>> = Arc::new(vec![replica(5_000).await, replica(600).await]);
    let ask = |replica: usize, name: String| {
        let apps = apps.clone();
        tokio::spawn(async move { apps[replica].lookup(ShortVideo, &name).await.status() })
    };
    let mut calls: Vec<_> = (0..10)
        .map(|i| ask(0, format!("patient.name{i}")))
        .collect();
    for i in 0..30 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        calls.push(ask(1, format!("hasty.name{i}")));
    }
    for call in calls {
        let status = call.await.unwrap();
        assert!(matches!(status, 404 | 503), "{status}");
    }
    let at = upstream.arrivals();
    // Two a second with a burst of one: at most 7 requests in any 3 s (at 0, 0.5, …, 3.0).
    let most = at
        .iter()
        .map(|start| {
            at.iter()
                .filter(|t| **t >= *start && **t < *start + Duration::from_secs(3))
                .count()
        })
        .max()
        .unwrap_or(0);
    assert!(
        most <= 7,
        "{most} requests in 3 s (of {} in all), at 2 a second",
        at.len()
    );
}

#[tokio::test]
async fn a_replica_with_smaller_limits_respects_the_state_the_others_wrote() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let fleet_at = |url: &str| handle(url, "it:", 500);
    let (patient, hasty) = (fleet_at(&redis.url()), fleet_at(&redis.url()));
    // The outbound budget: one a second; the patient replica queues five seconds' worth.
    for _ in 0..5 {
        let reserved = patient
            .outbound_reserve("short-video", 1.0, 1, Duration::from_secs(10))
            .await;
        assert!(
            matches!(reserved, Some(Reservation::Wait(_))),
            "{reserved:?}"
        );
    }
    let refused = hasty
        .outbound_reserve("short-video", 1.0, 1, Duration::from_millis(500))
        .await;
    let Some(Reservation::TooLong(wait)) = refused else {
        panic!("the queue is 5 s long, yet a caller accepting 500 ms got {refused:?}");
    };
    assert!(wait > Duration::from_secs(4), "{wait:?}");

    // A key's quota: the old replicas allow a burst of 20, the new one 5.
    let id = key_id(&[3; 32]);
    for i in 0..20 {
        let d = patient.quota_check(&id, 60, 20).await.expect("redis up");
        assert!(d.allowed, "unit {i}");
    }
    let d = hasty.quota_check(&id, 60, 5).await.expect("redis up");
    assert!(
        !d.allowed,
        "the bucket is empty, yet a replica with a smaller burst was given {d:?}"
    );
    assert!(d.retry_after > Duration::from_secs(10), "{d:?}");
}
