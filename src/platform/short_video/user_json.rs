//! The parts of the platform's embedded state that all three page eras share, and the one
//! place where a status code and a raw user become a [`PageVerdict`].
//!
//! Every era carries the same `user` and `stats` objects (same field names since 2020); only
//! the path to them and the place of the status code differ. The era parsers
//! (`universal`, `sigi`, `next_data`) find those pieces with typed, borrowing serde structs and
//! hand them to [`verdict`]. Fields the body does not need are never materialised: serde skips
//! them with `IgnoredAny`, which walks nesting iteratively (no stack growth on deep input).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::platform::ShortVideoUserInfo;
use crate::platform::{PageVerdict, ShortVideoProfile, ShortVideoStats, ShortVideoUser};
use crate::username::Username;

/// A JSON string borrowed from the page when it has no escapes, owned otherwise.
///
/// Numbers are accepted too and kept as their decimal text, because the platform has spelled
/// ids both ways. `Option<Cow<str>>` alone would always allocate (serde only borrows a bare
/// `Cow` field), hence this wrapper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Text<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }
        }
        deserializer.deserialize_any(TextVisitor)
    }
}

impl Text<'_> {
    fn into_string(self) -> String {
        self.0.into_owned()
    }
}

/// One count as the page spells it: absent (or `null`), unusable, or a value.
///
/// The platform writes counts as JSON numbers in `stats` and as decimal strings in `statsV2`;
/// `stats.heartCount` overflows int32 and goes negative on big accounts. Anything that is not a
/// non-negative integer is `Invalid` rather than an error, so one odd count never costs the
/// whole profile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Count {
    /// The page does not give this count.
    #[default]
    Missing,
    /// The page gives something that is not a count (negative, fractional, text, …).
    Invalid,
    /// An exact non-negative count.
    Value(u64),
}

impl Count {
    /// This count, or `other` when this one is not a value: the first usable spelling wins.
    fn or(self, other: Count) -> Count {
        match (self, other) {
            (Count::Value(_), _) => self,
            (_, Count::Value(_)) => other,
            (Count::Invalid, _) | (_, Count::Invalid) => Count::Invalid,
            _ => Count::Missing,
        }
    }

    fn value(self) -> Option<u64> {
        match self {
            Count::Value(n) => Some(n),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CountVisitor;
        impl<'de> Visitor<'de> for CountVisitor {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a count")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Count, E> {
                Ok(Count::Value(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Count, E> {
                Ok(u64::try_from(v).map_or(Count::Invalid, Count::Value))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Count, E> {
                // 2^53: above it a float no longer holds every integer exactly.
                let exact = v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= 9.0e15;
                Ok(if exact {
                    Count::Value(v as u64)
                } else {
                    Count::Invalid
                })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Count, E> {
                Ok(v.parse::<u64>().map_or(Count::Invalid, Count::Value))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Count, E> {
                Ok(Count::Invalid)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Count, E> {
                Ok(Count::Missing)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Count, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Count::Invalid)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Count, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Count::Invalid)
            }
        }
        deserializer.deserialize_any(CountVisitor)
    }
}

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
    pub verified: Option<bool>,
    pub private_account: Option<bool>,
    #[serde(borrow)]
    pub avatar_thumb: Option<Text<'a>>,
    #[serde(borrow)]
    pub avatar_medium: Option<Text<'a>>,
    #[serde(borrow)]
    pub avatar_larger: Option<Text<'a>>,
    #[serde(borrow)]
    pub sec_uid: Option<Text<'a>>,
    pub relation: Option<i64>,
    pub open_favorite: Option<bool>,
}

/// The `stats` object (numbers, rounded on big accounts) or `statsV2` (exact decimal strings).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RawStats {
    #[serde(default)]
    pub follower_count: Count,
    #[serde(default)]
    pub following_count: Count,
    #[serde(default)]
    pub heart: Count,
    #[serde(default)]
    pub heart_count: Count,
    #[serde(default)]
    pub video_count: Count,
    #[serde(default)]
    pub digg_count: Count,
}

/// `userInfo` as the Universal and `__NEXT_DATA__` eras nest it.
#[derive(Debug, Default, Deserialize)]
pub(super) struct RawUserInfo<'a> {
    #[serde(borrow)]
    pub user: Option<RawUser<'a>>,
    pub stats: Option<RawStats>,
    #[serde(rename = "statsV2")]
    pub stats_v2: Option<RawStats>,
}

/// What an era parser found about the page's subject, before any decision.
#[derive(Debug, Default)]
pub(super) struct Found<'a> {
    /// The platform's status code for the profile request (`None`: the page gives none).
    pub status: Option<i64>,
    /// The platform's status message, for the log when the code is unexpected.
    pub status_msg: Option<Text<'a>>,
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
    pub fn from_user_info(
        status: Option<i64>,
        status_msg: Option<Text<'a>>,
        info: Option<RawUserInfo<'a>>,
    ) -> Self {
        let info = info.unwrap_or_default();
        Found {
            status,
            status_msg,
            user: info.user,
            stats: info.stats,
            stats_v2: info.stats_v2,
        }
    }
}

/// Turns a status code and the raw user into the verdict; the one place with these rules.
///
/// Existence is decided by the status code alone. Missing non-count user fields become `""`,
/// `false` or `0` (the body's shape has every key and no nulls outside the counts), while
/// missing counts stay `None`: a made-up zero would be a wrong number, an empty bio is not.
pub(super) fn verdict(found: Found<'_>, requested: &Username) -> PageVerdict<ShortVideoProfile> {
    let private = match found.status {
        None => return PageVerdict::Unreadable("the state has no status code".into()),
        Some(0) => false,
        Some(10222) => true,
        Some(10221 | 10202 | 10204) => return PageVerdict::NotFound,
        Some(10231) => return PageVerdict::RegionLocked,
        Some(10000 | 10113 | 10114) => return PageVerdict::Blocked("captcha"),
        Some(code) => {
            let msg = found.status_msg.map(|m| m.0).unwrap_or_default();
            return PageVerdict::Unreadable(format!(
                "unexpected status code {code} ({})",
                clip(&msg)
            ));
        }
    };
    let Some(user) = found.user else {
        return PageVerdict::Unreadable("the state has no user for the profile".into());
    };
    let unique_id = user.unique_id.map(Text::into_string).unwrap_or_default();
    if !requested.matches(&unique_id) {
        return PageVerdict::Unreadable(format!(
            "the state is about {:?}, not the requested {:?}",
            clip(&unique_id),
            requested.as_str()
        ));
    }
    let text = |t: Option<Text<'_>>| t.map(Text::into_string).unwrap_or_default();
    let user = ShortVideoUser {
        id: text(user.id),
        unique_id,
        nickname: text(user.nickname),
        signature: text(user.signature),
        verified: user.verified.unwrap_or(false),
        private_account: private || user.private_account.unwrap_or(false),
        avatar_thumb: text(user.avatar_thumb),
        avatar_medium: text(user.avatar_medium),
        avatar_larger: text(user.avatar_larger),
        sec_uid: text(user.sec_uid),
        relation: user.relation.unwrap_or(0),
        open_favorite: user.open_favorite.unwrap_or(false),
    };
    let stats = merge_stats(found.stats.unwrap_or_default(), found.stats_v2);
    PageVerdict::Profile(ShortVideoProfile {
        user_info: ShortVideoUserInfo { user, stats },
    })
}

/// Exact `statsV2` wins per field; `heart` and `heartCount` stand in for each other when one
/// of them is unusable (negative after int32 overflow, or not a number).
fn merge_stats(rounded: RawStats, exact: Option<RawStats>) -> ShortVideoStats {
    let exact = exact.unwrap_or_default();
    let heart = exact.heart.or(rounded.heart);
    let heart_count = exact.heart_count.or(rounded.heart_count);
    let stand_in = |own: Count, other: Count| match own {
        Count::Invalid => other.value(),
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

/// At most 64 characters of page text for a log line (a hostile page can hold megabytes).
fn clip(s: &str) -> &str {
    match s.char_indices().nth(64) {
        Some((at, _)) => &s[..at],
        None => s,
    }
}

/// Parses `text` (a state script's raw bytes) as JSON into `T`, or says why not.
///
/// The whole text is checked to be UTF-8 first (a fast pass), so invalid bytes anywhere in
/// the state, even in parts we skip, make the page unreadable instead of being half-trusted.
/// serde_json's recursion limit stays on.
pub(super) fn parse<'a, T: Deserialize<'a>>(text: &'a [u8]) -> Result<T, String> {
    let text = std::str::from_utf8(text).map_err(|e| format!("the state is not UTF-8: {e}"))?;
    serde_json::from_str(text).map_err(|e| format!("the state is not readable JSON: {e}"))
}

/// Like [`parse`] for a JSON value followed by more script text (`…;window[…]=…`): reads one
/// value and ignores the rest.
pub(super) fn parse_prefix<'a, T: Deserialize<'a>>(text: &'a [u8]) -> Result<T, String> {
    let text = std::str::from_utf8(text).map_err(|e| format!("the state is not UTF-8: {e}"))?;
    let mut de = serde_json::Deserializer::from_str(text);
    T::deserialize(&mut de).map_err(|e| format!("the state is not readable JSON: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(json: &str) -> Count {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn counts_accept_numbers_and_decimal_strings_only() {
        assert_eq!(count("12"), Count::Value(12));
        assert_eq!(count("\"4001943\""), Count::Value(4_001_943));
        assert_eq!(count("18446744073709551615"), Count::Value(u64::MAX));
        assert_eq!(count("4.0e6"), Count::Value(4_000_000));
        assert_eq!(count("null"), Count::Missing);
        for bad in [
            "-1",
            "1.5",
            "\"-3\"",
            "\"12k\"",
            "\"\"",
            "true",
            "[1]",
            "{\"a\":1}",
            "1e300",
        ] {
            assert_eq!(count(bad), Count::Invalid, "{bad}");
        }
    }

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

    #[test]
    fn text_borrows_when_it_can_and_decodes_escapes() {
        let t: Text = serde_json::from_str(r#""plain""#).unwrap();
        assert!(matches!(t.0, Cow::Borrowed("plain")));
        let t: Text = serde_json::from_str(r#""a\u002Fb &amp;""#).unwrap();
        assert_eq!(t.0, "a/b &amp;");
        let t: Text = serde_json::from_str("107955").unwrap();
        assert_eq!(t.0, "107955");
    }

    #[test]
    fn clip_cuts_on_a_char_boundary() {
        let long = "é".repeat(100);
        assert_eq!(clip(&long).chars().count(), 64);
        assert_eq!(clip("short"), "short");
    }
}
