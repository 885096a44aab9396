//! The project's own short-video upstream documents: invented people and numbers, written in
//! each shape the platform has used, for the demo upstream, the integration tests and the
//! benchmarks.
//!
//! Nothing here comes from a real capture. The pages are built to be hard in the ways real
//! pages are: the state is most of the page, strings carry the platform's `\u002F` escapes,
//! other users' data sits elsewhere on the page, inline scripts mention the state script's id,
//! attributes come in varied order and quoting. Generation is deterministic and cheap (a few
//! string pushes per kilobyte), so tests can build pages freely.

use std::fmt::Write as _;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};

use crate::platform::short_video::challenge::STANDARD_PAD_INDIFFERENT;
use sha2::{Digest, Sha256};

use crate::platform::{ShortVideoProfile, ShortVideoStats, ShortVideoUser, ShortVideoUserInfo};

/// The size of an ordinary profile page (what the uncached-lookup benchmark serves).
pub const DEFAULT_PAGE_SIZE: usize = 365 * 1024;

/// The size of the page the extraction benchmark reads.
pub const BENCH_PAGE_SIZE: usize = 1024 * 1024;

/// An invented account: what a sample page says about it, exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleUser {
    /// The handle, in the platform's spelling.
    pub unique_id: &'static str,
    /// The numeric user id.
    pub id: &'static str,
    /// The secondary user id.
    pub sec_uid: &'static str,
    /// The display name.
    pub nickname: &'static str,
    /// The bio, as the body returns it (JSON-decoded, never entity-decoded).
    pub signature: &'static str,
    /// Whether the account is verified.
    pub verified: bool,
    /// Whether the account is private (its page has status 10222 and limited counts).
    pub private: bool,
    /// Whether the user's liked videos are public.
    pub open_favorite: bool,
    /// Exact followers; `None` where the page leaves the count out.
    pub follower_count: Option<u64>,
    /// Exact accounts followed.
    pub following_count: Option<u64>,
    /// Exact likes received (both `heart` and `heartCount` in the body).
    pub heart_count: Option<u64>,
    /// Exact videos posted.
    pub video_count: Option<u64>,
    /// Exact videos liked.
    pub digg_count: Option<u64>,
}

/// A big verified account: rounded `stats` beside exact `statsV2`, a like count past
/// `i32::MAX` (so `stats.heartCount` is negative), and a bio with `&amp;`, a quote, an emoji
/// and a URL (which the page writes with `\u002F`).
pub const PUBLIC_USER: SampleUser = SampleUser {
    unique_id: "sunny.kitchen.lab",
    id: "7000000000000000001",
    sec_uid: "MS4wLjABAAAAinventedSecUidSunnyKitchenLab0001",
    nickname: "Sunny Kitchen Lab \u{1F34B}",
    signature: "Kitchen experiments &amp; food science \u{1F34B}\n\"Taste first, measure later\"\nhttps://sunny-kitchen.example/links",
    verified: true,
    private: false,
    open_favorite: false,
    follower_count: Some(12_345_678),
    following_count: Some(321),
    heart_count: Some(2_987_654_321),
    video_count: Some(1_042),
    digg_count: Some(8_765),
};

/// A private account (status 10222): the page gives some counts and leaves others out.
pub const PRIVATE_USER: SampleUser = SampleUser {
    unique_id: "quiet.fox_22",
    id: "7000000000000000002",
    sec_uid: "MS4wLjABAAAAinventedSecUidQuietFox00000000002",
    nickname: "Quiet Fox",
    signature: "Friends only.",
    verified: false,
    private: true,
    open_favorite: false,
    follower_count: Some(87),
    following_count: Some(112),
    heart_count: Some(1_234),
    video_count: None,
    digg_count: None,
};

/// A small public account whose counts need no rounding.
pub const SMALL_USER: SampleUser = SampleUser {
    unique_id: "tiny.baker_7",
    id: "7000000000000000003",
    sec_uid: "MS4wLjABAAAAinventedSecUidTinyBaker0000000003",
    nickname: "Tiny Baker",
    signature: "Sourdough every Sunday.\nDMs open <3",
    verified: false,
    private: false,
    open_favorite: true,
    follower_count: Some(4_321),
    following_count: Some(210),
    heart_count: Some(56_789),
    video_count: Some(64),
    digg_count: Some(1_200),
};

/// A name the sample upstream answers with a not-found page (status 10221).
pub const NOT_FOUND_USER: &str = "no_such_user_404";

/// Every sample account that has a profile, for tests that loop over them.
pub fn sample_users() -> Vec<SampleUser> {
    vec![PUBLIC_USER, PRIVATE_USER, SMALL_USER]
}

/// The sample account called `name` (case-insensitively), for a demo upstream's routing.
pub fn sample_user(name: &str) -> Option<SampleUser> {
    sample_users()
        .into_iter()
        .find(|u| u.unique_id.eq_ignore_ascii_case(name))
}

/// The body the service must return for `user`, whatever the era of the page it read.
pub fn expected_body(user: &SampleUser) -> ShortVideoProfile {
    ShortVideoProfile {
        user_info: ShortVideoUserInfo {
            user: ShortVideoUser {
                id: user.id.into(),
                unique_id: user.unique_id.into(),
                nickname: user.nickname.into(),
                signature: user.signature.into(),
                verified: user.verified,
                private_account: user.private,
                avatar_thumb: avatar(user, 100),
                avatar_medium: avatar(user, 720),
                avatar_larger: avatar(user, 1080),
                sec_uid: user.sec_uid.into(),
                relation: 0,
                open_favorite: user.open_favorite,
            },
            stats: ShortVideoStats {
                follower_count: user.follower_count,
                following_count: user.following_count,
                heart: user.heart_count,
                heart_count: user.heart_count,
                video_count: user.video_count,
                digg_count: user.digg_count,
            },
        },
    }
}

/// The three ways the platform has embedded its state in a profile page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Era {
    /// `<script id="__UNIVERSAL_DATA_FOR_REHYDRATION__">` (2023 on), with exact `statsV2`.
    Universal,
    /// `<script id="SIGI_STATE">` (about late 2021 to early 2024).
    Sigi,
    /// `<script id="__NEXT_DATA__">` (to late 2021).
    NextData,
}

impl Era {
    /// All eras, for tests that loop over them.
    pub const ALL: [Era; 3] = [Era::Universal, Era::Sigi, Era::NextData];
}

/// A full profile page for `user` in `era`, padded with realistic noise to about
/// `target_size` bytes (the state JSON is about three quarters of it, as on real pages).
///
/// Universal pages carry rounded `stats` plus exact `statsV2`; the older eras had no exact
/// spelling, so their `stats` hold the exact numbers (with `heartCount` overflowed to a
/// negative int32 where the count is that big). Every era yields [`expected_body`].
pub fn profile_page(era: Era, user: &SampleUser, target_size: usize) -> String {
    let status = if user.private { 10222 } else { 0 };
    page(era, Subject::User(user), status, target_size)
}

/// A not-found page for `requested` in `era` (status 10221; 10202 in the `__NEXT_DATA__` era,
/// with `serverCode` 404), carrying suggested other users.
pub fn not_found_page(era: Era, requested: &str) -> String {
    let status = if era == Era::NextData { 10202 } else { 10221 };
    page(era, Subject::Missing(requested), status, DEFAULT_PAGE_SIZE)
}

/// A current-era page whose user-detail says only `code` (10000 is the captcha), without a
/// user: for the status codes that are not profiles.
pub fn status_page(code: i64) -> String {
    page(
        Era::Universal,
        Subject::Missing("status.sample"),
        code,
        48 * 1024,
    )
}

/// A current-era app shell: the app context is there, the user-detail is not (a soft block).
pub fn shell_page() -> String {
    page(Era::Universal, Subject::Shell, 0, 48 * 1024)
}

/// Name of the optional second cookie on [`waf_challenge_page`].
const WAF_SECOND_COOKIE: (&str, &str) = ("waf_rci_sample", "invented-rs-value");

/// The WAF proof-of-work page ("Please wait…") whose answer is `answer`.
pub fn waf_challenge_page(answer: u32) -> String {
    let (prefix, digest) = waf_puzzle(answer);
    let json = format!(
        r#"{{"v":{{"a":"{}","b":"4","c":"{}"}},"s":"invented-waf-signature","e":1700000000}}"#,
        STANDARD.encode(&prefix),
        STANDARD.encode(digest)
    );
    let (rci, rs) = WAF_SECOND_COOKIE;
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Please wait...</title>\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <style>html,body{{margin:0;height:100%}}body{{display:flex;align-items:center;\
         justify-content:center;font-family:-apple-system,BlinkMacSystemFont,sans-serif;color:#555}}\
         .box{{text-align:center}}.spinner{{width:32px;height:32px;margin:0 auto 12px;\
         border:3px solid #ddd;border-top-color:#fe2c55;border-radius:50%;\
         animation:spin 1s linear infinite}}@keyframes spin{{to{{transform:rotate(360deg)}}}}\
         </style></head>\
         <body><div class=\"box\"><div class=\"spinner\"></div><p>Please wait...</p>\
         <noscript>Enable JavaScript to continue.</noscript></div>\
         <p style=\"display:none\" id=\"cs\" class=\"{}\"></p>\
         <p id='wci' class='_wafchallengeid' style='display:none'></p>\
         <p class=\"{rci}\" id=\"rci\" hidden></p><p id=rs class={rs} hidden></p>\
         <script>/* invented stand-in for the platform's solver */\
         (function(){{function v(id){{var e=document.getElementById(id);return e?e.className:\"\"}}\
         var cs=v(\"cs\"),name=v(\"wci\")||\"_wafchallengeid\";\
         if(!cs){{return}}var started=Date.now();\
         function done(value){{document.cookie=name+\"=\"+value+\";path=/;max-age=600\";\
         setTimeout(function(){{location.reload()}},Math.max(0,800-(Date.now()-started)))}}\
         window.__sampleWaf={{cs:cs,name:name,done:done}};}})();</script></body></html>",
        STANDARD_NO_PAD.encode(json)
    )
}

/// Whether `cookie_header` (a request's `Cookie:` value) carries the solution of
/// [`waf_challenge_page`]`(answer)` and its second cookie: so a loopback upstream can check
/// the service's solver end to end.
pub fn waf_cookie_is_valid(cookie_header: &str, answer: u32) -> bool {
    let cookie = |name: &str| {
        cookie_header
            .split(';')
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    };
    let (rci, rs) = WAF_SECOND_COOKIE;
    if cookie(rci) != Some(rs) {
        return false;
    }
    let Some(json) = cookie("_wafchallengeid")
        .and_then(|v| STANDARD_PAD_INDIFFERENT.decode(v).ok())
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    else {
        return false;
    };
    let (prefix, digest) = waf_puzzle(answer);
    json["d"] == STANDARD.encode(answer.to_string())
        && json["v"]["a"] == STANDARD.encode(prefix)
        && json["v"]["c"] == STANDARD.encode(digest)
        && json["s"] == "invented-waf-signature"
}

/// The prefix and target digest of the sample puzzle with answer `answer`.
fn waf_puzzle(answer: u32) -> (Vec<u8>, Vec<u8>) {
    let prefix = format!("sample-waf-{answer:08x}-").into_bytes();
    let digest = Sha256::new()
        .chain_update(&prefix)
        .chain_update(answer.to_string())
        .finalize()
        .to_vec();
    (prefix, digest)
}

/// Whose page it is.
#[derive(Clone, Copy)]
enum Subject<'a> {
    User(&'a SampleUser),
    Missing(&'a str),
    Shell,
}

impl Subject<'_> {
    fn name(&self) -> &str {
        match self {
            Subject::User(u) => u.unique_id,
            Subject::Missing(name) => name,
            Subject::Shell => "",
        }
    }
}

/// Other people (invented) who appear on every page as suggestions: decoys for the extractor.
/// (uniqueId, id, nickname, followers)
const SUGGESTED: [(&str, &str, &str, u64); 4] = [
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

fn avatar(user: &SampleUser, size: u32) -> String {
    format!(
        "https://avatars.short-video.example/tos-avt/{}~c5_{size}x{size}.jpeg?x-expires=1700000000&x-signature=InVeNtEd{size}%2Bsig%3D",
        user.id
    )
}

/// Appends `s` as a JSON string the way the platform writes it: `/` as `\u002F`, `<` as
/// `\u003C`, and (in the `__NEXT_DATA__` era) `&` as `\u0026`; everything else raw UTF-8.
fn push_str_json(out: &mut String, s: &str, era: Era) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '/' => out.push_str("\\u002F"),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' if era == Era::NextData => out.push_str("\\u0026"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends `"key":"value",` with `value` JSON-escaped.
fn field(out: &mut String, key: &str, value: &str, era: Era) {
    let _ = write!(out, "\"{key}\":");
    push_str_json(out, value, era);
    out.push(',');
}

/// The platform's `user` object (with the many fields the body does not return).
fn user_json(out: &mut String, u: &SampleUser, era: Era) {
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
        r#""createTime":1600000000,"verified":{},"secUid":"{}","ftc":false,"relation":0,"openFavorite":{},"#,
        u.verified, u.sec_uid, u.open_favorite
    );
    out.push_str(r#""bioLink":{"link":"links.example\u002Fsample","risk":0},"#);
    let _ = write!(
        out,
        r#""commentSetting":0,"commerceUserInfo":{{"commerceUser":false}},"duetSetting":0,"stitchSetting":0,"privateAccount":{},"secret":false,"isADVirtual":false,"roomId":"","uniqueIdModifyTime":0,"ttSeller":false,"region":"US","profileTab":{{"showMusicTab":false,"showQuestionTab":true,"showPlayListTab":true}},"followingVisibility":1,"language":"en","eventList":[],"isOrganization":0,"UserStoryStatus":0}}"#,
        u.private
    );
}

/// Three significant digits, truncated, as the platform rounds `stats` on big accounts.
fn rounded(n: u64) -> u64 {
    let mut unit = 1;
    while n / unit >= 1000 {
        unit *= 10;
    }
    n / unit * unit
}

/// `n` as the platform's int32 `heartCount` shows it (negative once past `i32::MAX`).
fn as_int32(n: u64) -> i64 {
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

/// The exact `statsV2` object of decimal strings.
fn stats_v2_json(out: &mut String, u: &SampleUser) {
    let parts: Vec<String> = [
        ("followerCount", u.follower_count),
        ("followingCount", u.following_count),
        ("heart", u.heart_count),
        ("heartCount", u.heart_count),
        ("videoCount", u.video_count),
        ("diggCount", u.digg_count),
    ]
    .iter()
    .filter_map(|(k, v)| v.map(|v| format!("\"{k}\":\"{v}\"")))
    .collect();
    let _ = write!(out, "{{{},\"friendCount\":\"3\"}}", parts.join(","));
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
    }
}

/// `{"user":{…},"stats":{…}}` of the `i`-th suggested user.
fn suggested_json(out: &mut String, i: usize, era: Era) {
    let decoy = suggested(i);
    out.push_str(r#"{"user":"#);
    user_json(out, &decoy, era);
    out.push_str(r#","stats":"#);
    stats_json(out, &decoy, false);
    out.push('}');
}

/// Video items until `out` is `until` bytes long: the bulk of a real state.
fn items(out: &mut String, author: &str, until: usize, era: Era, keyed: bool) {
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

/// The state JSON of `era` for `subject`, grown to about `budget` bytes.
fn state_json(era: Era, subject: Subject<'_>, status: i64, budget: usize) -> String {
    let mut s = String::with_capacity(budget + 8192);
    let name = subject.name();
    match era {
        Era::Universal => {
            s.push_str(r#"{"__DEFAULT_SCOPE__":{"webapp.app-context":{"language":"en","region":"US","appId":1233,"user":{},"wid":"7000000000000000777","nonce":"invented","botType":"others","host":"www.short-video.example","abTestVersion":{"versionName":"70000001,70000002","parameters":{"sample_flag":{"vid":"v1"}}}},"webapp.biz-context":{"isMobile":false,"teaCommonParam":{"page_name":"user"}},"#);
            match subject {
                Subject::Shell => {}
                Subject::User(u) => {
                    s.push_str(r#""webapp.user-detail":{"userInfo":{"user":"#);
                    user_json(&mut s, u, era);
                    s.push_str(r#","stats":"#);
                    // Rounded only where the exact statsV2 sits beside it.
                    stats_json(&mut s, u, !u.private);
                    if !u.private {
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
                if let Subject::User(u) = subject {
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
            if let Subject::User(u) = subject {
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

/// The opening `<script …>` tag of `era`'s state, in that era's attribute order and quoting.
fn state_open_tag(era: Era) -> &'static str {
    match era {
        Era::Universal => {
            r#"<script type="application/json" id="__UNIVERSAL_DATA_FOR_REHYDRATION__">"#
        }
        Era::Sigi => "<script id=\"SIGI_STATE\"\n            type=\"application/json\">",
        Era::NextData => {
            r#"<script crossorigin='anonymous' type=application/json id='__NEXT_DATA__'>"#
        }
    }
}

fn state_id(era: Era) -> &'static str {
    match era {
        Era::Universal => "__UNIVERSAL_DATA_FOR_REHYDRATION__",
        Era::Sigi => "SIGI_STATE",
        Era::NextData => "__NEXT_DATA__",
    }
}

/// A whole page around the state, padded with CSS and markup to about `target` bytes.
fn page(era: Era, subject: Subject<'_>, status: i64, target: usize) -> String {
    let state = state_json(era, subject, status, target * 3 / 4);
    let id = state_id(era);
    let name = subject.name();
    let mut head = String::with_capacity(8192);
    let _ = write!(
        head,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>@{name} | Short Video (sample)</title>\
         <meta property=\"og:title\" content=\"@{name} &amp; friends\">\
         <link rel=\"stylesheet\" href=\"/static/app.css\">"
    );
    head.push('\n');
    // Inline scripts that mention the state's id, and a fake state inside a JS string.
    let _ = write!(
        head,
        "<script nonce=\"sample\">window.__boot={{t:Date.now()}};\
         var st=document.getElementById(\"{id}\");\
         var tpl='<script id=\"{id}\" type=\"application/json\">{{\"statusCode\":10221}}</'+'script>';\
         if(st&&st.textContent.indexOf('\"{id}\"')<0){{window.__ok=1}}</script>\n\
         <!-- <script id=\"{id}\">{{\"__DEFAULT_SCOPE__\":{{}}}}</script> -->\n"
    );
    head.push_str("<script type=\"application/json\" id=\"suggested-accounts\">{\"userList\":[");
    for i in 0..SUGGESTED.len() {
        if i > 0 {
            head.push(',');
        }
        suggested_json(&mut head, i, era);
    }
    head.push_str("]}</script>\n");

    let mut tail = String::with_capacity(1024);
    if era == Era::Sigi {
        tail.push_str("<script id=\"SIGI_RETRY\" type=\"application/json\">{\"UserModule\":[\"getUserDetail\"]}</script>\n");
    }
    let _ = write!(
        tail,
        "<script src=\"/static/app.js\" async></script>\
         <script>window.addEventListener('load',function(){{\
         JSON.parse(document.getElementById('{id}').textContent)}})</script>\n</body></html>\n"
    );

    let fixed = head.len() + state.len() + tail.len() + 200;
    let noise = target.saturating_sub(fixed);
    let mut html = String::with_capacity(fixed + noise + 2048);
    html.push_str(&head);
    html.push_str("<style>");
    css(&mut html, noise * 2 / 5);
    html.push_str("</style></head><body>\n<div id=\"app\">");
    markup(&mut html, noise - noise * 2 / 5);
    html.push_str("</div>\n<div style=\"display:none\">");
    html.push_str(state_open_tag(era));
    html.push_str(&state);
    html.push_str("</script></div>\n");
    html.push_str(&tail);
    html
}

/// CSS rules until `out` has grown by `budget` bytes.
fn css(out: &mut String, budget: usize) {
    let end = out.len() + budget;
    let mut i = 0u32;
    while out.len() < end {
        let _ = write!(
            out,
            ".css-{i:x}-DivContainer{{display:flex;align-items:center;padding:{}px {}px;color:rgba(22,24,35,.{});}}\
             .css-{i:x}-SpanText:hover>a[href^=\"/@\"]{{text-decoration:underline}}",
            i % 24,
            i % 16,
            i % 9 + 1
        );
        out.push('\n');
        i += 1;
    }
}

/// Profile-grid markup (tags with attributes in varied order) until `out` grew by `budget`.
fn markup(out: &mut String, budget: usize) {
    let end = out.len() + budget;
    let mut i = 0u32;
    while out.len() < end {
        let _ = write!(
            out,
            "<div data-e2e=\"user-post-item\" class=\"css-{i:x}-DivItem\"><a href=\"/@sample/video/{i}\" \
             tabindex='-1'><img alt=\"clip {i} &amp; more\" loading=lazy src=\"/img/{i}.jpeg\"></a>\
             <strong class=css-{i:x}-Strong data-e2e=video-views>{}K</strong></div>",
            i % 900 + 1
        );
        out.push('\n');
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::short_video::challenge;

    #[test]
    fn rounding_and_overflow_look_like_the_platform() {
        assert_eq!(rounded(12_345_678), 12_300_000);
        assert_eq!(rounded(4_001_943), 4_000_000);
        assert_eq!(rounded(321), 321);
        assert_eq!(as_int32(2_987_654_321), -1_307_312_975);
        assert_eq!(as_int32(56_789), 56_789);
    }

    #[test]
    fn pages_are_about_the_requested_size_and_deterministic() {
        for era in Era::ALL {
            for size in [DEFAULT_PAGE_SIZE, BENCH_PAGE_SIZE] {
                let page = profile_page(era, &PUBLIC_USER, size);
                let ratio = page.len() as f64 / size as f64;
                assert!(
                    (0.95..1.1).contains(&ratio),
                    "{era:?} {size}: {}",
                    page.len()
                );
            }
            assert_eq!(
                profile_page(era, &SMALL_USER, 50_000),
                profile_page(era, &SMALL_USER, 50_000)
            );
        }
    }

    #[test]
    fn state_scripts_are_valid_json() {
        for era in Era::ALL {
            for page in [
                profile_page(era, &PUBLIC_USER, 60_000),
                profile_page(era, &PRIVATE_USER, 60_000),
                not_found_page(era, NOT_FOUND_USER),
            ] {
                let text = crate::html::script_by_id(page.as_bytes(), state_id(era)).unwrap();
                serde_json::from_slice::<serde_json::Value>(text).unwrap();
            }
        }
        for page in [status_page(10000), shell_page()] {
            let text = crate::html::script_by_id(page.as_bytes(), state_id(Era::Universal));
            serde_json::from_slice::<serde_json::Value>(text.unwrap()).unwrap();
        }
    }

    #[test]
    fn the_bio_is_written_like_the_platform_writes_it() {
        let page = profile_page(Era::Universal, &PUBLIC_USER, 60_000);
        assert!(page.contains(r#"Kitchen experiments &amp; food science"#));
        assert!(page.contains(r#"\"Taste first"#));
        assert!(page.contains(r#"https:\u002F\u002Fsunny-kitchen.example\u002Flinks"#));
    }

    #[test]
    fn the_waf_page_round_trips_through_the_solver() {
        let page = waf_challenge_page(4_321);
        assert!((1_200..2_048).contains(&page.len()), "{}", page.len());
        let ch = challenge::detect(page.as_bytes()).unwrap();
        let cookies = challenge::solve(&ch, challenge::MAX_ANSWER).unwrap();
        let header = cookies
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        assert!(waf_cookie_is_valid(&header, 4_321));
        assert!(!waf_cookie_is_valid(&header, 4_322));
        assert!(!waf_cookie_is_valid("_wafchallengeid=e30", 4_321));
        assert!(!waf_cookie_is_valid("", 4_321));
    }
}
