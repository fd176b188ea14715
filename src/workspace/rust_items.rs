//! Rust source cut into its top-level items without parsing it: one pass that knows where
//! comments, string, byte, char and raw string literals begin and end, and so which braces and
//! semicolons end a top-level item. Each piece is one item with the comments and attributes
//! before it. The check of generated Rust parses only the pieces it has not seen parse before
//! (see [`crate::scaffold::check`]); a piece cut wrong fails to parse and sends the check back to the
//! whole file, so the cut needs to be right only to be fast.
//!
//! In a template (`tera`), tera's tags (`{{ }}`, `{% %}`, `{# #}`) are skipped as opaque text:
//! a piece that holds one is not plain Rust.

use std::collections::BTreeSet;

use crate::syntax::lex::{block_comment_end, quoted_end, raw_string_end, raw_string_hashes};

/// The pieces of `text`, in order; joined, they are `text`. The last one may hold only
/// whitespace and comments. `None` when the text does not scan (a literal or comment not
/// closed, a closing delimiter without its opening one): only a parse can say more.
pub fn split(text: &str, tera: bool) -> Option<Vec<&str>> {
    let b = text.as_bytes();
    let n = b.len();
    let mut pieces = Vec::new();
    let (mut start, mut depth, mut i) = (0usize, 0usize, 0usize);
    while i < n {
        let c = b[i];
        // Most bytes (words, numbers, spaces, operators) change nothing.
        if !SPECIAL[usize::from(c)] {
            i += 1;
            continue;
        }
        let next = b.get(i + 1).copied();
        match c {
            b'/' if next == Some(b'/') => i = line_end(b, i),
            b'/' if next == Some(b'*') => i = block_comment_end(b, i)?,
            b'{' if tera && matches!(next, Some(b'{' | b'%' | b'#')) => {
                let close: &[u8] = match next {
                    Some(b'{') => b"}}",
                    Some(b'%') => b"%}",
                    _ => b"#}",
                };
                i = find(b, i + 2, close)? + 2;
            }
            b'"' => {
                i = match raw_string_hashes(b, i) {
                    Some(hashes) => raw_string_end(b, i + 1, hashes)?,
                    None => quoted_end(b, i + 1, b'"')?,
                }
            }
            b'\'' => i = quote_end(text, i)?,
            b'{' | b'(' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b')' | b']' => {
                depth = depth.checked_sub(1)?;
                i += 1;
                if depth == 0 && c == b'}' {
                    // `const X: T = T { .. };` ends at its `;`.
                    let after = skip_space(b, i);
                    if b.get(after) == Some(&b';') {
                        i = after + 1;
                    }
                    pieces.push(&text[start..i]);
                    start = i;
                }
            }
            b';' if depth == 0 => {
                i += 1;
                pieces.push(&text[start..i]);
                start = i;
            }
            _ => i += 1,
        }
    }
    if depth != 0 {
        return None;
    }
    if start < n {
        pieces.push(&text[start..]);
    }
    Some(pieces)
}

/// The names a piece that holds one item declares, read from its words: `fn x`, `mod x`,
/// `struct X`, the leaves of a `use` (none for an `impl` or a piece of comments). Only for
/// pieces known to parse as one item (the check of generated Rust holds these names to syn's).
pub fn declared_names(piece: &str) -> Vec<(Namespace, String)> {
    let mut words = Words {
        b: piece.as_bytes(),
        s: piece,
        i: 0,
    };
    loop {
        let Some(w) = words.next() else {
            return Vec::new();
        };
        let namespace = match w {
            "pub" => {
                words.skip_group(b'(');
                continue;
            }
            "extern" => {
                // `extern "C" fn`.
                if words.peek().is_some_and(|w| w.starts_with('"')) {
                    words.next();
                }
                continue;
            }
            "async" | "unsafe" | "default" | "safe" => continue,
            "use" => return use_leaves(&mut words),
            "impl" => return Vec::new(),
            "fn" | "static" => Namespace::Value,
            "const" => {
                // `const fn f` is a function; `const X` a constant.
                match words.peek() {
                    Some("fn" | "unsafe" | "async" | "extern") => continue,
                    _ => Namespace::Value,
                }
            }
            "mod" | "struct" | "enum" | "union" | "trait" | "type" | "crate" => Namespace::Type,
            "macro_rules" => Namespace::Macro,
            _ => return Vec::new(),
        };
        let Some(mut name) = words.next() else {
            return Vec::new();
        };
        if name == "mut" || (w == "macro_rules" && name == "!") {
            name = words.next().unwrap_or_default();
        }
        if w == "crate" {
            // `extern crate a as b;`
            let mut last = name;
            while let Some(x) = words.next() {
                if x == ";" {
                    break;
                }
                last = x;
            }
            name = last;
        }
        if !is_word(name) {
            return Vec::new();
        }
        return vec![(namespace, name.trim_start_matches("r#").to_string())];
    }
}

fn is_word(w: &str) -> bool {
    w.starts_with(|c: char| c == '_' || c.is_ascii_alphabetic())
}

/// The leaves a `use` imports: `b` and `e` of `use a::{b, c::{d as e, self}, f::*};`.
fn use_leaves(words: &mut Words<'_>) -> Vec<(Namespace, String)> {
    let mut out = Vec::new();
    let (mut leaf, mut renamed) = (None, false);
    while let Some(w) = words.next() {
        if is_word(w) {
            if renamed {
                out.push(w);
                renamed = false;
            } else if w == "as" {
                renamed = true;
                leaf = None;
            } else {
                leaf = Some(w);
            }
            continue;
        }
        if matches!(w, "," | "}" | ";")
            && let Some(l) = leaf
            && l != "self"
        {
            out.push(l);
        }
        leaf = None;
        if w == ";" {
            break;
        }
    }
    out.into_iter()
        .map(|n| (Namespace::Type, n.trim_start_matches("r#").to_string()))
        .collect()
}

/// Where a declared name lives: Rust refuses a name twice within one namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Namespace {
    Type,
    Value,
    Macro,
}

/// Whether a piece starts (after comments) with an inner attribute or doc comment, which only
/// the start of a file may hold.
pub fn has_inner_attribute(piece: &str) -> bool {
    let b = piece.as_bytes();
    let mut i = 0;
    loop {
        i = skip_space(b, i);
        if b[i..].starts_with(b"//!") || b[i..].starts_with(b"/*!") || b[i..].starts_with(b"#!") {
            return true;
        }
        if b[i..].starts_with(b"//") {
            i = line_end(b, i);
        } else if b[i..].starts_with(b"/*") {
            match block_comment_end(b, i) {
                Some(end) => i = end,
                None => return false,
            }
        } else {
            return false;
        }
    }
}

/// The words of an item's head: identifiers and single punctuation, attributes and comments
/// skipped.
struct Words<'a> {
    b: &'a [u8],
    s: &'a str,
    i: usize,
}

impl<'a> Words<'a> {
    fn next(&mut self) -> Option<&'a str> {
        loop {
            self.i = skip_space(self.b, self.i);
            let rest = &self.b[self.i..];
            if rest.starts_with(b"//") {
                self.i = line_end(self.b, self.i);
            } else if rest.starts_with(b"/*") {
                self.i = block_comment_end(self.b, self.i)?;
            } else if rest.starts_with(b"#") {
                self.i = skip_space(self.b, self.i + 1);
                if self.b.get(self.i) == Some(&b'!') {
                    self.i += 1;
                }
                self.skip_group(b'[');
            } else {
                break;
            }
        }
        let start = self.i;
        let c = *self.b.get(start)?;
        self.i = if c == b'_' || c.is_ascii_alphabetic() {
            let end = word_end(self.b, start);
            // A raw identifier, `r#type`.
            if &self.b[start..end] == b"r"
                && self.b.get(end) == Some(&b'#')
                && self.b.get(end + 1).is_some_and(|c| is_word_byte(*c))
            {
                word_end(self.b, end + 1)
            } else {
                end
            }
        } else if c == b'"' {
            quoted_end(self.b, start + 1, b'"')?
        } else {
            start + 1
        };
        Some(&self.s[start..self.i])
    }

    fn peek(&mut self) -> Option<&'a str> {
        let at = self.i;
        let w = self.next();
        self.i = at;
        w
    }

    /// Skip a delimited group that starts here with `open` (`pub(crate)`, `#[...]`).
    fn skip_group(&mut self, open: u8) {
        let at = skip_space(self.b, self.i);
        if self.b.get(at) != Some(&open) {
            return;
        }
        let mut depth = 0usize;
        let mut i = at;
        while i < self.b.len() {
            match self.b[i] {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        self.i = i + 1;
                        return;
                    }
                }
                b'"' => {
                    let Some(end) = quoted_end(self.b, i + 1, b'"') else {
                        return;
                    };
                    i = end;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

fn skip_space(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

fn line_end(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|c| *c == b'\n')
        .map_or(b.len(), |p| i + p + 1)
}

fn find(b: &[u8], from: usize, what: &[u8]) -> Option<usize> {
    b.get(from..)?
        .windows(what.len())
        .position(|w| w == what)
        .map(|p| from + p)
}

/// The end of a char literal or a lifetime (or label) starting at the `'` at `i`.
fn quote_end(text: &str, i: usize) -> Option<usize> {
    let b = text.as_bytes();
    match b.get(i + 1)? {
        b'\\' => find(b, i + 3, b"'").map(|p| p + 1),
        _ => {
            let ch = text[i + 1..].chars().next()?;
            let after = i + 1 + ch.len_utf8();
            if b.get(after) == Some(&b'\'') {
                Some(after + 1)
            } else {
                // A lifetime: `'a`, `'static`.
                Some(after)
            }
        }
    }
}

/// The bytes [`split`] stops at: comments, literals, delimiters, `;`.
static SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut k = 0;
    let special = b"/\"'{}()[];";
    while k < special.len() {
        table[special[k] as usize] = true;
        k += 1;
    }
    table
};

fn is_word_byte(c: u8) -> bool {
    c == b'_' || c.is_ascii_alphanumeric()
}

/// The end of an identifier or keyword starting at `i`.
fn word_end(b: &[u8], i: usize) -> usize {
    i + b[i..].iter().take_while(|c| is_word_byte(**c)).count()
}

/// The names a parsed file declares at its top level.
pub fn file_declared_names(file: &syn::File) -> Vec<(Namespace, String)> {
    let mut out = Vec::new();
    for item in &file.items {
        let (namespace, ident) = match item {
            syn::Item::Struct(i) => (Namespace::Type, &i.ident),
            syn::Item::Enum(i) => (Namespace::Type, &i.ident),
            syn::Item::Union(i) => (Namespace::Type, &i.ident),
            syn::Item::Type(i) => (Namespace::Type, &i.ident),
            syn::Item::Trait(i) => (Namespace::Type, &i.ident),
            syn::Item::Mod(i) => (Namespace::Type, &i.ident),
            syn::Item::ExternCrate(i) => (
                Namespace::Type,
                i.rename.as_ref().map_or(&i.ident, |(_, r)| r),
            ),
            syn::Item::Fn(i) => (Namespace::Value, &i.sig.ident),
            syn::Item::Const(i) => (Namespace::Value, &i.ident),
            syn::Item::Static(i) => (Namespace::Value, &i.ident),
            syn::Item::Macro(syn::ItemMacro {
                ident: Some(ident), ..
            }) => (Namespace::Macro, ident),
            syn::Item::Use(u) => {
                let mut leaves = Vec::new();
                use_tree_leaves(&u.tree, &mut leaves);
                out.extend(leaves.into_iter().map(|n| (Namespace::Type, n)));
                continue;
            }
            _ => continue,
        };
        out.push((namespace, syn::ext::IdentExt::unraw(ident).to_string()));
    }
    out
}

fn use_tree_leaves(tree: &syn::UseTree, out: &mut Vec<String>) {
    match tree {
        syn::UseTree::Path(p) => use_tree_leaves(&p.tree, out),
        syn::UseTree::Name(n) if n.ident != "self" => {
            out.push(syn::ext::IdentExt::unraw(&n.ident).to_string())
        }
        syn::UseTree::Rename(r) => out.push(syn::ext::IdentExt::unraw(&r.rename).to_string()),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_tree_leaves(t, out)),
        _ => {}
    }
}

/// The first name declared twice in one namespace (`_` declares nothing).
pub fn first_duplicate(names: Vec<(Namespace, String)>) -> Option<String> {
    let mut seen = BTreeSet::new();
    names
        .into_iter()
        .find(|(ns, n)| n != "_" && !seen.insert((*ns, n.clone())))
        .map(|(_, n)| n)
}

/// The first name a parsed file declares twice at its top level: in the type namespace
/// (types, modules, `use` imports), the value namespace (functions, constants, statics) or
/// among its macros. Rust refuses each.
pub fn duplicate_name(file: &syn::File) -> Option<String> {
    first_duplicate(file_declared_names(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<&str> {
        let p = split(text, false).expect("scans");
        assert_eq!(p.concat(), text);
        p.into_iter().map(str::trim).collect()
    }

    #[test]
    fn items_end_at_their_brace_or_semicolon() {
        let text = "//! Doc.\nuse a::{b, c};\n\n/// F.\n#[test]\nfn f() {\n    if x { y(\"}\"); }\n}\nconst X: S = S { a: '}' };\nstruct T(u8);\nimpl T {}\n// end\n";
        assert_eq!(
            pieces(text),
            [
                "//! Doc.\nuse a::{b, c};",
                "/// F.\n#[test]\nfn f() {\n    if x { y(\"}\"); }\n}",
                "const X: S = S { a: '}' };",
                "struct T(u8);",
                "impl T {}",
                "// end"
            ]
        );
    }

    #[test]
    fn literals_and_comments_hide_their_delimiters() {
        let text = "fn f<'a>(x: &'a str) -> char {\n    let _ = r#\"}\"#;\n    let _ = br##\"\"#}\"##;\n    let _ = b'}';\n    let _ = '\\'';\n    let r#type = c\"}\";\n    /* } /* nested } */ */\n    '{'\n}\nfn g() {}";
        assert_eq!(pieces(text).len(), 2, "{:?}", pieces(text));
    }

    /// Every Rust file of this repository (the CLI, the runtime, the tests: raw strings,
    /// lifetimes, char literals, nested comments, macros) cuts into pieces that each parse
    /// alone, one item each, inner attributes only in the first.
    #[test]
    fn real_files_cut_into_items_that_parse_alone() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut stack = vec![
            root.join("src"),
            root.join("runtime/src"),
            root.join("tests"),
        ];
        let mut files = 0;
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let pieces = split(&text, false)
                    .unwrap_or_else(|| panic!("{} does not scan", path.display()));
                assert_eq!(pieces.concat(), text);
                for (at, piece) in pieces.iter().enumerate() {
                    let file = syn::parse_file(piece).unwrap_or_else(|e| {
                        panic!(
                            "{} piece {at} does not parse ({e}):\n{piece}",
                            path.display()
                        )
                    });
                    assert!(file.items.len() <= 1, "{}: {piece}", path.display());
                    assert!(
                        at == 0 || file.attrs.is_empty(),
                        "{}: {piece}",
                        path.display()
                    );
                    assert_eq!(
                        has_inner_attribute(piece),
                        !file.attrs.is_empty(),
                        "{piece}"
                    );
                }
                files += 1;
            }
        }
        assert!(files > 100, "{files}");
    }

    #[test]
    fn unbalanced_or_unclosed_text_does_not_scan() {
        for text in [
            "fn f() {",
            "fn f() }",
            "fn f() { \"x }",
            "/* x",
            "fn f() { r#\"x }",
        ] {
            assert_eq!(split(text, false), None, "{text}");
        }
    }

    #[test]
    fn tera_tags_are_opaque_in_templates() {
        let text = "use {{ crate_name }}::api;\n{% if x %}\nfn a() {}\n{% endif %}\nfn b() {}\n";
        let p: Vec<&str> = split(text, true)
            .unwrap()
            .into_iter()
            .map(str::trim)
            .collect();
        assert_eq!(
            p,
            [
                "use {{ crate_name }}::api;",
                "{% if x %}\nfn a() {}",
                "{% endif %}\nfn b() {}",
                ""
            ]
        );
    }

    #[test]
    fn names_from_the_head_of_an_item() {
        let name = |s: &str| {
            declared_names(s)
                .into_iter()
                .map(|(_, n)| n)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            name("/// d\n#[cfg(test)]\npub(crate) async fn f() {}"),
            ["f"]
        );
        assert_eq!(name("const fn g() {}"), ["g"]);
        assert_eq!(name("extern \"C\" fn h() {}"), ["h"]);
        assert_eq!(name("pub const X: u8 = 1;"), ["X"]);
        assert_eq!(name("static mut S: u8 = 1;"), ["S"]);
        assert_eq!(name("mod r#type {}"), ["type"]);
        assert_eq!(name("macro_rules! m { () => {} }"), ["m"]);
        assert_eq!(name("extern crate a as b;"), ["b"]);
        assert!(name("impl A for B {}").is_empty());
        assert_eq!(name("use a::b;"), ["b"]);
        assert_eq!(name("pub use a::{b, c::{d as e, self}, f::*};"), ["b", "e"]);
        assert_eq!(name("use std::io::Write as _;"), ["_"]);
        assert!(has_inner_attribute("// x\n//! doc\nuse a;"));
        assert!(!has_inner_attribute("/// doc\nfn a() {}"));
    }
}
