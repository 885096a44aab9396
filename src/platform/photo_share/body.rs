//! The photo-share success body, exactly as the API returns it and the OpenAPI document
//! describes it: a flat object in the platform's web field names.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::platform::profile::{Body, Count, Summary};

/// The photo-share success body: a flat object in the platform's web field names.
//
// Unknown keys are ignored when a stored body is read back (a newer replica's keys, during a
// rolling upgrade), and the keys added since the first version default to `null` or `[]` (an
// older replica's body); the OpenAPI document still allows no other key
// (`crate::platform::profile::schemas`), and lists every key as required.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
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
    /// The website link of the profile, unwrapped from the platform's redirector; `null` when
    /// none is set.
    #[serde(default)]
    #[schema(required)]
    pub external_url: Option<String>,
    /// The links in the bio, unwrapped from the platform's redirector; `[]` when none.
    #[serde(default)]
    #[schema(required)]
    pub bio_links: Vec<PhotoShareBioLink>,
    /// The pronouns the owner shows (`["she", "her"]`); `[]` when none.
    #[serde(default)]
    #[schema(required)]
    pub pronouns: Vec<String>,
    /// The account's category (`Artist`); `null` when none, or hidden by the owner.
    #[serde(default)]
    #[schema(required)]
    pub category_name: Option<String>,
}

/// One link in a photo-share bio.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PhotoShareBioLink {
    /// The link, unwrapped from the platform's redirector (`l.instagram.com/?u=`).
    pub url: String,
    /// Its title (`""` when the owner gave none).
    pub title: String,
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
            unset: self.unset(),
        }
    }

    fn unset(&self) -> Vec<&'static str> {
        [
            ("external_url", self.external_url.is_none()),
            ("category_name", self.category_name.is_none()),
        ]
        .into_iter()
        .filter_map(|(field, unset)| unset.then_some(field))
        .collect()
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
