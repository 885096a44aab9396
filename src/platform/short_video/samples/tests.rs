use super::pages::state_id;
use super::state::{as_int32, rounded};
use super::*;
use crate::platform::short_video::challenge;

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
fn state_scripts_are_valid_json() {
    for era in Era::ALL {
        for page in [
            profile_page(era, &PUBLIC_USER, 60_000),
            profile_page(era, &PRIVATE_USER, 60_000),
            not_found_page(era, NOT_FOUND_USER),
        ] {
            let text = crate::html::script_by_id(page.as_bytes(), state_id(era)).unwrap();
            serde_json::from_slice::<serde_json::Value>(text).unwrap();
        }
    }
    for page in [status_page(10000), shell_page()] {
        let text = crate::html::script_by_id(page.as_bytes(), state_id(Era::Universal));
        serde_json::from_slice::<serde_json::Value>(text.unwrap()).unwrap();
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
fn the_waf_page_round_trips_through_the_solver() {
    let page = waf_challenge_page(4_321);
    assert!((1_200..2_048).contains(&page.len()), "{}", page.len());
    let ch = challenge::detect(page.as_bytes()).unwrap();
    let cookies = challenge::solve(&ch, challenge::MAX_ANSWER).unwrap();
    let header = cookies
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join("; ");
    assert!(waf_cookie_is_valid(&header, 4_321));
    assert!(!waf_cookie_is_valid(&header, 4_322));
    assert!(!waf_cookie_is_valid("_wafchallengeid=e30", 4_321));
    assert!(!waf_cookie_is_valid("", 4_321));
}

#[test]
fn the_embed_page_is_valid_json_and_reads_as_the_embed_body() {
    use crate::platform::PageVerdict;
    use crate::platform::short_video::extract::extract;
    use crate::username::Username;
    for user in sample_users().into_iter().chain(embed_users()) {
        let page = embed_page(&user);
        let text = crate::html::script_by_id(page.as_bytes(), "__FRONTITY_CONNECT_STATE__");
        serde_json::from_slice::<serde_json::Value>(text.unwrap()).unwrap();
        let name = Username::parse(crate::platform::Platform::ShortVideo, user.unique_id).unwrap();
        assert_eq!(
            extract(page.as_bytes(), &name),
            PageVerdict::Profile(expected_embed_body(&user)),
            "{}",
            user.unique_id
        );
    }
    // A like count past i32::MAX is written negative, as the platform does.
    assert!(embed_page(&EMBED_ONLY_USER).contains(r#""heartCount":-1194967173"#));
}

#[test]
fn two_state_pages_hold_both_scripts() {
    for first in [true, false] {
        let page = two_state_page(Era::Sigi, Some(&SMALL_USER), SMALL_USER.unique_id, first);
        for id in ["SIGI_STATE", "__UNIVERSAL_DATA_FOR_REHYDRATION__"] {
            let text = crate::html::script_by_id(page.as_bytes(), id).unwrap();
            serde_json::from_slice::<serde_json::Value>(text).unwrap();
        }
    }
}
