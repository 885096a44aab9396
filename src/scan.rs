//! Reading an HTML page the way a browser's tokenizer does, without building a DOM.
//!
//! Both platforms embed their state as the text of one `<script>` element in a page of several
//! hundred kilobytes. A DOM parser costs an order of magnitude more than parsing the JSON itself
//! (and `scraper::Html` is `!Send`), so this module walks the bytes with `memchr`, following the
//! WHATWG tokenizer wherever it decides what is markup and what is text:
//!
//! - comments end at the first `-->` or `--!>`; `<!-->` and `<!--->` end at once;
//! - `<?…>`, `<!…>` (a doctype, `<![CDATA[` outside SVG) and `</` followed by no letter are bogus
//!   comments that end at the first `>`;
//! - start and end tags end at the first `>` outside a quoted attribute value, and an end tag's
//!   attributes are read (and dropped) like a start tag's;
//! - the content of `<script>` is script data: it ends at the first `</script` followed by
//!   whitespace, `/` or `>`, except inside an escape (`<!--` … `-->`) where a nested `<script`
//!   keeps it open past the next `</script`;
//! - `<style>`, `<xmp>`, `<iframe>`, `<noembed>`, `<noframes>` and `<noscript>` (a browser runs
//!   scripts, so it reads that one as raw text) hold raw text, `<title>` and `<textarea>` hold
//!   RCDATA: none of them contains tags, and each ends at its own end tag only;
//! - `<plaintext>` makes the rest of the page text.
//!
//! What this does not follow: SVG and MathML content (where `<style>` and `<title>` hold markup
//! and `<![CDATA[` is text) and the tree builder's special cases inside `<select>`.
//!
//! Every step moves forward, so a page costs time linear in its size. Text is returned as raw
//! bytes: nothing is entity-decoded.

use memchr::{memchr, memchr2, memmem};

/// The content of an element that holds no markup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Content {
    /// `<script>`: raw text with the script escape rules.
    Script,
    /// Raw text or RCDATA: ends at the element's own end tag.
    Text,
    /// `<plaintext>`: the rest of the page.
    Rest,
}

/// What a start tag named `name` switches the tokenizer to, if not the ordinary data state.
fn content_of(name: &[u8]) -> Option<Content> {
    const TEXT: [&[u8]; 9] = [
        b"style",
        b"xmp",
        b"iframe",
        b"noembed",
        b"noframes",
        b"noscript",
        b"title",
        b"textarea",
        b"plaintext",
    ];
    if name.eq_ignore_ascii_case(b"script") {
        return Some(Content::Script);
    }
    let at = TEXT.iter().position(|t| name.eq_ignore_ascii_case(t))?;
    Some(if at == TEXT.len() - 1 {
        Content::Rest
    } else {
        Content::Text
    })
}

/// A start tag: its name and its raw attribute text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag<'a> {
    /// The tag name as written (compare with [`Tag::is`]).
    pub name: &'a [u8],
    attrs: &'a [u8],
}

impl<'a> Tag<'a> {
    /// Whether this is a `name` tag (ASCII case-insensitive).
    pub fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name.as_bytes())
    }

    /// The value of the first attribute `name` (ASCII case-insensitive), if present, raw.
    ///
    /// A bare attribute (`<script async>`) has the empty value.
    pub fn attr(&self, name: &str) -> Option<&'a [u8]> {
        self.attrs()
            .find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| v)
    }

    /// Every `(name, value)` attribute pair, in order, raw.
    pub fn attrs(&self) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + use<'a> {
        let s = self.attrs;
        let mut at = 0;
        std::iter::from_fn(move || match next_attr(s, at) {
            Lexed::Attr { name, value, next } => {
                at = next;
                Some((&s[name.0..name.1], &s[value.0..value.1]))
            }
            Lexed::End(_) | Lexed::Eof => None,
        })
    }
}

/// One piece of a page, in document order.
///
/// End tags, comments, doctypes and bogus comments are read and skipped: nothing needs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token<'a> {
    /// Character data between tags, raw.
    Text(&'a [u8]),
    /// The start tag of an element whose content is more markup.
    Start(Tag<'a>),
    /// An element whose content holds no markup (script, raw text, RCDATA, plaintext): its
    /// start tag and its whole content, raw.
    Element(Tag<'a>, &'a [u8]),
}

/// Every token of `html`, in document order.
pub fn tokens(html: &[u8]) -> Tokens<'_> {
    Tokens {
        html,
        pos: 0,
        pending: None,
    }
}

/// Iterator over the tokens of a page; see [`tokens`].
#[derive(Clone, Debug)]
pub struct Tokens<'a> {
    html: &'a [u8],
    pos: usize,
    /// Markup found at `pos` while reading the text before it, so it is read only once.
    pending: Option<Markup<'a>>,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let html = self.html;
        if let Some(markup) = self.pending.take() {
            return self.enter(markup);
        }
        let mut search = self.pos;
        loop {
            let Some(found) = html.get(search..).and_then(|rest| memchr(b'<', rest)) else {
                // No more markup: the rest is text.
                let text = html.get(self.pos..).filter(|t| !t.is_empty())?;
                self.pos = html.len();
                return Some(Token::Text(text));
            };
            let lt = search + found;
            let Some(markup) = markup_at(html, lt) else {
                // A `<` that opens nothing is text.
                search = lt + 1;
                continue;
            };
            if lt > self.pos {
                // The text before the markup first.
                let text = &html[self.pos..lt];
                self.pos = lt;
                self.pending = Some(markup);
                return Some(Token::Text(text));
            }
            if let Markup::Skip(end) = markup {
                self.pos = end;
                search = end;
                continue;
            }
            return self.enter(markup);
        }
    }
}

impl<'a> Tokens<'a> {
    /// Moves past `markup` found at `pos`, returning its token.
    fn enter(&mut self, markup: Markup<'a>) -> Option<Token<'a>> {
        let html = self.html;
        match markup {
            Markup::Skip(end) => {
                self.pos = end;
                self.next()
            }
            Markup::Start(tag, after) => {
                let Some(content) = content_of(tag.name) else {
                    self.pos = after;
                    return Some(Token::Start(tag));
                };
                let rest = &html[after..];
                let len = match content {
                    Content::Script => script_len(rest),
                    Content::Text => text_len(rest, tag.name),
                    Content::Rest => rest.len(),
                };
                self.pos = after + len;
                Some(Token::Element(tag, &rest[..len]))
            }
            Markup::Unclosed => {
                // A tag cut by the end of the page is dropped, as a browser drops it.
                self.pos = html.len();
                None
            }
        }
    }
}

/// What a `<` opens.
#[derive(Clone, Copy, Debug)]
enum Markup<'a> {
    /// A comment, end tag, doctype or bogus comment ending just before this position.
    Skip(usize),
    /// A start tag, and the position just after its `>`.
    Start(Tag<'a>, usize),
    /// A start or end tag that the page ends inside.
    Unclosed,
}

/// What the `<` at `lt` opens, or `None` when it is just text.
fn markup_at(html: &[u8], lt: usize) -> Option<Markup<'_>> {
    let after = &html[lt + 1..];
    match after.first()? {
        b if b.is_ascii_alphabetic() => {
            let (name_len, end) = tag_extent(after);
            let Some(end) = end else {
                return Some(Markup::Unclosed);
            };
            let tag = Tag {
                name: &after[..name_len],
                attrs: &after[name_len..end],
            };
            Some(Markup::Start(tag, lt + 1 + end + 1))
        }
        b'!' if after.starts_with(b"!--") => Some(Markup::Skip(comment_end(html, lt + 4))),
        b'!' | b'?' => Some(Markup::Skip(bogus_comment_end(html, lt + 2))),
        b'/' => match after.get(1)? {
            b if b.is_ascii_alphabetic() => match tag_extent(&after[1..]).1 {
                Some(end) => Some(Markup::Skip(lt + 2 + end + 1)),
                None => Some(Markup::Unclosed),
            },
            b'>' => Some(Markup::Skip(lt + 3)),
            _ => Some(Markup::Skip(bogus_comment_end(html, lt + 2))),
        },
        _ => None,
    }
}

/// The position just after a comment whose text starts at `start` (just after `<!--`).
fn comment_end(html: &[u8], start: usize) -> usize {
    let body = &html[start.min(html.len())..];
    if body.starts_with(b">") {
        return start + 1;
    }
    if body.starts_with(b"->") {
        return start + 2;
    }
    let mut from = 0;
    while let Some(at) = memmem::find(&body[from..], b"--") {
        let dashes = from + at;
        match &body[dashes + 2..] {
            [b'>', ..] => return start + dashes + 3,
            [b'!', b'>', ..] => return start + dashes + 4,
            _ => from = dashes + 1,
        }
    }
    html.len()
}

/// The position just after the first `>` at or after `from` (the page's end when none).
fn bogus_comment_end(html: &[u8], from: usize) -> usize {
    html.get(from..)
        .and_then(|rest| memchr(b'>', rest))
        .map_or(html.len(), |at| from + at + 1)
}

/// For a tag starting with its name: the name's length, and the position of the `>` that ends
/// the tag (`None` when the page ends first).
fn tag_extent(s: &[u8]) -> (usize, Option<usize>) {
    let name_len = s
        .iter()
        .position(|&b| is_space(b) || b == b'/' || b == b'>')
        .unwrap_or(s.len());
    let mut at = name_len;
    loop {
        match next_attr(s, at) {
            Lexed::Attr { next, .. } => at = next,
            Lexed::End(end) => return (name_len, Some(end)),
            Lexed::Eof => return (name_len, None),
        }
    }
}

/// One step of reading a tag's attributes.
enum Lexed {
    /// An attribute's name and value (byte ranges), and where reading goes on.
    Attr {
        name: (usize, usize),
        value: (usize, usize),
        next: usize,
    },
    /// The `>` that ends the tag, at this position.
    End(usize),
    /// The text ends inside the tag.
    Eof,
}

/// Reads the next attribute of a tag from `at`, following the tokenizer's attribute states:
/// a name runs to whitespace, `/`, `>` or `=` (a leading `=` and any quote belong to it); a
/// value is quoted with `"` or `'` (and may then hold `>`) or runs to whitespace or `>`.
fn next_attr(s: &[u8], mut at: usize) -> Lexed {
    while at < s.len() && (is_space(s[at]) || s[at] == b'/') {
        at += 1;
    }
    match s.get(at) {
        None => return Lexed::Eof,
        Some(b'>') => return Lexed::End(at),
        Some(_) => {}
    }
    let name_start = at;
    at += 1;
    while at < s.len() && !is_space(s[at]) && !matches!(s[at], b'/' | b'>' | b'=') {
        at += 1;
    }
    let name = (name_start, at);
    while at < s.len() && is_space(s[at]) {
        at += 1;
    }
    if s.get(at) != Some(&b'=') {
        return Lexed::Attr {
            name,
            value: (at, at),
            next: at,
        };
    }
    at += 1;
    while at < s.len() && is_space(s[at]) {
        at += 1;
    }
    match s.get(at) {
        Some(&quote @ (b'"' | b'\'')) => {
            let start = at + 1;
            let end = memchr(quote, &s[start..]).map_or(s.len(), |len| start + len);
            Lexed::Attr {
                name,
                value: (start, end),
                next: (end + 1).min(s.len()),
            }
        }
        _ => {
            let start = at;
            while at < s.len() && !is_space(s[at]) && s[at] != b'>' {
                at += 1;
            }
            Lexed::Attr {
                name,
                value: (start, at),
                next: at,
            }
        }
    }
}

/// HTML whitespace (with CR, which the input stream turns into LF).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// Whether `s` starts with `name` (ASCII case-insensitive) followed by whitespace, `/` or `>`:
/// the only way a tag name ends the tokenizer's raw-text and script states.
fn names(s: &[u8], name: &[u8]) -> bool {
    s.len() > name.len()
        && s[..name.len()].eq_ignore_ascii_case(name)
        && (is_space(s[name.len()]) || matches!(s[name.len()], b'/' | b'>'))
}

/// Length of raw text or RCDATA: up to the element's own end tag (`</name` then a delimiter).
fn text_len(s: &[u8], name: &[u8]) -> usize {
    memmem::find_iter(s, b"</")
        .find(|&lt| names(&s[lt + 2..], name))
        .unwrap_or(s.len())
}

/// Length of script data, following the tokenizer's script states: `<!--` escapes, a
/// `<script` inside an escape "double-escapes" until its `</script`, and `-->` ends either.
fn script_len(s: &[u8]) -> usize {
    const SCRIPT: &[u8] = b"script";
    #[derive(PartialEq)]
    enum State {
        Data,
        Escaped,
        DoubleEscaped,
    }
    let mut state = State::Data;
    let mut at = 0;
    loop {
        if state == State::Data {
            let Some(found) = memchr(b'<', &s[at..]) else {
                return s.len();
            };
            let lt = at + found;
            let after = &s[lt + 1..];
            if after.first() == Some(&b'/') && names(&after[1..], SCRIPT) {
                return lt;
            }
            if after.starts_with(b"!--") {
                // Resume at the escape's own dashes: `<!-->` and `<!--->` end it at once.
                state = State::Escaped;
                at = lt + 2;
            } else {
                at = lt + 1;
            }
            continue;
        }
        let Some(found) = memchr2(b'-', b'<', &s[at..]) else {
            return s.len();
        };
        let hit = at + found;
        let rest = &s[hit..];
        if rest.starts_with(b"-->") {
            state = State::Data;
            at = hit + 3;
        } else if rest.starts_with(b"</") && names(&rest[2..], SCRIPT) {
            if state == State::Escaped {
                return hit;
            }
            state = State::Escaped;
            at = hit + 2 + SCRIPT.len() + 1;
        } else if state == State::Escaped && rest[0] == b'<' && names(&rest[1..], SCRIPT) {
            state = State::DoubleEscaped;
            at = hit + 1 + SCRIPT.len() + 1;
        } else {
            at = hit + 1;
        }
    }
}

/// One `<script>` element: its start tag and its raw content.
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

/// Every `<script>` element of `html`, in document order.
pub fn scripts(html: &[u8]) -> Scripts<'_> {
    Scripts {
        tokens: tokens(html),
    }
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
    tokens: Tokens<'a>,
}

impl<'a> Iterator for Scripts<'a> {
    type Item = Script<'a>;

    fn next(&mut self) -> Option<Script<'a>> {
        self.tokens.find_map(|token| match token {
            Token::Element(tag, text) if tag.is("script") => Some(Script { tag, text }),
            _ => None,
        })
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
    fn reads_tokens_like_the_tokenizer() {
        let page =
            b"a<p class='x>y' id=p>b</p data='</p>'>c<!-- d --!>e<? f >g<title><b>t</b></title>";
        let got: Vec<Token<'_>> = tokens(page).collect();
        let Token::Start(p) = got[1] else {
            panic!("{got:?}")
        };
        assert_eq!(p.attr("class"), Some(&b"x>y"[..]));
        assert_eq!(p.attr("ID"), Some(&b"p"[..]));
        let texts: Vec<&[u8]> = got
            .iter()
            .filter_map(|t| match t {
                Token::Text(t) => Some(*t),
                _ => None,
            })
            .collect();
        assert_eq!(texts, [&b"a"[..], b"b", b"c", b"e", b"g"]);
        let Token::Element(title, text) = got[got.len() - 1] else {
            panic!("{got:?}")
        };
        assert!(title.is("TITLE"));
        assert_eq!(text, b"<b>t</b>");
    }

    #[test]
    fn a_lone_lt_is_text_and_a_cut_tag_is_dropped() {
        let got: Vec<Token<'_>> = tokens(b"1 < 2 <3 <a href='x>").collect();
        assert_eq!(got, [Token::Text(b"1 < 2 <3 ")]);
        let got: Vec<Token<'_>> = tokens(b"1</ <script>x</script>").collect();
        assert_eq!(got, [Token::Text(b"1"), Token::Text(b"x")]);
        assert_eq!(tokens(b"x</").collect::<Vec<_>>(), [Token::Text(b"x</")]);
    }

    #[test]
    fn attribute_names_and_values_follow_the_attribute_states() {
        let tag = |html: &'static [u8]| match tokens(html).next() {
            Some(Token::Start(tag)) => tag,
            other => panic!("{other:?}"),
        };
        // A quote in a name or an unquoted value is part of it, and opens nothing.
        let t = tag(b"<a b\"c=1 d=e\"f g='h' =i j = \"k\" l/m>");
        let attrs: Vec<_> = t.attrs().collect();
        assert_eq!(
            attrs,
            [
                (&b"b\"c"[..], &b"1"[..]),
                (b"d", b"e\"f"),
                (b"g", b"h"),
                (b"=i", b""),
                (b"j", b"k"),
                (b"l", b""),
                (b"m", b""),
            ]
        );
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
