//! What the service must answer for a sample: its API body, as JSON. The platform knows
//! nothing of the service's types, so the service's tests compare their own with these.

use serde_json::{Value, json};

use super::{SampleUser, avatar};

/// The body the service must return for `user`, whatever the era of the page it read.
pub fn expected_body(user: &SampleUser) -> Value {
    json!({
        "userInfo": {
            "user": {
                "id": user.id,
                "uniqueId": user.unique_id,
                "nickname": user.nickname,
                "signature": user.signature,
                "verified": user.verified,
                "privateAccount": user.private,
                "avatarThumb": avatar(user, 100),
                "avatarMedium": avatar(user, 720),
                "avatarLarger": avatar(user, 1080),
                "secUid": user.sec_uid,
                "relation": 0,
                "openFavorite": user.open_favorite,
                "bioLink": user.bio_link.map(|link| json!({ "link": link })),
                "createTime": user.create_time,
                "language": user.language,
                "isOrganization": user.is_organization,
            },
            "stats": {
                "followerCount": user.follower_count,
                "followingCount": user.following_count,
                "heart": user.heart_count,
                "heartCount": user.heart_count,
                "videoCount": user.video_count,
                "diggCount": user.digg_count,
            },
        },
    })
}

/// The body the service must return for `user` when the embed page answered: the page's
/// body ([`expected_body`]) without what the embed does not carry, which reads as
/// `""`/`0`/`false`, and `null` for the counts, the bio link, the creation time and the
/// language it does not give.
pub fn expected_embed_body(user: &SampleUser) -> Value {
    let mut body = expected_body(user);
    let info = &mut body["userInfo"];
    for key in ["avatarMedium", "avatarLarger", "secUid"] {
        info["user"][key] = json!("");
    }
    info["user"]["relation"] = json!(0);
    info["user"]["openFavorite"] = json!(false);
    // The embed's `userInfo` has no bio link, creation time, language or organization flag.
    for key in ["bioLink", "createTime", "language"] {
        info["user"][key] = Value::Null;
    }
    info["user"]["isOrganization"] = json!(false);
    for key in ["videoCount", "diggCount"] {
        info["stats"][key] = Value::Null;
    }
    body
}

/// The body the service must return for `name` when the embed's error payload said only that
/// the account is private (`"errorCode": 10222`, a `userInfo` with no more than the name): the
/// name, `privateAccount: true`, `""` and `false` for the rest, and every count `null`
/// (withheld, not zero).
pub fn expected_private_embed_body(name: &str) -> Value {
    json!({
        "userInfo": {
            "user": {
                "id": "",
                "uniqueId": name.to_ascii_lowercase(),
                "nickname": "",
                "signature": "",
                "verified": false,
                "privateAccount": true,
                "avatarThumb": "",
                "avatarMedium": "",
                "avatarLarger": "",
                "secUid": "",
                "relation": 0,
                "openFavorite": false,
                "bioLink": null,
                "createTime": null,
                "language": null,
                "isOrganization": false,
            },
            "stats": {
                "followerCount": null,
                "followingCount": null,
                "heart": null,
                "heartCount": null,
                "videoCount": null,
                "diggCount": null,
            },
        },
    })
}
