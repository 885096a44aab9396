//! The body built from what a document gave under the platform's table of names: the one place
//! its rules live, whichever form (the edge-style user of the API and the legacy page, the
//! current page's xig object, the profile query's user) the values came from.

use url::Url;

use super::{PhotoShareBioLink, PhotoShareProfile};
use crate::platform::fields::{self, Item, PHOTO_SHARE, Record, Table, Tabled, View};
use crate::platform::{Count, Reading};
use crate::username::Subject;

/// The photo-share platform's table, for the known-place readers ([`crate::platform::fields`]).
#[derive(Debug)]
pub(super) struct Names;

impl Tabled for Names {
    fn table() -> &'static Table {
        &PHOTO_SHARE
    }
}

/// The body: each field by the table's names (the first usable one wins), the HD picture
/// falling back to the plain one, and a count `null` unless the document gave a usable one.
pub(super) fn profile(record: &Record<'_>) -> PhotoShareProfile {
    let v = View::new(&PHOTO_SHARE, record);
    let text = |key| v.text(key).into_owned();
    let profile_pic_url = text("profile_pic_url");
    let profile_pic_url_hd = match v.text("profile_pic_url_hd") {
        hd if hd.is_empty() => profile_pic_url.clone(),
        hd => hd.into_owned(),
    };
    let count = |key| Count {
        count: v.count(key),
    };
    PhotoShareProfile {
        id: text("id"),
        username: text("username"),
        full_name: text("full_name"),
        biography: text("biography"),
        profile_pic_url,
        profile_pic_url_hd,
        is_verified: v.flag("is_verified"),
        is_private: v.flag("is_private"),
        edge_followed_by: count("edge_followed_by"),
        edge_follow: count("edge_follow"),
        edge_owner_to_timeline_media: count("edge_owner_to_timeline_media"),
        external_url: Some(unwrapped(&v.text("external_url"))).filter(|u| !u.is_empty()),
        bio_links: v.list("bio_links").iter().filter_map(bio_link).collect(),
        pronouns: v
            .list("pronouns")
            .iter()
            .filter_map(|item| match item {
                Item::Text(text) if !text.is_empty() => Some(text.clone().into_owned()),
                _ => None,
            })
            .collect(),
        // `""` is how the platform says the owner hides it: no category.
        category_name: Some(text("category_name")).filter(|c| !c.is_empty()),
    }
}

/// The host of the platform's link redirector, which wraps the links of a profile (`lynx_url`,
/// `external_url_linkshimmed`) as `https://l.instagram.com/?u=<the link, percent-encoded>&e=…`.
const REDIRECTOR_HOST: &str = "l.instagram.com";

/// `link` unwrapped from the platform's redirector (its `u` parameter, percent-decoded); any
/// other link as it is.
pub(super) fn unwrapped(link: &str) -> String {
    let Ok(url) = Url::parse(link) else {
        return link.to_owned();
    };
    if url.host_str() != Some(REDIRECTOR_HOST) {
        return link.to_owned();
    }
    url.query_pairs()
        .find(|(key, _)| key == "u")
        .map(|(_, target)| target.into_owned())
        .filter(|target| !target.is_empty())
        .unwrap_or_else(|| link.to_owned())
}

/// A bio link of the body: its `url` (else its redirector-wrapped `lynx_url`), unwrapped, and
/// its title; `None` for an element that gives no link.
fn bio_link(item: &Item<'_>) -> Option<PhotoShareBioLink> {
    let Item::Link {
        url,
        lynx_url,
        title,
    } = item
    else {
        return None;
    };
    let link = if url.is_empty() { lynx_url } else { url };
    (!link.is_empty()).then(|| PhotoShareBioLink {
        url: unwrapped(link),
        title: title.clone().into_owned(),
    })
}

/// The reading of the requested user's profile: the profile, unless the account is public and
/// the document gives no follower count under any known name (the platform moving, never a
/// 200 with `null`; see [`Table::unanswerable`]).
pub(super) fn answerable(profile: PhotoShareProfile) -> Reading<PhotoShareProfile> {
    match PHOTO_SHARE.unanswerable(profile.is_private, profile.edge_followed_by.count) {
        Some(why) => Reading::Unreadable(why),
        None => Reading::Found(profile),
    }
}

/// The anchored search over JSON `texts`: the requested user's profile, wherever the
/// documents keep their object (never another user's), or `None` when no object is theirs or
/// no name was asked for (a saved document read for anyone).
pub(super) fn searched<'a>(
    texts: impl IntoIterator<Item = &'a [u8]>,
    requested: Subject<'_>,
) -> Option<Reading<PhotoShareProfile>> {
    let name = requested.name()?;
    let found = texts
        .into_iter()
        .filter_map(|text| fields::search(&PHOTO_SHARE, text, name))
        .flatten()
        .collect();
    let user = fields::best(&PHOTO_SHARE, found)?;
    Some(answerable(profile(&user)))
}

/// Whether a profile read from a document is the one that was asked for.
pub(super) fn is_requested(profile: &PhotoShareProfile, requested: Subject<'_>) -> bool {
    requested.matches(&profile.username)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_platforms_redirector_is_unwrapped() {
        let cases = [
            (
                "https://l.instagram.com/?u=https%3A%2F%2Fshop.example%2Fa%3Fb%3D1%26c%3D2&e=AT0x",
                "https://shop.example/a?b=1&c=2",
            ),
            (
                "http://l.instagram.com/?e=AT0x&u=http%3A%2F%2Fa.example",
                "http://a.example",
            ),
            // No target, another host, a look-alike host, no URL at all: as given.
            (
                "https://l.instagram.com/?e=AT0x",
                "https://l.instagram.com/?e=AT0x",
            ),
            ("https://l.instagram.com/?u=", "https://l.instagram.com/?u="),
            (
                "https://shop.example/?u=https%3A%2F%2Fx",
                "https://shop.example/?u=https%3A%2F%2Fx",
            ),
            (
                "https://l.instagram.com.evil.example/?u=https%3A%2F%2Fx",
                "https://l.instagram.com.evil.example/?u=https%3A%2F%2Fx",
            ),
            ("linktr.ee/name", "linktr.ee/name"),
        ];
        for (link, want) in cases {
            assert_eq!(unwrapped(link), want, "{link}");
        }
    }

    #[test]
    fn a_bio_link_takes_its_url_else_its_wrapped_link_and_needs_one() {
        let link = |url: &'static str, lynx_url: &'static str| Item::Link {
            url: url.into(),
            lynx_url: lynx_url.into(),
            title: "T".into(),
        };
        let got = |item| bio_link(&item).map(|l| l.url);
        assert_eq!(
            got(link(
                "https://a.example",
                "https://l.instagram.com/?u=https%3A%2F%2Fb"
            )),
            Some("https://a.example".to_owned())
        );
        assert_eq!(
            got(link(
                "",
                "https://l.instagram.com/?u=https%3A%2F%2Fb.example"
            )),
            Some("https://b.example".to_owned())
        );
        assert_eq!(got(link("", "")), None);
        assert_eq!(got(Item::Text("https://a.example".into())), None);
    }

    #[test]
    fn an_empty_category_or_link_is_null_and_empty_lists_are_empty() {
        let record: fields::UserObject<'_, Names> = serde_json::from_str(
            r#"{"username":"bo","category_name":"","external_url":"","bio_links":null,"pronouns":[]}"#,
        )
        .unwrap();
        let body = profile(&record.0);
        assert_eq!(body.category_name, None);
        assert_eq!(body.external_url, None);
        assert!(body.bio_links.is_empty() && body.pronouns.is_empty());
    }
}
