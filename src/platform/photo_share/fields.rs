//! Forgiving field types and the edge-style user object shared by the API and the legacy page.
//!
//! Upstream JSON is not ours: a field may be missing, `null` or of an unexpected type. These
//! types accept any JSON value and fall back to the body's neutral value (`""`, `false`,
//! `None`) instead of failing the whole document, and they skip nested values they do not
//! want with `IgnoredAny`, which allocates nothing.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::platform::{Count, PhotoShareProfile};
use crate::username::Username;

/// A string field: JSON strings as decoded, integers in decimal (ids), anything else `""`.
#[derive(Debug, Default)]
pub(super) struct Text(pub String);

/// A boolean field: `true`/`false` as given, anything else `false`.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Flag(pub bool);

/// A count: a non-negative integer that fits a `u64`, anything else `None`.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Num(pub Option<u64>);

fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Implements the visitor methods that map "any other JSON value" to the neutral value.
macro_rules! neutral_otherwise {
    ($ty:ty, $($skip:ident),*) => {
        $(neutral_otherwise!(@one $ty, $skip);)*
        fn visit_unit<E: de::Error>(self) -> Result<$ty, E> {
            Ok(<$ty>::default())
        }
        fn visit_none<E: de::Error>(self) -> Result<$ty, E> {
            Ok(<$ty>::default())
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<$ty, D::Error> {
            <$ty>::deserialize(d)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<$ty, A::Error> {
            drain_seq(seq).map(|()| <$ty>::default())
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<$ty, A::Error> {
            drain_map(map).map(|()| <$ty>::default())
        }
    };
    (@one $ty:ty, bool) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<$ty, E> {
            Ok(<$ty>::default())
        }
    };
    (@one $ty:ty, str) => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<$ty, E> {
            Ok(<$ty>::default())
        }
    };
    (@one $ty:ty, int) => {
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<$ty, E> {
            Ok(<$ty>::default())
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<$ty, E> {
            Ok(<$ty>::default())
        }
    };
    (@one $ty:ty, float) => {
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<$ty, E> {
            Ok(<$ty>::default())
        }
    };
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
        Ok(Text(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Text, E> {
        Ok(Text(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text, E> {
        Ok(Text(v.to_string()))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text, E> {
        Ok(Text(v.to_string()))
    }

    neutral_otherwise!(Text, bool, float);
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextVisitor)
    }
}

struct FlagVisitor;

impl<'de> Visitor<'de> for FlagVisitor {
    type Value = Flag;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a boolean")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Flag, E> {
        Ok(Flag(v))
    }

    neutral_otherwise!(Flag, str, int, float);
}

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FlagVisitor)
    }
}

struct NumVisitor;

impl<'de> Visitor<'de> for NumVisitor {
    type Value = Num;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a count")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
        Ok(Num(Some(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
        Ok(Num(u64::try_from(v).ok()))
    }

    neutral_otherwise!(Num, bool, str, float);
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NumVisitor)
    }
}

/// Deserializes a field so that a present `null` (`Some(None)`) differs from a missing key
/// (`None`, through `#[serde(default)]`).
pub(super) fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// An edge-style `{"count": n, "edges": [...]}` object; the edges are skipped unread.
#[derive(Debug, Default, Deserialize)]
pub(super) struct EdgeCount {
    #[serde(default)]
    count: Num,
}

/// The edge-style user object of `web_profile_info` and of the legacy `_sharedData` page.
///
/// Only the body's fields are declared; everything else (timeline edges, the 2024 field set)
/// is skipped by serde without being built.
#[derive(Debug, Default, Deserialize)]
pub(super) struct EdgeUser {
    #[serde(default)]
    id: Text,
    #[serde(default)]
    username: Text,
    #[serde(default)]
    full_name: Text,
    #[serde(default)]
    biography: Text,
    #[serde(default)]
    profile_pic_url: Text,
    #[serde(default)]
    profile_pic_url_hd: Text,
    #[serde(default)]
    is_verified: Flag,
    #[serde(default)]
    is_private: Flag,
    #[serde(default)]
    edge_followed_by: Option<EdgeCount>,
    #[serde(default)]
    edge_follow: Option<EdgeCount>,
    #[serde(default)]
    edge_owner_to_timeline_media: Option<EdgeCount>,
}

fn count(edge: Option<EdgeCount>) -> Count {
    Count {
        count: edge.and_then(|e| e.count.0),
    }
}

impl EdgeUser {
    /// The body, with the HD picture falling back to the plain one.
    pub(super) fn into_profile(self) -> PhotoShareProfile {
        let profile_pic_url_hd = if self.profile_pic_url_hd.0.is_empty() {
            self.profile_pic_url.0.clone()
        } else {
            self.profile_pic_url_hd.0
        };
        PhotoShareProfile {
            id: self.id.0,
            username: self.username.0,
            full_name: self.full_name.0,
            biography: self.biography.0,
            profile_pic_url: self.profile_pic_url.0,
            profile_pic_url_hd,
            is_verified: self.is_verified.0,
            is_private: self.is_private.0,
            edge_followed_by: count(self.edge_followed_by),
            edge_follow: count(self.edge_follow),
            edge_owner_to_timeline_media: count(self.edge_owner_to_timeline_media),
        }
    }
}

/// Whether a profile read from a document is the one that was asked for.
pub(super) fn is_requested(profile: &PhotoShareProfile, requested: &Username) -> bool {
    requested.matches(&profile.username)
}

/// A parse error as a log line that never quotes upstream content (serde's messages can).
pub(super) fn describe(what: &str, err: &serde_json::Error) -> String {
    format!(
        "{what}: {:?} error at line {} column {}",
        err.classify(),
        err.line(),
        err.column()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Probe {
        #[serde(default)]
        t: Text,
        #[serde(default)]
        f: Flag,
        #[serde(default)]
        n: Num,
    }

    fn probe(json: &str) -> (String, bool, Option<u64>) {
        let p: Probe = serde_json::from_str(json).expect("probe JSON parses");
        (p.t.0, p.f.0, p.n.0)
    }

    #[test]
    fn missing_fields_take_the_neutral_value() {
        assert_eq!(probe("{}"), (String::new(), false, None));
        assert_eq!(
            probe(r#"{"t":null,"f":null,"n":null}"#),
            (String::new(), false, None)
        );
    }

    #[test]
    fn wrong_types_take_the_neutral_value_without_failing() {
        assert_eq!(
            probe(r#"{"t":[1,{"a":[]}],"f":"true","n":"12"}"#),
            (String::new(), false, None)
        );
        assert_eq!(
            probe(r#"{"t":true,"f":1,"n":{"count":3}}"#),
            (String::new(), false, None)
        );
    }

    #[test]
    fn counts_are_non_negative_integers_only() {
        assert_eq!(probe(r#"{"n":0}"#).2, Some(0));
        assert_eq!(probe(r#"{"n":18446744073709551615}"#).2, Some(u64::MAX));
        assert_eq!(probe(r#"{"n":18446744073709551616}"#).2, None);
        assert_eq!(probe(r#"{"n":-1}"#).2, None);
        assert_eq!(probe(r#"{"n":1.5}"#).2, None);
        assert_eq!(probe(r#"{"n":2e3}"#).2, None);
    }

    #[test]
    fn text_decodes_json_escapes_and_keeps_entities() {
        assert_eq!(
            probe(r#"{"t":"a\u002Fb\/c &amp; \ud83d\ude00"}"#).0,
            "a/b/c &amp; \u{1f600}"
        );
        assert_eq!(probe(r#"{"t":12345678901234}"#).0, "12345678901234");
    }

    #[test]
    fn parse_errors_do_not_quote_the_input() {
        let err = serde_json::from_str::<Probe>(r#"{"t": secret-token}"#).unwrap_err();
        let text = describe("api", &err);
        assert!(!text.contains("secret"), "{text}");
        assert!(text.starts_with("api: Syntax"), "{text}");
    }
}
