//! Telling a 404 page and a login page from a page that merely lacks the profile.
//!
//! These checks run only when no profile was found. Whether a user exists is never decided from
//! text the user can write: a profile page carries the user's name and bio in its `<title>`,
//! its meta and `og:` tags, image alt text, and in scripts. So the markers are searched only
//! where the platform alone writes:
//!
//! - the 404 text ("Sorry, this page isn't available") in the page's text between tags, never
//!   in attribute values, the title, scripts or other raw text;
//! - the 404 dialog's class as a whole word of a `class` attribute;
//! - a `<title>` starting "Page not found" or "Login";
//! - login form markup: an `id` of `loginForm`, a form `action` under `/accounts/login`.
//!
//! And none of them counts on a page whose `<title>` names an account ("Name (@name) • …"):
//! that is somebody's profile page, and its text may be theirs.
//!
//! Script text is skipped as well because it is full of UI strings and bundle names
//! (`HttpErrorPage`, `LoginAndSignupPage`, "Sorry, this page isn't available") that every page
//! carries, and mistaking an app shell for a 404 would cache a false "not found".

use memchr::memmem;

use super::signals::has_require_login;
use crate::cost;
use crate::html::{self, Token};

/// Text that only the "page not found" page carries in its markup.
const NOT_FOUND_TEXT: &[u8] = b"Sorry, this page isn";

/// The 404 dialog's class name.
const NOT_FOUND_CLASS: &[u8] = b"dialog-404";

/// What the platform's own markup of a page says, read in one pass.
#[derive(Debug, Default)]
struct Marks<'a> {
    /// The raw text of the first `<title>`.
    title: Option<&'a [u8]>,
    /// The 404 text appears between tags.
    not_found_text: bool,
    /// An element has the 404 dialog's class.
    not_found_class: bool,
    /// A login form is in the markup.
    login_form: bool,
}

impl<'a> Marks<'a> {
    fn read(page: &'a [u8]) -> Self {
        let text = memmem::Finder::new(NOT_FOUND_TEXT);
        let mut marks = Marks::default();
        for token in html::tokens(page) {
            match token {
                Token::Text(part) => {
                    cost::examined(part.len());
                    marks.not_found_text |= text.find(part).is_some();
                }
                Token::Start(tag) => {
                    for (name, value) in tag.attrs() {
                        if name.eq_ignore_ascii_case(b"class") {
                            marks.not_found_class |= value
                                .split(|b| b.is_ascii_whitespace())
                                .any(|word| word == NOT_FOUND_CLASS);
                        } else if name.eq_ignore_ascii_case(b"id") {
                            marks.login_form |= value == b"loginForm";
                        } else if name.eq_ignore_ascii_case(b"action") && tag.is("form") {
                            marks.login_form |= value.starts_with(b"/accounts/login");
                        }
                    }
                }
                Token::Element(tag, content) if tag.is("title") => {
                    marks.title.get_or_insert(content);
                }
                Token::Element(..) => {}
            }
        }
        marks
    }

    /// Whether the title names an account: then the page is somebody's profile.
    fn names_account(&self) -> bool {
        self.title.is_some_and(|title| {
            cost::memchr(b'@', title).is_some()
                || cost::find(title, b"&#064;").is_some()
                || cost::find(title, b"&#x40;").is_some()
        })
    }

    /// Whether the title starts with `prefix` (ASCII case-insensitive, after whitespace).
    fn title_starts_with(&self, prefix: &str) -> bool {
        self.title.is_some_and(|title| {
            title
                .trim_ascii()
                .get(..prefix.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
        })
    }
}

/// The page says the user (or the page) does not exist.
pub(super) fn is_not_found_page(html: &[u8]) -> bool {
    let marks = Marks::read(html);
    !marks.names_account()
        && (marks.title_starts_with("page not found")
            || marks.not_found_text
            || marks.not_found_class)
}

/// The page is a login wall.
pub(super) fn is_login_page(html: &[u8]) -> bool {
    // `is_from_rle`: the page the platform sends a datacenter address instead of the
    // profile since 2026-09, the login wall's data (mikf/gallery-dl#9654).
    if has_require_login(html) || cost::find(html, b"\"is_from_rle\":true").is_some() {
        return true;
    }
    let marks = Marks::read(html);
    !marks.names_account()
        && (marks.title_starts_with("login")
            || marks.title_starts_with("log in")
            || marks.login_form)
}

/// What a script of the app shell names: the JSON endpoint it defers the profile to (in its
/// routing data, or as the preloader's key), in any script (the 2022 shell's are plain).
const DEFERS_TO_JSON: &[u8] = b"web_profile_info";
/// What a data-sjs blob of the app shell names: the user's place, left empty.
const EMPTY_PLACE: &[u8] = b"xig_user_by_username";

/// The page is the app shell: no profile was found in it, and its scripts defer the profile
/// to the JSON endpoint or name the user's place without filling it. The platform serves it
/// to clients it will not give the profile to (the 2022 shell in the real captures; the 2026
/// shell peers met), so it is a refusal. A page naming neither stays "no profile in page":
/// drift, kept by drift capture.
pub(super) fn is_app_shell(html: &[u8]) -> bool {
    html::scripts(html).any(|script| {
        cost::find(script.text, DEFERS_TO_JSON).is_some()
            || (script.has_attr("data-sjs") && cost::find(script.text, EMPTY_PLACE).is_some())
    })
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
        // What a user writes reaches attribute values, the title, and on their own page text.
        assert!(!is_not_found_page(
            b"<meta name=\"description\" content=\"Sorry, this page isn&#039;t available.\">\
              <img alt='x dialog-404 y'><p title=\"Page not found\">"
        ));
        assert!(!is_not_found_page(
            b"<title>Sorry, this page isn&#039;t available. (&#064;s)</title>\
              <h1>Sorry, this page isn&#039;t available.</h1><b class=dialog-404></b>"
        ));
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
    fn the_app_shell_names_the_profiles_place_in_its_data() {
        assert!(is_app_shell(
            br#"<script type="application/json" data-sjs>{"request":{"url":"\/api\/v1\/users\/web_profile_info\/"}}</script>"#
        ));
        assert!(is_app_shell(
            br#"<script data-sjs>{"data":{"xig_user_by_username":null}}</script>"#
        ));
        assert!(is_app_shell(
            br#"<script>{"url": "\/api\/v1\/users\/web_profile_info\/"}</script>"#
        ));
        assert!(!is_app_shell(
            br#"<script>var q={"xig_user_by_username":null};</script><p>web_profile_info</p>"#
        ));
        assert!(!is_app_shell(
            br#"<script data-sjs>{"data":{"some_new_key":{"username":"bo"}}}</script>"#
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
