//! JSON string literals as the sample documents write them: what JSON requires is written
//! here once, and each platform shape adds its own spellings (`\u002F`, `\/`, `\u003C`, …).

use std::fmt::Write as _;

/// Appends `s` as a JSON string literal, quotes included. `shape` writes a character the way
/// the document's shape spells it and returns true, or returns false for the plain rule:
/// `"` and `\` escaped, `\n` as itself, other control characters as `\u00XX`, the rest raw.
pub(crate) fn push_json_str(out: &mut String, s: &str, shape: impl Fn(&mut String, char) -> bool) {
    out.push('"');
    for c in s.chars() {
        if shape(out, c) {
            continue;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
