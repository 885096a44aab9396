//! The profile embed page, `GET {base_url}/{name}/embed/`: since 2026-09 the only guest
//! surface that still carries a public profile's post count, as `"posts_count":N` inside the
//! page's `contextJSON` (a JSON document escaped into a string of the page's script). It answers
//! HTTP 500 about one fetch in four, so it is asked again on a fresh session (peer A does the
//! same).
//!
//! The count is read by identity: the object in the context that holds `posts_count` must name
//! the requested user (`username`, ASCII case-insensitively); a count of another account (a
//! suggested one) is never taken.

use serde_json::Value;

use crate::username::Username;

/// The member of the embed page's script that holds the escaped context.
const CONTEXT_KEY: &[u8] = b"\"contextJSON\"";

/// The most contexts looked at in one page (a page has one).
const MAX_CONTEXTS: usize = 4;

/// How deep the context's objects are searched.
const MAX_DEPTH: usize = 12;

/// What the embed page says of the requested user's post count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PostCount {
    /// The count of the requested user's posts.
    Read(u64),
    /// The page holds no context that names the user with a count.
    Absent,
}

/// The post count of `name` in an embed page.
pub fn post_count(page: &[u8], name: &Username) -> PostCount {
    let mut from = 0;
    for _ in 0..MAX_CONTEXTS {
        let Some(at) = crate::cost::find(&page[from..], CONTEXT_KEY) else {
            break;
        };
        let after = from + at + CONTEXT_KEY.len();
        from = after;
        let rest = crate::json_skim::skip_ws(&page[after..]);
        let Some(rest) = rest.strip_prefix(b":") else {
            continue;
        };
        let rest = crate::json_skim::skip_ws(rest);
        // The context is a JSON string whose text is a JSON document; read the string alone.
        let mut strings = serde_json::Deserializer::from_slice(rest).into_iter::<String>();
        let Some(Ok(text)) = strings.next() else {
            continue;
        };
        let Ok(context) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if let Some(count) = count_of(&context, name.as_str(), 0) {
            return PostCount::Read(count);
        }
    }
    PostCount::Absent
}

/// The `posts_count` of the object in `value` that names `name`.
fn count_of(value: &Value, name: &str, depth: usize) -> Option<u64> {
    if depth > MAX_DEPTH {
        return None;
    }
    match value {
        Value::Object(members) => {
            let names_user = members
                .get("username")
                .and_then(Value::as_str)
                .is_some_and(|n| n.eq_ignore_ascii_case(name));
            if names_user && let Some(count) = members.get("posts_count").and_then(count) {
                return Some(count);
            }
            members.values().find_map(|v| count_of(v, name, depth + 1))
        }
        Value::Array(items) => items.iter().find_map(|v| count_of(v, name, depth + 1)),
        _ => None,
    }
}

/// A count: a non-negative integer, or a string of digits.
fn count(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => n.as_u64(),
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            s.parse().ok()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;

    fn name(raw: &str) -> Username {
        Username::parse(Platform::PhotoShare, raw).expect("valid test name")
    }

    fn page(context: &str) -> String {
        let escaped = serde_json::to_string(context).unwrap();
        format!(
            "<html><body><script>requireLazy([\"EmbedProfile\"],function(m){{m.init({{\"contextJSON\":{escaped},\"isLoggedIn\":false}})}});</script></body></html>"
        )
    }

    #[test]
    fn the_count_is_read_from_the_escaped_context_by_identity() {
        let context = r#"{"context":{"username":"Tide.Pool","posts_count":389,"followers_count":12},"suggested":[{"username":"other","posts_count":5}]}"#;
        assert_eq!(
            post_count(page(context).as_bytes(), &name("tide.pool")),
            PostCount::Read(389)
        );
        assert_eq!(
            post_count(page(context).as_bytes(), &name("other")),
            PostCount::Read(5)
        );
        assert_eq!(
            post_count(page(context).as_bytes(), &name("nobody")),
            PostCount::Absent
        );
    }

    #[test]
    fn a_page_without_a_context_or_with_a_broken_one_has_no_count() {
        assert_eq!(post_count(b"<html></html>", &name("a")), PostCount::Absent);
        assert_eq!(
            post_count(
                br#"<script>{"contextJSON":"{not json"}</script>"#,
                &name("a")
            ),
            PostCount::Absent
        );
        assert_eq!(
            post_count(br#"<script>{"contextJSON":12}</script>"#, &name("a")),
            PostCount::Absent
        );
        let negative = r#"{"context":{"username":"a","posts_count":-1}}"#;
        assert_eq!(
            post_count(page(negative).as_bytes(), &name("a")),
            PostCount::Absent
        );
    }
}
