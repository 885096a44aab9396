//! The other places 2026 builds of the profile page keep the user, beside
//! [`xig_profile_page`](super::xig_profile_page)'s flat counts: the same page with the same
//! noise around it, and the user written another way.

use std::fmt::Write as _;

use super::json::{Style, push_field};
use super::pages::current_page;
use super::{Counts, SampleUser, push_edge_or_null, push_xig_user};

/// A current profile page whose `xig_user_by_username` object carries the edge-style count
/// objects (`edge_followed_by`, `edge_follow`, `edge_owner_to_timeline_media`, `null` for a
/// hidden count) instead of flat counts.
pub fn xig_edge_counts_page(user: &SampleUser, target_size: usize) -> String {
    current_page(user, target_size, |out, user| {
        out.push_str("\"xig_user_by_username\":");
        push_xig_user(out, user, Counts::Edges);
    })
}

/// A current profile page that preloads the JSON endpoint's own answer instead:
/// `"xdt_api__v1__users__web_profile_info": {"user": {…}}` in the `RelayPrefetchedStreamCache`,
/// the user with `pk` (the id), another `id`, edge-style counts and `null` for a hidden one.
pub fn web_profile_info_preload_page(user: &SampleUser, target_size: usize) -> String {
    current_page(user, target_size, |out, user| {
        out.push_str("\"xdt_api__v1__users__web_profile_info\":{\"user\":");
        push_preloaded_user(out, user);
        out.push('}');
    })
}

/// Appends the preloaded endpoint's user object in the data-sjs escaping.
fn push_preloaded_user(out: &mut String, user: &SampleUser) {
    let style = Style::Sjs;
    out.push_str("{\"ai_agent_type\":null,");
    push_field(out, "biography", user.biography, style);
    out.push_str("\"business_category_name\":null,");
    super::push_links(out, user, style);
    push_edge_or_null(out, "edge_followed_by", user.followers);
    push_edge_or_null(out, "edge_follow", user.following);
    push_edge_or_null(out, "edge_owner_to_timeline_media", user.posts);
    push_field(out, "full_name", user.full_name, style);
    let _ = write!(
        out,
        "\"id\":\"{}\",\"is_business_account\":true,\"is_private\":{},\"is_verified\":{},\"pk\":\"{}\",",
        user.other_id, user.is_private, user.is_verified, user.pk
    );
    push_field(out, "profile_pic_url", user.profile_pic_url, style);
    if !user.profile_pic_url_hd.is_empty() {
        push_field(out, "profile_pic_url_hd", user.profile_pic_url_hd, style);
    }
    push_field(out, "username", user.username, style);
    out.push_str("\"__typename\":\"XDTUserDict\"}");
}
