//! The profile query's answer (the web client's `PolarisProfilePageContentQuery`), in the two
//! places it reaches a reader: as a saved answer of the query itself (the platform serves it as
//! `text/javascript`), and preloaded in the profile page's `RelayPrefetchedStreamCache`.
//!
//! Its user object uses the mobile API's names: `pk` and `id` (both the user id here),
//! `follower_count`, `following_count`, `media_count`, the HD picture in
//! `hd_profile_pic_url_info.url`, and fields the body never returns (`account_type`,
//! `is_business`, `category`, `bio_links`, …). The viewer's own `{"user": {"pk", "id"}}` sits
//! beside it, without a username. The shape follows the trimmed answer peers committed
//! (mifi/SimpleInstaBot, 2026-09); every value is invented.

use std::fmt::Write as _;

use super::SampleUser;
use super::json::{Style, push_count, push_field};
use super::pages::current_page;

/// The query's `data` members: the user, then the (anonymous) viewer.
fn push_data_members(out: &mut String, user: &SampleUser, style: Style) {
    out.push_str("\"user\":{");
    let _ = write!(out, "\"pk\":\"{}\",\"id\":\"{}\",", user.pk, user.pk);
    push_field(out, "username", user.username, style);
    push_field(out, "full_name", user.full_name, style);
    push_field(out, "biography", user.biography, style);
    out.push_str("\"biography_with_entities\":{\"entities\":[]},");
    super::push_links(out, user, style);
    push_field(out, "profile_pic_url", user.profile_pic_url, style);
    if !user.profile_pic_url_hd.is_empty() {
        out.push_str("\"hd_profile_pic_url_info\":{");
        push_field(out, "url", user.profile_pic_url_hd, style);
        out.push_str("\"width\":1080,\"height\":1080},");
    }
    let _ = write!(
        out,
        "\"is_verified\":{},\"is_private\":{},\"account_type\":3,\"is_business\":false,\
         \"is_professional_account\":true,\"category\":\"Artist\",",
        user.is_verified, user.is_private
    );
    push_count(out, "follower_count", user.followers);
    push_count(out, "following_count", user.following);
    push_count(out, "media_count", user.posts);
    let _ = write!(
        out,
        "\"mutual_followers_count\":0,\"friendship_status\":null,\"fbid_v2\":\"{}\",\
         \"aigm_account_label_info\":null}},",
        user.other_id
    );
    out.push_str(
        "\"viewer\":{\"user\":{\"pk\":\"0\",\"id\":\"0\",\"can_see_organic_insights\":false}}",
    );
}

/// A saved answer of the profile query for `user`: `{"data":{"user":{…},"viewer":{…}},
/// "extensions":{"is_final":true}}`, with a top-level `"status":"ok"` when `with_status` (peers
/// saw it both ways).
pub fn profile_query_answer(user: &SampleUser, with_status: bool) -> String {
    let mut out = String::with_capacity(2048);
    out.push_str("{\"data\":{");
    push_data_members(&mut out, user, Style::Api);
    out.push_str("},\"extensions\":{\"is_final\":true}");
    if with_status {
        out.push_str(",\"status\":\"ok\"");
    }
    out.push('}');
    out
}

/// A current profile page that preloads the profile query's answer: the
/// `adp_PolarisProfilePageContentQuery…` entry of the `RelayPrefetchedStreamCache` holds
/// `{"data":{"user":{…},"viewer":{…}}}`, among the other blobs of a current page (a
/// hovercard of another account, suggested accounts), padded to about `target_size` bytes.
pub fn profile_query_preload_page(user: &SampleUser, target_size: usize) -> String {
    current_page(user, target_size, |out, user| {
        push_data_members(out, user, Style::Sjs);
    })
}
