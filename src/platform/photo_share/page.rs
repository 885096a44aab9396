//! The profile HTML page, `{base}/{username}/`: the fallback when the API will not answer, and
//! the proof of absence when the API says `user: null`.

use memchr::memmem::Finder;

use super::PhotoShareProfile;
use super::parts::is_requested;
use super::{markers, shared_data, xig};
use crate::html;
use crate::platform::PageVerdict;
use crate::username::Subject;

/// Reads a profile HTML page.
///
/// The profile is taken from, in page order:
/// - a `<script type="application/json" data-sjs>` blob holding an `"xig_user_by_username"`
///   object (current pages; mobile-API names, `pk` as the id, never its `id`);
/// - the legacy `window._sharedData = {…};` state (`entry_data.ProfilePage[0].graphql.user`) or
///   `window.__additionalDataLoaded(…, {"graphql":{"user":…}})`.
///
/// When no profile of the requested user is found (`"xig_user_by_username": null` counts as
/// none found: on its own it proves nothing):
/// - a user object of another username → `Unreadable`;
/// - a profile state that is cut or malformed → `Unreadable`;
/// - the "page not found" page ("Sorry, this page isn't available", `dialog-404`, a `<title>`
///   starting "Page not found", or the legacy `HttpErrorPage` state) → [`PageVerdict::NotFound`],
///   which **confirms** that the account does not exist;
/// - a login page (login form markup, a `Login` title, `"require_login": true`, or the legacy
///   `LoginAndSignupPage` state) → `Blocked("login_wall")`;
/// - anything else, such as an app shell that loads the profile by XHR →
///   `Unreadable("no profile in page")`.
///
/// Missing strings become `""`, missing booleans `false`, missing counts `None`; strings are
/// JSON-decoded and never HTML-entity decoded. Markers are only searched where the platform
/// alone writes (text between tags, `class` attributes, the title of a page that names no
/// account), never in scripts (every page mentions them there) nor in attribute values or
/// titles that carry the user's own name and bio.
pub fn from_page<'a>(
    body: &[u8],
    requested: impl Into<Subject<'a>>,
) -> PageVerdict<PhotoShareProfile> {
    let requested = requested.into();
    let finder = Finder::new(xig::KEY);
    let mut other_user = false;
    let mut broken: Option<String> = None;
    let mut login_state = false;
    let mut error_state = false;
    for script in html::scripts(body) {
        if script.has_attr("data-sjs") {
            let found = xig::scan(script.text, requested, &finder);
            if let Some(profile) = found.profile {
                return PageVerdict::Profile(profile);
            }
            other_user |= found.other_user;
            broken = broken.or(found.broken);
        } else if let Some(legacy) = shared_data::read(script.text) {
            match legacy.profile {
                Some(profile) if is_requested(&profile, requested) => {
                    return PageVerdict::Profile(profile);
                }
                Some(_) => other_user = true,
                None => {}
            }
            login_state |= legacy.login_page;
            error_state |= legacy.error_page;
            broken = broken.or(legacy.broken);
        }
    }
    if other_user {
        return PageVerdict::Unreadable("page profile is not the requested username".to_owned());
    }
    if let Some(broken) = broken {
        return PageVerdict::Unreadable(broken);
    }
    if error_state || markers::is_not_found_page(body) {
        return PageVerdict::NotFound;
    }
    if login_state || markers::is_login_page(body) {
        return PageVerdict::Blocked("login_wall");
    }
    PageVerdict::Unreadable("no profile in page".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;
    use crate::username::Username;

    fn name(raw: &str) -> Username {
        Username::parse(Platform::PhotoShare, raw).expect("valid test name")
    }

    fn verdict(page: &str, raw: &str) -> PageVerdict<PhotoShareProfile> {
        from_page(page.as_bytes(), &name(raw))
    }

    const XIG_PAGE: &str = r#"<!DOCTYPE html><html><head><title>Ann (&#064;ann) &bull; Photos</title>
        <script type="application/json" data-sjs>{"require":[["Bootloader","x",[]]]}</script>
        <script>var q = {"xig_user_by_username":{"pk":"66","username":"ann"}};</script>
        <script type="application/json" data-content-len="120" data-sjs>{"require":[["S","h",null,
        [{"__bbox":{"result":{"data":{"xig_user_by_username":{"id":"178","pk":"42",
        "username":"ann","biography":"x &amp; y","is_private":true,"follower_count":3}}}}}]]]}
        </script></head><body></body></html>"#;

    #[test]
    fn reads_the_data_sjs_blob_only() {
        let PageVerdict::Profile(p) = verdict(XIG_PAGE, "ANN") else {
            panic!("expected a profile");
        };
        assert_eq!(p.id, "42");
        assert_eq!(p.biography, "x &amp; y");
        assert!(p.is_private);
        assert_eq!(p.edge_followed_by.count, Some(3));
        assert_eq!(p.edge_follow.count, None);
    }

    #[test]
    fn another_username_is_unreadable() {
        let v = verdict(XIG_PAGE, "ann2");
        assert!(matches!(v, PageVerdict::Unreadable(ref why) if why.contains("not the requested")));
    }

    #[test]
    fn reads_the_legacy_shared_data_page() {
        let page = r#"<html><script type="text/javascript">window._sharedData = {"entry_data":
            {"ProfilePage":[{"graphql":{"user":{"id":"5","username":"bo",
            "profile_pic_url":"https:\u002F\u002Fcdn.test\u002Fp.jpg"}}}]}};</script></html>"#;
        let PageVerdict::Profile(p) = verdict(page, "bo") else {
            panic!("expected a profile");
        };
        assert_eq!(p.id, "5");
        assert_eq!(p.profile_pic_url, "https://cdn.test/p.jpg");
        assert_eq!(p.profile_pic_url_hd, "https://cdn.test/p.jpg");
    }

    #[test]
    fn the_404_page_is_not_found() {
        let page = "<html><head><title>Page Not Found &bull; Instagram</title></head>\
            <body><div class=\"dialog-404\"><h2>Sorry, this page isn&#39;t available.</h2>\
            <a href=\"/accounts/login/\">Log in</a></div></body></html>";
        assert_eq!(verdict(page, "bo"), PageVerdict::NotFound);
        let legacy =
            r#"<script>window._sharedData = {"entry_data":{"HttpErrorPage":[{}]}};</script>"#;
        assert_eq!(verdict(legacy, "bo"), PageVerdict::NotFound);
    }

    #[test]
    fn a_shell_without_profile_is_unreadable() {
        let page = r#"<html><title>Bo (&#064;bo) &bull; Photos</title>
            <script type="application/json" data-sjs>{"profile":{"request":{"url":
            "\/api\/v1\/users\/web_profile_info\/","params":{"query":{"username":"bo"}}}}}</script>
            <script>var s="Sorry, this page isn't available"; var m="/bundles/LoginAndSignupPage.js";</script>"#;
        assert_eq!(
            verdict(page, "bo"),
            PageVerdict::Unreadable("no profile in page".to_owned())
        );
    }

    #[test]
    fn a_login_page_is_blocked() {
        let page = "<html><title>Login &bull; Instagram</title><form id=\"loginForm\"></form>";
        assert_eq!(verdict(page, "bo"), PageVerdict::Blocked("login_wall"));
        let legacy =
            r#"<script>window._sharedData = {"entry_data":{"LoginAndSignupPage":[{}]}};</script>"#;
        assert_eq!(verdict(legacy, "bo"), PageVerdict::Blocked("login_wall"));
        let json = r#"<script type="application/json">{"require_login":true}</script>"#;
        assert_eq!(verdict(json, "bo"), PageVerdict::Blocked("login_wall"));
    }

    #[test]
    fn a_cut_profile_is_unreadable_and_garbage_too() {
        let cut = &XIG_PAGE[..XIG_PAGE.find("\"is_private\"").unwrap_or(0)];
        assert!(matches!(verdict(cut, "ann"), PageVerdict::Unreadable(_)));
        for page in [&b""[..], b"\xff\xfe<script data-sjs>\xff", b"{\"data\":{}}"] {
            assert!(matches!(
                from_page(page, &name("bo")),
                PageVerdict::Unreadable(_)
            ));
        }
    }

    #[test]
    fn invalid_utf8_in_the_profile_is_unreadable() {
        let page =
            b"<script data-sjs>{\"xig_user_by_username\":{\"username\":\"b\xffo\"}}</script>";
        assert!(matches!(
            from_page(page, &name("bo")),
            PageVerdict::Unreadable(_)
        ));
    }
}
