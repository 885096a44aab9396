//! Whose saved document this is, read from the document itself, for `extract` without a name.
//!
//! The service always knows whom it asked for; someone reading a saved page may not. A page
//! usually says whose it is in its markup (`<link rel="canonical">`, `<meta property="og:url">`),
//! and then it is read as that user's, so another account the page holds (a suggested one, a
//! hovercard) is never answered for. Without such a link:
//!
//! - a JSON document (an API answer) is about the one user at its top, and the short-video
//!   pages' states name their own user by place (`UserPage`, `userInfo`,
//!   `webapp.user-detail`): read as it is;
//! - a photo-share page whose readers take the first user object of a known kind, and which
//!   holds several accounts (a hovercard before the profile), is refused: guessing would answer
//!   for the wrong one.

use crate::html::{self, Token};
use crate::platform::Platform;
use crate::username::Username;

/// At most this many account names are listed in a refusal.
const NAMES_SHOWN: usize = 5;

/// Whose document a saved one is, as far as the document itself says.
#[derive(Debug, PartialEq, Eq)]
pub enum Owner {
    /// Its markup names the user.
    Named(String),
    /// Read it as about its own user: nothing names one and nothing else could be taken.
    Itself,
    /// It names no user and holds several accounts (up to [`NAMES_SHOWN`] of them, sorted).
    Unclear(Vec<String>),
}

/// Whose `document` (a page or JSON answer of `platform`, without a byte-order mark) is.
pub fn owner(platform: Platform, document: &[u8]) -> Owner {
    let text = document.trim_ascii_start();
    if text.starts_with(b"{") || text.starts_with(b"[") {
        return Owner::Itself;
    }
    if let Some(name) = linked_name(platform, document) {
        return Owner::Named(name);
    }
    if platform != Platform::PhotoShare {
        return Owner::Itself;
    }
    let names = account_names(document, b"\"username\":\"");
    if names.len() > 1 {
        Owner::Unclear(names.into_iter().take(NAMES_SHOWN).collect())
    } else {
        Owner::Itself
    }
}

/// The user the page's canonical link (else its `og:url`) names, when it is a valid name.
fn linked_name(platform: Platform, page: &[u8]) -> Option<String> {
    let (mut canonical, mut og_url) = (None, None);
    let mut tokens = html::tokens(page);
    while let Some(token) = tokens.next_markup() {
        let Token::Start(tag) = token else { continue };
        if tag.is("link")
            && tag.attr("rel").is_some_and(|rel| {
                rel.split(u8::is_ascii_whitespace)
                    .any(|r| r.eq_ignore_ascii_case(b"canonical"))
            })
        {
            canonical = canonical.or(tag.attr("href"));
        } else if tag.is("meta")
            && tag
                .attr("property")
                .or(tag.attr("name"))
                .is_some_and(|p| p.eq_ignore_ascii_case(b"og:url"))
        {
            og_url = og_url.or(tag.attr("content"));
        }
        if canonical.is_some() {
            break;
        }
    }
    [canonical, og_url]
        .into_iter()
        .flatten()
        .find_map(|url| name_in_url(platform, url))
}

/// The first segment of the URL's path (an `@` before it dropped), when it is a valid name.
fn name_in_url(platform: Platform, url: &[u8]) -> Option<String> {
    let url = std::str::from_utf8(url).ok()?;
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = after_scheme.split_once('/')?.1;
    let segment = path.split(['/', '?', '#']).next()?;
    let raw = segment.strip_prefix('@').unwrap_or(segment);
    Username::parse(platform, raw).ok()?;
    Some(raw.to_owned())
}

/// The distinct values of the JSON string key `key` (`"username":"`), sorted.
fn account_names(document: &[u8], key: &[u8]) -> Vec<String> {
    let mut names = std::collections::BTreeSet::new();
    for at in memchr::memmem::find_iter(document, key) {
        let rest = &document[at + key.len()..];
        let Some(end) = memchr::memchr2(b'"', b'\\', rest) else {
            break;
        };
        if rest[end] == b'"' && end > 0 {
            names.insert(String::from_utf8_lossy(&rest[..end]).into_owned());
        }
    }
    names.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_markup_names_the_owner_canonical_first() {
        let page = br#"<html><head><meta property="og:url" content="https://x.example/og.name/">
            <link rel="alternate canonical" href="https://x.example/@canon.name?lang=en">"#;
        assert_eq!(
            owner(Platform::PhotoShare, page),
            Owner::Named("canon.name".into())
        );
        let page = br#"<meta property="og:url" content="https://x.example/og.name/">"#;
        assert_eq!(
            owner(Platform::PhotoShare, page),
            Owner::Named("og.name".into())
        );
    }

    #[test]
    fn a_link_to_no_profile_names_nobody() {
        for url in [
            "https://x.example/",
            "https://x.example/a b/",
            "/p/",
            "no-path",
        ] {
            let page = format!(r#"<link rel="canonical" href="{url}">"#);
            assert_eq!(
                owner(Platform::ShortVideo, page.as_bytes()),
                Owner::Itself,
                "{url}"
            );
        }
    }

    #[test]
    fn several_accounts_and_no_name_are_unclear_on_photo_share_pages_only() {
        let page =
            br#"<script>{"username":"b.one","x":{"username":"a.two"},"username":"a.two"}</script>"#;
        assert_eq!(
            owner(Platform::PhotoShare, page),
            Owner::Unclear(vec!["a.two".into(), "b.one".into()])
        );
        assert_eq!(owner(Platform::ShortVideo, page), Owner::Itself);
        let json = br#" {"data":{"user":{"username":"a","related":[{"username":"b"}]}}}"#;
        assert_eq!(owner(Platform::PhotoShare, json), Owner::Itself);
        let one = br#"<script>{"username":"only.one"}</script>"#;
        assert_eq!(owner(Platform::PhotoShare, one), Owner::Itself);
    }
}
