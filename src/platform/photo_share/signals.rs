//! Block signals: how the platform says "not you, not now" instead of answering.
//!
//! The reasons returned here are stable labels for logs and metrics: `http_429`,
//! `require_login`, `checkpoint_required`, `challenge_required`, `feedback_required`,
//! `please_wait`, `login_wall`, `html_for_json` and `not_json` (the last two for the JSON
//! endpoint's 200 and 404 alike).

use crate::cost;
use crate::json_skim::skip_ws;

/// The challenge names the platform puts in a JSON `message` (and in 400 bodies).
const CHALLENGES: [&str; 3] = [
    "checkpoint_required",
    "challenge_required",
    "feedback_required",
];

/// How much of a 400/401 body is searched: real block bodies are a few hundred bytes, and a
/// multi-megabyte error page must not cost a full scan.
const SIGNAL_SCAN_LIMIT: usize = 64 * 1024;

/// Classifies an upstream HTTP answer as a block, for the fetch layer's retry decision.
///
/// - 429 → `Some("http_429")`, whatever the body;
/// - 401 whose body says `"require_login": true` → `Some("require_login")`;
/// - 400 whose body names `checkpoint_required`, `challenge_required` or `feedback_required`
///   → `Some(that name)`;
/// - anything else → `None` (the body is then read by [`from_api`](crate::platform::photo_share::extract::from_api) or
///   [`from_page`](crate::platform::photo_share::extract::from_page)).
///
/// Only the first 64 KiB of a 400/401 body are searched, and other statuses are decided without
/// looking at the body at all.
pub fn block_signal(status: u16, body: &[u8]) -> Option<&'static str> {
    let head = &body[..body.len().min(SIGNAL_SCAN_LIMIT)];
    match status {
        429 => Some("http_429"),
        401 if has_require_login(head) => Some("require_login"),
        400 => CHALLENGES
            .into_iter()
            .find(|name| cost::find(head, name.as_bytes()).is_some()),
        _ => None,
    }
}

/// Whether a 2xx answer of the JSON endpoint holds no JSON: the platform's way of refusing a
/// client with a login page, the app shell or a block page, 200 and all (mifi/SimpleInstaBot
/// 2026-09 and jackwener/OpenCLI 2026-09 met it as "Unexpected token '<'").
///
/// - a body whose first byte (after whitespace and a byte-order mark) opens an object or an
///   array → `None`: it is JSON, whatever its content type says, and is read as such;
/// - otherwise a body starting with `<`, or a `text/html` content type →
///   `Some("html_for_json")`;
/// - anything else (empty, plain text, a `for (;;);` guard) → `Some("not_json")`.
///
/// Only the first bytes of the body are looked at.
pub fn not_json(content_type: Option<&[u8]>, body: &[u8]) -> Option<&'static str> {
    let start = body.trim_ascii_start();
    let start = start
        .strip_prefix(b"\xEF\xBB\xBF")
        .map_or(start, <[u8]>::trim_ascii_start);
    match start.first() {
        Some(b'{' | b'[') => None,
        Some(b'<') => Some("html_for_json"),
        _ if content_type.is_some_and(|t| cost::find(t, b"html").is_some()) => {
            Some("html_for_json")
        }
        _ => Some("not_json"),
    }
}

/// Whether a 404 of the JSON endpoint is the platform refusing us rather than its "no such
/// user" (jackwener/OpenCLI#2234, 2026-08-04: unknown names answer 404): that one is the
/// endpoint's own answer, a JSON body or no body at all, while a 404 carrying a login page, the
/// app shell or any other document (or declared `text/html`, even empty) is a refusal, named
/// as [`not_json`] names it. Read as "gone", such a refusal would be cached as a not-found and
/// wipe the stale copy of a profile that exists.
pub fn refused_404(content_type: Option<&[u8]>, body: &[u8]) -> Option<&'static str> {
    let html = content_type.is_some_and(|t| cost::find(t, b"html").is_some());
    if body.trim_ascii().is_empty() && !html {
        return None;
    }
    not_json(content_type, body)
}

/// The schema error the JSON endpoint answers with 400 for business and creator accounts
/// since 2026-07 (instaloader#2724, #2731; jackwener/OpenCLI#2234): not a refusal of the
/// client, so the profile page is asked at once.
const BUSINESS_SCHEMA: &[u8] = b"ig_business_category_subvertical";

/// Whether a JSON answer is the 400 the endpoint gives business and creator accounts.
pub fn is_business_schema_error(status: u16, body: &[u8]) -> bool {
    status == 400
        && cost::find(&body[..body.len().min(SIGNAL_SCAN_LIMIT)], BUSINESS_SCHEMA).is_some()
}

/// Whether a redirect's target is a block: a login, challenge or privacy-check page, or the
/// home page (the platform sends throttled anonymous visitors there).
///
/// Accepts a path (`/accounts/login/?next=%2Fx%2F`) or an absolute URL, whose scheme and host
/// are ignored. Matches `/accounts/login`, `/login`, `/challenge` and `/privacy/checks` with any
/// suffix below them and any query, and the root path exactly (with or without a query).
pub fn redirect_is_block(location_path: &str) -> bool {
    let path = path_of(location_path);
    let path = path.split(['?', '#']).next().unwrap_or_default();
    if path == "/" {
        return true;
    }
    [
        "/accounts/login",
        "/login",
        "/challenge",
        "/privacy/checks",
        // The newer login redirect, `/auth_platform/?apc=…` (mikf/gallery-dl#9654, 2026).
        "/auth_platform",
    ]
    .into_iter()
    .any(|prefix| under(path, prefix))
}

/// The path of a path-or-URL: for `scheme://host/path` or `//host/path`, the part from the
/// first `/` after the host (`/` when there is none).
fn path_of(location: &str) -> &str {
    let rest = match location.find("://") {
        Some(at) => &location[at + 3..],
        None => match location.strip_prefix("//") {
            Some(rest) => rest,
            None => return location,
        },
    };
    match rest.find(['/', '?', '#']) {
        Some(at) if rest[at..].starts_with('/') => &rest[at..],
        _ => "/",
    }
}

/// `path` is `prefix` or a path below it (`prefix/…`), ASCII case-insensitively.
fn under(path: &str, prefix: &str) -> bool {
    let (Some(head), Some(tail)) = (path.get(..prefix.len()), path.get(prefix.len()..)) else {
        return false;
    };
    head.eq_ignore_ascii_case(prefix) && (tail.is_empty() || tail.starts_with('/'))
}

/// `"require_login"` followed by `:` and `true`, with any JSON whitespace between.
pub(super) fn has_require_login(body: &[u8]) -> bool {
    const KEY: &[u8] = b"\"require_login\"";
    let mut from = 0;
    while let Some(at) = cost::find(&body[from..], KEY) {
        from += at + KEY.len();
        let rest = skip_ws(&body[from..]);
        let value = rest.strip_prefix(b":").map(skip_ws);
        if value.is_some_and(|value| value.starts_with(b"true")) {
            return true;
        }
    }
    false
}

/// The block named by an API `message`, if any.
pub(super) fn message_block(message: &str) -> Option<&'static str> {
    if message.is_empty() {
        return None;
    }
    if let Some(name) = CHALLENGES.into_iter().find(|name| message.contains(name)) {
        return Some(name);
    }
    message
        .starts_with("Please wait a few minutes")
        .then_some("please_wait")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_429_is_a_block_whatever_the_body() {
        assert_eq!(block_signal(429, b""), Some("http_429"));
        assert_eq!(block_signal(429, b"<html>"), Some("http_429"));
    }

    #[test]
    fn status_401_needs_require_login_true() {
        let sample = br#"{"message":"Please wait a few minutes, then retry.","require_login":true,"status":"fail"}"#;
        assert_eq!(block_signal(401, sample), Some("require_login"));
        assert_eq!(
            block_signal(401, b"{\"require_login\" :\n true}"),
            Some("require_login")
        );
        assert_eq!(block_signal(401, br#"{"require_login":false}"#), None);
        assert_eq!(block_signal(401, br#"{"message":"require_login"}"#), None);
        assert_eq!(block_signal(401, b""), None);
        assert_eq!(block_signal(200, sample), None);
    }

    #[test]
    fn status_400_names_its_challenge() {
        for name in CHALLENGES {
            let body = format!(r#"{{"message":"{name}","status":"fail"}}"#);
            assert_eq!(block_signal(400, body.as_bytes()), Some(name));
            assert_eq!(block_signal(200, body.as_bytes()), None);
        }
        assert_eq!(block_signal(400, br#"{"message":"bad request"}"#), None);
    }

    #[test]
    fn other_statuses_are_not_blocks() {
        for status in [200, 301, 302, 403, 404, 500, 503] {
            assert_eq!(block_signal(status, b"checkpoint_required"), None);
        }
    }

    #[test]
    fn a_signal_beyond_the_scan_limit_is_not_seen() {
        let mut body = vec![b' '; SIGNAL_SCAN_LIMIT];
        body.extend_from_slice(b"checkpoint_required");
        assert_eq!(block_signal(400, &body), None);
    }

    #[test]
    fn login_challenge_privacy_and_home_redirects_are_blocks() {
        for location in [
            "/accounts/login/",
            "/accounts/login/?next=%2Fann%2F",
            "/accounts/login",
            "/login/",
            "/login?next=/x/",
            "/challenge/",
            "/challenge/action/AXG1/abc/",
            "/privacy/checks/?next=/ann/",
            "/privacy/checks",
            "/auth_platform/?apc=AbC1",
            "/",
            "/?hl=en",
            "https://www.example.test/accounts/login/?next=/ann/",
            "https://www.example.test/",
            "https://www.example.test",
            "//www.example.test/challenge/",
            "/Accounts/Login/",
        ] {
            assert!(redirect_is_block(location), "{location}");
        }
    }

    #[test]
    fn other_redirects_are_not_blocks() {
        for location in [
            "/ann/",
            "/ann",
            "/loginx/",
            "/accounts/loginx",
            "/challenges/",
            "/privacy/",
            "/accounts/",
            "",
            "ann/",
            "https://www.example.test/ann/",
            "https://www.example.test/ann/?next=/accounts/login/",
        ] {
            assert!(!redirect_is_block(location), "{location}");
        }
    }

    #[test]
    fn a_json_answer_without_json_is_a_block() {
        let html = Some(&b"text/html; charset=utf-8"[..]);
        let json = Some(&b"application/json"[..]);
        for (content_type, body, reason) in [
            (html, &b"<!DOCTYPE html><html>"[..], Some("html_for_json")),
            (json, b"  \n<html>", Some("html_for_json")),
            (html, b"", Some("html_for_json")),
            (None, b"", Some("not_json")),
            (json, b"for (;;);{\"error\":1}", Some("not_json")),
            (
                Some(&b"text/plain"[..]),
                b"upgrade your app",
                Some("not_json"),
            ),
            (json, b"{\"data\":{}}", None),
            (html, b"\xEF\xBB\xBF {\"data\":{}}", None),
            (None, b"[]", None),
        ] {
            assert_eq!(not_json(content_type, body), reason, "{body:?}");
        }
    }

    #[test]
    fn a_json_404_is_gone_only_as_the_endpoints_own_answer() {
        let html = Some(&b"text/html; charset=utf-8"[..]);
        let json = Some(&b"application/json; charset=utf-8"[..]);
        for (content_type, body, refusal) in [
            (
                json,
                &br#"{"message":"User not found","status":"fail"}"#[..],
                None,
            ),
            (None, b"", None),
            (json, b"", None),
            (None, b"  {}", None),
            (
                html,
                b"<!DOCTYPE html><html><form id=\"loginForm\">",
                Some("html_for_json"),
            ),
            (
                None,
                b"<html><body>app shell</body></html>",
                Some("html_for_json"),
            ),
            (html, b"", Some("html_for_json")),
            (Some(&b"text/plain"[..]), b"Not Found", Some("not_json")),
        ] {
            assert_eq!(refused_404(content_type, body), refusal, "{body:?}");
        }
    }

    #[test]
    fn the_business_schema_400_is_recognised() {
        let body = br#"{"message":"Asset asset://laser.provider/ig_business_category_subvertical has been deleted. You cannot use this schema","status":"fail"}"#;
        assert!(is_business_schema_error(400, body));
        assert!(!is_business_schema_error(200, body));
        assert!(!is_business_schema_error(
            400,
            br#"{"message":"useragent mismatch"}"#
        ));
        assert_eq!(block_signal(400, body), None, "not a refusal");
    }

    #[test]
    fn messages_name_their_block() {
        assert_eq!(message_block(""), None);
        assert_eq!(
            message_block("checkpoint_required"),
            Some("checkpoint_required")
        );
        assert_eq!(message_block("user not found"), None);
    }
}
