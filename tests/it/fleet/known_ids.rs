//! The platform ids the fleet learns for names (`fleet::ids::KnownIds`, the key
//! `P{n:PLATFORM:NAME}:i`): kept in Redis no longer than the name's profile is kept there (its
//! stale record, `ttl + max_stale`), so that under the shipped `noeviction` they never outlast
//! the profiles they serve; and kept alive, while the name is still found, by a rewrite once
//! half that life has passed.

use std::time::Duration;

use profile_lookup::config::{Revalidate, Settings};
use profile_lookup::platform::Platform;
use stand_in::photo_share as ps;

use crate::support::test_redis::{self, TestRedis};
use crate::support::{PhotoShare, TestApp};

/// The photo-share sources by name, then the profile query by pk (posted with the default
/// doc_id): a found profile's pk is learned and kept.
fn with_graphql(s: &mut Settings) {
    s.platform_mut(Platform::PhotoShare).sources =
        vec!["json".into(), "page".into(), "graphql".into()];
}

/// The remaining life (ms) of `name`'s photo-share key ending in `:suffix`; `None` when there
/// is none.
async fn pttl(redis: &TestRedis, name: &str, suffix: &str) -> Option<i64> {
    let key = format!("it:{{n:photo-share:{name}}}:{suffix}");
    redis
        .every_key(&key)
        .await
        .into_iter()
        .find(|(k, _, _)| *k == key)
        .map(|(_, ttl, _)| ttl)
}

#[tokio::test]
async fn a_learned_id_lives_no_longer_than_the_names_stale_record() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let app = TestApp::on(ps::router())
        .with(with_graphql)
        .on_redis(&redis.url());
    let cache = app.settings().cache.clone();
    let app = app.start().await;
    let name = ps::PUBLIC_USER.username;
    app.lookup(PhotoShare, name).await.expect_status(200);
    // The answer is stored by the flight; the id before it, by the fetch.
    let mut stale = None;
    for _ in 0..200 {
        stale = pttl(&redis, name, "s").await;
        if stale.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let stale = stale.expect("the name's stale record is stored");
    let id = pttl(&redis, name, "i")
        .await
        .expect("the name's id is kept");
    let stale_life = i64::try_from((cache.ttl_seconds + cache.max_stale_seconds) * 1000).unwrap();
    assert!(
        stale <= stale_life,
        "stale record {stale} ms, life {stale_life} ms"
    );
    assert!(
        0 < id && id <= stale,
        "the id ({id} ms) outlives the stale record ({stale} ms)"
    );
    assert!(
        id > stale_life - 60_000,
        "the id is kept about the stale record's life ({stale_life} ms): {id} ms"
    );
}

/// Every lookup fetches (no cache); the id lives 4 s. A name found again after half that life
/// has its id written again; found sooner, it costs no write.
#[tokio::test]
async fn a_name_found_again_after_half_its_ids_life_keeps_its_id() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let app = TestApp::on(ps::router())
        .with(with_graphql)
        .with(|s| {
            s.cache.enabled = false;
            s.cache.ttl_seconds = 2;
            s.cache.revalidate_seconds = Revalidate::Seconds(0);
            s.cache.max_stale_seconds = 2;
        })
        .on_redis(&redis.url())
        .start()
        .await;
    let name = ps::PUBLIC_USER.username;
    app.lookup(PhotoShare, name).await.expect_status(200);
    let first = pttl(&redis, name, "i")
        .await
        .expect("the name's id is kept");
    assert!(
        (3_000..=4_000).contains(&first),
        "kept the 4 s life: {first} ms"
    );
    // Found again at once: not written again.
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.lookup(PhotoShare, name).await.expect_status(200);
    let soon = pttl(&redis, name, "i")
        .await
        .expect("the name's id is kept");
    assert!(
        soon < first,
        "written again at once: {first} ms, then {soon} ms"
    );
    // Found again past half its life: written again, for a whole life.
    tokio::time::sleep(Duration::from_millis(2_000)).await;
    app.lookup(PhotoShare, name).await.expect_status(200);
    let again = pttl(&redis, name, "i")
        .await
        .expect("the name's id is kept");
    assert!(
        (3_000..=4_000).contains(&again),
        "not written again for a whole life: {again} ms left"
    );
}
