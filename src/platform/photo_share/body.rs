//! The photo-share success body, exactly as the API returns it and the OpenAPI document
//! describes it: a flat object in the platform's web field names.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::platform::profile::{Body, Count, Summary};

/// The photo-share success body: a flat object in the platform's web field names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PhotoShareProfile {
    /// The platform's numeric user id, as a string.
    pub id: String,
    /// The handle.
    pub username: String,
    /// The display name.
    pub full_name: String,
    /// The bio.
    pub biography: String,
    /// Profile picture URL.
    pub profile_pic_url: String,
    /// High-resolution profile picture URL (the plain one when no HD one is given).
    pub profile_pic_url_hd: String,
    /// Whether the platform verified the account.
    pub is_verified: bool,
    /// Whether the account is private.
    pub is_private: bool,
    /// Followers.
    pub edge_followed_by: Count,
    /// Accounts followed.
    pub edge_follow: Count,
    /// Posts.
    pub edge_owner_to_timeline_media: Count,
}

impl Body for PhotoShareProfile {
    fn summary(&self) -> Summary {
        Summary {
            id: self.id.clone(),
            username: self.username.clone(),
            private: self.is_private,
            followers: self.edge_followed_by.count,
            posts: ("posts", self.edge_owner_to_timeline_media.count),
            withheld: self.withheld(),
        }
    }

    fn withheld(&self) -> Vec<&'static str> {
        [
            ("edge_followed_by.count", self.edge_followed_by.count),
            ("edge_follow.count", self.edge_follow.count),
            (
                "edge_owner_to_timeline_media.count",
                self.edge_owner_to_timeline_media.count,
            ),
        ]
        .into_iter()
        .filter_map(|(field, count)| count.is_none().then_some(field))
        .collect()
    }
}
