//! What a `<` opens, and how far a tag, a comment or a bogus comment reaches: the
//! tokenizer's tag, attribute and comment states, each a function from a position to the next.

use crate::cost::{self, find};

use super::Tag;

/// What a `<` opens.
#[derive(Clone, Copy, Debug)]
pub(super) enum Markup<'a> {
    /// A comment, end tag, doctype or bogus comment ending just before this position.
    Skip(usize),
    /// A start tag, and the position just after its `>`.
    Start(Tag<'a>, usize),
    /// A start or end tag that the page ends inside.
    Unclosed,
}

/// What the `<` at `lt` opens, or `None` when it is just text.
pub(super) fn markup_at(html: &[u8], lt: usize) -> Option<Markup<'_>> {
    let after = &html[lt + 1..];
    match after.first()? {
        b if b.is_ascii_alphabetic() => {
            let (name_len, end) = tag_extent(after);
            let Some(end) = end else {
                return Some(Markup::Unclosed);
            };
            let tag = Tag {
                name: &after[..name_len],
                attrs: &after[name_len..end],
            };
            Some(Markup::Start(tag, lt + 1 + end + 1))
        }
        b'!' if after.starts_with(b"!--") => Some(Markup::Skip(comment_end(html, lt + 4))),
        b'!' | b'?' => Some(Markup::Skip(bogus_comment_end(html, lt + 2))),
        b'/' => match after.get(1)? {
            b if b.is_ascii_alphabetic() => match tag_extent(&after[1..]).1 {
                Some(end) => Some(Markup::Skip(lt + 2 + end + 1)),
                None => Some(Markup::Unclosed),
            },
            b'>' => Some(Markup::Skip(lt + 3)),
            _ => Some(Markup::Skip(bogus_comment_end(html, lt + 2))),
        },
        _ => None,
    }
}

/// The position just after a comment whose text starts at `start` (just after `<!--`).
fn comment_end(html: &[u8], start: usize) -> usize {
    let body = &html[start.min(html.len())..];
    if body.starts_with(b">") {
        return start + 1;
    }
    if body.starts_with(b"->") {
        return start + 2;
    }
    let mut from = 0;
    while let Some(at) = find(&body[from..], b"--") {
        let dashes = from + at;
        match &body[dashes + 2..] {
            [b'>', ..] => return start + dashes + 3,
            [b'!', b'>', ..] => return start + dashes + 4,
            _ => from = dashes + 1,
        }
    }
    html.len()
}

/// The position just after the first `>` at or after `from` (the page's end when none).
fn bogus_comment_end(html: &[u8], from: usize) -> usize {
    html.get(from..)
        .and_then(|rest| cost::memchr(b'>', rest))
        .map_or(html.len(), |at| from + at + 1)
}

/// For a tag starting with its name: the name's length, and the position of the `>` that ends
/// the tag (`None` when the page ends first).
///
/// A page has thousands of tags and the readers look at few of them, so this is the tokenizer's
/// hot loop: it follows the attribute states (a `>` inside a quoted value does not end the
/// tag) with the byte classes of [`CLASS`], and counts the tag's bytes once.
fn tag_extent(s: &[u8]) -> (usize, Option<usize>) {
    let name_len = run(s, 0, SPACE | SLASH | GT);
    let mut at = name_len;
    let end = loop {
        match lex_attr(s, at) {
            Lexed::Attr { next, .. } => at = next,
            Lexed::End(end) => break Some(end),
            Lexed::Eof => break None,
        }
    };
    cost::examined(end.map_or(s.len(), |end| end + 1));
    (name_len, end)
}

/// One step of reading a tag's attributes.
pub(super) enum Lexed {
    /// An attribute's name and value (byte ranges), and where reading goes on.
    Attr {
        name: (usize, usize),
        value: (usize, usize),
        next: usize,
    },
    /// The `>` that ends the tag, at this position.
    End(usize),
    /// The text ends inside the tag.
    Eof,
}

/// Reads the next attribute of a tag from `at`, following the tokenizer's attribute states:
/// a name runs to whitespace, `/`, `>` or `=` (a leading `=` and any quote belong to it); a
/// value is quoted with `"` or `'` (and may then hold `>`) or runs to whitespace or `>`.
pub(super) fn next_attr(s: &[u8], at: usize) -> Lexed {
    let lexed = lex_attr(s, at);
    let end = match lexed {
        Lexed::Attr { next, .. } => next,
        Lexed::End(end) => end + 1,
        Lexed::Eof => s.len(),
    };
    cost::examined(end - at);
    lexed
}

/// Whitespace (with CR, which the input stream turns into LF): a class of [`CLASS`].
const SPACE: u8 = 1;
/// `/`: a class of [`CLASS`].
const SLASH: u8 = 2;
/// `>`: a class of [`CLASS`].
const GT: u8 = 4;
/// `=`: a class of [`CLASS`].
const EQ: u8 = 8;

/// The classes of the bytes that end a run in a tag, so each run is one table-driven loop.
static CLASS: [u8; 256] = {
    let mut class = [0; 256];
    class[b' ' as usize] = SPACE;
    class[b'\t' as usize] = SPACE;
    class[b'\n' as usize] = SPACE;
    class[b'\r' as usize] = SPACE;
    class[0x0c] = SPACE;
    class[b'/' as usize] = SLASH;
    class[b'>' as usize] = GT;
    class[b'=' as usize] = EQ;
    class
};

/// The position of the first byte at or after `at` in one of the classes `stop` (or the end).
#[inline]
fn run(s: &[u8], at: usize, stop: u8) -> usize {
    s.get(at..)
        .and_then(|rest| rest.iter().position(|&b| CLASS[b as usize] & stop != 0))
        .map_or(s.len(), |len| at + len)
}

/// The position of the first byte at or after `at` outside the classes `over` (or the end).
#[inline]
fn skip(s: &[u8], at: usize, over: u8) -> usize {
    s.get(at..)
        .and_then(|rest| rest.iter().position(|&b| CLASS[b as usize] & over == 0))
        .map_or(s.len(), |len| at + len)
}

/// The position of `quote` in `s` from `from` (or the end). Most values are short, where a
/// plain loop beats the setup of a vector search.
#[inline]
fn closing(s: &[u8], from: usize, quote: u8) -> usize {
    let rest = &s[from.min(s.len())..];
    let head = rest.len().min(32);
    rest[..head]
        .iter()
        .position(|&b| b == quote)
        .or_else(|| memchr::memchr(quote, &rest[head..]).map(|at| head + at))
        .map_or(s.len(), |at| from + at)
}

/// [`next_attr`] without the count of the bytes it examined.
fn lex_attr(s: &[u8], at: usize) -> Lexed {
    let at = skip(s, at, SPACE | SLASH);
    match s.get(at) {
        None => return Lexed::Eof,
        Some(b'>') => return Lexed::End(at),
        Some(_) => {}
    }
    let name = (at, run(s, at + 1, SPACE | SLASH | GT | EQ));
    let at = skip(s, name.1, SPACE);
    if s.get(at) != Some(&b'=') {
        return Lexed::Attr {
            name,
            value: (at, at),
            next: at,
        };
    }
    let at = skip(s, at + 1, SPACE);
    match s.get(at) {
        Some(&quote @ (b'"' | b'\'')) => {
            let end = closing(s, at + 1, quote);
            Lexed::Attr {
                name,
                value: (at + 1, end),
                next: (end + 1).min(s.len()),
            }
        }
        _ => {
            let end = run(s, at, SPACE | GT);
            Lexed::Attr {
                name,
                value: (at, end),
                next: end,
            }
        }
    }
}

/// HTML whitespace (with CR, which the input stream turns into LF).
pub(super) fn is_space(b: u8) -> bool {
    CLASS[b as usize] == SPACE
}
