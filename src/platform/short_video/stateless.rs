//! Pages that carry no state at all, told apart by their structure.
//!
//! Since 2026-08 the platform answers some requests with a 200 that holds no state script:
//! a client-rendered shell that loads the app from external scripts only, a "site under
//! maintenance" page, an empty body, or a "Security Check" captcha page whose only inline
//! script is the captcha's configuration (an assigned object, or since 2026-09 a JSON script
//! element). Each is a refusal of this request (a block with its
//! own reason), never a verdict about the user. A page that holds inline data of a form we do
//! not know is something else: the platform moving, which stays unreadable (and is captured),
//! so the two never mix.
//!
//! Everything here is read from structure the platform writes (which scripts there are, their
//! attributes, the document's `<title>`, a configuration object's keys), never from text a
//! user can write: a page with a state never gets here, and a bio can hold no script element.

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};

use super::ShortVideoProfile;
use crate::cost;
use crate::html::Tag;
use crate::platform::Reading;
use crate::platform::fields::{Object, Text};

/// A client-rendered shell: external scripts only, nothing inline.
pub const STATELESS_SHELL: &str = "stateless_shell";
/// The "site under maintenance" page (the platform ties it to the client's User-Agent).
pub const MAINTENANCE: &str = "maintenance";
/// A 200 with an empty body.
pub const EMPTY_BODY: &str = "empty_body";
/// The "Security Check" page: a captcha configuration carrying a verify code, no state.
pub const CAPTCHA_PAGE: &str = "captcha_page";
/// Every block reason of a stateless page: each is kept by drift capture.
pub const KINDS: [&str; 4] = [STATELESS_SHELL, MAINTENANCE, EMPTY_BODY, CAPTCHA_PAGE];

/// Ids of inline JSON scripts that hold the platform's own client configuration (monitoring
/// rules, SDK addresses), never a profile: the 2026 shell carries them beside its external
/// scripts.
const CONFIG_SCRIPT_IDS: [&[u8]; 2] = [b"pumbaa-rule", b"tiktok-environment"];
/// The `<title>` of the maintenance page, as peers quote it (ASCII case-insensitive, trimmed).
const MAINTENANCE_TITLES: [&[u8]; 2] = [b"site under maintenance", b"site maintenance"];
/// The verify codes of a captcha, the same codes a state's status reports for one.
const CAPTCHA_CODES: [&str; 3] = ["10000", "10113", "10114"];

/// Whether `body` is empty: no bytes, or only whitespace.
pub(super) fn is_empty(body: &[u8]) -> bool {
    let rest = body.trim_ascii_start();
    cost::examined(body.len() - rest.len());
    rest.is_empty()
}

/// What the scripts and title of a page other than its states are, gathered while the page
/// is walked for its states and weighed only if no state decides.
#[derive(Debug, Default)]
pub(super) struct Rest<'a> {
    external_scripts: usize,
    /// Inline scripts that hold something we do not know (data or code).
    unknown_inline: usize,
    /// Inline scripts that assign an object literal or are a JSON object (the 2026-09 captcha
    /// page's `<script type="application/json" id="captcha-config">`): candidates for a
    /// captcha configuration.
    configs: Vec<&'a [u8]>,
    /// Inline scripts that are (or assign) a JSON object or array: where the anchored search
    /// looks for a user no state holds.
    json: Vec<&'a [u8]>,
    title: Option<&'a [u8]>,
}

impl<'a> Rest<'a> {
    /// Notes a `<script>` that is not a state script.
    pub(super) fn script(&mut self, tag: &Tag<'a>, text: &'a [u8]) {
        if tag.attr("src").is_some() {
            self.external_scripts += 1;
            return;
        }
        let trimmed = text.trim_ascii();
        cost::examined(text.len() - trimmed.len());
        if trimmed.is_empty() {
            return;
        }
        if tag
            .attr("id")
            .is_some_and(|id| CONFIG_SCRIPT_IDS.contains(&id))
        {
            return;
        }
        if let Some(object) = assigned_object(trimmed) {
            self.configs.push(object);
            self.json.push(object);
        } else if trimmed.starts_with(b"{") {
            self.configs.push(trimmed);
            self.json.push(trimmed);
        } else if trimmed.starts_with(b"[") {
            self.json.push(trimmed);
        }
        self.unknown_inline += 1;
    }

    /// The inline scripts that hold JSON of a form no state reader knows.
    pub(super) fn json(&self) -> &[&'a [u8]] {
        &self.json
    }

    /// Notes the document's `<title>` (the first one).
    pub(super) fn title(&mut self, text: &'a [u8]) {
        self.title.get_or_insert(text);
    }

    /// What a page with no state is: one of the block kinds, or unreadable when it holds
    /// inline content we do not know (or is nothing we recognise).
    pub(super) fn reading(self) -> Reading<ShortVideoProfile> {
        if self.configs.iter().any(|o| is_captcha_config(o)) {
            return Reading::blocked(CAPTCHA_PAGE);
        }
        if self.unknown_inline > 0 {
            return Reading::Unreadable(format!(
                "no state script; {} inline script(s) of a form we do not know",
                self.unknown_inline
            ));
        }
        if self.title.is_some_and(is_maintenance_title) {
            return Reading::blocked(MAINTENANCE);
        }
        if self.external_scripts > 0 {
            return Reading::blocked(STATELESS_SHELL);
        }
        Reading::Unreadable("no state script and no script to load the app".into())
    }
}

fn is_maintenance_title(title: &[u8]) -> bool {
    let title = title.trim_ascii();
    cost::examined(title.len());
    MAINTENANCE_TITLES
        .iter()
        .any(|t| title.eq_ignore_ascii_case(t))
}

/// The object literal a script assigns first, when the script is `const|let|var NAME = {…` or
/// `window.NAME = {…` (anything may follow the object).
fn assigned_object(text: &[u8]) -> Option<&[u8]> {
    let rest = [&b"const "[..], b"let ", b"var "]
        .iter()
        .find_map(|keyword| text.strip_prefix(*keyword))
        .unwrap_or(text)
        .trim_ascii_start();
    let name_len = rest
        .iter()
        .take(64)
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.'))
        .count();
    cost::examined(name_len + 1);
    if name_len == 0 {
        return None;
    }
    let value = rest[name_len..]
        .trim_ascii_start()
        .strip_prefix(b"=")?
        .trim_ascii_start();
    value.starts_with(b"{").then_some(value)
}

/// A verify configuration's fields: its kind and its code (a string or a number).
#[derive(Debug, Default, Deserialize)]
struct Verify<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Text<'a>>,
    #[serde(borrow)]
    code: Option<Text<'a>>,
}

impl Verify<'_> {
    fn is_captcha(&self) -> bool {
        let is =
            |field: &Option<Text<'_>>, value: &str| field.as_ref().is_some_and(|t| t.0 == value);
        is(&self.kind, "verify") && CAPTCHA_CODES.iter().any(|code| is(&self.code, code))
    }
}

/// A configuration object: its own `type` and `code`, and each member object's.
#[derive(Debug, Default)]
struct Config<'a> {
    own: Verify<'a>,
    members: Vec<Verify<'a>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Config<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ConfigVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for ConfigVisitor<'a> {
            type Value = Config<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Config<'a>, A::Error> {
                let mut config = Config::default();
                while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
                    match key.as_ref() {
                        "type" => config.own.kind = Some(map.next_value()?),
                        "code" => config.own.code = Some(map.next_value()?),
                        _ => {
                            if let Object(Some(member)) = map.next_value::<Object<Verify<'de>>>()? {
                                config.members.push(member);
                            }
                        }
                    }
                }
                Ok(config)
            }
        }
        deserializer.deserialize_map(ConfigVisitor(std::marker::PhantomData))
    }
}

/// Whether `object` (an assigned object literal with more script after it, or a JSON script
/// element's text) is a captcha
/// configuration: itself, or one of its members, is `{"type": "verify", "code": <captcha>}`.
/// Where the platform nests it is not known for sure, so one level down is looked at too.
fn is_captcha_config(object: &[u8]) -> bool {
    cost::examined(object.len());
    let Ok(text) = std::str::from_utf8(object) else {
        return false;
    };
    let mut de = serde_json::Deserializer::from_str(text);
    match Config::deserialize(&mut de) {
        Ok(config) => config.own.is_captcha() || config.members.iter().any(Verify::is_captcha),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_assigned_object_is_found_after_the_usual_spellings() {
        for (script, found) in [
            ("const option = {\"a\":1};go()", true),
            ("var cfg={}", true),
            ("window.__cfg = {}", true),
            ("option={}", true),
            ("if (a) {}", false),
            ("const option = [1]", false),
            ("= {}", false),
            ("", false),
        ] {
            assert_eq!(
                assigned_object(script.as_bytes()).is_some(),
                found,
                "{script}"
            );
        }
    }

    #[test]
    fn a_captcha_config_needs_the_verify_type_and_a_captcha_code() {
        for (object, is) in [
            (
                r#"{"title":"x","verify_data":{"code":"10000","type":"verify"}};more()"#,
                true,
            ),
            (r#"{"type":"verify","code":10114}"#, true),
            (
                r#"{"data":{"type":"verify","code":"10113","subtype":"slide"}}"#,
                true,
            ),
            (r#"{"data":{"type":"verify","code":"10555"}}"#, false),
            (r#"{"data":{"type":"slide","code":"10000"}}"#, false),
            (
                r#"{"deeper":{"data":{"type":"verify","code":"10000"}}}"#,
                false,
            ),
            (r#"{"type":"verify""#, false),
            ("{not json", false),
        ] {
            assert_eq!(is_captcha_config(object.as_bytes()), is, "{object}");
        }
    }
}
