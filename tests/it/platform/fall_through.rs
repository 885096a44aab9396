//! Every source falls through: a source refused on every route left hands the lookup to the
//! platform's next source within the same deadline, and a refusal every route gets for every
//! name (the photo-share JSON endpoint retired for clients without a session, 2026-09) is the
//! source's: it rests no proxy once the evidence says so, and the source is then demoted.

use axum::http::StatusCode;
use stand_in::photo_share as ps;

use crate::support::forward_proxy::ForwardProxy;
use crate::support::{PhotoShare, TestApp, routers};

/// What the retired JSON endpoint answers every name: 429 and an HTML "Please wait" page.
const PLEASE_WAIT: &str = "<!DOCTYPE html><html><head><title>Error</title></head><body>Please wait a few minutes before you try again.</body></html>";

/// The photo-share stand-in whose JSON endpoint refuses every name; the page still answers.
fn retired_json() -> axum::Router {
    let refused = routers::typed(StatusCode::TOO_MANY_REQUESTS, "text/html", PLEASE_WAIT);
    routers::split("/api/", refused, ps::router())
}

/// The pages the stand-in serves, by name.
const NAMES: [&str; 3] = [
    ps::PUBLIC_USER.username,
    ps::PRIVATE_USER.username,
    ps::BUSINESS_USER.username,
];

#[tokio::test]
async fn a_json_endpoint_refused_on_the_direct_route_falls_through_to_the_page() {
    let app = TestApp::on(retired_json())
        .with(|s| {
            s.retry.base_delay_ms = 10;
            s.retry.max_delay_ms = 10;
        })
        .start()
        .await;
    for name in NAMES {
        app.lookup(PhotoShare, name)
            .await
            .about(name)
            .expect_status(200)
            .expect_header("x-source", "page");
    }
}

#[tokio::test]
async fn a_source_wide_refusal_rests_no_proxy_and_the_page_answers_through_every_one() {
    let p = ForwardProxy::start_each(&["a", "b", "c"]).await;
    let app = TestApp::on(retired_json())
        .through(&p)
        .with(|s| s.upstream.proxy_cooldown_seconds = 600)
        .start()
        .await;
    // The first lookup learns the refusal on every route (resting the routes it leaves), and
    // the page answers on the last one.
    for round in 0..4 {
        for name in NAMES {
            app.lookup(PhotoShare, name)
                .await
                .about(format!("{name}, round {round}"))
                .expect_status(200)
                .expect_header("x-source", "page");
        }
    }
    // Once the refusal is known to be the source's, the rests it caused are lifted and no
    // proxy rests for it: the later lookups take the proxies in turn again.
    let via = app.upstream().via();
    let late: std::collections::BTreeSet<&str> =
        via[via.len() - 6..].iter().map(String::as_str).collect();
    assert_eq!(late.len(), 3, "every proxy in use again: {via:?}");
    // Demoted after 10 refusals over 3 names while the page read: the page is asked first,
    // one request per lookup.
    let before = app.hits();
    for name in NAMES {
        app.lookup(PhotoShare, name).await.expect_status(200);
    }
    assert_eq!(app.hits() - before, 3, "{:?}", app.upstream().paths());
}
