//! The drift switch: a stand-in that serves its platform as it is, or as it would be after the
//! platform moved one of its documents ([`StandIn::drifted_router`](crate::StandIn::drifted_router)),
//! switched while it runs. The demo turns it on after `--drift-after` (and off again after as
//! long), and each stand-in takes `POST /__drift/on` and `POST /__drift/off` (`GET /__drift`
//! says which it serves): on the stand-in only, never on the service.

use axum::Router;

use crate::switch::{Switch, switched};

/// The control path on a stand-in.
pub const CONTROL_PATH: &str = "/__drift";

/// Whether a stand-in serves its drifted shape; clones share one switch.
pub type DriftSwitch = Switch;

/// `normal` or `drifted`, as `switch` says, with the switch's control routes.
pub fn switchable(normal: Router, drifted: Router, switch: DriftSwitch) -> Router {
    switched("drift", normal, drifted, switch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_call::call;
    use axum::http::Method;

    #[tokio::test]
    async fn the_switch_picks_the_router_and_its_routes_turn_it() {
        let normal = Router::new().fallback(|| async { "normal" });
        let drifted = Router::new().fallback(|| async { "drifted" });
        let switch = DriftSwitch::default();
        let router = switchable(normal, drifted, switch.clone());
        assert_eq!(call(&router, Method::GET, "/@x").await.body, "normal");
        assert_eq!(
            call(&router, Method::POST, "/__drift/on").await.body,
            "{\"drift\":\"on\"}"
        );
        assert!(switch.is_on());
        assert_eq!(call(&router, Method::GET, "/@x").await.body, "drifted");
        // A photo-share page of a user called `__drift` is not the control route.
        assert_eq!(
            call(&router, Method::GET, "/__drift/").await.body,
            "drifted"
        );
        call(&router, Method::POST, "/__drift/off").await;
        assert_eq!(call(&router, Method::GET, "/@x").await.body, "normal");
        assert_eq!(
            call(&router, Method::GET, "/__drift").await.body,
            "{\"drift\":\"off\"}"
        );
    }
}
