//! A whole page around a state: inline scripts that mention the state's id, a decoy state in a
//! comment and in a JS string, other users' data, and CSS and markup up to the size asked for.

use std::fmt::Write as _;

use super::state::{SUGGESTED, state_json, suggested_json};
use super::{Era, Subject};

/// The opening `<script …>` tag of `era`'s state, in that era's attribute order and quoting.
pub(super) fn state_open_tag(era: Era) -> &'static str {
    match era {
        Era::Universal => {
            r#"<script type="application/json" id="__UNIVERSAL_DATA_FOR_REHYDRATION__">"#
        }
        Era::Sigi => "<script id=\"SIGI_STATE\"\n            type=\"application/json\">",
        Era::NextData => {
            r#"<script crossorigin='anonymous' type=application/json id='__NEXT_DATA__'>"#
        }
    }
}

/// The id of `era`'s state script.
pub(super) fn state_id(era: Era) -> &'static str {
    match era {
        Era::Universal => "__UNIVERSAL_DATA_FOR_REHYDRATION__",
        Era::Sigi => "SIGI_STATE",
        Era::NextData => "__NEXT_DATA__",
    }
}

/// A whole page around the state, padded with CSS and markup to about `target` bytes.
pub(super) fn page(era: Era, subject: Subject<'_>, status: i64, target: usize) -> String {
    let state = state_json(era, subject, status, target * 3 / 4);
    let id = state_id(era);
    let name = subject.name();
    let mut head = String::with_capacity(8192);
    let _ = write!(
        head,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>@{name} | Short Video (sample)</title>\
         <meta property=\"og:title\" content=\"@{name} &amp; friends\">\
         <link rel=\"stylesheet\" href=\"/static/app.css\">"
    );
    head.push('\n');
    // Inline scripts that mention the state's id, and a fake state inside a JS string.
    let _ = write!(
        head,
        "<script nonce=\"sample\">window.__boot={{t:Date.now()}};\
         var st=document.getElementById(\"{id}\");\
         var tpl='<script id=\"{id}\" type=\"application/json\">{{\"statusCode\":10221}}</'+'script>';\
         if(st&&st.textContent.indexOf('\"{id}\"')<0){{window.__ok=1}}</script>\n\
         <!-- <script id=\"{id}\">{{\"__DEFAULT_SCOPE__\":{{}}}}</script> -->\n"
    );
    head.push_str("<script type=\"application/json\" id=\"suggested-accounts\">{\"userList\":[");
    for i in 0..SUGGESTED.len() {
        if i > 0 {
            head.push(',');
        }
        suggested_json(&mut head, i, era);
    }
    head.push_str("]}</script>\n");

    let mut tail = String::with_capacity(1024);
    if era == Era::Sigi {
        tail.push_str("<script id=\"SIGI_RETRY\" type=\"application/json\">{\"UserModule\":[\"getUserDetail\"]}</script>\n");
    }
    let _ = write!(
        tail,
        "<script src=\"/static/app.js\" async></script>\
         <script>window.addEventListener('load',function(){{\
         JSON.parse(document.getElementById('{id}').textContent)}})</script>\n</body></html>\n"
    );

    let fixed = head.len() + state.len() + tail.len() + 200;
    let noise = target.saturating_sub(fixed);
    let mut html = String::with_capacity(fixed + noise + 2048);
    html.push_str(&head);
    html.push_str("<style>");
    css(&mut html, noise * 2 / 5);
    html.push_str("</style></head><body>\n<div id=\"app\">");
    markup(&mut html, noise - noise * 2 / 5);
    html.push_str("</div>\n<div style=\"display:none\">");
    html.push_str(state_open_tag(era));
    html.push_str(&state);
    html.push_str("</script></div>\n");
    html.push_str(&tail);
    html
}

/// CSS rules until `out` has grown by `budget` bytes.
fn css(out: &mut String, budget: usize) {
    let end = out.len() + budget;
    let mut i = 0u32;
    while out.len() < end {
        let _ = write!(
            out,
            ".css-{i:x}-DivContainer{{display:flex;align-items:center;padding:{}px {}px;color:rgba(22,24,35,.{});}}\
             .css-{i:x}-SpanText:hover>a[href^=\"/@\"]{{text-decoration:underline}}",
            i % 24,
            i % 16,
            i % 9 + 1
        );
        out.push('\n');
        i += 1;
    }
}

/// Profile-grid markup (tags with attributes in varied order) until `out` grew by `budget`.
fn markup(out: &mut String, budget: usize) {
    let end = out.len() + budget;
    let mut i = 0u32;
    while out.len() < end {
        let _ = write!(
            out,
            "<div data-e2e=\"user-post-item\" class=\"css-{i:x}-DivItem\"><a href=\"/@sample/video/{i}\" \
             tabindex='-1'><img alt=\"clip {i} &amp; more\" loading=lazy src=\"/img/{i}.jpeg\"></a>\
             <strong class=css-{i:x}-Strong data-e2e=video-views>{}K</strong></div>",
            i % 900 + 1
        );
        out.push('\n');
        i += 1;
    }
}

/// The rehydration script of a page that renders the app without the user: only
/// `webapp.app-context` (what pages of 2022–23 carried beside their `SIGI_STATE`).
pub(super) const APP_CONTEXT_ONLY: &str = r#"<script id="__UNIVERSAL_DATA_FOR_REHYDRATION__" type="application/json">{"__DEFAULT_SCOPE__":{"webapp.app-context":{"language":"en","region":"US","appId":1233,"user":{},"wid":"7000000000000000778","botType":"others"},"seo.abtest":{"pageId":"sample"}}}</script>"#;

/// `page` with [`APP_CONTEXT_ONLY`] put first in its head (`first`) or last in its body.
pub(super) fn with_app_context_script(page: String, first: bool) -> String {
    if first {
        page.replacen("<head>", &format!("<head>{APP_CONTEXT_ONLY}"), 1)
    } else {
        page.replacen("</body>", &format!("{APP_CONTEXT_ONLY}\n</body>"), 1)
    }
}
