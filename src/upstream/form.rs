//! The body of a POST: a form, `application/x-www-form-urlencoded`, as a web client posts one.
//!
//! Most sources are a GET of a URL; a source asked by a platform id (the photo-share profile
//! query) posts a form instead. Both clients send it the same way: this type owns the encoding
//! and the content type, so neither can drift from the other.

use bytes::Bytes;
use reqwest::header::HeaderValue;

/// The content type a form is posted with.
pub const FORM_CONTENT_TYPE: &str = "application/x-www-form-urlencoded";

/// A form's encoded body: what a request posts when it is not a GET.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Form(Bytes);

impl Form {
    /// Encodes `fields` in order (`a=1&b=2`, percent-encoded as browsers encode forms).
    pub fn new<'a>(fields: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut encoded = url::form_urlencoded::Serializer::new(String::new());
        encoded.extend_pairs(fields);
        Self(Bytes::from(encoded.finish()))
    }

    /// The encoded body.
    pub fn body(&self) -> Bytes {
        self.0.clone()
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
