//! The current era (2023 on): `<script id="__UNIVERSAL_DATA_FOR_REHYDRATION__">` holding
//! `{"__DEFAULT_SCOPE__": {"webapp.app-context": …, "webapp.user-detail": {"statusCode": …,
//! "statusMsg": …, "userInfo": {"user": …, "stats": …, "statsV2": …}}, …}}`.

use serde::Deserialize;

#[cfg(test)]
use super::ShortVideoProfile;
use super::user_json::{self, Found, Said, UserInfo};
use crate::json_skim;
#[cfg(test)]
use crate::platform::Reading;
use crate::username::Subject;

/// The id of this era's state script.
pub(super) const SCRIPT_ID: &[u8] = b"__UNIVERSAL_DATA_FOR_REHYDRATION__";

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UserDetail<'a> {
    status_code: Option<i64>,
    #[serde(borrow)]
    user_info: Option<UserInfo<'a>>,
}

/// Reads the text of the `__UNIVERSAL_DATA_FOR_REHYDRATION__` script.
///
/// The state is hundreds of kilobytes of which `webapp.user-detail` is a small part: the
/// levels above it are skimmed ([`json_skim`]), reading stops once the members we need are
/// found, and only `webapp.user-detail` is deserialised (and so checked to be UTF-8: bytes in
/// members never read cannot reach the answer).
pub(super) fn said(text: &[u8], requested: Subject<'_>) -> Said {
    let scope = match json_skim::descend(text, "__DEFAULT_SCOPE__") {
        Ok(Some(scope)) => scope,
        Ok(None) => {
            return Said::Broken("the state has no __DEFAULT_SCOPE__".into());
        }
        Err(e) => return Said::Broken(format!("the state is not readable JSON: {e}")),
    };
    let (detail, app_context) =
        match json_skim::members(scope, ["webapp.user-detail", "webapp.app-context"]) {
            Ok([detail, app_context]) => (detail, app_context),
            Err(e) => {
                return Said::Broken(format!("__DEFAULT_SCOPE__ is not readable: {e}"));
            }
        };
    let detail: Option<UserDetail> = match detail.map(user_json::parse).transpose() {
        Ok(detail) => detail.flatten(),
        Err(why) => return Said::Broken(why),
    };
    let Some(detail) = detail else {
        // The app shell renders without the user: the platform withheld the data.
        return match app_context {
            Some(_) => Said::AppOnly,
            None => Said::Broken("the state has no webapp.user-detail".into()),
        };
    };
    let found = Found::from_user_info(detail.status_code, detail.user_info);
    user_json::said(found, requested)
}

/// [`said`] as the reading of a page holding only this state.
#[cfg(test)]
fn read(text: &[u8], requested: Subject<'_>) -> Reading<ShortVideoProfile> {
    said(text, requested).into_reading()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;
    use crate::username::Username;

    fn name(s: &str) -> Username {
        Username::parse(Platform::ShortVideo, s).unwrap()
    }

    fn detail(inner: &str) -> String {
        format!(
            r#"{{"__DEFAULT_SCOPE__":{{"webapp.app-context":{{"region":"US"}},"webapp.user-detail":{inner}}}}}"#
        )
    }

    const USER: &str = r#"{"id":"1","uniqueId":"Mixed.Case","nickname":"N","signature":"a &amp; b \u002F \"q\"","verified":true,"secUid":"S","relation":0,"openFavorite":true,"privateAccount":false,"avatarThumb":"https:\u002F\u002Fcdn.example\u002Ft.jpg","extra":{"deep":[[[]]]}}"#;

    #[test]
    fn reads_user_and_exact_stats() {
        let text = detail(&format!(
            r#"{{"statusCode":0,"statusMsg":"","userInfo":{{"user":{USER},"stats":{{"followerCount":4000000,"heart":77600000,"heartCount":-5,"videoCount":1}},"statsV2":{{"followerCount":"4001943","heartCount":"77615151"}}}}}}"#
        ));
        let Reading::Found(p) = read(text.as_bytes(), (&name("mixed.case")).into()) else {
            panic!("not a profile");
        };
        let u = &p.user_info.user;
        assert_eq!(u.unique_id, "Mixed.Case");
        assert_eq!(u.signature, "a &amp; b / \"q\"");
        assert_eq!(u.avatar_thumb, "https://cdn.example/t.jpg");
        assert_eq!(u.avatar_larger, "");
        assert!(u.verified && u.open_favorite && !u.private_account);
        let s = &p.user_info.stats;
        assert_eq!(s.follower_count, Some(4_001_943));
        assert_eq!(s.heart, Some(77_600_000));
        assert_eq!(s.heart_count, Some(77_615_151));
        assert_eq!(s.video_count, Some(1));
        assert_eq!(s.digg_count, None);
    }

    #[test]
    fn maps_status_codes() {
        let cases: [(i64, Reading<ShortVideoProfile>); 6] = [
            (10221, Reading::NotFound),
            (10202, Reading::NotFound),
            (10000, Reading::blocked("captcha")),
            (10113, Reading::blocked("captcha")),
            (10114, Reading::blocked("captcha")),
            (10101, Reading::Unreadable(String::new())),
        ];
        for (code, want) in cases {
            let text = detail(&format!(
                r#"{{"statusCode":{code},"statusMsg":"m","userInfo":{{}}}}"#
            ));
            let got = read(text.as_bytes(), (&name("mixed.case")).into());
            match (&got, &want) {
                (Reading::Unreadable(why), Reading::Unreadable(_)) => {
                    assert!(why.contains(&code.to_string()), "{why}")
                }
                _ => assert_eq!(got, want, "{code}"),
            }
        }
    }

    #[test]
    fn private_accounts_are_profiles_with_limited_counts() {
        let text = detail(&format!(
            r#"{{"statusCode":10222,"userInfo":{{"user":{USER},"stats":{{"followerCount":12}}}}}}"#
        ));
        let Reading::Found(p) = read(text.as_bytes(), (&name("MIXED.case")).into()) else {
            panic!("not a profile");
        };
        assert!(p.user_info.user.private_account);
        assert_eq!(p.user_info.stats.follower_count, Some(12));
        assert_eq!(p.user_info.stats.video_count, None);
    }

    #[test]
    fn a_public_profile_without_a_follower_count_is_unreadable_a_private_one_is_not() {
        // Never a 200 with `null` followers for a public account: the count moved.
        let renamed = detail(&format!(
            r#"{{"statusCode":0,"userInfo":{{"user":{USER},"stats":{{"fansTotal":5,"heart":3}}}}}}"#
        ));
        assert!(matches!(
            read(renamed.as_bytes(), (&name("mixed.case")).into()),
            Reading::Unreadable(why) if why.contains("follower count")
        ));
        let no_stats = detail(&format!(
            r#"{{"statusCode":0,"userInfo":{{"user":{USER}}}}}"#
        ));
        assert!(matches!(
            read(no_stats.as_bytes(), (&name("mixed.case")).into()),
            Reading::Unreadable(_)
        ));
        // A private account's limited view may withhold it: `null`.
        let private = detail(&format!(
            r#"{{"statusCode":10222,"userInfo":{{"user":{USER},"stats":{{"heart":3}}}}}}"#
        ));
        let Reading::Found(p) = read(private.as_bytes(), (&name("mixed.case")).into()) else {
            panic!("a private profile");
        };
        assert_eq!(p.user_info.stats.follower_count, None);
    }

    #[test]
    fn no_count_is_negative_a_wrapped_total_comes_from_its_sibling_else_unwrapped() {
        let stats = |stats: &str| {
            let text = detail(&format!(
                r#"{{"statusCode":0,"userInfo":{{"user":{USER},{stats}}}}}"#
            ));
            match read(text.as_bytes(), (&name("mixed.case")).into()) {
                Reading::Found(p) => p.user_info.stats,
                other => panic!("{other:?} for {stats}"),
            }
        };
        // The sibling spelling is exact: it is taken.
        let s = stats(r#""stats":{"followerCount":5,"heart":3000000000,"heartCount":-1294967296}"#);
        assert_eq!(
            (s.heart, s.heart_count),
            (Some(3_000_000_000), Some(3_000_000_000))
        );
        // No sibling: the total is unwrapped (+2^32).
        let s = stats(r#""stats":{"followerCount":5,"heartCount":-1625611536}"#);
        assert_eq!((s.heart, s.heart_count), (None, Some(2_669_355_760)));
        let s = stats(r#""stats":{"followerCount":-2000000000,"videoCount":-1}"#);
        assert_eq!(s.follower_count, Some(2_294_967_296));
        assert_eq!(s.video_count, Some(4_294_967_295));
        // The exact spelling wins over a wrapped one.
        let s = stats(
            r#""stats":{"followerCount":-1294967296},"statsV2":{"followerCount":"3000000001"}"#,
        );
        assert_eq!(s.follower_count, Some(3_000_000_001));
        // Below i32::MIN it was never a 32-bit total: no count.
        let s = stats(r#""stats":{"followerCount":1,"heartCount":-2147483649}"#);
        assert_eq!(s.heart_count, None);
    }

    #[test]
    fn a_profile_shown_only_to_logged_in_viewers_is_restricted() {
        // 209002: audience controls or an age gate (reported to us for 2026-09), with or
        // without the user in the state, whoever is asked for.
        for info in [format!(r#"{{"user":{USER}}}"#), "{}".to_owned()] {
            let text = detail(&format!(
                r#"{{"statusCode":209002,"statusMsg":"","userInfo":{info}}}"#
            ));
            for who in ["mixed.case", "someone.else"] {
                assert_eq!(
                    read(text.as_bytes(), (&name(who)).into()),
                    Reading::Restricted,
                    "{info} {who}"
                );
            }
        }
    }

    #[test]
    fn an_absent_sec_uid_is_empty() {
        let user = r#"{"id":"1","uniqueId":"no.sec","nickname":"N"}"#;
        let text = detail(&format!(
            r#"{{"statusCode":0,"userInfo":{{"user":{user},"stats":{{"followerCount":2}}}}}}"#
        ));
        let Reading::Found(p) = read(text.as_bytes(), (&name("no.sec")).into()) else {
            panic!("a profile");
        };
        assert_eq!(p.user_info.user.sec_uid, "");
        let body = serde_json::to_value(&p).unwrap();
        assert_eq!(body["userInfo"]["user"]["secUid"], "");
    }

    #[test]
    fn a_permission_code_is_a_private_profile() {
        // 10216: "no permission to view" (yt-dlp reads it beside 10222, private account).
        let text = detail(&format!(
            r#"{{"statusCode":10216,"userInfo":{{"user":{USER},"stats":{{"followerCount":12}}}}}}"#
        ));
        let Reading::Found(p) = read(text.as_bytes(), (&name("mixed.case")).into()) else {
            panic!("not a profile");
        };
        assert!(p.user_info.user.private_account);
        assert_eq!(p.user_info.stats.follower_count, Some(12));
        // Without the user it is no profile, and never a not-found.
        let bare = detail(r#"{"statusCode":10216,"userInfo":{}}"#);
        assert!(matches!(
            read(bare.as_bytes(), (&name("mixed.case")).into()),
            Reading::Unreadable(_)
        ));
    }

    #[test]
    fn refuses_another_user_and_missing_pieces() {
        let ok = detail(&format!(
            r#"{{"statusCode":0,"userInfo":{{"user":{USER}}}}}"#
        ));
        assert!(matches!(
            read(ok.as_bytes(), (&name("other")).into()),
            Reading::Unreadable(_)
        ));
        let no_user = detail(r#"{"statusCode":0,"userInfo":{}}"#);
        assert!(matches!(
            read(no_user.as_bytes(), (&name("x1")).into()),
            Reading::Unreadable(_)
        ));
        let no_code = detail(&format!(r#"{{"userInfo":{{"user":{USER}}}}}"#));
        assert!(matches!(
            read(no_code.as_bytes(), (&name("mixed.case")).into()),
            Reading::Unreadable(_)
        ));
        let empty = br#"{"other":1}"#;
        assert!(matches!(
            read(empty, (&name("x1")).into()),
            Reading::Unreadable(_)
        ));
    }

    #[test]
    fn an_app_shell_without_user_detail_is_a_block() {
        let shell = br#"{"__DEFAULT_SCOPE__":{"webapp.app-context":{"user":{}},"seo.abtest":{}}}"#;
        assert_eq!(
            read(shell, (&name("x1")).into()),
            Reading::blocked("shell_page")
        );
        let odd = br#"{"__DEFAULT_SCOPE__":{"seo.abtest":{}}}"#;
        assert!(matches!(
            read(odd, (&name("x1")).into()),
            Reading::Unreadable(_)
        ));
    }

    #[test]
    fn broken_text_is_unreadable() {
        let text = detail(&format!(
            r#"{{"statusCode":0,"userInfo":{{"user":{USER},"stats":{{"followerCount":1}}}}}}"#
        ));
        // `webapp.user-detail` is the scope's last member here: any cut into it is unreadable.
        let detail_end = text.len() - "}}".len();
        for cut in 0..detail_end {
            assert!(matches!(
                read(&text.as_bytes()[..cut], (&name("mixed.case")).into()),
                Reading::Unreadable(_)
            ));
        }
        // Reading stops once the members it needs are complete, so losing only the closing
        // braces after them does not lose the profile.
        for cut in detail_end..text.len() {
            assert!(matches!(
                read(&text.as_bytes()[..cut], (&name("mixed.case")).into()),
                Reading::Found(_)
            ));
        }
        // Invalid UTF-8 in the member that is read: refused.
        let mut bad = text.clone().into_bytes();
        let at = text.find("\"N\"").map_or(0, |i| i + 1);
        bad[at] = 0xff;
        assert!(matches!(
            read(&bad, (&name("mixed.case")).into()),
            Reading::Unreadable(_)
        ));
        // Invalid UTF-8 in a member that is never read cannot reach the answer: the profile
        // is still read.
        let mut elsewhere = text.clone().into_bytes();
        let at = text.find("\"US\"").map_or(0, |i| i + 1);
        elsewhere[at] = 0xff;
        assert!(matches!(
            read(&elsewhere, (&name("mixed.case")).into()),
            Reading::Found(_)
        ));
    }
}
