//! Lenient field types for upstream JSON: one rule set for both platforms.
//!
//! Upstream JSON is not ours: a field may be missing, `null` or of a type it never had before,
//! and one odd field must not cost the whole profile. So every body field of either platform
//! is read through one of these types, and each accepts any JSON value:
//!
//! - [`Text`]: a string as decoded (borrowed from the input when it has no escapes), or an
//!   integer in decimal (ids have been spelled both ways); anything else `""`.
//! - [`Flag`]: `true` or `false`; anything else `false`.
//! - [`Num`]: a count: a non-negative integer, an integral float up to 2^53 (`4.0e6`; above
//!   that a float may have been rounded), or a string of decimal digits (`"4001943"`); anything
//!   else is unusable, which the body shows as `null`, never as a made-up 0.
//! - [`Int`]: a signed code such as `relation`: an integer that fits an `i64`; anything else 0.
//! - [`Object`]: an object read as `T` (a `{"count": n}` holder, a group of counts); anything
//!   else counts as absent.
//!
//! What they do not take is skipped with `IgnoredAny`, which builds nothing, and what they keep
//! is at most one string of the input: nothing grows beyond the input. So a wrongly typed field
//! never fails a document; only text that is not JSON, or whose structure is not the expected
//! one, does, and [`describe`] says so without quoting the input.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::error::Category;

use crate::cost;

/// A string field, borrowed from the input when it holds no escapes (pages are large and most
/// of their strings are plain: copying is the cost this avoids). A bare `Cow<str>` field would
/// borrow too, but serde copies one inside an `Option` every time, hence this wrapper.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Text<'a>(pub Cow<'a, str>);

impl Text<'_> {
    /// The text as an owned string, for the body.
    pub fn into_string(self) -> String {
        self.0.into_owned()
    }
}

/// A boolean field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flag(pub bool);

/// A count field, as the document spells it.
///
/// Absent and unusable stay apart because a short-video count that is unusable (negative after
/// an int32 overflow) falls back to its other spelling, and one that is absent does not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Num {
    /// The document does not give this count (or gives `null`).
    #[default]
    Missing,
    /// The document gives something that is not a count (negative, fractional, text, …).
    Invalid,
    /// An exact non-negative count.
    Value(u64),
}

impl Num {
    /// The count, if the document gave a usable one.
    pub fn value(self) -> Option<u64> {
        match self {
            Num::Value(n) => Some(n),
            Num::Missing | Num::Invalid => None,
        }
    }

    /// This count, or `other` when this one is not a value: the first usable spelling wins.
    pub fn or(self, other: Num) -> Num {
        match (self, other) {
            (Num::Value(_), _) => self,
            (_, Num::Value(_)) => other,
            (Num::Invalid, _) | (_, Num::Invalid) => Num::Invalid,
            _ => Num::Missing,
        }
    }
}

/// A signed integer field that is a code, not a count (`relation`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Int(pub i64);

/// An object field read as `T`; `None` when the value is anything but an object.
#[derive(Debug)]
pub struct Object<T>(pub Option<T>);

impl<T> Default for Object<T> {
    fn default() -> Self {
        Object(None)
    }
}

/// The visitor methods for the JSON types a field does not take: `null` gives `$missing`, the
/// rest (after skipping a container's content) `$neutral`.
macro_rules! otherwise {
    ($value:ty, $missing:expr, $neutral:expr; $($kind:ident)*) => {
        $(otherwise!(@$kind $value, $neutral);)*
        fn visit_unit<E: de::Error>(self) -> Result<$value, E> {
            Ok($missing)
        }
        fn visit_none<E: de::Error>(self) -> Result<$value, E> {
            Ok($missing)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<$value, D::Error> {
            d.deserialize_any(self)
        }
    };
    (@bool $value:ty, $neutral:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<$value, E> {
            Ok($neutral)
        }
    };
    (@int $value:ty, $neutral:expr) => {
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<$value, E> {
            Ok($neutral)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<$value, E> {
            Ok($neutral)
        }
    };
    (@float $value:ty, $neutral:expr) => {
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<$value, E> {
            Ok($neutral)
        }
    };
    (@str $value:ty, $neutral:expr) => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<$value, E> {
            Ok($neutral)
        }
    };
    (@seq $value:ty, $neutral:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<$value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($neutral)
        }
    };
    (@map $value:ty, $neutral:expr) => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<$value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($neutral)
        }
    };
}

/// Implements `Deserialize` for a field type through its visitor, asking for any JSON value.
macro_rules! deserialize_any_with {
    ($ty:ty, $visitor:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any($visitor)
            }
        }
    };
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(v.to_string())))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(v.to_string())))
    }

    otherwise!(Text<'de>, Text::default(), Text::default(); bool float seq map);
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
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

    otherwise!(Flag, Flag(false), Flag(false); int float str seq map);
}

deserialize_any_with!(Flag, FlagVisitor);

struct NumVisitor;

impl<'de> Visitor<'de> for NumVisitor {
    type Value = Num;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a count")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
        Ok(Num::Value(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
        Ok(u64::try_from(v).map_or(Num::Invalid, Num::Value))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
        /// 2^53: above it a float no longer holds every integer, so the text it was read
        /// from may have been rounded; a count is exact or `null`, never a rounded number.
        const EXACT_UP_TO: f64 = 9_007_199_254_740_992.0;
        let integral = v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= EXACT_UP_TO;
        Ok(if integral {
            Num::Value(v as u64)
        } else {
            Num::Invalid
        })
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Num, E> {
        // `u64::from_str` alone would also take a leading `+`.
        let digits = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
        Ok(match v.parse() {
            Ok(n) if digits => Num::Value(n),
            _ => Num::Invalid,
        })
    }

    otherwise!(Num, Num::Missing, Num::Invalid; bool seq map);
}

deserialize_any_with!(Num, NumVisitor);

struct IntVisitor;

impl<'de> Visitor<'de> for IntVisitor {
    type Value = Int;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int, E> {
        Ok(Int(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int, E> {
        Ok(Int(i64::try_from(v).unwrap_or(0)))
    }

    otherwise!(Int, Int(0), Int(0); bool float str seq map);
}

deserialize_any_with!(Int, IntVisitor);

struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = Object<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(|t| Object(Some(t)))
    }

    otherwise!(Object<T>, Object(None), Object(None); bool int float str seq);
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
