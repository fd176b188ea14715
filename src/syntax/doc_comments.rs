//! Outer line doc comments (`/// text`) taken out of Rust source before it is lexed.
//!
//! proc-macro2 turns each doc comment into `#[doc = "text"]`: the text is escaped into a string
//! literal token, and syn unescapes it again. In a crate of generated API types most of the text
//! is doc comments, and that round trip was a third of `generate crds`. [`set_aside`] replaces each
//! run of `/// text` lines (nothing but whitespace between them) with one placeholder, `#[doc]`,
//! at the place of the run's first comment (the same attribute shape, so syn attaches it where it
//! attached the comments), and keeps their text, found again by that place. A line comment runs to
//! the end of its line, so nothing else on the line moves, and every other line is untouched:
//! every line and column syn reports stays that of the file.
//!
//! Everything else is left to proc-macro2 as it is: inner docs (`//!`), block docs (`/** */`), and
//! `#[doc = ...]` attributes. A `///` inside a string, a raw string, a character literal or a
//! comment is not a doc comment; a text the scanner cannot follow to its end (an unterminated
//! literal or comment, an unbalanced bracket) is handed over unchanged, for proc-macro2 to report.
//!
//! The same scan measures how deep brackets and `<...>` nest, as `syntax::check_nesting` counts
//! them on the tokens, so that walk (which copies every token) only runs on deep input.

use std::borrow::Cow;
use std::ops::Range;

use super::lex::{block_comment_end, quoted_end, raw_string_end, raw_string_hashes};
use super::meta::{self, SetAsideAttrs};
use super::pos::Pos;

/// The placeholder that stands for a run of doc comments: the cheapest attribute to lex and parse
/// (a path, where `#[doc = 0]` would have syn parse a literal). Rust has no `#[doc]` of its own.
pub(crate) const PLACEHOLDER: &str = "#[doc]";

/// The doc comments taken out of a file: the text of each run, by the place (line, 0-based column
/// in characters, as proc-macro2 counts them) where its first comment began.
#[derive(Debug, Default)]
pub(crate) struct DocComments {
    text: String,
    places: Vec<((usize, usize), Range<usize>)>,
}

impl DocComments {
    /// The doc text of the run of doc comments that began at `line`:`column`, as schemars_derive
    /// joins doc attributes: each comment's text (what follows its `///`) less one leading space,
    /// joined with `\n`.
    pub fn at(&self, line: usize, column: usize) -> Option<&str> {
        let i = self
            .places
            .binary_search_by_key(&(line, column), |(place, _)| *place)
            .ok()?;
        Some(&self.text[self.places[i].1.clone()])
    }

    /// How many runs of doc comments were taken out.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.places.len()
    }
}

/// What [`set_aside`] gives: the text to lex, the doc comments and the attributes taken out of it,
/// and the deepest nesting of brackets and `<...>` as `syntax::check_nesting` counts it (`None`:
/// not measured).
pub(crate) struct SetAside<'a> {
    pub source: Cow<'a, str>,
    pub docs: DocComments,
    pub attrs: SetAsideAttrs,
    pub nesting: Option<usize>,
}

/// `source` with every run of outer line doc comments replaced by [`PLACEHOLDER`], and their
/// texts; and with every `#[serde(...)]` and `#[derive(...)]` that [`meta::read`] reads replaced
/// by `#[serde]` / `#[derive]` and blanks (a space for each character, line ends kept: whatever
/// follows stays at its line and column; blanks that would end a line are left out), and what
/// they said.
pub(crate) fn set_aside(source: &str) -> SetAside<'_> {
    let Some(Scan {
        runs,
        attrs,
        nesting,
    }) = scan(source)
    else {
        return SetAside {
            source: Cow::Borrowed(source),
            docs: DocComments::default(),
            attrs: SetAsideAttrs::default(),
            nesting: None,
        };
    };
    if runs.is_empty() && attrs.is_empty() {
        return SetAside {
            source: Cow::Borrowed(source),
            docs: DocComments::default(),
            attrs: SetAsideAttrs::default(),
            nesting: Some(nesting),
        };
    }
    let mut out = String::with_capacity(source.len());
    let mut docs = DocComments::default();
    let mut read = SetAsideAttrs::default();
    let mut copied = 0;
    let mut attrs = attrs.into_iter().peekable();
    let mut cut_attrs_before = |limit: usize, out: &mut String, copied: &mut usize| {
        while let Some(attr) = attrs.next_if(|a| a.start < limit) {
            out.push_str(&source[*copied..attr.start]);
            // `#[name]` (the `]` where the `(` was), and a blank for every character after.
            out.push_str(&source[attr.start..attr.open]);
            out.push(']');
            blank(
                &source[attr.open + 1..attr.end],
                ends_line(source, attr.end),
                out,
            );
            *copied = attr.end;
            read.push(attr.place, attr.args);
        }
    };
    for run in runs {
        cut_attrs_before(run.comments[0].start, &mut out, &mut copied);
        let from = docs.text.len();
        for (k, comment) in run.comments.iter().enumerate() {
            let between = &source[copied..comment.start];
            if k == 0 {
                out.push_str(between);
                out.push_str(PLACEHOLDER);
            } else {
                // Only whitespace between the comments of a run: its line ends (the indentation
                // would end a line now that the comment is gone).
                out.extend(between.chars().filter(|&c| c == '\n' || c == '\r'));
                docs.text.push('\n');
            }
            copied = comment.text.end;
            let text = &source[comment.text.clone()];
            docs.text.push_str(text.strip_prefix(' ').unwrap_or(text));
        }
        docs.places.push((run.place, from..docs.text.len()));
    }
    cut_attrs_before(usize::MAX, &mut out, &mut copied);
    out.push_str(&source[copied..]);
    SetAside {
        source: Cow::Owned(out),
        docs,
        attrs: read,
        nesting: Some(nesting),
    }
}

/// `text` (an attribute's arguments) as blanks, line ends kept, so that whatever follows stays at
/// its line and column; the blanks that would end a line are left out (`at_line_end`: nothing but
/// whitespace follows `text` on its last line), so the text a reader lexes is no longer than it
/// needs to be.
fn blank(text: &str, at_line_end: bool, out: &mut String) {
    let mut lines = text.split('\n');
    let last = lines.next_back().unwrap_or_default();
    for line in lines {
        if line.ends_with('\r') {
            out.push('\r');
        }
        out.push('\n');
    }
    if !at_line_end {
        out.extend(std::iter::repeat_n(' ', last.chars().count()));
    }
}

/// Whether only spaces and tabs follow byte `at` of `source` up to its line's end (or the end).
fn ends_line(source: &str, at: usize) -> bool {
    source.as_bytes()[at..]
        .iter()
        .find(|&&b| b != b' ' && b != b'\t')
        .is_none_or(|&b| b == b'\n' || b == b'\r')
}

/// One outer line doc comment: where its `///` starts, and the byte range of its text (up to the
/// line's end, without a `\r` before the `\n`).
struct Comment {
    start: usize,
    text: Range<usize>,
}

/// Doc comments with only whitespace between them, and the place (line, column) of the first.
struct Run {
    place: (usize, usize),
    comments: Vec<Comment>,
}

/// An attribute [`meta::read`] read: its text is `start..end`, its `(` at `open`, its `#` at `place`.
struct Attr {
    start: usize,
    open: usize,
    end: usize,
    place: Pos,
    args: meta::Args,
}

struct Scan {
    runs: Vec<Run>,
    attrs: Vec<Attr>,
    nesting: usize,
}

/// What the scan stops at: line ends, comments, literals (a raw string is known at its `"`),
/// brackets and what `<...>` nesting counts.
const STOPS: [bool; 256] = {
    let mut stops = [false; 256];
    let bytes = b"\n/\"'()[]{}<>;";
    let mut k = 0;
    while k < bytes.len() {
        stops[bytes[k] as usize] = true;
        k += 1;
    }
    stops
};

/// Every run of outer line doc comments of `source`, in order, and the deepest nesting; `None`
/// when a literal or a block comment does not end, or a bracket is unbalanced.
fn scan(source: &str) -> Option<Scan> {
    let bytes = source.as_bytes();
    let mut runs: Vec<Run> = Vec::new();
    let mut attrs: Vec<Attr> = Vec::new();
    // Where the last doc comment's text ended: a run goes on while only whitespace follows.
    let mut run_end = usize::MAX;
    let mut line = 1;
    let mut line_start = 0;
    // The open groups (and the root), each with the `<` still open in it, as `check_nesting`
    // keeps them; `nesting` is the deepest `groups + open_angles` it would see.
    let mut groups: Vec<usize> = vec![0];
    let mut open_angles = 0usize;
    let mut nesting = 0usize;
    let mut i = 0;
    // Every delimiter is ASCII, and no byte of a multi-byte UTF-8 character is: the scan goes by
    // bytes, and only columns are counted in characters.
    loop {
        while i < bytes.len() && !STOPS[bytes[i] as usize] {
            i += 1;
        }
        let Some(&b) = bytes.get(i) else { break };
        match b {
            b'\n' => {
                line += 1;
                line_start = i + 1;
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = memchr_newline(bytes, i);
                // To `check_nesting`, a doc comment is a `#[doc = ...]` group.
                if matches!(bytes.get(i + 2), Some(b'/' | b'!')) {
                    nesting = nesting.max(groups.len() + open_angles + 1);
                }
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
                        let comment = Comment { start: i, text };
                        let continues =
                            run_end <= i && bytes[run_end..i].iter().all(u8::is_ascii_whitespace);
                        match runs.last_mut() {
                            Some(run) if continues => run.comments.push(comment),
                            _ => runs.push(Run {
                                place: (line, source[line_start..i].chars().count()),
                                comments: vec![comment],
                            }),
                        }
                        run_end = text_end;
                    }
                }
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                if matches!(bytes.get(i + 2), Some(b'*' | b'!')) {
                    nesting = nesting.max(groups.len() + open_angles + 1);
                }
                let end = block_comment_end(bytes, i)?;
                count_lines(bytes, i, end, &mut line, &mut line_start);
                i = end;
            }
            b'"' => {
                let end = match raw_string_hashes(bytes, i) {
                    Some(hashes) => raw_string_end(bytes, i + 1, hashes)?,
                    None => quoted_end(bytes, i + 1, b'"')?,
                };
                count_lines(bytes, i, end, &mut line, &mut line_start);
                i = end;
            }
            b'\'' => {
                let end = after_quote(source, i)?;
                count_lines(bytes, i, end, &mut line, &mut line_start);
                i = end;
            }
            b'[' if i > 0 && bytes[i - 1] == b'#' => {
                // `#[` + a name read here + `(`; else an attribute like any other group.
                let read = meta::NAMES.iter().find_map(|name| {
                    let open = i + 1 + name.len();
                    let named = bytes[i + 1..].starts_with(name.as_bytes())
                        && bytes.get(open) == Some(&b'(');
                    named
                        .then(|| meta::read(source, name, open, line, line_start))
                        .flatten()
                        .map(|read| (open, read))
                });
                nesting = nesting.max(groups.len() + open_angles + 1);
                match read {
                    // What syn sees of it is `#[serde]`: one group.
                    Some((open, read)) => {
                        attrs.push(Attr {
                            start: i - 1,
                            open,
                            end: read.end,
                            place: Pos {
                                line,
                                column: source[line_start..i - 1].chars().count(),
                            },
                            args: read.args,
                        });
                        (line, line_start, i) = (read.line, read.line_start, read.end);
                    }
                    None => {
                        groups.push(0);
                        i += 1;
                    }
                }
            }
            b'(' | b'[' | b'{' => {
                nesting = nesting.max(groups.len() + open_angles + 1);
                groups.push(0);
                i += 1;
            }
            b')' | b']' | b'}' => {
                if groups.len() < 2 {
                    return None;
                }
                open_angles -= groups.pop().unwrap_or(0);
                i += 1;
            }
            b'<' => {
                *groups.last_mut()? += 1;
                open_angles += 1;
                nesting = nesting.max(groups.len() + open_angles);
                i += 1;
            }
            b'>' => {
                // `->` and `=>` close nothing.
                let arrow = i > 0 && matches!(bytes[i - 1], b'-' | b'=');
                let top = groups.last_mut()?;
                if !arrow && *top > 0 {
                    *top -= 1;
                    open_angles -= 1;
                }
                i += 1;
            }
            b';' => {
                let top = groups.last_mut()?;
                open_angles -= *top;
                *top = 0;
                i += 1;
            }
            _ => i += 1,
        }
    }
    Some(Scan {
        runs,
        attrs,
        nesting,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(source: &str) -> Vec<((usize, usize), String)> {
        let docs = set_aside(source).docs;
        docs.places
            .iter()
            .map(|(p, r)| (*p, docs.text[r.clone()].to_string()))
            .collect()
    }

    #[test]
    fn runs_of_outer_line_docs_are_replaced_in_place() {
        let source = "/// One.\n///\n  /// Two \"quoted\" \\ é.\r\nstruct S { /// f\n f: u8 }\n";
        let aside = set_aside(source);
        assert_eq!(
            aside.source,
            // The indentation of a comment after the first would end its line: left out.
            "#[doc]\n\n\r\nstruct S { #[doc]\n f: u8 }\n"
        );
        assert_eq!(aside.docs.at(1, 0), Some("One.\n\nTwo \"quoted\" \\ é."));
        assert_eq!(aside.docs.at(4, 11), Some("f"));
        assert_eq!(aside.docs.at(2, 0), None);
        assert_eq!(aside.docs.len(), 2);
    }

    #[test]
    fn set_aside_attributes_leave_blanks_only_where_something_follows_on_their_line() {
        let source = "#[serde(rename = \"a\")]\n  #[serde(default)] pub a: u8,\r\n#[serde(\r\n  default,\n  rename = \"b\")]  \n  b: u8,\n#[serde(skip)]";
        let aside = set_aside(source);
        assert_eq!(
            aside.source,
            "#[serde]\n  #[serde]          pub a: u8,\r\n#[serde]\r\n\n  \n  b: u8,\n#[serde]"
        );
        // Each is found at its `#`, as before.
        assert_eq!(aside.attrs.len(), 4);
    }

    #[test]
    fn a_token_or_a_comment_ends_a_run() {
        let source = "/// a\n#[serde(x)]\n/// b\n// plain\n/// c\n  ///   d\n";
        assert_eq!(
            texts(source),
            vec![
                ((1, 0), "a".to_string()),
                ((3, 0), "b".to_string()),
                ((5, 0), "c\n  d".to_string())
            ]
        );
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
            "let r#type = 1; let bar = \"/// x\"; // r#\"\n",
            "/// yes\n",
        );
        // (The multi-line string moves the last line to 12.)
        assert_eq!(texts(source), vec![((12, 0), "yes".to_string())]);
    }

    #[test]
    fn columns_count_characters() {
        let source = "const É: u8 = 0; /// é\nconst B: u8 = 1;\n\t/// tab\n";
        assert_eq!(
            texts(source),
            vec![((1, 17), "é".to_string()), ((3, 1), "tab".to_string())]
        );
    }

    #[test]
    fn a_text_that_does_not_end_is_left_as_it_is() {
        for source in [
            "/// a\nconst A: &str = \"open;\n",
            "/// a\n/* open\n",
            "/// a\nconst R: &str = r#\"open\";",
            "/// a\nstruct S { x: u8 }}\n",
        ] {
            let aside = set_aside(source);
            assert_eq!(aside.source, source);
            assert_eq!(aside.docs.len(), 0);
            assert_eq!(aside.nesting, None);
        }
    }

    #[test]
    fn a_bare_carriage_return_is_left_to_proc_macro2() {
        let aside = set_aside("/// a\rb\nstruct S;\n");
        assert_eq!(aside.source, "/// a\rb\nstruct S;\n");
        assert_eq!(aside.docs.len(), 0);
    }

    #[test]
    fn nesting_is_counted_as_check_nesting_counts_it() {
        for (source, depth) in [
            ("struct S;", 0),
            ("struct S { x: u8 }", 2),
            ("struct S { x: Vec<Option<u8>> }", 4),
            ("fn f() -> Vec<u8> { a => b; x.map(|y| y) }", 3),
            (
                "struct S { x: u8 } // (((\n/* [[[ */ const C: &str = \"{{{\";",
                2,
            ),
            ("mod m { /// doc\n struct S; }", 3),
            ("type T = A<B<C>>; type U = D<E>;", 3),
        ] {
            assert_eq!(set_aside(source).nesting, Some(depth), "{source}");
        }
    }

    /// Every token of `source` as proc-macro2 lexes it, with its place; each run of doc
    /// attributes (`#[doc = "..."]`, or the placeholder, whose text `docs` holds) as one entry of
    /// its text, joined as schemars joins doc attributes.
    fn lexed(
        source: &str,
        docs: &DocComments,
        attrs: &SetAsideAttrs,
    ) -> Vec<(String, usize, usize)> {
        use proc_macro2::{TokenStream, TokenTree};
        /// An attribute read by `meta` as one entry: what it says, with the places of its items.
        fn args_text(args: &meta::Args) -> String {
            match args {
                meta::Args::Serde(items) => items
                    .iter()
                    .map(|m| {
                        let arg = match &m.arg {
                            meta::Arg::Flag => String::new(),
                            meta::Arg::Not => "!".into(),
                            meta::Arg::Lit(l) => {
                                format!("={}@{}:{}", l.text, l.pos.line, l.pos.column)
                            }
                        };
                        format!("serde {}@{}:{}{arg}", m.name, m.pos.line, m.pos.column)
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                meta::Args::Derive(paths) => paths
                    .iter()
                    .map(|p| {
                        let lead = if p.leading_colon { "::" } else { "" };
                        format!("derive {lead}{}", p.segments.join("::"))
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            }
        }
        /// The same entry from the tokens of an attribute as proc-macro2 lexes it, when `meta`
        /// would read its text (else `None`: it is walked token by token).
        fn attr_text(group: &proc_macro2::Group) -> Option<String> {
            let trees: Vec<TokenTree> = group.stream().into_iter().collect();
            let [TokenTree::Ident(name), TokenTree::Group(list)] = &trees[..] else {
                return None;
            };
            let text = format!("#[{name}{list}]");
            let read = meta::read(&text, &name.to_string(), 2 + name.to_string().len(), 1, 0)?;
            // The places are proc-macro2's: rebuild the entry from its tokens.
            let items: Vec<TokenTree> = list.stream().into_iter().collect();
            let parts = items.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','));
            let at = |t: &TokenTree| {
                let s = t.span().start();
                format!("@{}:{}", s.line, s.column)
            };
            let mut out = Vec::new();
            for part in parts.filter(|p| !p.is_empty()) {
                out.push(match (&read.args, part) {
                    (meta::Args::Derive(_), _) => {
                        let path: String = part.iter().map(ToString::to_string).collect();
                        format!("derive {path}")
                    }
                    (_, [n]) => format!("serde {n}{}", at(n)),
                    (_, [bang, n]) => format!("serde {n}{}!", at(bang)),
                    (_, [n, _, v]) => format!("serde {n}{}={v}{}", at(n), at(v)),
                    _ => return None,
                });
            }
            Some(out.join(", "))
        }
        /// A doc attribute's text, when the token at `i` opens one.
        fn doc_at(trees: &[TokenTree], i: usize, docs: &DocComments) -> Option<String> {
            let (TokenTree::Punct(p), Some(TokenTree::Group(g))) = (&trees[i], trees.get(i + 1))
            else {
                return None;
            };
            let meta = syn::parse2::<syn::Meta>(g.stream()).ok()?;
            if p.as_char() != '#' || !meta.path().is_ident("doc") {
                return None;
            }
            let at = p.span().start();
            Some(match (&meta, docs.at(at.line, at.column)) {
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
                ) => {
                    let s = s.value();
                    s.strip_prefix(' ').unwrap_or(&s).to_string()
                }
                (other, _) => quote::ToTokens::to_token_stream(other).to_string(),
            })
        }
        fn walk(
            ts: TokenStream,
            docs: &DocComments,
            attrs: &SetAsideAttrs,
            out: &mut Vec<(String, usize, usize)>,
        ) {
            let trees: Vec<TokenTree> = ts.into_iter().collect();
            let mut i = 0;
            let mut run: Option<usize> = None;
            while i < trees.len() {
                let at = trees[i].span().start();
                if let (TokenTree::Punct(p), Some(TokenTree::Group(g))) =
                    (&trees[i], trees.get(i + 1))
                    && p.as_char() == '#'
                {
                    let place = Pos::from(p.span());
                    if let Some(text) = attrs.get(place).map(args_text).or_else(|| attr_text(g)) {
                        out.push((text, at.line, at.column));
                        run = None;
                        i += 2;
                        continue;
                    }
                }
                if let Some(text) = doc_at(&trees, i, docs) {
                    match run {
                        Some(k) => {
                            out[k].0.push('\n');
                            out[k].0.push_str(&text);
                        }
                        None => {
                            run = Some(out.len());
                            out.push((text, at.line, at.column));
                        }
                    }
                    i += 2;
                    continue;
                }
                run = None;
                match &trees[i] {
                    TokenTree::Group(g) => {
                        out.push((format!("{:?}", g.delimiter()), at.line, at.column));
                        walk(g.stream(), docs, attrs, out);
                        let close = g.span_close().start();
                        out.push(("close".into(), close.line, close.column));
                    }
                    other => out.push((other.to_string(), at.line, at.column)),
                }
                i += 1;
            }
        }
        let mut out = Vec::new();
        walk(
            source.parse().expect("the source lexes"),
            docs,
            attrs,
            &mut out,
        );
        out
    }

    /// The tokens of the text with its doc comments set aside are those of the text as it is:
    /// the same places, and the same doc texts.
    fn same_as_proc_macro2(source: &str) {
        let aside = set_aside(source);
        assert_eq!(
            lexed(&aside.source, &aside.docs, &aside.attrs),
            lexed(source, &DocComments::default(), &SetAsideAttrs::default()),
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
            "/// a\n// plain\n/// b\n\n\n   /// c\n#[doc = \" d\"]\n/// e\nstruct S;",
            "/// no newline at the end",
            "#[derive(Clone, ::serde::Serialize)] #[serde(default, !x,\r\n  rename = \"é日\", n = 1_0, f = 2.5, b = true)] /// d\nstruct S { #[serde(rename(serialize = \"a\"))] #[serde(rename = \"b\")] x: u8, #[serde(alias = \"y\")] /// z\n y: u8 }",
            "#[serde(rename = \"multi\nline\")] #[serde(skip)]\t#[derive(A)]\n#[serde(a = \"\\\"\")] #[serde(b = 10u8)] enum E { #[serde(other)] V }",
            "#[serde(\n)]\n#[derive()]\nstruct T;",
        ] {
            same_as_proc_macro2(source);
        }
    }

    #[test]
    fn every_fixture_lexes_the_same() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut seen = 0;
        let mut attrs_read = 0;
        for path in crate::syntax::rust_files(vec![root]) {
            let text = std::fs::read_to_string(&path).unwrap();
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            if text.parse::<proc_macro2::TokenStream>().is_ok() {
                same_as_proc_macro2(text);
                seen += 1;
                attrs_read += set_aside(text).attrs.len();
            }
        }
        assert!(seen > 20, "only {seen} fixture files");
        // The real-world corpus alone has tens of thousands of `#[serde(..)]` and `#[derive(..)]`.
        assert!(attrs_read > 15_000, "only {attrs_read} attributes read");
    }
}
