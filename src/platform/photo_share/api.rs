//! The profile JSON: `{"data":{"user":{…}},"status":"ok"}`, as `web_profile_info` answers it
//! (edge-style names) and as the profile query answers it (the mobile API's names, with or
//! without `status`; mifi/SimpleInstaBot#329, 2026-09-14). The user is read through the
//! platform's table of names, whichever set it uses.

use serde::{Deserialize, Deserializer};

use super::PhotoShareProfile;
use super::parts::{Names, answerable, is_requested, profile, searched};
use super::signals::message_block;
use crate::cost;
use crate::platform::Reading;
use crate::platform::fields::{Flag, Text, UserObject, describe};
use crate::username::Subject;

/// The top level of an API answer: the profile, or a failure with its signals.
#[derive(Deserialize)]
struct ApiDoc<'a> {
    #[serde(default, borrow)]
    data: Option<ApiData<'a>>,
    #[serde(default, borrow)]
    message: Text<'a>,
    #[serde(default)]
    require_login: Flag,
    #[serde(default, borrow)]
    status: Text<'a>,
}

#[derive(Deserialize)]
struct ApiData<'a> {
    /// `None`: no `user` key; `Some(None)`: `"user": null`.
    #[serde(default, borrow, deserialize_with = "present")]
    user: Option<Option<UserObject<'a, Names>>>,
}

/// Deserializes a field so that a present `null` (`Some(None)`) differs from a missing key
/// (`None`, through `#[serde(default)]`).
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// Reads a `/api/v1/users/web_profile_info/?username=` response body, or a saved answer of
/// the profile query (the same envelope).
///
/// - `{"data":{"user":{…}},"status":"ok"}` whose `username` matches `requested` →
///   [`Reading::Found`]; another username → [`Reading::Unreadable`].
/// - `{"data":{"user":null},"status":"ok"}` → [`Reading::NotFound`]. This is
///   **unconfirmed**: the caller treats it as a hint only and confirms absence with
///   the profile page ([`from_page`](crate::platform::photo_share::extract::from_page)), whose 404 page is the proof,
///   before answering 404.
/// - `"require_login": true` → `Blocked("require_login")`; a `message` naming
///   `checkpoint_required`, `challenge_required` or `feedback_required` → `Blocked(that name)`;
///   a "Please wait a few minutes" message → `Blocked("please_wait")`.
/// - No `data.user` at all: the requested user's object wherever the answer keeps it (the
///   anchored search; another user's is never taken), else [`Reading::Unreadable`].
/// - Anything that is not JSON of that shape (including invalid UTF-8 inside strings, or
///   nesting deeper than serde_json's recursion limit) → [`Reading::Unreadable`].
///
/// Missing or wrongly typed strings become `""`, booleans `false` and counts `None`
/// (`platform::fields` has the one rule set of both platforms).
/// Only the body's fields are deserialized; the timeline edges and every other field are
/// skipped without being built.
pub fn from_api<'a>(body: &[u8], requested: impl Into<Subject<'a>>) -> Reading<PhotoShareProfile> {
    let requested = requested.into();
    cost::examined(body.len());
    let doc: ApiDoc = match serde_json::from_slice(body) {
        Ok(doc) => doc,
        Err(err) => return Reading::Unreadable(describe("api body", &err)),
    };
    if doc.require_login.0 {
        return Reading::blocked("require_login");
    }
    if let Some(reason) = message_block(&doc.message.0) {
        return Reading::blocked(reason);
    }
    let Some(data) = doc.data else {
        // The user may have moved out of `data`: the anchored search looks for them.
        return searched([body], requested).unwrap_or_else(|| {
            Reading::Unreadable(if doc.status.0 == "fail" {
                "api status fail without a known block signal".to_owned()
            } else {
                "api body without data".to_owned()
            })
        });
    };
    match data.user {
        None => searched([body], requested)
            .unwrap_or_else(|| Reading::Unreadable("api data without user".to_owned())),
        Some(None) => Reading::NotFound,
        Some(Some(user)) => {
            let profile = profile(&user.0);
            if is_requested(&profile, requested) {
                answerable(profile)
            } else {
                Reading::Unreadable("api user is not the requested username".to_owned())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::{Count, Platform};
    use crate::username::Username;

    fn name(raw: &str) -> Username {
        Username::parse(Platform::PhotoShare, raw).expect("valid test name")
    }

    fn profile(json: &str, raw: &str) -> PhotoShareProfile {
        match from_api(json.as_bytes(), &name(raw)) {
            Reading::Found(p) => p,
            other => panic!("expected a profile, got {other:?}"),
        }
    }

    const FULL: &str = r#"{"data":{"user":{
        "biography":"Tea &amp; \"maps\" \ud83e\udded https:\u002F\u002Fexample.test\/a",
        "edge_followed_by":{"count":1200},"edge_follow":{"count":34},
        "full_name":"Ann Example","id":"1234567","is_private":false,"is_verified":true,
        "profile_pic_url":"https:\/\/cdn.example.test\/p.jpg?a=1\u0026b=2",
        "profile_pic_url_hd":"https:\/\/cdn.example.test\/p_hd.jpg",
        "username":"ann.example","fbid":"999","pronouns":["she"],
        "edge_owner_to_timeline_media":{"count":56,"page_info":{"has_next_page":true},
            "edges":[{"node":{"id":"1","edge_media_to_caption":{"edges":[]}}}]}},
        "extra":{"deep":[[[{}]]]}},"status":"ok"}"#;

    #[test]
    fn reads_every_body_field() {
        let p = profile(FULL, "Ann.Example");
        assert_eq!(p.id, "1234567");
        assert_eq!(p.username, "ann.example");
        assert_eq!(p.full_name, "Ann Example");
        assert_eq!(
            p.biography,
            "Tea &amp; \"maps\" \u{1f9ed} https://example.test/a"
        );
        assert_eq!(p.profile_pic_url, "https://cdn.example.test/p.jpg?a=1&b=2");
        assert_eq!(p.profile_pic_url_hd, "https://cdn.example.test/p_hd.jpg");
        assert!(p.is_verified);
        assert!(!p.is_private);
        assert_eq!(p.edge_followed_by, Count::of(1200));
        assert_eq!(p.edge_follow, Count::of(34));
        assert_eq!(p.edge_owner_to_timeline_media, Count::of(56));
    }

    #[test]
    fn missing_fields_are_neutral_and_counts_none() {
        let p = profile(
            r#"{"data":{"user":{"username":"bo","edge_followed_by":{"count":2}}},"status":"ok"}"#,
            "bo",
        );
        assert_eq!(p.id, "");
        assert_eq!(p.profile_pic_url_hd, "");
        assert!(!p.is_verified && !p.is_private);
        assert_eq!(p.edge_followed_by, Count::of(2));
        assert_eq!(p.edge_follow, Count { count: None });
        assert_eq!(p.edge_owner_to_timeline_media, Count { count: None });
        let p = profile(
            r#"{"data":{"user":{"username":"bo","edge_follow":{},"is_private":true,
                "edge_followed_by":{"count":-5},"edge_owner_to_timeline_media":{"count":1.5}}}}"#,
            "bo",
        );
        assert_eq!(p.edge_follow.count, None);
        assert_eq!(p.edge_followed_by.count, None);
        assert_eq!(p.edge_owner_to_timeline_media.count, None);
    }

    #[test]
    fn a_public_user_without_a_follower_count_is_unreadable_a_private_one_is_not() {
        for body in [
            r#"{"data":{"user":{"username":"bo"}},"status":"ok"}"#,
            r#"{"data":{"user":{"username":"bo","edge_fans":{"count":5}}}}"#,
            r#"{"data":{"user":{"username":"bo","edge_followed_by":{"count":-5}}}}"#,
            r#"{"data":{"user":{"username":"bo","follower_count":null}}}"#,
        ] {
            assert!(
                matches!(
                    from_api(body.as_bytes(), &name("bo")),
                    Reading::Unreadable(ref why) if why.contains("follower count")
                ),
                "{body}"
            );
        }
        let private = r#"{"data":{"user":{"username":"bo","is_private":true}}}"#;
        assert_eq!(profile(private, "bo").edge_followed_by.count, None);
    }

    #[test]
    fn hd_picture_falls_back_to_the_plain_one() {
        let p = profile(
            r#"{"data":{"user":{"username":"bo","profile_pic_url":"https://x.test/s.jpg",
                "edge_followed_by":{"count":1}}}}"#,
            "bo",
        );
        assert_eq!(p.profile_pic_url_hd, "https://x.test/s.jpg");
    }

    #[test]
    fn a_user_moved_within_the_json_still_reads_and_no_one_else_is_taken() {
        let moved = FULL.replacen(r#"{"data":{"user":{"#, r#"{"data":{"account":{"#, 1);
        let p = profile(&moved, "ann.example");
        assert_eq!(
            (p.id.as_str(), p.edge_followed_by.count),
            ("1234567", Some(1200))
        );
        assert!(matches!(
            from_api(moved.as_bytes(), &name("ann.examples")),
            Reading::Unreadable(_)
        ));
    }

    #[test]
    fn user_null_is_not_found() {
        let body = br#"{"data":{"user":null},"status":"ok"}"#;
        assert_eq!(from_api(body, &name("gone")), Reading::NotFound);
    }

    #[test]
    fn another_user_is_unreadable() {
        let verdict = from_api(FULL.as_bytes(), &name("ann.examples"));
        assert!(matches!(verdict, Reading::Unreadable(_)), "{verdict:?}");
    }

    #[test]
    fn non_json_and_odd_shapes_are_unreadable() {
        for body in [
            &b"<!DOCTYPE html><html>"[..],
            b"",
            b"{",
            b"[]",
            b"{\"data\":{}}",
            b"{\"status\":\"ok\"}",
            b"{\"status\":\"fail\",\"message\":\"something\"}",
            b"{\"data\":{\"user\":{\"username\":\"a\xff\"}}}",
            b"{\"data\":{\"user\":{\"username\":\"a\"}}} trailing",
        ] {
            let verdict = from_api(body, &name("a"));
            assert!(matches!(verdict, Reading::Unreadable(_)), "{verdict:?}");
        }
    }

    #[test]
    fn json_block_signals_are_blocked() {
        let cases: [(&str, &str); 5] = [
            (
                r#"{"message":"Please wait a few minutes, then retry.","require_login":true,"status":"fail"}"#,
                "require_login",
            ),
            (
                r#"{"message":"checkpoint_required","checkpoint_url":"/challenge/x/","status":"fail"}"#,
                "checkpoint_required",
            ),
            (
                r#"{"message":"challenge_required","status":"fail"}"#,
                "challenge_required",
            ),
            (
                r#"{"message":"feedback_required","spam":true,"status":"fail"}"#,
                "feedback_required",
            ),
            (
                r#"{"message":"Please wait a few minutes, then retry.","status":"fail"}"#,
                "please_wait",
            ),
        ];
        for (body, reason) in cases {
            assert_eq!(
                from_api(body.as_bytes(), &name("a")),
                Reading::blocked(reason)
            );
        }
        let not_a_block = br#"{"require_login":false,"data":{"user":null},"status":"ok"}"#;
        assert_eq!(from_api(not_a_block, &name("a")), Reading::NotFound);
    }

    /// The profile query's answer (mifi/SimpleInstaBot#329, 2026-09-14): the user in the
    /// mobile API's names, beside a viewer without a name, with or without `"status":"ok"`.
    fn profile_query_answer(status: &str) -> String {
        format!(
            r#"{{"data":{{"user":{{"pk":"77","id":"77","username":"tide.pool","full_name":"T",
            "profile_pic_url":"https:\/\/cdn.test\/s.jpg",
            "hd_profile_pic_url_info":{{"url":"https:\/\/cdn.test\/hd.jpg"}},
            "is_verified":false,"is_private":false,"account_type":3,"is_business":false,
            "category":"Artist","bio_links":[],"follower_count":120,"following_count":7,
            "media_count":31}},"viewer":{{"user":{{"pk":"0","id":"0"}}}}}},
            "extensions":{{"is_final":true}}{status}}}"#
        )
    }

    #[test]
    fn reads_the_profile_query_user_shape_with_or_without_status() {
        for status in ["", r#","status":"ok""#] {
            let p = profile(&profile_query_answer(status), "tide.pool");
            assert_eq!(p.id, "77");
            assert_eq!(p.profile_pic_url_hd, "https://cdn.test/hd.jpg");
            assert_eq!(
                (
                    p.edge_followed_by.count,
                    p.edge_follow.count,
                    p.edge_owner_to_timeline_media.count
                ),
                (Some(120), Some(7), Some(31)),
                "{status}"
            );
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let mut body = br#"{"data":{"user":{"username":"a","x":"#.to_vec();
        body.extend(std::iter::repeat_n(b'[', 100_000));
        let verdict = from_api(&body, &name("a"));
        assert!(matches!(verdict, Reading::Unreadable(_)), "{verdict:?}");
    }
}
