//! The OpenAPI 3.1 document, generated from the handlers and body types, and its handler.

use std::sync::LazyLock;

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use bytes::Bytes;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::handlers;
use crate::error::Problem;
use crate::platform::{
    Count, PhotoShareProfile, ShortVideoProfile, ShortVideoStats, ShortVideoUser,
    ShortVideoUserInfo,
};
use crate::username::{self, Platform};

/// The document's root: info, schemas, the bearer scheme and tags; the paths come with the
/// routes ([`super::document`]).
#[derive(OpenApi)]
#[openapi(
    info(
        title = "profile-lookup",
        description = "Public profiles of one user per request from a short-video platform and a photo-share platform. Errors are RFC 9457 problem documents with a stable `code`.",
    ),
    components(schemas(
        ShortVideoProfile, ShortVideoUserInfo, ShortVideoUser, ShortVideoStats,
        PhotoShareProfile, Count, Problem, handlers::Health
    )),
    modifiers(&BearerScheme),
    tags((name = "profiles", description = "Profile lookups (bearer key required)"),
         (name = "operations", description = "Health, readiness, metrics and this document"))
)]
pub struct ApiDoc;

struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        // utoipa copies the crate's (empty) license field; the document states none.
        openapi.info.license = None;
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("An API key: `Authorization: Bearer <key>`"))
                    .build(),
            ),
        );
    }
}

/// States each lookup route's username rule (lengths, pattern, description) from
/// [`crate::username`], where the rule lives, instead of repeating it in the handlers'
/// annotations.
pub fn state_username_rules(document: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    for platform in Platform::ALL {
        let path = format!("/{}/profile/{{username}}", platform.as_str());
        let Some(get) = document
            .paths
            .paths
            .get_mut(&path)
            .and_then(|p| p.get.as_mut())
        else {
            continue;
        };
        let (min, max) = platform.username_len();
        for param in get.parameters.iter_mut().flatten() {
            let utoipa::openapi::RefOr::T(param) = param else {
                continue;
            };
            if param.name != "username" {
                continue;
            }
            param.description = Some(username::rule_summary(min, max));
            param.schema = Some(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(min))
                    .max_length(Some(max))
                    .pattern(Some(username::PATTERN))
                    .into(),
            );
        }
    }
}

/// The document as pretty JSON, serialised once (what `GET /openapi.json` serves).
pub fn document_bytes() -> Bytes {
    static DOCUMENT: LazyLock<Bytes> = LazyLock::new(|| Bytes::from(document_json()));
    DOCUMENT.clone()
}

/// The document as pretty JSON.
pub fn document_json() -> String {
    super::document()
        .to_pretty_json()
        .unwrap_or_else(|_| "{}".into())
}

/// This API's OpenAPI 3.1 document.
#[utoipa::path(get, path = "/openapi.json", tag = "operations", operation_id = "openapi",
    responses((status = 200, description = "The OpenAPI document", content_type = "application/json", body = Object)))]
pub async fn serve() -> Response {
    let mut response = Response::new(Body::from(document_bytes()));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
