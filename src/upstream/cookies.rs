//! The cookies one upstream route keeps: what the platform set through that route, sent back
//! on that route's later requests, and never on another route's.
//!
//! The platforms tie their cookies (`csrftoken`, `mid`, `ig_did`; the short-video WAF's proof
//! of work) to the address that obtained them; a cookie replayed from another proxy's address
//! is a tell. So each route (one proxy, or the direct route) has its own jar. Parsing, expiry,
//! domain and path matching are the `cookie_store` crate's (RFC 6265); this module adds the
//! bounds: a hostile or chatty upstream cannot grow a jar without limit. The jar holds at most
//! [`MAX_COOKIES`] cookies and [`MAX_JAR_BYTES`] bytes whatever their names, paths and
//! domains (one name set on a new path each time is a new cookie to the RFC, and counts as
//! one here too): past either bound, the cookies that expire soonest go.
//!
//! The jar works at the client seam, the same way for both backends, so neither client keeps
//! cookies of its own.

use std::sync::Mutex;

use cookie_store::{CookieExpiration, CookieStore, RawCookie};
use reqwest::header::{HeaderMap, HeaderValue, SET_COOKIE};
use url::Url;

/// The most cookies one route keeps (RFC 6265 §6.1 asks a browser for at least 50 per domain).
pub const MAX_COOKIES: usize = 64;
/// The longest cookie kept, name, value, path and domain together (RFC 6265 §6.1's 4096 bytes).
pub const MAX_COOKIE_BYTES: usize = 4096;
/// The most bytes one route's jar holds, every cookie's name, value, domain and path counted:
/// room for a platform's usual dozen cookies many times over, and far less than the 32 cookies
/// of 4 KB one response may set.
pub const MAX_JAR_BYTES: usize = 16 * 1024;
/// The most `Set-Cookie` fields of one response looked at; the rest are ignored.
pub const MAX_SET_COOKIE_PER_RESPONSE: usize = 32;

/// One route's cookie jar.
#[derive(Default)]
pub struct RouteCookies {
    store: Mutex<CookieStore>,
}

impl std::fmt::Debug for RouteCookies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Cookie values are credentials of a kind: never printed.
        f.debug_struct("RouteCookies").finish_non_exhaustive()
    }
}

impl RouteCookies {
    fn lock(&self) -> std::sync::MutexGuard<'_, CookieStore> {
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds the jar's unexpired cookies for `url` to `headers`' `Cookie` field, after any
    /// cookie the caller set itself (a caller's cookie of the same name wins).
    pub fn add_to(&self, url: &Url, headers: &mut HeaderMap) {
        let store = self.lock();
        let given = headers
            .get(reqwest::header::COOKIE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let named_by_caller = |name: &str| {
            given
                .split(';')
                .any(|pair| pair.trim().split('=').next() == Some(name))
        };
        let mut line = given.clone();
        for (name, value) in store.get_request_values(url) {
            if named_by_caller(name) {
                continue;
            }
            if !line.is_empty() {
                line.push_str("; ");
            }
            line.push_str(name);
            line.push('=');
            line.push_str(value);
        }
        if line != given
            && let Ok(value) = HeaderValue::from_str(&line)
        {
            headers.insert(reqwest::header::COOKIE, value);
        }
    }

    /// Keeps the cookies a response from `url` set (at most [`MAX_SET_COOKIE_PER_RESPONSE`]
    /// fields, each at most [`MAX_COOKIE_BYTES`]); an expired one removes its namesake.
    pub fn keep_from(&self, url: &Url, headers: &HeaderMap) {
        let mut fields = headers
            .get_all(SET_COOKIE)
            .iter()
            .take(MAX_SET_COOKIE_PER_RESPONSE)
            .filter_map(|v| v.to_str().ok())
            .peekable();
        if fields.peek().is_none() {
            return;
        }
        let mut store = self.lock();
        for field in fields {
            if let Ok(cookie) = RawCookie::parse(field) {
                insert_bounded(&mut store, &cookie, url);
            }
        }
    }

    /// Keeps `name=value` for every path of `url`'s host: cookies obtained other than by a
    /// `Set-Cookie` (the short-video WAF answer the challenge solver computes).
    pub fn remember(&self, url: &Url, name: &str, value: &str) {
        let mut cookie = RawCookie::new(name.to_owned(), value.to_owned());
        cookie.set_path("/");
        insert_bounded(&mut self.lock(), &cookie, url);
    }

    /// The value of the unexpired cookie `name` that would be sent to `url`, if any.
    pub fn value(&self, url: &Url, name: &str) -> Option<String> {
        self.lock()
            .get_request_values(url)
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_owned())
    }

    /// How many unexpired cookies the jar holds.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().iter_unexpired().count()
    }

    /// Whether the jar holds no unexpired cookie.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes the jar holds: every cookie's name, value, domain and path.
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.lock().iter_any().map(cookie_bytes).sum()
    }
}

/// Inserts `cookie` (set by a response from `url`), then keeps the jar within its bounds, in
/// count ([`MAX_COOKIES`]) and in bytes ([`MAX_JAR_BYTES`]): expired cookies go first, then
/// the ones that expire soonest, whatever their names, paths and domains. Only the cookie just
/// stored (its exact domain, path and name) is spared.
fn insert_bounded(store: &mut CookieStore, cookie: &RawCookie<'_>, url: &Url) {
    let attributes = cookie.path().map_or(0, str::len) + cookie.domain().map_or(0, str::len);
    if cookie.name().len() + cookie.value().len() + attributes > MAX_COOKIE_BYTES {
        return;
    }
    let key = |c: &cookie_store::Cookie<'_>| {
        (
            String::from(&c.domain),
            String::from(&c.path),
            c.name().to_owned(),
        )
    };
    // A refusal (wrong domain, already expired, unparsable) is simply not kept, and not logged:
    // the crate's own logging of stored cookies would print their values.
    let Ok(parsed) = cookie_store::Cookie::try_from_raw_cookie(cookie, url) else {
        return;
    };
    // The one just stored, as the jar keys it (its default path and host filled in).
    let newest = key(&parsed);
    let _ = store.insert(parsed.into_owned(), url);
    let expired: Vec<_> = store
        .iter_any()
        .filter(|c| c.is_expired())
        .map(key)
        .collect();
    for (domain, path, name) in expired {
        store.remove(&domain, &path, &name);
    }
    let mut count = store.iter_any().count();
    let mut bytes: usize = store.iter_any().map(cookie_bytes).sum();
    if count <= MAX_COOKIES && bytes <= MAX_JAR_BYTES {
        return;
    }
    let mut evictable: Vec<_> = store
        .iter_any()
        .map(|c| {
            let until = match c.expires {
                CookieExpiration::AtUtc(at) => Some(at),
                CookieExpiration::SessionEnd => None,
            };
            (until, cookie_bytes(c), key(c))
        })
        .filter(|(_, _, k)| *k != newest)
        .collect();
    // Soonest expiry first; session cookies (no expiry) last.
    evictable.sort_by(|a, b| match (a.0, b.0) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    for (_, size, (domain, path, name)) in evictable {
        if count <= MAX_COOKIES && bytes <= MAX_JAR_BYTES {
            break;
        }
        store.remove(&domain, &path, &name);
        count -= 1;
        bytes -= size;
    }
}

/// What one cookie costs the jar: its name, value, domain and path.
fn cookie_bytes(cookie: &cookie_store::Cookie<'_>) -> usize {
    let domain = match &cookie.domain {
        cookie_store::CookieDomain::HostOnly(h) | cookie_store::CookieDomain::Suffix(h) => h.len(),
        _ => 0,
    };
    cookie.name().len() + cookie.value().len() + domain + String::from(&cookie.path).len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn cookie_line(jar: &RouteCookies, at: &str) -> String {
        let mut headers = HeaderMap::new();
        jar.add_to(&url(at), &mut headers);
        headers
            .get(reqwest::header::COOKIE)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    }

    #[test]
    fn keeps_set_cookies_and_sends_them_back_on_the_same_host_only() {
        let jar = RouteCookies::default();
        let mut headers = HeaderMap::new();
        headers.append(
            SET_COOKIE,
            HeaderValue::from_static("csrftoken=abc; Path=/"),
        );
        headers.append(
            SET_COOKIE,
            HeaderValue::from_static("mid=xyz; Max-Age=3600; Path=/"),
        );
        headers.append(SET_COOKIE, HeaderValue::from_static("gone=1; Max-Age=0"));
        jar.keep_from(&url("https://www.example.com/api/x"), &headers);
        let line = cookie_line(&jar, "https://www.example.com/user/");
        assert!(
            line.contains("csrftoken=abc") && line.contains("mid=xyz"),
            "{line}"
        );
        assert!(!line.contains("gone"), "{line}");
        assert_eq!(
            jar.value(&url("https://www.example.com/x"), "csrftoken")
                .as_deref(),
            Some("abc")
        );
        assert_eq!(cookie_line(&jar, "https://other.example.net/"), "");
        let mut expire = HeaderMap::new();
        expire.append(
            SET_COOKIE,
            HeaderValue::from_static("mid=; Max-Age=0; Path=/"),
        );
        jar.keep_from(&url("https://www.example.com/"), &expire);
        assert_eq!(
            cookie_line(&jar, "https://www.example.com/"),
            "csrftoken=abc"
        );
    }

    #[test]
    fn a_callers_cookie_wins_and_the_jar_adds_the_others() {
        let jar = RouteCookies::default();
        jar.remember(&url("http://127.0.0.1:9/@a"), "waf", "1");
        jar.remember(&url("http://127.0.0.1:9/@a"), "other", "2");
        let mut headers = HeaderMap::new();
        headers.insert(
            reqwest::header::COOKIE,
            HeaderValue::from_static("waf=mine"),
        );
        jar.add_to(&url("http://127.0.0.1:9/@b"), &mut headers);
        assert_eq!(headers[reqwest::header::COOKIE], "waf=mine; other=2");
    }

    #[test]
    fn the_jar_is_bounded_in_count_and_size() {
        let jar = RouteCookies::default();
        let at = url("https://www.example.com/");
        let big = format!("big={}", "x".repeat(MAX_COOKIE_BYTES));
        let mut headers = HeaderMap::new();
        headers.append(SET_COOKIE, HeaderValue::from_str(&big).unwrap());
        jar.keep_from(&at, &headers);
        assert!(jar.is_empty(), "an oversized cookie is not kept");
        for i in 0..(MAX_COOKIES * 3) {
            jar.remember(&at, &format!("c{i}"), "v");
        }
        assert_eq!(jar.len(), MAX_COOKIES);
        let line = cookie_line(&jar, "https://www.example.com/");
        assert!(
            line.contains(&format!("c{}=v", MAX_COOKIES * 3 - 1)),
            "the newest is kept"
        );
        let mut many = HeaderMap::new();
        for i in 0..(MAX_SET_COOKIE_PER_RESPONSE + 10) {
            many.append(
                SET_COOKIE,
                HeaderValue::from_str(&format!("s{i}=v; Path=/")).unwrap(),
            );
        }
        let fresh = RouteCookies::default();
        fresh.keep_from(&at, &many);
        assert_eq!(fresh.len(), MAX_SET_COOKIE_PER_RESPONSE);
    }

    #[test]
    fn one_name_on_many_paths_stays_within_the_count_and_the_bytes() {
        // The same name on a new path each time: 32 cookies of about 4 KB per response.
        let jar = RouteCookies::default();
        let at = url("https://www.example.com/");
        let value = "v".repeat(MAX_COOKIE_BYTES - 64);
        for round in 0..20 {
            let mut headers = HeaderMap::new();
            for i in 0..MAX_SET_COOKIE_PER_RESPONSE {
                let field = format!("big={value}; Path=/p{round}-{i}; Max-Age=600");
                headers.append(SET_COOKIE, HeaderValue::from_str(&field).unwrap());
            }
            jar.keep_from(&at, &headers);
            assert!(
                jar.len() <= MAX_COOKIES,
                "round {round}: {} cookies",
                jar.len()
            );
            assert!(
                jar.bytes() <= MAX_JAR_BYTES,
                "round {round}: {} bytes",
                jar.bytes()
            );
        }
        // Domains and hosts change nothing: the bounds are the jar's, whatever the cookie.
        for i in 0..300 {
            let host = url(&format!("https://h{i}.example.com/"));
            jar.remember(&host, "big", &value);
            let mut headers = HeaderMap::new();
            let field = format!("big={i}; Domain=example.com; Path=/d{i}");
            headers.append(SET_COOKIE, HeaderValue::from_str(&field).unwrap());
            jar.keep_from(&host, &headers);
        }
        assert!(jar.len() <= MAX_COOKIES && jar.bytes() <= MAX_JAR_BYTES);
        // The cookie just set is always kept.
        jar.remember(&at, "session", "fresh");
        assert_eq!(jar.value(&at, "session").as_deref(), Some("fresh"));
    }
}
