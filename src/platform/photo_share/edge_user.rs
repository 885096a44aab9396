//! The edge-style user object shared by the API and the legacy page, read with the lenient
//! field types both platforms share ([`crate::platform::fields`]): a missing, `null` or wrongly
//! typed field is the body's neutral value (`""`, `false`, a `null` count), never a failure.

use serde::{Deserialize, Deserializer};

use super::PhotoShareProfile;
use super::parts::Parts;
use crate::platform::fields::{Flag, Num, Object, Text};

/// Deserializes a field so that a present `null` (`Some(None)`) differs from a missing key
/// (`None`, through `#[serde(default)]`).
pub(super) fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// An edge-style `{"count": n, "edges": [...]}` object; the edges are skipped unread.
#[derive(Debug, Default, Deserialize)]
pub(super) struct EdgeCount {
    #[serde(default)]
    count: Num,
}

/// The edge-style user object of `web_profile_info` and of the legacy `_sharedData` page.
///
/// Only the body's fields are declared; everything else (timeline edges, the 2024 field set)
/// is skipped by serde without being built.
#[derive(Debug, Default, Deserialize)]
pub(super) struct EdgeUser<'a> {
    #[serde(default, borrow)]
    id: Text<'a>,
    #[serde(default, borrow)]
    username: Text<'a>,
    #[serde(default, borrow)]
    full_name: Text<'a>,
    #[serde(default, borrow)]
    biography: Text<'a>,
    #[serde(default, borrow)]
    profile_pic_url: Text<'a>,
    #[serde(default, borrow)]
    profile_pic_url_hd: Text<'a>,
    #[serde(default)]
    is_verified: Flag,
    #[serde(default)]
    is_private: Flag,
    #[serde(default)]
    edge_followed_by: Object<EdgeCount>,
    #[serde(default)]
    edge_follow: Object<EdgeCount>,
    #[serde(default)]
    edge_owner_to_timeline_media: Object<EdgeCount>,
}

/// The count an edge-style object gives (missing when the object is absent or `null`).
pub(super) fn count(edge: Object<EdgeCount>) -> Num {
    edge.0.map_or(Num::Missing, |e| e.count)
}

impl EdgeUser<'_> {
    /// The body's parts in this shape.
    pub(super) fn into_profile(self) -> PhotoShareProfile {
        Parts {
            id: self.id,
            username: self.username,
            full_name: self.full_name,
            biography: self.biography,
            profile_pic_url: self.profile_pic_url,
            profile_pic_url_hd: self.profile_pic_url_hd,
            is_verified: self.is_verified,
            is_private: self.is_private,
            followers: count(self.edge_followed_by),
            following: count(self.edge_follow),
            posts: count(self.edge_owner_to_timeline_media),
        }
        .into_profile()
    }
}
