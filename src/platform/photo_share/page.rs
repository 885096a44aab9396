//! The profile HTML page, `{base}/{username}/`: the fallback when the API will not answer, and
//! the proof of absence when the API says `user: null`.

use super::PhotoShareProfile;
use super::parts::{answerable, is_requested, searched};
use super::{markers, shared_data, xig};
use crate::html;
use crate::platform::Reading;
use crate::username::Subject;

/// What [`from_page`] says of a page without a profile that is neither a 404 nor a login page.
pub const NO_PROFILE: &str = "no profile in page";

/// [`from_page`] as a lookup's answer: a page without a profile that is the app shell
/// (`markers::is_app_shell`) is the platform refusing us, `Blocked("app_shell")`, and is
/// waited out like any block. A saved document is still read by [`from_page`] alone.
pub fn from_page_answer<'a>(
    body: &[u8],
    requested: impl Into<Subject<'a>>,
) -> Reading<PhotoShareProfile> {
    match from_page(body, requested) {
        Reading::Unreadable(why) if why == NO_PROFILE && markers::is_app_shell(body) => {
            Reading::blocked("app_shell")
        }
        reading => reading,
    }
}

/// Reads a profile HTML page.
///
/// The profile is taken from, in page order:
/// - a `<script type="application/json" data-sjs>` blob holding the user under
///   `"xig_user_by_username"` (current pages; mobile-API names, `pk` as the id, never its
///   `id`; flat counts or edge-style count objects) or the preloaded endpoint answer
///   `"xdt_api__v1__users__web_profile_info": {"user": …}` (`pk`, else `id`);
/// - the legacy `window._sharedData = {…};` state (`entry_data.ProfilePage[0].graphql.user`) or
///   `window.__additionalDataLoaded(…, {"graphql":{"user":…}})`.
///
/// When no known place holds the requested user, the anchored search looks for their object
/// in every JSON script of the page (never taking another user's; not on the platform's 404
/// or login page). When no profile of the requested user is found at all
/// (`"xig_user_by_username": null` or `"user": null` counts as none found: on its own it
/// proves nothing):
/// - a user object of another username → `Unreadable`;
/// - a profile state that is cut or malformed → `Unreadable`;
/// - the "page not found" page ("Sorry, this page isn't available", `dialog-404`, a `<title>`
///   starting "Page not found", or the legacy `HttpErrorPage` state) → [`Reading::NotFound`],
///   which **confirms** that the account does not exist;
/// - a login page (login form markup, a `Login` title, `"require_login": true`, or the legacy
///   `LoginAndSignupPage` state) → `Blocked("login_wall")`;
/// - anything else, such as an app shell that loads the profile by XHR →
///   `Unreadable("no profile in page")` ([`NO_PROFILE`]; [`from_page_answer`] tells the shell
///   apart).
///
/// Missing strings become `""`, missing booleans `false`, missing counts `None`; strings are
/// JSON-decoded and never HTML-entity decoded. Markers are only searched where the platform
/// alone writes (text between tags, `class` attributes, the title of a page that names no
/// account), never in scripts (every page mentions them there) nor in attribute values or
/// titles that carry the user's own name and bio.
pub fn from_page<'a>(body: &[u8], requested: impl Into<Subject<'a>>) -> Reading<PhotoShareProfile> {
    let requested = requested.into();
    let keys = xig::Keys::new();
    let mut other_user = false;
    let mut broken: Option<String> = None;
    let mut login_state = false;
    let mut error_state = false;
    for script in html::scripts(body) {
        if script.has_attr("data-sjs") {
            let found = xig::scan(script.text, requested, &keys);
            if let Some(profile) = found.profile {
                return answerable(profile);
            }
            other_user |= found.other_user;
            broken = broken.or(found.broken);
        } else if let Some(legacy) = shared_data::read(script.text) {
            match legacy.profile {
                Some(profile) if is_requested(&profile, requested) => {
                    return answerable(profile);
                }
                Some(_) => other_user = true,
                None => {}
            }
            login_state |= legacy.login_page;
            error_state |= legacy.error_page;
            broken = broken.or(legacy.broken);
        }
    }
    // No known place holds the requested user: their object anywhere in the page's JSON,
    // unless the page is the platform's own 404 or login page.
    if !error_state && !login_state && !markers::is_not_found_page(body) {
        let json = html::scripts(body)
            .map(|script| script.text.trim_ascii())
            .filter(|text| text.starts_with(b"{") || text.starts_with(b"["));
        if let Some(reading) = searched(json, requested) {
            return reading;
        }
    }
    if other_user {
        return Reading::Unreadable("page profile is not the requested username".to_owned());
    }
    if let Some(broken) = broken {
        return Reading::Unreadable(broken);
    }
    if error_state || markers::is_not_found_page(body) {
        return Reading::NotFound;
    }
    if login_state || markers::is_login_page(body) {
        return Reading::blocked("login_wall");
    }
    Reading::Unreadable(NO_PROFILE.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;
    use crate::username::Username;

    fn name(raw: &str) -> Username {
        Username::parse(Platform::PhotoShare, raw).expect("valid test name")
    }

    fn verdict(page: &str, raw: &str) -> Reading<PhotoShareProfile> {
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
        let Reading::Found(p) = verdict(XIG_PAGE, "ANN") else {
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
        assert!(matches!(v, Reading::Unreadable(ref why) if why.contains("not the requested")));
    }

    #[test]
    fn reads_the_legacy_shared_data_page() {
        let page = r#"<html><script type="text/javascript">window._sharedData = {"entry_data":
            {"ProfilePage":[{"graphql":{"user":{"id":"5","username":"bo","is_private":true,
            "profile_pic_url":"https:\u002F\u002Fcdn.test\u002Fp.jpg"}}}]}};</script></html>"#;
        let Reading::Found(p) = verdict(page, "bo") else {
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
        assert_eq!(verdict(page, "bo"), Reading::NotFound);
        let legacy =
            r#"<script>window._sharedData = {"entry_data":{"HttpErrorPage":[{}]}};</script>"#;
        assert_eq!(verdict(legacy, "bo"), Reading::NotFound);
    }

    #[test]
    fn a_shell_without_profile_is_unreadable() {
        let page = r#"<html><title>Bo (&#064;bo) &bull; Photos</title>
            <script type="application/json" data-sjs>{"profile":{"request":{"url":
            "\/api\/v1\/users\/web_profile_info\/","params":{"query":{"username":"bo"}}}}}</script>
            <script>var s="Sorry, this page isn't available"; var m="/bundles/LoginAndSignupPage.js";</script>"#;
        assert_eq!(
            verdict(page, "bo"),
            Reading::Unreadable("no profile in page".to_owned())
        );
    }

    #[test]
    fn a_login_page_is_blocked() {
        let page = "<html><title>Login &bull; Instagram</title><form id=\"loginForm\"></form>";
        assert_eq!(verdict(page, "bo"), Reading::blocked("login_wall"));
        let legacy =
            r#"<script>window._sharedData = {"entry_data":{"LoginAndSignupPage":[{}]}};</script>"#;
        assert_eq!(verdict(legacy, "bo"), Reading::blocked("login_wall"));
        let json = r#"<script type="application/json">{"require_login":true}</script>"#;
        assert_eq!(verdict(json, "bo"), Reading::blocked("login_wall"));
    }

    #[test]
    fn a_cut_profile_is_unreadable_and_garbage_too() {
        let cut = &XIG_PAGE[..XIG_PAGE.find("\"is_private\"").unwrap_or(0)];
        assert!(matches!(verdict(cut, "ann"), Reading::Unreadable(_)));
        for page in [&b""[..], b"\xff\xfe<script data-sjs>\xff", b"{\"data\":{}}"] {
            assert!(matches!(
                from_page(page, &name("bo")),
                Reading::Unreadable(_)
            ));
        }
    }

    /// A data-sjs page as the 2026 builds write it: `blob` inside the
    /// `RelayPrefetchedStreamCache` wrapper, after a config blob.
    fn page_2026(data: &str) -> String {
        format!(
            r#"<!DOCTYPE html><html><head><title>Bo (&#064;bo) &bull; Photos</title>
            <script type="application/json" data-sjs>{{"require":[["Bootloader","x",[]]]}}</script>
            <script type="application/json" data-sjs>{{"require":[["ScheduledServerJS","handle",
            null,[{{"__bbox":{{"require":[["RelayPrefetchedStreamCache","next",[],["adp_Q",
            {{"__bbox":{{"complete":true,"result":{{"data":{data}}}}}}}]]]}}}}]]]}}</script>
            </head></html>"#
        )
    }

    #[test]
    fn xig_user_with_edge_count_objects_2026() {
        // Some 2026 builds keep the edge-style count objects inside `xig_user_by_username`.
        let page = page_2026(
            r#"{"xig_user_by_username":{"id":"17841400000000005","pk":"5","username":"bo",
            "edge_followed_by":{"count":12},"edge_follow":{"count":3},
            "edge_owner_to_timeline_media":{"count":7,"edges":[]}}}"#,
        );
        let Reading::Found(p) = verdict(&page, "BO") else {
            panic!("expected a profile");
        };
        assert_eq!(p.id, "5");
        assert_eq!(
            (
                p.edge_followed_by.count,
                p.edge_follow.count,
                p.edge_owner_to_timeline_media.count
            ),
            (Some(12), Some(3), Some(7))
        );
        // A count a private account's view hides stays null, whichever spelling hides it.
        let hidden = page_2026(
            r#"{"xig_user_by_username":{"pk":"5","username":"bo","follower_count":null,
            "is_private":true,"edge_followed_by":null,
            "edge_owner_to_timeline_media":{"count":null}}}"#,
        );
        let Reading::Found(p) = verdict(&hidden, "bo") else {
            panic!("expected a profile");
        };
        assert_eq!(p.edge_followed_by.count, None);
        assert_eq!(p.edge_owner_to_timeline_media.count, None);
        // A public account's follower count is never hidden: the page is unreadable.
        let public = hidden.replace(r#""is_private":true"#, r#""is_private":false"#);
        assert!(matches!(
            verdict(&public, "bo"),
            Reading::Unreadable(why) if why.contains("follower count")
        ));
    }

    #[test]
    fn web_profile_info_preloaded_in_the_stream_cache_2026() {
        // Other 2026 builds preload the JSON endpoint's own answer instead.
        let page = page_2026(
            r#"{"xdt_api__v1__users__web_profile_info":{"user":{"id":"99","pk":"5",
            "username":"bo","full_name":"Bo","is_private":true,
            "profile_pic_url":"https:\/\/cdn.test\/s.jpg",
            "edge_followed_by":{"count":12},"edge_follow":{"count":3},
            "edge_owner_to_timeline_media":null}}}"#,
        );
        let Reading::Found(p) = verdict(&page, "bo") else {
            panic!("expected a profile");
        };
        assert_eq!(p.id, "5", "pk over id");
        assert_eq!(p.full_name, "Bo");
        assert!(p.is_private);
        assert_eq!(p.profile_pic_url_hd, "https://cdn.test/s.jpg");
        assert_eq!(p.edge_followed_by.count, Some(12));
        assert_eq!(p.edge_owner_to_timeline_media.count, None);
        // Without a pk, the endpoint's own `id` is the user id.
        let no_pk = page_2026(
            r#"{"xdt_api__v1__users__web_profile_info":{"user":{"id":"99","username":"bo",
            "follower_count":4}}}"#,
        );
        let Reading::Found(p) = verdict(&no_pk, "bo") else {
            panic!("expected a profile");
        };
        assert_eq!((p.id.as_str(), p.edge_followed_by.count), ("99", Some(4)));
        // Another user, and `"user": null`, are no profile of the requested one.
        let other = page_2026(
            r#"{"xdt_api__v1__users__web_profile_info":{"user":{"pk":"1","username":"bob"}}}"#,
        );
        assert!(
            matches!(verdict(&other, "bo"), Reading::Unreadable(ref why) if why.contains("not the requested"))
        );
        let null = page_2026(r#"{"xdt_api__v1__users__web_profile_info":{"user":null}}"#);
        assert!(matches!(verdict(&null, "bo"), Reading::Unreadable(_)));
    }

    #[test]
    fn the_profile_querys_preloaded_answer_2026_09() {
        // mifi/SimpleInstaBot#328/#329 (2026-09-14): the page preloads the profile query's
        // answer, `{"data":{"user":{…},"viewer":{"user":{…}}}}`, in the stream cache; another
        // account's hovercard sits under the xig key on the same page.
        let page = format!(
            r#"{}<script type="application/json" data-sjs>{{"require":[["RelayPrefetchedStreamCache",
            "next",[],["adp_PolarisHovercardQuery",{{"__bbox":{{"result":{{"data":
            {{"xig_user_by_username":{{"pk":"9","username":"someone.else","follower_count":1}}}}}}}}}}]]]}}</script>"#,
            page_2026(
                r#"{"user":{"pk":"5","id":"5","username":"bo","full_name":"Bo",
                "hd_profile_pic_url_info":{"url":"https:\/\/cdn.test\/hd.jpg"},
                "profile_pic_url":"https:\/\/cdn.test\/s.jpg","is_private":false,
                "account_type":2,"is_business":true,"category":"Bakery",
                "follower_count":12,"following_count":3,"media_count":7},
                "viewer":{"user":{"pk":"0","id":"0"}}}"#
            )
        );
        let Reading::Found(p) = verdict(&page, "BO") else {
            panic!("expected a profile");
        };
        assert_eq!((p.id.as_str(), p.full_name.as_str()), ("5", "Bo"));
        assert_eq!(p.profile_pic_url_hd, "https://cdn.test/hd.jpg");
        assert_eq!(
            (
                p.edge_followed_by.count,
                p.edge_follow.count,
                p.edge_owner_to_timeline_media.count
            ),
            (Some(12), Some(3), Some(7))
        );
    }

    #[test]
    fn a_user_under_an_unknown_key_still_reads_and_another_users_object_is_never_taken() {
        // The user moved under a key no known place uses, beside another account's hovercard.
        let hovercard = r#"<script type="application/json" data-sjs>{"data":
            {"xig_user_by_username":{"pk":"9","username":"someone.else","follower_count":1}}}
            </script>"#;
        let moved = page_2026(
            r#"{"fetch__XDTUserDict":{"pk":"5","username":"bo","full_name":"Bo",
            "follower_count":12,"following_count":3,"media_count":7}}"#,
        );
        let page = format!("{hovercard}{moved}");
        let Reading::Found(p) = verdict(&page, "bo") else {
            panic!("expected a profile");
        };
        assert_eq!((p.id.as_str(), p.full_name.as_str()), ("5", "Bo"));
        assert_eq!(p.edge_followed_by.count, Some(12));
        // Nobody else's object is ever the profile.
        for other in ["bob", "someone"] {
            assert!(
                matches!(verdict(&page, other), Reading::Unreadable(_)),
                "{other}"
            );
        }
    }

    #[test]
    fn invalid_utf8_in_the_profile_is_unreadable() {
        let page =
            b"<script data-sjs>{\"xig_user_by_username\":{\"username\":\"b\xffo\"}}</script>";
        assert!(matches!(
            from_page(page, &name("bo")),
            Reading::Unreadable(_)
        ));
    }
}
