//! Finding `<script>` elements, where both platforms embed their state.

use super::{Tag, Token, Tokens, tokens};

/// One `<script>` element: its start tag and its raw content, the unit in which both
/// platforms embed their state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Script<'a> {
    tag: Tag<'a>,
    /// The element's content, exactly as it appears in the page.
    pub text: &'a [u8],
}

impl<'a> Script<'a> {
    /// The value of attribute `name` (ASCII case-insensitive), if present.
    ///
    /// A bare attribute (`<script async>`) has the empty value.
    pub fn attr(&self, name: &str) -> Option<&'a [u8]> {
        self.tag.attr(name)
    }

    /// Whether attribute `name` is present, with or without a value.
    pub fn has_attr(&self, name: &str) -> bool {
        self.attr(name).is_some()
    }
}

/// Every `<script>` element of `html`, in document order: for readers that pick the state
/// script by more than its id (an attribute, or what its text starts with).
pub fn scripts(html: &[u8]) -> Scripts<'_> {
    Scripts {
        tokens: tokens(html),
    }
}

/// The text of the first script whose `id` attribute is exactly `id`: the common case of a
/// state script named by its id.
pub fn script_by_id<'a>(html: &'a [u8], id: &str) -> Option<&'a [u8]> {
    scripts(html)
        .find(|s| s.attr("id") == Some(id.as_bytes()))
        .map(|s| s.text)
}

/// Iterator over the scripts of a page; see [`scripts`]. Lazy, like [`Tokens`].
#[derive(Clone, Debug)]
pub struct Scripts<'a> {
    tokens: Tokens<'a>,
}

impl<'a> Iterator for Scripts<'a> {
    type Item = Script<'a>;

    fn next(&mut self) -> Option<Script<'a>> {
        loop {
            match self.tokens.next_markup()? {
                Token::Element(tag, text) if tag.is("script") => return Some(Script { tag, text }),
                _ => continue,
            }
        }
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

    #[test]
    fn script_escapes_follow_the_script_states() {
        let text = |html: &'static [u8]| scripts(html).next().map(|s| s.text);
        assert_eq!(text(b"<script>a</script>"), Some(&b"a"[..]));
        assert_eq!(text(b"<script><!--a</script>"), Some(&b"<!--a"[..]));
        assert_eq!(
            text(b"<script><!--<script>a</script>b--></script>"),
            Some(&b"<!--<script>a</script>b-->"[..])
        );
        assert_eq!(
            text(b"<script><!--<script>a</script></script>"),
            Some(&b"<!--<script>a</script>"[..])
        );
        assert_eq!(
            text(b"<script><!--><script>a</script>"),
            Some(&b"<!--><script>a"[..])
        );
        assert_eq!(
            text(b"<script><!---><script></script>"),
            Some(&b"<!---><script>"[..])
        );
        assert_eq!(
            text(b"<script><!--<scripty></script>"),
            Some(&b"<!--<scripty>"[..])
        );
        assert_eq!(
            text(b"<script>a</scriptx></script>"),
            Some(&b"a</scriptx>"[..])
        );
        assert_eq!(text(b"<script>a</script"), Some(&b"a</script"[..]));
    }
}
