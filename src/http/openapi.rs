//! The OpenAPI 3.1 document, generated from the handlers, the registered platforms and their
//! body types, and its handler.

use std::sync::LazyLock;

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use bytes::Bytes;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::handlers;
use crate::error::Problem;
use crate::platform::{Platform, Site, SiteJob, with_site};
use crate::username;

/// The document's root: info, schemas, the bearer scheme and tags; the paths come with the
/// routes ([`super::document`]).
#[derive(OpenApi)]
#[openapi(
    info(
        title = "profile-lookup",
        description = "Public profiles of one user per request from a short-video platform and a photo-share platform. Errors are RFC 9457 problem documents with a stable `code`.",
    ),
    components(schemas(Problem, handlers::Health)),
    modifiers(&BearerScheme),
    tags((name = "profiles", description = "Profile lookups (bearer key required)"),
         (name = "operations", description = "Health, readiness, metrics, the canary's status and this document"))
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

/// The problem answers every lookup route gives, by status; `403` only on a platform that
/// shows some profiles to logged-in viewers only, `451` only on one that withholds profiles by
/// region.
const LOOKUP_PROBLEMS: [(&str, &str); 9] = [
    ("400", "invalid_username"),
    ("401", "unauthorized"),
    (
        "403",
        "profile_restricted: the platform shows this profile only to logged-in viewers \
         (audience controls, age gates); never cached, and no older copy is served for it",
    ),
    ("404", "profile_not_found"),
    ("429", "rate_limited or upstream_blocked"),
    (
        "451",
        "region_locked: the platform withholds the profile from the service's network region",
    ),
    ("500", "extraction_failed or upstream_unavailable"),
    ("503", "overloaded"),
    (
        "504",
        "not_cached: `Cache-Control: only-if-cached` and nothing stored suits it; the platform was not asked",
    ),
];

/// The lookup route of `platform`, its path and operation, with the schemas of its body.
pub fn lookup_path(platform: Platform) -> LookupPath {
    with_site(platform, DescribeLookup)
}

/// One platform's lookup route as the document holds it.
pub struct LookupPath {
    /// `/{label}/profile/{username}`.
    pub path: String,
    /// Its GET operation.
    pub operation: utoipa::openapi::path::Operation,
    /// The body's schema and those it refers to, by name.
    pub schemas: Vec<(
        String,
        utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
    )>,
}

struct DescribeLookup;

impl SiteJob for DescribeLookup {
    type Output = LookupPath;

    fn run<S: Site>(self) -> LookupPath {
        use utoipa::ToSchema;
        use utoipa::openapi::path::{OperationBuilder, ParameterBuilder, ParameterIn};
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        use utoipa::openapi::security::SecurityRequirement;
        use utoipa::openapi::{ContentBuilder, Ref, Required, ResponseBuilder, ResponsesBuilder};

        let platform = S::PLATFORM;
        let (min, max) = platform.username_len();
        let username = ParameterBuilder::new()
            .name("username")
            .parameter_in(ParameterIn::Path)
            .description(Some(username::rule_summary(min, max)))
            .required(Required::True)
            .schema(Some(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(min))
                    .max_length(Some(max))
                    .pattern(Some(username::PATTERN)),
            ))
            .example(Some(S::API.example_username.into()))
            .build();
        let body = <S::Body as ToSchema>::name();
        let mut found = ResponseBuilder::new().description(S::API.found).content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name(body.clone())))
                .build(),
        );
        for (name, header) in answer_headers() {
            found = found.header(name, header);
        }
        let mut responses = ResponsesBuilder::new().response("200", found);
        for (status, description) in LOOKUP_PROBLEMS {
            if (status == "451" && !S::API.region_locks) || (status == "403" && !S::API.restricts) {
                continue;
            }
            let mut problem = ResponseBuilder::new().description(description).content(
                "application/problem+json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("Problem")))
                    .build(),
            );
            if !matches!(status, "400" | "401") {
                problem = problem.header("Cache-Status", cache_status_header(SEE_200));
            }
            responses = responses.response(status, problem);
        }
        let operation = OperationBuilder::new()
            .tag("profiles")
            .summary(Some(format!("The {platform} profile of one user.")))
            .operation_id(Some(format!("{}_profile", platform.section())))
            .parameter(username)
            .parameter(cache_control_parameter())
            .responses(responses.build())
            .security(SecurityRequirement::new("bearer", Vec::<String>::new()))
            .build();
        let schemas = crate::platform::profile::schemas::<S::Body>();
        LookupPath {
            path: format!("/{platform}/profile/{{username}}"),
            operation,
            schemas,
        }
    }
}

// --- freshness: the request's `Cache-Control` and the answer's cache headers -----------------

/// The lookup's optional `Cache-Control` request header: the directives it honours and what a
/// forced fetch costs.
fn cache_control_parameter() -> utoipa::openapi::path::Parameter {
    use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
    use utoipa::openapi::{Required, schema::ObjectBuilder, schema::Type};
    ParameterBuilder::new()
        .name("Cache-Control")
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(
            "RFC 9111 request directives (several, comma-separated; others are ignored). \
             `max-age=N`: no stored answer older than N seconds is served; the lookup fetches \
             now (callers of one name share one fetch). `no-cache`: the same with N = 0. \
             `max-stale[=N]`: a profile up to N seconds past its freshness is acceptable (any, \
             without N). `only-if-cached`: answer from what is stored, or 504 `not_cached`; \
             nothing is asked of the platform. A fetch that `max-age`/`no-cache` forces past a \
             stored answer costs one more unit of the key's quota (429 `rate_limited` when \
             none is left).",
        ))
        .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
        .example(Some("max-age=60".into()))
        .build()
}

/// How a problem answer's `Cache-Status` is described: as the found profile's.
const SEE_200: &str = "How the cache handled the lookup (RFC 9211), as described for 200.";

/// The description of `Cache-Status` on a found profile's answer.
const CACHE_STATUS: &str = "How the cache handled the lookup (RFC 9211): `profile-lookup; hit; \
    ttl=N` (from the cache; `ttl` is the freshness left in seconds, negative when a stale answer \
    is served while it is refreshed), or `profile-lookup; fwd=uri-miss|stale|request; \
    fwd-status=S; stored; collapsed; ttl=N` (asked of the platform: nothing stored, only a stale \
    answer, or the caller's directives refused a fresh one; `collapsed` when another caller's \
    fetch was joined), with `detail=stale-if-error`, `only-if-cached`, `quota` or `deadline` in \
    those cases. Answers refused before the cache (400, 401, a spent quota) have none.";

/// RFC 9211's `Cache-Status`, on every answer that reached the cache, described as `text`.
fn cache_status_header(text: &str) -> utoipa::openapi::header::Header {
    use utoipa::openapi::header::HeaderBuilder;
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    HeaderBuilder::new()
        .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
        .description(Some(text))
        .build()
}

/// The headers of a found profile's answer, besides `Cache-Status`.
fn answer_headers() -> Vec<(&'static str, utoipa::openapi::header::Header)> {
    use utoipa::openapi::Deprecated;
    use utoipa::openapi::header::HeaderBuilder;
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    let string = || Some(ObjectBuilder::new().schema_type(Type::String));
    vec![
        ("Cache-Status", cache_status_header(CACHE_STATUS)),
        (
            "Age",
            HeaderBuilder::new()
                .schema(Some(ObjectBuilder::new().schema_type(Type::Integer)))
                .description(Some(
                    "Seconds since the platform gave this answer (to any replica).",
                ))
                .build(),
        ),
        (
            "Cache-Control",
            HeaderBuilder::new()
                .schema(string())
                .description(Some(
                    "`private, max-age=N`: N seconds of freshness left (0 once stale).",
                ))
                .build(),
        ),
        (
            "Profile-Withheld",
            HeaderBuilder::new()
                .schema(string())
                .description(Some(
                    "The documented fields that are `null` because the platform withheld them \
                     from a guest, comma-separated dotted paths of the body (a private account's \
                     counts; the photo-share post count when its embed page could not give it: \
                     `edge_owner_to_timeline_media.count`). Absent when nothing was withheld: a \
                     `null` it names is \"withheld\", never \"zero\".",
                ))
                .build(),
        ),
        (
            "x-cache",
            HeaderBuilder::new()
                .schema(string())
                .description(Some(
                    "Deprecated (use `Cache-Status`; removed in a later release): `hit`, `miss` \
                     or `stale`.",
                ))
                .deprecated(Some(Deprecated::True))
                .build(),
        ),
    ]
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
