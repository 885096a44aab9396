//! The platform moving its documents: the same profile written in a shape no reader knows,
//! as a drifted stand-in serves it and as the service's tests read it (500
//! `extraction_failed`, captured, never a body with made-up counts).

use super::SampleUser;

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
