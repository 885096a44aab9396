//! The platform's side of its WAF proof-of-work challenge: the page that issues it, and the
//! check of the cookie that answers it, so that a loopback stand-in tests the service's solver
//! end to end. (Written from the platform's side: the service's solver is never used here.)

use base64::Engine;
use base64::alphabet;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use sha2::{Digest, Sha256};

/// Standard base64 read with or without its padding, as the platform takes the cookie.
const STANDARD_PAD_INDIFFERENT: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Name of the optional second cookie on [`waf_challenge_page`].
const WAF_SECOND_COOKIE: (&str, &str) = ("waf_rci_sample", "invented-rs-value");

/// The WAF proof-of-work page ("Please wait…") whose answer is `answer`.
pub fn waf_challenge_page(answer: u32) -> String {
    let (prefix, digest) = waf_puzzle(answer);
    let json = format!(
        r#"{{"v":{{"a":"{}","b":"4","c":"{}"}},"s":"invented-waf-signature","e":1700000000}}"#,
        STANDARD.encode(&prefix),
        STANDARD.encode(digest)
    );
    let (rci, rs) = WAF_SECOND_COOKIE;
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Please wait...</title>\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <style>html,body{{margin:0;height:100%}}body{{display:flex;align-items:center;\
         justify-content:center;font-family:-apple-system,BlinkMacSystemFont,sans-serif;color:#555}}\
         .box{{text-align:center}}.spinner{{width:32px;height:32px;margin:0 auto 12px;\
         border:3px solid #ddd;border-top-color:#fe2c55;border-radius:50%;\
         animation:spin 1s linear infinite}}@keyframes spin{{to{{transform:rotate(360deg)}}}}\
         </style></head>\
         <body><div class=\"box\"><div class=\"spinner\"></div><p>Please wait...</p>\
         <noscript>Enable JavaScript to continue.</noscript></div>\
         <p style=\"display:none\" id=\"cs\" class=\"{}\"></p>\
         <p id='wci' class='_wafchallengeid' style='display:none'></p>\
         <p class=\"{rci}\" id=\"rci\" hidden></p><p id=rs class={rs} hidden></p>\
         <script>/* invented stand-in for the platform's solver */\
         (function(){{function v(id){{var e=document.getElementById(id);return e?e.className:\"\"}}\
         var cs=v(\"cs\"),name=v(\"wci\")||\"_wafchallengeid\";\
         if(!cs){{return}}var started=Date.now();\
         function done(value){{document.cookie=name+\"=\"+value+\";path=/;max-age=600\";\
         setTimeout(function(){{location.reload()}},Math.max(0,800-(Date.now()-started)))}}\
         window.__sampleWaf={{cs:cs,name:name,done:done}};}})();</script></body></html>",
        STANDARD_NO_PAD.encode(json)
    )
}

/// Whether `cookie_header` (a request's `Cookie:` value) carries the solution of
/// [`waf_challenge_page`]`(answer)` and its second cookie: so a loopback upstream can check
/// the service's solver end to end.
pub fn waf_cookie_is_valid(cookie_header: &str, answer: u32) -> bool {
    let cookie = |name: &str| {
        cookie_header
            .split(';')
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    };
    let (rci, rs) = WAF_SECOND_COOKIE;
    if cookie(rci) != Some(rs) {
        return false;
    }
    let Some(json) = cookie("_wafchallengeid")
        .and_then(|v| STANDARD_PAD_INDIFFERENT.decode(v).ok())
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    else {
        return false;
    };
    let (prefix, digest) = waf_puzzle(answer);
    json["d"] == STANDARD.encode(answer.to_string())
        && json["v"]["a"] == STANDARD.encode(prefix)
        && json["v"]["c"] == STANDARD.encode(digest)
        && json["s"] == "invented-waf-signature"
}

/// The prefix and target digest of the sample puzzle with answer `answer`.
fn waf_puzzle(answer: u32) -> (Vec<u8>, Vec<u8>) {
    let prefix = format!("sample-waf-{answer:08x}-").into_bytes();
    let digest = Sha256::new()
        .chain_update(&prefix)
        .chain_update(answer.to_string())
        .finalize()
        .to_vec();
    (prefix, digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a solver that knows `answer` sends back for `page`: the issued challenge JSON with
    /// the answer added, and the page's second cookie.
    fn answered(page: &str, answer: u32) -> String {
        let class = page
            .split("id=\"cs\" class=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("the page carries its challenge");
        let issued = STANDARD_NO_PAD.decode(class).expect("base64 challenge");
        let mut json: serde_json::Value = serde_json::from_slice(&issued).expect("JSON challenge");
        json["d"] = STANDARD.encode(answer.to_string()).into();
        let (rci, rs) = WAF_SECOND_COOKIE;
        format!(
            "_wafchallengeid={}; {rci}={rs}",
            STANDARD.encode(json.to_string())
        )
    }

    #[test]
    fn the_answer_to_the_issued_challenge_passes_and_nothing_else_does() {
        let page = waf_challenge_page(4_321);
        assert!((1_200..2_048).contains(&page.len()), "{}", page.len());
        let cookie = answered(&page, 4_321);
        assert!(waf_cookie_is_valid(&cookie, 4_321));
        // Without its base64 padding, as the platform takes it too.
        let (value, rest) = cookie["_wafchallengeid=".len()..].split_once(';').unwrap();
        let unpadded = format!("_wafchallengeid={};{rest}", value.trim_end_matches('='));
        assert!(waf_cookie_is_valid(&unpadded, 4_321));
        assert!(!waf_cookie_is_valid(&cookie, 4_322));
        assert!(!waf_cookie_is_valid(&answered(&page, 4_320), 4_321));
        let (rci, _) = WAF_SECOND_COOKIE;
        let without_second = cookie.split(&format!("; {rci}")).next().unwrap();
        assert!(!waf_cookie_is_valid(without_second, 4_321));
        assert!(!waf_cookie_is_valid("_wafchallengeid=e30", 4_321));
        assert!(!waf_cookie_is_valid("", 4_321));
    }
}
