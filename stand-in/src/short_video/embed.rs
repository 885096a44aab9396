//! The embed page (`/embed/@{name}`): a small server-rendered page whose
//! `__FRONTITY_CONNECT_STATE__` script holds, under `source.data["/embed/@{name}"]`, a flat
//! `userInfo` (no `stats` object, no exact spelling) and the latest videos. Its counts are
//! signed 32-bit: a count past `i32::MAX` arrives negative.

use std::fmt::Write as _;

use super::json::{field, push_str_json};
use super::state::as_int32;
use super::{Era, SampleUser, avatar};

/// The embed page of `user`, as the platform writes it for a public account.
pub fn embed_page(user: &SampleUser) -> String {
    let name = user.unique_id.to_ascii_lowercase();
    let mut info = String::with_capacity(1024);
    info.push('{');
    // The embed writes `/` as `\u002F` like the pages of the current era.
    let era = Era::Universal;
    field(&mut info, "id", user.id, era);
    field(&mut info, "uniqueId", user.unique_id, era);
    field(&mut info, "nickname", user.nickname, era);
    field(&mut info, "signature", user.signature, era);
    field(&mut info, "avatarThumbUrl", &avatar(user, 100), era);
    let _ = write!(
        info,
        r#""verified":{},"privateAccount":{},"#,
        user.verified, user.private
    );
    let mut counts = Vec::new();
    for (key, count) in [
        ("followerCount", user.follower_count),
        ("followingCount", user.following_count),
        ("heartCount", user.heart_count),
    ] {
        if let Some(n) = count {
            counts.push(format!("\"{key}\":{}", as_int32(n)));
        }
    }
    info.push_str(&counts.join(","));
    info.push('}');

    let mut videos = String::new();
    for i in 0..11u64 {
        if i > 0 {
            videos.push(',');
        }
        let _ = write!(
            videos,
            r#"{{"id":"{}","playCount":{},"coverUrl":"#,
            7_300_000_000_000_100_000 + i,
            (i + 3) * 1_117
        );
        push_str_json(
            &mut videos,
            &format!("https://media.short-video.example/cover/embed-{i}.jpeg"),
            era,
        );
        videos.push('}');
    }
    let route = format!("/embed/@{name}");
    let mut route_json = String::new();
    push_str_json(&mut route_json, &route, era);
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>@{name} | Short Video (sample embed)</title>\
         <link rel=\"stylesheet\" href=\"https://static.short-video.example/embed/embed.css\"></head>\
         <body><div id=\"embed-root\"><a href=\"/@{name}\">@{name}</a></div>\
         <script id=\"__FRONTITY_CONNECT_STATE__\" type=\"application/json\">\
         {{\"router\":{{\"link\":{route_json}}},\"source\":{{\"get\":{{}},\"data\":{{{route_json}:\
         {{\"isReady\":true,\"isError\":false,\"pageName\":\"creator\",\"userInfo\":{info},\
         \"videoList\":[{videos}]}}}}}}}}</script>\
         <script src=\"https://static.short-video.example/embed/embed.js\" async></script>\
         </body></html>\n"
    )
}

/// What the embed page says instead of a profile, for a private account and a missing one
/// alike (with HTTP 400): its state holds `"isError": true` and `"pageName": "error"` where a
/// real user's holds `"pageName": "creator"` and the `userInfo`. This is the older form,
/// without the error codes of [`embed_coded_error_page`] (its `errorCode` 400 is no case).
pub fn embed_error_page(name: &str) -> String {
    error_page(
        name,
        r#""isReady":true,"isError":true,"pageName":"error","errorCode":400"#,
    )
}

/// The embed's error payload that names its case (with HTTP 400): `"errorCode": code` (10222
/// a private account, 10221 a missing or banned one) and `"errorStatus": 400` beside
/// `"isError": true` and `"pageName": "error"`, and a `userInfo` holding only the requested
/// `uniqueId`: the shape of real excerpts quoted in a Rust client's test (2026); the name and
/// the page around it are invented.
pub fn embed_coded_error_page(name: &str, code: i64) -> String {
    let mut unique_id = String::new();
    push_str_json(&mut unique_id, &name.to_ascii_lowercase(), Era::Universal);
    error_page(
        name,
        &format!(
            r#""isReady":true,"errorCode":{code},"errorStatus":400,"isError":true,"pageName":"error","userInfo":{{"uniqueId":{unique_id}}}"#
        ),
    )
}

/// An embed page whose route for `name` holds `members` (an error payload) and nothing else.
fn error_page(name: &str, members: &str) -> String {
    let name = name.to_ascii_lowercase();
    let mut route_json = String::new();
    push_str_json(&mut route_json, &format!("/embed/@{name}"), Era::Universal);
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Short Video (sample embed)</title></head><body><div id=\"embed-root\"></div>\
         <script id=\"__FRONTITY_CONNECT_STATE__\" type=\"application/json\">\
         {{\"router\":{{\"link\":{route_json}}},\"source\":{{\"get\":{{}},\"data\":{{{route_json}:\
         {{{members}}}}}}}}}</script>\
         <script src=\"https://static.short-video.example/embed/embed.js\" async></script>\
         </body></html>\n"
    )
}
