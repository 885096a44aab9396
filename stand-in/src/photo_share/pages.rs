//! The sample HTML pages: current (data-sjs), legacy (`_sharedData`), 404, app shell, login.

use std::fmt::Write as _;

use super::json::{Style, mix, token};
use super::{Counts, SampleUser, fill_posts, push_edge_user, push_sjs_str, push_xig_user};

/// Other invented accounts that appear in suggestions and hovercards on a profile page.
const SUGGESTED: [&str; 6] = [
    "lumen.trailsx",
    "ridge_notes",
    "cartographer.ann",
    "trailhead_co",
    "mapmaker.99",
    "north_fork",
];

pub(super) fn head(out: &mut String, title: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html><html class=\"_9dls\" lang=\"en\" dir=\"ltr\"><head>\
         <meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
         <title>{title}</title>\
         <link rel=\"preload\" href=\"https://static.photo-share.example/rsrc.php/v3/yA/r/a1.js\" as=\"script\">\
         <style>.dialog-404{{display:none}}._9dls{{color:#000}}</style>"
    );
}

/// A data-sjs script with bootloader/config noise; `i` varies its content.
pub(super) fn config_blob(out: &mut String, i: u64) {
    let _ = write!(
        out,
        "<script type=\"application/json\" data-content-len=\"512\" data-sjs>\
         {{\"require\":[[\"ScheduledServerJS\",\"handle\",null,[{{\"__bbox\":{{\"define\":[\
         [\"PolarisConfig\",[],{{\"app_id\":\"1000000000000001\",\"rollout_hash\":\"{}\"}},{i}],\
         [\"LSD\",[],{{\"token\":\"{}\"}},323],\
         [\"CurrentUserInitialData\",[],{{\"ACCOUNT_ID\":\"0\",\"USER_ID\":\"0\",\"NAME\":\"\",\"IS_LOGGED_OUT\":true}},270],\
         [\"I18n\",[],{{\"sorry\":\"Sorry, this page isn't available.\",\"login\":\"Log in\"}},17]\
         ],\"require\":[[\"Bootloader\",\"markComponentsAsImmediate\",[],[[\"PolarisLoginAndSignupPage.react\"]]]]}}}}]]]}}\
         </script>",
        token(i),
        token(i + 1000),
    );
}

/// Inline JavaScript that mentions the profile key (never data).
pub(super) fn inline_js(out: &mut String) {
    out.push_str(
        "<script>requireLazy([\"Run\"],function(r){r.onLoad(function(){\
         var q={\"xig_user_by_username\":{\"pk\":\"1\",\"username\":\"decoy\"}};\
         window.__q=q;});});</script>",
    );
}

/// A suggested-accounts blob with other usernames (the extractor must not take these).
pub(super) fn suggestions_blob(out: &mut String) {
    out.push_str(
        "<script type=\"application/json\" data-sjs>{\"require\":[[\"ScheduledServerJS\",\"handle\",null,[{\"__bbox\":{\"require\":[[\"RelayPrefetchedStreamCache\",\"next\",[],[\"adp_PolarisProfileSuggestedUsersQuery\",{\"__bbox\":{\"complete\":true,\"result\":{\"data\":{\"xdt_api__v1__discover__chaining\":{\"users\":[",
    );
    for (n, name) in SUGGESTED.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        let _ = write!(
            out,
            "{{\"pk\":\"{}\",\"username\":\"{name}\",\"full_name\":\"Suggested {n}\",\"is_verified\":false,\"profile_pic_url\":\"https:\\/\\/cdn.photo-share.example\\/s{n}.jpg\"}}",
            9_000_000 + n
        );
    }
    out.push_str("]}}}}}]]]}}]]]}</script>");
}

/// A hovercard blob of another account under the same key as the profile.
pub(super) fn hovercard_blob(out: &mut String) {
    let _ = write!(
        out,
        "<script type=\"application/json\" data-sjs>{{\"require\":[[\"RelayPrefetchedStreamCache\",\"next\",[],[\"adp_PolarisHovercardQuery\",{{\"__bbox\":{{\"result\":{{\"data\":{{\"xig_user_by_username\":{{\"pk\":\"9000100\",\"id\":\"17841400009000100\",\"username\":\"{}\",\"follower_count\":12}}}}}}}}}}]]]}}</script>",
        SUGGESTED[0]
    );
}

/// A profile page of the current kind: the profile in a data-sjs blob under
/// `"xig_user_by_username"`, surrounded by other data-sjs blobs, an inline script that mentions
/// the key, a hovercard of another account under the same key, and suggested accounts. The
/// profile blob also carries the timeline, padded so the page is about `target_size` bytes.
pub fn xig_profile_page(user: &SampleUser, target_size: usize) -> String {
    current_page(user, target_size, |out, user| {
        out.push_str("\"xig_user_by_username\":");
        push_xig_user(out, user, Counts::Flat);
    })
}

/// A current profile page whose preloader's `data` starts with what `push_user` writes (the
/// user under its key), then the timeline; see [`xig_profile_page`] for the rest.
pub(super) fn current_page(
    user: &SampleUser,
    target_size: usize,
    push_user: impl FnOnce(&mut String, &SampleUser),
) -> String {
    let mut out = String::with_capacity(target_size + 8192);
    let title = format!(
        "{} (&#064;{}) &#x2022; Photo-share photos and videos",
        user.full_name, user.username
    );
    head(&mut out, &title);
    for i in 0..6 {
        config_blob(&mut out, i);
    }
    inline_js(&mut out);
    super::guest::preloaders_blob(&mut out);
    hovercard_blob(&mut out);
    out.push_str(
        "<script type=\"application/json\" data-content-len=\"90210\" data-sjs>{\"require\":[[\"ScheduledServerJS\",\"handle\",null,[{\"__bbox\":{\"require\":[[\"RelayPrefetchedStreamCache\",\"next\",[],[\"adp_PolarisProfilePageContentQueryRelayPreloader_6600a1\",{\"__bbox\":{\"complete\":true,\"result\":{\"data\":{",
    );
    push_user(&mut out, user);
    out.push_str(",\"xdt_api__v1__feed__user_timeline_graphql_connection\":{\"edges\":[");
    fill_posts(&mut out, user, Style::Sjs, target_size);
    out.push_str("],\"page_info\":{\"end_cursor\":\"QVFB\",\"has_next_page\":true}}},\"extensions\":{\"is_final\":true}}}}]]]}}]]]}</script>");
    suggestions_blob(&mut out);
    for i in 6..8 {
        config_blob(&mut out, i);
    }
    out.push_str(
        "</head><body><div id=\"splash-screen\"></div><div id=\"mount_0_0_x\"></div></body></html>",
    );
    out
}

/// A legacy profile page: the profile in `window._sharedData = {…};`
/// (`entry_data.ProfilePage[0].graphql.user`, edge-style, `/` spelled `\u002F`), with bundle
/// noise and timeline posts padding it to about `target_size` bytes.
pub fn shared_data_profile_page(user: &SampleUser, target_size: usize) -> String {
    let mut out = String::with_capacity(target_size + 8192);
    let title = format!(
        "\n{} (@{}) &bull; Photo-share photos and videos\n",
        user.full_name, user.username
    );
    head(&mut out, &title);
    out.push_str("<script type=\"text/javascript\">(function(){window.__bundles={\"229\":\"/static/bundles/metro/LoginAndSignupPage.js/f00.js\",\"256\":\"/static/bundles/metro/HttpErrorPage.js/b00.js\"};})();</script>");
    out.push_str("</head><body class=\"\"><span id=\"react-root\"></span>");
    out.push_str("<script type=\"text/javascript\">window._sharedData = {\"config\":{\"csrf_token\":\"sampleCsrfToken0000\",\"viewer\":null,\"viewerId\":null},\"country_code\":\"US\",\"language_code\":\"en\",\"locale\":\"en_US\",\"entry_data\":{\"ProfilePage\":[{");
    let _ = write!(
        out,
        "\"logging_page_id\":\"profilePage_{}\",\"show_suggested_profiles\":false,\"graphql\":{{\"user\":",
        user.pk
    );
    push_edge_user(&mut out, user, Style::Legacy, target_size);
    out.push_str("},\"toast_content_on_load\":null,\"show_view_shop\":false}]},\"hostname\":\"www.photo-share.example\",\"is_whitelisted_crawl_bot\":false,\"rollout_hash\":\"0a1b2c\",\"bundle_variant\":\"metro\",\"frontend_env\":\"prod\"};</script>");
    let _ = write!(
        out,
        "<script type=\"text/javascript\">window.__initialDataLoaded(window._sharedData);</script>\
         <script type=\"text/javascript\" src=\"/static/bundles/metro/Consumer.js/{}.js\" crossorigin=\"anonymous\"></script>\
         </body></html>",
        token(mix(7))
    );
    out
}

/// The "page not found" page the platform serves for an unknown name: the 404 dialog in the
/// markup, a title saying so, and config blobs like any other page.
pub fn not_found_page() -> String {
    let mut out = String::with_capacity(4096);
    head(&mut out, "Page not found &#x2022; Photo-share");
    config_blob(&mut out, 404);
    out.push_str(
        "</head><body><div class=\"x1n2onr6 dialog-404\"><h2>Sorry, this page isn&#039;t available.</h2>\
         <p>The link you followed may be broken, or the page may have been removed. \
         <a href=\"/\">Go back to Photo-share.</a></p>\
         <a href=\"/accounts/login/?next=%2F\">Log in</a></div></body></html>",
    );
    out
}

/// An app shell for `username` with no profile in it, like the platform's 2022 page: routing
/// JSON that tells the client to fetch the profile from the API, UI strings mentioning the 404
/// text and the login bundle inside scripts, and nothing to extract.
pub fn shell_page(username: &str) -> String {
    let mut out = String::with_capacity(8192);
    let title = format!("{username} (&#064;{username}) &#x2022; Photo-share photos and videos");
    head(&mut out, &title);
    config_blob(&mut out, 2022);
    inline_js(&mut out);
    out.push_str(
        "<script type=\"application/json\" data-sjs>{\"require\":[[\"PolarisProfileRoot\",\"prefetch\",[],[{\"profile\":{\"expose\":false,\"preloadEnabled\":false,\"request\":{\"method\":\"GET\",\"url\":\"\\/api\\/v1\\/users\\/web_profile_info\\/\",\"params\":{\"query\":{\"username\":",
    );
    push_sjs_str(&mut out, username);
    out.push_str("}}}},\"ruling\":{\"request\":{\"url\":\"\\/api\\/v1\\/web\\/get_ruling_for_content\\/\"}}},\"entryPoint\":{\"__dr\":\"PolarisProfileRoot.entrypoint\"}}]]]}</script>");
    let _ = write!(
        out,
        "<script type=\"application/json\" data-sjs>{{\"require\":[[\"Logger\",\"page\",[],[\"profilePage_{}\"]]]}}</script>",
        mix(u64::from(username.len() as u32)) % 1_000_000_000
    );
    out.push_str("</head><body><div id=\"mount_0_0_y\"></div></body></html>");
    out
}

/// The login page an anonymous visitor is sent to when the platform wants a session.
pub fn login_page() -> String {
    let mut out = String::with_capacity(4096);
    head(&mut out, "Login &#x2022; Photo-share");
    config_blob(&mut out, 1);
    out.push_str(
        "</head><body><main><form id=\"loginForm\" method=\"post\" action=\"/accounts/login/ajax/\">\
         <input name=\"username\" aria-label=\"Phone number, username, or email\">\
         <input name=\"password\" type=\"password\" aria-label=\"Password\">\
         <button type=\"submit\">Log in</button></form></main></body></html>",
    );
    out
}
