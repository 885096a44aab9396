//! The third photo-share source, `graphql`: the web client's profile query posted by the
//! account's pk, which the service learns from an earlier answer about the name (kept locally
//! and in Redis). A name seen once is answered by it when the JSON endpoint and the page both
//! refuse; a name never seen skips it; the POST carries the peers' form fields and the web
//! client's headers; the answer reads as `text/javascript`, with or without `"status":"ok"`.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use profile_lookup::config::Settings;
use stand_in::photo_share as ps;

use crate::support::routers::{split, switchable, typed};
use crate::support::{PhotoShare, TestApp};

/// The doc_id the service posts by default (what the web app sent on 2026-09-29).
const DEFAULT_DOC_ID: &str = ps::PROFILE_QUERY_DOC_ID;

/// The sources with the profile query last, no cache (every lookup asks the platform), short
/// waits.
fn with_graphql(s: &mut Settings) {
    let section = s.platform_mut(profile_lookup::platform::Platform::PhotoShare);
    section.sources = vec!["json".into(), "page".into(), "graphql".into()];
    s.cache.enabled = false;
    s.retry.base_delay_ms = 10;
    s.retry.max_delay_ms = 10;
}

/// The JSON endpoint and the page refusing every name (429, "Please wait"); the profile query
/// answered by `query`.
fn refused_but(query: Router) -> Router {
    let refused = typed(
        StatusCode::TOO_MANY_REQUESTS,
        "text/html",
        ps::PLEASE_WAIT_HTML,
    );
    split("/api/graphql", query, refused)
}

/// One posted form's fields, in order.
type Fields = Vec<(String, String)>;

/// The forms posted to `router`, one per request, kept as their fields.
#[derive(Clone, Default)]
struct Posted(Arc<Mutex<Vec<Fields>>>);

impl Posted {
    /// `router`, noting every posted form first.
    fn around(&self, router: Router) -> Router {
        let posted = self.clone();
        router.layer(axum::middleware::from_fn(
            move |request: Request, next: axum::middleware::Next| {
                let posted = posted.clone();
                async move {
                    let (parts, body) = request.into_parts();
                    let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
                    if parts.method == axum::http::Method::POST {
                        let fields = url::form_urlencoded::parse(&bytes)
                            .map(|(k, v)| (k.into_owned(), v.into_owned()))
                            .collect();
                        posted.0.lock().unwrap().push(fields);
                    }
                    next.run(Request::from_parts(parts, Body::from(bytes)))
                        .await
                }
            },
        ))
    }

    fn forms(&self) -> Vec<Fields> {
        self.0.lock().unwrap().clone()
    }
}

/// `router` handing every client a `csrftoken` cookie, as the platform's pages do.
fn with_csrf_cookie(router: Router) -> Router {
    router.layer(axum::middleware::from_fn(
        |request: Request, next: axum::middleware::Next| async move {
            let mut response = next.run(request).await;
            response.headers_mut().append(
                header::SET_COOKIE,
                HeaderValue::from_static("csrftoken=Tok3nFromThePage; Path=/"),
            );
            response
        },
    ))
}

#[tokio::test]
async fn a_name_seen_once_is_refreshed_by_the_profile_query_when_json_and_page_refuse() {
    let posted = Posted::default();
    let (router, switch) = switchable(vec![
        with_csrf_cookie(ps::router()),
        posted.around(refused_but(ps::router())),
    ]);
    let app = TestApp::on(router).with(with_graphql).start().await;
    let user = ps::PUBLIC_USER;
    // Seen once: the JSON answers, and its id is learned.
    app.lookup(PhotoShare, user.username)
        .await
        .expect_status(200)
        .expect_header("x-source", "json");
    // The JSON endpoint and the page now refuse: the profile query answers, by the pk.
    switch.set(1);
    let answer = app
        .lookup(PhotoShare, user.username)
        .await
        .expect_status(200)
        .expect_header("x-source", "graphql");
    let body = answer.json();
    let expected = ps::expected_body(&user);
    for key in [
        "id",
        "username",
        "full_name",
        "edge_followed_by",
        "edge_follow",
    ] {
        assert_eq!(body[key], expected[key], "{key}: {body}");
    }
    // The POST: the peers' form fields, and the web client's headers.
    let forms = posted.forms();
    let form = forms.last().expect("the profile query was posted");
    let field = |k: &str| {
        form.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(field("doc_id"), Some(DEFAULT_DOC_ID));
    assert_eq!(
        field("fb_api_req_friendly_name"),
        Some("PolarisProfilePageContentQuery")
    );
    let variables: serde_json::Value = serde_json::from_str(field("variables").unwrap()).unwrap();
    assert_eq!(variables["id"], user.pk);
    assert_eq!(variables["render_surface"], "PROFILE");
    assert_eq!(variables["enable_integrity_filters"], true);
    assert_eq!(field("server_timestamps"), Some("true"));
    let seen = app.upstream().seen();
    let query = seen
        .iter()
        .rfind(|s| s.path() == "/api/graphql")
        .expect("the query reached the platform");
    assert_eq!(
        query.header("content-type"),
        "application/x-www-form-urlencoded"
    );
    assert_eq!(
        query.header("x-fb-friendly-name"),
        "PolarisProfilePageContentQuery"
    );
    assert_eq!(query.header("x-ig-app-id"), "936619743392459");
    assert_eq!(query.header("x-csrftoken"), "Tok3nFromThePage");
    assert_eq!(query.header("x-requested-with"), "XMLHttpRequest");
    assert_eq!(
        query.header("referer"),
        format!("http://{}/{}/", app.upstream().addr, user.username)
    );
}

#[tokio::test]
async fn a_javascript_answer_with_status_ok_reads_too() {
    let answer = ps::profile_query_answer(&ps::CREATOR_USER, true);
    let query = typed(StatusCode::OK, "text/javascript; charset=utf-8", answer);
    let (router, switch) = switchable(vec![ps::router(), refused_but(query)]);
    let app = TestApp::on(router).with(with_graphql).start().await;
    // The creator's JSON answers 400; the page preloads the query's answer, and its pk.
    app.lookup(PhotoShare, ps::CREATOR_USER.username)
        .await
        .expect_status(200)
        .expect_header("x-source", "page");
    switch.set(1);
    app.lookup(PhotoShare, ps::CREATOR_USER.username)
        .await
        .expect_status(200)
        .expect_header("x-source", "graphql")
        .expect_profile(&ps::expected_body(&ps::CREATOR_USER));
}

#[tokio::test]
async fn a_name_without_a_known_pk_skips_the_profile_query() {
    let app = TestApp::on(refused_but(ps::router()))
        .with(with_graphql)
        .start()
        .await;
    app.lookup(PhotoShare, ps::PUBLIC_USER.username)
        .await
        .expect_status(429);
    let paths = app.upstream().paths();
    assert!(!paths.is_empty(), "the name sources were asked");
    assert!(
        paths.iter().all(|p| !p.starts_with("/api/graphql")),
        "no pk, no query: {paths:?}"
    );
}

#[tokio::test]
async fn without_graphql_in_the_sources_no_pk_is_kept_and_no_query_is_posted() {
    let (router, switch) = switchable(vec![ps::router(), refused_but(ps::router())]);
    let app = TestApp::on(router)
        .with(|s| {
            with_graphql(s);
            let section = s.platform_mut(profile_lookup::platform::Platform::PhotoShare);
            section.sources = vec!["json".into(), "page".into()];
        })
        .start()
        .await;
    app.lookup(PhotoShare, ps::PUBLIC_USER.username)
        .await
        .expect_status(200);
    switch.set(1);
    app.lookup(PhotoShare, ps::PUBLIC_USER.username)
        .await
        .expect_status(429);
    assert!(
        app.upstream()
            .paths()
            .iter()
            .all(|p| !p.starts_with("/api/graphql"))
    );
}

#[tokio::test]
async fn a_pk_one_replica_learned_serves_another_through_redis() {
    let Some(redis) = crate::support::test_redis::start() else {
        return;
    };
    let (router, switch) = switchable(vec![ps::router(), refused_but(ps::router())]);
    let apps = TestApp::on(router)
        .with(with_graphql)
        .on_redis(&redis.url());
    // With the cache off the id still lives as long as a stale copy would: `ttl_seconds` +
    // `max_stale_seconds` (the shipped 600 + 3,600 s), never the 30 days it once did.
    let cache = &apps.settings().cache;
    let life = i64::try_from((cache.ttl_seconds + cache.max_stale_seconds) * 1000).unwrap();
    let apps = apps.replicas(2).await;
    let user = ps::PUBLIC_USER;
    apps[0]
        .lookup(PhotoShare, user.username)
        .await
        .expect_status(200);
    let key = format!("it:{{n:photo-share:{}}}:i", user.username);
    let keys = redis.every_key("*:i").await;
    let (_, ttl, _) = keys
        .iter()
        .find(|(k, _, _)| *k == key)
        .unwrap_or_else(|| panic!("{keys:?}"));
    assert!(
        life - 60_000 < *ttl && *ttl <= life,
        "kept the stale record's life ({life} ms): {ttl}"
    );
    // The other replica never saw the name: the pk comes from Redis.
    switch.set(1);
    apps[1]
        .lookup(PhotoShare, user.username)
        .await
        .expect_status(200)
        .expect_header("x-source", "graphql");
}

#[test]
fn the_doc_id_is_validated_at_load() {
    use profile_lookup::platform::Platform::{PhotoShare as Ps, ShortVideo as Sv};
    let defaults = Settings::default();
    assert_eq!(
        defaults.platform(Ps).graphql_doc_id.as_deref(),
        Some(DEFAULT_DOC_ID)
    );
    assert_eq!(defaults.platform(Ps).sources, ["loggedout", "page", "json"]);
    let error = |edit: &dyn Fn(&mut Settings)| {
        let mut s = Settings::default();
        edit(&mut s);
        s.validate().map(|_| ()).map_err(|e| e.to_string())
    };
    for odd in ["", "12ab", "1 2", "-1", &"9".repeat(33)] {
        let err =
            error(&|s| s.platform_mut(Ps).graphql_doc_id = Some(odd.to_owned())).expect_err(odd);
        assert!(err.contains("photo_share.graphql_doc_id"), "{err}");
    }
    // The source listed without a doc_id to post.
    let err = error(&|s| {
        let section = s.platform_mut(Ps);
        section.sources.push("graphql".into());
        section.graphql_doc_id = None;
    })
    .unwrap_err();
    assert!(err.contains("photo_share.graphql_doc_id"), "{err}");
    // A platform without the source has no doc_id.
    let err = error(&|s| s.platform_mut(Sv).graphql_doc_id = Some("1".into())).unwrap_err();
    assert!(err.contains("short_video.graphql_doc_id"), "{err}");
    assert!(error(&|s| s.platform_mut(Ps).sources.push("graphql".into())).is_ok());
}

/// A retired doc_id: the platform answers 400 `invalid request` (instaloader/instaloader#2695,
/// 2026-05-19). Nothing usable, asked once (never waited out); the lookup ends on the other
/// sources' refusal, never 500.
#[tokio::test]
async fn a_retired_doc_id_is_nothing_usable_and_asked_once() {
    let invalid = r#"{"message":"invalid request","errors":[{"message":"execution error","severity":"CRITICAL"}],"status":"fail"}"#;
    let query = typed(StatusCode::BAD_REQUEST, "application/json", invalid);
    let (router, switch) = switchable(vec![ps::router(), refused_but(query)]);
    let app = TestApp::on(router).with(with_graphql).start().await;
    app.lookup(PhotoShare, ps::PUBLIC_USER.username)
        .await
        .expect_status(200);
    switch.set(1);
    app.lookup(PhotoShare, ps::PUBLIC_USER.username)
        .await
        .expect_status(429);
    let queries = app
        .upstream()
        .paths()
        .iter()
        .filter(|p| p.as_str() == "/api/graphql")
        .count();
    assert_eq!(queries, 1);
}
