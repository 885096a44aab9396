//! The `SIGI_STATE` era (about late 2021 to early 2024), in its two spellings:
//!
//! - `<script id="SIGI_STATE" type="application/json">{…}</script>` (beside a `SIGI_RETRY`
//!   script);
//! - the earlier `<script id="sigi-persisted-data">window['SIGI_STATE']={…};window['SIGI_RETRY']=
//!   {…};</script>`, where the state is the first JSON value after the assignment.
//!
//! Both hold `UserModule.users[<uniqueId>]`, `UserModule.stats[<uniqueId>]` and
//! `UserPage.{uniqueId, statusCode, secUid}`.

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny};

#[cfg(test)]
use super::ShortVideoProfile;
use super::user_json::{self, Entries, Found, Names, Said};
use crate::cost;
use crate::platform::Reading;
use crate::platform::fields::{self, Record, SHORT_VIDEO, Text, UserObject, View};
use crate::username::Subject;

/// The id of this era's JSON state script.
pub(super) const SCRIPT_ID: &[u8] = b"SIGI_STATE";

/// How the state was embedded: which parse fits the script text.
#[derive(Clone, Copy, Debug)]
pub(super) enum Embedding {
    /// The script's whole text is the JSON state.
    Json,
    /// The text is `window['SIGI_STATE']=` followed by the state and more script.
    Assignment,
}

#[derive(Deserialize)]
struct Doc<'a> {
    #[serde(rename = "AppContext")]
    app_context: Option<IgnoredAny>,
    #[serde(rename = "UserModule", borrow)]
    user_module: Option<UserModule<'a>>,
    #[serde(rename = "UserPage", borrow)]
    user_page: Option<UserPage<'a>>,
}

#[derive(Deserialize)]
struct UserModule<'a> {
    #[serde(borrow)]
    users: Option<Entries<'a, UserObject<'a, Names>>>,
    #[serde(borrow)]
    stats: Option<Entries<'a, Stats<'a>>>,
}

/// One user's entry of `UserModule.stats`: the counts a page of another era keeps in the
/// `stats` beside the user, read by the same names.
struct Stats<'a>(Record<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for Stats<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        fields::member(&SHORT_VIDEO, "stats", d).map(Stats)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UserPage<'a> {
    #[serde(borrow)]
    unique_id: Option<Text<'a>>,
    status_code: Option<i64>,
}

/// The state's text when `text` is a `window['SIGI_STATE']=…` assignment, else `None`.
pub(super) fn assigned_state(text: &[u8]) -> Option<&[u8]> {
    let trimmed = text.trim_ascii_start();
    cost::examined(text.len() - trimmed.len());
    let text = trimmed;
    let rest = [
        &b"window['SIGI_STATE']"[..],
        b"window[\"SIGI_STATE\"]",
        b"window.SIGI_STATE",
    ]
    .iter()
    .find_map(|prefix| text.strip_prefix(*prefix))?;
    let rest = rest
        .trim_ascii_start()
        .strip_prefix(b"=")?
        .trim_ascii_start();
    rest.starts_with(b"{").then_some(rest)
}

/// [`said`] as the verdict of a page holding only this state.
#[cfg(test)]
fn read(text: &[u8], embedding: Embedding, requested: Subject<'_>) -> Reading<ShortVideoProfile> {
    said(text, embedding, requested).into_reading()
}

/// What a SIGI state says, read from its script text.
pub(super) fn said(text: &[u8], embedding: Embedding, requested: Subject<'_>) -> Said {
    let parsed = match embedding {
        Embedding::Json => user_json::parse::<Doc>(text),
        Embedding::Assignment => user_json::parse_prefix::<Doc>(text),
    };
    let doc = match parsed {
        Ok(doc) => doc,
        Err(why) => return Said::Broken(why),
    };
    let Some(page) = doc.user_page else {
        return match (doc.user_module, doc.app_context) {
            (None, Some(_)) => Said::AppOnly,
            _ => Said::Broken("the state has no UserPage".into()),
        };
    };
    if let Some(Text(id)) = &page.unique_id
        && !id.is_empty()
        && !requested.matches(id)
    {
        return Said::user(Reading::Unreadable(format!(
            "UserPage is about another user than {:?}",
            requested.to_string()
        )));
    }
    // Reading a saved page without a name (`Subject::Anyone`): the page's own user is wanted.
    let wanted = match (&page.unique_id, requested.name()) {
        (_, Some(name)) => name,
        (Some(Text(id)), None) => id.as_ref(),
        (None, None) => "",
    };
    let (mut users, mut stats) = match doc.user_module {
        Some(m) => (
            m.users.map(|e| e.0).unwrap_or_default(),
            m.stats.map(|e| e.0).unwrap_or_default(),
        ),
        None => (Vec::new(), Vec::new()),
    };
    // The maps are keyed by uniqueId; the module can also hold other users (suggestions,
    // authors), so only the requested key (or, failing that, the requested uniqueId) counts.
    let at = users
        .iter()
        .position(|(key, _)| key.0.eq_ignore_ascii_case(wanted))
        .or_else(|| {
            users.iter().position(|(_, user)| {
                View::new(&SHORT_VIDEO, &user.0)
                    .username()
                    .eq_ignore_ascii_case(wanted)
            })
        });
    let (key, user) = match at {
        Some(at) => {
            let (key, user) = users.swap_remove(at);
            (Some(key), Some(user.0))
        }
        None => (None, None),
    };
    let stats_at = stats.iter().position(|(k, _)| {
        key.as_ref().is_some_and(|key| k.0 == key.0) || k.0.eq_ignore_ascii_case(wanted)
    });
    let user = user.map(|mut user| {
        if let Some(at) = stats_at {
            user.merge(stats.swap_remove(at).1.0);
        }
        user
    });
    let found = Found {
        status: page.status_code,
        user,
    };
    user_json::said(found, requested)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;
    use crate::username::Username;

    fn name(s: &str) -> Username {
        Username::parse(Platform::ShortVideo, s).unwrap()
    }

    fn state(status: i64) -> String {
        format!(
            r#"{{"AppContext":{{"appContext":{{}}}},"UserModule":{{"users":{{"someone_else":{{"id":"9","uniqueId":"someone_else"}},"panda_pup":{{"id":"7","uniqueId":"panda_pup","nickname":"P \ud83d\udc3c","signature":"x &amp; y","avatarLarger":"https:\u002F\u002Fcdn.example\u002Fa.jpg"}}}},"stats":{{"someone_else":{{"followerCount":1}},"panda_pup":{{"followerCount":6200000,"heart":3000000000,"heartCount":-1294967296}}}}}},"UserPage":{{"uniqueId":"panda_pup","statusCode":{status},"secUid":"S"}}}}"#
        )
    }

    #[test]
    fn reads_the_requested_user_among_others() {
        let text = state(0);
        let Reading::Found(p) = read(
            text.as_bytes(),
            Embedding::Json,
            (&name("Panda_Pup")).into(),
        ) else {
            panic!("not a profile");
        };
        assert_eq!(p.user_info.user.id, "7");
        assert_eq!(p.user_info.user.nickname, "P 🐼");
        assert_eq!(p.user_info.user.signature, "x &amp; y");
        assert_eq!(p.user_info.user.avatar_larger, "https://cdn.example/a.jpg");
        assert_eq!(p.user_info.stats.follower_count, Some(6_200_000));
        assert_eq!(p.user_info.stats.heart_count, Some(3_000_000_000));
        assert_eq!(p.user_info.stats.video_count, None);
    }

    #[test]
    fn reads_the_window_assignment_spelling() {
        let script = format!(
            " \n window['SIGI_STATE'] = {};window['SIGI_RETRY']={{\"a\":[1]}};",
            state(0)
        );
        let value = assigned_state(script.as_bytes()).unwrap();
        let got = read(value, Embedding::Assignment, (&name("panda_pup")).into());
        assert!(matches!(got, Reading::Found(_)), "{got:?}");
        let dq = format!("window[\"SIGI_STATE\"]={}", state(10221));
        let value = assigned_state(dq.as_bytes()).unwrap();
        assert_eq!(
            read(value, Embedding::Assignment, (&name("panda_pup")).into()),
            Reading::NotFound
        );
        for not_state in [
            "if (window['SIGI_STATE']) go()",
            "window['SIGI_STATE']==x",
            "window['SIGI_RETRY']={}",
            "",
        ] {
            assert_eq!(assigned_state(not_state.as_bytes()), None, "{not_state}");
        }
    }

    #[test]
    fn status_codes_decide() {
        let n = name("panda_pup");
        assert_eq!(
            read(state(10221).as_bytes(), Embedding::Json, (&n).into()),
            Reading::NotFound
        );
        assert_eq!(
            read(state(10000).as_bytes(), Embedding::Json, (&n).into()),
            Reading::blocked("captcha")
        );
        let Reading::Found(p) = read(state(10222).as_bytes(), Embedding::Json, (&n).into()) else {
            panic!("private is a profile");
        };
        assert!(p.user_info.user.private_account);
        assert!(matches!(
            read(state(123).as_bytes(), Embedding::Json, (&n).into()),
            Reading::Unreadable(why) if why.contains("123")
        ));
    }

    #[test]
    fn another_users_page_is_unreadable() {
        let n = name("someone_else");
        assert!(matches!(
            read(state(0).as_bytes(), Embedding::Json, (&n).into()),
            Reading::Unreadable(_)
        ));
        let n = name("nobody_here");
        assert!(matches!(
            read(state(0).as_bytes(), Embedding::Json, (&n).into()),
            Reading::Unreadable(_)
        ));
    }

    #[test]
    fn shells_and_empty_states() {
        let n = name("panda_pup");
        let shell = br#"{"AppContext":{"appContext":{}},"SEO":{}}"#;
        assert_eq!(
            read(shell, Embedding::Json, (&n).into()),
            Reading::blocked("shell_page")
        );
        assert!(matches!(
            read(b"{}", Embedding::Json, (&n).into()),
            Reading::Unreadable(_)
        ));
        let no_user = br#"{"UserModule":{"users":{},"stats":{}},"UserPage":{"statusCode":0}}"#;
        assert!(matches!(
            read(no_user, Embedding::Json, (&n).into()),
            Reading::Unreadable(_)
        ));
    }

    #[test]
    fn truncation_never_yields_a_profile() {
        let text = state(0);
        for cut in 0..text.len() {
            let got = read(
                &text.as_bytes()[..cut],
                Embedding::Json,
                (&name("panda_pup")).into(),
            );
            assert!(matches!(got, Reading::Unreadable(_)), "{cut}");
        }
    }
}
