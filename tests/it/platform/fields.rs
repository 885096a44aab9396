//! Both platforms read a text, a flag and a count field by one rule set (issue 9): the same
//! JSON value in a field gives the same body value whichever platform, page era or document
//! shape carries it, a wrongly typed field never costs the profile, and the reasons given for
//! an unreadable document never quote it.

use crate::support::{photo_share_name, short_video_name};
use profile_lookup::platform::Reading;
use profile_lookup::platform::photo_share::PhotoShareProfile;
use profile_lookup::platform::photo_share::extract::{from_api, from_page};
use profile_lookup::platform::short_video::ShortVideoProfile;
use profile_lookup::platform::short_video::extract::extract;

const NAME: &str = "field.probe";

/// What each field of a body holds when a document gives `value` (the JSON text) for it.
#[derive(Clone, Debug, PartialEq)]
struct Read {
    text: String,
    flag: bool,
    count: Option<u64>,
}

/// JSON values and what a text, a flag and a count field make of them.
fn table() -> Vec<(&'static str, Read)> {
    let read = |text: &str, flag, count| Read {
        text: text.to_owned(),
        flag,
        count,
    };
    vec![
        ("0", read("0", false, Some(0))),
        ("12", read("12", false, Some(12))),
        (
            "18446744073709551615",
            read("18446744073709551615", false, Some(u64::MAX)),
        ),
        ("18446744073709551616", read("", false, None)),
        ("-1", read("-1", false, None)),
        ("4.0e6", read("", false, Some(4_000_000))),
        ("1.8e19", read("", false, None)),
        (
            "9.007199254740992e15",
            read("", false, Some(9_007_199_254_740_992)),
        ),
        ("1.5", read("", false, None)),
        ("1e300", read("", false, None)),
        (r#""4001943""#, read("4001943", false, Some(4_001_943))),
        (r#""007""#, read("007", false, Some(7))),
        (r#""\u0035""#, read("5", false, Some(5))),
        (r#""+5""#, read("+5", false, None)),
        (r#""-3""#, read("-3", false, None)),
        (r#"" 5""#, read(" 5", false, None)),
        (r#""12k""#, read("12k", false, None)),
        (r#""1.0""#, read("1.0", false, None)),
        (r#""""#, read("", false, None)),
        (
            r#""18446744073709551616""#,
            read("18446744073709551616", false, None),
        ),
        ("true", read("", true, None)),
        ("false", read("", false, None)),
        ("null", read("", false, None)),
        (r#"[1,"a",[{}]]"#, read("", false, None)),
        (r#"{"count":3,"a":[1]}"#, read("", false, None)),
    ]
}

/// A short-video `user` object and `stats` object with `value` in a text, a flag and a count
/// (the accounts followed: a public account's follower count is never `null`, so it is given).
fn short_video_objects(value: &str) -> (String, String) {
    (
        format!(r#"{{"id":"1","uniqueId":"{NAME}","nickname":{value},"verified":{value}}}"#),
        format!(r#"{{"followerCount":1,"followingCount":{value}}}"#),
    )
}

/// The same user in each of the three page eras.
fn short_video_pages(user: &str, stats: &str) -> Vec<String> {
    let script = |id: &str, state: String| {
        format!(
            r#"<html><body><script id="{id}" type="application/json">{state}</script></body></html>"#
        )
    };
    vec![
        script(
            "__UNIVERSAL_DATA_FOR_REHYDRATION__",
            format!(
                r#"{{"__DEFAULT_SCOPE__":{{"webapp.user-detail":{{"statusCode":0,"userInfo":{{"user":{user},"stats":{stats}}}}}}}}}"#
            ),
        ),
        script(
            "SIGI_STATE",
            format!(
                r#"{{"UserModule":{{"users":{{"{NAME}":{user}}},"stats":{{"{NAME}":{stats}}}}},"UserPage":{{"uniqueId":"{NAME}","statusCode":0}}}}"#
            ),
        ),
        script(
            "__NEXT_DATA__",
            format!(
                r#"{{"props":{{"pageProps":{{"statusCode":0,"userInfo":{{"user":{user},"stats":{stats}}}}}}}}}"#
            ),
        ),
    ]
}

fn short_video_profile(page: &str) -> ShortVideoProfile {
    match extract(page.as_bytes(), &short_video_name(NAME)) {
        Reading::Found(p) => p,
        other => panic!("{other:?} for {page}"),
    }
}

/// What each short-video page era reads from `value`.
fn short_video_reads(value: &str) -> Vec<Read> {
    let (user, stats) = short_video_objects(value);
    short_video_pages(&user, &stats)
        .iter()
        .map(|page| {
            let p = short_video_profile(page);
            Read {
                text: p.user_info.user.nickname,
                flag: p.user_info.user.verified,
                count: p.user_info.stats.following_count,
            }
        })
        .collect()
}

/// The edge-style photo-share user with `value` in a text, a flag and a count (`holder` is the
/// whole value of `edge_follow`, `{"count": value}` unless given; the followers are given, as
/// a public account's always are).
fn edge_user(value: &str, holder: Option<&str>) -> String {
    let holder = holder.map_or_else(|| format!(r#"{{"count":{value}}}"#), str::to_owned);
    format!(
        r#"{{"id":"1","username":"{NAME}","full_name":{value},"is_verified":{value},"edge_followed_by":{{"count":1}},"edge_follow":{holder}}}"#
    )
}

/// The API answer, the current page and the legacy page of the same user.
fn photo_share_profiles(value: &str, holder: Option<&str>) -> Vec<PhotoShareProfile> {
    let user = edge_user(value, holder);
    let api = format!(r#"{{"data":{{"user":{user}}},"status":"ok"}}"#);
    let xig = format!(
        r#"<html><script type="application/json" data-sjs>{{"data":{{"xig_user_by_username":{{"pk":"1","username":"{NAME}","full_name":{value},"is_verified":{value},"follower_count":1,"following_count":{value}}}}}}}</script></html>"#
    );
    let legacy = format!(
        r#"<html><script>window._sharedData = {{"entry_data":{{"ProfilePage":[{{"graphql":{{"user":{user}}}}}]}}}};</script></html>"#
    );
    let name = photo_share_name(NAME);
    let mut verdicts = vec![from_api(api.as_bytes(), &name)];
    if holder.is_none() {
        verdicts.push(from_page(xig.as_bytes(), &name));
    }
    verdicts.push(from_page(legacy.as_bytes(), &name));
    verdicts
        .into_iter()
        .map(|verdict| match verdict {
            Reading::Found(p) => p,
            other => panic!("{other:?} for {value}"),
        })
        .collect()
}

/// What each photo-share document shape reads from `value`.
fn photo_share_reads(value: &str) -> Vec<Read> {
    photo_share_profiles(value, None)
        .into_iter()
        .map(|p| Read {
            text: p.full_name,
            flag: p.is_verified,
            count: p.edge_follow.count,
        })
        .collect()
}

#[test]
fn both_platforms_read_every_value_by_one_rule_set() {
    for (value, want) in table() {
        // The one difference: the short-video platform wraps its totals into signed 32-bit
        // integers, so a negative count there is the total it stood for (docs/short-video.md).
        let short_video_want = match value {
            "-1" => Read {
                count: Some(4_294_967_295),
                ..want.clone()
            },
            _ => want.clone(),
        };
        for got in short_video_reads(value) {
            assert_eq!(got, short_video_want, "short-video, {value}");
        }
        for got in photo_share_reads(value) {
            assert_eq!(got, want, "photo-share, {value}");
        }
    }
}

#[test]
fn a_count_holder_of_the_wrong_type_is_a_missing_count_on_both_platforms() {
    for holder in ["5", r#""5""#, "[]", "[{}]", "true", "null"] {
        // A private account: its limited view may leave every count out.
        let user = format!(r#"{{"id":"1","uniqueId":"{NAME}","privateAccount":true}}"#);
        for page in short_video_pages(&user, holder) {
            let p = short_video_profile(&page);
            assert_eq!(p.user_info.stats.follower_count, None, "{holder}");
        }
        for p in photo_share_profiles("1", Some(holder)) {
            assert_eq!(p.edge_follow.count, None, "{holder}");
        }
    }
}

#[test]
fn a_short_video_relation_of_the_wrong_type_is_zero() {
    for (relation, want) in [("2", 2), ("-1", -1), (r#""1""#, 0), ("1.0", 0), ("{}", 0)] {
        let user = format!(r#"{{"uniqueId":"{NAME}","relation":{relation}}}"#);
        for page in short_video_pages(&user, r#"{"followerCount":1}"#) {
            assert_eq!(short_video_profile(&page).user_info.user.relation, want);
        }
    }
}

/// Text a reason for an unreadable document must never contain.
const SECRET: &str = "s3cret";

fn assert_unreadable_without_secret<P: std::fmt::Debug>(verdict: Reading<P>, doc: &str) {
    match verdict {
        Reading::Unreadable(why) => {
            assert!(!why.contains(SECRET), "{why:?} quotes {doc}");
        }
        other => panic!("{other:?} for {doc}"),
    }
}

#[test]
fn reasons_for_an_unreadable_document_never_quote_it() {
    let user = format!(r#"{{"uniqueId":"{SECRET}"}}"#);
    let mut short_video = short_video_pages(&user, "{}");
    for detail in [
        format!(r#"{{"statusCode":10555,"statusMsg":"{SECRET}"}}"#),
        format!(r#"{{"statusCode":"{SECRET}"}}"#),
        format!(r#"{{"statusCode":0,"userInfo":"{SECRET}"}}"#),
        format!(r#"{{"statusCode":0,"userInfo":{{"user":{SECRET}}}}}"#),
    ] {
        short_video.push(format!(
            r#"<script id="__UNIVERSAL_DATA_FOR_REHYDRATION__">{{"__DEFAULT_SCOPE__":{{"webapp.user-detail":{detail}}}}}</script>"#
        ));
    }
    short_video.push(format!(
        r#"<script id="SIGI_STATE">{{"UserPage":"{SECRET}"}}</script>"#
    ));
    for page in short_video {
        assert_unreadable_without_secret(extract(page.as_bytes(), &short_video_name(NAME)), &page);
    }
    let name = photo_share_name(NAME);
    for api in [
        format!(r#"{{"data":"{SECRET}"}}"#),
        format!(r#"{{"data":{{"user":{SECRET}}}}}"#),
        format!(r#"{{"data":{{"user":{{"username":"{SECRET}"}}}}}}"#),
    ] {
        assert_unreadable_without_secret(from_api(api.as_bytes(), &name), &api);
    }
    for page in [
        format!(r#"<script data-sjs>{{"xig_user_by_username":{{"username":{SECRET}}}}}</script>"#),
        format!(r#"<script>window._sharedData = {{"entry_data":"{SECRET}"}};</script>"#),
    ] {
        assert_unreadable_without_secret(from_page(page.as_bytes(), &name), &page);
    }
}
