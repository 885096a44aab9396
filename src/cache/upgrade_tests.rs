//! Entries written before the bodies gained their added keys (bio links, creation time,
//! language, the organization flag; the external URL, bio links, pronouns and category), in
//! the two forms a replica keeps them: the body bytes its memory holds, and the value the fleet
//! holds in Redis. A rolling upgrade reads them as before, with the added keys `null`, `false`
//! or `[]`; and an entry of a version newer than this one reads with the keys it does not know
//! dropped. The bytes below are invented samples in today's format, written out in full.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::answer::{Entry, Stored};
use crate::fleet::SharedEntry;
use crate::platform::{self, Platform};
use crate::username::Username;

/// A short-video body as the service wrote it before the added keys (memory's form).
const SHORT_VIDEO_BODY: &str = r#"{"userInfo":{"user":{"id":"7000000000000000003","uniqueId":"tiny.baker_7","nickname":"Tiny Baker","signature":"Sourdough every Sunday.","verified":false,"privateAccount":false,"avatarThumb":"https://avatars.short-video.example/t.jpeg","avatarMedium":"https://avatars.short-video.example/m.jpeg","avatarLarger":"https://avatars.short-video.example/l.jpeg","secUid":"MS4wLjABAAAAinventedSecUid","relation":0,"openFavorite":true},"stats":{"followerCount":4321,"followingCount":210,"heart":56789,"heartCount":56789,"videoCount":null,"diggCount":1200}}}"#;

/// A photo-share body as the service wrote it before the added keys (memory's form).
const PHOTO_SHARE_BODY: &str = r#"{"id":"48151623420","username":"lumen.trails","full_name":"Lumen Trails","biography":"Maps &amp; field notes.","profile_pic_url":"https://cdn.photo-share.example/s150.jpg","profile_pic_url_hd":"https://cdn.photo-share.example/s320.jpg","is_verified":true,"is_private":false,"edge_followed_by":{"count":12345678},"edge_follow":{"count":321},"edge_owner_to_timeline_media":{"count":null}}"#;

/// The fleet's value of a found profile in today's format (Redis's form): magic `P`, version
/// 2, flags (found), the fetch time (u64 big-endian, Unix ms), the source's name and its
/// length, then the body.
fn redis_value(fetched_at_unix_ms: u64, source: &str, body: &str) -> Vec<u8> {
    let mut value = vec![b'P', 2, 1];
    value.extend_from_slice(&fetched_at_unix_ms.to_be_bytes());
    value.push(u8::try_from(source.len()).unwrap());
    value.extend_from_slice(source.as_bytes());
    value.extend_from_slice(body.as_bytes());
    value
}

fn now_ms() -> u64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    u64::try_from(since.as_millis()).unwrap()
}

/// What a replica answers for the fleet's `value` of `name`: its body as JSON, and its
/// `Profile-Withheld` list.
fn read_back(platform: Platform, name: &str, value: &[u8]) -> (Value, Option<String>) {
    let shared = SharedEntry::decode(value).expect("today's format reads");
    let name = Username::parse(platform, name).unwrap();
    let entry = Entry::from_shared(&name, shared);
    let Stored::Found { body, private } = &entry.value else {
        panic!("a found profile");
    };
    assert!(!private);
    let withheld = entry
        .withheld
        .as_ref()
        .map(|w| String::from_utf8(w.to_vec()).unwrap());
    (serde_json::from_slice(body).unwrap(), withheld)
}

/// `old` with `added` merged into the object at `path` (a JSON pointer).
fn with_added(old: &str, path: &str, added: Value) -> Value {
    let mut body: Value = serde_json::from_str(old).unwrap();
    let object = body.pointer_mut(path).unwrap().as_object_mut().unwrap();
    for (key, value) in added.as_object().unwrap() {
        object.insert(key.clone(), value.clone());
    }
    body
}

#[test]
fn a_short_video_entry_of_today_reads_with_the_added_keys_empty_in_both_forms() {
    let want = with_added(
        SHORT_VIDEO_BODY,
        "/userInfo/user",
        json!({"bioLink": null, "createTime": null, "language": null, "isOrganization": false}),
    );
    // Memory's form: the body bytes.
    let profile = platform::stored(Platform::ShortVideo, SHORT_VIDEO_BODY.as_bytes()).unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(profile.json()).unwrap(),
        want
    );
    // Redis's form, answered by the page: only the withheld count is named.
    let value = redis_value(now_ms() - 5_000, "page", SHORT_VIDEO_BODY);
    let (body, withheld) = read_back(Platform::ShortVideo, "tiny.baker_7", &value);
    assert_eq!(body, want);
    assert_eq!(withheld.as_deref(), Some("userInfo.stats.videoCount"));
    // Answered by the embed, which never gives the added fields: they are named too.
    let value = redis_value(now_ms() - 5_000, "embed", SHORT_VIDEO_BODY);
    let (body, withheld) = read_back(Platform::ShortVideo, "tiny.baker_7", &value);
    assert_eq!(body, want);
    assert_eq!(
        withheld.as_deref(),
        Some(
            "userInfo.stats.videoCount, userInfo.user.bioLink, userInfo.user.createTime, \
             userInfo.user.language"
        )
    );
}

#[test]
fn a_photo_share_entry_of_today_reads_with_the_added_keys_empty_in_both_forms() {
    let want = with_added(
        PHOTO_SHARE_BODY,
        "",
        json!({"external_url": null, "bio_links": [], "pronouns": [], "category_name": null}),
    );
    let profile = platform::stored(Platform::PhotoShare, PHOTO_SHARE_BODY.as_bytes()).unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(profile.json()).unwrap(),
        want
    );
    let value = redis_value(now_ms() - 5_000, "json", PHOTO_SHARE_BODY);
    let (body, withheld) = read_back(Platform::PhotoShare, "lumen.trails", &value);
    assert_eq!(body, want);
    assert_eq!(
        withheld.as_deref(),
        Some("edge_owner_to_timeline_media.count")
    );
}

#[test]
fn an_entry_of_a_newer_version_reads_without_the_keys_this_one_does_not_know() {
    let newer = with_added(
        SHORT_VIDEO_BODY,
        "/userInfo/user",
        json!({"bioLink": {"link": "https://tiny-baker.example"}, "createTime": 1650000000,
               "language": "fr", "isOrganization": true, "keyOfLater": {"x": [1]}}),
    );
    let newer = with_added(&newer.to_string(), "", json!({"alsoLater": 1}));
    let value = redis_value(now_ms() - 5_000, "page", &newer.to_string());
    let (body, withheld) = read_back(Platform::ShortVideo, "tiny.baker_7", &value);
    let user = &body["userInfo"]["user"];
    assert_eq!(
        user["bioLink"],
        json!({"link": "https://tiny-baker.example"})
    );
    assert_eq!(user["createTime"], 1_650_000_000);
    assert!(user.get("keyOfLater").is_none() && body.get("alsoLater").is_none());
    assert_eq!(withheld.as_deref(), Some("userInfo.stats.videoCount"));
}

#[test]
fn a_body_this_version_cannot_read_is_served_as_stored_naming_nothing() {
    // A later version that changed a key's type: never a 500, the bytes as they are.
    let changed = SHORT_VIDEO_BODY.replace(r#""relation":0"#, r#""relation":"none""#);
    let value = redis_value(now_ms() - 5_000, "page", &changed);
    let (body, withheld) = read_back(Platform::ShortVideo, "tiny.baker_7", &value);
    assert_eq!(body, serde_json::from_str::<Value>(&changed).unwrap());
    assert_eq!(withheld, None);
}
