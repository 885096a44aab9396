//! The short-video success body, exactly as the API returns it and the OpenAPI document
//! describes it: `{"userInfo":{"user":{…},"stats":{…}}}`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::platform::profile::{Body, Summary};

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

impl Body for ShortVideoProfile {
    fn summary(&self) -> Summary {
        let (user, stats) = (&self.user_info.user, &self.user_info.stats);
        Summary {
            id: user.id.clone(),
            username: user.unique_id.clone(),
            private: user.private_account,
            followers: stats.follower_count,
            posts: ("videos", stats.video_count),
            withheld: self.withheld(),
        }
    }

    fn withheld(&self) -> Vec<&'static str> {
        let stats = &self.user_info.stats;
        [
            ("userInfo.stats.followerCount", stats.follower_count),
            ("userInfo.stats.followingCount", stats.following_count),
            ("userInfo.stats.heart", stats.heart),
            ("userInfo.stats.heartCount", stats.heart_count),
            ("userInfo.stats.videoCount", stats.video_count),
            ("userInfo.stats.diggCount", stats.digg_count),
        ]
        .into_iter()
        .filter_map(|(field, count)| count.is_none().then_some(field))
        .collect()
    }
}
