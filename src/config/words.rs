//! Enum-like settings (one word out of a few): read by name, and refused with the allowed
//! words listed, the one message every such setting gives ([`Words`]).
//!
//! serde's and the `config` crate's own messages for an unknown word name the Rust type
//! (`enum LogFormat does not have variant constructor jsonl`); a setting read through
//! [`read`] says what it is and which words it takes instead.

use serde::{Deserialize, Deserializer};

/// A setting that is one of a few words.
pub trait Words: Copy + 'static {
    /// What the setting is, for the message (`"a log format"`).
    const WHAT: &'static str;
    /// Every word and the value it stands for, in the order the message lists them.
    const ALL: &'static [(&'static str, Self)];
}

/// The allowed words, quoted and comma-separated: `"pretty", "json"`.
pub fn allowed(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("{w:?}")).collect();
    quoted.join(", ")
}

/// The value `word` stands for, or the message naming the allowed words.
pub fn parse<T: Words>(word: &str) -> Result<T, String> {
    T::ALL
        .iter()
        .find(|(name, _)| *name == word)
        .map(|&(_, value)| value)
        .ok_or_else(|| {
            let names: Vec<&str> = T::ALL.iter().map(|(name, _)| *name).collect();
            format!(
                "{word:?} is not {}; allowed values: {}",
                T::WHAT,
                allowed(&names)
            )
        })
}

/// The word for `value` (for logs and summaries, as the configuration writes it).
pub fn name<T: Words + PartialEq>(value: T) -> &'static str {
    T::ALL
        .iter()
        .find(|(_, v)| *v == value)
        .map_or("", |(name, _)| name)
}

/// Deserializes a [`Words`] setting from its word (`#[serde(deserialize_with = ...)]` or a
/// `Deserialize` impl's body).
pub fn read<'de, T: Words, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    let word = String::deserialize(d)?;
    parse(&word).map_err(serde::de::Error::custom)
}

/// Implements `Deserialize` for a [`Words`] type through [`read`].
macro_rules! deserialize_words {
    ($ty:ty) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::config::words::read(d)
            }
        }
    };
}

pub(crate) use deserialize_words;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Colour {
        Red,
        Blue,
    }

    impl Words for Colour {
        const WHAT: &'static str = "a colour";
        const ALL: &'static [(&'static str, Self)] =
            &[("red", Colour::Red), ("blue", Colour::Blue)];
    }

    #[test]
    fn a_word_is_read_or_refused_with_the_allowed_ones() {
        assert_eq!(parse::<Colour>("blue"), Ok(Colour::Blue));
        assert_eq!(
            parse::<Colour>("Blue"),
            Err("\"Blue\" is not a colour; allowed values: \"red\", \"blue\"".to_owned())
        );
    }
}
