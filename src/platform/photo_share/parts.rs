//! The body built from what a document gives: the one place its rules live, whichever shape
//! (the edge-style user of the API and the legacy page, or the current page's xig object) the
//! parts came from.

use super::PhotoShareProfile;
use crate::platform::Count;
use crate::platform::fields::{Flag, Num, Text};
use crate::username::Subject;

/// The body's fields as one document shape gives them, read with the shared lenient types.
#[derive(Debug, Default)]
pub(super) struct Parts<'a> {
    pub id: Text<'a>,
    pub username: Text<'a>,
    pub full_name: Text<'a>,
    pub biography: Text<'a>,
    pub profile_pic_url: Text<'a>,
    /// Empty when the document has no HD picture.
    pub profile_pic_url_hd: Text<'a>,
    pub is_verified: Flag,
    pub is_private: Flag,
    pub followers: Num,
    pub following: Num,
    pub posts: Num,
}

impl Parts<'_> {
    /// The body: strings as decoded, the HD picture falling back to the plain one, and a count
    /// `null` unless the document gave a usable one.
    pub(super) fn into_profile(self) -> PhotoShareProfile {
        let profile_pic_url = self.profile_pic_url.into_string();
        let profile_pic_url_hd = if self.profile_pic_url_hd.0.is_empty() {
            profile_pic_url.clone()
        } else {
            self.profile_pic_url_hd.into_string()
        };
        let count = |n: Num| Count { count: n.value() };
        PhotoShareProfile {
            id: self.id.into_string(),
            username: self.username.into_string(),
            full_name: self.full_name.into_string(),
            biography: self.biography.into_string(),
            profile_pic_url,
            profile_pic_url_hd,
            is_verified: self.is_verified.0,
            is_private: self.is_private.0,
            edge_followed_by: count(self.followers),
            edge_follow: count(self.following),
            edge_owner_to_timeline_media: count(self.posts),
        }
    }
}

/// Whether a profile read from a document is the one that was asked for.
pub(super) fn is_requested(profile: &PhotoShareProfile, requested: Subject<'_>) -> bool {
    requested.matches(&profile.username)
}
