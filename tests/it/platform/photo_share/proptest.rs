//! No input makes the photo-share extractors panic, overflow the stack, or do more than linear
//! work (bytes examined, counted by `profile_lookup::cost`): arbitrary bytes, every truncation
//! of every sample, hostile nesting and sizes.

use proptest::prelude::*;

use crate::support::expected;
use crate::support::photo_share_name as name;
use profile_lookup::cost;
use profile_lookup::platform::Reading;
use profile_lookup::platform::photo_share::extract::{
    block_signal, from_api, from_page, from_page_answer, is_business_schema_error, not_json,
    redirect_is_block,
};
use profile_lookup::username::Username;
use stand_in::photo_share as samples;

fn run_all(body: &[u8], asked: &Username) {
    let _ = from_api(body, asked);
    let _ = from_page_answer(body, asked);
    let _ = not_json(Some(b"text/html"), body);
    for status in [200, 400, 401, 429] {
        let _ = block_signal(status, body);
        let _ = is_business_schema_error(status, body);
    }
}

/// Fragments that steer random input towards the parsers' interesting paths.
fn fragment() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"<script data-sjs>".to_vec()),
        Just(b"<script type=\"application/json\" data-sjs>".to_vec()),
        Just(b"</script>".to_vec()),
        Just(b"<!--".to_vec()),
        Just(b"\"xig_user_by_username\"".to_vec()),
        Just(b"\"xdt_api__v1__users__web_profile_info\"".to_vec()),
        Just(b":{\"user\":".to_vec()),
        Just(b"\"edge_followed_by\":{\"count\":".to_vec()),
        Just(b":{\"username\":\"bo\",\"pk\":".to_vec()),
        Just(b"window._sharedData = ".to_vec()),
        Just(b"{\"entry_data\":{\"ProfilePage\":[{\"graphql\":{\"user\":".to_vec()),
        Just(b"{\"data\":{\"user\":".to_vec()),
        Just(b"\"require_login\":true".to_vec()),
        Just(b"<title>Page not found".to_vec()),
        Just(b"\\u002F\\ud83d".to_vec()),
        prop::collection::vec(any::<u8>(), 0..16),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(body in prop::collection::vec(any::<u8>(), 0..2048)) {
        run_all(&body, &name("bo"));
    }

    #[test]
    fn stitched_fragments_never_panic(parts in prop::collection::vec(fragment(), 0..40)) {
        run_all(&parts.concat(), &name("bo"));
    }

    #[test]
    fn arbitrary_redirects_never_panic(location in ".{0,64}") {
        let _ = redirect_is_block(&location);
    }

    #[test]
    fn a_sample_with_a_random_byte_changed_never_panics(at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut page = samples::xig_profile_page(&samples::PUBLIC_USER, 0).into_bytes();
        let i = at.index(page.len());
        page[i] = byte;
        run_all(&page, &name(samples::PUBLIC_USER.username));
    }
}

#[test]
fn every_truncation_of_every_sample_is_safe() {
    let user = samples::PUBLIC_USER;
    let asked = name(user.username);
    let docs = [
        samples::web_profile_info(&user, 0),
        samples::xig_profile_page(&user, 0),
        samples::shared_data_profile_page(&user, 0),
        samples::xig_edge_counts_page(&user, 0),
        samples::web_profile_info_preload_page(&user, 0),
        samples::not_found_page(),
        samples::shell_page(user.username),
        samples::login_page(),
        samples::require_login_json(),
        samples::checkpoint_json(),
        samples::user_null_json(),
    ];
    for doc in &docs {
        let bytes = doc.as_bytes();
        for cut in 0..bytes.len() {
            let part = &bytes[..cut];
            // A truncated document never yields a wrong profile.
            if let Reading::Found(p) = from_api(part, &asked) {
                assert_eq!(p, expected::photo_share(&user));
            }
            if let Reading::Found(p) = from_page(part, &asked) {
                assert_eq!(p, expected::photo_share(&user));
            }
            let _ = block_signal(401, part);
            let _ = block_signal(400, part);
        }
    }
}

#[test]
fn deep_nesting_is_refused_without_overflow() {
    let asked = name("bo");
    let deep = |open: &[u8], prefix: &[u8], suffix: &[u8]| {
        let mut body = prefix.to_vec();
        for _ in 0..100_000 {
            body.extend_from_slice(open);
        }
        body.extend_from_slice(suffix);
        body
    };
    for body in [
        deep(b"[", b"", b""),
        deep(b"{\"a\":", b"", b""),
        deep(b"[", br#"{"data":{"user":{"username":"bo","x":"#, b""),
        deep(
            b"[",
            br#"{"data":{"user":{"username":"bo","edge_follow":"#,
            b"",
        ),
        deep(
            b"{\"xig_user_by_username\":",
            b"<script data-sjs>",
            b"</script>",
        ),
        deep(
            b"[",
            b"<script data-sjs>{\"xig_user_by_username\":{\"username\":\"bo\",\"x\":",
            b"",
        ),
        deep(
            b"{\"xdt_api__v1__users__web_profile_info\":{\"user\":",
            b"<script data-sjs>",
            b"</script>",
        ),
        deep(b"[", b"<script>window._sharedData = {\"entry_data\":", b""),
    ] {
        run_all(&body, &asked);
        assert!(matches!(from_api(&body, &asked), Reading::Unreadable(_)));
    }
}

/// A 5 MB bio in every shape: read whole (it is within the body cap) and never a crash.
#[test]
fn a_five_megabyte_bio_is_handled() {
    let bio = "\u{1f9ed}&amp; ".repeat(5 * 1024 * 1024 / 10);
    let user = samples::SampleUser {
        biography: Box::leak(bio.into_boxed_str()),
        ..samples::PUBLIC_USER
    };
    let asked = name(user.username);
    let want = Reading::Found(expected::photo_share(&user));
    let api = samples::web_profile_info(&user, 0);
    assert!(
        api.len() > 10 * 1024 * 1024,
        "bio appears twice in the API shape"
    );
    assert_eq!(from_api(api.as_bytes(), &asked), want);
    assert_eq!(
        from_page(samples::xig_profile_page(&user, 0).as_bytes(), &asked),
        want
    );
    assert_eq!(
        from_page(
            samples::shared_data_profile_page(&user, 0).as_bytes(),
            &asked
        ),
        want
    );
}

/// Hostile pages of about `n` bytes built to make a careless scanner quadratic.
fn hostile(n: usize) -> Vec<Vec<u8>> {
    let repeat = |unit: &[u8]| unit.repeat(n / unit.len());
    // `opening` a hundred times, then a string of `n` bytes that never ends.
    let nested = |opening: &[u8]| {
        let mut page = b"<script data-sjs>".to_vec();
        page.extend(opening.repeat(100));
        page.extend(b"\"");
        page.extend(std::iter::repeat_n(b'a', n));
        page
    };
    vec![
        nested(b"{\"xig_user_by_username\":"),
        nested(b"{\"xdt_api__v1__users__web_profile_info\":{\"user\":"),
        repeat(b"<script data-sjs>{\"xig_user_by_username\":null,\"xdt_api__v1__users__web_profile_info\":{\"user\":{\"username\":\"zz\"}}}</script>"),
        repeat(b"\"xdt_api__v1__users__web_profile_info\":{\"user\":null}\"xig_user_by_username\" "),
        repeat(b"<script data-sjs>{\"xig_user_by_username\":{\"username\":\"zz\"}}</script>"),
        repeat(b"<script data-sjs>\"xig_user_by_username\"      "),
        repeat(b"<script>window._sharedData = {\"entry_data\":{}};</script>"),
        repeat(b"<script "),
        repeat(b"<!--<"),
        repeat(b"<title "),
        repeat(b"\"require_login\" : "),
        repeat(b"</scrip"),
        repeat(b"<div class=\"dialog-404x\">Sorry, this page is"),
        // The anchored search: objects of the user in every JSON script, nested ones, and
        // one script of objects that never close.
        repeat(b"<script type=\"application/json\">{\"a\":{\"username\":\"bo\",\"pk\":\"1\"}}</script>"),
        repeat(b"<script type=\"application/json\">[{\"x\":{\"username\":\"bo\",\"follower_count\":1,\"edge_follow\":{\"count\":2}}}]</script>"),
        {
            let mut page = b"<script type=\"application/json\">".to_vec();
            page.extend(b"{\"u\":{\"username\":\"bo\",\"pk\":\"1\"},\"n\":".repeat(n / 40));
            page
        },
        {
            let mut json = b"{\"data\":{\"other\":[".to_vec();
            json.extend(b"{\"username\":\"bo\",\"pk\":\"1\",\"follower_count\":3},".repeat(n / 50));
            json.extend(b"{}]}}");
            json
        },
    ]
}

#[test]
fn work_grows_linearly_with_input() {
    let asked = name("bo");
    let n = 64 * 1024;
    for (case, page) in hostile(n).iter().enumerate() {
        let head = String::from_utf8_lossy(&page[..page.len().min(40)]).into_owned();
        let work = |n| cost::measure(|| run_all(&hostile(n)[case], &asked)).1;
        let (once, _) = cost::linear(n, work).unwrap_or_else(|e| panic!("{head}: {e}"));
        assert!(once >= n as u64 / 2, "{head}: {once} bytes examined of {n}");
    }
}
