//! The keys added to the short-video `userInfo.user` (`bioLink`, `createTime`, `language`,
//! `isOrganization`), read from every page form that has them (the 2026 universal state, the
//! `SIGI_STATE` and `__NEXT_DATA__` eras), through a lookup on loopback; the embed, which gives
//! none of them, answers them `null` (`false`) and names the nullable ones in
//! `Profile-Withheld`; and each real capture is read with the ones it holds.

use axum::response::IntoResponse;
use profile_lookup::platform::Reading;
use profile_lookup::platform::short_video::extract::extract;
use serde_json::{Value, json};
use stand_in::short_video::{self as sv, Era};

use crate::support::routers::always;
use crate::support::{ShortVideo, TestApp, capture, short_video_name as name};

/// The added keys of a body's `userInfo.user`, as JSON.
fn added(body: &Value) -> Value {
    let user = &body["userInfo"]["user"];
    json!({
        "bioLink": user["bioLink"],
        "createTime": user["createTime"],
        "language": user["language"],
        "isOrganization": user["isOrganization"],
    })
}

#[tokio::test]
async fn every_page_era_gives_the_added_keys() {
    for era in Era::ALL {
        for user in sv::sample_users() {
            let page = sv::profile_page(era, &user, 40_000);
            let router = always(move || {
                (
                    [(axum::http::header::CONTENT_TYPE, "text/html; charset=utf-8")],
                    page.clone(),
                )
                    .into_response()
            });
            let app = TestApp::on(router)
                .with(|s| s.platform_mut(ShortVideo).sources = vec!["page".into()])
                .start()
                .await;
            let answer = app
                .lookup(ShortVideo, user.unique_id)
                .await
                .expect_status(200)
                .expect_header("x-source", "page");
            let about = format!("{era:?} {}", user.unique_id);
            assert_eq!(
                added(&answer.json()),
                added(&sv::expected_body(&user)),
                "{about}"
            );
            // A page gives what the user set: a `null` there is not withheld.
            if answer.has("profile-withheld") {
                assert!(
                    !answer.header("profile-withheld").contains("userInfo.user"),
                    "{about}"
                );
            }
        }
    }
}

#[tokio::test]
async fn each_added_key_reads_from_the_current_page() {
    let app = TestApp::on(sv::router()).start().await;
    let public = app
        .lookup(ShortVideo, sv::PUBLIC_USER.unique_id)
        .await
        .expect_status(200)
        .json();
    assert_eq!(
        added(&public),
        json!({"bioLink": {"link": "https://sunny-kitchen.example/links"},
               "createTime": 1_500_000_000, "language": "en", "isOrganization": false})
    );
    // A link without a scheme stays as the platform gives it; no language is `null`.
    let small = app
        .lookup(ShortVideo, sv::SMALL_USER.unique_id)
        .await
        .expect_status(200)
        .json();
    assert_eq!(
        small["userInfo"]["user"]["bioLink"]["link"],
        "tiny-baker.example/bread"
    );
    assert_eq!(small["userInfo"]["user"]["language"], Value::Null);
    // A page that says `createTime: 0` hides it: `null`, never 1970.
    let private = app
        .lookup(ShortVideo, sv::PRIVATE_USER.unique_id)
        .await
        .expect_status(200)
        .json();
    assert_eq!(private["userInfo"]["user"]["createTime"], Value::Null);
    assert_eq!(private["userInfo"]["user"]["bioLink"], Value::Null);
}

#[tokio::test]
async fn the_embed_gives_none_and_profile_withheld_names_them() {
    let app = TestApp::on(sv::router()).start().await;
    let user = sv::EMBED_ONLY_USER;
    let answer = app
        .lookup(ShortVideo, user.unique_id)
        .await
        .expect_status(200)
        .expect_header("x-source", "embed");
    assert_eq!(
        added(&answer.json()),
        json!({"bioLink": null, "createTime": null, "language": null, "isOrganization": false})
    );
    assert_eq!(
        answer.header("profile-withheld"),
        "userInfo.stats.videoCount, userInfo.stats.diggCount, userInfo.user.bioLink, \
         userInfo.user.createTime, userInfo.user.language"
    );
}

#[test]
fn every_real_capture_gives_the_added_keys_it_holds() {
    let universal = |rel: &str| -> Option<Vec<u8>> {
        let bytes = capture(rel)?;
        let mut array: Vec<Value> = serde_json::from_slice(&bytes).unwrap();
        let info = serde_json::to_string(&array.remove(0)).unwrap();
        let state = format!(
            r#"{{"__DEFAULT_SCOPE__":{{"webapp.user-detail":{{"userInfo":{info},"statusCode":0}}}}}}"#
        );
        Some(
            format!(r#"<script id="__UNIVERSAL_DATA_FOR_REHYDRATION__" type="application/json">{state}</script>"#)
                .into_bytes(),
        )
    };
    let cases: [(&str, &str, bool, Value); 4] = [
        (
            "tiktok/next_data_profile_script_2021-01_tiktok.html",
            "tiktok",
            false,
            json!({"bioLink": null, "createTime": 1_425_144_149, "language": null,
                   "isOrganization": false}),
        ),
        (
            "tiktok/sigi_state_profile_page_2022_huxleythepandapuppy.html",
            "huxleythepandapuppy",
            false,
            // `createTime: 0`: hidden; the page's `"language"` is the app context's, not the
            // user's.
            json!({"bioLink": {"link": "https://beacons.ai/huxleythepandapuppy"},
                   "createTime": null, "language": null, "isOrganization": false}),
        ),
        (
            "tiktok/user_detail_userInfo_2024-02_oddanimalspecimens.json",
            "oddanimalspecimens",
            true,
            json!({"bioLink": {"link": "linktr.ee/oddanimalspecimens"}, "createTime": null,
                   "language": "en", "isOrganization": false}),
        ),
        (
            "tiktok/user_detail_userInfo_2026-01_oddanimalspecimens.json",
            "oddanimalspecimens",
            true,
            json!({"bioLink": {"link": "https://www.tiktok.com/activity/landing/tta?pia=1&use_spark=1&campaignId=7555805199525265464&minVersion=320100&enter_from=creator&target_group_id=EducationalCreator&target_user_id=6976999329680589829&enter_channel=link"},
                   "createTime": 1_624_460_216, "language": "en", "isOrganization": false}),
        ),
    ];
    for (file, asked, wrapped, want) in cases {
        let page = if wrapped {
            universal(file)
        } else {
            capture(file)
        };
        let Some(page) = page else {
            return;
        };
        let Reading::Found(profile) = extract(&page, &name(asked)) else {
            panic!("{file}: no profile");
        };
        let got = added(&serde_json::to_value(&profile).unwrap());
        println!("{file}: {got}");
        assert_eq!(got, want, "{file}");
    }
}
