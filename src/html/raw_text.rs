//! The elements whose content holds no markup, and where that content ends: the tokenizer's
//! raw-text, RCDATA and script-data states.

use crate::cost::{find, memchr, memchr2};

use super::markup::is_space;

/// The content of an element that holds no markup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Content {
    /// `<script>`: raw text with the script escape rules.
    Script,
    /// Raw text or RCDATA: ends at the element's own end tag.
    Text,
    /// `<plaintext>`: the rest of the page.
    Rest,
}

/// What a start tag named `name` switches the tokenizer to, if not the ordinary data state.
pub(super) fn content_of(name: &[u8]) -> Option<Content> {
    const TEXT: [&[u8]; 9] = [
        b"style",
        b"xmp",
        b"iframe",
        b"noembed",
        b"noframes",
        b"noscript",
        b"title",
        b"textarea",
        b"plaintext",
    ];
    if name.eq_ignore_ascii_case(b"script") {
        return Some(Content::Script);
    }
    let at = TEXT.iter().position(|t| name.eq_ignore_ascii_case(t))?;
    Some(if at == TEXT.len() - 1 {
        Content::Rest
    } else {
        Content::Text
    })
}

/// Whether `s` starts with `name` (ASCII case-insensitive) followed by whitespace, `/` or `>`:
/// the only way a tag name ends the tokenizer's raw-text and script states.
fn names(s: &[u8], name: &[u8]) -> bool {
    s.len() > name.len()
        && s[..name.len()].eq_ignore_ascii_case(name)
        && (is_space(s[name.len()]) || matches!(s[name.len()], b'/' | b'>'))
}

/// Length of raw text or RCDATA: up to the element's own end tag (`</name` then a delimiter).
pub(super) fn text_len(s: &[u8], name: &[u8]) -> usize {
    let mut from = 0;
    while let Some(at) = find(&s[from..], b"</") {
        let lt = from + at;
        if names(&s[lt + 2..], name) {
            return lt;
        }
        from = lt + 2;
    }
    s.len()
}

/// Length of script data, following the tokenizer's script states: `<!--` escapes, a
/// `<script` inside an escape "double-escapes" until its `</script`, and `-->` ends either.
pub(super) fn script_len(s: &[u8]) -> usize {
    const SCRIPT: &[u8] = b"script";
    #[derive(PartialEq)]
    enum State {
        Data,
        Escaped,
        DoubleEscaped,
    }
    let mut state = State::Data;
    let mut at = 0;
    loop {
        if state == State::Data {
            let Some(found) = memchr(b'<', &s[at..]) else {
                return s.len();
            };
            let lt = at + found;
            let after = &s[lt + 1..];
            if after.first() == Some(&b'/') && names(&after[1..], SCRIPT) {
                return lt;
            }
            if after.starts_with(b"!--") {
                // Resume at the escape's own dashes: `<!-->` and `<!--->` end it at once.
                state = State::Escaped;
                at = lt + 2;
            } else {
                at = lt + 1;
            }
            continue;
        }
        let Some(found) = memchr2(b'-', b'<', &s[at..]) else {
            return s.len();
        };
        let hit = at + found;
        let rest = &s[hit..];
        if rest.starts_with(b"-->") {
            state = State::Data;
            at = hit + 3;
        } else if rest.starts_with(b"</") && names(&rest[2..], SCRIPT) {
            if state == State::Escaped {
                return hit;
            }
            state = State::Escaped;
            at = hit + 2 + SCRIPT.len() + 1;
        } else if state == State::Escaped && rest[0] == b'<' && names(&rest[1..], SCRIPT) {
            state = State::DoubleEscaped;
            at = hit + 1 + SCRIPT.len() + 1;
        } else {
            at = hit + 1;
        }
    }
}
