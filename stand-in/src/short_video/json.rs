//! The platform's JSON as the sample pages write it: its string escapes, its `user` object
//! and the video items that make up the bulk of a state.

use std::fmt::Write as _;

use super::{Era, SampleUser, avatar};
use crate::json_text::push_json_str;

/// Appends `s` as a JSON string the way the platform writes it: `/` as `\u002F`, `<` as
/// `\u003C`, and (in the `__NEXT_DATA__` era) `&` as `\u0026`; everything else raw UTF-8.
pub(super) fn push_str_json(out: &mut String, s: &str, era: Era) {
    push_json_str(out, s, |out, c| {
        let spelled = match c {
            '/' => "\\u002F",
            '<' => "\\u003C",
            '>' => "\\u003E",
            '&' if era == Era::NextData => "\\u0026",
            _ => return false,
        };
        out.push_str(spelled);
        true
    });
}

/// Appends `"key":"value",` with `value` JSON-escaped.
pub(super) fn field(out: &mut String, key: &str, value: &str, era: Era) {
    let _ = write!(out, "\"{key}\":");
    push_str_json(out, value, era);
    out.push(',');
}

/// The platform's `user` object (with the many fields the body does not return).
pub(super) fn user_json(out: &mut String, u: &SampleUser, era: Era) {
    out.push('{');
    field(out, "id", u.id, era);
    out.push_str(r#""shortId":"","#);
    field(out, "uniqueId", u.unique_id, era);
    field(out, "nickname", u.nickname, era);
    field(out, "avatarLarger", &avatar(u, 1080), era);
    field(out, "avatarMedium", &avatar(u, 720), era);
    field(out, "avatarThumb", &avatar(u, 100), era);
    field(out, "signature", u.signature, era);
    let _ = write!(
        out,
        r#""createTime":{},"verified":{},"secUid":"{}","ftc":false,"relation":0,"openFavorite":{},"#,
        u.create_time.unwrap_or(0),
        u.verified,
        u.sec_uid,
        u.open_favorite
    );
    if let Some(link) = u.bio_link {
        out.push_str(r#""bioLink":{"link":"#);
        push_str_json(out, link, era);
        out.push_str(r#","risk":0},"#);
    }
    if let Some(language) = u.language {
        field(out, "language", language, era);
    }
    // The current era spells the flag as a number, as the platform's 2026 pages do.
    let organization = match (era, u.is_organization) {
        (Era::Universal, true) => "1",
        (Era::Universal, false) => "0",
        (_, true) => "true",
        (_, false) => "false",
    };
    let _ = write!(
        out,
        r#""commentSetting":0,"commerceUserInfo":{{"commerceUser":false}},"duetSetting":0,"stitchSetting":0,"privateAccount":{},"secret":false,"isADVirtual":false,"roomId":"","uniqueIdModifyTime":0,"ttSeller":false,"region":"US","profileTab":{{"showMusicTab":false,"showQuestionTab":true,"showPlayListTab":true}},"followingVisibility":1,"eventList":[],"isOrganization":{organization},"UserStoryStatus":0}}"#,
        u.private
    );
}

/// Video items until `out` is `until` bytes long: the bulk of a real state.
pub(super) fn items(out: &mut String, author: &str, until: usize, era: Era, keyed: bool) {
    let mut i = 0u64;
    while out.len() < until {
        if i > 0 {
            out.push(',');
        }
        let id = 7_300_000_000_000_000_000 + i;
        if keyed {
            let _ = write!(out, "\"{id}\":");
        }
        let _ = write!(out, r#"{{"id":"{id}","#);
        let desc = format!("Invented clip #{i}: stir, taste & adjust \u{2014} sample/demo");
        field(out, "desc", &desc, era);
        let _ = write!(
            out,
            r#""createTime":{},"video":{{"id":"{id}","height":1024,"width":576,"duration":{},"ratio":"540p","#,
            1_650_000_000 + i * 3600,
            10 + i % 50
        );
        field(
            out,
            "cover",
            &format!(
                "https://media.short-video.example/cover/{id}.jpeg?x-expires=1700000000&sig=c{i}"
            ),
            era,
        );
        field(
            out,
            "playAddr",
            &format!("https://media.short-video.example/play/{id}.mp4?br=1200&vr=&sig=p{i}"),
            era,
        );
        let _ = write!(
            out,
            r#""format":"mp4","bitrate":{}}},"author":"#,
            900_000 + i * 17
        );
        push_str_json(out, author, era);
        let _ = write!(
            out,
            r#","music":{{"id":"{}","title":"original sound","original":true}},"stats":{{"diggCount":{},"shareCount":{},"commentCount":{},"playCount":{}}},"challenges":[{{"id":"{}","title":"kitchen"}}],"isAd":false,"duetEnabled":true}}"#,
            6_900_000_000_000_000_000 + i,
            (i * 7919) % 100_000,
            (i * 31) % 5_000,
            (i * 13) % 2_000,
            (i * 104_729) % 10_000_000,
            1_000 + i % 97,
        );
        i += 1;
    }
}
