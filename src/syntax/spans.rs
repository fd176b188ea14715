//! Real proc-macro2 spans for any place of a file, without lexing the file token by token.
//!
//! syn's trees carry proc-macro2 spans, and a span's line and column come from proc-macro2's
//! thread-local source map, which only lexing fills. [`FileSpans::register`] lexes the file as a
//! single raw string literal: the text itself, whose first few characters (on its first line) are
//! replaced by the literal's opening `r#"`, so that every character keeps its line and column.
//! [`FileSpans::span`] then cuts the span of any range out of that literal
//! (`Literal::subspan`). A reader of its own can so build syn's trees with the spans syn's own
//! parse would give, at the cost of one scan of the text.

use std::ops::Range;
use std::str::FromStr;

use proc_macro2::{Literal, Span, TokenStream, TokenTree};

/// The spans of one file (see the module's doc).
pub(crate) struct FileSpans {
    literal: Literal,
    /// `(byte offset, bytes more than characters before it)` after each non-ASCII character:
    /// proc-macro2 counts places in characters, a reader in bytes.
    wide: Vec<(usize, usize)>,
}

impl FileSpans {
    /// Registers `text` with proc-macro2. `None` when its first line is too short to hold the
    /// literal's opening (the reader then lexes the file as usual).
    pub fn register(text: &str) -> Option<FileSpans> {
        let hashes = 1 + longest_hash_run_after_quote(text);
        let opening = hashes + 2;
        let mut chars = text.char_indices();
        let kept = chars.nth(opening - 1).map(|(i, c)| i + c.len_utf8())?;
        if text[..kept].contains(['\n', '\r']) {
            return None;
        }
        let fence = "#".repeat(hashes);
        let lexed = format!("r{fence}\"{}\"{fence}", &text[kept..]);
        let Some(TokenTree::Literal(literal)) =
            TokenStream::from_str(&lexed).ok()?.into_iter().next()
        else {
            return None;
        };
        let mut wide = Vec::new();
        if !text.is_ascii() {
            let mut extra = 0;
            for (i, c) in text.char_indices().filter(|(_, c)| !c.is_ascii()) {
                extra += c.len_utf8() - 1;
                wide.push((i + c.len_utf8(), extra));
            }
        }
        Some(FileSpans { literal, wide })
    }

    /// The span of the bytes `range` of the file.
    pub fn span(&self, range: Range<usize>) -> Span {
        let (start, end) = (self.chars(range.start), self.chars(range.end));
        self.literal
            .subspan(start..end)
            .unwrap_or_else(|| self.literal.span())
    }

    /// The character offset of byte offset `at`.
    fn chars(&self, at: usize) -> usize {
        let before = self.wide.partition_point(|(end, _)| *end <= at);
        at - before.checked_sub(1).map_or(0, |i| self.wide[i].1)
    }
}

/// The longest run of `#` right after a `"` in `text` (a raw string's fence must be longer).
fn longest_hash_run_after_quote(text: &str) -> usize {
    text.split('"')
        .skip(1)
        .map(|after| after.bytes().take_while(|&b| b == b'#').count())
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every token proc-macro2 lexes in `text`: its text and the line and column of its start
    /// and end; and the same places from [`FileSpans::span`] over the token's bytes.
    fn both(text: &str) -> (Vec<String>, Vec<String>) {
        let spans = FileSpans::register(text).expect("registers");
        let (mut lexed, mut cut) = (Vec::new(), Vec::new());
        fn walk(ts: TokenStream, out: &mut Vec<TokenTree>) {
            for t in ts {
                if let TokenTree::Group(g) = &t {
                    walk(g.stream(), out);
                }
                out.push(t);
            }
        }
        let mut trees = Vec::new();
        walk(TokenStream::from_str(text).unwrap(), &mut trees);
        let show = |s: Span| {
            let (a, b) = (s.start(), s.end());
            format!("{}:{}-{}:{}", a.line, a.column, b.line, b.column)
        };
        for t in trees {
            let s = t.span();
            lexed.push(show(s));
            cut.push(show(spans.span(s.byte_range())));
        }
        (lexed, cut)
    }

    #[test]
    fn a_cut_span_is_the_span_lexing_gives() {
        for text in [
            "//! docs\nuse a::b;\n  struct Sé { a: u8, /* é */ b: \"x\\\"#é\" }\n\tenum 日本 { A }",
            "#[derive(Clone)] pub struct S(r##\"a\"#b\"##, u8);\r\nfn f() {}",
            "mod m { pub use x::*; } const É: &str = \"日\";",
            // Lines ending in spaces, blank ones, CRLF, a string across lines whose first line
            // ends in spaces, non-ASCII after all of them.
            "struct S {   \n        \n    a: u8,      \r\n  \t b: é,  \n}\nconst T: &str = \"x   \n  y\";  \n  enum 日 { B }     ",
        ] {
            let (lexed, cut) = both(text);
            assert_eq!(lexed, cut, "{text}");
        }
    }

    #[test]
    fn a_first_line_too_short_for_the_opening_is_not_registered() {
        assert!(FileSpans::register("\nstruct S;").is_none());
        assert!(FileSpans::register("a\nstruct S;").is_none());
        assert!(FileSpans::register("ab").is_none());
        assert!(FileSpans::register("use a;\n").is_some());
    }
}
