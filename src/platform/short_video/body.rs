//! The short-video success body, exactly as the API returns it and the OpenAPI document
//! describes it: `{"userInfo":{"user":{…},"stats":{…}}}`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::platform::profile::{Body, Summary};

/// The short-video success body: `{"userInfo":{"user":{…},"stats":{…}}}`.
//
// Unknown keys are ignored when a stored body is read back (a newer replica's keys, during a
// rolling upgrade), and the keys added since the first version default to `null`, `false` or
// `[]` (an older replica's body); the OpenAPI document still allows no other key
// (`crate::platform::profile::schemas`), and lists every key as required.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ShortVideoProfile {
    /// The profile and its counts.
    #[serde(rename = "userInfo")]
    pub user_info: ShortVideoUserInfo,
}

/// The `userInfo` object of the short-video body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ShortVideoUserInfo {
    /// Who the user is.
    pub user: ShortVideoUser,
    /// The user's counts.
    pub stats: ShortVideoStats,
}

/// The `user` object of the short-video body; strings as the platform's JSON holds them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
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
    /// The link in the bio; `null` when the user set none, or the source withheld it (the
    /// embed gives none: `Profile-Withheld` names it).
    #[serde(default)]
    #[schema(required)]
    pub bio_link: Option<ShortVideoBioLink>,
    /// When the account was created (unix seconds); `null` when the page hides it (it says
    /// `0`) or the source withheld it (the embed gives none: `Profile-Withheld` names it).
    #[serde(default)]
    #[schema(required, format = "uint64")]
    pub create_time: Option<u64>,
    /// The account's language (`en`); `null` when the page gives none or the source withheld
    /// it (the embed gives none: `Profile-Withheld` names it).
    #[serde(default)]
    #[schema(required)]
    pub language: Option<String>,
    /// Whether the platform flags the account as an organization's; `false` when the page does
    /// not say.
    #[serde(default)]
    #[schema(required)]
    pub is_organization: bool,
}

/// The `bioLink` object of the short-video body: the link the user put in the bio.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ShortVideoBioLink {
    /// The link as the platform gives it (it may lack a scheme: `linktr.ee/name`).
    pub link: String,
}

/// The `stats` object of the short-video body; `null` where the platform gives no count.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
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
            unset: self.unset(),
        }
    }

    fn unset(&self) -> Vec<&'static str> {
        let user = &self.user_info.user;
        [
            ("userInfo.user.bioLink", user.bio_link.is_none()),
            ("userInfo.user.createTime", user.create_time.is_none()),
            ("userInfo.user.language", user.language.is_none()),
        ]
        .into_iter()
        .filter_map(|(field, unset)| unset.then_some(field))
        .collect()
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
