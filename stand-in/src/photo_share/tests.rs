//! The samples are what they claim: valid JSON where JSON is promised, the right sizes, the
//! platform's spellings, and a stand-in that answers each name as documented. (What the
//! service makes of them is tested beside the service, in its `tests/it`.)

use super::*;
use crate::THROTTLED_NAME;
use crate::test_call::get;

#[test]
fn sample_json_documents_are_valid_json() {
    for doc in [
        web_profile_info(&PUBLIC_USER, 0),
        web_profile_info(&PRIVATE_USER, 50_000),
        user_null_json(),
        require_login_json(),
        checkpoint_json(),
        business_schema_json(),
        profile_query_answer(&CREATOR_USER, false),
        profile_query_answer(&PRIVATE_USER, true),
        moved_user_json(&PUBLIC_USER, 0),
        unknown_counts_json(&PUBLIC_USER, 0),
    ] {
        serde_json::from_str::<serde_json::Value>(&doc).expect("valid JSON");
    }
    let api: serde_json::Value = serde_json::from_str(&web_profile_info(&PUBLIC_USER, 0)).unwrap();
    assert_eq!(api["data"]["user"]["id"], PUBLIC_USER.pk);
    assert_eq!(api["data"]["user"]["biography"], PUBLIC_USER.biography);
}

#[test]
fn sizes_follow_the_target() {
    for target in [0, 10_000, 300_000, 1_000_000] {
        for doc in [
            web_profile_info(&PUBLIC_USER, target),
            xig_profile_page(&PUBLIC_USER, target),
            shared_data_profile_page(&PUBLIC_USER, target),
            xig_edge_counts_page(&PUBLIC_USER, target),
            web_profile_info_preload_page(&BUSINESS_USER, target),
        ] {
            assert!(doc.len() >= target, "{} < {target}", doc.len());
            assert!(
                doc.len() <= target.max(8_000) + 8_000,
                "{} >> {target}",
                doc.len()
            );
        }
    }
}

#[test]
fn samples_are_deterministic() {
    assert_eq!(
        xig_profile_page(&PUBLIC_USER, 100_000),
        xig_profile_page(&PUBLIC_USER, 100_000)
    );
    assert_eq!(
        web_profile_info(&PRIVATE_USER, 100_000),
        web_profile_info(&PRIVATE_USER, 100_000)
    );
}

#[test]
fn the_public_user_exercises_decoding() {
    let body = expected_body(&PUBLIC_USER);
    let bio = body["biography"].as_str().unwrap();
    assert!(bio.contains("&amp;") && bio.contains('"'));
    assert!(!bio.is_ascii());
    let api = web_profile_info(&PUBLIC_USER, 0);
    assert!(api.contains("https:\\/\\/lumen.example\\/notes"));
    let legacy = shared_data_profile_page(&PUBLIC_USER, 0);
    assert!(legacy.contains("https:\\u002F\\u002Flumen.example"));
    let xig = xig_profile_page(&PUBLIC_USER, 0);
    assert!(xig.contains("Maps &amp; field notes"));
    assert!(xig.contains(&format!("\"id\":\"{}\"", PUBLIC_USER.other_id)));
}

#[test]
fn the_private_user_has_limited_information() {
    let body = expected_body(&PRIVATE_USER);
    assert_eq!(body["is_private"], true);
    assert!(body["edge_owner_to_timeline_media"]["count"].is_null());
    assert_eq!(body["profile_pic_url_hd"], body["profile_pic_url"]);
}

#[test]
fn the_business_page_preloads_another_id_and_hides_its_posts() {
    // The preloaded user's own `id` is another id: `pk` is the one the body returns.
    let page = web_profile_info_preload_page(&BUSINESS_USER, 0);
    assert!(page.contains(&format!("\"id\":\"{}\"", BUSINESS_USER.other_id)));
    assert!(page.contains(&format!("\"pk\":\"{}\"", BUSINESS_USER.pk)));
    assert!(page.contains("\"edge_owner_to_timeline_media\":null"));
    assert_eq!(expected_body(&BUSINESS_USER)["id"], BUSINESS_USER.pk);
}

#[test]
fn the_profile_query_answer_has_the_mobile_names_and_a_viewer_without_a_name() {
    let answer: serde_json::Value =
        serde_json::from_str(&profile_query_answer(&CREATOR_USER, true)).unwrap();
    let user = &answer["data"]["user"];
    assert_eq!(user["pk"], CREATOR_USER.pk);
    assert_eq!(user["follower_count"], 23_456);
    assert_eq!(
        user["hd_profile_pic_url_info"]["url"],
        CREATOR_USER.profile_pic_url_hd
    );
    assert!(user.get("edge_followed_by").is_none());
    assert!(answer["data"]["viewer"]["user"].get("username").is_none());
    assert_eq!(answer["status"], "ok");
    let bare: serde_json::Value =
        serde_json::from_str(&profile_query_answer(&CREATOR_USER, false)).unwrap();
    assert!(bare.get("status").is_none());
    // Preloaded in the page: the query's entry holds the same user, beside another account's
    // hovercard.
    let page = profile_query_preload_page(&CREATOR_USER, 0);
    assert!(page.contains("\"adp_PolarisProfilePageContentQuery"));
    assert!(page.contains("\"data\":{\"user\":{\"pk\""));
    assert!(page.contains("\"xig_user_by_username\":{\"pk\":\"9000100\""));
}

#[test]
fn the_moved_page_keeps_the_user_under_an_unknown_key_beside_a_hovercard() {
    let page = moved_user_page(&PUBLIC_USER, 0);
    assert!(page.contains(&format!("\"{MOVED_USER_KEY}\":{{")));
    assert!(page.contains(&format!("\"pk\":\"{}\"", PUBLIC_USER.pk)));
    assert_eq!(
        page.matches("\"xig_user_by_username\":{").count(),
        2,
        "hovercard, script"
    );
    let json: serde_json::Value = serde_json::from_str(&moved_user_json(&PUBLIC_USER, 0)).unwrap();
    assert_eq!(json["data"]["account"]["username"], PUBLIC_USER.username);
}

fn api(name: &str) -> String {
    format!("/api/v1/users/web_profile_info/?username={name}")
}

#[tokio::test]
async fn the_stand_in_answers_each_name_as_documented_and_its_twin_renames_the_jsons_counts() {
    let (normal, drifted) = (router(), drifted_router());
    let found = get(&normal, &api(PUBLIC_USER.username)).await;
    assert_eq!(found.status, 200);
    assert!(found.content_type.starts_with("application/json"));
    assert!(found.body.starts_with("{\"data\":{\"user\":{"));
    let moved = get(&drifted, &api(PUBLIC_USER.username)).await;
    assert_eq!(moved.status, 200);
    assert!(moved.body.starts_with("{\"data\":{\"user\":{"));
    assert!(!moved.body.contains("\"edge_followed_by\""));
    assert!(moved.body.contains("\"edge_fans\":{\"count\":12345678"));
    // The page is not the drifted source: both answer it alike.
    let page = format!("/{}/", PUBLIC_USER.username);
    assert_eq!(get(&normal, &page).await, get(&drifted, &page).await);
    let missing = get(&normal, &api(NOT_FOUND_NAME)).await;
    assert_eq!(missing.body, user_null_json());
    let missing_page = get(&normal, &format!("/{NOT_FOUND_NAME}/")).await;
    assert_eq!(missing_page.status, 404);
    assert_eq!(get(&normal, &api(BUSINESS_USER.username)).await.status, 400);
    assert_eq!(get(&normal, &api(CREATOR_USER.username)).await.status, 400);
    let creator = get(&normal, &format!("/{}/", CREATOR_USER.username)).await;
    assert!(creator.body.contains("adp_PolarisProfilePageContentQuery"));
    let html = get(&normal, &api(HTML_FOR_JSON_NAME)).await;
    assert_eq!(html.status, 200);
    assert!(html.content_type.starts_with("text/html"));
    assert_eq!(get(&normal, &api(THROTTLED_NAME)).await.status, 429);
}
