//! The embed page (`/embed/@{name}`), the platform's second source of a profile:
//! `<script id="__FRONTITY_CONNECT_STATE__">` holding `{"source": {"data": {"/embed/@{name}":
//! {"userInfo": {…}, "videoList": […]}}}}`.
//!
//! Its `userInfo` is flat and smaller than a page's: `id`, `uniqueId`, `nickname`,
//! `signature`, `verified`, `privateAccount`, `avatarThumbUrl` and the counts. The counts are
//! signed 32-bit: one past `i32::MAX` arrives negative and is that value plus 2^32. What it
//! lacks is `null` for a count and `""` or `false` for the rest, as for a private page.
//!
//! Instead of a profile the platform answers, with HTTP 400, an error payload (`"isError":
//! true`, `"pageName": "error"`; a real user's route says `"pageName": "creator"`) for a
//! private account and a missing one. Its `errorCode` names which it is: 10221 a missing or
//! banned account ([`Reading::NotFound`]), 10222 a private one (the profile, private, every
//! count withheld: `null`). Older payloads carry no code; without one that names a case the
//! payload means "private or missing" alike, whatever the status it comes with: it reads as
//! [`EMBED_PRIVATE_OR_MISSING`], which the site turns into "nothing said about the user".
//! The code is read from the state's own members only (the requested user's route, or the
//! top of the state), never from inside a `userInfo`, so nothing a user writes is taken for
//! it. The site reads the payload of a 400 with [`coded`].

use serde::Deserialize;
use serde::de::Deserializer;

use super::user_json::{self, Entries, Names, Said};
use super::{ShortVideoProfile, ShortVideoStats, ShortVideoUser, ShortVideoUserInfo};
use crate::platform::Reading;
use crate::platform::fields::{Flag, Object, SHORT_VIDEO, Scalar, Text, UserObject, View};
use crate::username::Subject;

/// What the embed's 400 and its error payload (`"isError": true`) without a code that names
/// the case are: the platform says so for a private account and for a missing one alike (the
/// site's reason for it).
pub(super) const EMBED_PRIVATE_OR_MISSING: &str = "embed_private_or_missing";

/// The id of the embed page's state script.
pub(super) const SCRIPT_ID: &[u8] = b"__FRONTITY_CONNECT_STATE__";
/// How the embed page names the route of a profile, before the name.
const ROUTE_PREFIX: &str = "/embed/@";

/// The error payload's code for a missing or banned account.
const MISSING: i64 = 10_221;
/// The error payload's code for a private account.
const PRIVATE: i64 = 10_222;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Doc<'a> {
    #[serde(borrow)]
    source: Option<Object<Source<'a>>>,
    #[serde(default)]
    is_error: Flag,
    #[serde(default, borrow)]
    page_name: Text<'a>,
    #[serde(default)]
    error_code: ErrorCode,
}

/// The embed's error payload, at the top of the state or in a route: `"isError": true` or
/// `"pageName": "error"` (a real user's route says `"pageName": "creator"`).
fn says_error(is_error: Flag, page_name: &Text<'_>) -> bool {
    is_error.0 || page_name.0 == "error"
}

/// An error payload's `errorCode`: a non-negative integer, or one in decimal digits; anything
/// else (a container, `null`, other text) is no code.
#[derive(Clone, Copy, Debug, Default)]
struct ErrorCode(Option<i64>);

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Scalar::deserialize(d).map(|s| {
            let code = s.count().value().and_then(|n| i64::try_from(n).ok());
            ErrorCode(code)
        })
    }
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
    /// and flat counts are names the table lists for this form). Only the table's names are
    /// read in it: an `errorCode` there is not the state's.
    #[serde(borrow)]
    user_info: Option<Object<UserObject<'a, Names>>>,
    #[serde(default)]
    is_error: Flag,
    #[serde(default, borrow)]
    page_name: Text<'a>,
    #[serde(default)]
    error_code: ErrorCode,
}

impl<'a> Route<'a> {
    /// The route's `userInfo`, when it is an object.
    fn user(&self) -> Option<&UserObject<'a, Names>> {
        self.user_info.as_ref().and_then(|info| info.0.as_ref())
    }
}

/// An embed state: the top's error payload and the routes that are objects.
struct State<'a> {
    top_error: bool,
    top_code: ErrorCode,
    routes: Vec<(Text<'a>, Route<'a>)>,
}

/// What the error payload that speaks for the requested user says.
struct Payload {
    /// The requested user's route is an error payload itself.
    route_error: bool,
    /// An error payload speaks for the requested user: their route's, or the top of the
    /// state's (when their route holds no `userInfo`, or no route names another user).
    speaks: bool,
    /// Its code: the route's, else the top's.
    code: Option<i64>,
}

impl<'a> State<'a> {
    /// Parses the state script's text; a state without `source.data` is broken.
    fn parse(text: &'a [u8]) -> Result<Self, String> {
        let doc: Doc = user_json::parse(text)?;
        let top_error = says_error(doc.is_error, &doc.page_name);
        let Some(Entries(routes)) = doc.source.and_then(|s| s.0).and_then(|s| s.data) else {
            return Err("the embed state has no source.data".into());
        };
        let routes = routes
            .into_iter()
            .filter_map(|(key, route)| route.0.map(|route| (key, route)))
            .collect();
        Ok(State {
            top_error,
            top_code: doc.error_code,
            routes,
        })
    }

    /// The requested user's route: the first whose key names them (any route's, for anyone).
    fn named(&self, requested: Subject<'_>) -> Option<&(Text<'a>, Route<'a>)> {
        self.routes.iter().find(|(key, _)| names(key, requested))
    }

    /// The error payload that speaks for `requested`, and its code.
    fn payload(&self, requested: Subject<'_>) -> Payload {
        match self.named(requested) {
            Some((_, route)) => {
                let route_error = says_error(route.is_error, &route.page_name);
                Payload {
                    route_error,
                    speaks: route_error || (self.top_error && route.user().is_none()),
                    code: route.error_code.0.or(self.top_code.0),
                }
            }
            None => {
                // A route of another user's name: the state is theirs, the top's code too.
                let others = self
                    .routes
                    .iter()
                    .any(|(key, _)| key.0.starts_with(ROUTE_PREFIX));
                Payload {
                    route_error: false,
                    speaks: self.top_error && !others,
                    code: self.top_code.0,
                }
            }
        }
    }

    /// What an error payload whose code names the case says about `requested`: not found
    /// (10221), or the private profile with its counts withheld (10222); `None` otherwise.
    fn coded(&self, requested: Subject<'_>) -> Option<Reading<ShortVideoProfile>> {
        let payload = self.payload(requested);
        if !payload.speaks {
            return None;
        }
        match payload.code? {
            MISSING => Some(Reading::NotFound),
            PRIVATE => Some(self.withheld(requested)),
            _ => None,
        }
    }

    /// The private profile an error payload with 10222 gives: built from the `userInfo` it
    /// gives for the requested user (the requested route's, else one that claims them), else
    /// from the name alone; private, every count `null` (withheld, not zero).
    fn withheld(&self, requested: Subject<'_>) -> Reading<ShortVideoProfile> {
        let named = self.named(requested);
        let user = named.and_then(|(_, route)| route.user()).or_else(|| {
            self.routes
                .iter()
                .filter_map(|(_, route)| route.user())
                .find(|user| claims(user, requested))
        });
        let mut profile = match user {
            Some(user) if !claims(user, requested) => return about_another(requested),
            Some(user) => match user_json::profile(&user.0, true, requested) {
                Reading::Found(profile) => profile,
                other => return other,
            },
            None => {
                let from_route = named.and_then(|(key, _)| key.0.strip_prefix(ROUTE_PREFIX));
                let Some(name) = requested.name().or(from_route) else {
                    return Reading::Unreadable("the embed's error payload names no user".into());
                };
                ShortVideoProfile {
                    user_info: ShortVideoUserInfo {
                        user: ShortVideoUser {
                            unique_id: name.to_ascii_lowercase(),
                            private_account: true,
                            ..ShortVideoUser::default()
                        },
                        stats: ShortVideoStats::default(),
                    },
                }
            }
        };
        profile.user_info.stats = ShortVideoStats::default();
        Reading::Found(profile)
    }

    /// What the state says about `requested`.
    fn said(&self, requested: Subject<'_>) -> Said {
        if let Some(reading) = self.coded(requested) {
            return Said::user(reading);
        }
        let payload = self.payload(requested);
        // The requested user's route is the error payload, without a code that names the
        // case: private or missing alike, whatever `userInfo` it holds.
        if payload.route_error {
            return Said::user(Reading::blocked(EMBED_PRIVATE_OR_MISSING));
        }
        let error = self.top_error
            || self
                .routes
                .iter()
                .any(|(_, route)| says_error(route.is_error, &route.page_name));
        let users = || {
            self.routes
                .iter()
                .filter_map(|(key, route)| Some((key, route.user()?)))
        };
        let user = users()
            .find(|(key, _)| names(key, requested))
            .or_else(|| users().find(|(_, user)| claims(user, requested)));
        let Some((_, user)) = user else {
            // The embed's error payload: private or missing alike, never a verdict about the
            // user.
            if error {
                return Said::user(Reading::blocked(EMBED_PRIVATE_OR_MISSING));
            }
            // No `userInfo` for the name at its route: the page's search may find it elsewhere.
            return Said::NoUser { private: false };
        };
        if !claims(user, requested) {
            return Said::user(about_another(requested));
        }
        Said::user(user_json::profile(&user.0, false, requested))
    }
}

/// Whether a route key names `requested` (any route's name, for anyone).
fn names(key: &Text<'_>, requested: Subject<'_>) -> bool {
    match (key.0.strip_prefix(ROUTE_PREFIX), requested.name()) {
        (Some(name), Some(wanted)) => name.eq_ignore_ascii_case(wanted),
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// Whether a `userInfo` claims to be `requested`'s (it names a user, and that one).
fn claims(user: &UserObject<'_, Names>, requested: Subject<'_>) -> bool {
    let id = View::new(&SHORT_VIDEO, &user.0).username();
    !id.is_empty() && requested.matches(&id)
}

/// The reading of a `userInfo` at the requested user's route that is another user's.
fn about_another(requested: Subject<'_>) -> Reading<ShortVideoProfile> {
    Reading::Unreadable(format!(
        "the embed's userInfo is about another user than {:?}",
        requested.to_string()
    ))
}

/// What the embed page's state says about `requested`.
///
/// An error payload whose code names the case decides first (10221 not found, 10222 private
/// with its counts withheld); one without such a code at the requested user's route is
/// "private or missing". Otherwise the route named after the requested user holds the profile
/// (or, failing that, a route whose `userInfo.uniqueId` is theirs); the `uniqueId` must be the
/// requested name. A state with no such `userInfo` is broken: the platform says "private or
/// missing" with a 400, never with a 200.
pub(super) fn said(text: &[u8], requested: Subject<'_>) -> Said {
    match State::parse(text) {
        Ok(state) => state.said(requested),
        Err(why) => Said::Broken(why),
    }
}

/// What the embed state's error payload says about `requested` when its code names the case
/// (10221: not found; 10222: private, counts withheld); `None` for anything else, a state that
/// cannot be read included. For the embed's 400, whose answer is that payload or nothing.
pub(super) fn coded(text: &[u8], requested: Subject<'_>) -> Option<Reading<ShortVideoProfile>> {
    State::parse(text).ok()?.coded(requested)
}

#[cfg(test)]
mod tests {
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
