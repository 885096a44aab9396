//! The parts of the platform's embedded state that all three page eras share, and the one
//! place where a status code and a raw user become a [`PageVerdict`].
//!
//! Every era carries the same `user` and `stats` objects (same field names since 2020); only
//! the path to them and the place of the status code differ. The era parsers
//! (`universal`, `sigi`, `next_data`) find those pieces with typed, borrowing serde structs and
//! hand them to [`verdict`]. Fields the body does not need are never materialised: serde skips
//! them with `IgnoredAny`, which walks nesting iteratively (no stack growth on deep input).
//! The fields it does need are read with the lenient types both platforms share
//! ([`crate::platform::fields`]), so a wrongly typed one never costs the profile.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};

use super::{ShortVideoProfile, ShortVideoStats, ShortVideoUser, ShortVideoUserInfo};
use crate::cost;
use crate::platform::PageVerdict;
use crate::platform::fields::{Flag, Int, Num, Object, SHORT_VIDEO, Text, describe};
use crate::username::Subject;

/// The `user` object: only the fields the body returns.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RawUser<'a> {
    #[serde(borrow)]
    pub id: Option<Text<'a>>,
    #[serde(borrow)]
    pub unique_id: Option<Text<'a>>,
    #[serde(borrow)]
    pub nickname: Option<Text<'a>>,
    #[serde(borrow)]
    pub signature: Option<Text<'a>>,
    #[serde(default)]
    pub verified: Flag,
    #[serde(default)]
    pub private_account: Flag,
    #[serde(borrow)]
    pub avatar_thumb: Option<Text<'a>>,
    #[serde(borrow)]
    pub avatar_medium: Option<Text<'a>>,
    #[serde(borrow)]
    pub avatar_larger: Option<Text<'a>>,
    #[serde(borrow)]
    pub sec_uid: Option<Text<'a>>,
    #[serde(default)]
    pub relation: Int,
    #[serde(default)]
    pub open_favorite: Flag,
}

/// The `stats` object (numbers, rounded on big accounts) or `statsV2` (exact decimal strings).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RawStats {
    #[serde(default)]
    pub follower_count: Num,
    #[serde(default)]
    pub following_count: Num,
    #[serde(default)]
    pub heart: Num,
    #[serde(default)]
    pub heart_count: Num,
    #[serde(default)]
    pub video_count: Num,
    #[serde(default)]
    pub digg_count: Num,
}

/// `userInfo` as the Universal and `__NEXT_DATA__` eras nest it.
#[derive(Debug, Default, Deserialize)]
pub(super) struct RawUserInfo<'a> {
    #[serde(borrow)]
    pub user: Option<RawUser<'a>>,
    #[serde(default)]
    pub stats: Object<RawStats>,
    #[serde(rename = "statsV2", default)]
    pub stats_v2: Object<RawStats>,
}

/// What one state script says, before the page's states are weighed against each other.
#[derive(Debug)]
pub(super) enum Said {
    /// The state has the section about the requested user (a user-detail, a `UserPage`, page
    /// props): its verdict.
    User(Box<PageVerdict<ShortVideoProfile>>),
    /// The state renders the app and nothing about any user: a shell.
    AppOnly,
    /// The state could not be read, or holds neither a user section nor the app; why.
    Broken(String),
}

impl Said {
    /// The state's verdict about the requested user.
    pub(super) fn user(verdict: PageVerdict<ShortVideoProfile>) -> Self {
        Said::User(Box::new(verdict))
    }

    /// The verdict of a page holding only this state (what the era readers' tests check).
    #[cfg(test)]
    pub(super) fn into_verdict(self) -> PageVerdict<ShortVideoProfile> {
        match self {
            Said::User(verdict) => *verdict,
            Said::AppOnly => PageVerdict::Blocked(SHELL_PAGE),
            Said::Broken(why) => PageVerdict::Unreadable(why),
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

/// What an era parser found about the page's subject, before any decision.
#[derive(Debug, Default)]
pub(super) struct Found<'a> {
    /// The platform's status code for the profile request (`None`: the page gives none).
    pub status: Option<i64>,
    /// The profile user, when the page carries one at the era's profile path.
    pub user: Option<RawUser<'a>>,
    /// Rounded counts.
    pub stats: Option<RawStats>,
    /// Exact counts, when the era has them.
    pub stats_v2: Option<RawStats>,
}

impl<'a> Found<'a> {
    /// What an era that nests `{user, stats, statsV2}` under one `userInfo` object found,
    /// beside its status fields (the `__UNIVERSAL_DATA…` and `__NEXT_DATA__` eras).
    pub fn from_user_info(status: Option<i64>, info: Option<RawUserInfo<'a>>) -> Self {
        let info = info.unwrap_or_default();
        Found {
            status,
            user: info.user,
            stats: info.stats.0,
            stats_v2: info.stats_v2.0,
        }
    }
}

/// Turns a status code and the raw user into the verdict; the one place with these rules.
///
/// Existence is decided by the status code alone. Missing non-count user fields become `""`,
/// `false` or `0` (the body's shape has every key and no nulls outside the counts), while
/// missing counts stay `None`: a made-up zero would be a wrong number, an empty bio is not.
pub(super) fn verdict(found: Found<'_>, requested: Subject<'_>) -> PageVerdict<ShortVideoProfile> {
    let private = match found.status {
        None => return PageVerdict::Unreadable("the state has no status code".into()),
        Some(0) => false,
        // 10222: a private account; 10216: no permission to view, which peers read the same
        // way (docs/short-video.md says where each code comes from).
        Some(10222 | 10216) => true,
        Some(10221 | 10202 | 10204) => return PageVerdict::NotFound,
        Some(10231) => return PageVerdict::RegionLocked,
        Some(10000 | 10113 | 10114) => return PageVerdict::Blocked("captcha"),
        Some(code) => return PageVerdict::Unreadable(format!("unexpected status code {code}")),
    };
    let Some(user) = found.user else {
        return PageVerdict::Unreadable("the state has no user for the profile".into());
    };
    let unique_id = user.unique_id.map(Text::into_string).unwrap_or_default();
    if !requested.matches(&unique_id) {
        return PageVerdict::Unreadable(format!(
            "the state is about another user than the requested {:?}",
            requested.to_string()
        ));
    }
    let text = |t: Option<Text<'_>>| t.map(Text::into_string).unwrap_or_default();
    let user = ShortVideoUser {
        id: text(user.id),
        unique_id,
        nickname: text(user.nickname),
        signature: text(user.signature),
        verified: user.verified.0,
        private_account: private || user.private_account.0,
        avatar_thumb: text(user.avatar_thumb),
        avatar_medium: text(user.avatar_medium),
        avatar_larger: text(user.avatar_larger),
        sec_uid: text(user.sec_uid),
        relation: user.relation.0,
        open_favorite: user.open_favorite.0,
    };
    let stats = merge_stats(found.stats.unwrap_or_default(), found.stats_v2);
    answerable(ShortVideoProfile {
        user_info: ShortVideoUserInfo { user, stats },
    })
}

/// The verdict of the requested user's profile: the profile, unless the account is public and
/// the document gives no follower count under any known name (the platform moving, never a
/// 200 with `null`; see [`crate::platform::fields::Table::unanswerable`]).
pub(super) fn answerable(profile: ShortVideoProfile) -> PageVerdict<ShortVideoProfile> {
    let (user, stats) = (&profile.user_info.user, &profile.user_info.stats);
    match SHORT_VIDEO.unanswerable(user.private_account, stats.follower_count) {
        Some(why) => PageVerdict::Unreadable(why),
        None => PageVerdict::Profile(profile),
    }
}

/// Exact `statsV2` wins per field; `heart` and `heartCount` stand in for each other when one
/// of them is unusable (negative after int32 overflow, or not a number).
fn merge_stats(rounded: RawStats, exact: Option<RawStats>) -> ShortVideoStats {
    let exact = exact.unwrap_or_default();
    let heart = exact.heart.or(rounded.heart);
    let heart_count = exact.heart_count.or(rounded.heart_count);
    let stand_in = |own: Num, other: Num| match own {
        Num::Invalid | Num::Negative(_) => other.value(),
        _ => own.value(),
    };
    ShortVideoStats {
        follower_count: exact.follower_count.or(rounded.follower_count).value(),
        following_count: exact.following_count.or(rounded.following_count).value(),
        heart: stand_in(heart, heart_count),
        heart_count: stand_in(heart_count, heart),
        video_count: exact.video_count.or(rounded.video_count).value(),
        digg_count: exact.digg_count.or(rounded.digg_count).value(),
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

    #[test]
    fn exact_counts_win_and_heart_spellings_stand_in_for_each_other() {
        let rounded: RawStats = serde_json::from_str(
            r#"{"followerCount":4000000,"heart":3000000000,"heartCount":-1294967296,"videoCount":"x"}"#,
        )
        .unwrap();
        let exact: RawStats =
            serde_json::from_str(r#"{"followerCount":"4001943","videoCount":"-2"}"#).unwrap();
        let stats = merge_stats(rounded, Some(exact));
        assert_eq!(stats.follower_count, Some(4_001_943));
        assert_eq!(stats.heart, Some(3_000_000_000));
        assert_eq!(stats.heart_count, Some(3_000_000_000));
        assert_eq!(stats.video_count, None);
        assert_eq!(stats.following_count, None);
        assert_eq!(stats.digg_count, None);
    }

    #[test]
    fn a_missing_heart_spelling_is_not_filled_in() {
        let rounded: RawStats = serde_json::from_str(r#"{"heart":7}"#).unwrap();
        let stats = merge_stats(rounded, None);
        assert_eq!((stats.heart, stats.heart_count), (Some(7), None));
    }
}
