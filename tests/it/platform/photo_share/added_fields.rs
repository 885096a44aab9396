//! The keys added to the photo-share body (`external_url`, `bio_links`, `pronouns`,
//! `category_name`), read from every form that has them: the JSON's `user`, the legacy page's
//! `_sharedData` user, the page's xig object, the page's preloaded answers (the endpoint's and
//! the profile query's), the logged-out query and the profile query by pk. Each through a
//! lookup on loopback, and each real capture read with the ones it holds.

use axum::http::StatusCode;
use axum::response::IntoResponse;
use profile_lookup::config::Settings;
use profile_lookup::platform::Reading;
use profile_lookup::platform::photo_share::extract::{from_api, from_page};
use serde_json::{Value, json};
use stand_in::photo_share as ps;

use crate::support::routers::{always, split, switchable, typed};
use crate::support::{PhotoShare, TestApp, capture, photo_share_name as name};

/// The added keys of a body, as JSON.
fn added(body: &Value) -> Value {
    json!({
        "external_url": body["external_url"],
        "bio_links": body["bio_links"],
        "pronouns": body["pronouns"],
        "category_name": body["category_name"],
    })
}

/// Only `sources`, every lookup asking the platform.
fn only(sources: &'static [&'static str]) -> impl FnOnce(&mut Settings) {
    move |s: &mut Settings| {
        s.platform_mut(PhotoShare).sources = sources.iter().map(|&s| s.into()).collect();
        s.cache.enabled = false;
    }
}

/// A router answering every request with the page `html`.
fn page(html: String) -> axum::Router {
    always(move || {
        (
            [(axum::http::header::CONTENT_TYPE, "text/html; charset=utf-8")],
            html.clone(),
        )
            .into_response()
    })
}

/// Looks `user` up on `router` with `settings`, expecting the body the stand-in says, from
/// `source`; returns the body's added keys.
async fn looked_up(
    router: axum::Router,
    settings: impl FnOnce(&mut Settings),
    user: &ps::SampleUser,
    source: &str,
) -> Value {
    let app = TestApp::on(router).with(settings).start().await;
    let answer = app
        .lookup(PhotoShare, user.username)
        .await
        .expect_status(200)
        .expect_header("x-source", source);
    let body = answer.json();
    assert_eq!(added(&body), added(&ps::expected_body(user)), "{source}");
    body
}

#[tokio::test]
async fn the_json_endpoints_user_gives_every_added_key_unwrapped() {
    let user = ps::PUBLIC_USER;
    let body = looked_up(ps::router(), only(&["json"]), &user, "json").await;
    // A link the documents give only in the redirector comes unwrapped and decoded.
    assert_eq!(
        body["bio_links"][1],
        json!({"url": "https://maps.lumen.example/?trail=north&km=12", "title": "Trail maps"})
    );
    assert_eq!(body["pronouns"], json!(["they", "them"]));
}

#[tokio::test]
async fn the_legacy_pages_user_gives_every_added_key() {
    let user = ps::PUBLIC_USER;
    let router = page(ps::shared_data_profile_page(&user, 64 * 1024));
    looked_up(router, only(&["page"]), &user, "page").await;
}

#[tokio::test]
async fn the_pages_xig_object_gives_every_added_key() {
    for user in [ps::PUBLIC_USER, ps::PRIVATE_USER, ps::RETIRED_JSON_USER] {
        let router = page(ps::xig_profile_page(&user, 64 * 1024));
        looked_up(router, only(&["page"]), &user, "page").await;
    }
}

#[tokio::test]
async fn the_pages_preloaded_answers_give_every_added_key() {
    // The endpoint's answer (a business account, its link only wrapped) and the profile
    // query's (a creator).
    looked_up(ps::router(), only(&["page"]), &ps::BUSINESS_USER, "page").await;
    looked_up(ps::router(), only(&["page"]), &ps::CREATOR_USER, "page").await;
}

#[tokio::test]
async fn the_logged_out_query_gives_every_added_key() {
    for user in [ps::PUBLIC_USER, ps::CREATOR_USER] {
        looked_up(ps::router(), only(&["loggedout"]), &user, "loggedout").await;
    }
}

#[tokio::test]
async fn the_profile_query_by_pk_gives_every_added_key() {
    let refused = typed(
        StatusCode::TOO_MANY_REQUESTS,
        "text/html",
        ps::PLEASE_WAIT_HTML,
    );
    let json_refused = split("/api/v1/users/web_profile_info/", refused, ps::router());
    let (router, switch) = switchable(vec![ps::router(), json_refused]);
    let app = TestApp::on(router)
        .with(only(&["json", "graphql"]))
        .start()
        .await;
    let user = ps::PUBLIC_USER;
    // Seen once through the JSON: the pk is learned; then only the profile query answers.
    app.lookup(PhotoShare, user.username)
        .await
        .expect_header("x-source", "json");
    switch.set(1);
    let answer = app
        .lookup(PhotoShare, user.username)
        .await
        .expect_status(200)
        .expect_header("x-source", "graphql");
    assert_eq!(added(&answer.json()), added(&ps::expected_body(&user)));
}

#[tokio::test]
async fn no_added_key_is_ever_named_withheld() {
    // A private account without a link, pronouns or category: `null` and `[]`, never withheld.
    let user = ps::PRIVATE_USER;
    let app = TestApp::on(ps::router())
        .with(only(&["json"]))
        .start()
        .await;
    let answer = app
        .lookup(PhotoShare, user.username)
        .await
        .expect_status(200);
    assert_eq!(
        added(&answer.json()),
        json!({"external_url": null, "bio_links": [], "pronouns": [], "category_name": null})
    );
    assert_eq!(
        answer.header("profile-withheld"),
        "edge_owner_to_timeline_media.count"
    );
}

#[test]
fn every_real_capture_gives_the_added_keys_it_holds() {
    let cases: [(&str, &str, Value); 5] = [
        (
            "instagram/shareddata_profile_page_2021-04_tanshio.html",
            "_tanshio_",
            json!({"external_url": "https://tanshio.net/", "bio_links": [], "pronouns": [],
                   "category_name": null}),
        ),
        (
            "instagram/web_profile_info_2022_megadeth.json",
            "megadeth",
            json!({"external_url": "http://megadeth.lnk.to/sickdyingdead/", "bio_links": [],
                   "pronouns": [], "category_name": "Musician/band"}),
        ),
        (
            "instagram/web_profile_info_2024-03_nasa_loggedin.json",
            "nasa",
            json!({"external_url": "https://www.nasa.gov/", "bio_links": [
                {"url": "https://www.nasa.gov", "title": ""},
                {"url": "http://nasa.gov/events", "title": "Launches & Landings"},
                {"url": "https://plus.nasa.gov", "title": "NASA+"}],
                "pronouns": [], "category_name": null}),
        ),
        (
            "instagram/web_profile_info_2024-03_anasaiaofficial_loggedin.json",
            "anasaiaofficial",
            json!({"external_url": "https://superlink.io/anasaia", "bio_links": [
                {"url": "https://superlink.io/anasaia", "title": ""}],
                "pronouns": ["she", "her", "hers"], "category_name": "Artist"}),
        ),
        (
            "instagram/web_profile_info_2024-03_regina_steinhauer_loggedin.json",
            "regina_steinhauer",
            json!({"external_url": "https://linktr.ee/reginasrabattcodes", "bio_links": [
                {"url": "https://linktr.ee/reginasrabattcodes", "title": ""}],
                "pronouns": [], "category_name": "Digital creator"}),
        ),
    ];
    for (file, asked, want) in cases {
        let Some(document) = capture(file) else {
            return;
        };
        let reading = if file.ends_with(".json") {
            from_api(&document, &name(asked))
        } else {
            from_page(&document, &name(asked))
        };
        let Reading::Found(profile) = reading else {
            panic!("{file}: {reading:?}");
        };
        let got = added(&serde_json::to_value(&profile).unwrap());
        println!("{file}: {got}");
        assert_eq!(got, want, "{file}");
    }
}
