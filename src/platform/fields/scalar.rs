//! Any JSON value a field can hold, kept as the document gave it, and what each kind of field
//! makes of it: the one rule set both platforms' readers apply.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// One JSON value as a field reader met it: a string (borrowed from the input when it holds no
/// escapes), a number of any kind, a boolean, `null`, a container (skipped unread, never
/// built), or, for an array that is a member a table names, its first [`MAX_ITEMS`] strings
/// and link objects ([`Item`]): nothing here grows beyond a few strings of the input.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar<'a> {
    /// A string, JSON-decoded.
    Text(Cow<'a, str>),
    /// A non-negative integer.
    Unsigned(u64),
    /// A negative integer.
    Negative(i64),
    /// A number with a fraction or an exponent.
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
    /// An array or an object.
    Container,
    /// An array a table names (a list of links, of pronouns): its usable elements, at most
    /// [`MAX_ITEMS`] of them.
    List(Vec<Item<'a>>),
}

/// The most elements a list field keeps: the platform allows a handful of bio links and
/// pronouns; anything past this is skipped unread, so a huge array costs no memory.
pub const MAX_ITEMS: usize = 16;

/// One element of a list field: a string (a pronoun), or the link members of an object (a bio
/// link: `url`, the redirector's `lynx_url`, `title`; its other members skipped unread).
#[derive(Clone, Debug, PartialEq)]
pub enum Item<'a> {
    /// A string element.
    Text(Cow<'a, str>),
    /// An object element's link members, each `""` when absent or not text.
    Link {
        /// The link as the platform gives it (`url`).
        url: Cow<'a, str>,
        /// The link wrapped in the platform's redirector (`lynx_url`).
        lynx_url: Cow<'a, str>,
        /// The link's title.
        title: Cow<'a, str>,
    },
}

/// A count as a document spells it: what [`Scalar::count`] makes of a value.
///
/// Absent, unusable and negative stay apart: a count that is unusable falls back to another
/// spelling of it, a negative one may be a total wrapped into 32 bits (the short-video
/// platform's), and an absent one does neither.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Num {
    /// The document does not give this count (or gives `null`).
    #[default]
    Missing,
    /// The document gives something that is not a count (fractional, text, a container, …).
    Invalid,
    /// A negative integer: no count as it stands.
    Negative(i64),
    /// An exact non-negative count.
    Value(u64),
}

impl Num {
    /// The count, if the document gave a usable one.
    pub fn value(self) -> Option<u64> {
        match self {
            Num::Value(n) => Some(n),
            Num::Missing | Num::Invalid | Num::Negative(_) => None,
        }
    }

    /// This count, or `other` when this one is not a value: the first usable spelling wins,
    /// and of two unusable ones the first.
    pub fn or(self, other: Num) -> Num {
        match (self, other) {
            (Num::Value(_), _) => self,
            (_, Num::Value(_)) => other,
            (Num::Missing, _) => other,
            _ => self,
        }
    }

    /// The count a total wrapped into a signed 32-bit integer stood for: a negative value `v`
    /// down to `i32::MIN` is `v + 2^32`; anything else is [`Num::value`].
    pub fn unwrapped(self) -> Option<u64> {
        match self {
            Num::Negative(v) if v >= i64::from(i32::MIN) => u64::try_from(v + (1 << 32)).ok(),
            other => other.value(),
        }
    }
}

/// 2^53: above it a float no longer holds every integer, so the text it was read from may have
/// been rounded; a count is exact or absent, never a rounded number.
const EXACT_UP_TO: f64 = 9_007_199_254_740_992.0;

impl<'a> Scalar<'a> {
    /// As text: a string as decoded, an integer in decimal (ids have been spelled both ways);
    /// anything else is no text.
    pub fn text(&self) -> Option<Cow<'a, str>> {
        match self {
            Scalar::Text(text) => Some(text.clone()),
            Scalar::Unsigned(n) => Some(Cow::Owned(n.to_string())),
            Scalar::Negative(n) => Some(Cow::Owned(n.to_string())),
            _ => None,
        }
    }

    /// As a flag: a boolean; anything else is no flag.
    pub fn flag(&self) -> Option<bool> {
        match self {
            Scalar::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// As a count: a non-negative integer, an integral float up to 2^53, or a string of
    /// decimal digits (`"4001943"`) is a value; `null` is missing; a negative integer is kept
    /// as such; anything else is invalid.
    pub fn count(&self) -> Num {
        match self {
            Scalar::Unsigned(n) => Num::Value(*n),
            Scalar::Negative(n) => Num::Negative(*n),
            Scalar::Float(v) => {
                let integral = v.is_finite() && *v >= 0.0 && v.fract() == 0.0 && *v <= EXACT_UP_TO;
                if integral {
                    Num::Value(*v as u64)
                } else {
                    Num::Invalid
                }
            }
            Scalar::Text(text) => {
                // `u64::from_str` alone would also take a leading `+`.
                let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
                match text.parse() {
                    Ok(n) if digits => Num::Value(n),
                    _ => Num::Invalid,
                }
            }
            Scalar::Null => Num::Missing,
            Scalar::Bool(_) | Scalar::Container | Scalar::List(_) => Num::Invalid,
        }
    }

    /// As a switch (`isOrganization`): a boolean, or the integer 0 or 1 the platform spells it
    /// with; anything else is no switch.
    pub fn switch(&self) -> Option<bool> {
        match self {
            Scalar::Bool(b) => Some(*b),
            Scalar::Unsigned(0) => Some(false),
            Scalar::Unsigned(1) => Some(true),
            _ => None,
        }
    }

    /// As a list: the elements of an array a table names; anything else is no list.
    pub fn list(&self) -> Option<&[Item<'a>]> {
        match self {
            Scalar::List(items) => Some(items),
            _ => None,
        }
    }

    /// As a code (`relation`): an integer that fits an `i64`; anything else 0.
    pub fn code(&self) -> i64 {
        match self {
            Scalar::Negative(n) => *n,
            Scalar::Unsigned(n) => i64::try_from(*n).unwrap_or(0),
            _ => 0,
        }
    }
}

pub(super) struct ScalarVisitor;

/// The `Visitor` methods of every scalar JSON value for a visitor that reads containers its
/// own way: each value is read as a [`Scalar`] (by [`ScalarVisitor`]'s rules) and handed to
/// the visitor's method `$on`, whose result is the visited value. For the modules beside this
/// one (the known-place readers and the search).
macro_rules! visit_scalars_with {
    ($on:ident -> $value:ty) => {
        visit_scalars_with!(@each $on -> $value;
            visit_borrowed_str(v: &'de str);
            visit_str(v: &str);
            visit_string(v: String);
            visit_u64(v: u64);
            visit_i64(v: i64);
            visit_f64(v: f64);
            visit_bool(v: bool);
            visit_unit();
            visit_none();
        );
    };
    (@each $on:ident -> $value:ty; $($method:ident($($arg:ident: $ty:ty)?);)*) => {
        $(fn $method<E: serde::de::Error>(self, $($arg: $ty)?) -> Result<$value, E> {
            let value = super::scalar::ScalarVisitor.$method($($arg)?)?;
            Ok(self.$on(value))
        })*
    };
}
pub(super) use visit_scalars_with;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Text(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Text(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Text(Cow::Owned(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Unsigned(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar<'de>, E> {
        Ok(u64::try_from(v).map_or(Scalar::Negative(v), Scalar::Unsigned))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Float(v))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Bool(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Scalar<'de>, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Container)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Container)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

/// Reads the elements of an array into a [`Scalar::List`]: strings and objects' link members,
/// the first [`MAX_ITEMS`] usable ones; every other element, and every element past those, is
/// skipped unread.
pub(super) fn read_list<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Scalar<'de>, A::Error> {
    let mut items = Vec::new();
    while items.len() < MAX_ITEMS {
        match seq.next_element::<Element<'de>>()? {
            Some(Element(Some(item))) => items.push(item),
            Some(Element(None)) => {}
            None => return Ok(Scalar::List(items)),
        }
    }
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(Scalar::List(items))
}

/// One element of a list field, `None` when it is neither a string nor an object.
struct Element<'a>(Option<Item<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Element<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ElementVisitor)
    }
}

struct ElementVisitor;

impl<'de> Visitor<'de> for ElementVisitor {
    type Value = Element<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list element")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Element<'de>, E> {
        Ok(Element(Some(Item::Text(Cow::Borrowed(v)))))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Element<'de>, E> {
        Ok(Element(Some(Item::Text(Cow::Owned(v.to_owned())))))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Element<'de>, E> {
        Ok(Element(Some(Item::Text(Cow::Owned(v)))))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Element<'de>, E> {
        Ok(Element(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Element<'de>, E> {
        Ok(Element(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Element<'de>, E> {
        Ok(Element(None))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Element<'de>, E> {
        Ok(Element(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Element<'de>, E> {
        Ok(Element(None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Element<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Element(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Element<'de>, A::Error> {
        let (mut url, mut lynx_url, mut title) = (Cow::default(), Cow::default(), Cow::default());
        while let Some(super::Text(key)) = map.next_key::<super::Text<'de>>()? {
            let slot = match key.as_ref() {
                "url" => &mut url,
                "lynx_url" => &mut lynx_url,
                "title" => &mut title,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = map.next_value::<Scalar<'de>>()?.text().unwrap_or_default();
        }
        Ok(Element(Some(Item::Link {
            url,
            lynx_url,
            title,
        })))
    }
}
