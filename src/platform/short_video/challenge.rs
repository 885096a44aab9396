//! The platform's WAF proof-of-work page ("Please wait…", about 1.5 KB, HTTP 200).
//!
//! Instead of the profile, the platform sometimes serves a tiny page whose script computes a
//! cookie and reloads. Its inputs sit in the `class` attribute of hidden elements:
//!
//! - `<p id="cs" class="B64">`: base64 (standard or URL-safe, padding optional) of a JSON
//!   object `{"v": {"a": B64, "b": …, "c": B64}, …}`;
//! - `<p id="wci" class="NAME">`: the cookie name (`_wafchallengeid` when absent);
//! - optionally `<p id="rci" class="NAME2">` and `<p id="rs" class="VALUE2">`: a second cookie.
//!
//! The answer is the integer `i` in `0..=1_000_000` with `SHA-256(a ‖ decimal(i)) == c`; the
//! cookie is the same JSON with `"d": base64(decimal(i))` added at the top level, base64-encoded.
//! [`detect`] is cheap enough to run on every fetched page; [`solve`] is pure CPU work for a
//! blocking thread.

use std::fmt;

use base64::Engine;
use base64::alphabet;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::cost;
use crate::html::{self, Tag, Token};

/// Standard-alphabet base64 that accepts its input with or without `=` padding, as the WAF
/// page writes it either way.
pub const STANDARD_PAD_INDIFFERENT: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The cookie name the platform's script uses when the page names none.
pub const DEFAULT_COOKIE_NAME: &str = "_wafchallengeid";

/// The largest answer the platform's script tries; [`solve`] never searches beyond it.
pub const MAX_ANSWER: u32 = 1_000_000;

/// Challenge pages are about 1.5 KB; anything much bigger is a real page and is not parsed.
const MAX_CHALLENGE_PAGE: usize = 64 * 1024;

/// A detected challenge: what [`solve`] needs, as the page gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WafChallenge {
    /// The `class` of `<p id="cs">`: base64 of the challenge JSON (decoded only by `solve`).
    challenge: String,
    /// The name of the cookie that carries the solution.
    cookie_name: String,
    /// The optional second cookie (`rci` name, `rs` value), sent back unchanged.
    extra_cookie: Option<(String, String)>,
}

impl WafChallenge {
    /// The name of the cookie the solution goes in, for logs and metrics.
    pub fn cookie_name(&self) -> &str {
        &self.cookie_name
    }
}

/// The challenge on `page`, if it is a challenge page; costs next to nothing on other pages.
///
/// A page qualifies when it is small and has an element with `id="cs"` and a non-empty
/// `class`. Whether that class decodes is left to [`solve`], so a malformed challenge is still
/// recognised as a block rather than taken for a broken profile page.
pub fn detect(page: &[u8]) -> Option<WafChallenge> {
    if page.len() > MAX_CHALLENGE_PAGE || cost::find(page, b"cs").is_none() {
        return None;
    }
    let (mut cs, mut wci, mut rci, mut rs) = (None, None, None, None);
    for tag in start_tags(page) {
        let Some(id) = tag.attr("id") else { continue };
        let slot = match id {
            b"cs" => &mut cs,
            b"wci" => &mut wci,
            b"rci" => &mut rci,
            b"rs" => &mut rs,
            _ => continue,
        };
        if slot.is_none() {
            *slot = Some(text(tag.attr("class").unwrap_or_default()));
        }
    }
    let challenge = cs.filter(|c| !c.is_empty())?;
    let cookie_name = wci
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| DEFAULT_COOKIE_NAME.to_owned());
    let extra_cookie = match (rci, rs) {
        (Some(name), Some(value)) if !name.is_empty() => Some((name, value)),
        _ => None,
    };
    Some(WafChallenge {
        challenge,
        cookie_name,
        extra_cookie,
    })
}

/// Solves `ch` trying at most `max_iterations` candidates (and never more than
/// `0..=MAX_ANSWER`): the cookies to send back as `(name, value)` pairs, or `None` when the
/// challenge does not decode or has no answer within the bound.
pub fn solve(ch: &WafChallenge, max_iterations: u32) -> Option<Vec<(String, String)>> {
    let json = decode_b64(ch.challenge.as_bytes())?;
    let mut fields: Fields = serde_json::from_slice(&json).ok()?;
    let v = fields.get("v")?;
    let prefix = decode_b64(v.get("a")?.as_str()?.as_bytes())?;
    let expected = decode_b64(v.get("c")?.as_str()?.as_bytes())?;
    let answer = search(&prefix, &expected, max_iterations)?;
    fields.set("d", Value::String(STANDARD.encode(answer.to_string())));
    let cookie = STANDARD.encode(serde_json::to_vec(&fields).ok()?);
    let mut cookies = vec![(ch.cookie_name.clone(), cookie)];
    cookies.extend(ch.extra_cookie.clone());
    Some(cookies)
}

/// The answer `i` with `SHA-256(prefix ‖ decimal(i)) == expected`, hashing the prefix once.
fn search(prefix: &[u8], expected: &[u8], max_iterations: u32) -> Option<u32> {
    if expected.len() != 32 {
        return None;
    }
    let mut base = Sha256::new();
    base.update(prefix);
    let end = u64::from(max_iterations).min(u64::from(MAX_ANSWER) + 1);
    let mut digits = [0u8; 10];
    (0..end as u32).find(|&i| {
        let mut hasher = base.clone();
        hasher.update(decimal(i, &mut digits));
        hasher.finalize().as_slice() == expected
    })
}

/// `n` in decimal ASCII, written into `buf` without allocating.
fn decimal(mut n: u32, buf: &mut [u8; 10]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[at..];
        }
    }
}

/// Base64 in either alphabet, with or without padding, ignoring whitespace.
fn decode_b64(s: &[u8]) -> Option<Vec<u8>> {
    let standard: Vec<u8> = s
        .iter()
        .filter(|b| !b.is_ascii_whitespace())
        .map(|&b| match b {
            b'-' => b'+',
            b'_' => b'/',
            b => b,
        })
        .collect();
    STANDARD_PAD_INDIFFERENT.decode(standard).ok()
}

/// The challenge JSON's top-level fields in their original order, so the cookie keeps every
/// field the platform sent (serde_json's own map would sort them).
struct Fields(Vec<(String, Value)>);

impl Fields {
    fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn set(&mut self, key: &str, value: Value) {
        self.0.retain(|(k, _)| k != key);
        self.0.push((key.to_owned(), value));
    }
}

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldsVisitor;
        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
                let mut fields = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    fields.push(entry);
                }
                Ok(Fields(fields))
            }
        }
        deserializer.deserialize_map(FieldsVisitor)
    }
}

impl Serialize for Fields {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// An attribute value as the platform's script reads it (`className`, trimmed), lossily.
fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim().to_owned()
}

/// Every start tag of `page`, those of elements without markup (`<script>`, `<title>`, …)
/// included; what a script writes or a comment holds is text, never a tag.
fn start_tags(page: &[u8]) -> impl Iterator<Item = Tag<'_>> {
    html::tokens(page).filter_map(|token| match token {
        Token::Start(tag) | Token::Element(tag, _) => Some(tag),
        Token::Text(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    use super::*;

    /// A challenge page whose answer is `answer`, with the cs payload encoded by `encode`.
    fn page(answer: u32, encode: impl Fn(&[u8]) -> String, extra: &str) -> String {
        let prefix = b"invented-prefix-\x00\xff";
        let digest = Sha256::new()
            .chain_update(prefix)
            .chain_update(answer.to_string())
            .finalize();
        let json = format!(
            r#"{{"v":{{"a":"{}","b":"2","c":"{}"}},"s":"sig","e":17}}"#,
            STANDARD.encode(prefix),
            STANDARD.encode(digest)
        );
        format!(
            "<!DOCTYPE html><html><head><title>Please wait...</title>\
             <script>var x = '<p id=\"cs\" class=\"decoy\">'; document.getElementById('cs')</script>\
             </head><body><p class=\"{}\" id=\"cs\" style=\"display:none\"></p>{extra}</body></html>",
            encode(json.as_bytes())
        )
    }

    fn cookie_json(value: &str) -> serde_json::Value {
        serde_json::from_slice(&STANDARD.decode(value).unwrap()).unwrap()
    }

    #[test]
    fn solves_a_known_answer_and_keeps_every_field() {
        let page = page(
            123_456,
            |b| STANDARD.encode(b),
            "<p id='wci' class='my_cookie'></p><p id=rci class=second_name></p><P ID=\"rs\" CLASS=\"v2\">",
        );
        let ch = detect(page.as_bytes()).unwrap();
        assert_eq!(ch.cookie_name(), "my_cookie");
        let cookies = solve(&ch, MAX_ANSWER).unwrap();
        assert_eq!(cookies.len(), 2);
        assert_eq!(cookies[0].0, "my_cookie");
        assert_eq!(cookies[1], ("second_name".into(), "v2".into()));
        let json = cookie_json(&cookies[0].1);
        assert_eq!(json["d"], STANDARD.encode("123456"));
        assert_eq!(json["s"], "sig");
        assert_eq!(json["e"], 17);
        assert_eq!(json["v"]["b"], "2");
        let text = String::from_utf8(STANDARD.decode(&cookies[0].1).unwrap()).unwrap();
        assert!(text.starts_with(r#"{"v":"#), "order kept: {text}");
    }

    #[test]
    fn accepts_url_safe_base64_without_padding_and_the_default_name() {
        let page = page(7, |b| URL_SAFE_NO_PAD.encode(b), "");
        let ch = detect(page.as_bytes()).unwrap();
        assert_eq!(ch.cookie_name(), DEFAULT_COOKIE_NAME);
        let cookies = solve(&ch, 100).unwrap();
        assert_eq!(cookies.len(), 1);
        assert_eq!(cookie_json(&cookies[0].1)["d"], STANDARD.encode("7"));
    }

    #[test]
    fn gives_up_beyond_the_bound() {
        let ch = detect(page(500, |b| STANDARD.encode(b), "").as_bytes()).unwrap();
        assert_eq!(solve(&ch, 500), None);
        assert!(solve(&ch, 501).is_some());
    }

    #[test]
    fn bad_payloads_are_not_solved() {
        for class in [
            "!!!not base64!!!",
            "e30",
            "bm90IGpzb24",
            "eyJ2Ijp7ImEiOjF9fQ",
        ] {
            let page = format!("<p id=\"cs\" class=\"{class}\"></p>");
            let ch = detect(page.as_bytes()).unwrap();
            assert_eq!(solve(&ch, 10), None, "{class}");
        }
    }

    #[test]
    fn ignores_pages_that_are_not_challenges() {
        assert_eq!(detect(b""), None);
        assert_eq!(detect(b"<html><p id=\"cs\"></p></html>"), None);
        assert_eq!(
            detect(b"<script>document.write('<p id=\"cs\" class=\"x\">')</script>"),
            None
        );
        assert_eq!(detect(b"<!-- <p id=\"cs\" class=\"x\"> -->"), None);
        let big = format!(
            "<p id=\"cs\" class=\"eA\"></p>{}",
            " ".repeat(MAX_CHALLENGE_PAGE)
        );
        assert_eq!(detect(big.as_bytes()), None);
    }

    #[test]
    fn tags_are_where_a_browser_sees_them() {
        for hidden in [
            &b"<title><p id=\"cs\" class=\"x\"></title>"[..],
            b"<textarea><p id=cs class=x></textarea>",
            b"<noscript><p id=cs class=x></noscript>",
            b"<script><!--<script></script><p id=cs class=x></script>",
            b"<!-- --!><!-- <p id=cs class=x> -->",
            b"<p title='<p id=cs class=x>'>",
        ] {
            assert_eq!(detect(hidden), None, "{}", String::from_utf8_lossy(hidden));
        }
        let ch = detect(b"<!-- c --!><P ID=cs CLASS=' real '>").unwrap();
        assert_eq!(ch.challenge, "real");
    }

    #[test]
    fn survives_truncation() {
        let page = page(3, |b| STANDARD.encode(b), "<p id='wci' class='n'></p>");
        for cut in 0..page.len() {
            if let Some(ch) = detect(&page.as_bytes()[..cut]) {
                let _ = solve(&ch, 5);
            }
        }
    }

    #[test]
    fn writes_decimals() {
        let mut buf = [0u8; 10];
        assert_eq!(decimal(0, &mut buf), b"0");
        assert_eq!(decimal(1_000_000, &mut buf), b"1000000");
        assert_eq!(decimal(u32::MAX, &mut buf), b"4294967295");
    }
}
