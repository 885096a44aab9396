//! Photo-share as a guest, as the platform answers a client without a session since 2026-09:
//! the profile JSON answers every guest 401 `require_login`, the page walls datacenter
//! addresses behind a login, and the logged-out profile query by username answers. A never-seen
//! name is answered by `loggedout`, its post count completed from the embed page (asked again
//! on a 500), `Profile-Withheld` names what no source gave, a changed query falls through and
//! its id is learned again from a page's preloaders (and shared through Redis), and the JSON's
//! 401 demotes it without resting a proxy.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use profile_lookup::config::{PostCount, Settings};
use stand_in::photo_share as ps;

use crate::support::forward_proxy::ForwardProxy;
use crate::support::test_redis::on_a_redis;
use crate::support::{PhotoShare, TestApp, shipped_photo_share_sources};

/// An id the platform rotated the logged-out query to (not the seed).
const ROTATED_ID: &str = "31000000000000001";

/// What the page of a name answers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PageIs {
    /// A redirect to the login page, as for datacenter addresses.
    LoginWall,
    /// The profile page, its preloaders naming the query ids in use.
    Profile,
}

/// One posted request: its headers and its form's fields.
type Posted = (HeaderMap, Vec<(String, String)>);

/// The 2026-09 platform as a guest meets it, with switches for each test.
#[derive(Clone)]
struct Guest {
    /// The id the logged-out query answers (others: "changed").
    loggedout_id: Arc<Mutex<String>>,
    /// The logged-out query refusing (429) instead of answering.
    loggedout_refuses: Arc<AtomicBool>,
    /// How many embed requests answer 500 before it answers.
    embed_failures: Arc<AtomicUsize>,
    /// The embed page redirecting to the login page.
    embed_refuses: Arc<AtomicBool>,
    page: PageIs,
    posted: Arc<Mutex<Vec<Posted>>>,
}

impl Guest {
    fn new(page: PageIs) -> Self {
        Self {
            loggedout_id: Arc::new(Mutex::new(ps::LOGGEDOUT_DOC_ID.to_owned())),
            loggedout_refuses: Arc::default(),
            embed_failures: Arc::default(),
            embed_refuses: Arc::default(),
            page,
            posted: Arc::default(),
        }
    }

    fn router(&self) -> Router {
        let guest = self.clone();
        Router::new().fallback(move |request: Request| {
            let guest = guest.clone();
            async move { guest.answer(request).await }
        })
    }

    fn posted(&self) -> Vec<Posted> {
        self.posted.lock().unwrap().clone()
    }

    async fn answer(&self, request: Request) -> Response {
        let path = request.uri().path().to_owned();
        if path == "/api/graphql" && request.method() == Method::POST {
            let (parts, body) = request.into_parts();
            let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
            let fields: Vec<(String, String)> = url::form_urlencoded::parse(&bytes)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            self.posted
                .lock()
                .unwrap()
                .push((parts.headers.clone(), fields.clone()));
            let field = |k: &str| {
                fields
                    .iter()
                    .find(|(key, _)| key == k)
                    .map(|(_, v)| v.clone())
            };
            if field("fb_api_req_friendly_name").as_deref() == Some(ps::LOGGEDOUT_QUERY) {
                if self.loggedout_refuses.load(Ordering::SeqCst) {
                    return (StatusCode::TOO_MANY_REQUESTS, "").into_response();
                }
                let current = self.loggedout_id.lock().unwrap().clone();
                if field("doc_id") != Some(current) {
                    return script(ps::CHANGED_ANSWER.to_owned());
                }
                let variables: serde_json::Value =
                    serde_json::from_str(&field("variables").unwrap_or_default())
                        .unwrap_or_default();
                let name = variables["username"].as_str().unwrap_or_default();
                return match ps::sample_by_name(name) {
                    Some(user) => script(ps::loggedout_answer(&user)),
                    None => script(ps::NO_SUCH_USER_ANSWER.to_owned()),
                };
            }
            // The profile query by pk: the stand-in's own answer.
            let request = Request::from_parts(parts, Body::from(bytes));
            return tower::ServiceExt::oneshot(ps::router(), request)
                .await
                .into_response();
        }
        if path == "/api/v1/users/web_profile_info/" {
            let mut response = (StatusCode::UNAUTHORIZED, ps::REQUIRE_LOGIN_2026).into_response();
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                "application/json; charset=utf-8".parse().unwrap(),
            );
            return response;
        }
        if path == "/accounts/login/" {
            return html(
                "<!DOCTYPE html><html><head><title>Login</title><script src=\"/static/bundles/app.js?v=1&amp;l=en\" async></script></head><body><form id=\"loginForm\"></form></body></html>"
                    .to_owned(),
            );
        }
        if path == "/static/bundles/app.js" {
            let current = self.loggedout_id.lock().unwrap().clone();
            let js = format!(
                "__d(\"Other_instagramRelayOperation\",[],(function(a,b,c,d,e,f){{e.exports=\"1\"}}),null);\n\
                 __d(\"{}_instagramRelayOperation\",[],(function(a,b,c,d,e,f){{e.exports=\"{current}\"}}),null);",
                ps::LOGGEDOUT_QUERY
            );
            return ([(header::CONTENT_TYPE, "text/javascript")], js).into_response();
        }
        let name = path.trim_matches('/').trim_end_matches("/embed").to_owned();
        if path.ends_with("/embed/") {
            if self.embed_refuses.load(Ordering::SeqCst) {
                return login_redirect(&name);
            }
            let failing = self
                .embed_failures
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
            if failing {
                return (StatusCode::INTERNAL_SERVER_ERROR, "oops").into_response();
            }
            return match ps::sample_by_name(&name) {
                Some(user) => html(ps::embed_page(&user)),
                None => (StatusCode::NOT_FOUND, "").into_response(),
            };
        }
        match (self.page, ps::sample_by_name(&name)) {
            (PageIs::Profile, Some(user)) => {
                let current = self.loggedout_id.lock().unwrap().clone();
                let page =
                    ps::xig_profile_page(&user, 64 * 1024).replace(ps::LOGGEDOUT_DOC_ID, &current);
                html(page)
            }
            (PageIs::Profile, None) => {
                (StatusCode::NOT_FOUND, html(ps::not_found_page())).into_response()
            }
            (PageIs::LoginWall, _) => login_redirect(&name),
        }
    }
}

fn script(body: String) -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        body,
    )
        .into_response()
}

fn html(body: String) -> Response {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        Bytes::from(body),
    )
        .into_response()
}

fn login_redirect(name: &str) -> Response {
    let target = format!("/accounts/login/?next=%2F{name}%2F");
    (StatusCode::FOUND, [(header::LOCATION, target)]).into_response()
}

/// The defaults, the cache off (every lookup asks the platform), short waits.
fn uncached(s: &mut Settings) {
    shipped_photo_share_sources(s);
    s.cache.enabled = false;
    s.retry.base_delay_ms = 10;
    s.retry.max_delay_ms = 10;
}

fn count_of(answer: &crate::support::answer::Answer) -> serde_json::Value {
    answer.json()["edge_owner_to_timeline_media"]["count"].clone()
}

#[tokio::test]
async fn a_never_seen_name_is_answered_by_the_logged_out_query_with_its_post_count_from_the_embed()
{
    if !crate::support::own_process(concat!(
        module_path!(),
        "::a_never_seen_name_is_answered_by_the_logged_out_query_with_its_post_count_from_the_embed"
    )) {
        return;
    }
    let guest = Guest::new(PageIs::LoginWall);
    let proxies = ForwardProxy::start_each(&["a", "b"]).await;
    let app = TestApp::on(guest.router())
        .through(&proxies)
        .with(uncached)
        .start()
        .await;
    let user = ps::PUBLIC_USER;
    let answer = app
        .lookup(PhotoShare, user.username)
        .await
        .expect_status(200)
        .expect_header("x-source", "loggedout")
        .expect_profile(&ps::expected_body(&user));
    assert_eq!(count_of(&answer), serde_json::json!(user.posts.unwrap()));
    assert!(!answer.has("profile-withheld"), "nothing withheld");
    assert_eq!(
        app.upstream().paths(),
        vec![
            "/api/graphql".to_owned(),
            format!("/{}/embed/", user.username)
        ],
        "the query, then the embed, and nothing else"
    );
    let via = app.upstream().via();
    assert_eq!(via[0], via[1], "the embed goes through the query's route");
    let metrics = app.metrics().await;
    assert!(
        !metrics.contains("profile_lookup_proxy_resting{platform=\"photo-share\",proxy=\"0\"} 1")
    );
    assert!(
        !metrics.contains("profile_lookup_proxy_resting{platform=\"photo-share\",proxy=\"1\"} 1")
    );
    // This test's process is its own: its one lookup's post count was read from the embed.
    let read = "profile_lookup_complements_total{platform=\"photo-share\",result=\"read\"}";
    assert_eq!(
        crate::support::series_value(&metrics, read),
        Some(1.0),
        "{metrics}"
    );
}

#[tokio::test]
async fn the_logged_out_query_is_posted_with_the_web_apps_form_and_headers() {
    let guest = Guest::new(PageIs::LoginWall);
    let app = TestApp::on(guest.router()).with(uncached).start().await;
    let base = format!("http://{}", app.upstream().addr);
    let user = ps::PUBLIC_USER;
    app.lookup(PhotoShare, user.username)
        .await
        .expect_status(200);
    let posted = guest.posted();
    let (headers, fields) = posted.first().expect("the query was posted");
    let field = |k: &str| {
        fields
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    for (key, value) in [
        ("av", "0"),
        ("__d", "www"),
        ("__user", "0"),
        ("__a", "1"),
        ("__comet_req", "7"),
        ("fb_api_caller_class", "RelayModern"),
        ("fb_api_req_friendly_name", ps::LOGGEDOUT_QUERY),
        ("server_timestamps", "true"),
        ("doc_id", ps::LOGGEDOUT_DOC_ID),
    ] {
        assert_eq!(field(key), Some(value), "{key}");
    }
    assert_eq!(
        field("variables"),
        Some(format!(r#"{{"username":"{}"}}"#, user.username).as_str())
    );
    let lsd = field("lsd").expect("an lsd token");
    assert!(!lsd.is_empty());
    let header = |k: &str| headers.get(k).and_then(|v| v.to_str().ok()).unwrap_or("");
    assert_eq!(
        header("x-fb-lsd"),
        lsd,
        "the header repeats the form's token"
    );
    assert_eq!(header("x-fb-friendly-name"), ps::LOGGEDOUT_QUERY);
    assert_eq!(header("x-ig-app-id"), "936619743392459");
    assert_eq!(header("x-asbd-id"), "359341");
    assert_eq!(header("x-ig-www-claim"), "0");
    assert_eq!(header("sec-fetch-mode"), "cors");
    assert_eq!(header("sec-fetch-site"), "same-origin");
    assert_eq!(header("content-type"), "application/x-www-form-urlencoded");
    assert_eq!(header("origin"), base);
    assert_eq!(header("referer"), format!("{base}/{}/", user.username));
    assert!(!header("user-agent").is_empty());
}

#[tokio::test]
async fn the_profile_query_by_pk_carries_its_required_variables() {
    let guest = Guest::new(PageIs::LoginWall);
    let app = TestApp::on(guest.router())
        .with(|s| {
            uncached(s);
            s.platform_mut(PhotoShare).sources = vec!["loggedout".into(), "graphql".into()];
        })
        .start()
        .await;
    let user = ps::PUBLIC_USER;
    // Seen once: the logged-out query answers, and the pk is learned.
    app.lookup(PhotoShare, user.username)
        .await
        .expect_header("x-source", "loggedout");
    // The logged-out query now refuses: the profile query answers by the pk.
    guest.loggedout_refuses.store(true, Ordering::SeqCst);
    app.lookup(PhotoShare, user.username)
        .await
        .expect_status(200)
        .expect_header("x-source", "graphql");
    let posted = guest.posted();
    let (headers, fields) = posted
        .iter()
        .rev()
        .find(|(_, f)| {
            f.iter()
                .any(|(k, v)| k == "fb_api_req_friendly_name" && v == ps::PROFILE_QUERY)
        })
        .expect("the profile query was posted");
    let field = |k: &str| {
        fields
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(field("doc_id"), Some(ps::PROFILE_QUERY_DOC_ID));
    let variables: serde_json::Value = serde_json::from_str(field("variables").unwrap()).unwrap();
    assert_eq!(variables["id"], user.pk);
    assert_eq!(variables["render_surface"], "PROFILE");
    assert_eq!(variables["enable_integrity_filters"], true);
    for provider in ps::PROVIDER_VARIABLES {
        assert_eq!(variables[provider], false, "{provider}");
    }
    assert_eq!(headers["x-fb-friendly-name"], ps::PROFILE_QUERY);
    assert_eq!(headers["x-fb-lsd"], field("lsd").unwrap());
}

#[tokio::test]
async fn field_exception_is_the_platforms_not_found() {
    let guest = Guest::new(PageIs::LoginWall);
    let app = TestApp::on(guest.router()).with(uncached).start().await;
    app.lookup(PhotoShare, ps::NOT_FOUND_NAME)
        .await
        .expect_problem(404, "profile_not_found")
        .expect_header("x-source", "loggedout");
    assert_eq!(app.hits(), 1, "no other source asked");
}

#[tokio::test]
async fn a_changed_query_falls_through_and_its_id_is_learned_again_from_a_page() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::a_changed_query_falls_through_and_its_id_is_learned_again_from_a_page"
    )) {
        return;
    }
    let guest = Guest::new(PageIs::Profile);
    *guest.loggedout_id.lock().unwrap() = ROTATED_ID.to_owned();
    let app = TestApp::on(guest.router()).with(uncached).start().await;
    // The seed is refused as changed: the page answers, never a 404 or a 500, and teaches the
    // id its preloaders name.
    app.lookup(PhotoShare, ps::PUBLIC_USER.username)
        .await
        .expect_status(200)
        .expect_header("x-source", "page");
    // The next lookup posts the learned id, and the query answers.
    app.lookup(PhotoShare, ps::CREATOR_USER.username)
        .await
        .expect_status(200)
        .expect_header("x-source", "loggedout");
    let ids: Vec<String> = guest
        .posted()
        .iter()
        .filter_map(|(_, f)| {
            f.iter()
                .find(|(k, _)| k == "doc_id")
                .map(|(_, v)| v.clone())
        })
        .collect();
    assert_eq!(
        ids,
        vec![ps::LOGGEDOUT_DOC_ID.to_owned(), ROTATED_ID.to_owned()]
    );
    // The second query repeats the token the page this route read handed out.
    let posted = guest.posted();
    let (headers, fields) = posted.last().unwrap();
    let lsd = fields
        .iter()
        .find(|(k, _)| k == "lsd")
        .map(|(_, v)| v.as_str());
    let page = ps::xig_profile_page(&ps::PUBLIC_USER, 64 * 1024);
    let mark = r#"["LSD",[],{"token":""#;
    let from = page.find(mark).expect("the page hands out a token") + mark.len();
    let token = &page[from..from + page[from..].find('"').unwrap()];
    assert_eq!(lsd, Some(token));
    assert_eq!(headers["x-fb-lsd"], token);
    let status: serde_json::Value = app.answer("/status").await.json();
    let learned = status["query_ids"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["query"] == ps::LOGGEDOUT_QUERY)
        .cloned()
        .unwrap();
    assert_eq!(learned["learned"], ROTATED_ID, "{status}");
    assert_eq!(learned["learned_from"], "page");
    let metrics = app.metrics().await;
    let learned = "profile_lookup_query_ids_learned_total{platform=\"photo-share\",query=\"PolarisLoggedOutDesktopWWWProfileRootContentQuery\",from=\"page\"}";
    assert_eq!(
        crate::support::series_value(&metrics, learned),
        Some(1.0),
        "{metrics}"
    );
}

#[tokio::test]
async fn an_id_one_replica_learned_is_posted_by_the_others_through_redis() {
    on_a_redis(|url| async move {
        let guest = Guest::new(PageIs::Profile);
        *guest.loggedout_id.lock().unwrap() = ROTATED_ID.to_owned();
        let first = TestApp::on(guest.router())
            .with(uncached)
            .on_redis(&url)
            .start()
            .await;
        first
            .lookup(PhotoShare, ps::PUBLIC_USER.username)
            .await
            .expect_header("x-source", "page");
        let second = TestApp::on(guest.router())
            .with(uncached)
            .on_redis(&url)
            .start()
            .await;
        second
            .lookup(PhotoShare, ps::CREATOR_USER.username)
            .await
            .expect_status(200)
            .expect_header("x-source", "loggedout");
        assert_eq!(
            second.hits(),
            2,
            "the query with the learned id, and the embed"
        );
    })
    .await;
}

#[tokio::test]
async fn the_post_count_comes_from_an_embed_that_failed_twice_first() {
    let guest = Guest::new(PageIs::LoginWall);
    guest.embed_failures.store(2, Ordering::SeqCst);
    let app = TestApp::on(guest.router()).with(uncached).start().await;
    let user = ps::CREATOR_USER;
    let answer = app
        .lookup(PhotoShare, user.username)
        .await
        .expect_status(200);
    assert_eq!(count_of(&answer), serde_json::json!(user.posts.unwrap()));
    assert!(!answer.has("profile-withheld"));
    assert_eq!(app.hits(), 4, "the query and three embed requests");
}

#[tokio::test]
async fn profile_withheld_names_the_post_count_when_the_embed_refuses_or_is_skipped() {
    let guest = Guest::new(PageIs::LoginWall);
    guest.embed_refuses.store(true, Ordering::SeqCst);
    let app = TestApp::on(guest.router()).with(uncached).start().await;
    let answer = app
        .lookup(PhotoShare, ps::PUBLIC_USER.username)
        .await
        .expect_status(200)
        .expect_header("profile-withheld", "edge_owner_to_timeline_media.count");
    assert_eq!(
        count_of(&answer),
        serde_json::Value::Null,
        "withheld, never 0"
    );

    let guest = Guest::new(PageIs::LoginWall);
    let app = TestApp::on(guest.router())
        .with(|s| {
            uncached(s);
            s.platform_mut(PhotoShare).post_count = Some(PostCount::Skip);
        })
        .start()
        .await;
    app.lookup(PhotoShare, ps::PUBLIC_USER.username)
        .await
        .expect_status(200)
        .expect_header("profile-withheld", "edge_owner_to_timeline_media.count");
    assert_eq!(app.hits(), 1, "skip asks no embed");
}

#[tokio::test]
async fn a_private_account_says_its_withheld_count_and_asks_no_embed() {
    let guest = Guest::new(PageIs::LoginWall);
    let app = TestApp::on(guest.router())
        .with(shipped_photo_share_sources)
        .start()
        .await;
    let user = ps::PRIVATE_USER;
    app.lookup(PhotoShare, user.username)
        .await
        .expect_status(200)
        .expect_header("profile-withheld", "edge_owner_to_timeline_media.count");
    assert_eq!(app.hits(), 1, "no embed for a private account");
    // A hit says the same.
    app.lookup(PhotoShare, user.username)
        .await
        .expect_header("x-cache", "hit")
        .expect_header("profile-withheld", "edge_owner_to_timeline_media.count");
}

#[tokio::test]
async fn the_jsons_401_require_login_demotes_it_without_resting_a_proxy() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::the_jsons_401_require_login_demotes_it_without_resting_a_proxy"
    )) {
        return;
    }
    let guest = Guest::new(PageIs::LoginWall);
    let proxies = ForwardProxy::start_each(&["a", "b"]).await;
    let app = TestApp::on(guest.router())
        .through(&proxies)
        .with(|s| {
            uncached(s);
            s.platform_mut(PhotoShare).sources = vec!["json".into(), "loggedout".into()];
        })
        .start()
        .await;
    let names = [
        ps::PUBLIC_USER.username,
        ps::CREATOR_USER.username,
        ps::BUSINESS_USER.username,
        ps::RETIRED_JSON_USER.username,
        ps::PRIVATE_USER.username,
        ps::PUBLIC_USER.username,
    ];
    for name in names {
        app.lookup(PhotoShare, name)
            .await
            .expect_status(200)
            .expect_header("x-source", "loggedout");
    }
    let metrics = app.metrics().await;
    for proxy in ["0", "1"] {
        assert!(
            !metrics.contains(&format!(
                "profile_lookup_proxy_resting{{platform=\"photo-share\",proxy=\"{proxy}\"}} 1"
            )),
            "proxy {proxy} rests: {metrics}"
        );
    }
    let refused = "profile_lookup_upstream_blocks_total{platform=\"photo-share\",source=\"json\",reason=\"require_login\"}";
    assert!(
        crate::support::series_sum(&metrics, refused) >= 1.0,
        "counted as the JSON's refusal: {metrics}"
    );
    let status: serde_json::Value = app.answer("/status").await.json();
    let json = status["standings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["platform"] == "photo-share" && s["source"] == "json")
        .cloned()
        .unwrap();
    assert_ne!(json["standing"], "preferred", "{json}");
}

#[tokio::test]
async fn with_every_page_walled_a_changed_querys_id_is_learned_from_the_bundles() {
    let guest = Guest::new(PageIs::LoginWall);
    *guest.loggedout_id.lock().unwrap() = ROTATED_ID.to_owned();
    let app = TestApp::on(guest.router()).with(uncached).start().await;
    // The seed is refused as changed, the page is walled, the JSON refuses: no answer now,
    // never a 404 or a 500.
    let first = app.lookup(PhotoShare, ps::PUBLIC_USER.username).await;
    assert_eq!(first.status(), 429, "{}", first.text());
    // In the background the login page's bundles teach the id.
    let learned = crate::support::eventually(std::time::Duration::from_secs(5), || {
        app.upstream()
            .paths()
            .iter()
            .any(|p| p == "/static/bundles/app.js")
    })
    .await;
    assert!(learned, "{:?}", app.upstream().paths());
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    app.lookup(PhotoShare, ps::CREATOR_USER.username)
        .await
        .expect_status(200)
        .expect_header("x-source", "loggedout");
    let status: serde_json::Value = app.answer("/status").await.json();
    let q = status["query_ids"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["query"] == ps::LOGGEDOUT_QUERY)
        .cloned()
        .unwrap();
    assert_eq!(q["learned"], ROTATED_ID);
    assert_eq!(q["learned_from"], "bundle");
    // One rediscovery per interval: another changed answer reads nothing more now.
    let bundles = |app: &TestApp| {
        app.upstream()
            .paths()
            .iter()
            .filter(|p| p.as_str() == "/static/bundles/app.js")
            .count()
    };
    assert_eq!(bundles(&app), 1);
}
