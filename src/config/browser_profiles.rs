//! `upstream.browser_profiles`: the browsers the browser-grade client may present.
//!
//! Platforms key some blocks on the client's fingerprint (the Chrome version, say), so the
//! browser client can present several browsers, each with its own TLS, HTTP/2 and headers:
//! one per lookup, in turn, and the next one after a block. The names are checked when the
//! configuration is loaded, whatever the build and the client; the plain client presents no
//! browser and ignores the list.

use serde::{Deserialize, Deserializer, Serialize};

/// One browser the browser-grade client can present (`upstream.browser_profiles`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BrowserProfile {
    /// The newest desktop Chrome the pinned emulation crate knows (Windows).
    Chrome,
    /// The Chrome release before it: a block keyed on the current version misses it.
    ChromePrevious,
    /// The newest desktop Firefox it knows (Windows).
    Firefox,
    /// The newest desktop Safari it knows (macOS).
    Safari,
}

impl BrowserProfile {
    /// Every profile, in the default order of `upstream.browser_profiles`.
    pub const ALL: [BrowserProfile; 4] = [
        BrowserProfile::Chrome,
        BrowserProfile::ChromePrevious,
        BrowserProfile::Firefox,
        BrowserProfile::Safari,
    ];

    /// The profile's name in the configuration and the logs.
    pub const fn as_str(self) -> &'static str {
        match self {
            BrowserProfile::Chrome => "chrome",
            BrowserProfile::ChromePrevious => "chrome_previous",
            BrowserProfile::Firefox => "firefox",
            BrowserProfile::Safari => "safari",
        }
    }
}

/// Read by name; an unknown one is refused with the names there are.
impl<'de> Deserialize<'de> for BrowserProfile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        BrowserProfile::ALL
            .into_iter()
            .find(|p| p.as_str() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = BrowserProfile::ALL.iter().map(|p| p.as_str()).collect();
                serde::de::Error::custom(format_args!(
                    "{name:?} is not a browser profile; allowed values: {}",
                    super::words::allowed(&known)
                ))
            })
    }
}

impl std::fmt::Display for BrowserProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `upstream.browser_profiles` with `browser` (whether the browser client is configured): no
/// profile twice, and at least one for the browser client to present.
pub fn check(profiles: &[BrowserProfile], browser: bool) -> Result<(), String> {
    for (at, profile) in profiles.iter().enumerate() {
        if profiles[..at].contains(profile) {
            return Err(format!(
                "upstream.browser_profiles[{at}] \"{profile}\" is listed twice"
            ));
        }
    }
    if browser && profiles.is_empty() {
        let known: Vec<&str> = BrowserProfile::ALL.iter().map(|p| p.as_str()).collect();
        return Err(format!(
            "upstream.browser_profiles is empty: with upstream.client = \"browser\" list at \
             least one of [\"{}\"]",
            known.join("\", \"")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde() {
        for profile in BrowserProfile::ALL {
            let text = serde_json::to_string(&profile).unwrap();
            assert_eq!(text, format!("\"{}\"", profile.as_str()));
            assert_eq!(
                serde_json::from_str::<BrowserProfile>(&text).unwrap(),
                profile
            );
        }
        assert!(serde_json::from_str::<BrowserProfile>("\"opera\"").is_err());
    }
}
