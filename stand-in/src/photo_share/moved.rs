//! The platform moving its documents: the same profile in shapes the known places do not
//! cover. A document whose user object moved must still read (the readers' anchored search);
//! one whose counts are under names the platform never used is what a drifted stand-in
//! serves, and must say so (500 `extraction_failed`, captured, never made-up counts).

use super::pages::current_page;
use super::{Counts, SampleUser, push_xig_user};

/// The key a moved page keeps the user under: one no known place uses.
pub const MOVED_USER_KEY: &str = "fetch__XDTUserDict";

/// `user`'s profile JSON with the user under `data.account` instead of `data.user`.
pub fn moved_user_json(user: &SampleUser, target_size: usize) -> String {
    super::web_profile_info(user, target_size).replacen(
        "{\"data\":{\"user\":",
        "{\"data\":{\"account\":",
        1,
    )
}

/// A current profile page whose preloader keeps the user (in the xig object's names) under
/// [`MOVED_USER_KEY`], beside another account's hovercard under the known xig key.
pub fn moved_user_page(user: &SampleUser, target_size: usize) -> String {
    current_page(user, target_size, |out, user| {
        out.push('"');
        out.push_str(MOVED_USER_KEY);
        out.push_str("\":");
        push_xig_user(out, user, Counts::Flat);
    })
}

/// The count keys of the JSON and of the page, and the names they are renamed to: names no
/// table lists.
const RENAMED_COUNTS: [(&str, &str); 6] = [
    ("\"edge_followed_by\":", "\"edge_fans\":"),
    ("\"edge_follow\":", "\"edge_follows\":"),
    ("\"edge_owner_to_timeline_media\":", "\"edge_posts\":"),
    ("\"follower_count\":", "\"fans_total\":"),
    ("\"following_count\":", "\"follows_total\":"),
    ("\"media_count\":", "\"posts_total\":"),
];

fn renamed(doc: String) -> String {
    RENAMED_COUNTS
        .iter()
        .fold(doc, |doc, (from, to)| doc.replace(from, to))
}

/// `user`'s profile JSON with every count under a name the platform never used: the user is
/// at `data.user`, its counts are not where any form keeps them.
pub fn unknown_counts_json(user: &SampleUser, target_size: usize) -> String {
    renamed(super::web_profile_info(user, target_size))
}

/// `user`'s current profile page (the xig object) with every count renamed the same way.
pub fn unknown_counts_page(user: &SampleUser, target_size: usize) -> String {
    renamed(super::xig_profile_page(user, target_size))
}
