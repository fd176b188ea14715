//! Parses Rust files with syn at item level: function bodies are kept as unparsed tokens.
//!
//! Everything operator-rs reads in Rust source is at item level (types, `mod`s, `use`s, impl
//! headers, names), but most of a file's text is function bodies, and parsing their statements
//! is most of syn's time: 40% of `create api` before this module. So bodies are lexed (their
//! brackets must balance), set aside, and parsed on demand with [`Bodies::block`]; a syntax
//! error inside a body is left to the compiler.
//!
//! For the CRD reader, a crate's files are first [`prepare`]d (plain data, on any thread): doc
//! comments ([`doc_comments`]) and the common `#[serde]` / `#[derive]` ([`meta`]) are set aside
//! from the text with their places. [`parse_prepared`] then builds a file of API types straight
//! into syn's items ([`fast`], with spans from [`spans`]) and leaves any other file to syn.

mod doc_comments;
mod fast;
pub mod kube_attr;
pub(crate) mod lex;
pub(crate) mod meta;
pub(crate) mod pos;
pub(crate) mod spans;

use std::borrow::Cow;
use std::collections::HashMap;

pub(crate) use doc_comments::DocComments;
pub(crate) use meta::SetAsideAttrs;
pub(crate) use pos::Pos;
use proc_macro2::{Delimiter, Group, Spacing, TokenStream, TokenTree};

/// Whether `attrs` compile the item only in tests: `#[cfg(test)]`, `#[cfg(all(test, ...))]`.
pub(crate) fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    fn test_only(meta: &syn::Meta) -> bool {
        match meta {
            syn::Meta::Path(p) => p.is_ident("test"),
            syn::Meta::List(l) if l.path.is_ident("all") => l
                .parse_args_with(
                    syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
                )
                .is_ok_and(|all| all.iter().any(test_only)),
            _ => false,
        }
    }
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<syn::Meta>().is_ok_and(|m| test_only(&m))
    })
}

/// The names of a path's segments, without their generic arguments: `a::b::<T>::C` -> a, b, C.
pub(crate) fn path_idents(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

/// Function bodies set aside, by the line and column of their opening brace.
#[derive(Debug, Default)]
pub(crate) struct Bodies(HashMap<(usize, usize), TokenStream>);

impl Bodies {
    /// The real body of a function parsed by [`parse_file`]: `block` is its empty stand-in.
    pub fn block(&self, block: &syn::Block) -> syn::Result<syn::Block> {
        let start = block.brace_token.span.open().start();
        match self.0.get(&(start.line, start.column)) {
            Some(tokens) => {
                let mut group = Group::new(Delimiter::Brace, tokens.clone());
                group.set_span(block.brace_token.span.join());
                syn::parse2(TokenTree::Group(group).into())
            }
            None => Ok(block.clone()),
        }
    }
}

/// Parses a file's items; every `fn` body comes out empty and is kept in the returned
/// [`Bodies`]. Errors point at the file's own line and column.
pub(crate) fn parse_file(text: &str) -> syn::Result<(syn::File, Bodies)> {
    parse(text, None).map(|p| (p.file, p.bodies))
}

/// A file parsed by [`parse_prepared`]: its items, and what was set aside before lexing.
pub(crate) struct Parsed {
    pub file: syn::File,
    pub bodies: Bodies,
    pub docs: DocComments,
    pub attrs: SetAsideAttrs,
}

/// A file's text with its doc comments and common attributes set aside ([`prepare`]): plain data,
/// made on any thread (the loader prepares the next files on the other core), parsed by
/// [`parse_prepared`] on the thread that reads the items.
///
/// Each outer line doc comment (`/// text`) is then the attribute `#[doc]` (at the comment's place)
/// in the items, whose text [`DocComments::at`] gives by that place; each `#[serde(...)]` /
/// `#[derive(...)]` in the forms [`meta`] reads is `#[serde]` / `#[derive]`, and
/// [`SetAsideAttrs::take`] gives what it said by the place of its `#`. Lexing doc comments as
/// escaped string literals, and those attributes token by token, was most of the time of reading a
/// crate of generated API types.
pub(crate) struct Prepared {
    /// The text to parse; `None`: the file's own (less a byte order mark).
    source: Option<String>,
    docs: DocComments,
    attrs: SetAsideAttrs,
    nesting: Option<usize>,
}

/// The set-aside half of reading a file of the crate.
pub(crate) fn prepare(text: &str) -> Prepared {
    let source = skip_shebang(text.strip_prefix('\u{feff}').unwrap_or(text));
    let aside = doc_comments::set_aside(&source);
    let (docs, attrs, nesting) = (aside.docs, aside.attrs, aside.nesting);
    let set_aside = owned(aside.source);
    Prepared {
        source: set_aside.or(owned(source)),
        docs,
        attrs,
        nesting,
    }
}

/// The text when it is not the file's own (`Borrowed`: the file's).
fn owned(text: Cow<'_, str>) -> Option<String> {
    match text {
        Cow::Owned(s) => Some(s),
        Cow::Borrowed(_) => None,
    }
}

/// The parsing half of reading a file of the crate: `prepared` is [`prepare`]`(text)`. Errors
/// point at the file's own line and column.
pub(crate) fn parse_prepared(text: &str, prepared: Prepared) -> syn::Result<Parsed> {
    parse(text, Some(prepared))
}

/// `prepared`: the text with what is set aside taken out; `None`: parse the text as it is.
fn parse(text: &str, prepared: Option<Prepared>) -> syn::Result<Parsed> {
    let prepared = prepared.unwrap_or_else(|| Prepared {
        source: owned(skip_shebang(text.strip_prefix('\u{feff}').unwrap_or(text))),
        docs: DocComments::default(),
        attrs: SetAsideAttrs::default(),
        nesting: None,
    });
    let Prepared {
        source,
        docs,
        attrs,
        nesting,
    } = prepared;
    let source = source
        .as_deref()
        .unwrap_or_else(|| text.strip_prefix('\u{feff}').unwrap_or(text));
    // A file of API types is built straight into syn's items, with the spans syn would give; the
    // reader's recursion is bounded by the scan's count of the nesting.
    if nesting.is_some_and(|depth| depth + NESTING_MARGIN <= MAX_NESTING)
        && let Some(spans) = spans::FileSpans::register(source)
        && let Some(items) = fast::items(source, &spans)
    {
        return Ok(Parsed {
            file: syn::File {
                shebang: None,
                attrs: Vec::new(),
                items,
            },
            bodies: Bodies::default(),
            docs,
            attrs,
        });
    }
    let tokens: TokenStream = source
        .parse()
        .map_err(|e: proc_macro2::LexError| syn::Error::new(e.span(), e))?;
    // The scan's count of the nesting is the walk's; well below the limit, the walk (which
    // copies every token) is not needed.
    if nesting.is_none_or(|depth| depth + NESTING_MARGIN > MAX_NESTING) {
        check_nesting(&tokens)?;
    }
    let mut bodies = Bodies::default();
    // Without the letters `fn` there is no function body to set aside (type-only files, such as
    // generated API types, are most of a large crate's text).
    let elided = if source.contains("fn") {
        elide_bodies(tokens, &mut bodies).unwrap_or_else(|unchanged| unchanged)
    } else {
        tokens
    };
    match syn::parse2::<syn::File>(elided) {
        Ok(file) => Ok(Parsed {
            file,
            bodies,
            docs,
            attrs,
        }),
        // Whatever confused the elision (or the error itself) gets syn's full verdict, on the
        // file as it is (its doc comments and attributes are then syn's own).
        Err(_) => syn::parse_file(text).map(|file| Parsed {
            file,
            bodies: Bodies::default(),
            docs: DocComments::default(),
            attrs: SetAsideAttrs::default(),
        }),
    }
}

/// Every `.rs` file below `roots`, for the tests that read real code (a folder that cannot be read
/// is passed over).
#[cfg(test)]
pub(crate) fn rust_files(roots: Vec<std::path::PathBuf>) -> Vec<std::path::PathBuf> {
    let (mut stack, mut out) = (roots, Vec::new());
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for path in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out
}

/// The deepest nesting the reader takes: brackets and generic `<...>` together. Real code stays far
/// below it; deeper input would exhaust the stack of syn's recursive parser (and of the readers
/// after it), so it is refused with its place instead.
pub(crate) const MAX_NESTING: usize = 128;

/// How far below [`MAX_NESTING`] the text scan's count must stay for the token walk to be
/// skipped (a margin: the scan mirrors the walk, it is not the walk).
const NESTING_MARGIN: usize = 8;

/// Refuse tokens nested deeper than [`MAX_NESTING`] (walked with an explicit stack: the walk
/// itself must not recurse).
fn check_nesting(tokens: &TokenStream) -> syn::Result<()> {
    // Each open group, with the `<` still open inside it (reset at `;`).
    let mut stack: Vec<(proc_macro2::token_stream::IntoIter, usize)> =
        vec![(tokens.clone().into_iter(), 0)];
    let mut open_angles = 0;
    let mut after_arrow_start = false;
    let too_deep = |span: proc_macro2::Span| {
        syn::Error::new(
            span,
            format!(
                "nested more than {MAX_NESTING} levels deep (brackets and `<...>` together); operator-rs reads no deeper. Flatten it, e.g. with a type alias or a named struct for the inner part"
            ),
        )
    };
    while let Some(top) = stack.len().checked_sub(1) {
        let Some(tree) = stack[top].0.next() else {
            open_angles -= stack[top].1;
            stack.pop();
            continue;
        };
        let was_arrow_start = std::mem::take(&mut after_arrow_start);
        match tree {
            TokenTree::Group(g) => {
                if stack.len() + open_angles >= MAX_NESTING {
                    return Err(too_deep(g.span_open()));
                }
                stack.push((g.stream().into_iter(), 0));
            }
            TokenTree::Punct(p) => match p.as_char() {
                '<' => {
                    stack[top].1 += 1;
                    open_angles += 1;
                    if stack.len() + open_angles > MAX_NESTING {
                        return Err(too_deep(p.span()));
                    }
                }
                '>' if !was_arrow_start && stack[top].1 > 0 => {
                    stack[top].1 -= 1;
                    open_angles -= 1;
                }
                ';' => {
                    open_angles -= stack[top].1;
                    stack[top].1 = 0;
                }
                '-' | '=' => after_arrow_start = p.spacing() == Spacing::Joint,
                _ => {}
            },
            _ => {}
        }
    }
    Ok(())
}

/// The text after a `#!` first line that is not an inner attribute, as rustc and syn skip it.
/// It is replaced by a blank line so that line numbers stay right.
fn skip_shebang(text: &str) -> Cow<'_, str> {
    if text.starts_with("#!") && !text.trim_start_matches("#!").trim_start().starts_with('[') {
        let rest = text.find('\n').map_or("", |i| &text[i..]);
        return Cow::Owned(rest.to_string());
    }
    Cow::Borrowed(text)
}

/// Replaces the brace group that follows each `fn` signature with an empty one. A signature
/// ends at its body or at `;` (a declaration, or a `fn` pointer type); braces inside `<...>` are
/// const generic arguments, not a body. `Err` gives back `stream` when it holds no body (so that
/// groups without functions are kept as they are, not rebuilt).
fn elide_bodies(stream: TokenStream, bodies: &mut Bodies) -> Result<TokenStream, TokenStream> {
    let mut out = Vec::new();
    let mut changed = false;
    let mut in_signature = false;
    let mut angle_depth = 0i32;
    let mut after_dash = false;
    for tree in stream {
        let was_dash = std::mem::take(&mut after_dash);
        match tree {
            TokenTree::Ident(ident) if ident == "fn" => {
                in_signature = true;
                angle_depth = 0;
                out.push(TokenTree::Ident(ident));
            }
            TokenTree::Punct(punct) if in_signature => {
                match punct.as_char() {
                    '<' => angle_depth += 1,
                    '>' if !was_dash => angle_depth -= 1,
                    ';' => in_signature = false,
                    '-' => after_dash = punct.spacing() == Spacing::Joint,
                    _ => {}
                }
                out.push(TokenTree::Punct(punct));
            }
            TokenTree::Group(group)
                if in_signature && angle_depth <= 0 && group.delimiter() == Delimiter::Brace =>
            {
                in_signature = false;
                changed = true;
                let start = group.span_open().start();
                bodies.0.insert((start.line, start.column), group.stream());
                let mut empty = Group::new(Delimiter::Brace, TokenStream::new());
                empty.set_span(group.span());
                out.push(TokenTree::Group(empty));
            }
            TokenTree::Group(group) if !in_signature => {
                // Module, impl and trait contents hold functions of their own.
                match elide_bodies(group.stream(), bodies) {
                    Ok(elided) => {
                        changed = true;
                        let mut inner = Group::new(group.delimiter(), elided);
                        inner.set_span(group.span());
                        out.push(TokenTree::Group(inner));
                    }
                    Err(_) => out.push(TokenTree::Group(group)),
                }
            }
            other => out.push(other),
        }
    }
    let stream: TokenStream = out.into_iter().collect();
    if changed { Ok(stream) } else { Err(stream) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::ToTokens;

    fn body_text(text: &str, f: &str) -> String {
        let (file, bodies) = parse_file(text).unwrap();
        let items: Vec<&syn::Block> = file
            .items
            .iter()
            .flat_map(|item| match item {
                syn::Item::Fn(i) if i.sig.ident == f => vec![&*i.block],
                syn::Item::Impl(i) => i
                    .items
                    .iter()
                    .filter_map(|it| match it {
                        syn::ImplItem::Fn(m) if m.sig.ident == f => Some(&m.block),
                        _ => None,
                    })
                    .collect(),
                _ => vec![],
            })
            .collect();
        assert_eq!(items.len(), 1, "{f}");
        assert!(items[0].stmts.is_empty(), "the body of {f} was parsed");
        bodies
            .block(items[0])
            .unwrap()
            .to_token_stream()
            .to_string()
    }

    #[test]
    fn bodies_are_set_aside_and_parsed_on_demand() {
        let text = "struct S { f: fn(u32) -> u32 }\n\
                    type F = fn();\n\
                    fn one() -> u32 { 1 + 1 }\n\
                    impl S { const fn two<T: Into<u8>>(x: T) -> Foo<{ 3 }> where T: Copy { x.into() } }\n";
        assert_eq!(body_text(text, "one"), "{ 1 + 1 }");
        assert_eq!(body_text(text, "two"), "{ x . into () }");
    }

    #[test]
    fn items_are_what_a_full_parse_gives_but_bodies() {
        let text = "#![allow(dead_code)]\nuse a::b;\nmod m { pub fn f() { g(); } pub struct T; }\ntrait Tr { fn d(); fn e() {} }\n";
        let (file, _) = parse_file(text).unwrap();
        let full = syn::parse_file(text).unwrap();
        assert_eq!(file.items.len(), full.items.len());
        assert_eq!(file.attrs.len(), 1);
        let syn::Item::Mod(m) = &file.items[1] else {
            panic!()
        };
        assert_eq!(m.content.as_ref().unwrap().1.len(), 2);
    }

    #[test]
    fn deep_nesting_is_refused_with_its_place() {
        let deep_type = format!(
            "struct A {{\n  x: {}u8{},\n}}\n",
            "Option<".repeat(3000),
            ">".repeat(3000)
        );
        let err = parse_file(&deep_type).unwrap_err();
        assert!(err.to_string().contains("nested more than"), "{err}");
        assert_eq!(err.span().start().line, 2);
        let deep_mods = format!("{}{}", "mod a {\n".repeat(5000), "}".repeat(5000));
        let err = parse_file(&deep_mods).unwrap_err();
        assert_eq!(err.span().start().line, MAX_NESTING);
        // Comparisons and arrows in a body do not count as nesting.
        let fine = format!(
            "fn f() -> u8 {{ {} 0 }}\nstruct B {{ x: Vec<Vec<u8>> }}\n",
            "if 1 < 2 {}; ".repeat(400)
        );
        parse_file(&fine).unwrap();
    }

    #[test]
    fn deep_nesting_gets_the_same_verdict_with_docs_set_aside() {
        // syn's recursion at the limit needs more stack than a test thread has in a debug build.
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(same_verdict_near_the_nesting_limit)
            .unwrap()
            .join()
            .unwrap();
    }

    fn same_verdict_near_the_nesting_limit() {
        let verdict = |r: syn::Result<()>| r.map_err(|e| (e.to_string(), e.span().start().line));
        for depth in MAX_NESTING - NESTING_MARGIN - 2..MAX_NESTING + 3 {
            let mods = format!(
                "{}/// doc\nstruct S;{}",
                "mod a {\n".repeat(depth),
                "}".repeat(depth)
            );
            let generics = format!(
                "/// doc\nstruct A {{\n  x: {}u8{},\n}}\n",
                "Option<".repeat(depth),
                ">".repeat(depth)
            );
            let mixed = format!(
                "fn f() -> u8 {{ a => b; {}0{} }}\n",
                "(Vec::<".repeat(depth / 2),
                ">::new())".repeat(depth / 2)
            );
            for text in [mods, generics, mixed] {
                assert_eq!(
                    verdict(parse_prepared(&text, prepare(&text)).map(|_| ())),
                    verdict(parse_file(&text).map(|_| ())),
                    "depth {depth}: {text}"
                );
            }
        }
    }

    #[test]
    fn errors_point_at_the_line_of_the_file() {
        let text = "#!/usr/bin/env run-cargo-script\nstruct A;\nstruct B {\n  x: ,\n}\n";
        let err = parse_file(text).unwrap_err();
        assert_eq!(err.span().start().line, 4);
        let err = parse_file("fn f() { ( }").unwrap_err();
        assert_eq!(err.span().start().line, 1);
    }

    #[test]
    fn a_syntax_error_inside_a_body_is_left_to_the_compiler() {
        assert!(parse_file("fn f() { let = ; }").is_ok());
        assert!(syn::parse_file("fn f() { let = ; }").is_err());
    }
}
