//! Reading a short-video profile page: which embedded state it carries, and what it says.
//!
//! The platform has embedded its state three ways over the years; this is a strategy chain
//! over them, newest first: `__UNIVERSAL_DATA_FOR_REHYDRATION__`, then `SIGI_STATE` (as a JSON
//! script, then as a `window['SIGI_STATE']=…` assignment), then `__NEXT_DATA__`. The first
//! state present decides. The page is walked once with [`html::scripts`], so inline scripts
//! that merely mention these ids are never mistaken for state, and nothing outside the chosen
//! state (suggested users, page text) is ever consulted.

use super::ShortVideoProfile;
use super::{next_data, sigi, universal};
use crate::html;
use crate::platform::PageVerdict;
use crate::username::Subject;

/// What the page says about `requested`: their profile, not found, a block, or unreadable.
///
/// Existence comes from the state's status code only (0 and 10222 (private) are profiles;
/// 10221 and 10202 not found; 10000, 10113 and 10114 a captcha block); the profile's
/// `uniqueId` must be the requested name (ASCII case-insensitively). Counts the page does not
/// give are `None`; other missing user fields are `""`, `false` or `0`, because the body's
/// shape has every key and a blank bio is not a wrong number. Strings are JSON-decoded, never
/// entity-decoded. Pure and linear in the page size; never panics, whatever the bytes.
pub fn extract<'a>(
    page: &[u8],
    requested: impl Into<Subject<'a>>,
) -> PageVerdict<ShortVideoProfile> {
    let requested = requested.into();
    let mut sigi_json = None;
    let mut sigi_assignment = None;
    let mut next = None;
    for script in html::scripts(page) {
        match script.attr("id") {
            Some(universal::SCRIPT_ID) => return universal::read(script.text, requested),
            Some(sigi::SCRIPT_ID) => {
                sigi_json.get_or_insert(script.text);
            }
            Some(next_data::SCRIPT_ID) => {
                next.get_or_insert(script.text);
            }
            _ if sigi_assignment.is_none() => sigi_assignment = sigi::assigned_state(script.text),
            _ => {}
        }
    }
    if let Some(text) = sigi_json {
        sigi::read(text, sigi::Embedding::Json, requested)
    } else if let Some(text) = sigi_assignment {
        sigi::read(text, sigi::Embedding::Assignment, requested)
    } else if let Some(text) = next {
        next_data::read(text, requested)
    } else {
        PageVerdict::Unreadable("no state script".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;
    use crate::platform::short_video::samples::{
        self as samples, Era, NOT_FOUND_USER, PRIVATE_USER, PUBLIC_USER, SMALL_USER,
    };
    use crate::username::Username;

    fn name(s: &str) -> Username {
        Username::parse(Platform::ShortVideo, s).unwrap()
    }

    fn unreadable(v: &PageVerdict<ShortVideoProfile>) -> bool {
        matches!(v, PageVerdict::Unreadable(_))
    }

    #[test]
    fn every_era_gives_the_expected_body_for_every_sample() {
        for era in Era::ALL {
            for user in samples::sample_users() {
                let page = samples::profile_page(era, &user, 40_000);
                let got = extract(page.as_bytes(), &name(user.unique_id));
                assert_eq!(
                    got,
                    PageVerdict::Profile(samples::expected_body(&user)),
                    "{era:?} {}",
                    user.unique_id
                );
            }
        }
    }

    #[test]
    fn case_of_the_request_does_not_matter() {
        let page = samples::profile_page(Era::Sigi, &SMALL_USER, 20_000);
        let got = extract(page.as_bytes(), &name("TINY.Baker_7"));
        assert_eq!(
            got,
            PageVerdict::Profile(samples::expected_body(&SMALL_USER))
        );
    }

    #[test]
    fn exact_counts_escapes_and_entities() {
        let page = samples::profile_page(Era::Universal, &PUBLIC_USER, 20_000);
        let PageVerdict::Profile(p) = extract(page.as_bytes(), &name(PUBLIC_USER.unique_id)) else {
            panic!("no profile");
        };
        // The page's stats say 12300000 and a negative heartCount; statsV2 is exact.
        assert!(page.contains(r#""followerCount":12300000"#));
        assert!(page.contains(r#""heartCount":-"#));
        assert_eq!(p.user_info.stats.follower_count, Some(12_345_678));
        assert_eq!(p.user_info.stats.heart_count, Some(2_987_654_321));
        let sig = &p.user_info.user.signature;
        assert!(sig.contains("&amp;") && sig.contains("https://sunny-kitchen.example/links"));
        assert!(!p.user_info.user.avatar_larger.contains("\\u002F"));
    }

    #[test]
    fn private_pages_leave_absent_counts_null() {
        for era in Era::ALL {
            let page = samples::profile_page(era, &PRIVATE_USER, 20_000);
            let PageVerdict::Profile(p) = extract(page.as_bytes(), &name(PRIVATE_USER.unique_id))
            else {
                panic!("no profile in {era:?}");
            };
            assert!(p.user_info.user.private_account);
            assert_eq!(p.user_info.stats.video_count, None);
            assert_eq!(p.user_info.stats.follower_count, Some(87));
        }
    }

    #[test]
    fn not_found_pages_with_suggested_users() {
        for era in Era::ALL {
            let page = samples::not_found_page(era, NOT_FOUND_USER);
            assert!(page.contains("river.sketches"));
            let got = extract(page.as_bytes(), &name(NOT_FOUND_USER));
            assert_eq!(got, PageVerdict::NotFound, "{era:?}");
            // Asking for a suggested user on that page never yields their profile.
            assert!(!matches!(
                extract(page.as_bytes(), &name("river.sketches")),
                PageVerdict::Profile(_)
            ));
        }
    }

    #[test]
    fn status_shell_and_missing_state() {
        let n = name("status.sample");
        for code in [10000, 10113, 10114] {
            let page = samples::status_page(code);
            assert_eq!(
                extract(page.as_bytes(), &n),
                PageVerdict::Blocked("captcha")
            );
        }
        assert_eq!(
            extract(samples::status_page(10221).as_bytes(), &n),
            PageVerdict::NotFound
        );
        for gone in [10202, 10204] {
            assert_eq!(
                extract(samples::status_page(gone).as_bytes(), &n),
                PageVerdict::NotFound,
                "{gone}"
            );
        }
        assert_eq!(
            extract(samples::status_page(10231).as_bytes(), &n),
            PageVerdict::RegionLocked
        );
        let odd = extract(samples::status_page(10_555).as_bytes(), &n);
        assert!(matches!(&odd, PageVerdict::Unreadable(why) if why.contains("10555")));
        let shell = samples::shell_page();
        assert_eq!(
            extract(shell.as_bytes(), &n),
            PageVerdict::Blocked("shell_page")
        );
        let waf = samples::waf_challenge_page(5);
        assert_eq!(
            extract(waf.as_bytes(), &n),
            PageVerdict::Unreadable("no state script".into())
        );
        assert!(unreadable(&extract(b"", &n)));
    }

    #[test]
    fn another_users_page_is_unreadable() {
        let page = samples::profile_page(Era::Universal, &SMALL_USER, 20_000);
        assert!(unreadable(&extract(
            page.as_bytes(),
            &name(PUBLIC_USER.unique_id)
        )));
    }

    #[test]
    fn ids_only_count_as_attributes_of_a_script() {
        let state = r#"{"__DEFAULT_SCOPE__":{"webapp.user-detail":{"statusCode":10221}}}"#;
        for page in [
            format!(
                r#"<script id="__UNIVERSAL_DATA_FOR_REHYDRATION__" type="application/json">{state}</script>"#
            ),
            format!(
                r#"<script type="application/json" id="__UNIVERSAL_DATA_FOR_REHYDRATION__">{state}</script>"#
            ),
            format!(
                r#"<SCRIPT TYPE='application/json' ID='__UNIVERSAL_DATA_FOR_REHYDRATION__'>{state}</SCRIPT>"#
            ),
            format!("<script\n id=__UNIVERSAL_DATA_FOR_REHYDRATION__\n>{state}</script >"),
        ] {
            assert_eq!(
                extract(page.as_bytes(), &name("abc")),
                PageVerdict::NotFound,
                "{page}"
            );
        }
        let decoys = format!(
            r#"<div data-id="__UNIVERSAL_DATA_FOR_REHYDRATION__">{state}</div>
            <script>var s = document.getElementById("__UNIVERSAL_DATA_FOR_REHYDRATION__");
            var t = '<script id="SIGI_STATE">{{"UserPage":{{"statusCode":10221}}}}</' + 'script>';</script>
            <!-- <script id="__NEXT_DATA__">{{}}</script> -->
            <p>__UNIVERSAL_DATA_FOR_REHYDRATION__ SIGI_STATE __NEXT_DATA__</p>"#
        );
        assert_eq!(
            extract(decoys.as_bytes(), &name("abc")),
            PageVerdict::Unreadable("no state script".into())
        );
    }

    #[test]
    fn a_state_spelled_inside_an_attribute_value_is_not_the_state() {
        let real = samples::profile_page(Era::Universal, &SMALL_USER, 10_000);
        let fake = r#"<meta name="description" content='<script id="__UNIVERSAL_DATA_FOR_REHYDRATION__">{"__DEFAULT_SCOPE__":{"webapp.user-detail":{"statusCode":0,"userInfo":{"user":{"uniqueId":"tiny.baker_7"},"stats":{"followerCount":1}}}}}</script>'>"#;
        let page = real.replacen("<head>", &format!("<head>{fake}"), 1);
        let got = extract(page.as_bytes(), &name(SMALL_USER.unique_id));
        assert_eq!(
            got,
            PageVerdict::Profile(samples::expected_body(&SMALL_USER))
        );
    }

    #[test]
    fn the_newest_state_wins_and_the_sigi_assignment_is_read() {
        let user = r#"{"id":"5","uniqueId":"abc","nickname":"A"}"#;
        let sigi = format!(
            r#"{{"UserModule":{{"users":{{"abc":{user}}},"stats":{{"abc":{{"followerCount":3}}}}}},"UserPage":{{"uniqueId":"abc","statusCode":0}}}}"#
        );
        let page = format!(
            r#"<script id="sigi-persisted-data">window['SIGI_STATE']={sigi};window['SIGI_RETRY']={{"x":1}};</script>
            <script id="__NEXT_DATA__">{{"props":{{"pageProps":{{"statusCode":10202}}}}}}</script>"#
        );
        let PageVerdict::Profile(p) = extract(page.as_bytes(), &name("abc")) else {
            panic!("no profile");
        };
        assert_eq!(p.user_info.stats.follower_count, Some(3));
        let newer = format!(
            r#"{page}<script id="__UNIVERSAL_DATA_FOR_REHYDRATION__">{{"__DEFAULT_SCOPE__":{{"webapp.user-detail":{{"statusCode":10221}}}}}}</script>"#
        );
        assert_eq!(
            extract(newer.as_bytes(), &name("abc")),
            PageVerdict::NotFound
        );
    }

    #[test]
    fn truncated_pages_never_give_a_wrong_profile() {
        let page = samples::profile_page(Era::Sigi, &SMALL_USER, 6_000);
        let want = PageVerdict::Profile(samples::expected_body(&SMALL_USER));
        let n = name(SMALL_USER.unique_id);
        for cut in 0..page.len() {
            let got = extract(&page.as_bytes()[..cut], &n);
            assert!(got == want || unreadable(&got), "cut {cut}: {got:?}");
        }
    }

    #[test]
    fn invalid_utf8_in_the_profile_is_unreadable() {
        let page = samples::profile_page(Era::Universal, &SMALL_USER, 10_000);
        let mut bytes = page.into_bytes();
        let at = bytes.windows(9).position(|w| w == b"Sourdough").unwrap();
        bytes[at] = 0xC3;
        bytes[at + 1] = 0x28;
        assert!(unreadable(&extract(&bytes, &name(SMALL_USER.unique_id))));
    }

    #[test]
    fn invalid_utf8_outside_the_profile_does_not_lose_it() {
        // Video descriptions are state the reader never deserialises.
        let page = samples::profile_page(Era::Universal, &SMALL_USER, 10_000);
        let mut bytes = page.into_bytes();
        let at = bytes.windows(11).position(|w| w == b"Invented cl").unwrap();
        bytes[at] = 0xC3;
        bytes[at + 1] = 0x28;
        assert!(matches!(
            extract(&bytes, &name(SMALL_USER.unique_id)),
            PageVerdict::Profile(_)
        ));
    }
}
