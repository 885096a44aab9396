//! The parts of the platform's embedded state that every page era and the embed share, and
//! the one place where a status code and a user's object become a [`Reading`].
//!
//! Every era carries the same `user` object and its `stats` (same field names since 2020);
//! only the path to them and the place of the status code differ. The era readers
//! (`universal`, `sigi`, `next_data`, `embed`) find those pieces with typed, borrowing serde
//! structs and hand them to [`said`]. Every field is read through the platform's table of names
//! ([`SHORT_VIDEO`]): the user's own names from its object, the counts from the object that
//! holds it (`stats`, `statsV2` beside `user`), the first usable name winning; members the
//! table does not name are skipped with `IgnoredAny`, which walks nesting iteratively (no stack
//! growth on deep input). A state that has the user's section but not the user at its known
//! place says so ([`Said::NoUser`]), and the page's anchored search looks for them.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};

use super::{
    ShortVideoBioLink, ShortVideoProfile, ShortVideoStats, ShortVideoUser, ShortVideoUserInfo,
};
use crate::cost;
use crate::platform::Reading;
use crate::platform::fields::{
    HolderObject, Record, SHORT_VIDEO, Table, Tabled, Text, View, describe,
};
use crate::username::Subject;

/// The short-video platform's table, for the known-place readers.
#[derive(Debug)]
pub(super) struct Names;

impl Tabled for Names {
    fn table() -> &'static Table {
        &SHORT_VIDEO
    }
}

/// `userInfo` as the current and the `__NEXT_DATA__` eras nest it: the user's object under
/// `user`, its counts (`stats`, `statsV2`) beside it.
pub(super) type UserInfo<'a> = HolderObject<'a, Names>;

/// What one state script says, before the page's states are weighed against each other.
#[derive(Debug)]
pub(super) enum Said {
    /// The state has the section about the requested user (a user-detail, a `UserPage`, page
    /// props) and it decides: its reading.
    User(Box<Reading<ShortVideoProfile>>),
    /// The state has the section, its status says the user is there (private, when `private`),
    /// but its known place holds no user: the page's anchored search looks for them.
    NoUser {
        /// Whether the status code says the account is private.
        private: bool,
    },
    /// The state renders the app and nothing about any user: a shell.
    AppOnly,
    /// The state could not be read, or holds neither a user section nor the app; why.
    Broken(String),
}

/// Why a state with the user's section is unreadable when no search finds the user.
pub(super) const NO_USER: &str = "the state has no user for the profile";

impl Said {
    /// The state's reading of the requested user.
    pub(super) fn user(reading: Reading<ShortVideoProfile>) -> Self {
        Said::User(Box::new(reading))
    }

    /// The reading of a page holding only this state, before any search (what the era
    /// readers' tests check).
    #[cfg(test)]
    pub(super) fn into_reading(self) -> Reading<ShortVideoProfile> {
        match self {
            Said::User(verdict) => *verdict,
            Said::NoUser { .. } => Reading::Unreadable(NO_USER.into()),
            Said::AppOnly => Reading::blocked(SHELL_PAGE),
            Said::Broken(why) => Reading::Unreadable(why),
        }
    }
}

/// The block reason of a page whose states render the app without any user.
pub(super) const SHELL_PAGE: &str = "shell_page";

/// A JSON object kept as its entries in order (keys borrowed where possible).
pub(super) struct Entries<'a, T>(pub Vec<(Text<'a>, T)>);

impl<'de: 'a, 'a, T: Deserialize<'de>> Deserialize<'de> for Entries<'a, T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor<'a, T>(PhantomData<(Text<'a>, T)>);
        impl<'de: 'a, 'a, T: Deserialize<'de>> Visitor<'de> for EntriesVisitor<'a, T> {
            type Value = Entries<'a, T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some((key, value)) = map.next_entry::<Text<'de>, T>()? {
                    entries.push((key, value));
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor(PhantomData))
    }
}

/// What an era reader found about the page's subject, before any decision.
#[derive(Debug, Default)]
pub(super) struct Found<'a> {
    /// The platform's status code for the profile request (`None`: the page gives none).
    pub status: Option<i64>,
    /// What the user's object (and the object holding it) gave, when the era's place holds
    /// a user.
    pub user: Option<Record<'a>>,
}

impl<'a> Found<'a> {
    /// What an era that nests the user under `userInfo` found, beside its status fields (the
    /// `__UNIVERSAL_DATA…` and `__NEXT_DATA__` eras).
    pub fn from_user_info(status: Option<i64>, info: Option<UserInfo<'a>>) -> Self {
        Found {
            status,
            user: info.and_then(HolderObject::into_user),
        }
    }
}

/// The status code of a profile the platform shows only to logged-in viewers (reported to us
/// for 2026-09; not found in the stored peer material).
const RESTRICTED: i64 = 209_002;

/// What a status code and the user's object say; the one place with these rules.
///
/// Existence is decided by the status code alone; the user's object must be the requested
/// user's (ASCII case-insensitively).
pub(super) fn said(found: Found<'_>, requested: Subject<'_>) -> Said {
    let private = match found.status {
        // The platform shows the profile only to logged-in viewers (audience controls, age
        // gates): whoever the state names, that is the answer.
        Some(RESTRICTED) => return Said::user(Reading::Restricted),
        None if found.user.is_some() => {
            return Said::user(Reading::Unreadable("the state has no status code".into()));
        }
        None | Some(0) => false,
        // 10222: a private account; 10216: no permission to view, which peers read the same
        // way (docs/short-video.md says where each code comes from).
        Some(10222 | 10216) => true,
        Some(10221 | 10202 | 10204) => return Said::user(Reading::NotFound),
        Some(10231) => return Said::user(Reading::RegionLocked),
        Some(10000 | 10113 | 10114) => return Said::user(Reading::blocked("captcha")),
        Some(code) => {
            return Said::user(Reading::Unreadable(format!(
                "unexpected status code {code}"
            )));
        }
    };
    match found.user {
        Some(user) => Said::user(profile(&user, private, requested)),
        None => Said::NoUser { private },
    }
}

/// The verdict of a user's object: their profile, when it is the requested user's and can be
/// answered.
///
/// Missing non-count fields become `""`, `false` or `0` (the body's shape has every key and no
/// nulls outside the counts), while missing counts stay `None`: a made-up zero would be a wrong
/// number, an empty bio is not. A public account must give its follower count
/// ([`answerable`]).
pub(super) fn profile(
    user: &Record<'_>,
    private: bool,
    requested: Subject<'_>,
) -> Reading<ShortVideoProfile> {
    let v = View::new(&SHORT_VIDEO, user);
    let unique_id = v.username();
    if !requested.matches(&unique_id) {
        return Reading::Unreadable(format!(
            "the state is about another user than the requested {:?}",
            requested.to_string()
        ));
    }
    let text = |key| v.text(key).into_owned();
    let some_text = |key| Some(text(key)).filter(|t| !t.is_empty());
    let user = ShortVideoUser {
        id: text("id"),
        unique_id: unique_id.into_owned(),
        nickname: text("nickname"),
        signature: text("signature"),
        verified: v.flag("verified"),
        private_account: private || v.flag("privateAccount"),
        avatar_thumb: text("avatarThumb"),
        avatar_medium: text("avatarMedium"),
        avatar_larger: text("avatarLarger"),
        sec_uid: text("secUid"),
        relation: v.code("relation"),
        open_favorite: v.flag("openFavorite"),
        bio_link: some_text("bioLink").map(|link| ShortVideoBioLink { link }),
        // `0` is how a page hides it: no time, never 1970.
        create_time: v.num("createTime").value().filter(|&t| t > 0),
        language: some_text("language"),
        is_organization: v.switch("isOrganization"),
    };
    let stats = ShortVideoStats {
        follower_count: v.count("followerCount"),
        following_count: v.count("followingCount"),
        heart: v.count("heart"),
        heart_count: v.count("heartCount"),
        video_count: v.count("videoCount"),
        digg_count: v.count("diggCount"),
    };
    answerable(ShortVideoProfile {
        user_info: ShortVideoUserInfo { user, stats },
    })
}

/// The verdict of the requested user's profile: the profile, unless the account is public and
/// the document gives no follower count under any known name (the platform moving, never a
/// 200 with `null`; see [`crate::platform::fields::Table::unanswerable`]).
fn answerable(profile: ShortVideoProfile) -> Reading<ShortVideoProfile> {
    let (user, stats) = (&profile.user_info.user, &profile.user_info.stats);
    match SHORT_VIDEO.unanswerable(user.private_account, stats.follower_count) {
        Some(why) => Reading::Unreadable(why),
        None => Reading::Found(profile),
    }
}

/// What a state that does not parse is, in the log (followed by what and where, never by its
/// text).
const NOT_JSON: &str = "the state is not readable JSON";

/// Parses `text` (a state script's raw bytes) as JSON into `T`, or says why not.
///
/// The whole text is checked to be UTF-8 first (a fast pass), so invalid bytes anywhere in
/// the state, even in parts we skip, make the page unreadable instead of being half-trusted.
/// serde_json's recursion limit stays on.
pub(super) fn parse<'a, T: Deserialize<'a>>(text: &'a [u8]) -> Result<T, String> {
    cost::examined(text.len());
    let text = std::str::from_utf8(text).map_err(|e| format!("the state is not UTF-8: {e}"))?;
    serde_json::from_str(text).map_err(|e| describe(NOT_JSON, &e))
}

/// Like [`parse`] for a JSON value followed by more script text (`…;window[…]=…`): reads one
/// value and ignores the rest.
pub(super) fn parse_prefix<'a, T: Deserialize<'a>>(text: &'a [u8]) -> Result<T, String> {
    cost::examined(text.len());
    let text = std::str::from_utf8(text).map_err(|e| format!("the state is not UTF-8: {e}"))?;
    let mut de = serde_json::Deserializer::from_str(text);
    T::deserialize(&mut de).map_err(|e| describe(NOT_JSON, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stats a record of a holder's `stats` and `statsV2` gives.
    fn stats(info: &str) -> ShortVideoStats {
        let info = format!(r#"{{"user":{{"uniqueId":"a1"}},{info}}}"#);
        let info: UserInfo = serde_json::from_str(&info).unwrap();
        let user = info.into_user().unwrap();
        let Reading::Found(p) = profile(&user, true, Subject::Anyone) else {
            panic!("a profile");
        };
        p.user_info.stats
    }

    #[test]
    fn exact_counts_win_and_heart_spellings_stand_in_for_each_other() {
        let s = stats(
            r#""stats":{"followerCount":4000000,"heart":3000000000,"heartCount":-1294967296,"videoCount":"x"},
            "statsV2":{"followerCount":"4001943","videoCount":"-2"}"#,
        );
        assert_eq!(s.follower_count, Some(4_001_943));
        assert_eq!(s.heart, Some(3_000_000_000));
        assert_eq!(s.heart_count, Some(3_000_000_000));
        assert_eq!(s.video_count, None);
        assert_eq!(s.following_count, None);
        assert_eq!(s.digg_count, None);
    }

    /// The user a `user` object gives (private, so no count is needed).
    fn user(json: &str) -> ShortVideoUser {
        let info = format!(r#"{{"user":{{"uniqueId":"a1",{json}}}}}"#);
        let info: UserInfo = serde_json::from_str(&info).unwrap();
        let Reading::Found(p) = profile(&info.into_user().unwrap(), true, Subject::Anyone) else {
            panic!("a profile");
        };
        p.user_info.user
    }

    #[test]
    fn the_added_keys_take_what_the_page_gives_and_nothing_made_up() {
        let u = user(
            r#""bioLink":{"link":"a.example\u002Fb","risk":3},"createTime":"1650000000",
            "language":"pt","isOrganization":1"#,
        );
        assert_eq!(u.bio_link.map(|b| b.link).as_deref(), Some("a.example/b"));
        assert_eq!(u.create_time, Some(1_650_000_000));
        assert_eq!(u.language.as_deref(), Some("pt"));
        assert!(u.is_organization);
        // Hidden, empty, negative or mistyped: `null` (`false`), never a made-up value.
        let u = user(r#""bioLink":{"link":""},"createTime":0,"language":"","isOrganization":"1""#);
        assert_eq!((u.bio_link, u.create_time, u.language), (None, None, None));
        assert!(!u.is_organization);
        let u = user(r#""bioLink":"https://a.example","createTime":-5,"isOrganization":true"#);
        assert_eq!((u.bio_link, u.create_time), (None, None));
        assert!(u.is_organization);
        let u = user(r#""createTime":1.5e9"#);
        assert_eq!(u.create_time, Some(1_500_000_000));
    }

    #[test]
    fn a_missing_heart_spelling_is_not_filled_in() {
        let s = stats(r#""stats":{"heart":7}"#);
        assert_eq!((s.heart, s.heart_count), (Some(7), None));
    }

    #[test]
    fn a_status_without_the_user_at_its_place_leaves_the_search_to_the_page() {
        for (status, private) in [(Some(0), false), (Some(10222), true), (None, false)] {
            let found = Found { status, user: None };
            assert!(matches!(
                said(found, Subject::Anyone),
                Said::NoUser { private: p } if p == private
            ));
        }
        let found = Found {
            status: Some(10221),
            user: None,
        };
        assert!(matches!(said(found, Subject::Anyone), Said::User(v) if *v == Reading::NotFound));
    }
}
