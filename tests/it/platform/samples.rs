//! The service's readers on the stand-ins' documents, one document at a time: every shape of
//! every sample reads as the body the stand-in expects, the other documents give the verdicts
//! the stand-ins rely on, and the service's WAF solver answers the stand-in's challenge. (The
//! documents themselves are checked in the `stand-in` crate.)

use profile_lookup::platform::Reading;
use profile_lookup::platform::photo_share::extract::{
    block_signal, from_api, from_page, from_page_answer, is_business_schema_error, not_json,
};
use profile_lookup::platform::short_video::challenge;
use profile_lookup::platform::short_video::extract::extract;
use stand_in::{photo_share as ps, short_video as sv};

use crate::support::{expected, photo_share_name, short_video_name};

#[test]
fn the_services_solver_answers_the_stand_ins_waf_challenge() {
    let page = sv::waf_challenge_page(4_321);
    let ch = challenge::detect(page.as_bytes()).expect("the page is a challenge");
    let cookies = challenge::solve(&ch, challenge::MAX_ANSWER).expect("solved");
    let header = cookies
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join("; ");
    assert!(sv::waf_cookie_is_valid(&header, 4_321));
    assert!(!sv::waf_cookie_is_valid(&header, 4_322));
}

#[test]
fn every_embed_page_reads_as_the_embed_body() {
    for user in sv::sample_users().into_iter().chain(sv::embed_users()) {
        let page = sv::embed_page(&user);
        assert_eq!(
            extract(page.as_bytes(), &short_video_name(user.unique_id)),
            Reading::Found(expected::short_video_embed(&user)),
            "{}",
            user.unique_id
        );
    }
}

#[test]
fn every_photo_share_shape_gives_the_expected_body() {
    for user in [ps::PUBLIC_USER, ps::PRIVATE_USER, ps::BUSINESS_USER] {
        let asked = photo_share_name(user.username);
        let want = Reading::Found(expected::photo_share(&user));
        let api = ps::web_profile_info(&user, 200_000);
        assert_eq!(from_api(api.as_bytes(), &asked), want);
        for page in [
            ps::xig_profile_page(&user, 200_000),
            ps::shared_data_profile_page(&user, 200_000),
            ps::xig_edge_counts_page(&user, 200_000),
            ps::web_profile_info_preload_page(&user, 200_000),
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
fn the_other_photo_share_documents_give_their_verdicts() {
    let missing = photo_share_name(ps::NOT_FOUND_NAME);
    assert_eq!(
        from_api(ps::user_null_json().as_bytes(), &missing),
        Reading::NotFound
    );
    assert_eq!(
        from_page(ps::not_found_page().as_bytes(), &missing),
        Reading::NotFound
    );
    assert_eq!(
        from_page(
            ps::shell_page(ps::PUBLIC_USER.username).as_bytes(),
            &photo_share_name(ps::PUBLIC_USER.username)
        ),
        Reading::Unreadable("no profile in page".to_owned())
    );
    assert_eq!(
        from_page(ps::login_page().as_bytes(), &missing),
        Reading::blocked("login_wall")
    );
    assert_eq!(
        block_signal(401, ps::require_login_json().as_bytes()),
        Some("require_login")
    );
    assert_eq!(
        block_signal(400, ps::checkpoint_json().as_bytes()),
        Some("checkpoint_required")
    );
    assert_eq!(
        from_api(ps::checkpoint_json().as_bytes(), &missing),
        Reading::blocked("checkpoint_required")
    );
}

#[test]
fn suggested_photo_share_names_are_not_the_profile() {
    let page = ps::xig_profile_page(&ps::PUBLIC_USER, 0);
    let verdict = from_page(page.as_bytes(), &photo_share_name("ridge_notes"));
    assert!(matches!(verdict, Reading::Unreadable(_)), "{verdict:?}");
}

#[test]
fn the_business_account_and_the_html_answer_give_their_signals() {
    let business = ps::business_schema_json();
    assert!(is_business_schema_error(400, business.as_bytes()));
    assert_eq!(block_signal(400, business.as_bytes()), None);
    assert_eq!(
        not_json(
            Some(b"text/html; charset=utf-8"),
            ps::login_page().as_bytes()
        ),
        Some("html_for_json")
    );
    let shell = ps::shell_page(ps::HTML_FOR_JSON_NAME);
    assert_eq!(
        from_page_answer(shell.as_bytes(), &photo_share_name(ps::HTML_FOR_JSON_NAME)),
        Reading::blocked("app_shell")
    );
}
