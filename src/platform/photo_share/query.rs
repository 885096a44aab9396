//! The profile query (`PolarisProfilePageContentQuery`): the web client's own GraphQL request
//! for a profile, by the account's pk, as the photo-share `graphql` source posts it.
//!
//! `POST {base_url}/graphql/query` with the form fields `doc_id` (`photo_share.graphql_doc_id`),
//! `fb_api_req_friendly_name`, `variables={"id":"<pk>","render_surface":"PROFILE"}` and
//! `server_timestamps=true` (instaloader/instaloader@d3cd6397, 2026-04-15; yt-dlp/yt-dlp@f49b551a,
//! 2026-06-28), with the JSON request's headers and `X-FB-Friendly-Name` (instagrapi
//! subzeroid/instagrapi#2494, 2026-05-13). The answer is the profile JSON's envelope, sent as
//! `text/javascript` (mifi/SimpleInstaBot#329, 2026-09-14), with or without `"status":"ok"`, and
//! may come as several JSON objects one per line: the first that says something is read.

use super::{PhotoShareProfile, extract};
use crate::platform::Reading;
use crate::upstream::Form;
use crate::username::Username;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// The query's friendly name, in the form and in `X-FB-Friendly-Name`.
pub const FRIENDLY_NAME: &str = "PolarisProfilePageContentQuery";

/// The form of the query for the account `pk`, with the persisted query `doc_id`.
pub fn form(doc_id: &str, pk: &str) -> Form {
    let variables = serde_json::json!({ "id": pk, "render_surface": "PROFILE" }).to_string();
    Form::new([
        ("doc_id", doc_id),
        ("fb_api_req_friendly_name", FRIENDLY_NAME),
        ("variables", variables.as_str()),
        ("server_timestamps", "true"),
    ])
}

/// The query's headers: `api`, the profile JSON request's headers
/// ([`web_headers::api`](super::web_headers::api)), and the query's friendly name.
pub fn headers(mut api: HeaderMap) -> HeaderMap {
    api.insert(
        HeaderName::from_static("x-fb-friendly-name"),
        HeaderValue::from_static(FRIENDLY_NAME),
    );
    api
}

/// Reads an answer of the query: the whole body as one JSON document, else each line of it
/// (a streamed answer), the first reading that is not unreadable winning.
pub fn read(body: &[u8], name: &Username) -> Reading<PhotoShareProfile> {
    let whole = extract::from_api(body, name);
    if !matches!(whole, Reading::Unreadable(_)) {
        return whole;
    }
    body.split(|&b| b == b'\n')
        .filter(|line| !line.trim_ascii().is_empty())
        .skip_while(|line| line.len() == body.len())
        .map(|line| extract::from_api(line, name))
        .find(|reading| !matches!(reading, Reading::Unreadable(_)))
        .unwrap_or(whole)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;

    fn name(raw: &str) -> Username {
        Username::parse(Platform::PhotoShare, raw).expect("valid test name")
    }

    #[test]
    fn the_form_carries_the_doc_id_the_name_and_the_pk() {
        let body = form("27937681195819736", "77").body();
        let fields: Vec<(String, String)> = url::form_urlencoded::parse(&body)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let field = |k: &str| {
            fields
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(field("doc_id"), Some("27937681195819736"));
        assert_eq!(field("fb_api_req_friendly_name"), Some(FRIENDLY_NAME));
        assert_eq!(
            field("variables"),
            Some(r#"{"id":"77","render_surface":"PROFILE"}"#)
        );
        assert_eq!(field("server_timestamps"), Some("true"));
    }

    #[test]
    fn a_streamed_answer_is_read_line_by_line() {
        let user = r#"{"data":{"user":{"pk":"77","username":"tide.pool","follower_count":3}},"extensions":{"is_final":false}}"#;
        let body = format!("{user}\n{{\"extensions\":{{\"is_final\":true}}}}\n");
        match read(body.as_bytes(), &name("tide.pool")) {
            Reading::Found(p) => {
                assert_eq!((p.id.as_str(), p.edge_followed_by.count), ("77", Some(3)))
            }
            other => panic!("expected the profile, got {other:?}"),
        }
        assert!(matches!(
            read(b"nothing\nat all", &name("tide.pool")),
            Reading::Unreadable(_)
        ));
    }
}
