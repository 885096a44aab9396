//! The oldest era (to late 2021): `<script id="__NEXT_DATA__">` holding
//! `{"props": {"pageProps": {"serverCode": 200, "statusCode": 0, "uniqueId": …,
//! "userInfo": {"user": …, "stats": …}}, "initialProps": …}}`.
//!
//! `props.initialProps.$user` is the logged-in viewer on captured pages, never the profile.

use serde::Deserialize;

#[cfg(test)]
use super::ShortVideoProfile;
use super::user_json::{self, Found, Said, UserInfo};
use crate::platform::Reading;
use crate::platform::fields::Text;
use crate::username::Subject;

/// The id of this era's state script.
pub(super) const SCRIPT_ID: &[u8] = b"__NEXT_DATA__";

#[derive(Deserialize)]
struct Doc<'a> {
    #[serde(borrow)]
    props: Option<Props<'a>>,
}

#[derive(Deserialize)]
struct Props<'a> {
    #[serde(rename = "pageProps", borrow)]
    page_props: Option<PageProps<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PageProps<'a> {
    server_code: Option<i64>,
    status_code: Option<i64>,
    #[serde(borrow)]
    unique_id: Option<Text<'a>>,
    #[serde(borrow)]
    user_info: Option<UserInfo<'a>>,
}

/// Reads the text of the `__NEXT_DATA__` script.
///
/// `statusCode` decides; only when it is absent does `serverCode` 404 mean not found.
pub(super) fn said(text: &[u8], requested: Subject<'_>) -> Said {
    let doc: Doc = match user_json::parse(text) {
        Ok(doc) => doc,
        Err(why) => return Said::Broken(why),
    };
    let Some(props) = doc.props.and_then(|p| p.page_props) else {
        return Said::Broken("the state has no props.pageProps".into());
    };
    page_props(props, requested)
}

/// [`said`] as the verdict of a page holding only this state.
#[cfg(test)]
fn read(text: &[u8], requested: Subject<'_>) -> Reading<ShortVideoProfile> {
    said(text, requested).into_reading()
}

/// What the page props say: the section about the page's user.
fn page_props(props: PageProps<'_>, requested: Subject<'_>) -> Said {
    if let Some(Text(id)) = &props.unique_id
        && !id.is_empty()
        && !requested.matches(id)
    {
        return Said::user(Reading::Unreadable(format!(
            "pageProps is about another user than {:?}",
            requested.to_string()
        )));
    }
    if props.status_code.is_none() && props.server_code == Some(404) {
        return Said::user(Reading::NotFound);
    }
    let found = Found::from_user_info(props.status_code, props.user_info);
    user_json::said(found, requested)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;
    use crate::username::Username;

    fn name(s: &str) -> Username {
        Username::parse(Platform::ShortVideo, s).unwrap()
    }

    fn page_props(inner: &str) -> String {
        format!(
            r#"{{"props":{{"initialProps":{{"statusCode":0,"$user":{{"uniqueId":"viewer","id":"1"}}}},"pageProps":{inner}}},"page":"/@[uniqueId]"}}"#
        )
    }

    const USER: &str = r#"{"user":{"id":"107","uniqueId":"old_timer","nickname":"Old","verified":true,"relation":1,"avatarThumb":"https://cdn.example/a?x=1\u0026y=2"},"stats":{"followerCount":50100000,"heart":246000000,"heartCount":246000000,"videoCount":118,"diggCount":53},"itemList":[]}"#;

    #[test]
    fn reads_page_props_not_the_viewer() {
        let text = page_props(&format!(
            r#"{{"serverCode":200,"uniqueId":"old_timer","statusCode":0,"statusMsg":"","userInfo":{USER}}}"#
        ));
        let Reading::Found(p) = read(text.as_bytes(), (&name("old_timer")).into()) else {
            panic!("not a profile");
        };
        assert_eq!(p.user_info.user.id, "107");
        assert_eq!(p.user_info.user.relation, 1);
        assert_eq!(
            p.user_info.user.avatar_thumb,
            "https://cdn.example/a?x=1&y=2"
        );
        assert_eq!(p.user_info.user.signature, "");
        assert_eq!(p.user_info.stats.digg_count, Some(53));
        assert!(matches!(
            read(text.as_bytes(), (&name("viewer")).into()),
            Reading::Unreadable(_)
        ));
    }

    #[test]
    fn status_and_server_codes() {
        let nf = page_props(r#"{"serverCode":404,"statusCode":10202,"userInfo":{}}"#);
        assert_eq!(
            read(nf.as_bytes(), (&name("gone_user")).into()),
            Reading::NotFound
        );
        let nf = page_props(r#"{"serverCode":404}"#);
        assert_eq!(
            read(nf.as_bytes(), (&name("gone_user")).into()),
            Reading::NotFound
        );
        let captcha = page_props(r#"{"serverCode":200,"statusCode":10000}"#);
        assert_eq!(
            read(captcha.as_bytes(), (&name("a1")).into()),
            Reading::blocked("captcha")
        );
        let nothing = page_props(r#"{"serverCode":200}"#);
        assert!(matches!(
            read(nothing.as_bytes(), (&name("a1")).into()),
            Reading::Unreadable(_)
        ));
        assert!(matches!(
            read(b"{\"props\":{}}", (&name("a1")).into()),
            Reading::Unreadable(_)
        ));
    }
}
