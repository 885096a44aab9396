//! The session values a platform hands one browser on one route in response headers (a claim
//! the client repeats), kept like its cookies.

use std::sync::Mutex;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::lock;

/// The longest session value kept: real claims and tokens are tens of bytes.
pub(super) const MAX_SESSION_VALUE_LEN: usize = 512;

/// The values one route was handed in response headers (see [`RouteLease::handed`]): the last
/// plausible one per name, for the few names the platform asked for.
#[derive(Debug, Default)]
pub(super) struct SessionValues(Mutex<Vec<(HeaderName, HeaderValue)>>);

impl SessionValues {
    /// Keeps, for each of `names`, the value `headers` hand out when it is plausible: not
    /// empty, at most [`MAX_SESSION_VALUE_LEN`] bytes of visible ASCII. Anything else leaves
    /// the value kept before.
    pub(super) fn keep_from(&self, names: &[HeaderName], headers: &HeaderMap) {
        for name in names {
            let Some(value) = headers.get(name) else {
                continue;
            };
            let plausible = !value.is_empty()
                && value.len() <= MAX_SESSION_VALUE_LEN
                && value.as_bytes().iter().all(u8::is_ascii_graphic);
            if !plausible {
                continue;
            }
            let mut kept = lock(&self.0);
            match kept.iter_mut().find(|(n, _)| n == name) {
                Some((_, old)) => *old = value.clone(),
                None => kept.push((name.clone(), value.clone())),
            }
        }
    }

    /// Keeps `value` for `name`, found other than in a response header (a token a page
    /// holds), when it is plausible as [`SessionValues::keep_from`] judges.
    pub(super) fn keep(&self, name: HeaderName, value: &str) {
        let Ok(value) = HeaderValue::from_str(value) else {
            return;
        };
        let mut headers = HeaderMap::new();
        headers.insert(name.clone(), value);
        self.keep_from(&[name], &headers);
    }

    /// The value kept for `name`.
    pub(super) fn value(&self, name: &HeaderName) -> Option<HeaderValue> {
        lock(&self.0)
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }
}
