//! A silent route (a proxy that takes the request and never answers) on loopback: it never
//! fails a lookup on its own. The lookup's next attempt goes through another route at once;
//! blame is by comparison: the silent one rests once it was silent twice while other routes
//! answered in time, and nothing rests when every route is slow (`proxy_blame`).

use std::time::Duration;

use crate::support::forward_proxy::{ForwardProxy, Mode};
use crate::support::routers::both_platforms;
use crate::support::{ShortVideo, TestApp};

const NAME: &str = "sunny.kitchen.lab";

#[tokio::test]
async fn a_silent_proxy_among_failing_and_working_ones_never_fails_a_lookup() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::a_silent_proxy_among_failing_and_working_ones_never_fails_a_lookup"
    )) {
        return;
    }
    let auth = ForwardProxy::start("auth", Mode::Always407, None).await;
    let silent = ForwardProxy::start("silent", Mode::Hang, None).await;
    let resetting = ForwardProxy::start("resetting", Mode::Reset, None).await;
    let good = ForwardProxy::start("good", Mode::Forward, None).await;
    let app = TestApp::on(both_platforms())
        .through([&auth, &silent, &resetting, &good])
        .with(|s| {
            s.upstream.timeout_ms = 300;
            s.server.request_timeout_ms = 5_000;
        })
        .start()
        .await;
    for _ in 0..16 {
        let (answer, took) = app.timed_lookup(ShortVideo, NAME).await;
        answer.expect_status(200);
        assert!(took < Duration::from_secs(2), "{took:?}");
    }
    assert_eq!(app.upstream().via(), ["good"; 16]);
    // The silent one rests once it is an outlier: silent in a row while the other route
    // answered in time five times and more (a silence or two among few answers rests nothing).
    assert!((2..=7).contains(&silent.held()), "{}", silent.held());
    let metrics = app.metrics().await;
    assert!(
        metrics.contains("profile_lookup_proxy_resting{platform=\"short-video\",proxy=\"1\"} 1"),
        "{metrics}"
    );
}
