//! Whether a photo-share user exists is decided from structured state or HTTP status, never from
//! text the user writes (issue 8, defect 5): a bio, full name or caption that says "Sorry, this
//! page isn't available." (or names the 404 dialog's class, or login markup) never turns the
//! user's own profile into a 404 or a login wall.

use crate::support::routers::{plain, split};
use crate::support::{PhotoShare, TestApp};
use axum::http::StatusCode;
use profile_lookup::platform::photo_share::extract::{from_api, from_page};
use profile_lookup::platform::{Platform, Reading};
use profile_lookup::username::Username;
use stand_in::photo_share::{self as ps, SampleUser};

/// The platform's own 404 text, as a user can type it.
const SORRY: &str = "Sorry, this page isn't available.";

/// A user whose name, bio and captions are all the 404 text.
const SORRY_USER: SampleUser = SampleUser {
    username: "sorry.user",
    full_name: "Sorry, this page isn't available.",
    biography: "Sorry, this page isn't available. dialog-404 Page not found",
    ..ps::PUBLIC_USER
};

fn name(raw: &str) -> Username {
    Username::parse(Platform::PhotoShare, raw).expect("a valid name")
}

/// The meta tags, `og:` tags and image alt text a profile page carries, holding the user's
/// own words (escaped as the platform escapes them).
fn user_written_markup(words: &str) -> String {
    let escaped = words.replace('\'', "&#039;").replace('"', "&quot;");
    format!(
        "<meta name=\"description\" content=\"12 Followers, 3 Following, 4 Posts - {escaped} \
         (&#064;sorry.user) on Photo-share: &quot;{escaped}&quot;\">\
         <meta property=\"og:title\" content=\"{escaped} (&#064;sorry.user)\">\
         <meta property=\"og:description\" content=\"{escaped}\">\
         <meta name=\"twitter:title\" content='{escaped}'>\
         <img alt=\"{escaped}\" class=\"x5yr21d\">"
    )
}

/// The app shell of `sorry.user` (no profile inside) carrying `words` where a real page carries
/// the user's own text: meta and `og:` tags, the title, image alt text.
fn shell_with(words: &str) -> String {
    let shell = ps::shell_page("sorry.user");
    let escaped = words.replace('\'', "&#039;");
    shell
        .replacen(
            "<meta charset=\"utf-8\">",
            &format!("<meta charset=\"utf-8\">{}", user_written_markup(words)),
            1,
        )
        .replacen(
            "<title>sorry.user (&#064;sorry.user)",
            &format!("<title>{escaped} (&#064;sorry.user)"),
            1,
        )
}

#[test]
fn user_text_in_the_page_markup_is_never_a_404_marker() {
    for words in [
        SORRY,
        "Sorry, this page isn&#39;t available.",
        "my class is dialog-404 ok",
        "Page not found",
    ] {
        let page = shell_with(words);
        assert!(page.contains("content=\""), "the shell took the meta tags");
        let verdict = from_page(page.as_bytes(), &name("sorry.user"));
        assert_eq!(
            verdict,
            Reading::Unreadable("no profile in page".to_owned()),
            "words: {words}"
        );
    }
}

#[test]
fn user_text_in_the_page_markup_is_never_a_login_wall() {
    let page = shell_with("/accounts/login/ajax/ action=\"/accounts/login\" id=\"loginForm\"");
    assert_eq!(
        from_page(page.as_bytes(), &name("sorry.user")),
        Reading::Unreadable("no profile in page".to_owned())
    );
}

#[test]
fn a_profile_page_whose_user_text_is_a_marker_is_the_profile() {
    let page = ps::xig_profile_page(&SORRY_USER, 32 * 1024).replacen(
        "<meta charset=\"utf-8\">",
        &format!("<meta charset=\"utf-8\">{}", user_written_markup(SORRY)),
        1,
    );
    let Reading::Found(profile) = from_page(page.as_bytes(), &name("sorry.user")) else {
        panic!("expected the profile");
    };
    assert_eq!(profile.full_name, SORRY);
}

#[test]
fn a_profile_json_whose_user_text_is_a_marker_is_the_profile() {
    let body = ps::web_profile_info(&SORRY_USER, 16 * 1024);
    let Reading::Found(profile) = from_api(body.as_bytes(), &name("sorry.user")) else {
        panic!("expected the profile");
    };
    assert_eq!(profile.biography, SORRY_USER.biography);
}

#[test]
fn the_platforms_own_not_found_shapes_still_say_not_found() {
    assert_eq!(
        from_page(
            ps::not_found_page().as_bytes(),
            &name("no.such.sample_user")
        ),
        Reading::NotFound
    );
    for page in [
        "<html><head><title>Page Not Found &bull; Photo-share</title></head><body></body></html>",
        "<html><body><div class=\"page dialog-404\"><h2>x</h2></div></body></html>",
        "<html><body><h2>Sorry, this page isn&#39;t available.</h2></body></html>",
        r#"<script>window._sharedData = {"entry_data":{"HttpErrorPage":[{}]}};</script>"#,
    ] {
        assert_eq!(
            from_page(page.as_bytes(), &name("bo")),
            Reading::NotFound,
            "{page}"
        );
    }
}

/// JSON `user: null`, and the app shell of a user whose own words are the 404 text: absence is
/// not confirmed, so the caller hears a block (429), never 404.
#[tokio::test]
async fn end_to_end_user_text_never_confirms_absence() {
    let app = TestApp::on(split(
        "/api/",
        plain(StatusCode::OK, ps::user_null_json()),
        plain(StatusCode::OK, shell_with(SORRY)),
    ))
    .start()
    .await;
    app.lookup(PhotoShare, "sorry.user").await.expect_blocked();
}

/// The profile JSON and the page of a user whose name and bio are the 404 text: 200.
#[tokio::test]
async fn end_to_end_a_profile_that_says_sorry_is_found() {
    let app = TestApp::on(split(
        "/api/",
        plain(StatusCode::OK, ps::web_profile_info(&SORRY_USER, 16 * 1024)),
        plain(StatusCode::OK, ps::xig_profile_page(&SORRY_USER, 16 * 1024)),
    ))
    .start()
    .await;
    let answer = app
        .lookup(PhotoShare, "sorry.user")
        .await
        .expect_status(200);
    assert_eq!(answer.json()["full_name"], SORRY);
}
