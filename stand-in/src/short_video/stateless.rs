//! The 200 answers that carry no state, in the shapes the platform has sent since 2026-08:
//! the client-rendered shell (the same bytes whoever is asked for), the maintenance page, and
//! the "Security Check" captcha page with its configuration script. Invented addresses.

use std::fmt::Write as _;

/// Where the invented shell loads its app from.
const STATIC: &str = "https://static.short-video.example/webapp";

/// The client-rendered shell (about 1.5 KB): metadata, styles and external scripts only, the
/// same bytes for an existing and a missing user. With `config`, it also carries the two inline
/// JSON configuration scripts the 2026 shell has beside them (monitoring rules, SDK
/// addresses): still no profile data.
pub fn stateless_shell_page(config: bool) -> String {
    let mut page = String::with_capacity(2048);
    let _ = write!(
        page,
        "<!DOCTYPE html><html lang=\"en\"><head>\
         <link rel=\"preload\" as=\"script\" href=\"{STATIC}/sdk/1.0.0/websdk.js\">\
         <meta charSet=\"UTF-8\"/><meta name=\"viewport\" content=\"width=device-width, initial-scale=1.0\"/>\
         <title data-rh=\"true\"></title>\
         <link rel=\"icon\" href=\"{STATIC}/favicon.ico\">\
         <link rel=\"stylesheet\" href=\"{STATIC}/main/app.8f3c2a.css\">\
         <link rel=\"stylesheet\" href=\"{STATIC}/main/fonts.1b9e77.css\">"
    );
    if config {
        page.push_str(
            "<script id=\"pumbaa-rule\" type=\"application/json\">{\"_r\":\"eyJpbnZlbnRlZCI6InNhbXBsZSBtb25pdG9yaW5nIHJ1bGVzIn0=\"}</script>",
        );
    }
    let _ = write!(
        page,
        "<script src=\"{STATIC}/privacy/loader/1.0.0/index.js\" data-region=\"sample\" async \
         crossorigin=\"anonymous\"></script>"
    );
    if config {
        let _ = write!(
            page,
            "<script id=\"tiktok-environment\" type=\"application/json\">{{\"mssdk\":{{\"js\":\"{STATIC}/sdk/1.0.0/websdk.js\",\"reportDomain\":\"mssdk.short-video.example\"}},\"regionInfo\":{{\"isBoe\":false,\"vregion\":\"Sample-Central\"}}}}</script>"
        );
    }
    let _ = writeln!(
        page,
        "</head><body><div id=\"app\"></div>\
         <noscript>You need to enable JavaScript to run this app.</noscript>\
         <script src=\"{STATIC}/main/runtime.4d1f0e.js\" defer crossorigin=\"anonymous\"></script>\
         <script src=\"{STATIC}/main/vendor.77ab31.js\" defer crossorigin=\"anonymous\"></script>\
         <script src=\"{STATIC}/main/app.c0ffee.js\" defer crossorigin=\"anonymous\"></script>\
         <script src=\"{STATIC}/main/user-page.5eed5e.js\" defer crossorigin=\"anonymous\"></script>\
         </body></html>"
    );
    page
}

/// The "site under maintenance" page the platform answers some User-Agents with.
pub fn maintenance_page() -> String {
    "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
     <title>Site Under Maintenance</title>\
     <style>body{font-family:sans-serif;text-align:center;padding:120px 16px;color:#161823}\
     h1{font-size:28px}p{color:#57585f}</style></head>\
     <body><h1>Site Under Maintenance</h1>\
     <p>We are improving the site. Please check back soon.</p></body></html>\n"
        .to_owned()
}

/// The "Security Check" captcha page: no state, a configuration script whose nested verify
/// object carries `code` (10000, 10113 or 10114 for a captcha), and a page that shows a bio-like
/// text nowhere near any state.
pub fn captcha_page(code: i64) -> String {
    let mut page = String::with_capacity(4096);
    let _ = write!(
        page,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Security Check</title>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1, user-scalable=no\">\
         <script async src=\"{STATIC}/verify/collect.js\"></script>\
         <script>\n  const option = {{\"title\":\"short-video-verify-page\",\"iid\":\"0\",\"did\":\"0\",\
         \"app_name\":\"short_video\",\"aid\":1988,\"region\":\"sample\",\"lang\":\"en\",\
         \"verify_data\":{{\"code\":\"{code}\",\"from\":\"\",\"type\":\"verify\",\"version\":\"\",\
         \"region\":\"sample\",\"subtype\":\"slide\",\"detail\":\"InVeNtEd-detail*Zq8vK2.sample\",\
         \"verify_event\":\"\",\"fp\":\"verify_invented_sample_fp_0001\"}}}};\n\
         if (!option.region) {{ option.region = 'sample'; }}\n\
         var verifyTime = new Date().getTime();\n</script>\
         <script src=\"{STATIC}/verify/captcha.js\" crossorigin=\"anonymous\"></script>\
         <style>"
    );
    for i in 0..24 {
        let _ = write!(
            page,
            ".verify-{i}{{display:flex;margin:{}px auto;color:#333}}",
            i % 7
        );
    }
    page.push_str(
        "</style></head><body><div id=\"verify-ele\"></div>\
         <div class=\"verify-wrap\"><p>Security Check</p>\
         <p>Drag the slider to fit the puzzle</p></div></body></html>\n",
    );
    page
}

/// The "Security Check" page keeping its configuration in a JSON script element instead of
/// an assignment: `<script type="application/json" id="captcha-config">` whose `verify_data`
/// carries `"type": "verify"` and `code` (reported to the project for 2026-09; the key names
/// follow the assignment form).
pub fn captcha_config_page(code: i64) -> String {
    let mut page = String::with_capacity(2048);
    let _ = writeln!(
        page,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Security Check</title>\
         <script type=\"application/json\" id=\"captcha-config\">{{\"title\":\"short-video-verify-page\",\
         \"app_name\":\"short_video\",\"aid\":1988,\"region\":\"sample\",\"lang\":\"en\",\
         \"verify_data\":{{\"code\":\"{code}\",\"from\":\"\",\"type\":\"verify\",\"region\":\"sample\",\
         \"subtype\":\"slide\",\"detail\":\"InVeNtEd-detail*Json.sample\",\"fp\":\"verify_invented_sample_fp_0002\"}}}}\
         </script>\
         <script src=\"{STATIC}/verify/captcha.js\" crossorigin=\"anonymous\"></script></head>\
         <body><div id=\"verify-ele\"></div><div class=\"verify-wrap\"><p>Security Check</p>\
         <p>Drag the slider to fit the puzzle</p></div></body></html>"
    );
    page
}
