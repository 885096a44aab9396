//! Reading a short-video profile page: which embedded states it carries, and what they say.
//!
//! The platform has embedded its state three ways over the years: `__UNIVERSAL_DATA_FOR_
//! REHYDRATION__`, `SIGI_STATE` (as a JSON script, or as a `window['SIGI_STATE']=…`
//! assignment) and `__NEXT_DATA__`; pages of 2022–23 carry two at once (the user in
//! `SIGI_STATE`, only the app context in the rehydration script). The state that holds the
//! requested user's section decides, whichever comes first in the page; when several do, the
//! newest era wins. A page whose states all render the app without any user is a shell
//! (a block). The page is walked once with [`html::tokens`], so inline scripts that merely
//! mention these ids are never mistaken for state, and nothing outside the states (suggested
//! users, page text) is ever consulted. A page with no state at all is told apart by
//! `stateless`: a block of one of its kinds, or unreadable when it holds inline content of a
//! form we do not know.

use super::ShortVideoProfile;
use super::stateless::{self, Rest};
use super::user_json::{self, NO_USER, SHELL_PAGE, Said};
use super::{embed, next_data, sigi, universal};
use crate::html::{self, Token};
use crate::platform::Reading;
use crate::platform::fields::{self, SHORT_VIDEO};
use crate::username::Subject;

/// The ways a document embeds its state: the profile page's eras, newest first, then the
/// embed page's (a document carries one or the other); the order in which they decide.
#[derive(Clone, Copy)]
enum Kind {
    Universal,
    SigiJson,
    SigiAssignment,
    NextData,
    Embed,
}

impl Kind {
    const NEWEST_FIRST: [Kind; 5] = [
        Kind::Universal,
        Kind::SigiJson,
        Kind::SigiAssignment,
        Kind::NextData,
        Kind::Embed,
    ];

    /// What a state of this kind says, read from its script text.
    fn said(self, text: &[u8], requested: Subject<'_>) -> Said {
        match self {
            Kind::Universal => universal::said(text, requested),
            Kind::SigiJson => sigi::said(text, sigi::Embedding::Json, requested),
            Kind::SigiAssignment => sigi::said(text, sigi::Embedding::Assignment, requested),
            Kind::NextData => next_data::said(text, requested),
            Kind::Embed => embed::said(text, requested),
        }
    }
}

/// The state scripts of one page, by [`Kind`]: the first of each (a page has at most one).
#[derive(Clone, Copy, Default)]
struct States<'a>([Option<&'a [u8]>; 5]);

impl<'a> States<'a> {
    /// Walks the page once: keeps its state scripts, and notes the rest in case no state
    /// decides.
    fn of(page: &'a [u8]) -> (Self, Rest<'a>) {
        let mut states = States::default();
        let mut rest = Rest::default();
        let mut tokens = html::tokens(page);
        while let Some(token) = tokens.next_markup() {
            let Token::Element(tag, text) = token else {
                continue;
            };
            if tag.is("title") {
                rest.title(text);
                continue;
            }
            if !tag.is("script") {
                continue;
            }
            let kind = match tag.attr("id") {
                Some(universal::SCRIPT_ID) => Kind::Universal,
                Some(sigi::SCRIPT_ID) => Kind::SigiJson,
                Some(next_data::SCRIPT_ID) => Kind::NextData,
                Some(embed::SCRIPT_ID) => Kind::Embed,
                _ => match sigi::assigned_state(text) {
                    Some(state) if states.0[Kind::SigiAssignment as usize].is_none() => {
                        states.0[Kind::SigiAssignment as usize] = Some(state);
                        continue;
                    }
                    _ => {
                        rest.script(&tag, text);
                        continue;
                    }
                },
            };
            states.0[kind as usize].get_or_insert(text);
        }
        (states, rest)
    }

    /// Every state script's text, in the order of [`Kind`].
    fn texts(self) -> impl Iterator<Item = &'a [u8]> {
        self.0.into_iter().flatten()
    }

    /// What each state says, newest era first, read lazily: a state after the one that
    /// decides is never parsed.
    fn said(self, requested: Subject<'a>) -> impl Iterator<Item = Said> + 'a {
        Kind::NEWEST_FIRST
            .into_iter()
            .filter_map(move |kind| Some(kind.said(self.0[kind as usize]?, requested)))
    }
}

/// What the page says about `requested`: their profile, not found, a block, or unreadable.
///
/// Existence comes from the deciding state's status code only (0, 10216 and 10222 (private)
/// are profiles; 10221, 10202 and 10204 not found; 10000, 10113 and 10114 a captcha block);
/// the profile's `uniqueId` must be the requested name (ASCII case-insensitively). When no
/// state decides (a state whose known place holds no user, or no state of a known kind), the
/// anchored search looks for the requested user's object in every state and inline JSON of
/// the page, and never takes another user's. Every field is read through the platform's table
/// of names. Counts the page does not give are `None` (a public account must give its
/// followers); other missing user fields are `""`, `false` or `0`, because the body's shape
/// has every key and a blank bio is not a wrong number. Strings are JSON-decoded, never
/// entity-decoded. Pure and linear in the page size (each script is parsed at most twice:
/// by its reader, then by the search); never panics, whatever the bytes.
pub fn extract<'a>(page: &[u8], requested: impl Into<Subject<'a>>) -> Reading<ShortVideoProfile> {
    let requested = requested.into();
    if stateless::is_empty(page) {
        return Reading::blocked(stateless::EMPTY_BODY);
    }
    let (states, rest) = States::of(page);
    let mut broken = None;
    let mut shell = false;
    let mut no_user = None;
    for said in states.said(requested) {
        match said {
            Said::User(reading) => return *reading,
            Said::NoUser { private } => {
                no_user.get_or_insert(private);
            }
            Said::AppOnly => shell = true,
            Said::Broken(why) => {
                broken.get_or_insert(why);
            }
        }
    }
    // No state decided: the requested user's object anywhere in the page's JSON.
    if let Some(reading) = anchored(states, &rest, requested, no_user.unwrap_or(false)) {
        return reading;
    }
    match (no_user, broken, shell) {
        (Some(_), _, _) => Reading::Unreadable(NO_USER.into()),
        // A state we could not read may have held the user: never guess a block over it.
        (None, Some(why), _) => Reading::Unreadable(why),
        (None, None, true) => Reading::blocked(SHELL_PAGE),
        (None, None, false) => rest.reading(),
    }
}

/// What the embed page's error payload says about `requested` when its code names the case
/// (10221: not found; 10222: the private profile, its counts withheld), for the embed's HTTP
/// 400: that status carries the payload or nothing usable, so nothing else in the document is
/// read (no other state, no search). `None` when the document holds no embed state, or one
/// whose payload names no case: the 400 then means "private or missing", as it always did.
pub fn embed_error<'a>(
    page: &[u8],
    requested: impl Into<Subject<'a>>,
) -> Option<Reading<ShortVideoProfile>> {
    let (states, _) = States::of(page);
    embed::coded(states.0[Kind::Embed as usize]?, requested.into())
}

/// The anchored search over every state and every inline JSON of the page: the reading of the
/// requested user's object, when one is found (`private` when a state's status said so);
/// `None` when there is none, or no name to look for (a saved page read for anyone).
fn anchored(
    states: States<'_>,
    rest: &Rest<'_>,
    requested: Subject<'_>,
    private: bool,
) -> Option<Reading<ShortVideoProfile>> {
    let name = requested.name()?;
    let found = states
        .texts()
        .chain(rest.json().iter().copied())
        .filter_map(|text| fields::search(&SHORT_VIDEO, text, name))
        .flatten()
        .collect();
    let user = fields::best(&SHORT_VIDEO, found)?;
    Some(user_json::profile(&user, private, requested))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;
    use crate::username::Username;
    use stand_in::short_video::{
        self as samples, Era, NOT_FOUND_USER, PRIVATE_USER, PUBLIC_USER, SMALL_USER,
    };

    /// The body the stand-in says the service must return for `user`.
    fn expected_body(user: &samples::SampleUser) -> ShortVideoProfile {
        serde_json::from_value(samples::expected_body(user)).expect("a short-video body")
    }

    fn name(s: &str) -> Username {
        Username::parse(Platform::ShortVideo, s).unwrap()
    }

    fn unreadable(v: &Reading<ShortVideoProfile>) -> bool {
        matches!(v, Reading::Unreadable(_))
    }

    #[test]
    fn every_era_gives_the_expected_body_for_every_sample() {
        for era in Era::ALL {
            for user in samples::sample_users() {
                let page = samples::profile_page(era, &user, 40_000);
                let got = extract(page.as_bytes(), &name(user.unique_id));
                assert_eq!(
                    got,
                    Reading::Found(expected_body(&user)),
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
        assert_eq!(got, Reading::Found(expected_body(&SMALL_USER)));
    }

    #[test]
    fn exact_counts_escapes_and_entities() {
        let page = samples::profile_page(Era::Universal, &PUBLIC_USER, 20_000);
        let Reading::Found(p) = extract(page.as_bytes(), &name(PUBLIC_USER.unique_id)) else {
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
            let Reading::Found(p) = extract(page.as_bytes(), &name(PRIVATE_USER.unique_id)) else {
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
            assert_eq!(got, Reading::NotFound, "{era:?}");
            // Asking for a suggested user on that page never yields their profile.
            assert!(!matches!(
                extract(page.as_bytes(), &name("river.sketches")),
                Reading::Found(_)
            ));
        }
    }

    #[test]
    fn status_shell_and_missing_state() {
        let n = name("status.sample");
        for code in [10000, 10113, 10114] {
            let page = samples::status_page(code);
            assert_eq!(extract(page.as_bytes(), &n), Reading::blocked("captcha"));
        }
        assert_eq!(
            extract(samples::status_page(10221).as_bytes(), &n),
            Reading::NotFound
        );
        for gone in [10202, 10204] {
            assert_eq!(
                extract(samples::status_page(gone).as_bytes(), &n),
                Reading::NotFound,
                "{gone}"
            );
        }
        assert_eq!(
            extract(samples::status_page(10231).as_bytes(), &n),
            Reading::RegionLocked
        );
        let restricted = samples::restricted_page(samples::RESTRICTED_NAME);
        assert_eq!(
            extract(restricted.as_bytes(), &name(samples::RESTRICTED_NAME)),
            Reading::Restricted
        );
        let odd = extract(samples::status_page(10_555).as_bytes(), &n);
        assert!(matches!(&odd, Reading::Unreadable(why) if why.contains("10555")));
        let shell = samples::shell_page();
        assert_eq!(
            extract(shell.as_bytes(), &n),
            Reading::blocked("shell_page")
        );
        // The WAF page is a hurdle the site clears before extraction; read as a document it
        // holds an inline script of a form we do not know.
        let waf = samples::waf_challenge_page(5);
        assert!(matches!(
            extract(waf.as_bytes(), &n),
            Reading::Unreadable(why) if why.starts_with("no state script")
        ));
        assert_eq!(extract(b"", &n), Reading::blocked("empty_body"));
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
                Reading::NotFound,
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
        assert!(matches!(
            extract(decoys.as_bytes(), &name("abc")),
            Reading::Unreadable(why) if why.starts_with("no state script")
        ));
    }

    #[test]
    fn a_state_spelled_inside_an_attribute_value_is_not_the_state() {
        let real = samples::profile_page(Era::Universal, &SMALL_USER, 10_000);
        let fake = r#"<meta name="description" content='<script id="__UNIVERSAL_DATA_FOR_REHYDRATION__">{"__DEFAULT_SCOPE__":{"webapp.user-detail":{"statusCode":0,"userInfo":{"user":{"uniqueId":"tiny.baker_7"},"stats":{"followerCount":1}}}}}</script>'>"#;
        let page = real.replacen("<head>", &format!("<head>{fake}"), 1);
        let got = extract(page.as_bytes(), &name(SMALL_USER.unique_id));
        assert_eq!(got, Reading::Found(expected_body(&SMALL_USER)));
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
        let Reading::Found(p) = extract(page.as_bytes(), &name("abc")) else {
            panic!("no profile");
        };
        assert_eq!(p.user_info.stats.follower_count, Some(3));
        let newer = format!(
            r#"{page}<script id="__UNIVERSAL_DATA_FOR_REHYDRATION__">{{"__DEFAULT_SCOPE__":{{"webapp.user-detail":{{"statusCode":10221}}}}}}</script>"#
        );
        assert_eq!(extract(newer.as_bytes(), &name("abc")), Reading::NotFound);
    }

    #[test]
    fn the_state_that_holds_the_user_decides_whichever_script_comes_first() {
        for era in [Era::Sigi, Era::NextData] {
            for first in [true, false] {
                for user in samples::sample_users() {
                    let page = samples::two_state_page(era, Some(&user), user.unique_id, first);
                    assert_eq!(
                        extract(page.as_bytes(), &name(user.unique_id)),
                        Reading::Found(expected_body(&user)),
                        "{era:?}, app context first: {first}, {}",
                        user.unique_id
                    );
                }
                let page = samples::two_state_page(era, None, NOT_FOUND_USER, first);
                assert_eq!(
                    extract(page.as_bytes(), &name(NOT_FOUND_USER)),
                    Reading::NotFound,
                    "{era:?}, app context first: {first}"
                );
            }
        }
        // No state holds a user: the page is a shell, whichever comes first.
        let shells = format!(
            "{}{}",
            r#"<script id="SIGI_STATE" type="application/json">{"AppContext":{"appContext":{}},"SEO":{}}</script>"#,
            r#"<script id="__UNIVERSAL_DATA_FOR_REHYDRATION__">{"__DEFAULT_SCOPE__":{"webapp.app-context":{}}}</script>"#
        );
        assert_eq!(
            extract(shells.as_bytes(), &name("abc")),
            Reading::blocked("shell_page")
        );
    }

    #[test]
    fn pages_without_state_are_blocks_of_their_own_kind() {
        let cases = [
            (samples::stateless_shell_page(false), "stateless_shell"),
            (samples::stateless_shell_page(true), "stateless_shell"),
            (samples::maintenance_page(), "maintenance"),
            (String::new(), "empty_body"),
            (" \r\n\t".to_owned(), "empty_body"),
            (samples::captcha_page(10000), "captcha_page"),
            (samples::captcha_page(10113), "captcha_page"),
            (samples::captcha_page(10114), "captcha_page"),
            // 2026-09: the configuration in a JSON script element, `id="captcha-config"`.
            (samples::captcha_config_page(10000), "captcha_page"),
            (samples::captcha_config_page(10113), "captcha_page"),
            (samples::captcha_config_page(10114), "captcha_page"),
        ];
        for (page, reason) in cases {
            // Whoever is asked for: a block is never a verdict about the user.
            for who in [PUBLIC_USER.unique_id, NOT_FOUND_USER] {
                assert_eq!(
                    extract(page.as_bytes(), &name(who)),
                    Reading::blocked(reason),
                    "{reason} for {who}"
                );
            }
        }
        let shell = samples::stateless_shell_page(false);
        assert!((1_000..2_048).contains(&shell.len()), "{}", shell.len());
    }

    #[test]
    fn inline_data_of_a_form_we_do_not_know_is_unreadable_not_a_block() {
        let shell = samples::stateless_shell_page(true);
        let with = |script: &str| shell.replacen("</head>", &format!("{script}</head>"), 1);
        for page in [
            with(
                r#"<script id="__NEW_STATE_2027__" type="application/json">{"user":{"uniqueId":"abc"}}</script>"#,
            ),
            with(r#"<script>window.__NEW_STATE__ = {"user":{"uniqueId":"abc"}};</script>"#),
            with(r#"<script type="application/ld+json">{"@type":"Person","name":"A"}</script>"#),
            // A verify configuration whose code is not a captcha's: not a page we know.
            samples::captcha_page(10555),
            samples::captcha_config_page(10555),
            "<html><body>We changed everything</body></html>".to_owned(),
            "<html><head><title>Security Check</title></head><body>Security Check</body></html>"
                .to_owned(),
        ] {
            let got = extract(page.as_bytes(), &name("abc"));
            assert!(unreadable(&got), "{got:?} for {page}");
        }
    }

    #[test]
    fn text_a_user_writes_never_makes_a_block() {
        let mut user = SMALL_USER;
        user.nickname = "Site Under Maintenance";
        user.signature = "Security Check <script>const option = {\"type\":\"verify\",\"code\":\"10000\"}</script>";
        for era in Era::ALL {
            let page = samples::profile_page(era, &user, 20_000);
            // The title a page writes for a profile can carry the user's words.
            let start = page.find("<title>").unwrap();
            let end = page.find("</title>").unwrap();
            let page = format!(
                "{}<title>Site Under Maintenance</title>{}",
                &page[..start],
                &page[end + "</title>".len()..]
            );
            let Reading::Found(p) = extract(page.as_bytes(), &name(user.unique_id)) else {
                panic!("{era:?}: no profile");
            };
            assert_eq!(p.user_info.user.signature, user.signature);
        }
        // A title or a text that says "Security Check" is no captcha configuration.
        let shell = samples::stateless_shell_page(false)
            .replacen(
                "<title data-rh=\"true\"></title>",
                "<title>Security Check</title>",
                1,
            )
            .replacen(
                "<div id=\"app\"></div>",
                "<div id=\"app\">Security Check</div>",
                1,
            );
        assert_eq!(
            extract(shell.as_bytes(), &name("abc")),
            Reading::blocked("stateless_shell")
        );
    }

    #[test]
    fn truncated_pages_never_give_a_wrong_profile() {
        let page = samples::profile_page(Era::Sigi, &SMALL_USER, 6_000);
        let want = Reading::Found(expected_body(&SMALL_USER));
        let n = name(SMALL_USER.unique_id);
        for cut in 0..page.len() {
            let got = extract(&page.as_bytes()[..cut], &n);
            let empty = cut == 0 && got == Reading::blocked("empty_body");
            assert!(
                got == want || unreadable(&got) || empty,
                "cut {cut}: {got:?}"
            );
        }
    }

    /// A current-era page whose only state is `state` under the usual id.
    fn universal(state: &str) -> String {
        format!(
            r#"<html><script type="application/json" id="__UNIVERSAL_DATA_FOR_REHYDRATION__">{state}</script></html>"#
        )
    }

    #[test]
    fn a_state_under_an_unknown_id_still_reads() {
        for user in samples::sample_users()
            .into_iter()
            .chain([samples::MOVED_PAGE_USER])
        {
            let page = samples::moved_state_page(&user, 30_000);
            assert_eq!(
                extract(page.as_bytes(), &name(user.unique_id)),
                Reading::Found(expected_body(&user)),
                "{}",
                user.unique_id
            );
        }
    }

    #[test]
    fn a_user_object_moved_within_the_state_still_reads_its_counts_beside_it() {
        // `userInfo.user` became `userInfo.owner`: the counts are read relative to the object
        // that holds the user, wherever that is.
        let page = universal(
            r#"{"__DEFAULT_SCOPE__":{"webapp.app-context":{"user":{}},"webapp.user-profile":
            {"statusCode":0,"userInfo":{"owner":{"id":"9","uniqueId":"Moved.One","nickname":"M"},
            "stats":{"followerCount":40,"heart":7},"statsV2":{"followerCount":"41"}}}}}"#,
        );
        let Reading::Found(p) = extract(page.as_bytes(), &name("moved.one")) else {
            panic!("no profile");
        };
        assert_eq!(p.user_info.user.id, "9");
        assert_eq!(p.user_info.stats.follower_count, Some(41));
        assert_eq!(p.user_info.stats.heart, Some(7));
    }

    #[test]
    fn a_count_renamed_to_a_known_name_still_reads() {
        // The embed's flat `followerCount` inside the page's user object, no `stats`.
        let page = universal(
            r#"{"__DEFAULT_SCOPE__":{"webapp.user-detail":{"statusCode":0,"userInfo":
            {"user":{"id":"3","uniqueId":"flat.counts","followerCount":12,"heartCount":5}}}}}"#,
        );
        let Reading::Found(p) = extract(page.as_bytes(), &name("flat.counts")) else {
            panic!("no profile");
        };
        assert_eq!(p.user_info.stats.follower_count, Some(12));
        assert_eq!(p.user_info.stats.heart_count, Some(5));
    }

    #[test]
    fn another_users_object_is_never_taken_by_the_search() {
        // The moved page holds its owner and the suggested accounts: anyone else is not there.
        let page = samples::moved_state_page(&SMALL_USER, 30_000);
        for other in ["nobody.here", PUBLIC_USER.unique_id] {
            assert!(
                unreadable(&extract(page.as_bytes(), &name(other))),
                "{other}"
            );
        }
        // A state of unknown shape holding only another user's object (the viewer).
        let viewer = r#"<script id="__NEW__" type="application/json">{"viewer":{"uniqueId":"me","followerCount":1}}</script>"#;
        assert!(unreadable(&extract(viewer.as_bytes(), &name("someone"))));
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
            Reading::Found(_)
        ));
    }
}
