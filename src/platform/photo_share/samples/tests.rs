//! The samples are what they claim: valid JSON where JSON is promised, the right sizes, and the
//! extractor's verdicts the demo and the integration tests rely on.

use super::*;
use crate::platform::photo_share::extract::{
    block_signal, from_api, from_page, from_page_answer, is_business_schema_error, not_json,
};
use crate::platform::{PageVerdict, Platform};
use crate::username::Username;

fn name(raw: &str) -> Username {
    Username::parse(Platform::PhotoShare, raw).expect("valid sample name")
}

#[test]
fn sample_json_documents_are_valid_json() {
    for doc in [
        web_profile_info(&PUBLIC_USER, 0),
        web_profile_info(&PRIVATE_USER, 50_000),
        user_null_json(),
        require_login_json(),
        checkpoint_json(),
        business_schema_json(),
    ] {
        serde_json::from_str::<serde_json::Value>(&doc).expect("valid JSON");
    }
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
fn every_profile_shape_gives_the_expected_body() {
    for user in [PUBLIC_USER, PRIVATE_USER, BUSINESS_USER] {
        let asked = name(user.username);
        let want = PageVerdict::Profile(expected_body(&user));
        let api = web_profile_info(&user, 200_000);
        assert_eq!(from_api(api.as_bytes(), &asked), want);
        for page in [
            xig_profile_page(&user, 200_000),
            shared_data_profile_page(&user, 200_000),
            xig_edge_counts_page(&user, 200_000),
            web_profile_info_preload_page(&user, 200_000),
        ] {
            assert_eq!(
                from_page(page.as_bytes(), &asked),
                want,
                "{}",
                user.username
            );
        }
    }
}

#[test]
fn the_public_user_exercises_decoding() {
    let body = expected_body(&PUBLIC_USER);
    assert!(body.biography.contains("&amp;") && body.biography.contains('"'));
    assert!(!body.biography.is_ascii());
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
    assert!(body.is_private);
    assert_eq!(body.edge_owner_to_timeline_media.count, None);
    assert_eq!(body.profile_pic_url_hd, body.profile_pic_url);
}

#[test]
fn other_documents_give_their_verdicts() {
    let missing = name(NOT_FOUND_NAME);
    assert_eq!(
        from_api(user_null_json().as_bytes(), &missing),
        PageVerdict::NotFound
    );
    assert_eq!(
        from_page(not_found_page().as_bytes(), &missing),
        PageVerdict::NotFound
    );
    assert_eq!(
        from_page(
            shell_page(PUBLIC_USER.username).as_bytes(),
            &name(PUBLIC_USER.username)
        ),
        PageVerdict::Unreadable("no profile in page".to_owned())
    );
    assert_eq!(
        from_page(login_page().as_bytes(), &missing),
        PageVerdict::Blocked("login_wall")
    );
    assert_eq!(
        block_signal(401, require_login_json().as_bytes()),
        Some("require_login")
    );
    assert_eq!(
        block_signal(400, checkpoint_json().as_bytes()),
        Some("checkpoint_required")
    );
    assert_eq!(
        from_api(checkpoint_json().as_bytes(), &missing),
        PageVerdict::Blocked("checkpoint_required")
    );
}

#[test]
fn suggested_names_are_not_the_profile() {
    let page = xig_profile_page(&PUBLIC_USER, 0);
    let verdict = from_page(page.as_bytes(), &name("ridge_notes"));
    assert!(matches!(verdict, PageVerdict::Unreadable(_)), "{verdict:?}");
}

#[test]
fn the_business_account_and_the_html_answer_give_their_signals() {
    let business = business_schema_json();
    assert!(is_business_schema_error(400, business.as_bytes()));
    assert_eq!(block_signal(400, business.as_bytes()), None);
    assert_eq!(
        not_json(Some(b"text/html; charset=utf-8"), login_page().as_bytes()),
        Some("html_for_json")
    );
    let shell = shell_page(HTML_FOR_JSON_NAME);
    assert_eq!(
        from_page_answer(shell.as_bytes(), &name(HTML_FOR_JSON_NAME)),
        PageVerdict::Blocked("app_shell")
    );
    // The preloaded user's own `id` is another id: `pk` is the one returned.
    let page = web_profile_info_preload_page(&BUSINESS_USER, 0);
    assert!(page.contains(&format!("\"id\":\"{}\"", BUSINESS_USER.other_id)));
    assert!(page.contains("\"edge_owner_to_timeline_media\":null"));
}
