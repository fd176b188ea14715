//! syn's items of a file of API types, built straight from the text.
//!
//! Generated API types (kopium's, `create api`'s) are `use`s, modules, structs, enums and type
//! aliases whose fields have path and tuple types, with attributes; after doc comments and the
//! common `#[serde]` / `#[derive]` were set aside ([`super::doc_comments`]), proc-macro2's lexing
//! and syn's parse of what is left were still most of reading a large crate of them (syn spends
//! about 10,000 instructions on a type such as `Option<Vec<Foo>>`). This reader builds the same
//! `syn::Item`s (equal by `==`, every span at the same line and column, see the tests) directly,
//! with spans cut from the file ([`super::spans::FileSpans`]). It reads only that subset: at
//! anything else (a function, an impl, generics, a lifetime, a comment it does not expect...)
//! it gives up on the whole file, which syn then parses as before.

use std::str::FromStr;

use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use syn::punctuated::Punctuated;
use syn::token;

use super::spans::FileSpans;

/// The items of `text` (doc comments and attributes set aside already), or `None` when it holds
/// anything this reader does not read.
pub(crate) fn items(text: &str, spans: &FileSpans) -> Option<Vec<syn::Item>> {
    let mut r = Reader {
        text,
        bytes: text.as_bytes(),
        i: 0,
        spans,
        empty: TokenStream::new(),
    };
    r.inner_docs()?;
    let items = r.items()?;
    (r.i == r.bytes.len()).then_some(items)
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    i: usize,
    spans: &'a FileSpans,
    /// Shared by the groups made only for their delimiters' spans (a clone is not an allocation).
    empty: TokenStream,
}

/// Whether `w` is not an identifier: one of Rust 2021's strict and reserved keywords, or `_`.
fn is_keyword(w: &str) -> bool {
    matches!(
        w,
        "as" | "break"
            | "const"
            | "continue"
            | "crate"
            | "else"
            | "enum"
            | "extern"
            | "false"
            | "fn"
            | "for"
            | "if"
            | "impl"
            | "in"
            | "let"
            | "loop"
            | "match"
            | "mod"
            | "move"
            | "mut"
            | "pub"
            | "ref"
            | "return"
            | "self"
            | "Self"
            | "static"
            | "struct"
            | "super"
            | "trait"
            | "true"
            | "type"
            | "unsafe"
            | "use"
            | "where"
            | "while"
            | "async"
            | "await"
            | "dyn"
            | "abstract"
            | "become"
            | "box"
            | "do"
            | "final"
            | "macro"
            | "override"
            | "priv"
            | "typeof"
            | "unsized"
            | "virtual"
            | "yield"
            | "try"
            | "gen"
            | "_"
    )
}

/// The end of the run of spaces at `i` (the doc comments set aside are long runs of them), eight
/// bytes at a time.
fn skip_spaces(bytes: &[u8], mut i: usize) -> usize {
    const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
    while let Some(chunk) = bytes.get(i..i + 8) {
        let word = u64::from_ne_bytes(chunk.try_into().expect("eight bytes"));
        if word != SPACES {
            break;
        }
        i += 8;
    }
    while bytes.get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

impl<'a> Reader<'a> {
    fn span(&self, from: usize, to: usize) -> Span {
        self.spans.span(from..to)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.i).copied()
    }

    fn at(&self, s: &str) -> bool {
        self.bytes[self.i..].starts_with(s.as_bytes())
    }

    /// Whitespace and plain comments; `None` at a doc comment (an attribute to syn).
    fn trivia(&mut self) -> Option<()> {
        loop {
            match self.peek() {
                Some(b' ') => self.i = skip_spaces(self.bytes, self.i),
                Some(b'\t' | b'\n' | b'\r') => self.i += 1,
                Some(b'/') if self.at("//") => {
                    let doc = (self.at("///") && !self.at("////")) || self.at("//!");
                    if doc {
                        return None;
                    }
                    while self.peek().is_some_and(|b| b != b'\n') {
                        self.i += 1;
                    }
                }
                Some(b'/') if self.at("/*") => {
                    let doc =
                        (self.at("/**") && !self.at("/**/") && !self.at("/***")) || self.at("/*!");
                    if doc {
                        return None;
                    }
                    self.i = super::lex::block_comment_end(self.bytes, self.i)?;
                }
                _ => return Some(()),
            }
        }
    }

    /// The file's leading `//!` lines: syn makes them the file's attributes, which the CRD reader
    /// does not read (so neither are they built here).
    fn inner_docs(&mut self) -> Option<()> {
        loop {
            while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
                self.i += 1;
            }
            if !self.at("//!") {
                return Some(());
            }
            let line = &self.bytes[self.i..];
            let end = line.iter().position(|&b| b == b'\n').unwrap_or(line.len());
            // A bare `\r` in a doc comment is an error for proc-macro2: leave it to say so.
            if line[..end].contains(&b'\r') && line.get(end.wrapping_sub(1)) != Some(&b'\r') {
                return None;
            }
            self.i += end;
        }
    }

    /// `c` (after trivia): its span.
    fn punct(&mut self, c: u8) -> Option<Span> {
        self.trivia()?;
        (self.peek()? == c).then(|| {
            self.i += 1;
            self.span(self.i - 1, self.i)
        })
    }

    fn eat(&mut self, c: u8) -> Option<Option<Span>> {
        self.trivia()?;
        Some(if self.peek() == Some(c) {
            self.i += 1;
            Some(self.span(self.i - 1, self.i))
        } else {
            None
        })
    }

    /// A word (identifier or keyword) as written, and where: ASCII only, `r#` kept.
    fn word(&mut self) -> Option<(&'a str, usize)> {
        self.trivia()?;
        let start = self.i;
        if self.at("r#") {
            self.i += 2;
        }
        let first = self.peek()?;
        if !(first.is_ascii_alphabetic() || first == b'_') {
            self.i = start;
            return None;
        }
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            self.i += 1;
        }
        if self
            .peek()
            .is_some_and(|b| b >= 0x80 || b == b'#' || b == b'"' || b == b'\'')
        {
            return None;
        }
        Some((&self.text[start..self.i], start))
    }

    fn peek_word(&mut self) -> Option<&'a str> {
        let at = self.i;
        let w = self.word().map(|(w, _)| w);
        self.i = at;
        w
    }

    fn keyword(&mut self, kw: &str) -> Option<Span> {
        let at = self.i;
        match self.word() {
            Some((w, start)) if w == kw => Some(self.span(start, self.i)),
            _ => {
                self.i = at;
                None
            }
        }
    }

    /// An identifier (not a keyword; `r#kw` is one).
    fn ident(&mut self) -> Option<Ident> {
        let (w, start) = self.word()?;
        self.ident_of(w, start, false)
    }

    /// A path segment's identifier: also `crate`, `self`, `super`, `Self`.
    fn segment_ident(&mut self) -> Option<Ident> {
        let (w, start) = self.word()?;
        self.ident_of(w, start, true)
    }

    /// The identifier `w` read at `start`; `segment`: a path segment's (`crate`, `self`, `super`
    /// and `Self` too).
    fn ident_of(&self, w: &str, start: usize, segment: bool) -> Option<Ident> {
        let span = self.span(start, self.i);
        let path_keyword = matches!(w, "crate" | "self" | "super" | "Self");
        match w.strip_prefix("r#") {
            Some(raw) if !matches!(raw, "crate" | "self" | "super" | "Self" | "_") => {
                Some(Ident::new_raw(raw, span))
            }
            Some(_) => None,
            None if segment && path_keyword => Some(Ident::new(w, span)),
            None if is_keyword(w) => None,
            None => Some(Ident::new(w, span)),
        }
    }

    /// `::` (after trivia, both colons together): the spans of its two characters.
    fn path_sep(&mut self) -> Option<Option<token::PathSep>> {
        self.trivia()?;
        Some(self.at("::").then(|| {
            self.i += 2;
            token::PathSep {
                spans: [
                    self.span(self.i - 2, self.i - 1),
                    self.span(self.i - 1, self.i),
                ],
            }
        }))
    }

    /// The delimiters' span of the group that opens at `open` and closes at `close` (the bytes of
    /// the opening and the closing character).
    fn delim(
        &self,
        delimiter: Delimiter,
        open: usize,
        close: usize,
    ) -> proc_macro2::extra::DelimSpan {
        let mut g = Group::new(delimiter, self.empty.clone());
        g.set_span(self.span(open, close + 1));
        g.delim_span()
    }

    /// `open` element (`,` element)* `,`? `close`, the elements read by `element`: them, and the
    /// places of `open` and `close`.
    fn list<T>(
        &mut self,
        open: u8,
        close: u8,
        mut element: impl FnMut(&mut Self) -> Option<T>,
    ) -> Option<(Punctuated<T, token::Comma>, usize, usize)> {
        self.trivia()?;
        let opened = self.i;
        self.punct(open)?;
        let mut elements = Punctuated::new();
        loop {
            self.trivia()?;
            if self.peek()? == close {
                self.i += 1;
                return Some((elements, opened, self.i - 1));
            }
            elements.push_value(element(self)?);
            if let Some(comma) = self.eat(b',')? {
                elements.push_punct(token::Comma { spans: [comma] });
            } else if self.peek() != Some(close) {
                return None;
            }
        }
    }

    fn items(&mut self) -> Option<Vec<syn::Item>> {
        let mut items = Vec::new();
        loop {
            self.trivia()?;
            if self.peek().is_none_or(|b| b == b'}') {
                return Some(items);
            }
            items.push(self.item()?);
        }
    }

    fn item(&mut self) -> Option<syn::Item> {
        let attrs = self.outer_attrs()?;
        let vis = self.vis()?;
        match self.peek_word()? {
            "use" => self.item_use(attrs, vis),
            "mod" => self.item_mod(attrs, vis),
            "struct" => self.item_struct(attrs, vis),
            "enum" => self.item_enum(attrs, vis),
            "type" => self.item_type(attrs, vis),
            _ => None,
        }
    }

    fn outer_attrs(&mut self) -> Option<Vec<syn::Attribute>> {
        let mut attrs = Vec::new();
        loop {
            self.trivia()?;
            if self.peek() != Some(b'#') {
                return Some(attrs);
            }
            let pound = self.i;
            self.i += 1;
            let open = self.i;
            self.punct(b'[')?;
            // Only `#[` right together, as the set-aside text writes it (`# [` is rare).
            if open != pound + 1 {
                return None;
            }
            let path = self.path_mod_style()?;
            self.trivia()?;
            let meta = match self.peek()? {
                b']' => syn::Meta::Path(path),
                b'(' | b'[' | b'{' => {
                    let (delimiter, open, tokens, close) = self.group()?;
                    let span = self.delim(delimiter, open, close);
                    syn::Meta::List(syn::MetaList {
                        path,
                        delimiter: match delimiter {
                            Delimiter::Parenthesis => {
                                syn::MacroDelimiter::Paren(token::Paren { span })
                            }
                            Delimiter::Brace => syn::MacroDelimiter::Brace(token::Brace { span }),
                            _ => syn::MacroDelimiter::Bracket(token::Bracket { span }),
                        },
                        tokens,
                    })
                }
                b'=' => {
                    let eq = self.punct(b'=')?;
                    let lit = self.literal()?;
                    syn::Meta::NameValue(syn::MetaNameValue {
                        path,
                        eq_token: token::Eq { spans: [eq] },
                        value: syn::Expr::Lit(syn::ExprLit {
                            attrs: Vec::new(),
                            lit: syn::Lit::new(lit),
                        }),
                    })
                }
                _ => return None,
            };
            let close = self.i;
            self.punct(b']')?;
            attrs.push(syn::Attribute {
                pound_token: token::Pound {
                    spans: [self.span(pound, pound + 1)],
                },
                style: syn::AttrStyle::Outer,
                bracket_token: token::Bracket {
                    span: self.delim(Delimiter::Bracket, open, close),
                },
                meta,
            });
        }
    }

    /// A literal token: a string (escapes and raw strings too), or a decimal number.
    fn literal(&mut self) -> Option<Literal> {
        self.trivia()?;
        let start = self.i;
        match self.peek()? {
            b'"' => self.i = super::lex::quoted_end(self.bytes, self.i + 1, b'"')?,
            b'r' => {
                let hashes = self.bytes[self.i + 1..]
                    .iter()
                    .take_while(|&&b| b == b'#')
                    .count();
                let quote = self.i + 1 + hashes;
                if self.bytes.get(quote) != Some(&b'"') {
                    return None;
                }
                self.i = super::lex::raw_string_end(self.bytes, quote + 1, hashes)?;
            }
            b'0'..=b'9' => {
                while self.peek().is_some_and(|b| b.is_ascii_digit() || b == b'_') {
                    self.i += 1;
                }
                if self.peek() == Some(b'.') {
                    return None;
                }
            }
            _ => return None,
        }
        // A suffix, or a character that makes it another token, is left to syn.
        if self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80 || b == b'\'')
        {
            return None;
        }
        let text = &self.text[start..self.i];
        // A bare `\r` in a string is an error for proc-macro2: leave it to say so.
        if text.contains('\r') {
            return None;
        }
        let mut lit = Literal::from_str(text).ok()?;
        lit.set_span(self.span(start, self.i));
        Some(lit)
    }

    /// A delimited group of tokens: its delimiter, where it opens, its tokens, where it closes.
    fn group(&mut self) -> Option<(Delimiter, usize, TokenStream, usize)> {
        self.trivia()?;
        let open = self.i;
        let (delimiter, closer) = match self.peek()? {
            b'(' => (Delimiter::Parenthesis, b')'),
            b'[' => (Delimiter::Bracket, b']'),
            b'{' => (Delimiter::Brace, b'}'),
            _ => return None,
        };
        self.i += 1;
        let mut trees = Vec::new();
        loop {
            self.trivia()?;
            let b = self.peek()?;
            if b == closer {
                let close = self.i;
                self.i += 1;
                return Some((delimiter, open, trees.into_iter().collect(), close));
            }
            match b {
                b'(' | b'[' | b'{' => {
                    let (d, o, ts, c) = self.group()?;
                    let mut g = Group::new(d, ts);
                    g.set_span(self.span(o, c + 1));
                    trees.push(TokenTree::Group(g));
                }
                b')' | b']' | b'}' => return None,
                b'"' | b'0'..=b'9' => trees.push(TokenTree::Literal(self.literal()?)),
                b'r' if self.bytes[self.i + 1..]
                    .iter()
                    .find(|&&b| b != b'#')
                    .is_some_and(|&b| b == b'"') =>
                {
                    trees.push(TokenTree::Literal(self.literal()?))
                }
                b'\'' => return None,
                b if b.is_ascii_alphabetic() || b == b'_' => {
                    let (w, start) = self.word()?;
                    let span = self.span(start, self.i);
                    trees.push(TokenTree::Ident(match w.strip_prefix("r#") {
                        // `r#self` and the like are no identifiers: left to syn to say so.
                        Some("crate" | "self" | "super" | "Self" | "_") => return None,
                        Some(raw) => Ident::new_raw(raw, span),
                        None => Ident::new(w, span),
                    }));
                }
                b if b"~!@#$%^&*-=+|;:,<.>/?".contains(&b) => {
                    self.i += 1;
                    let joint = self
                        .peek()
                        .is_some_and(|n| b"~!@#$%^&*-=+|;:,<.>/?'".contains(&n))
                        && !self.at("//")
                        && !self.at("/*");
                    let mut p = Punct::new(
                        b as char,
                        if joint {
                            Spacing::Joint
                        } else {
                            Spacing::Alone
                        },
                    );
                    p.set_span(self.span(self.i - 1, self.i));
                    trees.push(TokenTree::Punct(p));
                }
                _ => return None,
            }
        }
    }

    /// `pub`, `pub(crate)`, `pub(self)`, `pub(super)`, or nothing.
    fn vis(&mut self) -> Option<syn::Visibility> {
        let Some(pub_span) = self.keyword("pub") else {
            return Some(syn::Visibility::Inherited);
        };
        let pub_token = token::Pub { span: pub_span };
        let at = self.i;
        self.trivia()?;
        if self.peek() == Some(b'(') {
            let open = self.i;
            self.i += 1;
            match self.word() {
                Some((w @ ("crate" | "self" | "super"), start)) => {
                    let ident = Ident::new(w, self.span(start, self.i));
                    self.trivia()?;
                    if self.peek()? != b')' {
                        return None;
                    }
                    let close = self.i;
                    self.i += 1;
                    return Some(syn::Visibility::Restricted(syn::VisRestricted {
                        pub_token,
                        paren_token: token::Paren {
                            span: self.delim(Delimiter::Parenthesis, open, close),
                        },
                        in_token: None,
                        path: Box::new(syn::Path::from(ident)),
                    }));
                }
                // `pub(in path)`: left to syn.
                Some(("in", _)) => return None,
                // A tuple field's type right after `pub`.
                _ => {}
            }
        }
        self.i = at;
        Some(syn::Visibility::Public(pub_token))
    }

    /// A path of identifiers only, as in attributes.
    fn path_mod_style(&mut self) -> Option<syn::Path> {
        self.path(false)
    }

    /// A type path, with angle-bracketed type arguments.
    fn type_path(&mut self) -> Option<syn::Path> {
        self.path(true)
    }

    /// A path; `generics`: its segments may take `<...>` type arguments.
    fn path(&mut self, generics: bool) -> Option<syn::Path> {
        let leading_colon = self.path_sep()?;
        let mut segments = Punctuated::new();
        loop {
            let ident = self.segment_ident()?;
            self.trivia()?;
            let arguments = if generics && self.peek() == Some(b'<') {
                self.generic_args()?
            } else {
                syn::PathArguments::None
            };
            segments.push_value(syn::PathSegment { ident, arguments });
            match self.path_sep()? {
                Some(sep) => segments.push_punct(sep),
                None => {
                    return Some(syn::Path {
                        leading_colon,
                        segments,
                    });
                }
            }
        }
    }

    fn generic_args(&mut self) -> Option<syn::PathArguments> {
        let (args, lt, gt) = self.list(b'<', b'>', |r| {
            // A lifetime, a const argument, an associated type: left to syn.
            if matches!(r.peek()?, b'\'' | b'{' | b'-' | b'0'..=b'9' | b'"') {
                return None;
            }
            let ty = r.ty()?;
            r.trivia()?;
            if matches!(r.peek()?, b'=' | b':') && !r.at("::") {
                return None;
            }
            Some(syn::GenericArgument::Type(ty))
        })?;
        Some(syn::PathArguments::AngleBracketed(
            syn::AngleBracketedGenericArguments {
                colon2_token: None,
                lt_token: token::Lt {
                    spans: [self.span(lt, lt + 1)],
                },
                args,
                gt_token: token::Gt {
                    spans: [self.span(gt, gt + 1)],
                },
            },
        ))
    }

    /// A path type or a tuple type (`()` too).
    fn ty(&mut self) -> Option<syn::Type> {
        self.trivia()?;
        if self.peek()? == b'(' {
            let (elems, open, close) = self.list(b'(', b')', Self::ty)?;
            // `(T)` is a parenthesized type, not a tuple: left to syn.
            if elems.len() == 1 && !elems.trailing_punct() {
                return None;
            }
            return Some(syn::Type::Tuple(syn::TypeTuple {
                paren_token: token::Paren {
                    span: self.delim(Delimiter::Parenthesis, open, close),
                },
                elems,
            }));
        }
        // A type that starts with a keyword (`dyn`, `impl`, `fn`...) has no path: the segment's
        // identifier refuses it, and the type is left to syn.
        let path = self.type_path()?;
        self.trivia()?;
        // A macro type (`m!()`) or a trait object with bounds (`A + B`): left to syn.
        if matches!(self.peek(), Some(b'!' | b'+')) {
            return None;
        }
        Some(syn::Type::Path(syn::TypePath { qself: None, path }))
    }

    fn semi(&mut self) -> Option<token::Semi> {
        Some(token::Semi {
            spans: [self.punct(b';')?],
        })
    }

    fn item_use(&mut self, attrs: Vec<syn::Attribute>, vis: syn::Visibility) -> Option<syn::Item> {
        let use_token = token::Use {
            span: self.keyword("use")?,
        };
        let leading_colon = self.path_sep()?;
        let tree = self.use_tree()?;
        Some(syn::Item::Use(syn::ItemUse {
            attrs,
            vis,
            use_token,
            leading_colon,
            tree,
            semi_token: self.semi()?,
        }))
    }

    fn use_tree(&mut self) -> Option<syn::UseTree> {
        self.trivia()?;
        match self.peek()? {
            b'*' => Some(syn::UseTree::Glob(syn::UseGlob {
                star_token: token::Star {
                    spans: [self.punct(b'*')?],
                },
            })),
            b'{' => {
                let (items, open, close) = self.list(b'{', b'}', Self::use_tree)?;
                Some(syn::UseTree::Group(syn::UseGroup {
                    brace_token: token::Brace {
                        span: self.delim(Delimiter::Brace, open, close),
                    },
                    items,
                }))
            }
            _ => {
                let ident = self.segment_ident()?;
                if let Some(colon2_token) = self.path_sep()? {
                    return Some(syn::UseTree::Path(syn::UsePath {
                        ident,
                        colon2_token,
                        tree: Box::new(self.use_tree()?),
                    }));
                }
                if let Some(as_span) = self.keyword("as") {
                    let rename = match self.word()? {
                        ("_", start) => Ident::new("_", self.span(start, self.i)),
                        (_, start) => {
                            self.i = start;
                            self.ident()?
                        }
                    };
                    return Some(syn::UseTree::Rename(syn::UseRename {
                        ident,
                        as_token: token::As { span: as_span },
                        rename,
                    }));
                }
                Some(syn::UseTree::Name(syn::UseName { ident }))
            }
        }
    }

    fn item_mod(&mut self, attrs: Vec<syn::Attribute>, vis: syn::Visibility) -> Option<syn::Item> {
        let mod_token = token::Mod {
            span: self.keyword("mod")?,
        };
        let ident = self.ident()?;
        self.trivia()?;
        let (content, semi) = if self.peek()? == b';' {
            (None, Some(self.semi()?))
        } else {
            let open = self.i;
            self.punct(b'{')?;
            self.trivia()?;
            // Inner attributes and docs belong to the module: left to syn.
            if self.at("#!") {
                return None;
            }
            let items = self.items()?;
            let close = self.i;
            self.punct(b'}')?;
            let brace = token::Brace {
                span: self.delim(Delimiter::Brace, open, close),
            };
            (Some((brace, items)), None)
        };
        Some(syn::Item::Mod(syn::ItemMod {
            attrs,
            vis,
            unsafety: None,
            mod_token,
            ident,
            content,
            semi,
        }))
    }

    /// No generics (`<`) and no `where`: those are left to syn.
    fn plain_generics(&mut self) -> Option<syn::Generics> {
        self.trivia()?;
        if self.peek()? == b'<' || self.peek_word() == Some("where") {
            return None;
        }
        Some(syn::Generics::default())
    }

    fn item_struct(
        &mut self,
        attrs: Vec<syn::Attribute>,
        vis: syn::Visibility,
    ) -> Option<syn::Item> {
        let struct_token = token::Struct {
            span: self.keyword("struct")?,
        };
        let ident = self.ident()?;
        let generics = self.plain_generics()?;
        let (fields, semi_token) = match self.peek()? {
            b'{' => (syn::Fields::Named(self.named_fields()?), None),
            b'(' => {
                let fields = syn::Fields::Unnamed(self.unnamed_fields()?);
                (fields, Some(self.semi()?))
            }
            b';' => (syn::Fields::Unit, Some(self.semi()?)),
            _ => return None,
        };
        Some(syn::Item::Struct(syn::ItemStruct {
            attrs,
            vis,
            struct_token,
            ident,
            generics,
            fields,
            semi_token,
        }))
    }

    fn named_fields(&mut self) -> Option<syn::FieldsNamed> {
        let (named, open, close) = self.list(b'{', b'}', |r| {
            let attrs = r.outer_attrs()?;
            let vis = r.vis()?;
            let ident = r.ident()?;
            let colon = r.punct(b':')?;
            if r.at(":") {
                return None;
            }
            Some(syn::Field {
                attrs,
                vis,
                mutability: syn::FieldMutability::None,
                ident: Some(ident),
                colon_token: Some(token::Colon { spans: [colon] }),
                ty: r.ty()?,
            })
        })?;
        Some(syn::FieldsNamed {
            brace_token: token::Brace {
                span: self.delim(Delimiter::Brace, open, close),
            },
            named,
        })
    }

    fn unnamed_fields(&mut self) -> Option<syn::FieldsUnnamed> {
        let (unnamed, open, close) = self.list(b'(', b')', |r| {
            Some(syn::Field {
                attrs: r.outer_attrs()?,
                vis: r.vis()?,
                mutability: syn::FieldMutability::None,
                ident: None,
                colon_token: None,
                ty: r.ty()?,
            })
        })?;
        Some(syn::FieldsUnnamed {
            paren_token: token::Paren {
                span: self.delim(Delimiter::Parenthesis, open, close),
            },
            unnamed,
        })
    }

    fn item_enum(&mut self, attrs: Vec<syn::Attribute>, vis: syn::Visibility) -> Option<syn::Item> {
        let enum_token = token::Enum {
            span: self.keyword("enum")?,
        };
        let ident = self.ident()?;
        let generics = self.plain_generics()?;
        let (variants, open, close) = self.list(b'{', b'}', |r| {
            let attrs = r.outer_attrs()?;
            // A variant takes no visibility; syn refuses one, and so is it left to syn.
            if r.peek_word() == Some("pub") {
                return None;
            }
            let ident = r.ident()?;
            r.trivia()?;
            let fields = match r.peek()? {
                b'{' => syn::Fields::Named(r.named_fields()?),
                b'(' => syn::Fields::Unnamed(r.unnamed_fields()?),
                // A discriminant is an expression: left to syn.
                b'=' => return None,
                _ => syn::Fields::Unit,
            };
            Some(syn::Variant {
                attrs,
                ident,
                fields,
                discriminant: None,
            })
        })?;
        Some(syn::Item::Enum(syn::ItemEnum {
            attrs,
            vis,
            enum_token,
            ident,
            generics,
            brace_token: token::Brace {
                span: self.delim(Delimiter::Brace, open, close),
            },
            variants,
        }))
    }

    fn item_type(&mut self, attrs: Vec<syn::Attribute>, vis: syn::Visibility) -> Option<syn::Item> {
        let type_token = token::Type {
            span: self.keyword("type")?,
        };
        let ident = self.ident()?;
        let generics = self.plain_generics()?;
        let eq = self.punct(b'=')?;
        let ty = self.ty()?;
        Some(syn::Item::Type(syn::ItemType {
            attrs,
            vis,
            type_token,
            ident,
            generics,
            eq_token: token::Eq { spans: [eq] },
            ty: Box::new(ty),
            semi_token: self.semi()?,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::visit::Visit;

    #[test]
    fn a_run_of_spaces_ends_at_its_first_other_byte_or_the_end() {
        for before in 0..3 {
            for run in 0..20 {
                for after in ["", "x", "\n", "\t ", " "] {
                    let text = format!("{}{}{after}", "a".repeat(before), " ".repeat(run));
                    let end = before + run + usize::from(after == " ");
                    assert_eq!(skip_spaces(text.as_bytes(), before), end, "{text:?}");
                }
            }
        }
    }

    /// Every span of `items` (of their tokens, identifiers and attribute tokens), as line:column
    /// ranges, in the order syn's visitor meets them.
    fn places(items: &[syn::Item]) -> Vec<(usize, usize, usize, usize)> {
        struct Spans(Vec<(usize, usize, usize, usize)>);
        impl Spans {
            fn push(&mut self, s: Span) {
                let (a, b) = (s.start(), s.end());
                self.0.push((a.line, a.column, b.line, b.column));
            }
            fn tokens(&mut self, ts: &TokenStream) {
                for t in ts.clone() {
                    self.push(t.span());
                    if let TokenTree::Group(g) = t {
                        self.push(g.span_open());
                        self.push(g.span_close());
                        self.tokens(&g.stream());
                    }
                }
            }
        }
        impl<'ast> Visit<'ast> for Spans {
            fn visit_span(&mut self, s: &Span) {
                self.push(*s);
            }
            fn visit_meta_list(&mut self, m: &'ast syn::MetaList) {
                syn::visit::visit_meta_list(self, m);
                self.tokens(&m.tokens);
            }
        }
        let mut v = Spans(Vec::new());
        for item in items {
            v.visit_item(item);
        }
        v.0
    }

    /// When the reader takes `text`: its items are syn's, at syn's places. Whether it took it.
    pub(crate) fn same_as_syn(text: &str) -> bool {
        let aside = super::super::doc_comments::set_aside(text);
        let source = &*aside.source;
        let Some(spans) = FileSpans::register(source) else {
            return false;
        };
        let Some(items) = items(source, &spans) else {
            return false;
        };
        let file: syn::File = syn::parse_str(source).expect("the reader took what syn refuses");
        assert!(file.items == items, "items differ from syn's: {text}");
        assert_eq!(places(&items), places(&file.items), "places differ: {text}");
        true
    }

    #[test]
    fn api_types_are_syns_items_at_syns_places() {
        for text in [
            "//! inner\n//! docs é\nuse self::prelude::*;\nuse ::a::{b, c::{d as e, f as _}, g::*,};\n\
             #[allow(unused_imports, clippy::all)]\nmod prelude {\n    pub use k8s_openapi::api::core::v1::Pod;\n}\n\
             /// A doc é.\n#[derive(CustomResource, Serialize, ::serde::Deserialize)]\n\
             #[kube(group = \"a.b\", version = \"v1\", kind = \"K\", printcolumn = r#\"{\"a\": 1}\"#, x = -1)]\n\
             #[kube(namespaced, status = \"S\")]\npub struct KSpec {\n    /// Field.\n\
             #[serde(default, skip_serializing_if = \"Option::is_none\", rename = \"aB\")]\n\
             pub a_b: Option<Vec<BTreeMap<String, (i32, ())>>>,\n    pub(crate) r#type: ::std::string::String,\n\
             #[serde(rename(serialize = \"x\"))] c: (),\n}\n\
             pub(super) struct T(pub u8, Option<String>);\nstruct U;\n\
             #[derive(Clone)]\npub enum E { A, #[serde(rename = \"b\")] B(u8,), C { x: Vec<u8> }, }\n\
             pub type Al = Option<crate::KSpec>;\nmod m;\n/* block */ // line\n",
            "pub struct Empty {}\npub enum Never {}\n",
        ] {
            assert!(same_as_syn(text), "not taken: {text}");
        }
    }

    #[test]
    fn anything_else_is_left_to_syn() {
        for text in [
            "fn f() {}",
            "impl A {}",
            "struct S<T> { t: T }",
            "struct S where u8: Copy { t: u8 }",
            "struct S { a: &'static str }",
            "struct S { a: [u8; 4] }",
            "struct S { a: Box<dyn Fn()> }",
            "struct S { a: Vec<'a> }",
            "struct S { a: (u8) }",
            "enum E { A = 1 }",
            "pub(in crate::a) struct S;",
            "#![allow(x)]\nstruct S;",
            "mod m { //! inner\n }",
            "struct S { a: u8 } /** doc */ struct T;",
            "#[a = b] struct S;",
            "#[a('x')] struct S;",
            "struct S { a: 1u8 }",
            "struct S { fn: u8 }",
            "struct S { é: u8 }",
            "macro_rules! m { () => {} }",
            "#[a(r#self)] struct S;",
            "#[a(r#_, r#crate)] struct S;",
            "struct S { r#self: u8 }",
            "use r#super::x;",
        ] {
            let aside = super::super::doc_comments::set_aside(text);
            let taken = FileSpans::register(&aside.source)
                .and_then(|spans| items(&aside.source, &spans))
                .is_some();
            assert!(!taken, "taken: {text}");
        }
    }

    #[test]
    fn every_fixture_and_the_corpus() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let (mut seen, mut taken, mut corpus) = (0, 0, 0);
        for path in crate::syntax::rust_files(vec![root.join("fixtures"), root.join("src")]) {
            let text = std::fs::read_to_string(&path).unwrap();
            seen += 1;
            if same_as_syn(&text) {
                taken += 1;
                corpus += usize::from(path.to_string_lossy().contains("crdgen-realworld"));
            }
        }
        eprintln!("{taken} of {seen} files read without syn's parse");
        assert_eq!(corpus, 20, "every file of the real-world corpus");
    }

    /// Real-world code: every file of the crates cargo fetched for this one.
    #[test]
    fn every_file_of_the_cargo_registry() {
        let home = std::env::var_os("CARGO_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo")));
        let Some(root) = home.map(|h| h.join("registry/src")).filter(|r| r.is_dir()) else {
            eprintln!("SKIPPED every_file_of_the_cargo_registry: no cargo registry sources found");
            return;
        };
        let (mut seen, mut taken) = (0, 0);
        for path in crate::syntax::rust_files(vec![root]) {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            seen += 1;
            match std::panic::catch_unwind(|| same_as_syn(&text)) {
                Ok(took) => taken += usize::from(took),
                Err(_) => panic!("{}", path.display()),
            }
        }
        eprintln!("{taken} of {seen} registry files read without syn's parse");
        assert!(taken > 200, "only {taken} of {seen} registry files read");
    }
}
