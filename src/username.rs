//! The validated, lowercased username: the only way a caller's text reaches an upstream URL.
//!
//! Every rule here exists because the name ends up in a URL path segment or query pair on a
//! third-party host: `.`/`..` would move the URL, `/`, `?`, `#`, `@` and `%` would change its
//! meaning, and control characters would poison logs and headers. Checking happens before any
//! other work, so a bad name costs nothing upstream.
//!
//! A name's length bounds are its [`Platform`]'s, as registered in [`crate::registry`].

use std::fmt;

use crate::registry::Platform;

/// A username that passed its platform's format rule, stored lowercased.
///
/// Usernames are case-insensitive on both platforms, so `Foo` and `foo` are one `Username`
/// (equal, same hash) and therefore share one cache entry and one upstream request.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Username {
    platform: Platform,
    name: Box<str>,
}

/// Whom a document must be about: the name a lookup asked for or, when a saved document is
/// read without a name (`profile-lookup extract`), whoever it is about.
#[derive(Clone, Copy, Debug)]
pub enum Subject<'a> {
    /// The document must be about this user.
    Named(&'a Username),
    /// The document's own user is wanted, whoever it is.
    Anyone,
}

impl<'a> Subject<'a> {
    /// Whether a name a document claims is the subject (always, for [`Subject::Anyone`]).
    pub fn matches(self, claimed: &str) -> bool {
        match self {
            Subject::Named(name) => name.matches(claimed),
            Subject::Anyone => true,
        }
    }

    /// The name asked for, if one was.
    pub fn name(self) -> Option<&'a str> {
        match self {
            Subject::Named(name) => Some(name.as_str()),
            Subject::Anyone => None,
        }
    }
}

impl<'a> From<&'a Username> for Subject<'a> {
    fn from(name: &'a Username) -> Self {
        Subject::Named(name)
    }
}

impl fmt::Display for Subject<'_> {
    /// The name for a log line: the checked name, or `anyone`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name().unwrap_or("anyone"))
    }
}

/// Why a raw username was refused; its `Display` is the `detail` of the 400 problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}. {rule}")]
pub struct UsernameError {
    reason: std::borrow::Cow<'static, str>,
    rule: String,
}

impl Username {
    /// Checks `raw` against `platform`'s rule and lowercases it.
    pub fn parse(platform: Platform, raw: &str) -> Result<Self, UsernameError> {
        let (min, max) = platform.username_len();
        let fail = |reason: std::borrow::Cow<'static, str>| {
            Err(UsernameError {
                reason,
                rule: rule_text(min, max),
            })
        };
        let bytes = raw.as_bytes();
        if bytes.len() < min {
            return fail("the username is too short".into());
        }
        if bytes.len() > max {
            return fail("the username is too long".into());
        }
        if let Some((at, bad)) = raw
            .chars()
            .enumerate()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '.' || *c == '_'))
        {
            return fail(format!("{} at position {} is not allowed", shown(bad), at + 1).into());
        }
        if bytes[0] == b'.' {
            return fail("the username starts with '.'".into());
        }
        if bytes[bytes.len() - 1] == b'.' {
            return fail("the username ends with '.'".into());
        }
        if raw.contains("..") {
            return fail("the username has two '.' in a row".into());
        }
        Ok(Self {
            platform,
            name: raw.to_ascii_lowercase().into_boxed_str(),
        })
    }

    /// Whether a name a document claims (in the platform's spelling) is this one.
    ///
    /// Extractors call this (through [`Subject`]) to refuse a page about somebody else (a
    /// redirect to another profile, a suggested user).
    pub fn matches(&self, claimed: &str) -> bool {
        claimed.eq_ignore_ascii_case(&self.name)
    }

    /// The lowercased name, safe to place in a URL path segment or query value.
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// The platform whose rule this name passed.
    pub fn platform(&self) -> Platform {
        self.platform
    }
}

impl fmt::Display for Username {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// A refused character as the error names it: quoted when it is visible ASCII (`` `@` ``), its
/// code point otherwise (`U+0000`, `U+00FF`), so no control character, space or look-alike
/// reaches a caller's screen or a log unmarked.
fn shown(c: char) -> String {
    if c.is_ascii_graphic() && c != '`' {
        format!("`{c}`")
    } else {
        format!("U+{:04X}", u32::from(c))
    }
}

/// The rule as a regular expression (ECMA-262, as OpenAPI's `pattern` takes it), for the
/// OpenAPI document; [`Username::parse`] is the rule itself and a test holds them equal.
pub const PATTERN: &str = r"^[A-Za-z0-9_](?:[A-Za-z0-9_]|\.(?!\.))*(?<!\.)$";

/// The rule as the OpenAPI document's parameter description states it.
pub fn rule_summary(min: usize, max: usize) -> String {
    format!(
        "{min} to {max} ASCII letters, digits, '.' and '_'; starts with a letter, digit or '_', \
         does not end with '.', no '..'. Case-insensitive."
    )
}

/// The rule as a caller reads it in the error's `detail`.
pub fn rule_text(min: usize, max: usize) -> String {
    format!(
        "A username is {min} to {max} characters of ASCII letters, digits, '.' and '_'; \
         it starts with a letter, digit or '_', does not end with '.', \
         and has no two '.' in a row"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercases_and_accepts_the_allowed_alphabet() {
        let name = Username::parse(Platform::ShortVideo, "Example_User.9").unwrap();
        assert_eq!(name.as_str(), "example_user.9");
        assert_eq!(
            name,
            Username::parse(Platform::ShortVideo, "EXAMPLE_USER.9").unwrap()
        );
        assert!(Username::parse(Platform::PhotoShare, "_x").is_ok());
        assert!(Username::parse(Platform::PhotoShare, "a").is_ok());
    }

    #[test]
    fn a_bad_character_is_named_with_its_position() {
        for (raw, says) in [
            ("@someone", "`@` at position 1 is not allowed"),
            ("some@one", "`@` at position 5 is not allowed"),
            ("x y", "U+0020 at position 2 is not allowed"),
            ("x\0y", "U+0000 at position 2 is not allowed"),
            ("aÿ", "U+00FF at position 2 is not allowed"),
            ("a`b", "U+0060 at position 2 is not allowed"),
        ] {
            let err = Username::parse(Platform::PhotoShare, raw).unwrap_err();
            let text = err.to_string();
            assert!(text.starts_with(says), "{raw:?}: {text}");
            assert!(text.contains("ASCII letters"), "the rule follows: {text}");
        }
    }

    #[test]
    fn refuses_everything_that_could_move_a_url() {
        for raw in [
            "",
            ".",
            "..",
            "a..b",
            ".x",
            "x.",
            "a/b",
            "../../admin",
            "x?admin=1",
            "x#frag",
            "@evil.example",
            "x@y",
            "ÿ",
            "x\0y",
            "x\r\nX-Injected: 1",
            "x y",
            "a%2Fb",
            "-x",
        ] {
            assert!(
                Username::parse(Platform::PhotoShare, raw).is_err(),
                "{raw:?} was accepted"
            );
        }
    }

    #[test]
    fn enforces_each_platforms_lengths() {
        assert!(Username::parse(Platform::ShortVideo, "a").is_err());
        assert!(Username::parse(Platform::ShortVideo, &"a".repeat(24)).is_ok());
        assert!(Username::parse(Platform::ShortVideo, &"a".repeat(25)).is_err());
        assert!(Username::parse(Platform::PhotoShare, &"a".repeat(30)).is_ok());
        assert!(Username::parse(Platform::PhotoShare, &"a".repeat(31)).is_err());
        assert!(Username::parse(Platform::PhotoShare, &"a".repeat(10_000)).is_err());
    }

    #[test]
    fn matches_case_insensitively_and_anyone_matches_all() {
        let name = Username::parse(Platform::ShortVideo, "Foo.Bar").unwrap();
        assert!(name.matches("FOO.bar"));
        assert!(!name.matches("foo.baz"));
        assert!(!name.matches(""), "an empty claim is nobody");
        assert!(Subject::Named(&name).matches("foo.BAR"));
        assert!(!Subject::Named(&name).matches("foo.baz"));
        assert!(Subject::Anyone.matches("whoever"));
        assert_eq!(Subject::Anyone.name(), None);
    }

    #[test]
    fn the_error_states_the_rule() {
        let err = Username::parse(Platform::ShortVideo, "a/b").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("2 to 24 characters"), "{text}");
        assert!(text.contains("not allowed"), "{text}");
    }
}
