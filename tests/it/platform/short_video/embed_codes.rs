//! The embed's error codes end to end on loopback (issue 39): behind a blocked profile page,
//! the embed's error payload with `"errorCode": 10221` answers 404 `profile_not_found` and with
//! `10222` a private profile whose counts are withheld (`null`), as the platform sends them
//! (status 400, and 200 alike), without asking the page again; without a code it stays
//! "private or missing".

use axum::Router;
use axum::http::StatusCode;
use profile_lookup::registry::Platform;
use stand_in::short_video as sv;

use crate::support::routers::{fixed, split};
use crate::support::{ShortVideo, TestApp};

/// Behind a profile page that is the stateless shell, an embed that answers `status` with
/// its error payload naming `code`.
fn coded_embed_after_a_blocked_page(name: &str, code: i64, status: StatusCode) -> Router {
    split(
        "/embed/",
        fixed(status, sv::embed_coded_error_page(name, code)),
        fixed(StatusCode::OK, sv::stateless_shell_page(false)),
    )
}

#[tokio::test]
async fn the_embeds_10221_behind_a_blocked_page_is_a_404() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::the_embeds_10221_behind_a_blocked_page_is_a_404"
    )) {
        return;
    }
    let app = TestApp::on(sv::router()).start().await;
    let name = sv::MISSING_EMBED_NAME;
    app.lookup(ShortVideo, name)
        .await
        .expect_problem(404, "profile_not_found")
        .expect_header("x-source", "embed");
    // The page (the shell, a block), then the embed, which says: nothing more is asked.
    assert_eq!(
        app.upstream().paths(),
        [format!("/@{name}"), format!("/embed/@{name}")]
    );
    let text = app.metrics().await;
    let series = r#"profile_lookup_upstream_blocks_total{platform="short-video",source="page",reason="stateless_shell"}"#;
    assert_eq!(
        crate::support::series_value(&text, series),
        Some(1.0),
        "{text}"
    );
}

#[tokio::test]
async fn the_embeds_10222_behind_a_blocked_page_is_a_private_profile_with_counts_withheld() {
    let app = TestApp::on(sv::router()).start().await;
    let name = sv::PRIVATE_EMBED_NAME;
    let body = app
        .lookup(ShortVideo, name)
        .await
        .expect_profile(&sv::expected_private_embed_body(name))
        .expect_header("x-source", "embed")
        .json();
    let info = &body["userInfo"];
    assert_eq!(info["user"]["privateAccount"], true);
    for count in [
        "followerCount",
        "followingCount",
        "heart",
        "heartCount",
        "videoCount",
        "diggCount",
    ] {
        assert!(info["stats"][count].is_null(), "{count}: {}", info["stats"]);
    }
    assert_eq!(
        app.upstream().paths(),
        [format!("/@{name}"), format!("/embed/@{name}")]
    );
}

#[tokio::test]
async fn the_embeds_codes_decide_with_either_status_and_with_the_embed_asked_first() {
    for status in [StatusCode::BAD_REQUEST, StatusCode::OK] {
        let app = TestApp::on(coded_embed_after_a_blocked_page(
            "some.one",
            sv::EMBED_MISSING_CODE,
            status,
        ))
        .start()
        .await;
        app.lookup(ShortVideo, "some.one")
            .await
            .about(format!("10221 with {status}"))
            .expect_problem(404, "profile_not_found")
            .expect_header("x-source", "embed");
        let app = TestApp::on(coded_embed_after_a_blocked_page(
            "some.one",
            sv::EMBED_PRIVATE_CODE,
            status,
        ))
        .start()
        .await;
        app.lookup(ShortVideo, "some.one")
            .await
            .about(format!("10222 with {status}"))
            .expect_profile(&sv::expected_private_embed_body("some.one"))
            .expect_header("x-source", "embed");
    }
    // The embed first: its 10221 ends the lookup, and the page is never asked.
    let app = TestApp::on(sv::router())
        .with(|s| {
            s.platform_mut(Platform::ShortVideo).sources = vec!["embed".into(), "page".into()];
        })
        .start()
        .await;
    app.lookup(ShortVideo, sv::MISSING_EMBED_NAME)
        .await
        .expect_problem(404, "profile_not_found")
        .expect_header("x-source", "embed");
    assert_eq!(
        app.upstream().paths(),
        [format!("/embed/@{}", sv::MISSING_EMBED_NAME)]
    );
}

#[tokio::test]
async fn an_embed_400_without_a_readable_state_stays_private_or_missing() {
    for body in [
        String::new(),
        "<html><body>Bad Request</body></html>".to_owned(),
        // The payload without a code.
        sv::embed_error_page("some.one"),
    ] {
        let upstream = split(
            "/embed/",
            fixed(StatusCode::BAD_REQUEST, body.clone()),
            fixed(StatusCode::OK, sv::stateless_shell_page(false)),
        );
        let app = TestApp::on(upstream).start().await;
        app.lookup(ShortVideo, "some.one")
            .await
            .about(format!("{body:?}"))
            .expect_blocked()
            .expect_header("x-source", "page");
        assert_eq!(app.hits(), 2, "{body:?}: the page, then the embed");
    }
}
