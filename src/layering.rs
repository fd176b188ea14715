//! The architecture, checked: the top-level modules of the CLI (`src/`) and of the runtime
//! (`runtime/src/`) import each other without a cycle, so each tree reads as layers, and the
//! edges the design rules out are absent (nothing imports `commands`; only `commands` imports
//! `cli`; the runtime's `webhook` imports neither `manager` nor `controller`, as
//! controller-runtime's `pkg/webhook` never imports `pkg/manager`).
//!
//! An import is a `crate::<module>` path in code: in a `use` or anywhere in an expression or a
//! type, not in a comment or a doc link, and not in `#[cfg(test)]` items (a unit test may use
//! the test support above it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::{self, Visit};

use crate::syntax::is_cfg_test;

/// Where one top-level module imports another: the file and line of each such path.
type Edges = BTreeMap<(String, String), Vec<String>>;

/// Edges the design forbids in each tree: (importer, imported); an importer `*` is any module,
/// `!name` any module but `name`, an imported `*` any module.
const CLI_FORBIDDEN: &[(&str, &str)] = &[("*", "commands"), ("!commands", "cli")];
const RUNTIME_FORBIDDEN: &[(&str, &str)] = &[
    ("webhook", "manager"),
    ("webhook", "controller"),
    ("manager", "controller"),
    ("manager", "storage"),
    ("manager", "testing"),
    ("controller", "testing"),
    ("shutdown", "*"),
    ("duration", "*"),
];

/// Collects the `crate::<module>` paths of one file.
struct Imports<'a> {
    file: &'a str,
    found: Vec<(String, usize)>,
}

impl Imports<'_> {
    fn record(&mut self, ident: &syn::Ident) {
        self.found
            .push((ident.to_string(), ident.span().start().line));
    }

    /// The modules `tree` (after `crate::`) names.
    fn use_targets(&mut self, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => self.record(&p.ident),
            syn::UseTree::Name(n) => self.record(&n.ident),
            syn::UseTree::Rename(r) => self.record(&r.ident),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.use_targets(t)),
            syn::UseTree::Glob(_) => {}
        }
    }
}

impl<'ast> Visit<'ast> for Imports<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_cfg_test(&m.attrs) {
            visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_cfg_test(&f.attrs) {
            visit::visit_item_fn(self, f);
        }
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if !is_cfg_test(&i.attrs) {
            visit::visit_item_impl(self, i);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if is_cfg_test(&u.attrs) {
            return;
        }
        match &u.tree {
            syn::UseTree::Path(p) if p.ident == "crate" => self.use_targets(&p.tree),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    if let syn::UseTree::Path(p) = t
                        && p.ident == "crate"
                    {
                        self.use_targets(&p.tree);
                    }
                }
            }
            _ => {}
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let mut segments = p.segments.iter();
        if let (Some(first), Some(second)) = (segments.next(), segments.next())
            && first.ident == "crate"
        {
            self.record(&second.ident);
        }
        visit::visit_path(self, p);
    }
}

/// The top-level modules of the crate rooted at `src` (its `lib.rs`'s `mod` items).
fn top_modules(src: &Path) -> BTreeSet<String> {
    let lib = syn::parse_file(&std::fs::read_to_string(src.join("lib.rs")).unwrap()).unwrap();
    (lib.items.iter())
        .filter_map(|item| match item {
            syn::Item::Mod(m) if !is_cfg_test(&m.attrs) => Some(m.ident.to_string()),
            _ => None,
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every import between two top-level modules of the crate rooted at `src`. `tests.rs` files are
/// `#[cfg(test)] mod tests;` and are left out.
fn edges(src: &Path) -> Edges {
    let modules = top_modules(src);
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut edges = Edges::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let top = top.trim_end_matches(".rs").to_string();
        if !modules.contains(&top) || file.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let name = format!("{}", rel.display());
        let mut imports = Imports {
            file: &name,
            found: Vec::new(),
        };
        imports.visit_file(&parsed);
        for (target, line) in imports.found {
            if target != top && modules.contains(&target) {
                let at = format!("{}:{line}", imports.file);
                edges.entry((top.clone(), target)).or_default().push(at);
            }
        }
    }
    edges
}

/// A cycle of `edges`, as the modules along it, if there is one.
fn find_cycle(edges: &Edges) -> Option<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
    }
    // Depth-first, with the path so far: a module met again on the path closes a cycle.
    fn walk<'a>(
        at: &'a str,
        next: &BTreeMap<&'a str, Vec<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|m| *m == at) {
            let mut cycle: Vec<String> = path[i..].iter().map(|m| m.to_string()).collect();
            cycle.push(at.to_string());
            return Some(cycle);
        }
        if !done.insert(at) {
            return None;
        }
        path.push(at);
        for to in next.get(at).into_iter().flatten() {
            if let Some(cycle) = walk(to, next, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    let starts: Vec<&str> = next.keys().copied().collect();
    for start in starts {
        if let Some(cycle) = walk(start, &next, &mut Vec::new(), &mut done) {
            return Some(cycle);
        }
    }
    None
}

/// Whether `forbidden` rules out `from` importing `to`.
fn forbids(forbidden: &[(&str, &str)], from: &str, to: &str) -> bool {
    forbidden.iter().any(|&(f, t)| {
        let importer = match f.strip_prefix('!') {
            Some(but) => but != from,
            None => f == "*" || f == from,
        };
        importer && (t == "*" || t == to)
    })
}

/// Asserts the crate rooted at `src` has no import cycle and none of the `forbidden` edges.
fn assert_layered(src: &Path, forbidden: &[(&str, &str)]) {
    let edges = edges(src);
    assert!(
        edges.len() > 5,
        "{}: too few imports found ({edges:?}): the scan is broken",
        src.display()
    );
    let at = |from: &str, to: &str| edges[&(from.to_string(), to.to_string())].join(", ");
    if let Some(cycle) = find_cycle(&edges) {
        let steps: Vec<String> = (cycle.windows(2))
            .map(|w| format!("{} -> {} ({})", w[0], w[1], at(&w[0], &w[1])))
            .collect();
        panic!(
            "{}: the modules import each other in a cycle:\n  {}",
            src.display(),
            steps.join("\n  ")
        );
    }
    for (from, to) in edges.keys() {
        assert!(
            !forbids(forbidden, from, to),
            "{}: {from} must not import {to}, but does at {}",
            src.display(),
            at(from, to)
        );
    }
}

#[test]
fn the_cli_is_layered() {
    assert_layered(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        CLI_FORBIDDEN,
    );
}

#[test]
fn the_runtime_is_layered() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime/src");
    assert_layered(&src, RUNTIME_FORBIDDEN);
}

#[test]
fn the_rules_name_importers_and_their_exceptions() {
    assert!(forbids(CLI_FORBIDDEN, "crdgen", "commands"));
    assert!(forbids(CLI_FORBIDDEN, "project", "cli"));
    assert!(!forbids(CLI_FORBIDDEN, "commands", "cli"));
    assert!(!forbids(CLI_FORBIDDEN, "commands", "project"));
    assert!(forbids(RUNTIME_FORBIDDEN, "duration", "manager"));
    assert!(forbids(RUNTIME_FORBIDDEN, "webhook", "manager"));
    assert!(!forbids(RUNTIME_FORBIDDEN, "manager", "webhook"));
}

#[test]
fn a_cycle_is_found_and_named() {
    let mut edges = Edges::new();
    for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        edges.insert((from.into(), to.into()), vec![format!("{from}.rs:1")]);
    }
    assert_eq!(find_cycle(&edges).unwrap(), ["a", "b", "c", "a"]);
    edges.remove(&("c".into(), "a".into()));
    assert_eq!(find_cycle(&edges), None);
}

#[test]
fn imports_in_code_count_and_comments_and_tests_do_not() {
    let text = "//! see [`crate::doc_only`]\n\
                use crate::{used, grouped::Item};\n\
                fn f() -> crate::in_type::T { crate::in_expr::g(); \"crate::in_string\"; }\n\
                #[cfg(test)]\nmod tests { use crate::test_only; }\n\
                #[cfg(all(test, feature = \"x\"))]\nmod more { use crate::test_only_too; }\n";
    let parsed = syn::parse_file(text).unwrap();
    let mut imports = Imports {
        file: "x.rs",
        found: Vec::new(),
    };
    imports.visit_file(&parsed);
    let names: BTreeSet<String> = imports.found.into_iter().map(|(m, _)| m).collect();
    assert_eq!(
        names,
        ["grouped", "in_expr", "in_type", "used"]
            .map(String::from)
            .into()
    );
}
