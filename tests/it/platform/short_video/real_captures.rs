//! Real third-party captures (read from `../shared/fixtures/real`, never copied here) through
//! the short-video extractor: one test per capture, each skipped with a notice when the
//! fixture folder is absent.

use crate::support::{capture, short_video_name as name};
use profile_lookup::platform::Reading;
use profile_lookup::platform::short_video::extract::extract;
use profile_lookup::platform::short_video::{ShortVideoProfile, ShortVideoStats};

fn profile(page: &[u8], requested: &str) -> ShortVideoProfile {
    match extract(page, &name(requested)) {
        Reading::Found(p) => p,
        other => panic!("expected a profile for {requested}, got {other:?}"),
    }
}

/// Embeds a `userInfo` object the way current pages do: in the user-detail scope of the
/// rehydration script, with `/` and `<` written as `\u002F` and `\u003C`.
fn universal_page(user_detail: &str) -> Vec<u8> {
    let state = format!(
        r#"{{"__DEFAULT_SCOPE__":{{"webapp.app-context":{{"language":"en"}},"webapp.user-detail":{user_detail}}}}}"#
    );
    let state = state.replace('/', "\\u002F").replace('<', "\\u003C");
    format!(
        "<!DOCTYPE html><html><head><script>document.getElementById(\"__UNIVERSAL_DATA_FOR_REHYDRATION__\")</script></head>\
         <body><script id=\"__UNIVERSAL_DATA_FOR_REHYDRATION__\" type=\"application/json\">{state}</script></body></html>"
    )
    .into_bytes()
}

/// The single `userInfo` object of a `user_detail_userInfo_*.json` capture, wrapped in a page.
fn wrapped_user_info(rel: &str) -> Option<Vec<u8>> {
    let bytes = capture(rel)?;
    let mut array: Vec<serde_json::Value> = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(array.len(), 1, "{rel} holds one userInfo");
    let info = serde_json::to_string(&array.remove(0)).unwrap();
    Some(universal_page(&format!(
        r#"{{"userInfo":{info},"statusCode":0,"statusMsg":""}}"#
    )))
}

/// The counts of `s` by name, as the assertions below list them.
#[derive(Debug, PartialEq)]
struct Counts {
    followers: Option<u64>,
    following: Option<u64>,
    likes: Option<u64>,
    videos: Option<u64>,
    diggs: Option<u64>,
}

fn counts(s: &ShortVideoStats) -> Counts {
    Counts {
        followers: s.follower_count,
        following: s.following_count,
        likes: s.heart,
        videos: s.video_count,
        diggs: s.digg_count,
    }
}

/// The counts given, each `Some`.
fn some(followers: u64, following: u64, likes: u64, videos: u64, diggs: u64) -> Counts {
    Counts {
        followers: Some(followers),
        following: Some(following),
        likes: Some(likes),
        videos: Some(videos),
        diggs: Some(diggs),
    }
}

fn assert_clean_urls(p: &ShortVideoProfile) {
    let u = &p.user_info.user;
    for url in [&u.avatar_thumb, &u.avatar_medium, &u.avatar_larger] {
        assert!(url.starts_with("https://"), "{url}");
        assert!(
            !url.contains("\\u002F") && !url.contains("\\u0026"),
            "{url}"
        );
    }
}

#[test]
fn next_data_2021() {
    let Some(page) = capture("tiktok/next_data_profile_script_2021-01_tiktok.html") else {
        return;
    };
    let p = profile(&page, "TikTok");
    let (u, s) = (&p.user_info.user, &p.user_info.stats);
    assert_eq!(u.unique_id, "tiktok");
    assert_eq!(u.id, "107955");
    assert_eq!(u.nickname, "TikTok");
    assert_eq!(u.signature, "It Starts On TikTok");
    assert!(u.verified && !u.private_account);
    // Captured logged in: the viewer relation shows, and the viewer's own $user is ignored.
    assert_eq!(u.relation, 1);
    assert!(
        u.avatar_larger
            .contains("c5_1080x1080.jpeg?x-expires=1610028000&x-signature=")
    );
    assert_eq!(counts(s), some(50_100_000, 496, 246_000_000, 118, 53));
    assert_eq!(s.heart_count, s.heart);
    assert_clean_urls(&p);
}

#[test]
fn sigi_state_2022() {
    let Some(page) = capture("tiktok/sigi_state_profile_page_2022_huxleythepandapuppy.html") else {
        return;
    };
    let p = profile(&page, "huxleythepandapuppy");
    let (u, s) = (&p.user_info.user, &p.user_info.stats);
    assert_eq!(u.unique_id, "huxleythepandapuppy");
    assert_eq!(u.id, "19994247");
    assert_eq!(
        u.nickname,
        "Huxley the Panda Puppy\u{1F43C}\u{1F436}(pandaloon"
    );
    assert!(u.signature.starts_with("DMs on IG, CEO of Pandaloon"));
    assert!(u.verified && !u.private_account);
    assert_eq!(
        u.sec_uid,
        "MS4wLjABAAAAVIlLAiK6H4ql_MNeXY30sFjwn1ikgGKasDbBF04-XbY"
    );
    assert_eq!(counts(s), some(6_200_000, 563, 108_500_000, 767, 0));
    assert_eq!(s.heart_count, s.heart);
    assert_clean_urls(&p);
    // The same page read for anyone else is not their profile.
    assert!(!matches!(
        extract(&page, &name("tiktok")),
        Reading::Found(_)
    ));
}

#[test]
fn user_detail_2024_without_stats_v2() {
    let Some(page) =
        wrapped_user_info("tiktok/user_detail_userInfo_2024-02_oddanimalspecimens.json")
    else {
        return;
    };
    let p = profile(&page, "oddanimalspecimens");
    let (u, s) = (&p.user_info.user, &p.user_info.stats);
    assert_eq!(u.id, "6976999329680589829");
    assert_eq!(u.nickname, "Odd Animal Specimens");
    assert!(u.signature.contains('\n'));
    assert_eq!(counts(s), some(2_600_000, 6, 44_600_000, 124, 0));
    assert_clean_urls(&p);
}

#[test]
fn user_detail_2026_exact_stats_v2_wins() {
    let Some(page) =
        wrapped_user_info("tiktok/user_detail_userInfo_2026-01_oddanimalspecimens.json")
    else {
        return;
    };
    assert!(
        String::from_utf8_lossy(&page).contains("\\u002F"),
        "embedded like the platform"
    );
    let p = profile(&page, "OddAnimalSpecimens");
    let (u, s) = (&p.user_info.user, &p.user_info.stats);
    assert_eq!(u.unique_id, "oddanimalspecimens");
    assert_eq!(u.id, "6976999329680589829");
    assert!(!u.verified && !u.private_account);
    // stats says 4000000 and 77600000; statsV2 says "4001943" and "77615151".
    assert_eq!(counts(s), some(4_001_943, 9, 77_615_151, 178, 0));
    assert_eq!(s.heart_count, s.heart);
    assert_clean_urls(&p);
}

#[test]
fn quoted_api_not_found_2024() {
    let Some(bytes) = capture("quoted/tiktok_api_user_detail_not_found_2024-06.txt") else {
        return;
    };
    // The quote is not valid JSON as a whole; take its statusCode and userInfo as they are.
    let text = String::from_utf8(bytes).unwrap();
    let code: i64 = text
        .split("\"statusCode\":")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|digits| digits.trim().parse().ok())
        .expect("a statusCode");
    assert_eq!(code, 10221);
    assert!(text.contains(r#""userInfo":{}"#));
    let page = universal_page(&format!(
        r#"{{"userInfo":{{}},"statusCode":{code},"statusMsg":""}}"#
    ));
    assert_eq!(
        extract(&page, &name("some_missing_user")),
        Reading::NotFound
    );
}
