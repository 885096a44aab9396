//! The query ids a profile page preloads: its `RelayPrefetchedStreamCache` preloaders name each
//! query they ran, `{"queryID":"<digits>",…,"queryName":"<name>",…}`, so a page read tells the
//! ids the web app posts today, which the platform rotates every few weeks.
//!
//! Both members are found by their keys in the page's bytes (each preloader is a small object);
//! a `queryName` pairs with the nearest `queryID` within [`WINDOW`] bytes either side. Only the
//! queries asked for are returned, each once, with an id of digits.

use crate::cost;

/// How far apart the two members of one preloader may be.
const WINDOW: usize = 1024;

/// The most preloaders looked at in one page.
const MAX_PRELOADERS: usize = 64;

const QUERY_ID: &[u8] = b"\"queryID\":\"";
const QUERY_NAME: &[u8] = b"\"queryName\":\"";

/// The ids `page` preloads for the queries named in `wanted`, as (query, id).
pub fn query_ids(page: &[u8], wanted: &[&'static str]) -> Vec<(&'static str, String)> {
    let mut found: Vec<(&'static str, String)> = Vec::new();
    let mut from = 0;
    for _ in 0..MAX_PRELOADERS {
        let Some(at) = cost::find(&page[from..], QUERY_NAME) else {
            break;
        };
        let name_at = from + at + QUERY_NAME.len();
        from = name_at;
        let Some(name) = string_at(page, name_at) else {
            continue;
        };
        let Some(query) = wanted.iter().find(|q| q.as_bytes() == name) else {
            continue;
        };
        if found.iter().any(|(q, _)| q == query) {
            continue;
        }
        if let Some(id) = nearest_id(page, name_at) {
            found.push((query, id));
        }
    }
    found
}

/// The string value that starts at `at` (up to its closing quote, no escapes in it).
fn string_at(page: &[u8], at: usize) -> Option<&[u8]> {
    let rest = page.get(at..)?;
    let end = rest.iter().take(256).position(|&b| b == b'"')?;
    let value = &rest[..end];
    (!value.contains(&b'\\')).then_some(value)
}

/// The digits of the `queryID` nearest to `at`, within [`WINDOW`] bytes either side.
fn nearest_id(page: &[u8], at: usize) -> Option<String> {
    let start = at.saturating_sub(WINDOW);
    let end = (at + WINDOW).min(page.len());
    let window = &page[start..end];
    let mut best: Option<(usize, String)> = None;
    let mut from = 0;
    while let Some(found) = cost::find(&window[from..], QUERY_ID) {
        let value_at = from + found + QUERY_ID.len();
        from = value_at;
        let Some(value) = string_at(window, value_at) else {
            continue;
        };
        if value.is_empty() || value.len() > 32 || !value.iter().all(u8::is_ascii_digit) {
            continue;
        }
        let distance = (start + value_at).abs_diff(at);
        if best.as_ref().is_none_or(|(d, _)| distance < *d) {
            best = Some((distance, String::from_utf8_lossy(value).into_owned()));
        }
    }
    best.map(|(_, id)| id)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WANTED: [&str; 2] = ["PolarisProfilePageContentQuery", "PolarisLoggedOutQuery"];

    #[test]
    fn each_wanted_query_pairs_with_its_own_preloaders_id() {
        let page = br#"<script>{"require":[["RelayPrefetchedStreamCache","next",[],["adp_A",{"queryID":"111","variables":{"id":"1"},"queryName":"PolarisProfilePageContentQuery"}]],["X",{"queryName":"PolarisLoggedOutQuery","queryID":"222"}],["Y",{"queryID":"333","queryName":"SomethingElse"}]]}</script>"#;
        assert_eq!(
            query_ids(page, &WANTED),
            vec![
                ("PolarisProfilePageContentQuery", "111".to_owned()),
                ("PolarisLoggedOutQuery", "222".to_owned())
            ]
        );
    }

    #[test]
    fn ids_that_are_no_digits_or_too_far_are_not_taken() {
        let page = br#"{"queryID":"abc","queryName":"PolarisLoggedOutQuery"}"#;
        assert!(query_ids(page, &WANTED).is_empty());
        let far = format!(
            r#"{{"queryID":"444","pad":"{}","queryName":"PolarisLoggedOutQuery"}}"#,
            "x".repeat(WINDOW + 10)
        );
        assert!(query_ids(far.as_bytes(), &WANTED).is_empty());
        assert!(query_ids(b"", &WANTED).is_empty());
    }
}
