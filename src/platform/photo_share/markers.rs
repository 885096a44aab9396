//! Telling a 404 page and a login page from a page that merely lacks the profile.
//!
//! These checks run only when no profile was found, and they look at the page's markup outside
//! `<script>` elements (plus the `<title>`): script text is full of UI strings and bundle names
//! (`HttpErrorPage`, `LoginAndSignupPage`, "Sorry, this page isn't available") that every page
//! carries, and mistaking an app shell for a 404 would cache a false "not found".

use memchr::memmem;

use super::signals::has_require_login;
use crate::scan;

/// Text that only the "page not found" page carries in its markup.
const NOT_FOUND_TEXT: &[u8] = b"Sorry, this page isn";

/// The 404 dialog's class name; it counts only as a whole word of an attribute value, since a
/// stylesheet of any page may name it (`.dialog-404{…}`).
const NOT_FOUND_CLASS: &[u8] = b"dialog-404";

/// Markup that only the login page carries.
const LOGIN_MARKUP: [&[u8]; 3] = [
    b"action=\"/accounts/login",
    b"id=\"loginForm\"",
    b"/accounts/login/ajax/",
];

/// The page says the user (or the page) does not exist.
pub(super) fn is_not_found_page(html: &[u8]) -> bool {
    let text = memmem::Finder::new(NOT_FOUND_TEXT);
    let class = memmem::Finder::new(NOT_FOUND_CLASS);
    title_starts_with(html, "page not found")
        || markup_any(html, |part| {
            text.find(part).is_some() || has_class_word(part, &class)
        })
}

/// Whether `part` holds the finder's needle delimited like a word of a quoted attribute value.
fn has_class_word(part: &[u8], finder: &memmem::Finder<'_>) -> bool {
    let word_edge = |b: Option<&u8>| b.is_some_and(|b| matches!(b, b'"' | b'\'' | b' '));
    finder.find_iter(part).any(|at| {
        let before = at.checked_sub(1).and_then(|i| part.get(i));
        word_edge(before) && word_edge(part.get(at + finder.needle().len()))
    })
}

/// The page is a login wall.
pub(super) fn is_login_page(html: &[u8]) -> bool {
    has_require_login(html)
        || title_starts_with(html, "login")
        || title_starts_with(html, "log in")
        || markup_any(html, |part| {
            LOGIN_MARKUP
                .iter()
                .any(|needle| memmem::find(part, needle).is_some())
        })
}

/// Whether `found_in` holds for some stretch of the page outside script elements.
fn markup_any(html: &[u8], found_in: impl Fn(&[u8]) -> bool) -> bool {
    let base = html.as_ptr() as usize;
    let mut from = 0;
    for script in scan::scripts(html) {
        let start = (script.text.as_ptr() as usize).saturating_sub(base);
        if html.get(from..start).is_some_and(&found_in) {
            return true;
        }
        from = start + script.text.len();
    }
    html.get(from..).is_some_and(found_in)
}

/// Whether the first `<title>` starts with `prefix` (ASCII case-insensitive) and names no
/// account: a profile titled "Page Not Found (@name)" is somebody's display name.
fn title_starts_with(html: &[u8], prefix: &str) -> bool {
    let Some(title) = title(html) else {
        return false;
    };
    let title = title.trim_ascii();
    let names_account = memchr::memchr(b'@', title).is_some()
        || memmem::find(title, b"&#064;").is_some()
        || memmem::find(title, b"&#x40;").is_some();
    !names_account
        && title
            .get(..prefix.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// The raw text of the first `<title>` element, bounded to a sane length.
fn title(html: &[u8]) -> Option<&[u8]> {
    let open = memmem::find(html, b"<title")?;
    let rest = &html[open + b"<title".len()..];
    if !rest
        .first()
        .is_some_and(|b| matches!(b, b'>' | b' ' | b'\n'))
    {
        return None;
    }
    let rest = &rest[memchr::memchr(b'>', rest)? + 1..];
    let rest = &rest[..rest.len().min(1024)];
    let end = memmem::find(rest, b"</title").unwrap_or(rest.len());
    Some(&rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_404_page_is_recognised_by_markup_or_title() {
        assert!(is_not_found_page(
            b"<html><body><h2>Sorry, this page isn&#39;t available.</h2></body></html>"
        ));
        assert!(is_not_found_page(b"<div class=\"x dialog-404\"></div>"));
        assert!(is_not_found_page(
            b"<title>\nPage Not Found &bull; Instagram\n</title>"
        ));
        assert!(is_not_found_page(
            b"<title>Page not found \xe2\x80\xa2 X</title>"
        ));
    }

    #[test]
    fn script_text_and_display_names_are_not_404_markers() {
        assert!(!is_not_found_page(
            b"<script>var m = \"Sorry, this page isn't available\"; var c='dialog-404';</script>"
        ));
        assert!(!is_not_found_page(
            b"<title>Page Not Found (&#064;pnf) \xe2\x80\xa2 Instagram photos</title>"
        ));
        assert!(!is_not_found_page(b"<title>Ann (@ann)</title><p>hi</p>"));
        assert!(!is_not_found_page(
            b"<style>.dialog-404{display:none}div.dialog-404 p{}</style><p>x-dialog-404y</p>"
        ));
    }

    #[test]
    fn the_login_page_is_recognised() {
        assert!(is_login_page(
            b"<form id=\"loginForm\" method=\"post\"><input name=\"password\"></form>"
        ));
        assert!(is_login_page(b"<form action=\"/accounts/login/ajax/\">"));
        assert!(is_login_page(
            b"<title>Login \xe2\x80\xa2 Instagram</title>"
        ));
        assert!(is_login_page(b"<script>{\"require_login\": true}</script>"));
        assert!(!is_login_page(
            b"<script>var b='/bundles/LoginAndSignupPage.js'; id=\"loginForm\"</script>"
        ));
        assert!(!is_login_page(
            b"<a href=\"/accounts/login/?next=/ann/\">Log in</a>"
        ));
    }

    #[test]
    fn title_survives_odd_markup() {
        for html in [
            &b"<title"[..],
            b"<title>",
            b"<titlex>Page not found</titlex>",
            b"",
        ] {
            assert!(!is_not_found_page(html));
        }
        assert!(is_not_found_page(b"<title>page not found"));
    }
}
