//! Lookups end to end: the real app on a loopback socket, against loopback upstreams serving the
//! project's own sample documents (invented values, real page shapes, full size with noise).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::support::routers::{FAILING, behind_the_waf, fixed, found_gone_failing, plain, split};
use crate::support::{PhotoShare, ShortVideo, TestApp, expires_in_a_second, series_value};
use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use profile_lookup::config::Settings;
use profile_lookup::registry::Platform;
use serde_json::Value;
use stand_in::photo_share as ps;
use stand_in::short_video as sv;

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

#[tokio::test]
async fn short_video_bodies_are_exactly_the_spec_shape() {
    let app = TestApp::on(sv::router()).start().await;
    for user in sv::sample_users() {
        let body = app
            .lookup(ShortVideo, user.unique_id)
            .await
            .about(user.unique_id)
            .expect_profile(&sv::expected_body(&user))
            .json();
        assert_eq!(keys(&body), ["userInfo"]);
        assert_eq!(keys(&body["userInfo"]), ["stats", "user"]);
        assert_eq!(
            keys(&body["userInfo"]["user"]),
            [
                "avatarLarger",
                "avatarMedium",
                "avatarThumb",
                "bioLink",
                "createTime",
                "id",
                "isOrganization",
                "language",
                "nickname",
                "openFavorite",
                "privateAccount",
                "relation",
                "secUid",
                "signature",
                "uniqueId",
                "verified"
            ]
        );
        assert_eq!(
            keys(&body["userInfo"]["stats"]),
            [
                "diggCount",
                "followerCount",
                "followingCount",
                "heart",
                "heartCount",
                "videoCount"
            ]
        );
        let text = body.to_string();
        assert!(
            !text.contains("\\u002F") && !text.contains("u002F"),
            "escapes decoded"
        );
    }
    let body = app
        .lookup(ShortVideo, sv::PUBLIC_USER.unique_id)
        .await
        .json();
    assert_eq!(
        body["userInfo"]["stats"]["followerCount"], 12_345_678,
        "exact statsV2 wins"
    );
    assert!(
        body["userInfo"]["user"]["signature"]
            .as_str()
            .unwrap()
            .contains("&amp;"),
        "entities untouched"
    );
}

#[tokio::test]
async fn private_accounts_are_flagged_with_null_for_missing_counts() {
    let app = TestApp::on(sv::router()).start().await;
    let body = app
        .lookup(ShortVideo, sv::PRIVATE_USER.unique_id)
        .await
        .expect_status(200)
        .json();
    assert_eq!(body["userInfo"]["user"]["privateAccount"], true);
    assert_eq!(body["userInfo"]["stats"]["videoCount"], Value::Null);
    assert_eq!(body["userInfo"]["stats"]["followerCount"], 87);

    let app = TestApp::on(ps::router()).start().await;
    let body = app
        .lookup(PhotoShare, ps::PRIVATE_USER.username)
        .await
        .expect_profile(&ps::expected_body(&ps::PRIVATE_USER))
        .json();
    assert_eq!(body["is_private"], true);
    assert_eq!(body["edge_owner_to_timeline_media"]["count"], Value::Null);
}

#[tokio::test]
async fn usernames_are_case_insensitive_and_share_one_fetch() {
    let app = TestApp::on(sv::router()).start().await;
    let name = sv::SMALL_USER.unique_id;
    let first = app
        .lookup(ShortVideo, &name.to_uppercase())
        .await
        .expect_header("x-cache", "miss");
    let second = app
        .lookup(ShortVideo, name)
        .await
        .expect_header("x-cache", "hit");
    let cache_control = second.header("cache-control");
    assert!(
        cache_control.starts_with("private, max-age="),
        "{cache_control}"
    );
    let max_age: u64 = cache_control
        .trim_start_matches("private, max-age=")
        .parse()
        .unwrap();
    assert!((590..=600).contains(&max_age), "{max_age}");
    assert!(second.has("age"));
    assert_eq!(second.json(), first.json());
    assert_eq!(app.hits(), 1);
}

#[tokio::test]
async fn photo_share_bodies_are_exactly_the_spec_shape() {
    let app = TestApp::on(ps::router()).start().await;
    let body = app
        .lookup(PhotoShare, &ps::PUBLIC_USER.username.to_uppercase())
        .await
        .expect_profile(&ps::expected_body(&ps::PUBLIC_USER))
        .json();
    assert_eq!(
        keys(&body),
        [
            "bio_links",
            "biography",
            "category_name",
            "edge_follow",
            "edge_followed_by",
            "edge_owner_to_timeline_media",
            "external_url",
            "full_name",
            "id",
            "is_private",
            "is_verified",
            "profile_pic_url",
            "profile_pic_url_hd",
            "pronouns",
            "username"
        ]
    );
    assert_eq!(body["edge_followed_by"]["count"], 12_345_678);
    assert_eq!(app.hits(), 1, "the profile JSON sufficed");
}

#[tokio::test]
async fn not_found_is_404_on_both_platforms() {
    let app = TestApp::on(sv::router()).start().await;
    app.lookup(ShortVideo, sv::NOT_FOUND_USER)
        .await
        .expect_problem(404, "profile_not_found");

    let app = TestApp::on(ps::router()).start().await;
    app.lookup(PhotoShare, ps::NOT_FOUND_NAME)
        .await
        .expect_problem(404, "profile_not_found");
    assert_eq!(app.hits(), 2, "user:null was confirmed by the page's 404");
}

#[tokio::test]
async fn every_short_video_page_era_gives_the_same_body() {
    for era in sv::Era::ALL {
        let page = sv::profile_page(era, &sv::PUBLIC_USER, sv::DEFAULT_PAGE_SIZE);
        let app = TestApp::on(fixed(StatusCode::OK, page)).start().await;
        app.lookup(ShortVideo, sv::PUBLIC_USER.unique_id)
            .await
            .about(format!("{era:?}"))
            .expect_profile(&sv::expected_body(&sv::PUBLIC_USER));
    }
}

#[tokio::test]
async fn a_page_about_somebody_else_is_extraction_failed() {
    let page = sv::profile_page(sv::Era::Universal, &sv::SMALL_USER, 64 * 1024);
    let app = TestApp::on(fixed(StatusCode::OK, page)).start().await;
    app.lookup(ShortVideo, "somebody.else")
        .await
        .expect_problem(500, "extraction_failed");
}

#[tokio::test]
async fn short_video_refusals_and_junk_are_classified() {
    let cases = [
        (sv::status_page(10000), 429, "upstream_blocked"),
        (sv::status_page(10114), 429, "upstream_blocked"),
        (sv::shell_page(), 429, "upstream_blocked"),
        (sv::status_page(10101), 500, "extraction_failed"),
        (
            "<html><body>We changed everything</body></html>".to_owned(),
            500,
            "extraction_failed",
        ),
    ];
    for (page, status, code) in cases {
        let app = TestApp::on(fixed(StatusCode::OK, page)).start().await;
        let answer = app
            .lookup(ShortVideo, "status.sample")
            .await
            .about(code)
            .expect_problem(status, code);
        assert!(
            !answer.problem().to_string().contains("<html"),
            "upstream bodies are never echoed"
        );
    }
}

#[tokio::test]
async fn invalid_utf8_inside_the_state_is_extraction_failed() {
    let page = sv::profile_page(sv::Era::Universal, &sv::SMALL_USER, 64 * 1024);
    let mut bytes = page.into_bytes();
    let at = bytes
        .windows(8)
        .position(|w| w == b"Sourdoug")
        .expect("the bio is in the page");
    bytes[at] = 0xff;
    bytes[at + 1] = 0xfe;
    let app = TestApp::on(Router::new().fallback(move || {
        let bytes = bytes.clone();
        async move { Response::new(axum::body::Body::from(bytes)) }
    }))
    .start()
    .await;
    app.lookup(ShortVideo, sv::SMALL_USER.unique_id)
        .await
        .expect_problem(500, "extraction_failed");
}

#[tokio::test]
async fn the_waf_challenge_is_solved_and_the_page_fetched_again() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::the_waf_challenge_is_solved_and_the_page_fetched_again"
    )) {
        return;
    }
    let app = TestApp::on(behind_the_waf(4_321)).start().await;
    app.lookup(ShortVideo, sv::PUBLIC_USER.unique_id)
        .await
        .expect_status(200);
    assert_eq!(
        app.hits(),
        2,
        "the challenge, then the page with the cookie"
    );
    // The challenge has a counter of its own (this test's process is its own, so it counts
    // this challenge alone); the lookup is counted once, as ok.
    let metrics = app.metrics().await;
    let challenges = series_value(
        &metrics,
        r#"profile_lookup_upstream_challenges_total{platform="short-video"}"#,
    );
    assert_eq!(challenges, Some(1.0), "{metrics}");
    let ok = r#"profile_lookup_upstream_lookups_total{platform="short-video",outcome="ok"}"#;
    assert_eq!(series_value(&metrics, ok), Some(1.0), "{metrics}");
    assert!(!metrics.contains("outcome=\"challenge\""), "{metrics}");
}

#[tokio::test]
async fn an_unsolvable_challenge_is_upstream_blocked() {
    // The page is a challenge whatever cookie comes back.
    let app = TestApp::on(fixed(StatusCode::OK, sv::waf_challenge_page(77)))
        // The page alone: this upstream answers every path with the challenge.
        .with(|s| s.platform_mut(Platform::ShortVideo).sources = vec!["page".into()])
        .start()
        .await;
    app.lookup(ShortVideo, sv::PUBLIC_USER.unique_id)
        .await
        .expect_blocked();
    assert_eq!(app.hits(), 2);
}

/// How a test upstream refuses a request.
type Block = fn() -> Response;

/// A photo-share upstream that answers the first `blocks` requests with `block`, then serves the
/// sample platform.
fn flaky(blocks: usize, block: Block) -> Router {
    let seen = Arc::new(AtomicUsize::new(0));
    let real = ps::router();
    Router::new().fallback(move |request: Request| {
        let seen = seen.clone();
        let real = real.clone();
        async move {
            if seen.fetch_add(1, Ordering::SeqCst) < blocks {
                return block();
            }
            tower::ServiceExt::oneshot(real, request)
                .await
                .into_response()
        }
    })
}

/// The JSON endpoint's 401 "please wait" with its body.
fn please_wait() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::CONTENT_TYPE, "application/json")],
        ps::require_login_json(),
    )
        .into_response()
}

#[tokio::test]
async fn photo_share_throttling_is_retried_until_it_passes() {
    let cases: [(&str, Block); 4] = [
        ("429", || StatusCode::TOO_MANY_REQUESTS.into_response()),
        ("401 please wait", please_wait),
        ("login redirect", || {
            (
                StatusCode::FOUND,
                [(header::LOCATION, "/accounts/login/?next=%2Fx%2F")],
            )
                .into_response()
        }),
        ("checkpoint", || {
            (
                StatusCode::BAD_REQUEST,
                [(header::CONTENT_TYPE, "application/json")],
                ps::checkpoint_json(),
            )
                .into_response()
        }),
    ];
    for (name, block) in cases {
        let app = TestApp::on(flaky(2, block)).start().await;
        app.lookup(PhotoShare, ps::PUBLIC_USER.username)
            .await
            .about(name)
            .expect_status(200);
        assert_eq!(app.hits(), 3, "{name}: two blocks, then the answer");
    }
}

#[tokio::test]
async fn photo_share_blocks_that_never_end_are_429_after_max_attempts() {
    let cases: [(&str, Block); 2] = [
        ("401 please wait", please_wait),
        ("login redirect", || {
            (StatusCode::FOUND, [(header::LOCATION, "/accounts/login/")]).into_response()
        }),
    ];
    for (name, block) in cases {
        let app = TestApp::on(flaky(usize::MAX, block)).start().await;
        app.lookup(PhotoShare, ps::PUBLIC_USER.username)
            .await
            .about(name)
            .expect_blocked();
        // Every source falls through: the JSON's attempts, then the page's.
        assert_eq!(app.hits(), 8, "{name}");
    }
}

/// The JSON endpoint's 400 for business and creator accounts (2026).
const BUSINESS_400: &str = "{\"message\":\"Asset asset://laser.provider/ig_business_category_subvertical has been deleted. You cannot use this schema\",\"status\":\"fail\"}";

#[tokio::test]
async fn photo_share_falls_back_to_the_page_in_each_shape() {
    for (name, page) in [
        ("xig", ps::xig_profile_page(&ps::PUBLIC_USER, 256 * 1024)),
        (
            "shared data",
            ps::shared_data_profile_page(&ps::PUBLIC_USER, 128 * 1024),
        ),
        (
            "xig with edge counts (2026)",
            ps::xig_edge_counts_page(&ps::PUBLIC_USER, 256 * 1024),
        ),
        (
            "web_profile_info preloaded (2026)",
            ps::web_profile_info_preload_page(&ps::PUBLIC_USER, 256 * 1024),
        ),
    ] {
        // The JSON endpoint's schema 400 for business accounts: the page answers.
        let upstream = split(
            "/api/",
            plain(StatusCode::BAD_REQUEST, BUSINESS_400),
            plain(StatusCode::OK, page),
        );
        let app = TestApp::on(upstream).start().await;
        app.lookup(PhotoShare, ps::PUBLIC_USER.username)
            .await
            .about(name)
            .expect_profile(&ps::expected_body(&ps::PUBLIC_USER));
        assert_eq!(app.hits(), 2);
    }
}

#[tokio::test]
async fn user_null_without_a_404_page_is_not_taken_as_absence() {
    let upstream = split(
        "/api/",
        plain(StatusCode::OK, ps::user_null_json()),
        plain(StatusCode::OK, ps::shell_page("somebody")),
    );
    let app = TestApp::on(upstream).start().await;
    app.lookup(PhotoShare, "somebody").await.expect_blocked();
}

#[tokio::test]
async fn a_stale_profile_is_served_when_the_platform_fails() {
    let (router, platform) = found_gone_failing(sv::router(), sv::router());
    let app = TestApp::on(router).with(stale(60)).start().await;
    let name = sv::SMALL_USER.unique_id;
    let fresh = app.lookup(ShortVideo, name).await.json();
    platform.set(FAILING);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let answer = app
        .lookup(ShortVideo, name)
        .await
        .expect_status(200)
        .expect_header("x-cache", "stale")
        .expect_header("cache-control", "private, max-age=0");
    assert!(answer.age() >= 1);
    assert_eq!(answer.json(), fresh);

    // Without stale serving the same failure is an error.
    let app = TestApp::on(app.upstream()).with(stale(0)).start().await;
    app.lookup(ShortVideo, name).await.expect_status(500);
}

/// A TTL of a second without a window, and stale copies kept `max_stale_seconds`.
fn stale(max_stale_seconds: u64) -> impl FnOnce(&mut Settings) {
    move |s| {
        expires_in_a_second(s);
        s.cache.max_stale_seconds = max_stale_seconds;
    }
}

#[tokio::test]
async fn with_the_cache_off_every_lookup_goes_upstream_but_concurrent_ones_coalesce() {
    let app = TestApp::on(sv::router())
        .with(|s| s.cache.enabled = false)
        .start()
        .await;
    for _ in 0..2 {
        app.lookup(ShortVideo, sv::SMALL_USER.unique_id)
            .await
            .expect_status(200);
    }
    assert_eq!(app.hits(), 2, "nothing kept");
}

#[tokio::test]
async fn metrics_describe_requests_lookups_cache_retries_and_the_breaker() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::metrics_describe_requests_lookups_cache_retries_and_the_breaker"
    )) {
        return;
    }
    let app = TestApp::on(flaky(1, || StatusCode::TOO_MANY_REQUESTS.into_response()))
        .start()
        .await;
    for _ in 0..2 {
        app.lookup(PhotoShare, ps::PUBLIC_USER.username)
            .await
            .expect_status(200);
    }
    let text = app.metrics().await;
    for needle in [
        r#"profile_lookup_http_requests_total{route="/photo-share/profile/{username}",status="200"}"#,
        r#"profile_lookup_http_request_duration_seconds_bucket{route="/photo-share/profile/{username}",le="0.005"}"#,
        r#"profile_lookup_upstream_lookups_total{platform="photo-share",outcome="ok"}"#,
        r#"profile_lookup_upstream_requests_total{platform="photo-share"}"#,
        r#"profile_lookup_upstream_retries_total{platform="photo-share",reason="http_429"}"#,
        r#"profile_lookup_cache_lookups_total{platform="photo-share",result="hit"}"#,
        r#"profile_lookup_cache_lookups_total{platform="photo-share",result="miss"}"#,
        r#"profile_lookup_breaker_state{platform="photo-share"}"#,
        "profile_lookup_http_requests_in_flight",
        "process_resident_memory_bytes ",
    ] {
        assert!(text.contains(needle), "missing {needle} in\n{text}");
    }
    // This test's process is its own: every count is exactly what its two lookups made (the
    // first asked twice, a 429 then the profile; the second a cache hit).
    for (counted, expected) in [
        (
            r#"profile_lookup_http_requests_total{route="/photo-share/profile/{username}",status="200"}"#,
            2.0,
        ),
        (
            r#"profile_lookup_upstream_lookups_total{platform="photo-share",outcome="ok"}"#,
            1.0,
        ),
        (
            r#"profile_lookup_upstream_requests_total{platform="photo-share"}"#,
            2.0,
        ),
        (
            r#"profile_lookup_upstream_retries_total{platform="photo-share",reason="http_429"}"#,
            1.0,
        ),
        (
            r#"profile_lookup_cache_lookups_total{platform="photo-share",result="hit"}"#,
            1.0,
        ),
        (
            r#"profile_lookup_cache_lookups_total{platform="photo-share",result="miss"}"#,
            1.0,
        ),
    ] {
        let n = series_value(&text, counted);
        assert_eq!(n, Some(expected), "{counted} in\n{text}");
    }
}

#[tokio::test]
async fn the_photo_share_json_request_carries_the_web_clients_headers_and_state() {
    // The platform hands out a csrftoken cookie and a www-claim; later requests repeat both.
    let upstream = ps::router().layer(axum::middleware::from_fn(
        |request: Request, next: axum::middleware::Next| async move {
            let api = request.uri().path().starts_with("/api/");
            let mut response = next.run(request).await;
            if api {
                let h = response.headers_mut();
                h.insert(
                    header::SET_COOKIE,
                    "csrftoken=Abc123; Path=/".parse().unwrap(),
                );
                h.insert("x-ig-set-www-claim", "hmac.claim-1".parse().unwrap());
            }
            response
        },
    ));
    let app = TestApp::on(upstream).start().await;
    for user in [&ps::PUBLIC_USER, &ps::PRIVATE_USER] {
        app.lookup(PhotoShare, user.username)
            .await
            .expect_status(200);
    }
    let seen: Vec<_> = app
        .upstream()
        .seen()
        .into_iter()
        .filter(|s| s.path().starts_with("/api/"))
        .map(|s| s.headers)
        .collect();
    let (first, second) = (&seen[0], &seen[1]);
    for h in [first, second] {
        assert_eq!(h["x-ig-app-id"], "936619743392459");
        assert_eq!(h["x-requested-with"], "XMLHttpRequest");
        assert_eq!(h["sec-fetch-mode"], "cors");
        assert!(h["referer"].to_str().unwrap().ends_with('/'));
    }
    assert_eq!(first["x-ig-www-claim"], "0");
    assert!(!first.contains_key("x-csrftoken"));
    assert_eq!(second["x-ig-www-claim"], "hmac.claim-1");
    assert_eq!(second["x-csrftoken"], "Abc123");
    assert!(
        second[header::COOKIE]
            .to_str()
            .unwrap()
            .contains("csrftoken=Abc123")
    );
}
