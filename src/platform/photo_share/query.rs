//! The web client's two GraphQL profile queries, as a guest posts them to `POST
//! {base_url}/api/graphql`: the logged-out profile query by username (the `loggedout` source)
//! and the profile query by the account's pk (the `graphql` source).
//!
//! - `PolarisLoggedOutDesktopWWWProfileRootContentQuery`, variables `{"username":"<name>"}`:
//!   what a browser without a session asks since 2026-09, when the profile JSON answers every
//!   guest 401 `require_login` and the page walls datacenter addresses (a TypeScript
//!   lead-generation API's client and zippy1978/scrapn, 2026-09). Its answer is
//!   `{"data":{"xig_user_by_username":{…}}}`, the object the page's reader already reads
//!   (`pk` the user id, never its `id`).
//! - `PolarisProfilePageContentQuery`, variables `{"id":"<pk>","render_surface":"PROFILE",
//!   "enable_integrity_filters":true}` and the Relay provider variables (each `false`): required
//!   since mid-2026, without them the query answers 200 with a CRITICAL `execution error`
//!   (instaloader/instaloader#2696 onwards). Its answer is `{"data":{"user":{…}}}`.
//!
//! Both are posted as the web app posts them: `av=0`, `__d=www`, `__user=0`, `__a=1`,
//! `__comet_req=7`, `lsd`, `fb_api_caller_class=RelayModern`, `fb_api_req_friendly_name`,
//! `variables`, `server_timestamps=true`, `doc_id`; with the headers `X-FB-LSD` (the same
//! token), `X-FB-Friendly-Name`, `X-IG-App-ID`, `X-ASBD-ID`, `X-IG-WWW-Claim`, `Origin` and
//! `Referer` the site, `Sec-Fetch-Mode: cors`, `Sec-Fetch-Site: same-origin`. Peers report
//! that any `lsd` token is accepted; the one a page this route read handed out
//! (`["LSD",[],{"token":"…"}`) is repeated, else a random one is drawn per request.
//!
//! What an answer means ([`said`]): the answer may start with `for (;;);` (stripped) and may
//! come as several JSON objects, one per line. `"error":1357001` is the platform asking for a
//! login (a refusal); an error saying the document was not found, or a CRITICAL execution
//! error with `"data": null`, is **the query changed** (its id retired or its variables
//! moved): never a not-found. A null user with an error naming `field_exception` is the
//! platform's own "no such user".

use std::fmt::Write as _;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ORIGIN};
use serde::Deserialize;
use serde::de::IgnoredAny;

use super::parts::answerable;
use super::{PhotoShareProfile, extract, xig};
use crate::platform::Reading;
use crate::upstream::Form;
use crate::username::Username;

/// The logged-out profile query's friendly name.
pub const LOGGEDOUT_QUERY: &str = "PolarisLoggedOutDesktopWWWProfileRootContentQuery";

/// The profile query's friendly name (by pk).
pub const PROFILE_QUERY: &str = "PolarisProfilePageContentQuery";

/// The prefix some answers of the web API carry to stop a page from running them as script.
const SCRIPT_GUARD: &[u8] = b"for (;;);";

/// The platform's error code for "log in to see this" (peers met it on the query in 2026).
const LOGIN_REQUIRED: u64 = 1_357_001;

/// How much of an answer is looked at for its errors: error answers are a few hundred bytes.
const ERRORS_SCAN_LIMIT: usize = 64 * 1024;

/// The form of a query: `friendly` with `variables`, persisted as `doc_id`, carrying `lsd`;
/// its `X-FB-LSD` and `X-FB-Friendly-Name` headers travel with it.
fn form(friendly: &'static str, doc_id: &str, variables: &str, lsd: &str) -> Form {
    let mut form = Form::new([
        ("av", "0"),
        ("__d", "www"),
        ("__user", "0"),
        ("__a", "1"),
        ("__comet_req", "7"),
        ("lsd", lsd),
        ("fb_api_caller_class", "RelayModern"),
        ("fb_api_req_friendly_name", friendly),
        ("variables", variables),
        ("server_timestamps", "true"),
        ("doc_id", doc_id),
    ]);
    if let Ok(value) = HeaderValue::from_str(lsd) {
        form = form.with_header(HeaderName::from_static("x-fb-lsd"), value);
    }
    form.with_header(
        HeaderName::from_static("x-fb-friendly-name"),
        HeaderValue::from_static(friendly),
    )
}

/// The logged-out profile query for `name`.
pub fn loggedout_form(doc_id: &str, name: &str, lsd: &str) -> Form {
    let variables = serde_json::json!({ "username": name }).to_string();
    form(LOGGEDOUT_QUERY, doc_id, &variables, lsd)
}

/// The profile query for the account `pk`, with the Relay provider variables `providers`
/// (each `false`).
pub fn by_pk_form(doc_id: &str, pk: &str, providers: &[String], lsd: &str) -> Form {
    let mut variables = serde_json::Map::new();
    variables.insert("id".into(), pk.into());
    variables.insert("render_surface".into(), "PROFILE".into());
    variables.insert("enable_integrity_filters".into(), true.into());
    for name in providers {
        variables.insert(name.clone(), false.into());
    }
    let variables = serde_json::Value::Object(variables).to_string();
    form(PROFILE_QUERY, doc_id, &variables, lsd)
}

/// The name a route keeps a page's `lsd` token under (its session values).
pub const LSD_VALUE: &str = "x-fb-lsd";

/// The `lsd` token a page hands out, `["LSD",[],{"token":"…"}`, when it holds a plausible one.
pub fn page_lsd(page: &[u8]) -> Option<&str> {
    const MARK: &[u8] = b"[\"LSD\",[],{\"token\":\"";
    let at = crate::cost::find(page, MARK)? + MARK.len();
    let rest = &page[at..];
    let end = rest.iter().take(128).position(|&b| b == b'"')?;
    let token = std::str::from_utf8(&rest[..end]).ok()?;
    let plausible = !token.is_empty()
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b':');
    plausible.then_some(token)
}

/// A fresh `lsd` token: 22 characters of the alphabet the web app's tokens use.
pub fn random_lsd() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
    let mut token = String::with_capacity(22);
    for _ in 0..22 {
        let at = fastrand::usize(..ALPHABET.len());
        let _ = token.write_char(char::from(ALPHABET[at]));
    }
    token
}

/// The queries' headers: `api`, the JSON request's headers (app id, ASBD id, claim, CSRF,
/// fetch metadata, referer), and the site's origin.
pub fn headers(mut api: HeaderMap, origin: &str) -> HeaderMap {
    if let Ok(value) = HeaderValue::from_str(origin) {
        api.insert(ORIGIN, value);
    }
    api
}

/// The answer without the `for (;;);` guard some answers start with.
pub fn unguarded(body: &[u8]) -> &[u8] {
    let start = body.trim_ascii_start();
    start
        .strip_prefix(SCRIPT_GUARD)
        .map_or(start, <[u8]>::trim_ascii_start)
}

/// What a query's answer says before its user is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Said {
    /// Nothing about the query itself: read the user.
    Data,
    /// The platform wants a login (`"error":1357001`): a refusal.
    LoginRequired,
    /// The query changed: its document id is unknown, or its variables no longer do
    /// (a CRITICAL execution error with no data).
    Changed(&'static str),
    /// No such user: a null root with a `field_exception` error.
    NoSuchUser,
}

/// One error of a GraphQL answer.
#[derive(Deserialize)]
struct QueryError {
    #[serde(default)]
    message: String,
    #[serde(default)]
    severity: String,
    #[serde(default)]
    description: String,
}

/// The members of an answer that say what it is, before its user is read.
#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    errors: Vec<QueryError>,
    /// The web API's numeric error (`1357001`), with `errorSummary` beside it.
    #[serde(default)]
    error: Option<u64>,
    /// Present and not `null` when the query ran.
    #[serde(default)]
    data: Option<IgnoredAny>,
}

/// What the first JSON object of a query's answer (`body`, unguarded) says of the query.
pub fn said(body: &[u8]) -> Said {
    let head = &body[..body.len().min(ERRORS_SCAN_LIMIT)];
    let first = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let parsed =
        serde_json::from_slice::<Head>(body).or_else(|_| serde_json::from_slice::<Head>(first));
    let Ok(head) = parsed else {
        return Said::Data;
    };
    if head.error == Some(LOGIN_REQUIRED) {
        return Said::LoginRequired;
    }
    let text = |e: &QueryError| format!("{} {}", e.message, e.description).to_ascii_lowercase();
    for error in &head.errors {
        let text = text(error);
        let document_missing =
            (text.contains("document") || text.contains("persisted")) && text.contains("not found");
        if document_missing || text.contains("persistedquerynotfound") {
            return Said::Changed("document_not_found");
        }
    }
    if head.data.is_none() {
        if head
            .errors
            .iter()
            .any(|e| text(e).contains("field_exception"))
        {
            return Said::NoSuchUser;
        }
        let critical = head
            .errors
            .iter()
            .any(|e| e.severity.eq_ignore_ascii_case("critical"));
        if critical {
            return Said::Changed("execution_error");
        }
    }
    if head.data.is_some()
        && head
            .errors
            .iter()
            .any(|e| text(e).contains("field_exception"))
        && !body_has_user(body)
    {
        return Said::NoSuchUser;
    }
    Said::Data
}

/// The logged-out query's user: `data.xig_user_by_username`, read as the page's reader reads
/// it (identity by `username`, the id its `pk`). A null user is [`Reading::NotFound`], which
/// the site takes for what the platform also says when throttling; an answer without the
/// member is unreadable.
pub fn read_loggedout(body: &[u8], name: &Username) -> Reading<PhotoShareProfile> {
    let scan = xig::scan(body, name.into(), &xig::Keys::new());
    if let Some(profile) = scan.profile {
        return answerable(profile);
    }
    if scan.other_user {
        return Reading::Unreadable("the query answered about another user".to_owned());
    }
    if let Some(broken) = scan.broken {
        return Reading::Unreadable(broken);
    }
    if crate::cost::find(body, b"\"xig_user_by_username\"").is_some() {
        return Reading::NotFound;
    }
    Reading::Unreadable("no xig_user_by_username in the query's answer".to_owned())
}

/// The profile query's user: the whole body as one JSON document, else each line of it (a
/// streamed answer), the first reading that is not unreadable winning.
pub fn read_by_pk(body: &[u8], name: &Username) -> Reading<PhotoShareProfile> {
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

/// Whether the answer names a user object at all (a `"username"` member).
fn body_has_user(body: &[u8]) -> bool {
    crate::cost::find(body, b"\"username\"").is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(form: &Form) -> Vec<(String, String)> {
        url::form_urlencoded::parse(&form.body())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }

    #[test]
    fn the_logged_out_query_is_posted_field_by_field_as_the_web_app_posts_it() {
        let form = loggedout_form("27981003384861049", "lumen.trails", "AVqbxe3J_YA");
        let expected = [
            ("av", "0"),
            ("__d", "www"),
            ("__user", "0"),
            ("__a", "1"),
            ("__comet_req", "7"),
            ("lsd", "AVqbxe3J_YA"),
            ("fb_api_caller_class", "RelayModern"),
            ("fb_api_req_friendly_name", LOGGEDOUT_QUERY),
            ("variables", r#"{"username":"lumen.trails"}"#),
            ("server_timestamps", "true"),
            ("doc_id", "27981003384861049"),
        ];
        let got = fields(&form);
        let want: Vec<(String, String)> = expected
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        assert_eq!(got, want);
        assert_eq!(form.headers()["x-fb-lsd"], "AVqbxe3J_YA");
        assert_eq!(form.headers()["x-fb-friendly-name"], LOGGEDOUT_QUERY);
    }

    #[test]
    fn the_profile_query_carries_the_integrity_filters_and_the_provider_variables() {
        let providers =
            vec!["__relay_internal__pv__PolarisShortDramaEnabledrelayprovider".to_owned()];
        let form = by_pk_form("28036671149327607", "77", &providers, "tok");
        let got = fields(&form);
        let field = |k: &str| {
            got.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(field("doc_id"), Some("28036671149327607"));
        assert_eq!(field("fb_api_req_friendly_name"), Some(PROFILE_QUERY));
        let variables: serde_json::Value =
            serde_json::from_str(field("variables").unwrap()).unwrap();
        assert_eq!(
            variables,
            serde_json::json!({
                "id": "77",
                "render_surface": "PROFILE",
                "enable_integrity_filters": true,
                "__relay_internal__pv__PolarisShortDramaEnabledrelayprovider": false,
            })
        );
        assert_eq!(field("lsd"), Some("tok"));
        assert_eq!(form.headers()["x-fb-lsd"], "tok");
    }

    #[test]
    fn a_random_token_is_22_characters_of_the_token_alphabet() {
        let token = random_lsd();
        assert_eq!(token.len(), 22);
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        );
        assert_ne!(token, random_lsd());
    }

    #[test]
    fn what_an_answer_says_of_the_query() {
        for (body, expected) in [
            (
                &br#"{"data":{"xig_user_by_username":{"username":"a"}}}"#[..],
                Said::Data,
            ),
            (
                br#"{"errors":[{"message":"execution error","severity":"CRITICAL"}],"data":null}"#,
                Said::Changed("execution_error"),
            ),
            (
                br#"{"errors":[{"message":"PersistedQueryNotFound","severity":"CRITICAL"}]}"#,
                Said::Changed("document_not_found"),
            ),
            (
                br#"{"errors":[{"message":"Document 123 not found"}],"data":null}"#,
                Said::Changed("document_not_found"),
            ),
            (
                br#"{"error":1357001,"errorSummary":"Log in to continue","payload":null}"#,
                Said::LoginRequired,
            ),
            (
                br#"{"data":{"xig_user_by_username":null},"errors":[{"message":"field_exception: no user","severity":"ERROR","path":["xig_user_by_username"]}]}"#,
                Said::NoSuchUser,
            ),
            (
                br#"{"data":null,"errors":[{"message":"A server error field_exception occured.","severity":"CRITICAL"}]}"#,
                Said::NoSuchUser,
            ),
            (b"not json at all", Said::Data),
        ] {
            assert_eq!(said(body), expected, "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn a_user_named_field_exception_in_a_bio_is_no_error() {
        let body =
            br#"{"data":{"xig_user_by_username":{"username":"a","biography":"field_exception"}}}"#;
        assert_eq!(said(body), Said::Data);
    }

    fn name(raw: &str) -> Username {
        Username::parse(crate::platform::Platform::PhotoShare, raw).expect("valid test name")
    }

    #[test]
    fn the_logged_out_answer_is_read_by_identity_with_the_pk_as_id() {
        let body = br#"{"data":{"xig_user_by_username":{"id":"17841400000000077","pk":"77","username":"tide.pool","full_name":"T","follower_count":3,"following_count":4,"media_count":null,"is_private":false}},"extensions":{"is_final":true}}"#;
        match read_loggedout(body, &name("Tide.Pool")) {
            Reading::Found(p) => {
                assert_eq!(p.id, "77");
                assert_eq!(p.edge_followed_by.count, Some(3));
                assert_eq!(p.edge_owner_to_timeline_media.count, None);
            }
            other => panic!("expected the profile, got {other:?}"),
        }
        assert!(matches!(
            read_loggedout(body, &name("someone.else")),
            Reading::Unreadable(_)
        ));
        let null = br#"{"data":{"xig_user_by_username":null}}"#;
        assert_eq!(read_loggedout(null, &name("tide.pool")), Reading::NotFound);
        assert!(matches!(
            read_loggedout(b"{\"data\":{}}", &name("tide.pool")),
            Reading::Unreadable(_)
        ));
    }

    #[test]
    fn a_streamed_profile_query_answer_is_read_line_by_line() {
        let user = r#"{"data":{"user":{"pk":"77","username":"tide.pool","follower_count":3}},"extensions":{"is_final":false}}"#;
        let body = format!("{user}\n{{\"extensions\":{{\"is_final\":true}}}}\n");
        match read_by_pk(body.as_bytes(), &name("tide.pool")) {
            Reading::Found(p) => {
                assert_eq!((p.id.as_str(), p.edge_followed_by.count), ("77", Some(3)))
            }
            other => panic!("expected the profile, got {other:?}"),
        }
        assert!(matches!(
            read_by_pk(b"nothing\nat all", &name("tide.pool")),
            Reading::Unreadable(_)
        ));
    }

    #[test]
    fn a_pages_lsd_token_is_taken_when_plausible() {
        let page = br#"<script>{"define":[["LSD",[],{"token":"AVqbxe3J_YA"},323]]}</script>"#;
        assert_eq!(page_lsd(page), Some("AVqbxe3J_YA"));
        assert_eq!(page_lsd(br#"["LSD",[],{"token":"a b"}"#), None);
        assert_eq!(page_lsd(br#"["LSD",[],{"token":""}"#), None);
        assert_eq!(page_lsd(b"nothing"), None);
    }

    #[test]
    fn the_script_guard_is_stripped() {
        assert_eq!(unguarded(b"for (;;);{\"a\":1}"), b"{\"a\":1}");
        assert_eq!(unguarded(b"  {\"a\":1}"), b"{\"a\":1}");
    }
}
