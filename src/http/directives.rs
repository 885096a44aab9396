//! The caller's freshness wishes: the `Cache-Control` request directives of RFC 9111 §5.2.1
//! that a lookup honours, read into a [`Wants`].
//!
//! - `max-age=N`: no stored answer older than N seconds (a fresh fetch, through the one flight);
//! - `no-cache`: the same with N = 0;
//! - `max-stale[=N]`: a found profile up to N seconds past its TTL is acceptable (any, without
//!   N);
//! - `only-if-cached`: answer from what is stored or not at all (504 `not_cached`).
//!
//! Read as RFC 9111 asks: every `Cache-Control` field line, comma-separated directives with
//! optional whitespace, names in any case, values as a token or a quoted string (`"5"` is 5),
//! unknown directives and unusable values (`max-age=soon`, `max-age=-1`) ignored, a number past
//! 2^31 read as 2^31 (§1.2.2). When a directive comes twice the stricter value wins. The work is
//! one pass over the bytes, and stops after [`MAX_DIRECTIVES`] directives: a hostile header
//! costs no more than its length, which the server already bounds.

use std::convert::Infallible;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};

use crate::cache::Wants;

/// The most directives read from one request; the rest are ignored.
pub const MAX_DIRECTIVES: usize = 64;
/// What a delta-seconds value larger than this is read as (RFC 9111 §1.2.2).
const DELTA_SECONDS_CAP: u64 = 1 << 31;

/// A lookup's freshness wishes, as an extractor: never refuses a request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Directives(pub Wants);

impl<S: Send + Sync> FromRequestParts<S> for Directives {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        Ok(Directives(read(&parts.headers)))
    }
}

/// The wishes every `Cache-Control` line of `headers` states.
pub fn read(headers: &HeaderMap) -> Wants {
    let mut wants = Wants::default();
    let mut budget = MAX_DIRECTIVES;
    for line in headers.get_all(header::CACHE_CONTROL) {
        let mut rest = line.as_bytes();
        while budget > 0 {
            let Some((directive, after)) = next_directive(rest) else {
                break;
            };
            rest = after;
            budget -= 1;
            if let Some(directive) = directive {
                apply(&mut wants, directive);
            }
        }
    }
    wants
}

/// One directive as written: its name and its value, quotes removed (escapes left in).
struct Directive<'a> {
    name: &'a [u8],
    value: Option<&'a [u8]>,
}

fn apply(wants: &mut Wants, d: Directive<'_>) {
    let stricter = |old: Option<u64>, new: u64| Some(old.map_or(new, |o| o.min(new)));
    if d.name.eq_ignore_ascii_case(b"max-age") {
        if let Some(n) = d.value.and_then(delta_seconds) {
            wants.max_age = stricter(wants.max_age, n);
        }
    } else if d.name.eq_ignore_ascii_case(b"no-cache") {
        wants.max_age = Some(0);
    } else if d.name.eq_ignore_ascii_case(b"max-stale") {
        match d.value {
            None => wants.max_stale = stricter(wants.max_stale, u64::MAX),
            Some(v) => {
                if let Some(n) = delta_seconds(v) {
                    wants.max_stale = stricter(wants.max_stale, n);
                }
            }
        }
    } else if d.name.eq_ignore_ascii_case(b"only-if-cached") {
        wants.only_if_cached = true;
    }
}

/// A delta-seconds value: one or more digits, capped at 2^31.
fn delta_seconds(v: &[u8]) -> Option<u64> {
    if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut n: u64 = 0;
    for &digit in v {
        n = n * 10 + u64::from(digit - b'0');
        if n > DELTA_SECONDS_CAP {
            return Some(DELTA_SECONDS_CAP);
        }
    }
    Some(n)
}

/// The next list element of `s`: `Some((Some(directive), rest))` for a well-formed one,
/// `Some((None, rest))` for a malformed one (skipped up to its comma), `None` at the end.
fn next_directive(s: &[u8]) -> Option<(Option<Directive<'_>>, &[u8])> {
    let s = skip(s, |b| is_ows(b) || b == b',');
    if s.is_empty() {
        return None;
    }
    let name_len = s.iter().take_while(|&&b| is_tchar(b)).count();
    if name_len == 0 {
        return Some((None, past_element(s)));
    }
    let (name, rest) = s.split_at(name_len);
    let rest = skip(rest, is_ows);
    let (value, rest) = match rest.first() {
        Some(b'=') => {
            let rest = skip(&rest[1..], is_ows);
            match value(rest) {
                Some(split) => split,
                None => return Some((None, past_element(rest))),
            }
        }
        _ => (None, rest),
    };
    let rest = skip(rest, is_ows);
    match rest.first() {
        None | Some(b',') => Some((Some(Directive { name, value }), rest)),
        // Anything else before the comma: the element is malformed.
        Some(_) => Some((None, past_element(rest))),
    }
}

/// A token or a quoted string at the start of `s`, and what follows it; `None` when neither.
fn value(s: &[u8]) -> Option<(Option<&[u8]>, &[u8])> {
    if s.first() == Some(&b'"') {
        let mut i = 1;
        while i < s.len() {
            match s[i] {
                b'\\' => i += 2,
                b'"' => return Some((Some(&s[1..i]), &s[i + 1..])),
                _ => i += 1,
            }
        }
        return None;
    }
    let len = s.iter().take_while(|&&b| is_tchar(b)).count();
    (len > 0).then(|| (Some(&s[..len]), &s[len..]))
}

/// `s` after the element it starts in: past the next comma outside a quoted string.
fn past_element(s: &[u8]) -> &[u8] {
    let mut quoted = false;
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'\\' if quoted => i += 1,
            b'"' => quoted = !quoted,
            b',' if !quoted => return &s[i..],
            _ => {}
        }
        i += 1;
    }
    &[]
}

fn skip(s: &[u8], what: impl Fn(u8) -> bool) -> &[u8] {
    let n = s.iter().take_while(|&&b| what(b)).count();
    &s[n..]
}

fn is_ows(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// RFC 9110 §5.6.2's `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn wants(lines: &[&str]) -> Wants {
        let mut headers = HeaderMap::new();
        for line in lines {
            headers.append(header::CACHE_CONTROL, HeaderValue::from_str(line).unwrap());
        }
        read(&headers)
    }

    fn max_age(n: u64) -> Wants {
        Wants {
            max_age: Some(n),
            ..Wants::default()
        }
    }

    #[test]
    fn no_header_asks_nothing() {
        assert_eq!(wants(&[]), Wants::default());
        assert_eq!(wants(&[""]), Wants::default());
    }

    #[test]
    fn each_directive_is_read() {
        assert_eq!(wants(&["max-age=30"]), max_age(30));
        assert_eq!(wants(&["no-cache"]), max_age(0));
        assert_eq!(
            wants(&["max-stale=60"]),
            Wants {
                max_stale: Some(60),
                ..Wants::default()
            }
        );
        assert_eq!(wants(&["max-stale"]).max_stale, Some(u64::MAX));
        assert!(wants(&["only-if-cached"]).only_if_cached);
    }

    #[test]
    fn several_directives_lines_case_whitespace_and_quotes() {
        let w = wants(&[
            "Max-Age = \"20\" ,\tONLY-IF-CACHED",
            " , max-stale=5,foo=\"a,b\", bar",
        ]);
        assert_eq!(
            w,
            Wants {
                max_age: Some(20),
                max_stale: Some(5),
                only_if_cached: true,
            }
        );
    }

    #[test]
    fn bad_values_are_ignored_and_the_stricter_value_wins() {
        for bad in [
            "max-age=soon",
            "max-age=-1",
            "max-age=",
            "max-age=1.5",
            "max-age=\"\"",
            "max-age=\"7",
            "max-age 7",
            "max-age=7 8",
            "=7",
            "max-age=\"a\\\"b\"",
        ] {
            assert_eq!(wants(&[bad]).max_age, None, "{bad}");
        }
        assert_eq!(wants(&["max-age=9, max-age=3, max-age=5"]), max_age(3));
        assert_eq!(wants(&["max-age=0", "max-age=60"]), max_age(0));
        // A malformed element does not hide the next one.
        assert_eq!(wants(&["max-age=\"x, y\" z, no-cache"]), max_age(0));
        assert_eq!(wants(&["@@@, max-age=4"]), max_age(4));
    }

    #[test]
    fn huge_numbers_are_two_to_the_31() {
        assert_eq!(
            wants(&["max-age=99999999999999999999999999"]),
            max_age(1 << 31)
        );
        assert_eq!(wants(&["max-age=2147483648"]), max_age(1 << 31));
        assert_eq!(wants(&["max-age=2147483647"]), max_age((1 << 31) - 1));
    }

    #[test]
    fn a_hostile_header_is_read_in_bounded_work() {
        // Thousands of directives: only the first MAX_DIRECTIVES count.
        let many = "x,".repeat(10_000) + "no-cache";
        assert_eq!(wants(&[&many]), Wants::default());
        let first = "no-cache,".to_owned() + &"y,".repeat(10_000);
        assert_eq!(wants(&[&first]), max_age(0));
        // An unterminated quote swallows the rest of its line, not the next line.
        let w = wants(&[&format!("a=\"{}", "\\\"".repeat(5_000)), "max-age=2"]);
        assert_eq!(w, max_age(2));
    }
}
