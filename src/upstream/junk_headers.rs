//! Random extra headers on page requests (`<section>.junk_headers`).
//!
//! A platform can key a block on a request's exact header set. Browsers' extensions add
//! headers of their own, so a few random extra ones are unremarkable, and they make every
//! request's header fingerprint new. The rule is yt-dlp's (commit `b375e1d85c`, 2026-08-18,
//! "[ie/tiktok] Fix extractor", `InfoExtractor._generate_blockbuster_headers`): 2 to 8 headers
//! per request, each name 8 to 24 and each value 16 to 32 letters drawn from the twenty
//! lowercase consonants `bcdfghjklmnpqrstvwxz`. No vowel and no `y` means no name can spell a
//! real header (every registered one of eight letters or more has one), and such text is
//! always a valid header name and value. Names are distinct within a request.

use std::collections::HashSet;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// The letters names and values are made of.
pub const ALPHABET: &[u8; 20] = b"bcdfghjklmnpqrstvwxz";
/// How many headers a request gets (inclusive).
pub const COUNT: std::ops::RangeInclusive<usize> = 2..=8;
/// A name's length (inclusive).
pub const NAME_LEN: std::ops::RangeInclusive<usize> = 8..=24;
/// A value's length (inclusive).
pub const VALUE_LEN: std::ops::RangeInclusive<usize> = 16..=32;

/// Adds a fresh draw of junk headers to `headers`: a name `headers` already holds is drawn
/// again, so nothing the request carries is replaced.
pub fn add_to(headers: &mut HeaderMap) {
    let count = fastrand::usize(COUNT);
    let mut taken: HashSet<String> = HashSet::with_capacity(count);
    while taken.len() < count {
        let name = letters(NAME_LEN);
        if headers.contains_key(name.as_str()) || !taken.insert(name.clone()) {
            continue;
        }
        // Consonants only: always a valid lowercase name and a valid value.
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&letters(VALUE_LEN)),
        ) {
            headers.insert(name, value);
        }
    }
}

/// Whether `name` is one of ours: only letters of [`ALPHABET`], of a name's length.
pub fn is_junk(name: &str) -> bool {
    NAME_LEN.contains(&name.len()) && name.bytes().all(|b| ALPHABET.contains(&b))
}

/// Random letters of [`ALPHABET`], a length drawn from `len`.
fn letters(len: std::ops::RangeInclusive<usize>) -> String {
    let n = fastrand::usize(len);
    (0..n)
        .map(|_| char::from(ALPHABET[fastrand::usize(..ALPHABET.len())]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Header names a browser, a platform or a proxy sends (the `http` crate's registered
    /// names, the fetch-metadata and client-hint families, and the common `x-` ones).
    const KNOWN: &[&str] = &[
        "accept",
        "accept-charset",
        "accept-encoding",
        "accept-language",
        "accept-ranges",
        "access-control-request-headers",
        "access-control-request-method",
        "authorization",
        "cache-control",
        "connection",
        "content-encoding",
        "content-language",
        "content-length",
        "content-type",
        "cookie",
        "dnt",
        "expect",
        "forwarded",
        "from",
        "host",
        "if-match",
        "if-modified-since",
        "if-none-match",
        "if-range",
        "if-unmodified-since",
        "max-forwards",
        "origin",
        "pragma",
        "priority",
        "proxy-authorization",
        "range",
        "referer",
        "sec-ch-ua",
        "sec-ch-ua-mobile",
        "sec-ch-ua-platform",
        "sec-fetch-dest",
        "sec-fetch-mode",
        "sec-fetch-site",
        "sec-fetch-user",
        "sec-gpc",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "upgrade-insecure-requests",
        "user-agent",
        "via",
        "warning",
        "x-asbd-id",
        "x-csrftoken",
        "x-forwarded-for",
        "x-ig-app-id",
        "x-ig-www-claim",
        "x-requested-with",
    ];

    #[test]
    fn every_draw_follows_the_rule() {
        let mut counts = HashSet::new();
        for _ in 0..500 {
            let mut headers = HeaderMap::new();
            add_to(&mut headers);
            assert!(COUNT.contains(&headers.len()), "{}", headers.len());
            counts.insert(headers.len());
            for (name, value) in &headers {
                assert!(is_junk(name.as_str()), "{name}");
                let value = value.to_str().unwrap();
                assert!(VALUE_LEN.contains(&value.len()), "{value}");
                assert!(value.bytes().all(|b| ALPHABET.contains(&b)), "{value}");
            }
        }
        assert_eq!(
            counts.len(),
            COUNT.count(),
            "every count is drawn: {counts:?}"
        );
    }

    #[test]
    fn no_junk_name_can_be_a_real_header_and_none_replaces_one() {
        for known in KNOWN {
            assert!(!is_junk(known), "{known}");
        }
        // Every known name of a junk name's length has a letter outside the alphabet.
        assert!(
            KNOWN
                .iter()
                .filter(|n| NAME_LEN.contains(&n.len()))
                .all(|n| n.bytes().any(|b| !ALPHABET.contains(&b)))
        );
        let mut headers = HeaderMap::new();
        headers.insert("accept", HeaderValue::from_static("text/html"));
        add_to(&mut headers);
        assert_eq!(headers["accept"], "text/html");
        assert_eq!(
            headers.keys().filter(|n| is_junk(n.as_str())).count() + 1,
            headers.len()
        );
    }
}
