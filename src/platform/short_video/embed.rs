//! The embed page (`/embed/@{name}`), the platform's second source of a profile:
//! `<script id="__FRONTITY_CONNECT_STATE__">` holding `{"source": {"data": {"/embed/@{name}":
//! {"userInfo": {…}, "videoList": […]}}}}`.
//!
//! Its `userInfo` is flat and smaller than a page's: `id`, `uniqueId`, `nickname`,
//! `signature`, `verified`, `privateAccount`, `avatarThumbUrl` and the counts. The counts are
//! signed 32-bit: one past `i32::MAX` arrives negative and is that value plus 2^32. What it
//! lacks is `null` for a count and `""` or `false` for the rest, as for a private page. The
//! platform answers 400 for a private account and for a missing one alike, so this page can
//! never say "not found" (the site reads that status; this module reads the 200). Its error
//! payload (`"isError": true`, `"pageName": "error"`, no `userInfo`; a real user's route says
//! `"pageName": "creator"`) means the same, whatever the status it comes with: it reads as
//! [`EMBED_PRIVATE_OR_MISSING`], which the site turns into "nothing said about the user".

use serde::Deserialize;

#[cfg(test)]
use super::ShortVideoProfile;
use super::user_json::{self, Entries, Names, Said};
use crate::platform::Reading;
use crate::platform::fields::{Flag, Object, SHORT_VIDEO, Text, UserObject, View};
use crate::username::Subject;

/// What the embed's 400 and its error payload (`"isError": true`) are: the platform says so
/// for a private account and for a missing one alike (the site's reason for it).
pub(super) const EMBED_PRIVATE_OR_MISSING: &str = "embed_private_or_missing";

/// The id of the embed page's state script.
pub(super) const SCRIPT_ID: &[u8] = b"__FRONTITY_CONNECT_STATE__";
/// How the embed page names the route of a profile, before the name.
const ROUTE_PREFIX: &str = "/embed/@";

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Doc<'a> {
    #[serde(borrow)]
    source: Option<Object<Source<'a>>>,
    #[serde(default)]
    is_error: Flag,
    #[serde(default, borrow)]
    page_name: Text<'a>,
}

/// The embed's error payload, at the top of the state or in a route: `"isError": true` or
/// `"pageName": "error"` (a real user's route says `"pageName": "creator"`).
fn says_error(is_error: Flag, page_name: &Text<'_>) -> bool {
    is_error.0 || page_name.0 == "error"
}

#[derive(Default, Deserialize)]
struct Source<'a> {
    #[serde(borrow)]
    data: Option<Entries<'a, Object<Route<'a>>>>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Route<'a> {
    /// The embed's flat `userInfo`, read through the platform's table (its `avatarThumbUrl`
    /// and flat counts are names the table lists for this form).
    #[serde(borrow)]
    user_info: Option<Object<UserObject<'a, Names>>>,
    #[serde(default)]
    is_error: Flag,
    #[serde(default, borrow)]
    page_name: Text<'a>,
}

/// What the embed page's state says about `requested`.
///
/// The route named after the requested user holds the profile (or, failing that, a route
/// whose `userInfo.uniqueId` is theirs); the `uniqueId` must be the requested name. A state
/// with no such `userInfo` is broken: the platform says "private or missing" with a 400, never
/// with a 200.
pub(super) fn said(text: &[u8], requested: Subject<'_>) -> Said {
    let doc: Doc = match user_json::parse(text) {
        Ok(doc) => doc,
        Err(why) => return Said::Broken(why),
    };
    let top_error = says_error(doc.is_error, &doc.page_name);
    let Some(Entries(routes)) = doc.source.and_then(|s| s.0).and_then(|s| s.data) else {
        return Said::Broken("the embed state has no source.data".into());
    };
    let mut error = top_error;
    let mut users: Vec<(Text<'_>, UserObject<'_, Names>)> = Vec::new();
    for (key, route) in routes {
        let Some(route) = route.0 else { continue };
        error |= says_error(route.is_error, &route.page_name);
        if let Some(user) = route.user_info.and_then(|info| info.0) {
            users.push((key, user));
        }
    }
    let named = |key: &Text<'_>| match (key.0.strip_prefix(ROUTE_PREFIX), requested.name()) {
        (Some(name), Some(wanted)) => name.eq_ignore_ascii_case(wanted),
        (Some(_), None) => true,
        (None, _) => false,
    };
    let claims = |user: &UserObject<'_, Names>| {
        let id = View::new(&SHORT_VIDEO, &user.0).username();
        !id.is_empty() && requested.matches(&id)
    };
    let at = users
        .iter()
        .position(|(key, _)| named(key))
        .or_else(|| users.iter().position(|(_, user)| claims(user)));
    let Some(at) = at else {
        // The embed's error payload: private or missing alike, never a verdict about the user.
        if error {
            return Said::user(Reading::blocked(EMBED_PRIVATE_OR_MISSING));
        }
        // No `userInfo` for the name at its route: the page's search may find it elsewhere.
        return Said::NoUser { private: false };
    };
    let (_, user) = users.swap_remove(at);
    if !claims(&user) {
        return Said::user(Reading::Unreadable(format!(
            "the embed's userInfo is about another user than {:?}",
            requested.to_string()
        )));
    }
    Said::user(user_json::profile(&user.0, false, requested))
}

#[cfg(test)]
mod tests {
    use super::super::{ShortVideoStats, ShortVideoUser};
    use super::*;
    use crate::platform::Platform;
    use crate::username::Username;

    fn name(s: &str) -> Username {
        Username::parse(Platform::ShortVideo, s).unwrap()
    }

    fn state(route: &str, info: &str) -> String {
        format!(
            r#"{{"router":{{"link":"{route}"}},"source":{{"get":{{}},"data":{{"{route}":{{"isReady":true,"userInfo":{info},"videoList":[{{"id":"1","playCount":5}}]}}}}}}}}"#
        )
    }

    fn verdict(text: &str, who: &str) -> Reading<ShortVideoProfile> {
        said(text.as_bytes(), (&name(who)).into()).into_reading()
    }

    #[test]
    fn reads_the_flat_user_info_and_unwraps_signed_counts() {
        let info = r#"{"id":"42","uniqueId":"Lamp.Maker","nickname":"Lamp","signature":"a &amp; b\nc","verified":true,"privateAccount":false,"avatarThumbUrl":"https:\u002F\u002Fcdn.example\u002Ft.jpg","followerCount":-1194967296,"followingCount":7,"heartCount":-1}"#;
        let Reading::Found(p) = verdict(&state("/embed/@lamp.maker", info), "lamp.maker") else {
            panic!("no profile");
        };
        let (u, s) = (&p.user_info.user, &p.user_info.stats);
        assert_eq!((u.id.as_str(), u.unique_id.as_str()), ("42", "Lamp.Maker"));
        assert_eq!(u.signature, "a &amp; b\nc");
        assert_eq!(u.avatar_thumb, "https://cdn.example/t.jpg");
        assert_eq!((u.avatar_larger.as_str(), u.sec_uid.as_str()), ("", ""));
        assert!(u.verified && !u.private_account && !u.open_favorite);
        assert_eq!(s.follower_count, Some(3_100_000_000));
        assert_eq!(s.following_count, Some(7));
        assert_eq!(
            (s.heart, s.heart_count),
            (Some(4_294_967_295), Some(4_294_967_295))
        );
        assert_eq!((s.video_count, s.digg_count), (None, None));
    }

    #[test]
    fn the_error_payload_is_private_or_missing_never_not_found() {
        // The embed's answer for a private account and a missing one alike (2026-09):
        // `"isError": true`, `"pageName": "error"`, no `userInfo`. The page decides.
        let error = r#"{"router":{"link":"/embed/@abc"},"source":{"get":{},"data":{"/embed/@abc":{"isReady":true,"isError":true,"pageName":"error","errorCode":400}}}}"#;
        for who in ["abc", "someone.else"] {
            assert_eq!(
                verdict(error, who),
                Reading::blocked("embed_private_or_missing"),
                "{who}"
            );
        }
        // A real user's embed says `"pageName": "creator"` and is read as before.
        let info = r#"{"uniqueId":"abc","followerCount":3}"#;
        let creator = state("/embed/@abc", info).replace(
            r#""isReady":true"#,
            r#""isReady":true,"isError":false,"pageName":"creator""#,
        );
        assert!(matches!(verdict(&creator, "abc"), Reading::Found(_)));
    }

    #[test]
    fn a_public_embed_without_a_follower_count_is_unreadable() {
        let info = r#"{"uniqueId":"abc","privateAccount":false,"fansTotal":5,"heartCount":1}"#;
        assert!(matches!(
            verdict(&state("/embed/@abc", info), "abc"),
            Reading::Unreadable(why) if why.contains("follower count")
        ));
    }

    #[test]
    fn counts_that_are_no_int32_are_null() {
        for (value, want) in [
            ("0", Some(0)),
            ("\"123\"", Some(123)),
            ("-2147483648", Some(2_147_483_648)),
            ("-2147483649", None),
            ("1.5", None),
            ("\"-5\"", None),
            ("null", None),
            ("[1]", None),
            ("{\"a\":1}", None),
        ] {
            let info =
                format!(r#"{{"uniqueId":"abc","followerCount":1,"followingCount":{value}}}"#);
            let Reading::Found(p) = verdict(&state("/embed/@abc", &info), "abc") else {
                panic!("{value}: no profile");
            };
            assert_eq!(p.user_info.stats.following_count, want, "{value}");
        }
    }

    #[test]
    fn only_the_requested_users_info_is_a_profile() {
        let info = r#"{"uniqueId":"someone.else","followerCount":1}"#;
        assert!(matches!(
            verdict(&state("/embed/@abc", info), "abc"),
            Reading::Unreadable(_)
        ));
        // Found by its uniqueId under another route name.
        let info = r#"{"uniqueId":"ABC","followerCount":1}"#;
        assert!(matches!(
            verdict(&state("/embed/@x", info), "abc"),
            Reading::Found(_)
        ));
        for broken in [
            r#"{"source":{"data":{}}}"#,
            r#"{"source":{"data":{"/embed/@abc":{"userInfo":null}}}}"#,
            r#"{"router":{}}"#,
            r#"{"source":{"data":{"/embed/@abc":{"userInfo":{"nickname":"no id"}}}}}"#,
            "{not json",
        ] {
            let got = verdict(broken, "abc");
            assert!(matches!(got, Reading::Unreadable(_)), "{broken}: {got:?}");
        }
    }

    /// An embed state whose route for `route` holds the error payload `members` (the shape of
    /// real excerpts: `…,"errorCode":10222,"errorStatus":400,"isError":true,"pageName":"error",
    /// "userInfo":{"uniqueId":"…"}}`, quoted in a Rust client's test, 2026).
    fn error_state(route: &str, members: &str) -> String {
        format!(
            r#"{{"router":{{"link":"{route}"}},"source":{{"get":{{}},"data":{{"{route}":{{"isReady":true,{members}}}}}}}}}"#
        )
    }

    /// The error payload of an excerpt, with `code` and `userInfo`.
    fn coded(code: i64, info: &str) -> String {
        format!(
            r#""errorCode":{code},"errorStatus":400,"isError":true,"pageName":"error","userInfo":{info}"#
        )
    }

    #[test]
    fn error_code_10221_is_not_found() {
        for members in [
            coded(10221, r#"{"uniqueId":"abc"}"#),
            // Without the userInfo, or with a string code: the code still says it.
            r#""errorCode":10221,"isError":true,"pageName":"error""#.to_owned(),
            r#""errorCode":"10221","isError":true"#.to_owned(),
        ] {
            let text = error_state("/embed/@abc", &members);
            assert_eq!(verdict(&text, "ABC"), Reading::NotFound, "{members}");
        }
        // At the top of the state, beside the top's isError.
        let top = r#"{"isError":true,"errorCode":10221,"source":{"data":{"/embed/@abc":{"isReady":true}}}}"#;
        assert_eq!(verdict(top, "abc"), Reading::NotFound);
        // The route's own code wins over the top's.
        let both = r#"{"isError":true,"errorCode":10222,"source":{"data":{"/embed/@abc":{"isError":true,"errorCode":10221}}}}"#;
        assert_eq!(verdict(both, "abc"), Reading::NotFound);
    }

    #[test]
    fn error_code_10222_is_a_private_profile_with_its_counts_withheld() {
        // The excerpt's userInfo: the name only.
        let text = error_state("/embed/@abc", &coded(10222, r#"{"uniqueId":"Abc"}"#));
        let Reading::Found(p) = verdict(&text, "abc") else {
            panic!("no profile");
        };
        let (u, s) = (&p.user_info.user, &p.user_info.stats);
        assert_eq!(u.unique_id, "Abc");
        assert!(u.private_account);
        assert_eq!(s, &ShortVideoStats::default(), "every count null");
        // What else the userInfo gives is kept; any count it holds is still withheld.
        let info = r#"{"id":"42","uniqueId":"abc","nickname":"A","signature":"hi","verified":true,"privateAccount":false,"avatarThumbUrl":"https://cdn.example/t.jpg","followerCount":87,"heartCount":5}"#;
        let text = error_state("/embed/@abc", &coded(10222, info));
        let Reading::Found(p) = verdict(&text, "abc") else {
            panic!("no profile");
        };
        let (u, s) = (&p.user_info.user, &p.user_info.stats);
        assert_eq!(
            (u.id.as_str(), u.nickname.as_str(), u.signature.as_str()),
            ("42", "A", "hi")
        );
        assert_eq!(u.avatar_thumb, "https://cdn.example/t.jpg");
        assert!(u.verified && u.private_account);
        assert_eq!(s, &ShortVideoStats::default(), "every count null");
    }

    #[test]
    fn error_code_10222_without_a_user_info_is_the_minimal_private_body() {
        for text in [
            error_state(
                "/embed/@abc.def",
                r#""errorCode":10222,"isError":true,"pageName":"error""#,
            ),
            r#"{"isError":true,"pageName":"error","errorCode":10222,"source":{"data":{"/embed/@abc.def":{}}}}"#.to_owned(),
        ] {
            let Reading::Found(p) = verdict(&text, "Abc.Def") else {
                panic!("{text}: no profile");
            };
            let expected = ShortVideoUser {
                unique_id: "abc.def".into(),
                private_account: true,
                ..ShortVideoUser::default()
            };
            assert_eq!(p.user_info.user, expected, "{text}");
            assert_eq!(p.user_info.stats, ShortVideoStats::default(), "{text}");
        }
    }

    #[test]
    fn without_a_known_error_code_the_error_payload_stays_private_or_missing() {
        for members in [
            // The older payload: no code.
            r#""isError":true,"pageName":"error""#.to_owned(),
            // A code that names no case (the stand-in's older sample), a code of no kind.
            r#""isError":true,"pageName":"error","errorCode":400"#.to_owned(),
            r#""isError":true,"pageName":"error","errorCode":null"#.to_owned(),
            r#""isError":true,"pageName":"error","errorCode":{"code":10221}"#.to_owned(),
            // An excerpt's shape with the code left out: its userInfo is no public profile.
            r#""errorStatus":400,"isError":true,"pageName":"error","userInfo":{"uniqueId":"abc"}"#
                .to_owned(),
        ] {
            let text = error_state("/embed/@abc", &members);
            assert_eq!(
                verdict(&text, "abc"),
                Reading::blocked("embed_private_or_missing"),
                "{members}"
            );
        }
    }

    #[test]
    fn an_error_code_is_read_only_from_the_state_never_from_what_a_user_wrote() {
        // A public user whose bio and nickname quote the embed's error state.
        let info = r#"{"uniqueId":"abc","nickname":"\"errorCode\":10221","signature":"{\"isError\":true,\"errorCode\":10221,\"errorCode\":10222}","privateAccount":false,"followerCount":3}"#;
        let creator = state("/embed/@abc", info).replace(
            r#""isReady":true"#,
            r#""isReady":true,"isError":false,"pageName":"creator""#,
        );
        let Reading::Found(p) = verdict(&creator, "abc") else {
            panic!("no profile");
        };
        assert!(!p.user_info.user.private_account);
        assert_eq!(p.user_info.stats.follower_count, Some(3));
        // An error payload without a code whose userInfo's bio holds one: still no case.
        let members = r#""isError":true,"pageName":"error","userInfo":{"uniqueId":"abc","signature":"\"errorCode\":10221"}"#;
        assert_eq!(
            verdict(&error_state("/embed/@abc", members), "abc"),
            Reading::blocked("embed_private_or_missing")
        );
        // A userInfo member named errorCode is the user's, not the state's.
        let members =
            r#""isError":true,"pageName":"error","userInfo":{"uniqueId":"abc","errorCode":10221}"#;
        assert_eq!(
            verdict(&error_state("/embed/@abc", members), "abc"),
            Reading::blocked("embed_private_or_missing")
        );
    }

    #[test]
    fn another_users_error_code_says_nothing_about_the_requested_user() {
        let text = error_state(
            "/embed/@someone.else",
            &coded(10221, r#"{"uniqueId":"someone.else"}"#),
        );
        assert_eq!(
            verdict(&text, "abc"),
            Reading::blocked("embed_private_or_missing")
        );
        let text = error_state(
            "/embed/@someone.else",
            &coded(10222, r#"{"uniqueId":"someone.else"}"#),
        );
        assert_eq!(
            verdict(&text, "abc"),
            Reading::blocked("embed_private_or_missing")
        );
        // The top's code, when the only route is another user's: theirs too.
        let top = r#"{"isError":true,"errorCode":10221,"source":{"data":{"/embed/@someone.else":{"isError":true}}}}"#;
        assert_eq!(
            verdict(top, "abc"),
            Reading::blocked("embed_private_or_missing")
        );
    }
}
