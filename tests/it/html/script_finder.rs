//! The state script is found where a browser finds it (issue 8, defect 13).
//!
//! Each case puts a decoy state script where the HTML tokenizer does not see a script (inside
//! raw text or RCDATA, a comment, a bogus comment, an end tag's attribute, an escaped script)
//! and the real page after it: the real state must win. A decoy that won would answer 404
//! (it says "not found") instead of the profile.

use profile_lookup::platform::photo_share::extract::from_page;
use profile_lookup::platform::short_video::extract::extract;
use profile_lookup::platform::{Platform, Reading};
use profile_lookup::username::Username;
use proptest::prelude::*;
use stand_in::photo_share as ps;
use stand_in::short_video::{self as samples, Era, PUBLIC_USER};

use crate::support::expected;

const UNIVERSAL_ID: &str = "__UNIVERSAL_DATA_FOR_REHYDRATION__";

/// A current-era state saying "no such user".
const DECOY_STATE: &str =
    r#"{"__DEFAULT_SCOPE__":{"webapp.user-detail":{"statusCode":10221,"userInfo":{}}}}"#;

fn decoy_script() -> String {
    format!(r#"<script type="application/json" id="{UNIVERSAL_ID}">{DECOY_STATE}</script>"#)
}

fn requested() -> Username {
    Username::parse(Platform::ShortVideo, PUBLIC_USER.unique_id).expect("a valid name")
}

/// `trap` (holding a decoy) in front of a real current-era page.
fn page_after(trap: &str, era: Era) -> Vec<u8> {
    let mut page = trap.as_bytes().to_vec();
    page.extend_from_slice(samples::profile_page(era, &PUBLIC_USER, 16 * 1024).as_bytes());
    page
}

#[track_caller]
fn assert_real_state_wins(trap: &str) {
    let got = extract(&page_after(trap, Era::Universal), &requested());
    assert_eq!(
        got,
        Reading::Found(expected::short_video(&PUBLIC_USER)),
        "trap: {trap}"
    );
}

#[test]
fn the_decoy_alone_is_read_as_not_found() {
    // The decoy is a valid state: if the finder took it, the answer would be 404.
    let page = format!("<html>{}</html>", decoy_script());
    assert_eq!(extract(page.as_bytes(), &requested()), Reading::NotFound);
}

#[test]
fn a_script_inside_rcdata_or_raw_text_elements_is_text() {
    for element in [
        "title", "textarea", "style", "xmp", "iframe", "noembed", "noframes", "noscript",
    ] {
        assert_real_state_wins(&format!("<{element}>{}</{element}>", decoy_script()));
        let upper = element.to_ascii_uppercase();
        assert_real_state_wins(&format!("<{upper} class=x>{}</{upper}\n>", decoy_script()));
        // Only the element's own end tag (name then a delimiter) closes it.
        assert_real_state_wins(&format!(
            "<{element}></{element}x>{}</{element}/>",
            decoy_script()
        ));
    }
}

#[test]
fn plaintext_makes_the_rest_of_the_page_text() {
    // The real state comes first here; a decoy of a newer era after `<plaintext>` would
    // otherwise be preferred by the era chain.
    let mut page = samples::profile_page(Era::Sigi, &PUBLIC_USER, 16 * 1024).into_bytes();
    page.extend_from_slice(format!("<plaintext>{}", decoy_script()).as_bytes());
    assert_eq!(
        extract(&page, &requested()),
        Reading::Found(expected::short_video(&PUBLIC_USER))
    );
}

#[test]
fn an_end_tags_attributes_are_not_markup() {
    let decoy = decoy_script();
    assert_real_state_wins(&format!("<p>x</p data-x=\"{decoy}\">"));
    assert_real_state_wins(&format!("<p>x</p data-x='{decoy}'>"));
    assert_real_state_wins(&format!("<title>t</title data-x=\"{decoy}\">"));
}

#[test]
fn bogus_comments_end_at_the_first_gt() {
    let decoy = decoy_script();
    // `<?…>`, `</ …>` and `<!…>` are bogus comments ending at the first `>`, which here is
    // the decoy's start tag's own `>`: the browser never sees that start tag.
    assert_real_state_wins(&format!("<?xml version=\"1.0\" {decoy}"));
    assert_real_state_wins(&format!("</ x {decoy}"));
    assert_real_state_wins(&format!("</1 {decoy}"));
    assert_real_state_wins(&format!("<!x {decoy}"));
    assert_real_state_wins(&format!("<![CDATA[ {decoy}"));
}

/// The real page's state script alone, cut out of the sample page by plain string search.
fn real_state_script() -> String {
    let page = samples::profile_page(Era::Universal, &PUBLIC_USER, 16 * 1024);
    let open_tag = format!(r#"<script type="application/json" id="{UNIVERSAL_ID}">"#);
    let open = page.find(&open_tag).expect("the sample has the state");
    let close = open + page[open..].find("</script>").expect("its end tag") + "</script>".len();
    page[open..close].to_owned()
}

#[test]
fn comments_end_where_a_browser_ends_them() {
    // `--!>` ends a comment: the real state after it must be seen, not hidden up to a `-->`.
    let page = format!("<!-- a comment --!>{}<!-- later -->", real_state_script());
    assert_eq!(
        extract(page.as_bytes(), &requested()),
        Reading::Found(expected::short_video(&PUBLIC_USER))
    );
    // `<!-->` and `<!--->` end at once; a decoy inside a real comment stays hidden.
    let decoy = decoy_script();
    for trap in [
        format!("<!--><!-- {decoy} -->"),
        format!("<!---><!-- {decoy} --!>"),
        format!("<!-- <!-- {decoy} -->"),
        format!("<!-- a -- b {decoy} --->"),
    ] {
        assert_real_state_wins(&trap);
    }
}

#[test]
fn an_escaped_script_stays_open_past_its_first_script_end_tag() {
    let decoy = decoy_script();
    // `<!--<script>` inside a script makes the next `</script>` part of the text; the script
    // ends at the `</script>` after `-->`.
    assert_real_state_wins(&format!(
        "<script><!--\ndocument.write('<script>x=1</script>{decoy}');\n--></script>"
    ));
    // `-->` (however many dashes) leaves the escape, so the next `</script>` ends the script;
    // an escape without a nested `<script` still ends at the first `</script>`.
    for script in [
        "<script><!-- x=1 ---></script>",
        "<script><!-- x=1 </script>",
    ] {
        let mut page = script.as_bytes().to_vec();
        page.extend_from_slice(
            samples::profile_page(Era::Universal, &PUBLIC_USER, 16 * 1024).as_bytes(),
        );
        assert_eq!(
            extract(&page, &requested()),
            Reading::Found(expected::short_video(&PUBLIC_USER)),
            "{script}"
        );
    }
}

#[test]
fn the_photo_share_page_reader_uses_the_same_rules() {
    let name = Username::parse(Platform::PhotoShare, ps::PUBLIC_USER.username).expect("valid");
    let decoy = format!(
        r#"<script type="application/json" data-sjs>{{"xig_user_by_username":{{"pk":"666","username":"{}"}}}}</script>"#,
        ps::PUBLIC_USER.username
    );
    for trap in [
        format!("<textarea>{decoy}</textarea>"),
        format!("<noscript>{decoy}</noscript>"),
        format!("</div title=\"{decoy}\">"),
        format!("<?x {decoy}"),
    ] {
        let mut page = trap.clone().into_bytes();
        page.extend_from_slice(ps::xig_profile_page(&ps::PUBLIC_USER, 32 * 1024).as_bytes());
        let Reading::Found(profile) = from_page(&page, &name) else {
            panic!("no profile behind {trap}");
        };
        assert_eq!(profile.id, ps::PUBLIC_USER.pk, "trap: {trap}");
    }
}

/// Well-formed constructs that each hide a decoy from a browser, for the property below.
fn trap() -> impl Strategy<Value = String> {
    let decoy = decoy_script();
    prop_oneof![
        Just(format!("<title>{decoy}</title>")),
        Just(format!("<textarea rows=2>{decoy}</TEXTAREA>")),
        Just(format!("<style>{decoy}</style >")),
        Just(format!("<noscript>{decoy}</noscript>")),
        Just(format!("<iframe>{decoy}</iframe>")),
        Just(format!("<xmp>{decoy}</xmp>")),
        Just(format!("<!-- {decoy} -->")),
        Just(format!("<!-- {decoy} --!>")),
        Just(format!("<?pi {decoy}")),
        Just(format!("<!bogus {decoy}")),
        Just(format!("</p data-x=\"{decoy}\">")),
        Just(format!("<div title='{decoy}'>")),
        Just(format!("<script><!--<script>{decoy}</script>--></script>")),
        Just("<!-->".to_owned()),
        Just("<!--->".to_owned()),
        Just("<p>a < b > c</p>".to_owned()),
        Just("<script>var a = 1 < 2;</script>".to_owned()),
    ]
}

/// Bytes that steer the tokenizer between its states, for the no-panic property.
fn html_ish() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(&b"<"[..]),
        Just(&b">"[..]),
        Just(&b"</"[..]),
        Just(&b"<!--"[..]),
        Just(&b"-->"[..]),
        Just(&b"--!>"[..]),
        Just(&b"-"[..]),
        Just(&b"<!"[..]),
        Just(&b"<?"[..]),
        Just(&b"<script"[..]),
        Just(&b"</script"[..]),
        Just(&b"<title"[..]),
        Just(&b"</title"[..]),
        Just(&b"<plaintext>"[..]),
        Just(&b" id=\""[..]),
        Just(&b"\""[..]),
        Just(&b"'"[..]),
        Just(&b"="[..]),
        Just(&b"/"[..]),
        Just(&b" "[..]),
        Just(&b"__UNIVERSAL_DATA_FOR_REHYDRATION__"[..]),
        Just(&b"{\"a\":1}"[..]),
        Just(&b"\xff"[..]),
    ];
    proptest::collection::vec(piece, 0..200).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn after_any_sequence_of_traps_the_real_state_wins(traps in proptest::collection::vec(trap(), 0..12)) {
        let got = extract(&page_after(&traps.concat(), Era::Universal), &requested());
        prop_assert_eq!(got, Reading::Found(expected::short_video(&PUBLIC_USER)));
    }

    #[test]
    fn html_like_bytes_are_a_verdict(bytes in html_ish()) {
        let _ = extract(&bytes, &requested());
        let name = Username::parse(Platform::PhotoShare, "any.user").expect("valid");
        let _ = from_page(&bytes, &name);
    }

    #[test]
    fn arbitrary_bytes_are_a_verdict(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let _ = extract(&bytes, &requested());
        let name = Username::parse(Platform::PhotoShare, "any.user").expect("valid");
        let _ = from_page(&bytes, &name);
    }
}
