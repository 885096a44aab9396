//! The WAF proof-of-work page and the check of its solution, for a loopback upstream that
//! tests the service's solver end to end.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use sha2::{Digest, Sha256};

use crate::platform::short_video::challenge::STANDARD_PAD_INDIFFERENT;

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
