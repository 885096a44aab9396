//! The current profile page's embedded data: `<script type="application/json" data-sjs>`
//! blobs, one of which holds `…"result":{"data":{"xig_user_by_username":{…}}}…` deep inside
//! `require` arrays and `__bbox` wrappers.
//!
//! The blobs are large and their nesting changes often, so the object is found by its key
//! (memmem over the blob's bytes) and only that object is deserialized, with a streaming
//! deserializer that stops at its closing brace. The rest of the blob is never parsed.
//!
//! The object uses the mobile API's names: `pk` is the user id (its `id` is a different id and
//! is never read), counts are `follower_count`/`following_count`/`media_count`, and the HD
//! picture is `hd_profile_pic_url_info.url`.

use memchr::memmem::Finder;
use serde::Deserialize;

use super::PhotoShareProfile;
use super::parts::{Parts, is_requested};
use crate::cost;
use crate::json_skim::skip_ws;
use crate::platform::fields::{Flag, Num, Object, Text, describe, first_value};
use crate::username::Subject;

/// The key, with its quotes, as it appears in the blob (an escaped `\"…\"` copy inside a JSON
/// string does not match, because of the closing quote).
pub(super) const KEY: &[u8] = b"\"xig_user_by_username\"";

#[derive(Deserialize)]
struct XigUser<'a> {
    #[serde(default, borrow)]
    pk: Text<'a>,
    #[serde(default, borrow)]
    pk_id: Text<'a>,
    #[serde(default, borrow)]
    username: Text<'a>,
    #[serde(default, borrow)]
    full_name: Text<'a>,
    #[serde(default, borrow)]
    biography: Text<'a>,
    #[serde(default, borrow)]
    profile_pic_url: Text<'a>,
    #[serde(default, borrow)]
    hd_profile_pic_url_info: Object<HdInfo<'a>>,
    #[serde(default)]
    is_verified: Flag,
    #[serde(default)]
    is_private: Flag,
    #[serde(default)]
    follower_count: Num,
    #[serde(default)]
    following_count: Num,
    #[serde(default)]
    media_count: Num,
}

#[derive(Default, Deserialize)]
struct HdInfo<'a> {
    #[serde(default, borrow)]
    url: Text<'a>,
}

impl XigUser<'_> {
    /// The body's parts in this shape: `pk` (or `pk_id`) is the id, never `id`.
    fn into_profile(self) -> PhotoShareProfile {
        let id = if self.pk.0.is_empty() {
            self.pk_id
        } else {
            self.pk
        };
        Parts {
            id,
            username: self.username,
            full_name: self.full_name,
            biography: self.biography,
            profile_pic_url: self.profile_pic_url,
            profile_pic_url_hd: self.hd_profile_pic_url_info.0.unwrap_or_default().url,
            is_verified: self.is_verified,
            is_private: self.is_private,
            followers: self.follower_count,
            following: self.following_count,
            posts: self.media_count,
        }
        .into_profile()
    }
}

/// What one blob says about the requested user.
#[derive(Debug, Default)]
pub(super) struct Scan {
    /// The requested user's profile, when the blob holds it.
    pub profile: Option<PhotoShareProfile>,
    /// A user object for another username was seen.
    pub other_user: bool,
    /// A user object that could not be read, described for the log.
    pub broken: Option<String>,
}

/// Looks for the requested user's `xig_user_by_username` object in one data-sjs blob.
///
/// Each byte of the blob is deserialized at most once: the search resumes after an object that
/// was read (so keys nested inside it are not read again), and stops at the first object that
/// cannot be read (the blob is then malformed, and a nest of keys cannot make the work grow
/// with their number).
pub(super) fn scan(blob: &[u8], requested: Subject<'_>, finder: &Finder<'_>) -> Scan {
    let mut out = Scan::default();
    let mut from = 0;
    while let Some(found) = blob.get(from..).and_then(|rest| find_key(finder, rest)) {
        let after_key = from + found + KEY.len();
        from = after_key;
        let rest = skip_ws(&blob[after_key..]);
        let Some(value) = rest.strip_prefix(b":").map(skip_ws) else {
            continue; // the name as a string value, not a key
        };
        if !value.starts_with(b"{") {
            continue; // `null` or another shape: no profile here
        }
        let value_at = blob.len() - value.len();
        match first_value::<XigUser>(value) {
            Some(Ok((user, len))) => {
                let profile = user.into_profile();
                if is_requested(&profile, requested) {
                    out.profile = Some(profile);
                    return out;
                }
                out.other_user = true;
                from = value_at + len;
            }
            Some(Err(err)) => {
                out.broken = Some(describe("xig user object", &err));
                return out;
            }
            None => return out,
        }
    }
    out
}

/// [`KEY`] in `rest` with a prebuilt finder, counting the bytes looked at.
fn find_key(finder: &Finder<'_>, rest: &[u8]) -> Option<usize> {
    let found = finder.find(rest);
    cost::examined(found.map_or(rest.len(), |at| at + KEY.len()));
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;
    use crate::username::Username;

    fn run(blob: &str, raw: &str) -> Scan {
        let name = Username::parse(Platform::PhotoShare, raw).expect("valid test name");
        scan(blob.as_bytes(), (&name).into(), &Finder::new(KEY))
    }

    const BLOB: &str = r#"{"require":[["ScheduledServerJS","handle",null,[{"__bbox":{"require":[
        ["RelayPrefetchedStreamCache","next",[],["adp_Q",{"__bbox":{"complete":true,"result":{
        "data":{"xig_user_by_username" : {"id":"17841400000000001","pk":"4242",
        "username":"ann.example","full_name":"Ann","biography":"a\u002Fb &amp; c",
        "profile_pic_url":"https:\/\/cdn.test\/s.jpg",
        "hd_profile_pic_url_info":{"url":"https:\/\/cdn.test\/hd.jpg","width":1080},
        "is_verified":true,"is_private":false,"follower_count":10,"following_count":2,
        "media_count":3,"friendship_status":null}},"extensions":{}}}}]]]}}]]]}"#;

    #[test]
    fn reads_pk_not_id_and_the_hd_picture() {
        let p = run(BLOB, "ann.example").profile.expect("profile");
        assert_eq!(p.id, "4242");
        assert_eq!(p.username, "ann.example");
        assert_eq!(p.biography, "a/b &amp; c");
        assert_eq!(p.profile_pic_url, "https://cdn.test/s.jpg");
        assert_eq!(p.profile_pic_url_hd, "https://cdn.test/hd.jpg");
        assert!(p.is_verified && !p.is_private);
        assert_eq!(
            (
                p.edge_followed_by.count,
                p.edge_follow.count,
                p.edge_owner_to_timeline_media.count
            ),
            (Some(10), Some(2), Some(3))
        );
    }

    #[test]
    fn hd_falls_back_and_missing_counts_are_none() {
        let blob = r#"{"data":{"xig_user_by_username":{"pk":7,"username":"bo",
            "profile_pic_url":"https://cdn.test/s.jpg","hd_profile_pic_url_info":null}}}"#;
        let p = run(blob, "bo").profile.expect("profile");
        assert_eq!(p.id, "7");
        assert_eq!(p.profile_pic_url_hd, "https://cdn.test/s.jpg");
        assert_eq!(p.edge_followed_by.count, None);
        assert_eq!(p.edge_owner_to_timeline_media.count, None);
    }

    #[test]
    fn skips_non_key_mentions_null_and_other_users() {
        let blob = r#"{"q":"xig_user_by_username","a":{"xig_user_by_username":null},
            "b":{"xig_user_by_username":{"pk":"1","username":"someone_else"}},
            "c":{"xig_user_by_username":{"pk":"2","username":"bo"}}}"#;
        let found = run(blob, "bo");
        assert_eq!(found.profile.expect("profile").id, "2");
        let other = run(blob, "nobody");
        assert!(other.profile.is_none() && other.other_user);
    }

    #[test]
    fn escaped_copies_inside_strings_are_not_keys() {
        let blob = r#"{"s":"{\"xig_user_by_username\":{\"pk\":\"1\",\"username\":\"bo\"}}"}"#;
        let found = run(blob, "bo");
        assert!(found.profile.is_none() && !found.other_user && found.broken.is_none());
    }

    #[test]
    fn keys_inside_another_users_object_are_not_read_again() {
        let blob = r#"{"xig_user_by_username":{"pk":"1","username":"other",
            "x":{"xig_user_by_username":{"pk":"2","username":"bo"}}}}"#;
        let found = run(blob, "bo");
        assert!(found.profile.is_none() && found.other_user);
    }

    #[test]
    fn a_cut_object_is_reported_broken() {
        let found = run(r#"{"xig_user_by_username":{"pk":"1","username":"b"#, "bo");
        assert!(found.profile.is_none());
        assert!(found.broken.is_some());
    }
}
