//! The platform moving its page: the same profile written in shapes the known places do not
//! cover. A page whose user object moved (its state under an unknown id) must still read, by
//! the readers' anchored search; a page whose counts are under names the platform never used
//! is what a drifted stand-in serves, and must say so (500 `extraction_failed`, captured)
//! rather than answer with a made-up value.

use super::{Era, SampleUser};

/// The id the moved page's state script has: one no era used.
pub const MOVED_STATE_ID: &str = "__APP_STATE_V2__";

/// `user`'s current profile page with its state under an id no era used
/// ([`MOVED_STATE_ID`]): every value where the state keeps it, beside the suggested accounts
/// (other users) the page always carries.
pub fn moved_state_page(user: &SampleUser, target_size: usize) -> String {
    super::profile_page(Era::Universal, user, target_size)
        .replace("__UNIVERSAL_DATA_FOR_REHYDRATION__", MOVED_STATE_ID)
}

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
