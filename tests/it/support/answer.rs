//! What the service answered, read whole (status, headers, body), with the assertions every
//! suite makes of an answer: a profile (its exact JSON), a problem (its status, media type,
//! fields and `code`), a header's value.

use std::fmt::Display;

use axum::http::HeaderMap;
use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

/// One answer of the service. The `expect_*` methods assert and hand the answer back, so they
/// chain: `app.lookup(..).await.expect_problem(429, "upstream_blocked").expect_header(..)`.
#[derive(Debug)]
pub struct Answer {
    status: u16,
    headers: HeaderMap,
    body: Bytes,
    /// Said first by every failed assertion: which case of a loop this was.
    about: String,
}

impl Answer {
    /// Reads `response` whole.
    pub async fn read(response: reqwest::Response) -> Self {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.bytes().await.expect("the whole answer");
        Self {
            status,
            headers,
            body,
            about: String::new(),
        }
    }

    /// Names the case in every failed assertion about this answer (a loop's item).
    pub fn about(mut self, case: impl Display) -> Self {
        self.about = format!("{case}: ");
        self
    }

    /// The HTTP status.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Every header.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The header `name`, which must be there, as text.
    #[track_caller]
    pub fn header(&self, name: &str) -> &str {
        let about = &self.about;
        self.headers
            .get(name)
            .unwrap_or_else(|| panic!("{about}no {name} header in {:?}", self.headers))
            .to_str()
            .unwrap_or_else(|_| panic!("{about}{name} is not text"))
    }

    /// Whether the header `name` is there.
    pub fn has(&self, name: &str) -> bool {
        self.headers.contains_key(name)
    }

    /// `Retry-After`, which must be there, in seconds.
    #[track_caller]
    pub fn retry_after(&self) -> u64 {
        self.number("retry-after")
    }

    /// `Age`, which must be there, in seconds.
    #[track_caller]
    pub fn age(&self) -> u64 {
        self.number("age")
    }

    #[track_caller]
    fn number(&self, name: &str) -> u64 {
        let value = self.header(name);
        value
            .parse()
            .unwrap_or_else(|_| panic!("{}{name} {value:?} is not a number", self.about))
    }

    /// The body's bytes.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON, which it must be.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{}not JSON ({e}): {}", self.about, self.text()))
    }

    /// The body as JSON without a problem's `trace_id` (each request's own): what two answers
    /// to the same question share.
    pub fn shared_json(&self) -> Value {
        let mut body = self.json();
        if let Some(fields) = body.as_object_mut() {
            fields.remove("trace_id");
        }
        body
    }

    /// The problem document of an error answer, after checking its media type and fields (its
    /// `trace_id`, each request's own, checked and left out).
    #[track_caller]
    pub fn problem(&self) -> Value {
        let about = &self.about;
        assert_eq!(
            self.headers
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or(""),
            "application/problem+json",
            "{about}error bodies are problem documents"
        );
        let body = self.json();
        for key in ["type", "title", "status", "detail", "code"] {
            assert!(
                body.get(key).is_some(),
                "{about}problem lacks {key}: {body}"
            );
        }
        let trace_id = body["trace_id"].as_str().unwrap_or_default();
        assert!(
            trace_id.len() == 32 && trace_id.bytes().all(|b| b.is_ascii_hexdigit()),
            "{about}problem lacks its trace_id: {body}"
        );
        self.shared_json()
    }

    /// Asserts the status.
    #[track_caller]
    pub fn expect_status(self, status: u16) -> Self {
        assert_eq!(
            self.status,
            status,
            "{}status; the body: {:.300}",
            self.about,
            self.text()
        );
        self
    }

    /// Asserts a 200 whose JSON body is `expected`, exactly.
    #[track_caller]
    pub fn expect_profile(self, expected: &impl Serialize) -> Self {
        let this = self
            .expect_status(200)
            .expect_header("content-type", "application/json");
        let expected = serde_json::to_value(expected).expect("a JSON body");
        assert_eq!(this.json(), expected, "{}the profile", this.about);
        this
    }

    /// Asserts an error answer: `status`, a problem document, and its `code`.
    #[track_caller]
    pub fn expect_problem(self, status: u16, code: &str) -> Self {
        let this = self.expect_status(status);
        assert_eq!(
            this.problem()["code"],
            code,
            "{}the problem's code",
            this.about
        );
        this
    }

    /// Asserts a block as the API answers every one (the contract's error table): 429
    /// `upstream_blocked` with a `Retry-After` of at most an hour.
    #[track_caller]
    pub fn expect_blocked(self) -> Self {
        let this = self.expect_problem(429, "upstream_blocked");
        let wait = this.retry_after();
        assert!(
            wait <= 3600,
            "{}Retry-After {wait} is over an hour",
            this.about
        );
        this
    }

    /// Asserts the header `name` is `value`.
    #[track_caller]
    pub fn expect_header(self, name: &str, value: &str) -> Self {
        assert_eq!(self.header(name), value, "{}{name}", self.about);
        self
    }

    /// Asserts the `RateLimit` header says `left` units remain in the caller's quota.
    #[track_caller]
    pub fn expect_quota_left(self, left: u32) -> Self {
        let said = self.header("ratelimit");
        assert!(
            said.starts_with(&format!("\"per-key\";r={left};")),
            "{}{said}",
            self.about
        );
        self
    }

    /// Asserts the header `name` is there.
    #[track_caller]
    pub fn expect_has(self, name: &str) -> Self {
        assert!(self.has(name), "{}no {name} header", self.about);
        self
    }
}
