//! The body of a POST: a form, `application/x-www-form-urlencoded`, as a web client posts one.
//!
//! Most sources are a GET of a URL; a source asked by a platform id (the photo-share profile
//! query) posts a form instead. Both clients send it the same way: this type owns the encoding
//! and the content type, so neither can drift from the other.

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// The content type a form is posted with.
pub const FORM_CONTENT_TYPE: &str = "application/x-www-form-urlencoded";

/// A form's encoded body: what a request posts when it is not a GET, and the headers that
/// belong with it (a token the form carries that a header must repeat).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Form {
    body: Bytes,
    headers: HeaderMap,
}

impl Form {
    /// Encodes `fields` in order (`a=1&b=2`, percent-encoded as browsers encode forms).
    pub fn new<'a>(fields: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut encoded = url::form_urlencoded::Serializer::new(String::new());
        encoded.extend_pairs(fields);
        Self {
            body: Bytes::from(encoded.finish()),
            headers: HeaderMap::new(),
        }
    }

    /// The form, sent with header `name: value` as well (it wins over the site's headers).
    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// The encoded body.
    pub fn body(&self) -> Bytes {
        self.body.clone()
    }

    /// The headers that go with the form.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The `Content-Type` header value it is posted with.
    pub fn content_type() -> HeaderValue {
        HeaderValue::from_static(FORM_CONTENT_TYPE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_encoded_in_order_and_escaped() {
        let form = Form::new([("variables", r#"{"id":"1 2"}"#), ("doc_id", "9")]);
        assert_eq!(
            form.body(),
            "variables=%7B%22id%22%3A%221+2%22%7D&doc_id=9".as_bytes()
        );
    }
}
