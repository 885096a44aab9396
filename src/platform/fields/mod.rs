//! Reading upstream JSON fields: one rule set and one table of names per platform.
//!
//! Upstream JSON is not ours: a field may be missing, `null`, of a type it never had before,
//! or under another of the names the platform has used for it, and one odd field must not
//! cost the whole profile. So every body field of either platform is read by one rule set
//! ([`Scalar`]: what a text, a flag, a count or a code makes of any JSON value) through its
//! platform's table of names (`names.rs`: [`SHORT_VIDEO`], [`PHOTO_SHARE`], each name with
//! the form and date it was seen), the first usable name winning:
//!
//! - [`Text`]: a string as decoded (borrowed from the input when it has no escapes), or an
//!   integer in decimal (ids have been spelled both ways); anything else `""`.
//! - [`Flag`]: `true` or `false`; anything else `false`.
//! - [`Num`]: a count: a non-negative integer, an integral float up to 2^53 (`4.0e6`; above
//!   that a float may have been rounded), or a string of decimal digits (`"4001943"`); anything
//!   else is unusable, which the body shows as `null`, never as a made-up 0.
//! - a code such as `relation` ([`Scalar::code`]): an integer that fits an `i64`; anything
//!   else 0.
//! - a switch such as `isOrganization` ([`Scalar::switch`]): `true`, `false`, `1` or `0`;
//!   anything else `false`.
//! - a list such as `bio_links` ([`Scalar::list`]): an array's strings and link objects (their
//!   `url`, `lynx_url` and `title`), at most [`scalar::MAX_ITEMS`]; anything else no elements.
//! - [`Object`]: an object read as `T` (a `{"count": n}` holder, a group of counts); anything
//!   else counts as absent.
//!
//! The readers of known places ([`UserObject`], [`HolderObject`], [`member`]) read only the
//! members the table names; when no known place holds the requested user, the anchored
//! [`search`] finds their object wherever the document's JSON keeps it, and never another
//! user's. What they do not take is skipped with `IgnoredAny`, which builds
//! nothing, and what they keep is at most one string of the input per name: nothing grows
//! beyond the input. So a wrongly typed field never fails a document; only text that is not
//! JSON, or whose structure is not the expected one, does, and [`describe`] says so without
//! quoting the input.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::error::Category;

use crate::cost;

mod names;
mod place;
mod record;
mod scalar;
mod search;
mod table;

pub use names::{PHOTO_SHARE, SHORT_VIDEO};
pub use place::{HolderObject, UserObject, member};
pub use record::{Record, View};
pub use scalar::{Item, Num, Scalar};
pub use search::{best, search};
pub use table::{Table, Tabled};

/// A string field, borrowed from the input when it holds no escapes (pages are large and most
/// of their strings are plain: copying is the cost this avoids). A bare `Cow<str>` field would
/// borrow too, but serde copies one inside an `Option` every time, hence this wrapper.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Text<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Scalar::deserialize(d).map(|s| Text(s.text().unwrap_or_default()))
    }
}

/// A boolean field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flag(pub bool);

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Scalar::deserialize(d).map(|s| Flag(s.flag().unwrap_or(false)))
    }
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Scalar::deserialize(d).map(|s| s.count())
    }
}

/// An object field read as `T`; `None` when the value is anything but an object.
#[derive(Debug)]
pub struct Object<T>(pub Option<T>);

impl<T> Default for Object<T> {
    fn default() -> Self {
        Object(None)
    }
}

struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = Object<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(|t| Object(Some(t)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Object<T>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Object(None))
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Object<T>, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Object<T>, E> {
        Ok(Object(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Object<T>, E> {
        Ok(Object(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Object<T>, E> {
        Ok(Object(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Object<T>, E> {
        Ok(Object(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Object<T>, E> {
        Ok(Object(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Object<T>, E> {
        Ok(Object(None))
    }

    fn visit_none<E: de::Error>(self) -> Result<Object<T>, E> {
        Ok(Object(None))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjectVisitor(PhantomData))
    }
}

/// The first JSON value of `text` and the offset just after it: for a value followed by more
/// script or more JSON, which is never read. `None` when `text` holds no value.
///
/// Adds what serde read to [`crate::cost`] (all of `text` when the value does not parse).
pub fn first_value<'a, T: Deserialize<'a>>(
    text: &'a [u8],
) -> Option<Result<(T, usize), serde_json::Error>> {
    let mut stream = serde_json::Deserializer::from_slice(text).into_iter::<T>();
    let next = stream.next();
    cost::examined(match next {
        Some(Ok(_)) => stream.byte_offset(),
        _ => text.len(),
    });
    next.map(|value| value.map(|value| (value, stream.byte_offset())))
}

/// A JSON error as a log line that says what was wrong and where, never quoting the input.
///
/// serde's message for a value of an unexpected type quotes the value (`invalid type: string
/// "…"`), so that category gets a fixed text; syntax and end-of-input messages are serde_json's
/// own fixed texts (`expected value`, `EOF while parsing a string`) and are kept.
pub fn describe(what: &str, err: &serde_json::Error) -> String {
    let (line, column) = (err.line(), err.column());
    match err.classify() {
        Category::Syntax | Category::Eof => format!("{what}: {err}"),
        Category::Data => {
            format!("{what}: a value of an unexpected shape at line {line} column {column}")
        }
        Category::Io => format!("{what}: read error at line {line} column {column}"),
    }
}

#[cfg(test)]
mod tests;
