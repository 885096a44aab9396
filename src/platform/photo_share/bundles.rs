//! Where the queries' ids are when no profile page reads: the web app's JS bundles, which every
//! page of the platform links (the login page too, the one a walled client is sent to). Each
//! query is a module, `__d("<Query>_instagramRelayOperation",[],(function(…){e.exports="<id>"}),null);`
//! (peer A reads them so, at most once per 6 h).
//!
//! [`linked_scripts`] lists the bundles a page links (`<script src>`), [`operation_ids`] finds the
//! ids of the wanted queries in one bundle. Both only read bytes.

use url::Url;

use crate::cost;

/// The most bundles one page's reading asks for.
pub const MAX_BUNDLES: usize = 30;

/// How far after a module's name its `exports` may be.
const WINDOW: usize = 512;

/// The bundles `page` (fetched from `page_url`) links: each `<script src>`, resolved against
/// the page, `https` on any named host or on the page's own origin (loopback tests serve
/// `http`); IP literals elsewhere are never asked. At most [`MAX_BUNDLES`], each once.
pub fn linked_scripts(page: &[u8], page_url: &Url) -> Vec<Url> {
    let mut found: Vec<Url> = Vec::new();
    for script in crate::html::scripts(page) {
        let Some(src) = script.attr("src") else {
            continue;
        };
        let src = String::from_utf8_lossy(src).replace("&amp;", "&");
        let Ok(url) = page_url.join(src.trim()) else {
            continue;
        };
        let same_origin = url.origin() == page_url.origin();
        let named_https =
            url.scheme() == "https" && matches!(url.host(), Some(url::Host::Domain(_)));
        if (same_origin || named_https) && !found.contains(&url) {
            found.push(url);
        }
        if found.len() == MAX_BUNDLES {
            break;
        }
    }
    found
}

/// The ids `bundle` exports for the queries in `wanted`, as (query, id).
pub fn operation_ids(bundle: &[u8], wanted: &[&'static str]) -> Vec<(&'static str, String)> {
    let mut found = Vec::new();
    for query in wanted {
        let module = format!("__d(\"{query}_instagramRelayOperation\"");
        let Some(at) = cost::find(bundle, module.as_bytes()) else {
            continue;
        };
        let after = at + module.len();
        let window = &bundle[after..(after + WINDOW).min(bundle.len())];
        let Some(exports) = cost::find(window, b"exports=\"") else {
            continue;
        };
        let digits: Vec<u8> = window[exports + 9..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .copied()
            .collect();
        let closed = window.get(exports + 9 + digits.len()) == Some(&b'"');
        if closed && !digits.is_empty() && digits.len() <= 32 {
            found.push((*query, String::from_utf8_lossy(&digits).into_owned()));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const WANTED: [&str; 2] = ["PolarisLoggedOutQuery", "PolarisProfilePageContentQuery"];

    #[test]
    fn a_bundle_exports_each_querys_id() {
        let js = br#"__d("Other_instagramRelayOperation",[],(function(a,b,c,d,e,f){e.exports="1"}),null);
__d("PolarisLoggedOutQuery_instagramRelayOperation",[],(function(a,b,c,d,e,f){e.exports="27981003384861049"}),null);
__d("PolarisProfilePageContentQuery_instagramRelayOperation",[],(function(a,b,c,d,e,f){e.exports="28036671149327607"}),null);"#;
        assert_eq!(
            operation_ids(js, &WANTED),
            vec![
                ("PolarisLoggedOutQuery", "27981003384861049".to_owned()),
                (
                    "PolarisProfilePageContentQuery",
                    "28036671149327607".to_owned()
                ),
            ]
        );
        assert!(operation_ids(b"", &WANTED).is_empty());
        let open = br#"__d("PolarisLoggedOutQuery_instagramRelayOperation",[],(function(a,b,c,d,e,f){e.exports="123"#;
        assert!(
            operation_ids(open, &WANTED).is_empty(),
            "an unclosed id is none"
        );
    }

    #[test]
    fn a_page_links_its_bundles_on_its_origin_or_named_https_hosts_only() {
        let page_url: Url = "http://127.0.0.1:9/accounts/login/".parse().unwrap();
        let page = br#"<html><script src="/static/a.js?x=1&amp;y=2"></script><script src="https://static.cdn.example/b.js"></script><script src="http://10.0.0.1/c.js"></script><script src="https://10.0.0.1/d.js"></script><script>inline()</script><script src="/static/a.js?x=1&amp;y=2"></script></html>"#;
        let urls: Vec<String> = linked_scripts(page, &page_url)
            .iter()
            .map(Url::to_string)
            .collect();
        assert_eq!(
            urls,
            [
                "http://127.0.0.1:9/static/a.js?x=1&y=2",
                "https://static.cdn.example/b.js"
            ]
        );
    }
}
