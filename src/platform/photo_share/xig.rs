//! The current profile page's embedded data: `<script type="application/json" data-sjs>`
//! blobs, one of which holds the user deep inside `require` arrays, `__bbox` wrappers and the
//! `RelayPrefetchedStreamCache` preloader's `result.data`, in one of three places (2026 builds
//! use any):
//!
//! - `"xig_user_by_username": {…}`: the user in the mobile API's names (`pk` is the user id;
//!   its `id` is a different id and is never read), with flat counts
//!   (`follower_count`/`following_count`/`media_count`) or, in some builds, the edge-style
//!   count objects (`edge_followed_by`/`edge_follow`/`edge_owner_to_timeline_media`);
//! - `"xdt_api__v1__users__web_profile_info": {"user": {…}}`: the JSON endpoint's own answer,
//!   preloaded; there `id` is the user id, and `pk` wins when both are given;
//! - `"data":{"user": {…}, "viewer": …}`: the profile query's answer
//!   (`adp_PolarisProfilePageContentQuery…`, mifi/SimpleInstaBot#328/#329, 2026-09-14), the
//!   user in the mobile API's names; `pk` wins over `id`.
//!
//! Every field is read through the platform's table of names ([`PHOTO_SHARE`]), so each
//! place reads whichever names its build uses.
//!
//! The blobs are large and their nesting changes often, so the object is found by its key
//! (memmem over the blob's bytes) and only that object is deserialized, with a streaming
//! deserializer that stops at its closing brace. The rest of the blob is never parsed.

use memchr::memmem::Finder;
use serde::Deserialize;

use super::PhotoShareProfile;
use super::parts::{Names, is_requested, profile};
use crate::cost;
use crate::json_skim::skip_ws;
use crate::platform::fields::{Object, PHOTO_SHARE, UserObject, describe, first_value};
use crate::username::Subject;

/// Where a blob keeps the user: the key, with its quotes, as it appears in the blob (an
/// escaped `\"…\"` copy inside a JSON string does not match, because of the closing quote).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// `"xig_user_by_username": {user}`.
    Xig,
    /// `"xdt_api__v1__users__web_profile_info": {"user": {user}}`.
    WebProfileInfo,
    /// The profile query's answer, `"data":{"user": {user}, "viewer": …}` (2026-09).
    ProfileQuery,
}

impl Place {
    const ALL: [Place; 3] = [Place::Xig, Place::WebProfileInfo, Place::ProfileQuery];

    fn key(self) -> &'static [u8] {
        match self {
            Place::Xig => b"\"xig_user_by_username\"",
            Place::WebProfileInfo => b"\"xdt_api__v1__users__web_profile_info\"",
            Place::ProfileQuery => b"\"data\":{\"user\"",
        }
    }
}

/// The preloaded endpoint answer's envelope: `{"user": {…}}` (or `null`).
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow)]
    user: Object<UserObject<'a, Names>>,
}

/// The body of the user a place holds: read through the table, except that the xig object's
/// own `id` is another id than the user's (its `pk` is the user id).
fn place_profile(place: Place, user: UserObject<'_, Names>) -> PhotoShareProfile {
    let mut user = user.0;
    if place == Place::Xig {
        user.forget(&PHOTO_SHARE, "id", "id");
    }
    profile(&user)
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

/// The keys' searchers, built once per page.
pub(super) struct Keys([Finder<'static>; 3]);

/// How far a key is known in one blob: its next place (`found`), or that it does not occur
/// before `searched_to`.
#[derive(Clone, Copy, Default)]
struct Known {
    found: Option<usize>,
    searched_to: usize,
}

/// How much of a blob one key's searcher looks at in one go: a key absent from a blob is only
/// searched as far as the nearest key found (the user is usually near the blob's start).
const WINDOW: usize = 16 * 1024;

impl Keys {
    /// The searchers of every key.
    pub(super) fn new() -> Self {
        Self(Place::ALL.map(|place| Finder::new(place.key())))
    }

    /// The first key at or after `from` in `blob`, as (where, which); counts the bytes looked
    /// at. `known` remembers how far each key was searched, so each searcher passes over a
    /// byte at most once (window overlaps aside), and no further than the nearest key found.
    fn next(&self, blob: &[u8], from: usize, known: &mut [Known; 3]) -> Option<(usize, Place)> {
        for key in known.iter_mut() {
            // A place inside the object just read is not looked at again.
            if key.found.is_some_and(|at| at < from) {
                key.found = None;
            }
            if key.found.is_none() {
                key.searched_to = key.searched_to.max(from);
            }
        }
        loop {
            let nearest = Place::ALL
                .into_iter()
                .zip(known.iter())
                .filter_map(|(place, key)| key.found.map(|at| (at, place)))
                .min_by_key(|&(at, _)| at);
            let limit = nearest.map_or(blob.len(), |(at, _)| at);
            let mut searched = false;
            for (k, place) in Place::ALL.into_iter().enumerate() {
                let key = &mut known[k];
                if key.found.is_some() || key.searched_to >= limit {
                    continue;
                }
                let start = key.searched_to;
                let end = (start + WINDOW).min(blob.len());
                let window = &blob[start..(end + place.key().len() - 1).min(blob.len())];
                let found = self.0[k].find(window);
                cost::examined(found.map_or(window.len(), |at| at + place.key().len()));
                match found {
                    Some(at) => (key.found, key.searched_to) = (Some(start + at), start + at),
                    None => key.searched_to = end,
                }
                searched = true;
            }
            if !searched {
                return nearest;
            }
        }
    }
}

/// Looks for the requested user's object under either key in one data-sjs blob.
///
/// Each byte of the blob is deserialized at most once: the search resumes after an object that
/// was read (so keys nested inside it are not read again), and stops at the first object that
/// cannot be read (the blob is then malformed, and a nest of keys cannot make the work grow
/// with their number). Each key's searcher passes over a byte of the blob at most once, and
/// over none past the object that answers.
pub(super) fn scan(blob: &[u8], requested: Subject<'_>, keys: &Keys) -> Scan {
    let mut out = Scan::default();
    let mut from = 0;
    let mut known = [Known::default(); 3];
    while let Some((at, place)) = keys.next(blob, from, &mut known) {
        let after_key = at + place.key().len();
        from = after_key;
        let rest = skip_ws(&blob[after_key..]);
        let Some(value) = rest.strip_prefix(b":").map(skip_ws) else {
            continue; // the name as a string value, not a key
        };
        if !value.starts_with(b"{") {
            continue; // `null` or another shape: no profile here
        }
        let value_at = blob.len() - value.len();
        let read = match place {
            Place::Xig | Place::ProfileQuery => {
                first_value::<UserObject<Names>>(value).map(|r| r.map(|(u, n)| (Some(u), n)))
            }
            Place::WebProfileInfo => {
                first_value::<Envelope>(value).map(|r| r.map(|(e, n)| (e.user.0, n)))
            }
        };
        match read {
            Some(Ok((user, len))) => {
                from = value_at + len;
                let Some(user) = user else {
                    continue; // `{"user": null}`: no profile here
                };
                let profile = place_profile(place, user);
                if is_requested(&profile, requested) {
                    out.profile = Some(profile);
                    return out;
                }
                out.other_user = true;
            }
            Some(Err(err)) => {
                out.broken = Some(describe("page user object", &err));
                return out;
            }
            None => return out,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;
    use crate::username::Username;

    fn run(blob: &str, raw: &str) -> Scan {
        let name = Username::parse(Platform::PhotoShare, raw).expect("valid test name");
        scan(blob.as_bytes(), (&name).into(), &Keys::new())
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
        let blob = r#"{"data":{"xig_user_by_username":{"pk":7,"username":"bo","is_private":true,
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
