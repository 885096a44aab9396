//! Hostile input for the short-video extractor and the WAF challenge reader: whatever the
//! bytes, the answer is a verdict (never a panic or a stack overflow), and the work (bytes
//! examined, counted by `profile_lookup::cost`) stays linear.

use crate::support::expected;
use crate::support::short_video_name as name;
use profile_lookup::cost;
use profile_lookup::platform::Reading;
use profile_lookup::platform::short_video::challenge;
use profile_lookup::platform::short_video::extract::extract;
use proptest::prelude::*;
use stand_in::short_video::{self as samples, Era, SMALL_USER};

const IDS: [&str; 4] = [
    "__UNIVERSAL_DATA_FOR_REHYDRATION__",
    "SIGI_STATE",
    "__NEXT_DATA__",
    // The embed page's state.
    "__FRONTITY_CONNECT_STATE__",
];

fn in_script(id: &str, state: &[u8]) -> Vec<u8> {
    let mut page =
        format!("<html><body><script type=\"application/json\" id=\"{id}\">").into_bytes();
    page.extend_from_slice(state);
    page.extend_from_slice(b"</script></body></html>");
    page
}

/// A small current-era state around `user_detail`, with `noise` in a subtree we skip.
fn universal_state(noise: &str, user_detail: &str) -> Vec<u8> {
    format!(
        r#"{{"__DEFAULT_SCOPE__":{{"webapp.app-context":{noise},"webapp.user-detail":{user_detail}}}}}"#
    )
    .into_bytes()
}

const OK_DETAIL: &str = r#"{"statusCode":0,"userInfo":{"user":{"id":"1","uniqueId":"deep.test"},"stats":{"followerCount":5}}}"#;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_are_a_verdict(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let _ = extract(&bytes, &name("any_user"));
        if let Some(ch) = challenge::detect(&bytes) {
            let _ = challenge::solve(&ch, 1_000);
        }
    }

    #[test]
    fn arbitrary_state_text_is_a_verdict(
        era in 0usize..4,
        state in proptest::collection::vec(any::<u8>(), 0..2048),
    ) {
        let _ = extract(&in_script(IDS[era], &state), &name("any_user"));
    }

    #[test]
    fn json_like_state_text_is_a_verdict(era in 0usize..4, state in r#"[\[\]{}":,0-9a-zA-Z_\\ .-]{0,600}"#) {
        let _ = extract(&in_script(IDS[era], state.as_bytes()), &name("any_user"));
    }

    #[test]
    fn a_mutated_sample_page_never_gives_another_profile(
        era in 0usize..3,
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let user = SMALL_USER;
        let mut page = samples::profile_page(Era::ALL[era], &user, 4_000).into_bytes();
        let i = at.index(page.len());
        page[i] = byte;
        if let Reading::Found(p) = extract(&page, &name(user.unique_id)) {
            prop_assert!(p.user_info.user.unique_id.eq_ignore_ascii_case(user.unique_id));
        }
    }

    #[test]
    fn challenge_class_values_never_panic(class in r#"[A-Za-z0-9+/=_ -]{0,300}"#, bound in 0u32..2_000) {
        let page = format!("<p id=\"cs\" class=\"{class}\"></p><p id=wci class=n>");
        if let Some(ch) = challenge::detect(page.as_bytes()) {
            let _ = challenge::solve(&ch, bound);
        }
    }
}

#[test]
fn truncated_sample_pages_at_every_cut() {
    let want = Reading::Found(expected::short_video(&SMALL_USER));
    let requested = name(SMALL_USER.unique_id);
    for era in Era::ALL {
        let page = samples::profile_page(era, &SMALL_USER, 4_000);
        for cut in 0..page.len() {
            let got = extract(&page.as_bytes()[..cut], &requested);
            // Nothing at all is the empty body the platform sends as a block.
            let empty = cut == 0 && got == Reading::blocked("empty_body");
            assert!(
                got == want || matches!(got, Reading::Unreadable(_)) || empty,
                "{era:?} cut at {cut}: {got:?}"
            );
        }
    }
}

#[test]
fn deep_nesting_is_refused_or_skipped_without_overflow() {
    let deep = "[".repeat(100_000);
    let requested = name("deep.test");
    for id in IDS {
        let got = extract(&in_script(id, deep.as_bytes()), &requested);
        assert!(matches!(got, Reading::Unreadable(_)), "{id}: {got:?}");
    }
    // Unbalanced deep nesting where we read and where we skip.
    for state in [
        universal_state(&deep, OK_DETAIL),
        universal_state(
            "{}",
            &format!(r#"{{"statusCode":0,"userInfo":{{"user":{deep}"#),
        ),
        universal_state(
            "{}",
            &format!(r#"{{"statusCode":0,"userInfo":{{"stats":{{"heart":{deep}"#),
        ),
    ] {
        let got = extract(&in_script(IDS[0], &state), &requested);
        assert!(matches!(got, Reading::Unreadable(_)), "{got:?}");
    }
    // Balanced deep nesting in a subtree we skip: still read, in bounded stack.
    let balanced = format!("{deep}{}", "]".repeat(100_000));
    let got = extract(
        &in_script(IDS[0], &universal_state(&balanced, OK_DETAIL)),
        &requested,
    );
    assert!(matches!(got, Reading::Found(_)), "{got:?}");
    let in_count = universal_state(
        "{}",
        &format!(
            r#"{{"statusCode":0,"userInfo":{{"user":{{"uniqueId":"deep.test"}},"stats":{{"followerCount":1,"heart":{balanced}}}}}}}"#
        ),
    );
    let Reading::Found(p) = extract(&in_script(IDS[0], &in_count), &requested) else {
        panic!("a nested count is just an unusable count");
    };
    assert_eq!(p.user_info.stats.heart, None);
}

#[test]
fn a_giant_bio_is_read_in_linear_work() {
    let bio = "&amp; long bio \\u002F ".repeat(5 * 1024 * 1024 / 22);
    let detail = format!(
        r#"{{"statusCode":0,"userInfo":{{"user":{{"uniqueId":"deep.test","signature":"{bio}"}},"stats":{{"followerCount":1}}}}}}"#
    );
    let page = in_script(IDS[0], &universal_state("{}", &detail));
    let (verdict, examined) = cost::measure(|| extract(&page, &name("deep.test")));
    let Reading::Found(p) = verdict else {
        panic!("no profile");
    };
    assert!(p.user_info.user.signature.len() > 4_000_000);
    assert!(p.user_info.user.signature.starts_with("&amp; long bio / "));
    // The script is found, the member skimmed, then parsed: a few passes over the page.
    assert!(
        examined < 4 * page.len() as u64,
        "{examined} for {}",
        page.len()
    );
    // The same bio as another user's uniqueId is refused, and the log text stays short.
    let id = format!(r#"{{"statusCode":0,"userInfo":{{"user":{{"uniqueId":"{bio}"}}}}}}"#);
    let page = in_script(IDS[0], &universal_state("{}", &id));
    let Reading::Unreadable(why) = extract(&page, &name("deep.test")) else {
        panic!("another user");
    };
    assert!(why.len() < 300, "{}", why.len());
}

/// The bytes `extract` and the challenge check examine on `page`, as a fetch runs them.
fn work(page: &[u8]) -> u64 {
    let requested = name("any_user");
    let ((), examined) = cost::measure(|| {
        let _ = extract(page, &requested);
        let _ = challenge::detect(page);
    });
    examined
}

#[test]
fn pathological_markup_costs_linear_work() {
    let unit_patterns: [&[u8]; 19] = [
        b"<",
        b"<a",
        b"<a x='",
        b"<a x=\"<script>\">",
        b"<script",
        b"<script>",
        b"<script id='",
        b"</",
        b"<!--",
        b"<script id=\"SIGI_STATE\">window['SIGI_STATE']=",
        b"<script id=\"__UNIVERSAL_DATA_FOR_REHYDRATION__\">{\"__DEFAULT_SCOPE__\":{\"a\":[",
        b"<script id=\"__FRONTITY_CONNECT_STATE__\">{\"source\":{\"data\":{\"/embed/@a\":{\"userInfo\":[",
        b"<p id=cs class=",
        b"<p id=cs class=x><p id=wci class=",
        // Stateless pages: configuration candidates, titles, external scripts.
        b"<script>var o={\"d\":{\"type\":\"verify\",\"code\":\"10000\"},",
        b"<title>Site Under Maintenance",
        b"<script src=x></script><script> const  option =",
        // The anchored search: every inline JSON script holds an object of the requested user.
        b"<script type=\"application/json\">{\"a\":{\"uniqueId\":\"any_user\",\"id\":\"1\"},\"stats\":{\"followerCount\":1}}</script>",
        b"<script id=\"__NEW__\">[{\"user\":{\"uniqueId\":\"any_user\",\"id\":\"1\"},\"stats\":{\"followerCount\":",
    ];
    for unit in unit_patterns {
        let page = |n: usize| unit.iter().copied().cycle().take(n).collect::<Vec<u8>>();
        // Both sizes stay under the challenge page limit, so the challenge check runs too.
        let n = 30 * 1024;
        let unit = String::from_utf8_lossy(unit);
        let (once, _) =
            cost::linear(n, |n| work(&page(n))).unwrap_or_else(|e| panic!("{unit:?}: {e}"));
        assert!(
            once >= n as u64 / 2,
            "{unit:?}: {once} bytes examined of {n}"
        );
    }
}
