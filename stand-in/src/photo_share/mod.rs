//! The photo-share platform's stand-in: its documents in every real shape, with invented
//! values, and a router that serves them (`router`), with what the service must answer for
//! each (`expected`).
//!
//! The demo serves these, the service's integration tests check its extractor against them,
//! and its benchmarks time it on them. No value here belongs to a real account: the shapes follow
//! the platform (field names, nesting, escaping), the contents are made up.
//!
//! Every function is deterministic and cheap: plain string building, no randomness, no I/O.

mod expected;
mod guest;
mod json;
mod moved;
mod pages;
mod pages_2026;
mod profile_query;
mod router;

use std::fmt::Write as _;

pub use expected::expected_body;
pub use guest::{
    CHANGED_ANSWER, LOGGEDOUT_DOC_ID, LOGGEDOUT_QUERY, NO_SUCH_USER_ANSWER, PROFILE_QUERY,
    PROFILE_QUERY_DOC_ID, PROVIDER_VARIABLES, REQUIRE_LOGIN_2026, embed_page, loggedout_answer,
};
use json::{Style, open_edge, push_count, push_field, push_post, push_str};
pub use moved::{
    MOVED_USER_KEY, moved_user_json, moved_user_page, unknown_counts_json, unknown_counts_page,
};
pub use pages::{
    login_page, not_found_page, shared_data_profile_page, shell_page, xig_profile_page,
};
pub use pages_2026::{web_profile_info_preload_page, xig_edge_counts_page};
pub use profile_query::{profile_query_answer, profile_query_preload_page};
pub use router::{STAND_IN, drifted_router, router, sample_by_name, sample_by_pk, sample_user};

/// An invented account: what the upstream documents say about it, in decoded form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleUser {
    /// The handle, lowercase as on the platform.
    pub username: &'static str,
    /// The user id (`id` in edge-style JSON, `pk` in the mobile-style data-sjs object).
    pub pk: &'static str,
    /// The data-sjs object's own `id`: a different number the extractor must not return.
    pub other_id: &'static str,
    /// The display name.
    pub full_name: &'static str,
    /// The bio, decoded (entities such as `&amp;` are part of the text).
    pub biography: &'static str,
    /// The small picture URL, decoded.
    pub profile_pic_url: &'static str,
    /// The HD picture URL, decoded; `""` when the documents carry none.
    pub profile_pic_url_hd: &'static str,
    /// Whether the platform verified the account.
    pub is_verified: bool,
    /// Whether the account is private.
    pub is_private: bool,
    /// Followers, `None` when the documents leave the count out.
    pub followers: Option<u64>,
    /// Accounts followed, `None` when left out.
    pub following: Option<u64>,
    /// Posts, `None` when left out.
    pub posts: Option<u64>,
    /// The website link, decoded; `None`: `null` in the documents.
    pub external_url: Option<&'static str>,
    /// The bio links: (the link, its title, whether the documents give it only wrapped in the
    /// platform's redirector, as `lynx_url`).
    pub bio_links: &'static [(&'static str, &'static str, bool)],
    /// The pronouns shown.
    pub pronouns: &'static [&'static str],
    /// The category; `None`: the owner hides it (`""` in the documents).
    pub category_name: Option<&'static str>,
}

/// A public, verified account with a large following and a bio that exercises decoding:
/// an HTML entity that must stay as is, a quote, emoji, and a URL whose `/` the JSON escapes.
pub const PUBLIC_USER: SampleUser = SampleUser {
    username: "lumen.trails",
    pk: "48151623420",
    other_id: "17841448151623420",
    full_name: "Lumen Trails \u{1f5fa}\u{fe0f}",
    biography: "Maps &amp; field notes. \"Get lost, then found.\" \u{1f9ed}\nhttps://lumen.example/notes",
    profile_pic_url: "https://cdn.photo-share.example/v/t51/lumen_s150.jpg?stp=dst-jpg_s150x150&_nc_ht=cdn&oh=00_AbC1",
    profile_pic_url_hd: "https://cdn.photo-share.example/v/t51/lumen_s320.jpg?stp=dst-jpg_s320x320&_nc_ht=cdn&oh=00_AbC2",
    is_verified: true,
    is_private: false,
    followers: Some(12_345_678),
    following: Some(321),
    posts: Some(4_567),
    external_url: Some("https://lumen.example/"),
    bio_links: &[
        ("https://lumen.example/notes", "Notes", false),
        (
            "https://maps.lumen.example/?trail=north&km=12",
            "Trail maps",
            true,
        ),
    ],
    pronouns: &["they", "them"],
    category_name: Some("Outdoor & Sporting Goods"),
};

/// A private account whose documents give limited information: no HD picture (the body falls
/// back to the small one) and no post count (the body says `null`, not 0).
pub const PRIVATE_USER: SampleUser = SampleUser {
    username: "quiet_harbor",
    pk: "27182818284",
    other_id: "17841427182818284",
    full_name: "Quiet Harbor",
    biography: "",
    profile_pic_url: "https://cdn.photo-share.example/v/t51/harbor_s150.jpg?stp=dst-jpg_s150x150&oh=00_XyZ9",
    profile_pic_url_hd: "",
    is_verified: false,
    is_private: true,
    followers: Some(312),
    following: Some(287),
    posts: None,
    external_url: None,
    bio_links: &[],
    pronouns: &[],
    category_name: None,
};

/// A business account: the JSON endpoint answers it with the 2026 schema 400
/// ([`business_schema_json`]), and its page preloads the endpoint's answer
/// ([`web_profile_info_preload_page`]) with the post count hidden.
pub const BUSINESS_USER: SampleUser = SampleUser {
    username: "copper.kettle.bakery",
    pk: "31415926535",
    other_id: "17841431415926535",
    full_name: "Copper Kettle Bakery",
    biography: "Sourdough & pastries \u{1f950} Tue\u{2013}Sun 7\u{2013}15",
    profile_pic_url: "https://cdn.photo-share.example/v/t51/kettle_s150.jpg?stp=dst-jpg_s150x150&oh=00_KtL1",
    profile_pic_url_hd: "https://cdn.photo-share.example/v/t51/kettle_s320.jpg?stp=dst-jpg_s320x320&oh=00_KtL2",
    is_verified: false,
    is_private: false,
    followers: Some(8_642),
    following: Some(97),
    posts: None,
    external_url: Some("https://copper-kettle.example/"),
    bio_links: &[("https://copper-kettle.example/order", "Order ahead", true)],
    pronouns: &[],
    category_name: Some("Bakery"),
};

/// A creator account: the JSON endpoint answers it with the schema 400 as it does business
/// accounts, and its page preloads the profile query's answer
/// ([`profile_query_preload_page`]): the user in the query's mobile names, the HD picture in
/// `hd_profile_pic_url_info`.
pub const CREATOR_USER: SampleUser = SampleUser {
    username: "tide.pool.notes",
    pk: "16180339887",
    other_id: "17841416180339887",
    full_name: "Tide Pool Notes \u{1f980}",
    biography: "Rock pools, low tides & the small things in them.\nPrints: https://tide.example",
    profile_pic_url: "https://cdn.photo-share.example/v/t51/tide_s150.jpg?stp=dst-jpg_s150x150&oh=00_TdP1",
    profile_pic_url_hd: "https://cdn.photo-share.example/v/t51/tide_s1080.jpg?stp=dst-jpg_s1080x1080&oh=00_TdP2",
    is_verified: false,
    is_private: false,
    followers: Some(23_456),
    following: Some(512),
    posts: Some(389),
    external_url: Some("https://tide.example/"),
    bio_links: &[("https://tide.example", "Shop", false)],
    pronouns: &["she", "her"],
    category_name: Some("Artist"),
};

/// A public account whose JSON endpoint answers as the retired endpoint did in 2026-09 for
/// clients without a session (429 and an HTML "Please wait a few minutes" page, for every
/// name): its page still answers, so the lookup falls through to it (`x-source: page`).
pub const RETIRED_JSON_USER: SampleUser = SampleUser {
    username: "north.shore.kites",
    pk: "14142135623",
    other_id: "17841414142135623",
    full_name: "North Shore Kites",
    biography: "Kites, wind and long beaches.",
    profile_pic_url: "https://cdn.photo-share.example/v/t51/kites_s150.jpg?stp=dst-jpg_s150x150&oh=00_NsK1",
    profile_pic_url_hd: "https://cdn.photo-share.example/v/t51/kites_s320.jpg?stp=dst-jpg_s320x320&oh=00_NsK2",
    is_verified: false,
    is_private: false,
    followers: Some(5_432),
    following: Some(210),
    posts: Some(128),
    external_url: None,
    bio_links: &[],
    pronouns: &["he"],
    category_name: Some("Sports & Recreation"),
};

/// What the retired JSON endpoint answers (with 429), as a page of HTML.
pub const PLEASE_WAIT_HTML: &str = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Page couldn&#039;t load</title></head><body><div><h2>Please wait a few minutes before you try again.</h2></div></body></html>";

/// A name whose JSON endpoint answers 200 with a login page instead of JSON, and whose page is
/// the app shell: the platform refusing us (429 `upstream_blocked`).
pub const HTML_FOR_JSON_NAME: &str = "html.for.json";

/// The size of the profile page the stand-in serves (as large as a real one).
pub const DEFAULT_PAGE_SIZE: usize = 365 * 1024;

/// A username that no sample upstream knows: the API says `user: null` and the page is a 404.
pub const NOT_FOUND_NAME: &str = "no.such.sample_user";

/// Appends the edge-style user fields (API and legacy page) up to the timeline edges, which the
/// caller then fills and closes with [`close_edge_user`].
fn open_edge_user(out: &mut String, user: &SampleUser, style: Style) {
    out.push_str("{\"ai_agent_type\":null,");
    push_field(out, "biography", user.biography, style);
    push_links(out, user, style);
    out.push_str("\"fb_profile_biolink\":null,\"biography_with_entities\":{");
    push_field(out, "raw_text", user.biography, style);
    out.push_str("\"entities\":[]},\"blocked_by_viewer\":false,\"restricted_by_viewer\":null,\"country_block\":false,\"eimu_id\":\"110000000000001\",");
    open_edge(out, "edge_followed_by", user.followers);
    close_object(out);
    let _ = write!(
        out,
        "\"fbid\":\"{}\",\"followed_by_viewer\":false,",
        user.other_id
    );
    open_edge(out, "edge_follow", user.following);
    close_object(out);
    out.push_str("\"follows_viewer\":false,");
    push_field(out, "full_name", user.full_name, style);
    out.push_str("\"group_metadata\":null,\"has_ar_effects\":false,\"has_clips\":true,\"has_guides\":false,\"has_channel\":false,\"has_blocked_viewer\":false,\"highlight_reel_count\":4,\"has_requested_viewer\":false,\"hide_like_and_view_counts\":false,");
    let _ = write!(out, "\"id\":\"{}\",", user.pk);
    out.push_str("\"is_business_account\":false,\"is_professional_account\":true,\"is_supervision_enabled\":false,\"is_guardian_of_viewer\":false,\"is_supervised_by_viewer\":false,\"is_supervised_user\":false,\"is_embeds_disabled\":false,\"is_joined_recently\":false,\"guardian_id\":null,\"business_address_json\":\"{\\\"city_name\\\": null, \\\"zip_code\\\": null}\",\"business_contact_method\":\"UNKNOWN\",\"business_email\":null,\"business_phone_number\":null,\"business_category_name\":null,\"overall_category_name\":null,\"category_enum\":null,");
    let _ = write!(
        out,
        "\"is_private\":{},\"is_verified\":{},\"is_verified_by_mv4b\":false,\"is_regulated_c18\":false,\
         \"edge_mutual_followed_by\":{{\"count\":0,\"edges\":[]}},\"pinned_channels_list_count\":0,",
        user.is_private, user.is_verified
    );
    push_field(out, "profile_pic_url", user.profile_pic_url, style);
    if !user.profile_pic_url_hd.is_empty() {
        push_field(out, "profile_pic_url_hd", user.profile_pic_url_hd, style);
    }
    out.push_str("\"requested_by_viewer\":false,\"should_show_category\":true,\"should_show_public_contacts\":false,\"show_account_transparency_details\":true,\"transparency_label\":null,\"transparency_product\":null,");
    push_field(out, "username", user.username, style);
    out.push_str("\"connected_fb_page\":null,\"edge_felix_video_timeline\":{\"count\":0,\"page_info\":{\"has_next_page\":false,\"end_cursor\":null},\"edges\":[]},");
    open_edge(out, "edge_owner_to_timeline_media", user.posts);
    out.push_str(
        "\"page_info\":{\"has_next_page\":true,\"end_cursor\":\"QVFBc2FtcGxl\"},\"edges\":[",
    );
}

/// Closes what [`open_edge_user`] left open after the timeline edges.
fn close_edge_user(out: &mut String) {
    out.push_str("]},\"edge_saved_media\":{\"count\":0,\"edges\":[]},\"edge_media_collections\":{\"count\":0,\"edges\":[]}}");
}

/// Replaces a trailing `,` with `}` (or appends `}` after `{`).
fn close_object(out: &mut String) {
    if out.ends_with(',') {
        out.pop();
    }
    out.push_str("},");
}

/// Appends timeline posts until `out` reaches `target_size` bytes.
fn fill_posts(out: &mut String, user: &SampleUser, style: Style, target_size: usize) {
    let mut i = 0u64;
    while out.len() < target_size {
        if i > 0 {
            out.push(',');
        }
        push_post(out, i, user.pk, user.username, style);
        i += 1;
    }
}

/// Appends the edge-style user object, padded with posts so the document reaches at least
/// `target_size` bytes (and at most a few kilobytes more).
fn push_edge_user(out: &mut String, user: &SampleUser, style: Style, target_size: usize) {
    open_edge_user(out, user, style);
    fill_posts(out, user, style, target_size);
    close_edge_user(out);
}

/// A `/api/v1/users/web_profile_info/` answer for `user` in the 2024 field set, padded with
/// timeline edges to about `target_size` bytes (the real one is a few hundred KB, mostly edges).
pub fn web_profile_info(user: &SampleUser, target_size: usize) -> String {
    let mut out = String::with_capacity(target_size + 4096);
    out.push_str("{\"data\":{\"user\":");
    push_edge_user(&mut out, user, Style::Api, target_size);
    out.push_str("},\"status\":\"ok\"}");
    out
}

/// The API's answer for a name that does not exist.
pub fn user_null_json() -> String {
    "{\"data\":{\"user\":null},\"status\":\"ok\"}".to_owned()
}

/// The HTTP 401 body the API sends a throttled anonymous caller.
pub fn require_login_json() -> String {
    "{\"message\":\"Please wait a few minutes, then retry.\",\"require_login\":true,\"status\":\"fail\"}"
        .to_owned()
}

/// The HTTP 400 body of a checkpoint (the platform wants a human to prove themselves).
pub fn checkpoint_json() -> String {
    "{\"message\":\"checkpoint_required\",\"checkpoint_url\":\"\\/challenge\\/AbCdEf12\\/xYz34\\/\",\"lock\":false,\"flow_render_type\":0,\"status\":\"fail\"}"
        .to_owned()
}

/// The HTTP 400 body the JSON endpoint answers a business or creator account with since
/// 2026-07: a deleted schema asset, not a refusal.
pub fn business_schema_json() -> String {
    "{\"message\":\"Asset asset://laser.provider/ig_business_category_subvertical has been deleted. You cannot use this schema\",\"status\":\"fail\"}"
        .to_owned()
}

/// How a data-sjs user object gives its counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Counts {
    /// `follower_count`, `following_count`, `media_count`.
    Flat,
    /// `edge_followed_by`, `edge_follow`, `edge_owner_to_timeline_media` objects (`null` when
    /// the count is hidden).
    Edges,
}

/// Appends an edge-style count object, `null` when the count is hidden.
fn push_edge_or_null(out: &mut String, key: &str, count: Option<u64>) {
    match count {
        Some(n) => {
            let _ = write!(out, "\"{key}\":{{\"count\":{n}}},");
        }
        None => {
            let _ = write!(out, "\"{key}\":null,");
        }
    }
}

/// Appends the mobile-style user object of the data-sjs blob (`pk` the id, `id` another one).
fn push_xig_user(out: &mut String, user: &SampleUser, counts: Counts) {
    let style = Style::Sjs;
    out.push_str("{\"ai_agent_type\":null,");
    push_field(out, "biography", user.biography, style);
    out.push_str("\"biography_with_entities\":{\"entities\":[]},\"category\":null,");
    push_links(out, user, style);
    let _ = write!(out, "\"fbid_v2\":\"{}\",", user.other_id);
    if counts == Counts::Flat {
        push_count(out, "follower_count", user.followers);
        push_count(out, "following_count", user.following);
    } else {
        push_edge_or_null(out, "edge_followed_by", user.followers);
        push_edge_or_null(out, "edge_follow", user.following);
        push_edge_or_null(out, "edge_owner_to_timeline_media", user.posts);
    }
    out.push_str("\"friendship_status\":null,");
    push_field(out, "full_name", user.full_name, style);
    out.push_str("\"has_profile_pic\":true,");
    if !user.profile_pic_url_hd.is_empty() {
        out.push_str("\"hd_profile_pic_url_info\":{");
        push_field(out, "url", user.profile_pic_url_hd, style);
        out.push_str("\"width\":320,\"height\":320},");
    }
    let _ = write!(out, "\"id\":\"{}\",", user.other_id);
    let _ = write!(
        out,
        "\"is_private\":{},\"is_verified\":{},\"is_embeds_disabled\":false,",
        user.is_private, user.is_verified
    );
    if counts == Counts::Flat {
        push_count(out, "media_count", user.posts);
    }
    let _ = write!(out, "\"pk\":\"{}\",", user.pk);
    push_field(out, "profile_pic_url", user.profile_pic_url, style);
    out.push_str("\"transparency_label\":null,");
    push_field(out, "username", user.username, style);
    out.push_str("\"__typename\":\"XDTUserDict\"}");
}

/// Appends the user's link fields as every form writes them: `external_url` (and, when set,
/// the same link wrapped in the redirector, `external_url_linkshimmed`), `bio_links` (each
/// with its `lynx_url`, and its `url` unless the sample gives it only wrapped), `pronouns`, and
/// `category_name` (`""` when the owner hides it).
fn push_links(out: &mut String, user: &SampleUser, style: Style) {
    match user.external_url {
        Some(link) => {
            push_field(out, "external_url", link, style);
            push_field(out, "external_url_linkshimmed", &wrapped(link), style);
        }
        None => out.push_str("\"external_url\":null,"),
    }
    out.push_str("\"bio_links\":[");
    for (i, (link, title, only_wrapped)) in user.bio_links.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('{');
        push_field(out, "title", title, style);
        push_field(out, "lynx_url", &wrapped(link), style);
        if !only_wrapped {
            push_field(out, "url", link, style);
        }
        out.push_str("\"link_type\":\"external\"}");
    }
    out.push_str("],\"pronouns\":[");
    for (i, pronoun) in user.pronouns.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_str(out, pronoun, style);
    }
    out.push_str("],");
    push_field(
        out,
        "category_name",
        user.category_name.unwrap_or(""),
        style,
    );
}

/// `link` wrapped in the platform's link redirector, as its documents give it.
fn wrapped(link: &str) -> String {
    let encoded: String = url::form_urlencoded::byte_serialize(link.as_bytes()).collect();
    format!("https://l.instagram.com/?u={encoded}&e=AT0invented")
}

/// Appends `s` as a JSON string in the data-sjs style (used by the page builders).
fn push_sjs_str(out: &mut String, s: &str) {
    push_str(out, s, Style::Sjs);
}

#[cfg(test)]
mod tests;
