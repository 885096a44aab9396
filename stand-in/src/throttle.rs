//! The throttle switch: a stand-in that answers every request as its platform does when it
//! throttles the caller's address (429 with a short `Retry-After`), whatever the name or the
//! document, switched while it runs: `POST /__throttle/on`, `POST /__throttle/off`,
//! `GET /__throttle`. A platform-wide refusal, which the service blames on the platform (and
//! its breaker opens), where [`THROTTLED_NAME`](crate::THROTTLED_NAME) is refused alone and is
//! that name's. While it is on, the drift switch's routes are throttled too.

use axum::Router;

use crate::answer::throttled;
use crate::switch::{Switch, switched};

/// The control path on a stand-in.
pub const CONTROL_PATH: &str = "/__throttle";

/// `router`, or a platform that throttles every request while `switch` is on, with the
/// switch's control routes.
pub fn throttleable(router: Router, switch: Switch) -> Router {
    let throttling = Router::new().fallback(|| async { throttled() });
    switched("throttle", router, throttling, switch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_call::call;
    use axum::http::Method;

    #[tokio::test]
    async fn every_request_is_throttled_while_the_switch_is_on() {
        let router = Router::new().fallback(|| async { "profile" });
        let router = throttleable(router, Switch::default());
        assert_eq!(call(&router, Method::GET, "/@x").await.status, 200);
        assert_eq!(
            call(&router, Method::POST, "/__throttle/on").await.body,
            "{\"throttle\":\"on\"}"
        );
        for path in ["/@x", "/api/graphql", "/__drift/on"] {
            let answer = call(&router, Method::GET, path).await;
            assert_eq!(answer.status, 429, "{path}");
        }
        call(&router, Method::POST, "/__throttle/off").await;
        assert_eq!(call(&router, Method::GET, "/@x").await.body, "profile");
    }
}
