//! The legacy profile page (up to about 2022): `<script>window._sharedData = {…};</script>`
//! with the profile at `entry_data.ProfilePage[0].graphql.user` in edge-style names, or the
//! same `{"graphql":{"user":…}}` passed to `window.__additionalDataLoaded('/name/', {…})`.
//!
//! The same object also tells a login page (`entry_data.LoginAndSignupPage`) and an error page
//! (`entry_data.HttpErrorPage`) apart, which is a stronger signal than any text in the markup.

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::PhotoShareProfile;
use super::parts::{Names, profile};
use crate::cost;
use crate::json_skim::skip_ws;
use crate::platform::fields::{UserObject, describe, first_value};

#[derive(Deserialize)]
struct SharedData<'a> {
    #[serde(default, borrow)]
    entry_data: Option<EntryData<'a>>,
}

#[derive(Deserialize)]
struct EntryData<'a> {
    #[serde(rename = "ProfilePage", default, borrow)]
    profile_page: Option<Vec<ProfileEntry<'a>>>,
    #[serde(rename = "LoginAndSignupPage", default)]
    login: Option<IgnoredAny>,
    #[serde(rename = "HttpErrorPage", default)]
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct ProfileEntry<'a> {
    #[serde(default, borrow)]
    graphql: Option<Graphql<'a>>,
}

#[derive(Deserialize)]
struct Graphql<'a> {
    #[serde(default, borrow)]
    user: Option<UserObject<'a, Names>>,
}

impl Graphql<'_> {
    /// The profile of its user, if it has one.
    fn profile(self) -> Option<PhotoShareProfile> {
        self.user.map(|user| profile(&user.0))
    }
}

/// What one legacy state script says.
#[derive(Debug, Default)]
pub(super) struct Legacy {
    /// The profile the script holds (whoever it is).
    pub profile: Option<PhotoShareProfile>,
    /// The page is the login page.
    pub login_page: bool,
    /// The page is the error (404) page.
    pub error_page: bool,
    /// The state could not be read, described for the log.
    pub broken: Option<String>,
}

/// Reads a script's text if it is a legacy state script; `None` for any other script.
pub(super) fn read(script: &[u8]) -> Option<Legacy> {
    let text = skip_ws(script);
    if let Some(rest) = text.strip_prefix(b"window._sharedData") {
        let value = skip_ws(rest).strip_prefix(b"=").map(skip_ws)?;
        return Some(shared_data(value));
    }
    let rest = text.strip_prefix(b"window.__additionalDataLoaded(")?;
    let comma = cost::memchr(b',', rest)?;
    Some(graphql_entry(skip_ws(&rest[comma + 1..])))
}

fn first_json<'a, T: Deserialize<'a>>(value: &'a [u8]) -> Result<T, String> {
    match first_value(value) {
        Some(Ok((doc, _))) => Ok(doc),
        Some(Err(err)) => Err(describe("legacy page state", &err)),
        None => Err("legacy page state is empty".to_owned()),
    }
}

fn shared_data(value: &[u8]) -> Legacy {
    let entry = match first_json::<SharedData>(value) {
        Ok(doc) => doc.entry_data,
        Err(broken) => return broken_state(broken),
    };
    let Some(entry) = entry else {
        return Legacy::default();
    };
    let profile = entry
        .profile_page
        .and_then(|pages| pages.into_iter().next())
        .and_then(|page| page.graphql)
        .and_then(Graphql::profile);
    Legacy {
        profile,
        login_page: entry.login.is_some(),
        error_page: entry.error.is_some(),
        broken: None,
    }
}

fn graphql_entry(value: &[u8]) -> Legacy {
    match first_json::<ProfileEntry>(value) {
        Ok(entry) => Legacy {
            profile: entry.graphql.and_then(Graphql::profile),
            ..Legacy::default()
        },
        Err(broken) => broken_state(broken),
    }
}

fn broken_state(broken: String) -> Legacy {
    Legacy {
        broken: Some(broken),
        ..Legacy::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_profile_page_entry() {
        let script = br#"window._sharedData = {"config":{"viewer":null},"entry_data":{"ProfilePage":[{"logging_page_id":"profilePage_1","graphql":{"user":{"id":"1","username":"bo","edge_followed_by":{"count":5},"edge_owner_to_timeline_media":{"count":1,"edges":[{"node":{}}]}}}}]}};"#;
        let legacy = read(script).expect("a legacy script");
        let p = legacy.profile.expect("profile");
        assert_eq!((p.id.as_str(), p.username.as_str()), ("1", "bo"));
        assert_eq!(p.edge_followed_by.count, Some(5));
        assert_eq!(p.edge_follow.count, None);
        assert!(!legacy.login_page && !legacy.error_page);
    }

    #[test]
    fn reads_login_and_error_entries() {
        let login = read(br#"window._sharedData={"entry_data":{"LoginAndSignupPage":[{}]}};"#);
        assert!(login.is_some_and(|l| l.login_page && l.profile.is_none()));
        let error = read(br#" window._sharedData = {"entry_data":{"HttpErrorPage":[{}]}}"#);
        assert!(error.is_some_and(|e| e.error_page));
    }

    #[test]
    fn reads_additional_data_loaded() {
        let script =
            br#"window.__additionalDataLoaded('/bo/',{"graphql":{"user":{"id":"9","username":"bo"}}});"#;
        let p = read(script).and_then(|l| l.profile).expect("profile");
        assert_eq!(p.id, "9");
    }

    #[test]
    fn other_scripts_are_not_state_and_broken_state_is_reported() {
        assert!(read(b"window._other = {};").is_none());
        assert!(read(b"console.log(window._sharedData)").is_none());
        let broken = read(br#"window._sharedData = {"entry_data":{"ProfilePage":[{"#);
        assert!(broken.is_some_and(|b| b.broken.is_some()));
    }
}
