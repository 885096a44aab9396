//! The platform moving its page: the same profile written in a shape no reader knows. Each
//! is what a drifted stand-in serves, and what the service's tests read to check it says so
//! (500 `extraction_failed`, captured) rather than answering with a made-up value.

use super::{Era, SampleUser};

/// The count keys of a page and the names they are renamed to: names no table lists.
const RENAMED_COUNTS: [(&str, &str); 6] = [
    ("\"followerCount\":", "\"fansTotal\":"),
    ("\"followingCount\":", "\"followsTotal\":"),
    ("\"heart\":", "\"likesReceived\":"),
    ("\"heartCount\":", "\"likesTotal\":"),
    ("\"videoCount\":", "\"clipsTotal\":"),
    ("\"diggCount\":", "\"likesGiven\":"),
];

/// `user`'s current profile page with every count under a name the platform never used (in
/// `stats`, `statsV2` and the suggested accounts alike): the user is where the page keeps it,
/// its counts are not.
pub fn unknown_counts_page(user: &SampleUser, target_size: usize) -> String {
    let page = super::profile_page(Era::Universal, user, target_size);
    RENAMED_COUNTS
        .iter()
        .fold(page, |page, (from, to)| page.replace(from, to))
}
