//! The edge: middleware and handlers, and the router that joins them.
//!
//! Layers, outermost first: sensitive headers marked (so nothing below can log a key) → request
//! id, access log and metrics ([`access_log`], one hand-written layer) → panic guard → handler.
//! A lookup handler first takes [`guard::Admitted`] (load shedding, auth, the per-key rate
//! limit), then the caller's `Cache-Control` wishes ([`directives::Directives`]) and its checked
//! name ([`path_name::Name`]), and answers within the request deadline. Operator endpoints
//! (`/`, `/healthz`, `/readyz`, `/metrics`, `/status`, `/openapi.json`, `/docs`) are never shed: a
//! replica busy up to `server.max_in_flight` must not look dead to its probes.

pub mod access_log;
pub mod client_addr;
pub mod directives;
pub mod docs;
pub mod guard;
pub mod handlers;
mod lookup_answer;
pub mod openapi;
pub mod path_name;
pub mod request_id;
pub mod status;

use axum::Router;
use axum::http::header::{AUTHORIZATION, COOKIE, PROXY_AUTHORIZATION, SET_COOKIE};
use axum::response::IntoResponse;
use axum::routing::get;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::sensitive_headers::{
    SetSensitiveRequestHeadersLayer, SetSensitiveResponseHeadersLayer,
};
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::platform::{Platform, Site, SiteJob, with_site};
use crate::state::AppState;

/// The service's name, as `GET /` and the `/docs` page's title give it.
pub const SERVICE_NAME: &str = env!("CARGO_PKG_NAME");

/// The operator endpoints, each registered with its OpenAPI operation in one call.
fn operations() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(handlers::index))
        .routes(routes!(handlers::healthz))
        .routes(routes!(handlers::readyz))
        .routes(routes!(handlers::metrics))
        .routes(routes!(status::status))
        .routes(routes!(openapi::serve))
}

/// The OpenAPI document: the root ([`openapi::ApiDoc`]: info, shared schemas, security, tags),
/// every registered platform's lookup route, and the operator endpoints.
pub fn document() -> utoipa::openapi::OpenApi {
    use utoipa::openapi::path::{HttpMethod, PathItem};
    let mut document = OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(operations())
        .into_openapi();
    let components = document.components.get_or_insert_with(Default::default);
    for &platform in Platform::ALL {
        let lookup = openapi::lookup_path(platform);
        components.schemas.extend(lookup.schemas);
        document.paths.paths.insert(
            lookup.path,
            PathItem::new(HttpMethod::Get, lookup.operation),
        );
    }
    document
}

/// The lookup route of every registered platform, each at `/{label}/profile/{username}`.
fn lookups() -> Router<AppState> {
    struct Route(Router<AppState>);
    impl SiteJob for Route {
        type Output = Router<AppState>;
        fn run<S: Site>(self) -> Router<AppState> {
            let path = format!("/{}/profile/{{username}}", S::PLATFORM);
            self.0.route(&path, get(handlers::lookup::<S>))
        }
    }
    Platform::ALL
        .iter()
        .fold(Router::new(), |router, &p| with_site(p, Route(router)))
}

/// The whole HTTP application for `state`.
pub fn router(state: AppState) -> Router {
    // Every route is in the document, the lookups included: their templates are the metrics'
    // route labels.
    crate::telemetry::name_routes(document().paths.paths.keys().map(String::as_str));
    let (operations, _) = operations().split_for_parts();
    lookups()
        .merge(operations)
        .merge(docs::router())
        .method_not_allowed_fallback(handlers::method_not_allowed)
        .fallback(handlers::not_found)
        .layer(
            ServiceBuilder::new()
                .layer(SetSensitiveRequestHeadersLayer::new([
                    AUTHORIZATION,
                    PROXY_AUTHORIZATION,
                    COOKIE,
                ]))
                .layer(SetSensitiveResponseHeadersLayer::new([SET_COOKIE]))
                .layer(access_log::AccessLogLayer::new(
                    client_addr::TrustedProxies::new(
                        // Checked when the settings were loaded.
                        state
                            .settings()
                            .server
                            .trusted_networks()
                            .unwrap_or_default(),
                    ),
                    state.keys().log_ids(),
                ))
                .layer(CatchPanicLayer::custom(|_| {
                    ApiError::Internal.into_response()
                })),
        )
        .with_state(state)
}
