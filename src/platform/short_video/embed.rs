//! The embed page (`/embed/@{name}`), the platform's second source of a profile:
//! `<script id="__FRONTITY_CONNECT_STATE__">` holding `{"source": {"data": {"/embed/@{name}":
//! {"userInfo": {…}, "videoList": […]}}}}`.
//!
//! Its `userInfo` is flat and smaller than a page's: `id`, `uniqueId`, `nickname`,
//! `signature`, `verified`, `privateAccount`, `avatarThumbUrl` and the counts. The counts are
//! signed 32-bit: one past `i32::MAX` arrives negative and is that value plus 2^32. What it
//! lacks is `null` for a count and `""` or `false` for the rest, as for a private page. The
//! platform answers 400 for a private account and for a missing one alike, so this page can
//! never say "not found" (the site reads that status; this module reads the 200).

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::user_json::{self, Entries, Said};
use super::{ShortVideoProfile, ShortVideoStats, ShortVideoUser, ShortVideoUserInfo};
use crate::platform::PageVerdict;
use crate::platform::fields::{Flag, Object, Text};
use crate::username::Subject;

/// The id of the embed page's state script.
pub(super) const SCRIPT_ID: &[u8] = b"__FRONTITY_CONNECT_STATE__";
/// How the embed page names the route of a profile, before the name.
const ROUTE_PREFIX: &str = "/embed/@";

#[derive(Deserialize)]
struct Doc<'a> {
    #[serde(borrow)]
    source: Option<Object<Source<'a>>>,
}

#[derive(Default, Deserialize)]
struct Source<'a> {
    #[serde(borrow)]
    data: Option<Entries<'a, Object<Route<'a>>>>,
}

#[derive(Default, Deserialize)]
struct Route<'a> {
    #[serde(rename = "userInfo", borrow)]
    user_info: Option<Object<EmbedUser<'a>>>,
}

/// The embed's `userInfo`: only the fields the body returns.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EmbedUser<'a> {
    #[serde(borrow)]
    id: Option<Text<'a>>,
    #[serde(borrow)]
    unique_id: Option<Text<'a>>,
    #[serde(borrow)]
    nickname: Option<Text<'a>>,
    #[serde(borrow)]
    signature: Option<Text<'a>>,
    #[serde(default)]
    verified: Flag,
    #[serde(default)]
    private_account: Flag,
    #[serde(borrow)]
    avatar_thumb_url: Option<Text<'a>>,
    #[serde(default)]
    follower_count: Int32Count,
    #[serde(default)]
    following_count: Int32Count,
    #[serde(default)]
    heart_count: Int32Count,
    #[serde(default)]
    video_count: Int32Count,
    #[serde(default)]
    digg_count: Int32Count,
}

/// A count the embed writes as a signed 32-bit integer: a negative value `v` is `v + 2^32`;
/// anything that is not such an integer (or a string of digits) is no count.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Int32Count(Option<u64>);

impl Int32Count {
    fn of(value: i64) -> Self {
        match value {
            0.. => Int32Count(u64::try_from(value).ok()),
            v if v >= i64::from(i32::MIN) => Int32Count(u64::try_from(v + (1 << 32)).ok()),
            _ => Int32Count(None),
        }
    }
}

impl<'de> Deserialize<'de> for Int32Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct CountVisitor;
        impl<'de> Visitor<'de> for CountVisitor {
            type Value = Int32Count;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a count")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int32Count, E> {
                Ok(Int32Count(Some(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int32Count, E> {
                Ok(Int32Count::of(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Int32Count, E> {
                let digits =
                    !v.is_empty() && v.len() <= 20 && v.bytes().all(|b| b.is_ascii_digit());
                Ok(Int32Count(digits.then(|| v.parse().ok()).flatten()))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Int32Count, E> {
                Ok(Int32Count(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Int32Count, E> {
                Ok(Int32Count(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Int32Count, E> {
                Ok(Int32Count(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Int32Count, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Int32Count(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Int32Count, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Int32Count(None))
            }
        }
        d.deserialize_any(CountVisitor)
    }
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
    let Some(Entries(routes)) = doc.source.and_then(|s| s.0).and_then(|s| s.data) else {
        return Said::Broken("the embed state has no source.data".into());
    };
    let mut users: Vec<(Text<'_>, EmbedUser<'_>)> = routes
        .into_iter()
        .filter_map(|(key, route)| Some((key, route.0?.user_info?.0?)))
        .collect();
    let named = |key: &Text<'_>| match (key.0.strip_prefix(ROUTE_PREFIX), requested.name()) {
        (Some(name), Some(wanted)) => name.eq_ignore_ascii_case(wanted),
        (Some(_), None) => true,
        (None, _) => false,
    };
    let claims = |user: &EmbedUser<'_>| {
        user.unique_id
            .as_ref()
            .is_some_and(|id| !id.0.is_empty() && requested.matches(&id.0))
    };
    let at = users
        .iter()
        .position(|(key, _)| named(key))
        .or_else(|| users.iter().position(|(_, user)| claims(user)));
    let Some(at) = at else {
        return Said::Broken(format!(
            "the embed state holds no userInfo for {:?}",
            requested.to_string()
        ));
    };
    let (_, user) = users.swap_remove(at);
    if !claims(&user) {
        return Said::user(PageVerdict::Unreadable(format!(
            "the embed's userInfo is about another user than {:?}",
            requested.to_string()
        )));
    }
    Said::user(user_json::answerable(body(user)))
}

/// The body from the embed's `userInfo`.
fn body(user: EmbedUser<'_>) -> ShortVideoProfile {
    let text = |t: Option<Text<'_>>| t.map(Text::into_string).unwrap_or_default();
    let heart = user.heart_count.0;
    ShortVideoProfile {
        user_info: ShortVideoUserInfo {
            user: ShortVideoUser {
                id: text(user.id),
                unique_id: text(user.unique_id),
                nickname: text(user.nickname),
                signature: text(user.signature),
                verified: user.verified.0,
                private_account: user.private_account.0,
                avatar_thumb: text(user.avatar_thumb_url),
                ..ShortVideoUser::default()
            },
            stats: ShortVideoStats {
                follower_count: user.follower_count.0,
                following_count: user.following_count.0,
                // The embed spells the like count once; the body's two spellings both get it.
                heart,
                heart_count: heart,
                video_count: user.video_count.0,
                digg_count: user.digg_count.0,
            },
        },
    }
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

    fn verdict(text: &str, who: &str) -> PageVerdict<ShortVideoProfile> {
        said(text.as_bytes(), (&name(who)).into()).into_verdict()
    }

    #[test]
    fn reads_the_flat_user_info_and_unwraps_signed_counts() {
        let info = r#"{"id":"42","uniqueId":"Lamp.Maker","nickname":"Lamp","signature":"a &amp; b\nc","verified":true,"privateAccount":false,"avatarThumbUrl":"https:\u002F\u002Fcdn.example\u002Ft.jpg","followerCount":-1194967296,"followingCount":7,"heartCount":-1}"#;
        let PageVerdict::Profile(p) = verdict(&state("/embed/@lamp.maker", info), "lamp.maker")
        else {
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
    fn a_public_embed_without_a_follower_count_is_unreadable() {
        let info = r#"{"uniqueId":"abc","privateAccount":false,"fansTotal":5,"heartCount":1}"#;
        assert!(matches!(
            verdict(&state("/embed/@abc", info), "abc"),
            PageVerdict::Unreadable(why) if why.contains("follower count")
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
            let PageVerdict::Profile(p) = verdict(&state("/embed/@abc", &info), "abc") else {
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
            PageVerdict::Unreadable(_)
        ));
        // Found by its uniqueId under another route name.
        let info = r#"{"uniqueId":"ABC","followerCount":1}"#;
        assert!(matches!(
            verdict(&state("/embed/@x", info), "abc"),
            PageVerdict::Profile(_)
        ));
        for broken in [
            r#"{"source":{"data":{}}}"#,
            r#"{"source":{"data":{"/embed/@abc":{"userInfo":null}}}}"#,
            r#"{"router":{}}"#,
            r#"{"source":{"data":{"/embed/@abc":{"userInfo":{"nickname":"no id"}}}}}"#,
            "{not json",
        ] {
            let got = verdict(broken, "abc");
            assert!(
                matches!(got, PageVerdict::Unreadable(_)),
                "{broken}: {got:?}"
            );
        }
    }
}
