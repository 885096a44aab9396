//! Finding one member of a large JSON object without parsing the others.
//!
//! The platforms' state objects are hundreds of kilobytes, and the profile is one small member
//! of them. serde skips the rest byte by byte; this module skims it instead: strings are jumped
//! through with `memchr`, and containers are matched by a depth counter (no recursion, so no
//! nesting depth can overflow the stack). Only the structure needed to find member boundaries
//! is checked; the member that is returned is then parsed, and so validated, by serde.
//!
//! The text of a key is compared as written, so a key spelled with escapes never matches.

use crate::cost;

/// The raw text of the value of each of `keys` in the JSON object that `json` holds (leading
/// and trailing whitespace allowed), in one pass; `None` for keys that are absent.
///
/// Reading stops as soon as every key is found, so what follows (even a broken end) is never
/// looked at. `Err` when `json` is not an object or its structure breaks before the keys are
/// settled. The first occurrence of a duplicated key wins.
pub fn members<'a, const N: usize>(
    json: &'a [u8],
    keys: [&str; N],
) -> Result<[Option<&'a [u8]>; N], SkimError> {
    let mut found = [None; N];
    walk(json, |key, value_start| {
        let value_end = value_end(json, value_start)?;
        for (slot, wanted) in found.iter_mut().zip(keys) {
            if slot.is_none() && key == wanted.as_bytes() {
                *slot = Some(&json[value_start..value_end]);
            }
        }
        // Everything asked for is here: the rest of the object is never read.
        let done = found.iter().all(Option::is_some);
        Ok(if done {
            Walk::Stop
        } else {
            Walk::Next(value_end)
        })
    })?;
    Ok(found)
}

/// The text from the start of member `key`'s value to the end of `json`: a way into a member
/// without first finding where it ends (which would mean reading all of it).
///
/// The caller reads the returned text with [`members`], which stops at the member's own end.
pub fn descend<'a>(json: &'a [u8], key: &str) -> Result<Option<&'a [u8]>, SkimError> {
    let mut start = None;
    walk(json, |name, value_start| {
        if name == key.as_bytes() {
            start = Some(value_start);
            Ok(Walk::Stop)
        } else {
            Ok(Walk::Next(value_end(json, value_start)?))
        }
    })?;
    Ok(start.map(|at| &json[at..]))
}

/// What the visitor of [`walk`] wants next.
enum Walk {
    /// Continue after the value, which ends at this offset.
    Next(usize),
    /// Stop reading.
    Stop,
}

/// Calls `visit(name, value_start)` for each member of the object in `json`, in order, until
/// it says stop or the object ends.
fn walk<'a>(
    json: &'a [u8],
    mut visit: impl FnMut(&'a [u8], usize) -> Result<Walk, SkimError>,
) -> Result<(), SkimError> {
    let mut at = ws_end(json, 0);
    if json.get(at) != Some(&b'{') {
        return Err(SkimError("not an object"));
    }
    at = ws_end(json, at + 1);
    if json.get(at) == Some(&b'}') {
        return Ok(());
    }
    loop {
        if json.get(at) != Some(&b'"') {
            return Err(SkimError("a member name was expected"));
        }
        let key_end = string_end(json, at)?;
        let key = &json[at + 1..key_end - 1];
        at = ws_end(json, key_end);
        if json.get(at) != Some(&b':') {
            return Err(SkimError("':' was expected after a member name"));
        }
        let value_end = match visit(key, ws_end(json, at + 1))? {
            Walk::Stop => return Ok(()),
            Walk::Next(end) => end,
        };
        at = ws_end(json, value_end);
        match json.get(at) {
            Some(b',') => at = ws_end(json, at + 1),
            Some(b'}') => return Ok(()),
            _ => return Err(SkimError("',' or '}' was expected after a member")),
        }
    }
}

/// Why a JSON text could not be skimmed (for the log; never quotes the input).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the JSON breaks off or is malformed: {0}")]
pub struct SkimError(&'static str);

/// `s` without its leading JSON whitespace (space, tab, LF, CR): the one definition, for the
/// skimmer and for the readers that look at the bytes around a key themselves.
pub fn skip_ws(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .unwrap_or(s.len());
    cost::examined(start);
    &s[start..]
}

/// The offset of the first byte at or after `at` that is not JSON whitespace.
fn ws_end(json: &[u8], at: usize) -> usize {
    json.len() - skip_ws(&json[at..]).len()
}

/// One past the closing quote of the string that opens at `start`.
fn string_end(json: &[u8], start: usize) -> Result<usize, SkimError> {
    let mut at = start + 1;
    loop {
        let hit = cost::memchr2(b'"', b'\\', &json[at.min(json.len())..])
            .ok_or(SkimError("a string is not closed"))?;
        at += hit;
        if json[at] == b'"' {
            return Ok(at + 1);
        }
        // A backslash escapes the next byte, whatever it is.
        at += 2;
    }
}

/// One past the end of the value that starts at `start`.
fn value_end(json: &[u8], start: usize) -> Result<usize, SkimError> {
    match json.get(start) {
        Some(b'"') => string_end(json, start),
        Some(b'{' | b'[') => container_end(json, start),
        Some(_) => {
            // A number or a literal: runs to the next delimiter.
            let mut at = start;
            while at < json.len()
                && !matches!(json[at], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                at += 1;
            }
            cost::examined(at - start);
            if at == start {
                return Err(SkimError("a value was expected"));
            }
            Ok(at)
        }
        None => Err(SkimError("a value was expected")),
    }
}

/// One past the bracket that closes the object or array opening at `start`.
fn container_end(json: &[u8], start: usize) -> Result<usize, SkimError> {
    let mut depth = 0usize;
    let mut at = start;
    // Bytes this loop looks at itself (strings count their own).
    let mut steps = 0;
    let end = loop {
        let Some(&byte) = json.get(at) else {
            break Err(SkimError("an object or array is not closed"));
        };
        steps += 1;
        match byte {
            b'"' => match string_end(json, at) {
                Ok(next) => {
                    at = next;
                    continue;
                }
                Err(e) => break Err(e),
            },
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    break Ok(at + 1);
                }
            }
            _ => {}
        }
        at += 1;
    };
    cost::examined(steps);
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one<'a>(json: &'a str, key: &str) -> Option<&'a str> {
        members(json.as_bytes(), [key]).unwrap()[0].map(|v| std::str::from_utf8(v).unwrap())
    }

    #[test]
    fn finds_members_of_every_kind() {
        let json =
            r#" { "a" : 1 , "b":"x\"}{[" ,"c":{"d":[1,{"e":"]"}]},"f":true,"g":null,"h":-1.5e3 } "#;
        assert_eq!(one(json, "a"), Some("1"));
        assert_eq!(one(json, "b"), Some(r#""x\"}{[""#));
        assert_eq!(one(json, "c"), Some(r#"{"d":[1,{"e":"]"}]}"#));
        assert_eq!(one(json, "f"), Some("true"));
        assert_eq!(one(json, "g"), Some("null"));
        assert_eq!(one(json, "h"), Some("-1.5e3"));
        assert_eq!(one(json, "e"), None, "only members of the outer object");
        assert_eq!(one("{}", "a"), None);
        let both = members(json.as_bytes(), ["f", "a"]).unwrap();
        assert_eq!(both, [Some(&b"true"[..]), Some(&b"1"[..])]);
    }

    #[test]
    fn reading_stops_once_the_keys_are_found() {
        let broken_tail = r#"{"a":1,"b":{"c":2},"x":[[[["#;
        let [a, c] = members(broken_tail.as_bytes(), ["a", "b"]).unwrap();
        assert_eq!((a, c), (Some(&b"1"[..]), Some(&br#"{"c":2}"#[..])));
        assert!(members(broken_tail.as_bytes(), ["a", "zzz"]).is_err());
        let inner = descend(br#"{"skip":[1,2],"scope":{"k":3,"rest":"#, "scope")
            .unwrap()
            .unwrap();
        assert!(inner.starts_with(br#"{"k":3"#));
        assert_eq!(members(inner, ["k"]).unwrap()[0], Some(&b"3"[..]));
        assert_eq!(descend(br#"{"a":1}"#, "b").unwrap(), None);
    }

    #[test]
    fn a_key_inside_a_string_or_a_nested_object_is_not_a_member() {
        let json = r#"{"x":"\"target\":1","y":{"target":2},"target":3}"#;
        assert_eq!(one(json, "target"), Some("3"));
        assert_eq!(
            one(r#"{"tar\u0067et":1}"#, "target"),
            None,
            "escaped names are not compared"
        );
        assert_eq!(one(r#"{"a":1,"a":2}"#, "a"), Some("1"));
    }

    #[test]
    fn broken_text_is_an_error_never_a_panic() {
        let json = r#"{"a":{"b":[1,2,"x\\"]},"c":"d"}"#;
        for cut in 0..json.len() {
            let _ = members(&json.as_bytes()[..cut], ["c"]);
        }
        for bad in [
            "",
            "[]",
            "{\"a\"",
            "{\"a\":}",
            "{\"x\":1 \"a\":2}",
            "{\"a\":\"\\",
            "{1:2}",
        ] {
            assert!(members(bad.as_bytes(), ["a"]).is_err(), "{bad:?}");
        }
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(
            members(deep.as_bytes(), ["a"]).unwrap()[0].map(<[u8]>::len),
            Some(200_000)
        );
        assert!(members(format!("{{\"a\":{}", "[".repeat(100_000)).as_bytes(), ["a"]).is_err());
    }

    #[test]
    fn the_work_is_linear_in_the_input() {
        let shapes: [fn(usize) -> String; 4] = [
            |n| format!(r#"{{"a":{}"#, "[".repeat(n)),
            |n| format!(r#"{{"a":"{}"}}"#, r#"\"\\"#.repeat(n / 4)),
            |n| {
                let members: String = (0..n / 12).map(|i| format!(r#""k{i}":[1],"#)).collect();
                format!(r#"{{{members}"z":0}}"#)
            },
            |n| format!(r#"{{"a":[{}]}}"#, r#"{"b":"]"},"#.repeat(n / 10)),
        ];
        for shape in shapes {
            let work = |n: usize| {
                let json = shape(n);
                cost::measure(|| members(json.as_bytes(), ["z", "none"])).1
            };
            let n = 64 * 1024;
            let (once, _) = cost::linear(n, work).unwrap_or_else(|e| panic!("{}: {e}", &shape(40)));
            // The count covers the path: an escaped byte is skipped uncounted.
            assert!(once >= n as u64 / 2, "{}: {once} of {n}", &shape(40));
        }
    }

    #[test]
    fn agrees_with_serde_on_what_each_member_is() {
        let json = r#"{"n":0,"s":"\\\"","o":{"k":[{},[],"}"]},"l":[1,"a",{"b":null}],"t":false}"#;
        let whole: serde_json::Value = serde_json::from_str(json).unwrap();
        for key in ["n", "s", "o", "l", "t"] {
            let raw = one(json, key).unwrap();
            let part: serde_json::Value = serde_json::from_str(raw).unwrap();
            assert_eq!(part, whole[key], "{key}");
        }
    }
}
