//! What each browser profile presents: `wreq-util`'s emulation of that browser (its TLS
//! ClientHello, HTTP/2 SETTINGS and frames, and its default headers: the User-Agent, Chromium's
//! client hints, the navigation `Accept` and `Accept-Language`), plus what a page request
//! (a navigation) looks like in that browser: its header order and the headers a browser adds
//! on a navigation that the emulation leaves out.
//!
//! The versions are the pinned `wreq-util =3.0.0-rc.14`'s: `chrome` its newest Chrome (149),
//! `chrome_previous` the one before (148; the same handshake, another User-Agent and
//! `sec-ch-ua`), `firefox` its newest Firefox (151), `safari` its newest desktop Safari (26.4,
//! which that crate builds with Safari 18.5's handshake).
//! `tests/it/upstream/browser_client.rs` checks each against the browser's published JA4 and
//! HTTP/2 fingerprint.

use std::sync::LazyLock;

use wreq::header::OrigHeaderMap;
use wreq_util::{Emulation, Platform, Profile};

use crate::config::BrowserProfile;

/// The emulation a profile is built from: the browser release and its desktop platform
/// (Windows for Chrome and Firefox, macOS for Safari, which has no other desktop).
pub fn emulation(profile: BrowserProfile) -> Emulation {
    let (release, platform) = match profile {
        BrowserProfile::Chrome => (Profile::Chrome149, Platform::Windows),
        BrowserProfile::ChromePrevious => (Profile::Chrome148, Platform::Windows),
        BrowserProfile::Firefox => (Profile::Firefox151, Platform::Windows),
        BrowserProfile::Safari => (Profile::Safari26_4, Platform::MacOS),
    };
    Emulation::builder()
        .profile(release)
        .platform(platform)
        .build()
}

/// How a browser family sends a page request (a profile page opened in a tab).
pub struct Navigation {
    /// The header order after the pseudo-headers; headers not listed keep their place after
    /// these.
    pub order: &'static LazyLock<OrigHeaderMap>,
    /// Headers the browser adds to every navigation that the emulation's defaults leave out.
    pub extra: &'static [(&'static str, &'static str)],
}

/// The navigation of `profile`'s browser family.
pub fn navigation(profile: BrowserProfile) -> &'static Navigation {
    match profile {
        BrowserProfile::Chrome | BrowserProfile::ChromePrevious => &CHROMIUM,
        BrowserProfile::Firefox => &FIREFOX,
        BrowserProfile::Safari => &SAFARI,
    }
}

/// `upgrade-insecure-requests` and `sec-fetch-user`, which Chrome and Firefox send on every
/// navigation and the emulations leave out.
const USER_NAVIGATION: &[(&str, &str)] =
    &[("upgrade-insecure-requests", "1"), ("sec-fetch-user", "?1")];

/// Chrome: the client hints first, then `upgrade-insecure-requests`, the User-Agent, `accept`,
/// and `sec-fetch-*` as site, mode, user, dest (the emulation's own order puts `sec-fetch-*`
/// before `accept`; bot checks compare exactly this).
static CHROMIUM: Navigation = Navigation {
    order: &CHROMIUM_ORDER,
    extra: USER_NAVIGATION,
};
static CHROMIUM_ORDER: LazyLock<OrigHeaderMap> = LazyLock::new(|| {
    order(&[
        "sec-ch-ua",
        "sec-ch-ua-mobile",
        "sec-ch-ua-platform",
        "upgrade-insecure-requests",
        "user-agent",
        "accept",
        "sec-fetch-site",
        "sec-fetch-mode",
        "sec-fetch-user",
        "sec-fetch-dest",
        "referer",
        "accept-encoding",
        "accept-language",
        "cookie",
        "priority",
    ])
});

/// Firefox: the User-Agent and the `accept-*` first, cookies, `upgrade-insecure-requests`,
/// `sec-fetch-*` as dest, mode, site, user, then `priority` and `te: trailers` last.
static FIREFOX: Navigation = Navigation {
    order: &FIREFOX_ORDER,
    extra: USER_NAVIGATION,
};
static FIREFOX_ORDER: LazyLock<OrigHeaderMap> = LazyLock::new(|| {
    order(&[
        "user-agent",
        "accept",
        "accept-language",
        "accept-encoding",
        "referer",
        "cookie",
        "upgrade-insecure-requests",
        "sec-fetch-dest",
        "sec-fetch-mode",
        "sec-fetch-site",
        "sec-fetch-user",
        "priority",
        "te",
    ])
});

/// Safari: the emulation's order (`sec-fetch-dest` first, `accept-encoding` last) with cookies
/// after it; Safari adds nothing of its own.
static SAFARI: Navigation = Navigation {
    order: &SAFARI_ORDER,
    extra: &[],
};
static SAFARI_ORDER: LazyLock<OrigHeaderMap> = LazyLock::new(|| {
    order(&[
        "sec-fetch-dest",
        "user-agent",
        "accept",
        "sec-fetch-site",
        "sec-fetch-mode",
        "accept-language",
        "priority",
        "accept-encoding",
        "referer",
        "cookie",
    ])
});

/// `names` in wreq's form.
fn order(names: &[&'static str]) -> OrigHeaderMap {
    let mut order = OrigHeaderMap::with_capacity(names.len());
    for name in names {
        order.insert(*name);
    }
    order
}
