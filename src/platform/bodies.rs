//! The exact response bodies of both platforms, as the API returns them and the OpenAPI
//! document describes them; the cache stores them serialised once.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A profile of either platform, as the cache and the edge carry it.
#[derive(Clone, Debug, PartialEq)]
pub enum Profile {
    /// A short-video profile.
    ShortVideo(ShortVideoProfile),
    /// A photo-share profile.
    PhotoShare(PhotoShareProfile),
}

impl Profile {
    /// Whether the platform flags the account as private.
    pub fn is_private(&self) -> bool {
        match self {
            Profile::ShortVideo(p) => p.user_info.user.private_account,
            Profile::PhotoShare(p) => p.is_private,
        }
    }

    /// The exact response body, serialised once so that cache hits cost a copy of bytes.
    pub fn to_json(&self) -> Vec<u8> {
        let bytes = match self {
            Profile::ShortVideo(p) => serde_json::to_vec(p),
            Profile::PhotoShare(p) => serde_json::to_vec(p),
        };
        // Serialising plain structs of strings, bools and integers cannot fail.
        bytes.unwrap_or_default()
    }
}

/// The short-video success body: `{"userInfo":{"user":{…},"stats":{…}}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ShortVideoProfile {
    /// The profile and its counts.
    #[serde(rename = "userInfo")]
    pub user_info: ShortVideoUserInfo,
}

/// The `userInfo` object of the short-video body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ShortVideoUserInfo {
    /// Who the user is.
    pub user: ShortVideoUser,
    /// The user's counts.
    pub stats: ShortVideoStats,
}

/// The `user` object of the short-video body; strings as the platform's JSON holds them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShortVideoUser {
    /// The platform's numeric user id, as a string.
    pub id: String,
    /// The handle (what the URL carries), in the platform's spelling.
    pub unique_id: String,
    /// The display name.
    pub nickname: String,
    /// The bio.
    pub signature: String,
    /// Whether the platform verified the account.
    pub verified: bool,
    /// Whether the account is private (its counts may then be limited).
    pub private_account: bool,
    /// Small avatar URL.
    pub avatar_thumb: String,
    /// Medium avatar URL.
    pub avatar_medium: String,
    /// Large avatar URL.
    pub avatar_larger: String,
    /// The platform's stable secondary user id.
    pub sec_uid: String,
    /// The viewer's relation to the user (always 0 for an anonymous viewer).
    pub relation: i64,
    /// Whether the user's liked videos are public.
    pub open_favorite: bool,
}

/// The `stats` object of the short-video body; `null` where the platform gives no count.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShortVideoStats {
    /// Followers (exact when the page carries exact counts).
    #[schema(format = "uint64")]
    pub follower_count: Option<u64>,
    /// Accounts followed.
    #[schema(format = "uint64")]
    pub following_count: Option<u64>,
    /// Likes received.
    #[schema(format = "uint64")]
    pub heart: Option<u64>,
    /// Likes received (the platform's second spelling of the same count).
    #[schema(format = "uint64")]
    pub heart_count: Option<u64>,
    /// Videos posted.
    #[schema(format = "uint64")]
    pub video_count: Option<u64>,
    /// Videos liked.
    #[schema(format = "uint64")]
    pub digg_count: Option<u64>,
}

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

/// A `{"count": n}` object; `null` where the platform gives no count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Count {
    /// The exact count, or `null` when the platform does not give it.
    #[schema(format = "uint64")]
    pub count: Option<u64>,
}

impl Count {
    /// A count the platform gave.
    pub fn of(n: u64) -> Self {
        Self { count: Some(n) }
    }
}
