//! Header values built from text and numbers, for the headers every answer carries
//! (`RateLimit`, `Cache-Control`, `Age`): one allocation each, no formatting machinery.
//!
//! `format!` then `HeaderValue::from_str` costs two allocations and a pass through
//! `core::fmt` per value; on a cached lookup that was about a tenth of the handler's time.

use axum::http::HeaderValue;

/// One piece of a header value: text as is, or a number in decimal.
#[derive(Clone, Copy, Debug)]
pub enum Part<'a> {
    /// Text, copied as is.
    Text(&'a str),
    /// A number, written in decimal.
    Number(u64),
}

/// The longest value [`joined`] writes.
pub const MAX_LEN: usize = 128;

/// The header value made of `parts`, in order, assembled on the stack (`None` when it would be
/// longer than [`MAX_LEN`] or is not a valid header value).
pub fn joined(parts: &[Part<'_>]) -> Option<HeaderValue> {
    let mut numbers = itoa::Buffer::new();
    let mut text = [0u8; MAX_LEN];
    let mut len = 0;
    for part in parts {
        let bytes = match *part {
            Part::Text(t) => t.as_bytes(),
            Part::Number(n) => numbers.format(n).as_bytes(),
        };
        let end = len + bytes.len();
        text.get_mut(len..end)?.copy_from_slice(bytes);
        len = end;
    }
    HeaderValue::from_bytes(&text[..len]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_text_and_numbers_in_order() {
        let value = joined(&[Part::Text("a="), Part::Number(u64::MAX), Part::Text(";b")]);
        assert_eq!(value.unwrap(), "a=18446744073709551615;b");
        assert_eq!(joined(&[Part::Number(0)]).unwrap(), "0");
        assert!(joined(&[Part::Text("bad\nvalue")]).is_none());
        let long = "x".repeat(MAX_LEN);
        assert!(joined(&[Part::Text(&long)]).is_some());
        assert!(joined(&[Part::Text(&long), Part::Number(1)]).is_none());
    }
}
