//! Outer line doc comments (`/// text`) taken out of Rust source before it is lexed.
//!
//! proc-macro2 turns each doc comment into `#[doc = "text"]`: the text is escaped into a string
//! literal token, and syn unescapes it again. In a crate of generated API types most of the text
//! is doc comments, and that round trip was a third of `generate crds`. [`set_aside`] replaces each
//! `/// text` with the placeholder `#[doc]` (the same attribute shape, so syn attaches it where it
//! attached the comment) and keeps the text, found again by the place of the placeholder's `#`,
//! which is the comment's own: a line comment runs to the end of its line, so nothing else on the
//! line moves, and every other line is untouched. Every line and column syn reports stays that of
//! the file.
//!
//! Everything else is left to proc-macro2 as it is: inner docs (`//!`), block docs (`/** */`), and
//! `#[doc = ...]` attributes. A `///` inside a string, a raw string, a character literal or a
//! comment is not a doc comment; a text the scanner cannot follow to its end (an unterminated
//! literal or comment) is handed over unchanged, for proc-macro2 to report.

use std::borrow::Cow;
use std::ops::Range;

/// The placeholder that stands for a doc comment: the cheapest attribute to lex and parse (a
/// path, where `#[doc = 0]` would have syn parse a literal). Rust has no `#[doc]` of its own.
pub(crate) const PLACEHOLDER: &str = "#[doc]";

/// The doc comments taken out of a file: their text, by the place (line, 0-based column in
/// characters, as proc-macro2 counts them) where each began.
#[derive(Debug, Default)]
pub(crate) struct DocComments {
    text: String,
    places: Vec<((usize, usize), Range<usize>)>,
}

impl DocComments {
    /// The text of the doc comment that began at `line`:`column` (what follows its `///`).
    pub fn at(&self, line: usize, column: usize) -> Option<&str> {
        let i = self
            .places
            .binary_search_by_key(&(line, column), |(place, _)| *place)
            .ok()?;
        Some(&self.text[self.places[i].1.clone()])
    }

    /// How many doc comments were taken out.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.places.len()
    }
}

/// `source` with every outer line doc comment replaced by [`PLACEHOLDER`], and their texts.
pub(crate) fn set_aside(source: &str) -> (Cow<'_, str>, DocComments) {
    match scan(source) {
        Some(found) if !found.is_empty() => {
            let mut out = String::with_capacity(source.len());
            let mut docs = DocComments::default();
            let mut copied = 0;
            for Found { start, text, place } in found {
                out.push_str(&source[copied..start]);
                out.push_str(PLACEHOLDER);
                copied = text.end;
                let from = docs.text.len();
                docs.text.push_str(&source[text]);
                docs.places.push((place, from..docs.text.len()));
            }
            out.push_str(&source[copied..]);
            (Cow::Owned(out), docs)
        }
        _ => (Cow::Borrowed(source), DocComments::default()),
    }
}

/// One outer line doc comment: where its `///` starts (byte offset, and line and column), and
/// the byte range of its text (up to the line's end, without a `\r` before the `\n`).
struct Found {
    start: usize,
    text: Range<usize>,
    place: (usize, usize),
}

/// Every outer line doc comment of `source`, in order; `None` when a literal or a block comment
/// does not end.
fn scan(source: &str) -> Option<Vec<Found>> {
    let bytes = source.as_bytes();
    let mut found = Vec::new();
    let mut line = 1;
    let mut line_start = 0;
    let mut i = 0;
    // Every delimiter is ASCII, and no byte of a multi-byte UTF-8 character is: the scan goes by
    // bytes, and only columns are counted in characters.
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                line += 1;
                line_start = i + 1;
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = memchr_newline(bytes, i);
                let is_outer_doc =
                    bytes.get(i + 2) == Some(&b'/') && bytes.get(i + 3) != Some(&b'/');
                if is_outer_doc {
                    let text_end = if end > i + 3 && bytes[end - 1] == b'\r' && end < bytes.len() {
                        end - 1
                    } else {
                        end
                    };
                    let text = i + 3..text_end;
                    // A bare `\r` in a doc comment is refused by proc-macro2: leave it to say so.
                    if !bytes[text.clone()].contains(&b'\r') {
                        let column = source[line_start..i].chars().count();
                        found.push(Found {
                            start: i,
                            text,
                            place: (line, column),
                        });
                    }
                }
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = block_comment_end(bytes, i)?;
                count_lines(bytes, i, end, &mut line, &mut line_start);
                i = end;
            }
            b'"' => {
                let end = quoted_end(bytes, i + 1, b'"')?;
                count_lines(bytes, i, end, &mut line, &mut line_start);
                i = end;
            }
            b'\'' => {
                let end = after_quote(source, i)?;
                count_lines(bytes, i, end, &mut line, &mut line_start);
                i = end;
            }
            b if b == b'_' || b.is_ascii_alphanumeric() || b >= 0x80 => {
                let word_end = i + bytes[i..]
                    .iter()
                    .position(|&b| !(b == b'_' || b.is_ascii_alphanumeric() || b >= 0x80))
                    .unwrap_or(bytes.len() - i);
                i = match &bytes[i..word_end] {
                    b"r" | b"br" | b"cr" => match raw_string_end(bytes, word_end)? {
                        Some(end) => {
                            count_lines(bytes, i, end, &mut line, &mut line_start);
                            end
                        }
                        None => word_end,
                    },
                    _ => word_end,
                };
            }
            _ => i += 1,
        }
    }
    Some(found)
}

/// The offset of the `\n` that ends the line of `from` (or the text's end).
fn memchr_newline(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |p| from + p)
}

/// Advance the line count over the newlines of `bytes[from..to]`.
fn count_lines(bytes: &[u8], from: usize, to: usize, line: &mut usize, line_start: &mut usize) {
    for (p, &b) in bytes[from..to].iter().enumerate() {
        if b == b'\n' {
            *line += 1;
            *line_start = from + p + 1;
        }
    }
}

/// The end of the block comment that opens at `from` (they nest).
fn block_comment_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = from;
    while i + 1 < bytes.len() {
        match (bytes[i], bytes[i + 1]) {
            (b'/', b'*') => {
                depth += 1;
                i += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The end of a literal whose opening quote is just before `from` and which closes at `quote`
/// (a backslash escapes the byte after it).
fn quoted_end(bytes: &[u8], from: usize, quote: u8) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// After a `'` at `at`: the end of a character literal (`'x'`, `'\n'`, `'"'`), or the next
/// offset when it starts a lifetime or a label (`'a`).
fn after_quote(source: &str, at: usize) -> Option<usize> {
    let bytes = source.as_bytes();
    match bytes.get(at + 1) {
        Some(b'\\') => quoted_end(bytes, at + 1, b'\''),
        Some(_) => {
            let c = source[at + 1..].chars().next()?;
            let after = at + 1 + c.len_utf8();
            if bytes.get(after) == Some(&b'\'') {
                Some(after + 1)
            } else {
                Some(at + 1)
            }
        }
        None => Some(at + 1),
    }
}

/// After a raw string's prefix (`r`, `br`, `cr`) ending at `from`: the end of the raw string
/// (`Some(Some(end))`), or `Some(None)` when no raw string starts here (`r#ident`, a plain `r`).
fn raw_string_end(bytes: &[u8], from: usize) -> Option<Option<usize>> {
    let hashes = bytes[from..].iter().take_while(|&&b| b == b'#').count();
    if bytes.get(from + hashes) != Some(&b'"') {
        return Some(None);
    }
    let mut i = from + hashes + 1;
    while i < bytes.len() {
        if bytes[i] == b'"'
            && bytes[i + 1..].len() >= hashes
            && bytes[i + 1..i + 1 + hashes].iter().all(|&b| b == b'#')
        {
            return Some(Some(i + 1 + hashes));
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(source: &str) -> Vec<((usize, usize), String)> {
        let (_, docs) = set_aside(source);
        docs.places
            .iter()
            .map(|(p, r)| (*p, docs.text[r.clone()].to_string()))
            .collect()
    }

    #[test]
    fn outer_line_docs_are_replaced_in_place() {
        let source = "/// One.\n///\n  /// Two \"quoted\" \\ é.\r\nstruct S { /// f\n f: u8 }\n";
        let (out, docs) = set_aside(source);
        assert_eq!(
            out,
            "#[doc]\n#[doc]\n  #[doc]\r\nstruct S { #[doc]\n f: u8 }\n"
        );
        assert_eq!(docs.at(1, 0), Some(" One."));
        assert_eq!(docs.at(2, 0), Some(""));
        assert_eq!(docs.at(3, 2), Some(" Two \"quoted\" \\ é."));
        assert_eq!(docs.at(4, 11), Some(" f"));
        assert_eq!(docs.at(4, 0), None);
    }

    #[test]
    fn what_is_not_an_outer_line_doc_stays() {
        let source = concat!(
            "//! inner\n",
            "//// four slashes\n",
            "// plain /// not a doc\n",
            "/** block */ /* nested /* /// */ */\n",
            "const A: &str = \"/// in a string \\\" /// still\";\n",
            "const B: &str = r#\"/// raw \" /// raw\"#;\n",
            "const C: &[u8] = br\"///\";\n",
            "const D: char = '\"'; const E: char = '\\''; fn f<'a>(x: &'a str) {}\n",
            "const F: &str = \"multi\n/// line\";\n",
            "let r#type = 1; // r#\"\n",
            "/// yes\n",
        );
        // (The multi-line string moves the last line to 12.)
        assert_eq!(texts(source), vec![((12, 0), " yes".to_string())]);
    }

    #[test]
    fn columns_count_characters() {
        let source = "const É: u8 = 0; /// é\n\t/// tab\n";
        assert_eq!(
            texts(source),
            vec![((1, 17), " é".to_string()), ((2, 1), " tab".to_string())]
        );
    }

    #[test]
    fn a_text_that_does_not_end_is_left_as_it_is() {
        for source in [
            "/// a\nconst A: &str = \"open;\n",
            "/// a\n/* open\n",
            "/// a\nr#\"open",
        ] {
            let (out, docs) = set_aside(source);
            assert_eq!(out, source);
            assert_eq!(docs.len(), 0);
        }
    }

    #[test]
    fn a_bare_carriage_return_is_left_to_proc_macro2() {
        let (out, docs) = set_aside("/// a\rb\nstruct S;\n");
        assert_eq!(out, "/// a\rb\nstruct S;\n");
        assert_eq!(docs.len(), 0);
    }

    /// Every token of `source` as proc-macro2 lexes it, with its place; each doc attribute
    /// (`#[doc = "..."]`, or the placeholder, whose text `docs` holds) as one entry of its text.
    fn lexed(source: &str, docs: &DocComments) -> Vec<(String, usize, usize)> {
        use proc_macro2::{TokenStream, TokenTree};
        fn walk(ts: TokenStream, docs: &DocComments, out: &mut Vec<(String, usize, usize)>) {
            let trees: Vec<TokenTree> = ts.into_iter().collect();
            let mut i = 0;
            while i < trees.len() {
                let at = trees[i].span().start();
                if let (TokenTree::Punct(p), Some(TokenTree::Group(g))) =
                    (&trees[i], trees.get(i + 1))
                    && p.as_char() == '#'
                    && let Ok(meta) = syn::parse2::<syn::Meta>(g.stream())
                    && meta.path().is_ident("doc")
                {
                    let text = match (&meta, docs.at(at.line, at.column)) {
                        (syn::Meta::Path(_), Some(text)) => text.to_string(),
                        (
                            syn::Meta::NameValue(syn::MetaNameValue {
                                value:
                                    syn::Expr::Lit(syn::ExprLit {
                                        lit: syn::Lit::Str(s),
                                        ..
                                    }),
                                ..
                            }),
                            _,
                        ) => s.value(),
                        (other, _) => quote::ToTokens::to_token_stream(other).to_string(),
                    };
                    out.push((format!("doc {text:?}"), at.line, at.column));
                    i += 2;
                    continue;
                }
                match &trees[i] {
                    TokenTree::Group(g) => {
                        out.push((format!("{:?}", g.delimiter()), at.line, at.column));
                        walk(g.stream(), docs, out);
                        let close = g.span_close().start();
                        out.push(("close".into(), close.line, close.column));
                    }
                    other => out.push((other.to_string(), at.line, at.column)),
                }
                i += 1;
            }
        }
        let mut out = Vec::new();
        walk(source.parse().expect("the source lexes"), docs, &mut out);
        out
    }

    /// The tokens of the text with its doc comments set aside are those of the text as it is:
    /// the same places, and the same doc texts.
    fn same_as_proc_macro2(source: &str) {
        let (aside, docs) = set_aside(source);
        assert_eq!(
            lexed(&aside, &docs),
            lexed(source, &DocComments::default()),
            "{source}"
        );
    }

    #[test]
    fn tokens_and_doc_texts_are_what_proc_macro2_gives() {
        for source in [
            "/// One.\n///\n  /// Two \"q\" \\ \\n é 日本 \t tab.\r\nstruct S { /// f\r\n f: u8 }\n",
            "/** block\n  doc */\n/// line\n#[doc = \"attr\"]\n/// after\nenum E { /// v\n V(/// t0\n u8, /// t1\n String) }\n",
            "const A: &str = \"/// not\"; /// yes: \"quoted\"\nconst B: &str = r##\"/// \"# raw\"##; /// é\n",
            "const C: char = '\"'; /// after a char\nfn f<'a>(x: &'a str) -> &'a str { /// in a body\n x }\n",
            "//! inner\n/*! inner block */\n//// four\n// two /// not\nmod m { /// in a module\n pub struct T; }\n",
            "#[doc = include_str!(\"README.md\")]\n/// then a line\nstruct R;\n///",
            "/// no newline at the end",
        ] {
            same_as_proc_macro2(source);
        }
    }

    #[test]
    fn every_fixture_lexes_the_same() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut stack = vec![root];
        let mut seen = 0;
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
                    if text.parse::<proc_macro2::TokenStream>().is_ok() {
                        same_as_proc_macro2(text);
                        seen += 1;
                    }
                }
            }
        }
        assert!(seen > 20, "only {seen} fixture files");
    }
}
