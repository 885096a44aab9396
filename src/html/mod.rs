//! The one HTML tokenizer: reading a page the way a browser's tokenizer does, without a DOM.
//!
//! Every reader of an upstream page (the state-script finders, the photo-share 404 and login
//! markers, the short-video WAF challenge detector) goes through [`tokens`], so what counts as
//! a tag, a comment or a script's text is decided once, and a decoy hidden where a browser
//! sees no markup fools none of them.
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
//! Every step moves forward, so a page costs time linear in its size; every search counts the
//! bytes it examined in [`crate::cost`], which is how the tests check that. Text is returned as
//! raw bytes: nothing is entity-decoded.
//!
//! The tag and comment states live in `markup`, the states of elements without markup in
//! `raw_text`, and the script finder built on the tokens in `scripts`.

mod markup;
mod raw_text;
mod scripts;

use markup::{Lexed, Markup, markup_at, next_attr};
use raw_text::{Content, content_of, script_len, text_len};

use crate::cost;

pub use scripts::{Script, Scripts, script_by_id, scripts};

/// A start tag: its name and its raw attribute text, which is lexed only when asked for
/// (most tags of a page are never looked at).
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

/// Every token of `html`, in document order: the entry point of every page reader.
pub fn tokens(html: &[u8]) -> Tokens<'_> {
    Tokens {
        html,
        pos: 0,
        pending: None,
    }
}

/// Iterator over the tokens of a page; see [`tokens`]. Lazy, so a reader that has what it
/// wants stops reading the page.
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
        self.step(true)
    }
}

impl<'a> Tokens<'a> {
    /// The next token that is markup (a start tag or an element), the text between skipped:
    /// for readers that look for tags only, which then pay nothing for the text.
    pub fn next_markup(&mut self) -> Option<Token<'a>> {
        self.step(false)
    }

    /// The next token, text included only when `text` is asked for.
    fn step(&mut self, text: bool) -> Option<Token<'a>> {
        let html = self.html;
        if let Some(markup) = self.pending.take() {
            return self.enter(markup, text);
        }
        let mut search = self.pos;
        loop {
            // A tag often follows the previous one at once: look before searching.
            let found = match html.get(search..) {
                Some([b'<', ..]) => {
                    cost::examined(1);
                    Some(0)
                }
                Some(rest) => cost::memchr(b'<', rest),
                None => None,
            };
            let Some(found) = found else {
                // No more markup: the rest is text.
                let rest = html.get(self.pos..).filter(|t| text && !t.is_empty());
                self.pos = html.len();
                return rest.map(Token::Text);
            };
            let lt = search + found;
            let Some(markup) = markup_at(html, lt) else {
                // A `<` that opens nothing is text.
                search = lt + 1;
                continue;
            };
            if text && lt > self.pos {
                // The text before the markup first.
                let before = &html[self.pos..lt];
                self.pos = lt;
                self.pending = Some(markup);
                return Some(Token::Text(before));
            }
            if let Markup::Skip(end) = markup {
                self.pos = end;
                search = end;
                continue;
            }
            return self.enter(markup, text);
        }
    }

    /// Moves past `markup` found at `pos`, returning its token.
    fn enter(&mut self, markup: Markup<'a>, text: bool) -> Option<Token<'a>> {
        let html = self.html;
        match markup {
            Markup::Skip(end) => {
                self.pos = end;
                self.step(text)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_is_linear_in_the_input() {
        let units: [&[u8]; 14] = [
            b"<",
            b"<a",
            b"<a x='",
            b"<a b=c d ",
            b"</",
            b"</a x",
            b"<!--",
            b"<!-- --!",
            b"<?",
            b"<script>",
            b"<script><!--<script>",
            b"<script></scrip",
            b"<title></titl",
            b"<p>x</p>",
        ];
        for unit in units {
            let work = |n: usize| {
                let page: Vec<u8> = unit.iter().copied().cycle().take(n).collect();
                let ((), examined) = cost::measure(|| {
                    for token in tokens(&page) {
                        if let Token::Start(tag) | Token::Element(tag, _) = token {
                            let _ = tag.attrs().count();
                        }
                    }
                });
                examined
            };
            let n = 64 * 1024;
            let unit = String::from_utf8_lossy(unit);
            let (once, _) = cost::linear(n, work).unwrap_or_else(|e| panic!("{unit}: {e}"));
            // The count covers the path: a skipped byte (a name, an escape) may go uncounted.
            assert!(once >= n as u64 / 2, "{unit}: {once} bytes examined of {n}");
        }
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
}
