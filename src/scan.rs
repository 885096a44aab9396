//! Finding `<script>` elements in an HTML page without building a DOM.
//!
//! Both platforms embed their state as the text of one `<script>` element in a page of several
//! hundred kilobytes. A DOM parser costs an order of magnitude more than parsing the JSON itself
//! (and `scraper::Html` is `!Send`), so this module walks the bytes with `memchr`, following just
//! enough of the HTML tokenizer to be correct where it matters:
//!
//! - the text of a script is raw text: it ends at the first `</script` (any case), and nothing
//!   inside it is a tag. So inline JavaScript that *mentions* a state script's id is never taken
//!   for the state script itself, and a `<script>` spelled inside a comment is never a script;
//! - attributes come in any order, quoted with `"` or `'` or unquoted, names in any case;
//! - a quoted attribute value may contain `>`.
//!
//! Script text is returned as raw bytes: HTML does not entity-decode raw text, so neither do we.

use memchr::{memchr, memchr3, memmem};

/// One `<script>` element: its raw attribute text and its raw content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Script<'a> {
    attrs: &'a [u8],
    /// The element's content, exactly as it appears in the page.
    pub text: &'a [u8],
}

impl<'a> Script<'a> {
    /// The value of attribute `name` (ASCII case-insensitive), if present.
    ///
    /// A bare attribute (`<script async>`) has the empty value.
    pub fn attr(&self, name: &str) -> Option<&'a [u8]> {
        Attrs { rest: self.attrs }
            .find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| v)
    }

    /// Whether attribute `name` is present, with or without a value.
    pub fn has_attr(&self, name: &str) -> bool {
        self.attr(name).is_some()
    }
}

/// Every `<script>` element of `html`, in document order.
pub fn scripts(html: &[u8]) -> Scripts<'_> {
    Scripts { html, pos: 0 }
}

/// The text of the first script whose `id` attribute is exactly `id`.
pub fn script_by_id<'a>(html: &'a [u8], id: &str) -> Option<&'a [u8]> {
    scripts(html)
        .find(|s| s.attr("id") == Some(id.as_bytes()))
        .map(|s| s.text)
}

/// Iterator over the scripts of a page; see [`scripts`].
#[derive(Clone, Debug)]
pub struct Scripts<'a> {
    html: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for Scripts<'a> {
    type Item = Script<'a>;

    fn next(&mut self) -> Option<Script<'a>> {
        let html = self.html;
        loop {
            let lt = self.pos + memchr(b'<', html.get(self.pos..)?)?;
            let after = &html[lt + 1..];
            if after.starts_with(b"!--") {
                // A comment: nothing inside it is markup. `<!-->` and `<!--->` are empty ones.
                let body = &after[3..];
                self.pos = if body.starts_with(b">") {
                    lt + 5
                } else if body.starts_with(b"->") {
                    lt + 6
                } else {
                    match memmem::find(body, b"-->") {
                        Some(end) => lt + 1 + 3 + end + 3,
                        None => html.len(),
                    }
                };
                continue;
            }
            if !is_script_open(after) {
                // Another element's start tag: skip it whole, since a quoted attribute value
                // may hold `<script …>` or `<!--` text that is not markup.
                if after.first().is_some_and(u8::is_ascii_alphabetic) {
                    let Some(len) = tag_end(after) else {
                        // A tag left open at the end of the page: nothing after it is markup.
                        self.pos = html.len();
                        return None;
                    };
                    self.pos = lt + 1 + len + 1;
                    continue;
                }
                self.pos = lt + 1;
                continue;
            }
            let attrs_start = lt + 1 + b"script".len();
            let Some(attrs_len) = tag_end(&html[attrs_start..]) else {
                self.pos = html.len();
                return None;
            };
            let attrs = &html[attrs_start..attrs_start + attrs_len];
            let text_start = attrs_start + attrs_len + 1;
            let text_len = find_script_close(&html[text_start..]);
            self.pos = text_start + text_len;
            return Some(Script {
                attrs,
                text: &html[text_start..text_start + text_len],
            });
        }
    }
}

/// `<script` followed by whitespace, `/` or `>` (so `<scripts>` or `<script-x>` are not scripts).
fn is_script_open(after_lt: &[u8]) -> bool {
    after_lt.len() > 6
        && after_lt[..6].eq_ignore_ascii_case(b"script")
        && matches!(
            after_lt[6],
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>'
        )
}

/// Length of the attribute text up to the `>` that ends the start tag, skipping quoted values.
fn tag_end(s: &[u8]) -> Option<usize> {
    // Jump from one `>` or quote to the next; a quote opens a value only when the last
    // non-space byte before it is `=`, and then everything up to the matching quote is skipped.
    let mut i = 0;
    loop {
        let hit = i + memchr3(b'>', b'"', b'\'', &s[i..])?;
        if s[hit] == b'>' {
            return Some(hit);
        }
        let opens_value = s[..hit]
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .is_some_and(|before| s[before] == b'=');
        i = if opens_value {
            hit + 1 + memchr(s[hit], &s[hit + 1..])? + 1
        } else {
            hit + 1
        };
    }
}

/// Length of raw script text: up to the first `</script` followed by whitespace, `/` or `>`.
fn find_script_close(s: &[u8]) -> usize {
    let mut from = 0;
    while let Some(at) = memmem::find(&s[from..], b"</") {
        let lt = from + at;
        if closes_script(&s[lt + 2..]) {
            return lt;
        }
        from = lt + 2;
    }
    s.len()
}

fn closes_script(after: &[u8]) -> bool {
    after.len() >= 6
        && after[..6].eq_ignore_ascii_case(b"script")
        && after
            .get(6)
            .is_none_or(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>'))
}

/// Iterator over `(name, value)` pairs of a start tag's attribute text.
struct Attrs<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Attrs<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let s = self.rest;
        let mut i = 0;
        while i < s.len() && (s[i].is_ascii_whitespace() || s[i] == b'/') {
            i += 1;
        }
        if i == s.len() {
            return None;
        }
        let name_start = i;
        while i < s.len() && !s[i].is_ascii_whitespace() && !matches!(s[i], b'=' | b'/') {
            i += 1;
        }
        let name = &s[name_start..i];
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= s.len() || s[i] != b'=' {
            self.rest = &s[i..];
            return Some((name, &[]));
        }
        i += 1;
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        let value = match s.get(i) {
            Some(&q @ (b'"' | b'\'')) => {
                let start = i + 1;
                let len = memchr(q, &s[start..]).unwrap_or(s.len() - start);
                i = (start + len + 1).min(s.len());
                &s[start..start + len]
            }
            _ => {
                let start = i;
                while i < s.len() && !s[i].is_ascii_whitespace() {
                    i += 1;
                }
                &s[start..i]
            }
        };
        self.rest = &s[i..];
        Some((name, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_by_id_in_any_attribute_order_and_quoting() {
        for page in [
            r#"<script id="S" type="application/json">{"a":1}</script>"#,
            r#"<script type="application/json" id="S">{"a":1}</script>"#,
            r#"<SCRIPT type='application/json' ID='S'>{"a":1}</SCRIPT >"#,
            r#"<script id=S type=application/json>{"a":1}</script>"#,
            "<script\n  data-x=\"a>b\"\n  id=\"S\">{\"a\":1}</script>",
        ] {
            assert_eq!(
                script_by_id(page.as_bytes(), "S"),
                Some(&br#"{"a":1}"#[..]),
                "{page}"
            );
        }
    }

    #[test]
    fn is_not_fooled_by_scripts_or_comments_that_mention_the_id() {
        let page = br#"<html><script>var s = '<script id="S">{"fake":1}</' + 'script>';
            document.getElementById("S")</script>
            <!-- <script id="S">{"commented":1}</script> -->
            <script id="S">{"real":1}</script>"#;
        assert_eq!(script_by_id(page, "S"), Some(&br#"{"real":1}"#[..]));
    }

    #[test]
    fn is_not_fooled_by_attribute_values_or_empty_comments() {
        let page = br#"<meta content='<script id="S">{"fake":1}</script>'>
            <a title="<!--">x</a><!--><p><!--->
            <script id="S">{"real":1}</script><!-- -->"#;
        assert_eq!(script_by_id(page, "S"), Some(&br#"{"real":1}"#[..]));
        assert_eq!(scripts(br#"<div title="x"#).count(), 0);
    }

    #[test]
    fn survives_truncation_anywhere() {
        let page = br#"<p><!-- c --><script id="S" type="application/json">{"a":1}</script>"#;
        for cut in 0..page.len() {
            let _ = script_by_id(&page[..cut], "S");
            let _ = scripts(&page[..cut]).count();
        }
        // An unterminated script runs to the end of the page, as a browser reads it.
        assert_eq!(
            script_by_id(br#"<script id="S">{"a""#, "S"),
            Some(&br#"{"a""#[..])
        );
    }

    #[test]
    fn reads_bare_attributes_and_ignores_lookalike_tags() {
        let page = br#"<scripts id="S">no</scripts><script data-sjs async id="S">yes</script>"#;
        let script = scripts(page).next().unwrap();
        assert_eq!(script.text, b"yes");
        assert!(script.has_attr("data-sjs"));
        assert_eq!(script.attr("async"), Some(&b""[..]));
        assert_eq!(script.attr("missing"), None);
    }
}
