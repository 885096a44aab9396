//! The samples are what they claim: the platform's rounding, sizes, valid JSON where JSON is
//! promised, the platform's spellings, and a stand-in that answers each name as documented.
//! (What the service makes of them is tested beside the service, in its `tests/it`.)

use super::pages::{APP_CONTEXT_ONLY, state_open_tag};
use super::state::{as_int32, rounded};
use super::*;
use crate::THROTTLED_NAME;
use crate::test_call::get;

/// The JSON of the one script of `page` that opens with `open_tag`.
fn script_json(page: &str, open_tag: &str) -> serde_json::Value {
    let mut after = page.split(open_tag).skip(1);
    let text = after.next().expect("the script is there");
    assert!(after.next().is_none(), "{open_tag} twice");
    let text = text.split("</script>").next().unwrap();
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{open_tag}: {e}"))
}

#[test]
fn rounding_and_overflow_look_like_the_platform() {
    assert_eq!(rounded(12_345_678), 12_300_000);
    assert_eq!(rounded(4_001_943), 4_000_000);
    assert_eq!(rounded(321), 321);
    assert_eq!(as_int32(2_987_654_321), -1_307_312_975);
    assert_eq!(as_int32(56_789), 56_789);
}

#[test]
fn pages_are_about_the_requested_size_and_deterministic() {
    for era in Era::ALL {
        for size in [DEFAULT_PAGE_SIZE, BENCH_PAGE_SIZE] {
            let page = profile_page(era, &PUBLIC_USER, size);
            let ratio = page.len() as f64 / size as f64;
            assert!(
                (0.95..1.1).contains(&ratio),
                "{era:?} {size}: {}",
                page.len()
            );
        }
        assert_eq!(
            profile_page(era, &SMALL_USER, 50_000),
            profile_page(era, &SMALL_USER, 50_000)
        );
    }
}

#[test]
fn state_scripts_are_valid_json_and_hold_whose_page_it_is() {
    for era in Era::ALL {
        let page = profile_page(era, &PUBLIC_USER, 60_000);
        let state = script_json(&page, state_open_tag(era)).to_string();
        assert!(state.contains(PUBLIC_USER.sec_uid), "{era:?}");
        for page in [
            profile_page(era, &PRIVATE_USER, 60_000),
            not_found_page(era, NOT_FOUND_USER),
        ] {
            script_json(&page, state_open_tag(era));
        }
    }
    for page in [status_page(10000), shell_page()] {
        script_json(&page, state_open_tag(Era::Universal));
    }
}

#[test]
fn the_bio_is_written_like_the_platform_writes_it() {
    let page = profile_page(Era::Universal, &PUBLIC_USER, 60_000);
    assert!(page.contains(r#"Kitchen experiments &amp; food science"#));
    assert!(page.contains(r#"\"Taste first"#));
    assert!(page.contains(r#"https:\u002F\u002Fsunny-kitchen.example\u002Flinks"#));
}

#[test]
fn embed_pages_are_valid_json_and_write_big_counts_negative() {
    for user in sample_users().into_iter().chain(embed_users()) {
        let page = embed_page(&user);
        let state = script_json(
            &page,
            r#"<script id="__FRONTITY_CONNECT_STATE__" type="application/json">"#,
        );
        let route = format!("/embed/@{}", user.unique_id);
        let info = &state["source"]["data"][&route]["userInfo"];
        assert_eq!(info["uniqueId"], user.unique_id, "{route}");
    }
    // A like count past i32::MAX is written negative, as the platform does.
    assert!(embed_page(&EMBED_ONLY_USER).contains(r#""heartCount":-1194967173"#));
}

#[test]
fn two_state_pages_hold_both_scripts() {
    for first in [true, false] {
        let page = two_state_page(Era::Sigi, Some(&SMALL_USER), SMALL_USER.unique_id, first);
        script_json(&page, state_open_tag(Era::Sigi));
        let app_context = APP_CONTEXT_ONLY.split('>').next().unwrap().to_owned() + ">";
        script_json(&page, &app_context);
    }
}

#[test]
fn expected_bodies_give_what_the_embed_lacks_as_empty() {
    let page = expected_body(&PUBLIC_USER);
    let embed = expected_embed_body(&PUBLIC_USER);
    assert_eq!(page["userInfo"]["stats"]["heart"], 2_987_654_321u64);
    assert_eq!(page["userInfo"]["user"]["secUid"], PUBLIC_USER.sec_uid);
    assert_eq!(embed["userInfo"]["user"]["secUid"], "");
    assert!(embed["userInfo"]["stats"]["videoCount"].is_null());
    assert_eq!(
        embed["userInfo"]["user"]["nickname"],
        page["userInfo"]["user"]["nickname"]
    );
    // A private account's page leaves counts out: `null`, not 0.
    assert!(expected_body(&PRIVATE_USER)["userInfo"]["stats"]["videoCount"].is_null());
}

#[tokio::test]
async fn the_stand_in_answers_each_name_as_documented_and_its_twin_moves_the_page() {
    let (normal, drifted) = (router(), drifted_router());
    let public = format!("/@{}", PUBLIC_USER.unique_id);
    let page = get(&normal, &public).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains(state_open_tag(Era::Universal)));
    let moved = get(&drifted, &public).await;
    assert_eq!(moved.status, 200);
    // The user is where the page keeps it; no count is under a name the platform used.
    assert!(moved.body.contains(state_open_tag(Era::Universal)));
    assert!(moved.body.contains(PUBLIC_USER.sec_uid));
    for key in [
        "followerCount",
        "followingCount",
        "\"heart\"",
        "heartCount",
        "videoCount",
    ] {
        assert!(!moved.body.contains(key), "{key}");
    }
    assert!(moved.body.contains("\"fansTotal\":\"12345678\""));
    // The embed is not the drifted source: both answer it alike.
    let embed = format!("/embed/@{}", SMALL_USER.unique_id);
    assert_eq!(get(&normal, &embed).await, get(&drifted, &embed).await);
    let private_embed = format!("/embed/@{}", PRIVATE_USER.unique_id);
    let private_embed = get(&normal, &private_embed).await;
    assert_eq!(private_embed.status, 400);
    assert!(
        private_embed
            .body
            .contains(r#""isError":true,"pageName":"error""#)
    );
    let restricted = get(&normal, &format!("/@{RESTRICTED_NAME}")).await;
    assert!(restricted.body.contains(r#""statusCode":209002"#));
    let config = get(&normal, &format!("/@{CAPTCHA_CONFIG_NAME}")).await;
    assert!(
        config
            .body
            .contains(r#"<script type="application/json" id="captcha-config">"#)
    );
    let throttled = get(&normal, &format!("/@{THROTTLED_NAME}")).await;
    assert_eq!(throttled.status, 429);
    let missing = get(&normal, &format!("/@{NOT_FOUND_USER}")).await;
    assert_eq!(missing.status, 200);
    assert!(missing.body.contains("\"statusCode\":10221"));
    let captcha = get(&normal, &format!("/@{}", EMBED_ONLY_USER.unique_id)).await;
    assert!(captcha.body.contains("Security Check"));
    // The wrapped sample: `-1625611536` for a like count of 2669355760, and no exact spelling.
    let wrapped = get(&normal, &format!("/@{}", WRAPPED_COUNTS_USER.unique_id)).await;
    assert!(
        wrapped
            .body
            .contains(r#""heart":-1625611536,"heartCount":-1625611536"#)
    );
    assert!(!wrapped.body.contains("statsV2"));
    // The moved sample: its state, whole, under an id no era used.
    let moved = get(&normal, &format!("/@{}", MOVED_PAGE_USER.unique_id)).await;
    assert!(!moved.body.contains("__UNIVERSAL_DATA_FOR_REHYDRATION__"));
    let open = state_open_tag(Era::Universal)
        .replace("__UNIVERSAL_DATA_FOR_REHYDRATION__", MOVED_STATE_ID);
    let state = moved
        .body
        .split(&open)
        .nth(1)
        .unwrap()
        .split("</script>")
        .next();
    let state: serde_json::Value = serde_json::from_str(state.unwrap()).unwrap();
    let info = &state["__DEFAULT_SCOPE__"]["webapp.user-detail"]["userInfo"];
    assert_eq!(info["user"]["uniqueId"], MOVED_PAGE_USER.unique_id);
    assert_eq!(info["statsV2"]["followerCount"], "76543");
}

#[tokio::test]
async fn the_embed_names_its_case_for_two_names_whose_page_is_the_shell() {
    let normal = router();
    for (name, code) in [
        (PRIVATE_EMBED_NAME, EMBED_PRIVATE_CODE),
        (MISSING_EMBED_NAME, EMBED_MISSING_CODE),
    ] {
        let page = get(&normal, &format!("/@{name}")).await;
        assert_eq!(page.status, 200, "{name}");
        assert_eq!(page.body, stateless_shell_page(false), "{name}");
        let embed = get(&normal, &format!("/embed/@{name}")).await;
        assert_eq!(embed.status, 400, "{name}");
        let state = script_json(
            &embed.body,
            r#"<script id="__FRONTITY_CONNECT_STATE__" type="application/json">"#,
        );
        let route = &state["source"]["data"][&format!("/embed/@{name}")];
        assert_eq!(route["errorCode"], code, "{name}");
        assert_eq!(route["isError"], true, "{name}");
        assert_eq!(route["pageName"], "error", "{name}");
        assert_eq!(route["userInfo"]["uniqueId"], name, "{name}");
    }
    // Anyone else's embed error payload names no case.
    let other = get(&normal, &format!("/embed/@{}", PRIVATE_USER.unique_id)).await;
    assert_eq!(other.status, 400);
    assert!(!other.body.contains("1022"));
}
