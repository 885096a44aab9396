//! Lookups end to end: the real app on a loopback socket, against loopback upstreams serving the
//! project's own sample documents (invented values, real page shapes, full size with noise).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use crate::support::{problem, settings, spawn_app, spawn_upstream};
use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use profile_lookup::platform::photo_share::PhotoShare;
use profile_lookup::platform::photo_share::samples as ps;
use profile_lookup::platform::samples::Samples;
use profile_lookup::platform::short_video::ShortVideo;
use profile_lookup::platform::short_video::samples as sv;
use serde_json::Value;

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

#[tokio::test]
async fn short_video_bodies_are_exactly_the_spec_shape() {
    let upstream = spawn_upstream(ShortVideo::stand_in()).await;
    let app = spawn_app(settings(upstream.addr)).await;
    for user in sv::sample_users() {
        let response = app
            .get(&format!("/short-video/profile/{}", user.unique_id))
            .await;
        assert_eq!(response.status(), 200, "{}", user.unique_id);
        assert_eq!(response.headers()["content-type"], "application/json");
        let body: Value = response.json().await.unwrap();
        assert_eq!(
            body,
            serde_json::to_value(sv::expected_body(&user)).unwrap(),
            "{}",
            user.unique_id
        );
        assert_eq!(keys(&body), ["userInfo"]);
        assert_eq!(keys(&body["userInfo"]), ["stats", "user"]);
        assert_eq!(
            keys(&body["userInfo"]["user"]),
            [
                "avatarLarger",
                "avatarMedium",
                "avatarThumb",
                "id",
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
    let public = app
        .get(&format!(
            "/short-video/profile/{}",
            sv::PUBLIC_USER.unique_id
        ))
        .await;
    let body: Value = public.json().await.unwrap();
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
    let upstream = spawn_upstream(ShortVideo::stand_in()).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let response = app
        .get(&format!(
            "/short-video/profile/{}",
            sv::PRIVATE_USER.unique_id
        ))
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["userInfo"]["user"]["privateAccount"], true);
    assert_eq!(body["userInfo"]["stats"]["videoCount"], Value::Null);
    assert_eq!(body["userInfo"]["stats"]["followerCount"], 87);

    let upstream = spawn_upstream(PhotoShare::stand_in()).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let body: Value = app
        .get(&format!(
            "/photo-share/profile/{}",
            ps::PRIVATE_USER.username
        ))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["is_private"], true);
    assert_eq!(body["edge_owner_to_timeline_media"]["count"], Value::Null);
    assert_eq!(
        body,
        serde_json::to_value(ps::expected_body(&ps::PRIVATE_USER)).unwrap()
    );
}

#[tokio::test]
async fn usernames_are_case_insensitive_and_share_one_fetch() {
    let upstream = spawn_upstream(ShortVideo::stand_in()).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let name = sv::SMALL_USER.unique_id;
    let first = app
        .get(&format!("/short-video/profile/{}", name.to_uppercase()))
        .await;
    assert_eq!(first.headers()["x-cache"], "miss");
    let first: Value = first.json().await.unwrap();
    let second = app.get(&format!("/short-video/profile/{name}")).await;
    assert_eq!(second.headers()["x-cache"], "hit");
    let cache_control = second.headers()["cache-control"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        cache_control.starts_with("private, max-age="),
        "{cache_control}"
    );
    let max_age: u64 = cache_control
        .trim_start_matches("private, max-age=")
        .parse()
        .unwrap();
    assert!((590..=600).contains(&max_age), "{max_age}");
    assert!(second.headers().contains_key("age"));
    assert_eq!(second.json::<Value>().await.unwrap(), first);
    assert_eq!(upstream.hits(), 1);
}

#[tokio::test]
async fn photo_share_bodies_are_exactly_the_spec_shape() {
    let upstream = spawn_upstream(PhotoShare::stand_in()).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let response = app
        .get(&format!(
            "/photo-share/profile/{}",
            ps::PUBLIC_USER.username.to_uppercase()
        ))
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body,
        serde_json::to_value(ps::expected_body(&ps::PUBLIC_USER)).unwrap()
    );
    assert_eq!(
        keys(&body),
        [
            "biography",
            "edge_follow",
            "edge_followed_by",
            "edge_owner_to_timeline_media",
            "full_name",
            "id",
            "is_private",
            "is_verified",
            "profile_pic_url",
            "profile_pic_url_hd",
            "username"
        ]
    );
    assert_eq!(body["edge_followed_by"]["count"], 12_345_678);
    assert_eq!(upstream.hits(), 1, "the profile JSON sufficed");
}

#[tokio::test]
async fn not_found_is_404_on_both_platforms() {
    let upstream = spawn_upstream(ShortVideo::stand_in()).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let response = app
        .get(&format!("/short-video/profile/{}", sv::NOT_FOUND_USER))
        .await;
    assert_eq!(response.status(), 404);
    assert_eq!(problem(response).await["code"], "profile_not_found");

    let upstream = spawn_upstream(PhotoShare::stand_in()).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let response = app
        .get(&format!("/photo-share/profile/{}", ps::NOT_FOUND_NAME))
        .await;
    assert_eq!(response.status(), 404);
    assert_eq!(problem(response).await["code"], "profile_not_found");
    assert_eq!(
        upstream.hits(),
        2,
        "user:null was confirmed by the page's 404"
    );
}

/// An upstream serving one fixed answer to every request.
fn fixed(status: StatusCode, body: impl Into<String>) -> Router {
    let body = body.into();
    Router::new().fallback(move || {
        let body = body.clone();
        async move { (status, [(header::CONTENT_TYPE, "text/html")], body).into_response() }
    })
}

#[tokio::test]
async fn every_short_video_page_era_gives_the_same_body() {
    for era in sv::Era::ALL {
        let page = sv::profile_page(era, &sv::PUBLIC_USER, sv::DEFAULT_PAGE_SIZE);
        let upstream = spawn_upstream(fixed(StatusCode::OK, page)).await;
        let app = spawn_app(settings(upstream.addr)).await;
        let response = app
            .get(&format!(
                "/short-video/profile/{}",
                sv::PUBLIC_USER.unique_id
            ))
            .await;
        assert_eq!(response.status(), 200, "{era:?}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(
            body,
            serde_json::to_value(sv::expected_body(&sv::PUBLIC_USER)).unwrap(),
            "{era:?}"
        );
    }
}

#[tokio::test]
async fn a_page_about_somebody_else_is_extraction_failed() {
    let page = sv::profile_page(sv::Era::Universal, &sv::SMALL_USER, 64 * 1024);
    let upstream = spawn_upstream(fixed(StatusCode::OK, page)).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let response = app.get("/short-video/profile/somebody.else").await;
    assert_eq!(response.status(), 500);
    assert_eq!(problem(response).await["code"], "extraction_failed");
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
        let upstream = spawn_upstream(fixed(StatusCode::OK, page)).await;
        let app = spawn_app(settings(upstream.addr)).await;
        let response = app.get("/short-video/profile/status.sample").await;
        assert_eq!(response.status(), status, "{code}");
        let body = problem(response).await;
        assert_eq!(body["code"], code);
        assert!(
            !body.to_string().contains("<html"),
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
    let upstream = spawn_upstream(Router::new().fallback(move || {
        let bytes = bytes.clone();
        async move { Response::new(axum::body::Body::from(bytes)) }
    }))
    .await;
    let app = spawn_app(settings(upstream.addr)).await;
    let response = app
        .get(&format!(
            "/short-video/profile/{}",
            sv::SMALL_USER.unique_id
        ))
        .await;
    assert_eq!(response.status(), 500);
    assert_eq!(problem(response).await["code"], "extraction_failed");
}

#[tokio::test]
async fn the_waf_challenge_is_solved_and_the_page_fetched_again() {
    const ANSWER: u32 = 4_321;
    let page = sv::profile_page(sv::Era::Universal, &sv::PUBLIC_USER, 64 * 1024);
    let upstream = spawn_upstream(Router::new().fallback(move |request: Request| {
        let page = page.clone();
        async move {
            let cookie = request
                .headers()
                .get(header::COOKIE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            if sv::waf_cookie_is_valid(cookie, ANSWER) {
                (StatusCode::OK, page).into_response()
            } else {
                (StatusCode::OK, sv::waf_challenge_page(ANSWER)).into_response()
            }
        }
    }))
    .await;
    let app = spawn_app(settings(upstream.addr)).await;
    let response = app
        .get(&format!(
            "/short-video/profile/{}",
            sv::PUBLIC_USER.unique_id
        ))
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        upstream.hits(),
        2,
        "the challenge, then the page with the cookie"
    );
    // The challenge has a counter of its own (exported at 0 from the start, so it must have
    // moved); the lookup is counted once, as ok.
    let metrics = app.get_anonymous("/metrics").await.text().await.unwrap();
    let challenges = series_value(
        &metrics,
        r#"profile_lookup_upstream_challenges_total{platform="short-video"}"#,
    );
    assert!(challenges.is_some_and(|n| n >= 1.0), "{metrics}");
    assert!(!metrics.contains("outcome=\"challenge\""), "{metrics}");
}

#[tokio::test]
async fn an_unsolvable_challenge_is_upstream_blocked() {
    // The page is a challenge whatever cookie comes back.
    let upstream = spawn_upstream(fixed(StatusCode::OK, sv::waf_challenge_page(77))).await;
    let mut s = settings(upstream.addr);
    // The page alone: this upstream answers every path with the challenge.
    s.short_video.sources = vec!["page".into()];
    let app = spawn_app(s).await;
    let response = app
        .get(&format!(
            "/short-video/profile/{}",
            sv::PUBLIC_USER.unique_id
        ))
        .await;
    assert_eq!(response.status(), 429);
    assert_eq!(problem(response).await["code"], "upstream_blocked");
    assert_eq!(upstream.hits(), 2);
}

/// How a test upstream refuses a request.
type Block = fn() -> Response;

/// A photo-share upstream that answers the first `blocks` requests with `block`, then serves the
/// sample platform.
fn flaky(blocks: usize, block: Block) -> Router {
    let seen = Arc::new(AtomicUsize::new(0));
    let real = PhotoShare::stand_in();
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

#[tokio::test]
async fn photo_share_throttling_is_retried_until_it_passes() {
    let cases: [(&str, Block); 4] = [
        ("429", || StatusCode::TOO_MANY_REQUESTS.into_response()),
        ("401 please wait", || {
            (
                StatusCode::UNAUTHORIZED,
                [(header::CONTENT_TYPE, "application/json")],
                ps::require_login_json(),
            )
                .into_response()
        }),
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
        let upstream = spawn_upstream(flaky(2, block)).await;
        let app = spawn_app(settings(upstream.addr)).await;
        let response = app
            .get(&format!(
                "/photo-share/profile/{}",
                ps::PUBLIC_USER.username
            ))
            .await;
        assert_eq!(response.status(), 200, "{name}");
        assert_eq!(upstream.hits(), 3, "{name}: two blocks, then the answer");
    }
}

#[tokio::test]
async fn photo_share_blocks_that_never_end_are_429_after_max_attempts() {
    let cases: [(&str, Block); 2] = [
        ("401 please wait", || {
            (
                StatusCode::UNAUTHORIZED,
                [(header::CONTENT_TYPE, "application/json")],
                ps::require_login_json(),
            )
                .into_response()
        }),
        ("login redirect", || {
            (StatusCode::FOUND, [(header::LOCATION, "/accounts/login/")]).into_response()
        }),
    ];
    for (name, block) in cases {
        let upstream = spawn_upstream(flaky(usize::MAX, block)).await;
        let app = spawn_app(settings(upstream.addr)).await;
        let response = app
            .get(&format!(
                "/photo-share/profile/{}",
                ps::PUBLIC_USER.username
            ))
            .await;
        assert_eq!(response.status(), 429, "{name}");
        assert!(response.headers().contains_key("retry-after"));
        assert_eq!(problem(response).await["code"], "upstream_blocked");
        assert_eq!(upstream.hits(), 4, "{name}");
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
        let upstream = spawn_upstream(Router::new().fallback(move |request: Request| {
            let page = page.clone();
            async move {
                if request.uri().path().starts_with("/api/") {
                    // The JSON endpoint's schema 400 for business accounts: the page answers.
                    (StatusCode::BAD_REQUEST, BUSINESS_400).into_response()
                } else {
                    (StatusCode::OK, page).into_response()
                }
            }
        }))
        .await;
        let app = spawn_app(settings(upstream.addr)).await;
        let response = app
            .get(&format!(
                "/photo-share/profile/{}",
                ps::PUBLIC_USER.username
            ))
            .await;
        assert_eq!(response.status(), 200, "{name}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(
            body,
            serde_json::to_value(ps::expected_body(&ps::PUBLIC_USER)).unwrap(),
            "{name}"
        );
        assert_eq!(upstream.hits(), 2);
    }
}

#[tokio::test]
async fn user_null_without_a_404_page_is_not_taken_as_absence() {
    let upstream = spawn_upstream(Router::new().fallback(|request: Request| async move {
        if request.uri().path().starts_with("/api/") {
            (StatusCode::OK, ps::user_null_json()).into_response()
        } else {
            (StatusCode::OK, ps::shell_page("somebody")).into_response()
        }
    }))
    .await;
    let app = spawn_app(settings(upstream.addr)).await;
    let response = app.get("/photo-share/profile/somebody").await;
    assert_eq!(response.status(), 429);
    assert_eq!(problem(response).await["code"], "upstream_blocked");
}

#[tokio::test]
async fn a_stale_profile_is_served_when_the_platform_fails() {
    let broken = Arc::new(AtomicBool::new(false));
    let flag = broken.clone();
    let real = ShortVideo::stand_in();
    let upstream = spawn_upstream(Router::new().fallback(move |request: Request| {
        let (flag, real) = (flag.clone(), real.clone());
        async move {
            if flag.load(Ordering::SeqCst) {
                return StatusCode::SERVICE_UNAVAILABLE.into_response();
            }
            tower::ServiceExt::oneshot(real, request)
                .await
                .into_response()
        }
    }))
    .await;
    let mut s = settings(upstream.addr);
    s.cache.ttl_seconds = 1;
    s.cache.max_stale_seconds = 60;
    let app = spawn_app(s).await;
    let path = format!("/short-video/profile/{}", sv::SMALL_USER.unique_id);
    let fresh: Value = app.get(&path).await.json().await.unwrap();
    broken.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let response = app.get(&path).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-cache"], "stale");
    assert_eq!(response.headers()["cache-control"], "private, max-age=0");
    let age: u64 = response.headers()["age"].to_str().unwrap().parse().unwrap();
    assert!(age >= 1);
    assert_eq!(response.json::<Value>().await.unwrap(), fresh);

    // Without stale serving the same failure is an error.
    let mut s = settings(upstream.addr);
    s.cache.ttl_seconds = 1;
    s.cache.max_stale_seconds = 0;
    let app = spawn_app(s).await;
    let response = app.get(&path).await;
    assert_eq!(response.status(), 500);
}

#[tokio::test]
async fn with_the_cache_off_every_lookup_goes_upstream_but_concurrent_ones_coalesce() {
    let upstream = spawn_upstream(ShortVideo::stand_in()).await;
    let mut s = settings(upstream.addr);
    s.cache.enabled = false;
    let app = Arc::new(spawn_app(s).await);
    let path = format!("/short-video/profile/{}", sv::SMALL_USER.unique_id);
    assert_eq!(app.get(&path).await.status(), 200);
    assert_eq!(app.get(&path).await.status(), 200);
    assert_eq!(upstream.hits(), 2, "nothing kept");
}

#[tokio::test]
async fn metrics_describe_requests_lookups_cache_retries_and_the_breaker() {
    let upstream = spawn_upstream(flaky(1, || StatusCode::TOO_MANY_REQUESTS.into_response())).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let path = format!("/photo-share/profile/{}", ps::PUBLIC_USER.username);
    assert_eq!(app.get(&path).await.status(), 200);
    assert_eq!(app.get(&path).await.status(), 200);
    let text = app.get_anonymous("/metrics").await.text().await.unwrap();
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
    // These are exported at 0 from the start: present is not enough, they must have counted.
    for counted in [
        r#"profile_lookup_upstream_lookups_total{platform="photo-share",outcome="ok"}"#,
        r#"profile_lookup_upstream_requests_total{platform="photo-share"}"#,
        r#"profile_lookup_cache_lookups_total{platform="photo-share",result="hit"}"#,
        r#"profile_lookup_cache_lookups_total{platform="photo-share",result="miss"}"#,
    ] {
        let n = series_value(&text, counted);
        assert!(n.is_some_and(|n| n >= 1.0), "{counted} is {n:?} in\n{text}");
    }
}

/// The value of one series (its name and labels exactly as exported) in a `/metrics` text.
fn series_value(metrics: &str, series: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.parse().ok())
}

#[tokio::test]
async fn the_photo_share_json_request_carries_the_web_clients_headers_and_state() {
    // The platform hands out a csrftoken cookie and a www-claim; later requests repeat both.
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let upstream = spawn_upstream(PhotoShare::stand_in().layer(axum::middleware::from_fn(
        move |request: Request, next: axum::middleware::Next| {
            let log = log.clone();
            async move {
                let api = request.uri().path().starts_with("/api/");
                if api {
                    log.lock().unwrap().push(request.headers().clone());
                }
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
            }
        },
    )))
    .await;
    let app = spawn_app(settings(upstream.addr)).await;
    for user in [&ps::PUBLIC_USER, &ps::PRIVATE_USER] {
        let path = format!("/photo-share/profile/{}", user.username);
        assert_eq!(app.get(&path).await.status(), 200);
    }
    let seen = seen.lock().unwrap();
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
