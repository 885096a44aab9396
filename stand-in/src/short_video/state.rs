//! The state object of each era, around the profile's (or nobody's) `user` and `stats`, with
//! other users' data as decoys and video items up to the size asked for.

use std::fmt::Write as _;

use super::json::{items, user_json};
use super::{Era, SampleUser, Subject};

/// Other people (invented) who appear on every page as suggestions: decoys for the extractor.
/// (uniqueId, id, nickname, followers)
pub(super) const SUGGESTED: [(&str, &str, &str, u64); 4] = [
    (
        "river.sketches",
        "7000000000000000901",
        "River Sketches",
        98_700,
    ),
    (
        "mountain_bike_mo",
        "7000000000000000902",
        "Mountain Bike Mo",
        2_400_000,
    ),
    (
        "the.daily.pun",
        "7000000000000000903",
        "The Daily Pun",
        530_000,
    ),
    (
        "cozy_corner_reads",
        "7000000000000000904",
        "Cozy Corner Reads",
        12_000,
    ),
];

/// Three significant digits, truncated, as the platform rounds `stats` on big accounts.
pub(super) fn rounded(n: u64) -> u64 {
    let mut unit = 1;
    while n / unit >= 1000 {
        unit *= 10;
    }
    n / unit * unit
}

/// `n` as the platform's int32 `heartCount` shows it (negative once past `i32::MAX`).
pub(super) fn as_int32(n: u64) -> i64 {
    i64::from(n as u32 as i32)
}

/// The `stats` object: `round` for the rounded current-era spelling, exact otherwise.
fn stats_json(out: &mut String, u: &SampleUser, round: bool) {
    let r = |n: u64| if round { rounded(n) } else { n };
    let mut parts = Vec::new();
    let mut put = |key: &str, v: Option<i64>| {
        if let Some(v) = v {
            parts.push(format!("\"{key}\":{v}"));
        }
    };
    let i = |n: Option<u64>| n.map(|n| i64::try_from(r(n)).unwrap_or(i64::MAX));
    put("followerCount", i(u.follower_count));
    put("followingCount", i(u.following_count));
    put("heart", i(u.heart_count));
    put("heartCount", u.heart_count.map(|n| as_int32(r(n))));
    put("videoCount", i(u.video_count));
    put("diggCount", i(u.digg_count));
    let _ = write!(out, "{{{},\"friendCount\":3}}", parts.join(","));
}

/// The user's counts under the page's keys, in the page's order (both like spellings).
fn counts(u: &SampleUser) -> [(&'static str, Option<u64>); 6] {
    [
        ("followerCount", u.follower_count),
        ("followingCount", u.following_count),
        ("heart", u.heart_count),
        ("heartCount", u.heart_count),
        ("videoCount", u.video_count),
        ("diggCount", u.digg_count),
    ]
}

/// `{"key":<value>,…}` of the counts the user has, each written by `value`, then `extra`.
fn counts_json(out: &mut String, u: &SampleUser, value: impl Fn(u64) -> String, extra: &str) {
    let parts: Vec<String> = counts(u)
        .iter()
        .filter_map(|(k, v)| v.map(|v| format!("\"{k}\":{}", value(v))))
        .chain((!extra.is_empty()).then(|| extra.to_owned()))
        .collect();
    let _ = write!(out, "{{{}}}", parts.join(","));
}

/// The `stats` object of a page without `statsV2` whose every count is a signed 32-bit
/// integer: exact, and negative once past `i32::MAX` (both like spellings alike).
fn wrapped_stats_json(out: &mut String, u: &SampleUser) {
    counts_json(out, u, |v| as_int32(v).to_string(), "");
}

/// The exact `statsV2` object of decimal strings.
fn stats_v2_json(out: &mut String, u: &SampleUser) {
    counts_json(out, u, |v| format!("\"{v}\""), "\"friendCount\":\"3\"");
}

/// The `i`-th suggested (other) user: a decoy inside and outside the state.
fn suggested(i: usize) -> SampleUser {
    let (unique_id, id, nickname, followers) = SUGGESTED[i % SUGGESTED.len()];
    SampleUser {
        unique_id,
        id,
        sec_uid: "MS4wLjABAAAAinventedSecUidSuggestedDecoy00999",
        nickname,
        signature: "Suggested for you",
        verified: i.is_multiple_of(2),
        private: false,
        open_favorite: false,
        follower_count: Some(followers),
        following_count: Some(10),
        heart_count: Some(followers * 7),
        video_count: Some(40),
        digg_count: Some(0),
        bio_link: Some("https://decoy.example/not-the-user"),
        create_time: Some(1_400_000_000),
        language: Some("es"),
        is_organization: true,
    }
}

/// `{"user":{…},"stats":{…}}` of the `i`-th suggested user.
pub(super) fn suggested_json(out: &mut String, i: usize, era: Era) {
    let decoy = suggested(i);
    out.push_str(r#"{"user":"#);
    user_json(out, &decoy, era);
    out.push_str(r#","stats":"#);
    stats_json(out, &decoy, false);
    out.push('}');
}

/// The state JSON of `era` for `subject`, grown to about `budget` bytes.
pub(super) fn state_json(era: Era, subject: Subject<'_>, status: i64, budget: usize) -> String {
    let mut s = String::with_capacity(budget + 8192);
    let name = subject.name();
    match era {
        Era::Universal => {
            s.push_str(r#"{"__DEFAULT_SCOPE__":{"webapp.app-context":{"language":"en","region":"US","appId":1233,"user":{},"wid":"7000000000000000777","nonce":"invented","botType":"others","host":"www.short-video.example","abTestVersion":{"versionName":"70000001,70000002","parameters":{"sample_flag":{"vid":"v1"}}}},"webapp.biz-context":{"isMobile":false,"teaCommonParam":{"page_name":"user"}},"#);
            match subject {
                Subject::Shell => {}
                Subject::User(u) | Subject::Wrapped(u) => {
                    s.push_str(r#""webapp.user-detail":{"userInfo":{"user":"#);
                    user_json(&mut s, u, era);
                    s.push_str(r#","stats":"#);
                    if matches!(subject, Subject::Wrapped(_)) {
                        wrapped_stats_json(&mut s, u);
                    } else {
                        // Rounded only where the exact statsV2 sits beside it.
                        stats_json(&mut s, u, !u.private);
                    }
                    if !u.private && matches!(subject, Subject::User(_)) {
                        s.push_str(r#","statsV2":"#);
                        stats_v2_json(&mut s, u);
                    }
                    let _ = write!(
                        s,
                        r#","itemList":[]}},"shareMeta":{{"title":"@{name}","desc":"sample"}},"statusCode":{status},"statusMsg":"","needFix":true}},"#
                    );
                }
                Subject::Missing(_) => {
                    let _ = write!(
                        s,
                        r#""webapp.user-detail":{{"userInfo":{{}},"statusCode":{status},"statusMsg":"sample status","needFix":true}},"#
                    );
                }
            }
            s.push_str(r#""webapp.post-list":{"itemList":["#);
            items(&mut s, name, budget.saturating_sub(64), era, false);
            s.push_str(r#"]},"seo.abtest":{"canonical":"https:\u002F\u002Fwww.short-video.example\u002F","pageId":"sample"}}}"#);
        }
        Era::Sigi => {
            s.push_str(r#"{"AppContext":{"appContext":{"isAndroid":false,"host":"www.short-video.example","language":"en","region":"US","appId":1233}},"SEO":{"metaParams":{"title":"sample"}},"#);
            if !matches!(subject, Subject::Shell) {
                s.push_str(r#""ItemModule":{"#);
                items(&mut s, name, budget.saturating_sub(4096), era, true);
                s.push_str(r#"},"UserModule":{"users":{"#);
                // Other users share the module (keyed by uniqueId), before and after ours.
                let mut users: Vec<SampleUser> = (0..2).map(suggested).collect();
                if let Subject::User(u) | Subject::Wrapped(u) = subject {
                    users.insert(1, *u);
                }
                let mut stats = String::new();
                for (i, u) in users.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                        stats.push(',');
                    }
                    let _ = write!(s, "\"{}\":", u.unique_id);
                    user_json(&mut s, u, era);
                    let _ = write!(stats, "\"{}\":", u.unique_id);
                    stats_json(&mut stats, u, false);
                }
                let _ = write!(
                    s,
                    r#"}},"stats":{{{stats}}}}},"UserPage":{{"uniqueId":"{name}","statusCode":{status},"secUid":""}},"#
                );
            }
            s.push_str(r#""RecommendUserList":{"list":["river.sketches","the.daily.pun"]}}"#);
        }
        Era::NextData => {
            s.push_str(r#"{"props":{"initialProps":{"statusCode":0,"$wid":"7000000000000000777","$host":"www.short-video.example","$pageUrl":"\u002F@sample","$language":"en","$user":{"uniqueId":"viewer.account","nickName":"Viewer"}},"pageProps":{"#);
            let server = if status == 10202 { 404 } else { 200 };
            let _ = write!(
                s,
                r#""serverCode":{server},"uniqueId":"{name}","statusCode":{status},"statusMsg":"","#
            );
            if let Subject::User(u) | Subject::Wrapped(u) = subject {
                s.push_str(r#""userInfo":{"user":"#);
                user_json(&mut s, u, era);
                s.push_str(r#","stats":"#);
                stats_json(&mut s, u, false);
                s.push_str(r#","itemList":[]},"#);
            }
            s.push_str(r#""recommendUserList":["#);
            for i in 0..SUGGESTED.len() {
                if i > 0 {
                    s.push(',');
                }
                suggested_json(&mut s, i, era);
            }
            s.push_str(r#"],"items":["#);
            items(&mut s, name, budget.saturating_sub(256), era, false);
            s.push_str(r#"]}},"page":"\u002F@[uniqueId]","query":{},"buildId":"sample-build","isFallback":false,"gip":true}"#);
        }
    }
    s
}
