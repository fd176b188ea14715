//! The architecture, checked, over the import graph of files:
//! - no two files import each other, directly or around a circle, in the CLI (`src/`) or the
//!   runtime (`runtime/src/`), so each tree reads as layers down to its files;
//! - the edges the design rules out between top-level modules are absent (nothing imports
//!   `commands`; only `commands` imports `cli`; the runtime's `webhook` imports neither `manager`
//!   nor `controller`, as controller-runtime's `pkg/webhook` never imports `pkg/manager`);
//! - no command imports another: a file of `commands/` imports only files of its own command
//!   (`commands/create_api.rs` and `commands/create_api/`; a submodule may use its parent), not
//!   a sibling's nor the dispatcher `commands/mod.rs`; what several commands need is below them
//!   (`ops/`, as cargo's command files are thin over `ops/`);
//! - inside `crdgen/`, no stage imports a later one: its floors, bottom up, are `error`, the
//!   recorded Kubernetes schemas (`k8s`) and the kind data the stages share (`kind`), then the
//!   stages `read`, `derive`, and `check` and `emit` (neither importing the other), then the
//!   driver (`mod.rs`), and on top `exact` and `compat`, the drivers built over it.
//!
//! An import is a path in code that names a module of the crate (`crate::a::b`, `super::b`,
//! `self::b`, or a child module's name): in a `use` or anywhere in an expression or a type, not
//! in a comment or a doc link, not in a macro's tokens, and not in `#[cfg(test)]` items (a unit
//! test may use the test support above it). It leads to the file of the deepest module it names
//! (an item of `a/mod.rs` named through `crate::a::Item` leads to `a/mod.rs`, where the name is).
//! A `mod` declaration is no import, nor is a module's use of the modules below it (a parent
//! holds its children: a `mod.rs` re-exports and calls them); a child's use of a module above
//! it is one (it is how a stage calls back up into its driver).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::{self, Visit};

use crate::syntax::is_cfg_test;

/// Where one module (or file) imports another: the file and line of each such path.
type Edges = BTreeMap<(String, String), Vec<String>>;

/// A module's path below the crate root (`["crdgen", "read", "loader"]`; the root is empty).
type ModPath = Vec<String>;

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

/// crdgen's floors, bottom up: a part of `crdgen/` (a stage's folder or a file beside them;
/// `mod` is the driver, `crdgen/mod.rs`) imports only parts of a floor below its own.
const CRDGEN_FLOORS: &[&[&str]] = &[
    &["error", "k8s", "kind"],
    &["read"],
    &["derive"],
    &["check", "emit"],
    &["mod"],
    &["exact", "compat"],
];

/// The module tree of the crate rooted at `src`: every module that `lib.rs` reaches through
/// `mod` declarations (not `#[cfg(test)]` ones), with the file that holds it (an inline
/// `mod x { .. }` is held by its parent's file), relative to `src`.
fn module_files(src: &Path) -> BTreeMap<ModPath, PathBuf> {
    /// The modules declared in `items` of the module `at`, held by `file`; `dir` is where the
    /// files of its children are.
    fn declared(
        src: &Path,
        items: &[syn::Item],
        at: &ModPath,
        file: &Path,
        dir: &Path,
        out: &mut BTreeMap<ModPath, PathBuf>,
    ) {
        for item in items {
            let syn::Item::Mod(m) = item else { continue };
            if is_cfg_test(&m.attrs) {
                continue;
            }
            let mut path = at.clone();
            path.push(m.ident.to_string());
            if let Some((_, inline)) = &m.content {
                out.insert(path.clone(), file.to_path_buf());
                declared(
                    src,
                    inline,
                    &path,
                    file,
                    &dir.join(m.ident.to_string()),
                    out,
                );
                continue;
            }
            let explicit = m.attrs.iter().find(|a| a.path().is_ident("path"));
            let child = match explicit {
                Some(a) => {
                    let syn::Meta::NameValue(nv) = &a.meta else {
                        panic!("{}: a #[path] without a value", file.display())
                    };
                    let syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }) = &nv.value
                    else {
                        panic!("{}: a #[path] that is no string", file.display())
                    };
                    file.parent().unwrap().join(s.value())
                }
                None => {
                    let flat = dir.join(format!("{}.rs", m.ident));
                    if src.join(&flat).exists() {
                        flat
                    } else {
                        dir.join(m.ident.to_string()).join("mod.rs")
                    }
                }
            };
            load(src, &child, path, out);
        }
    }
    fn load(src: &Path, file: &Path, at: ModPath, out: &mut BTreeMap<ModPath, PathBuf>) {
        let text = std::fs::read_to_string(src.join(file))
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        // A `mod.rs` or the crate root holds its children beside it; `a/b.rs` in `a/b/`.
        let name = file.file_name().unwrap().to_string_lossy();
        let dir = if name == "mod.rs" || at.is_empty() {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        out.insert(at.clone(), file.to_path_buf());
        declared(src, &parsed.items, &at, file, &dir, out);
    }
    let mut out = BTreeMap::new();
    load(src, Path::new("lib.rs"), Vec::new(), &mut out);
    out
}

/// Collects the paths of one file that name a module of the crate, as absolute module paths
/// (the module named, then whatever follows it), with their lines.
struct Imports<'a> {
    /// Every module of the crate.
    modules: &'a BTreeMap<ModPath, PathBuf>,
    /// The module the visitor is in (the file's, then the inline modules around it).
    at: ModPath,
    found: Vec<(ModPath, usize)>,
}

impl Imports<'_> {
    /// The absolute form of `segments` written in the module `self.at`, if it starts at a module
    /// of the crate (`crate`, `super`, `self`, or a child module's name).
    fn absolute(&self, segments: &[String]) -> Option<ModPath> {
        let (first, rest) = segments.split_first()?;
        match first.as_str() {
            "crate" => Some(rest.to_vec()),
            "self" | "super" => {
                let mut at = self.at.clone();
                let mut rest = segments;
                while let Some((s, tail)) = rest.split_first() {
                    match s.as_str() {
                        "self" => {}
                        "super" => {
                            at.pop()?;
                        }
                        _ => break,
                    }
                    rest = tail;
                }
                at.extend(rest.iter().cloned());
                Some(at)
            }
            _ => {
                let mut child = self.at.clone();
                child.push(first.clone());
                self.modules.contains_key(&child).then(|| {
                    child.extend(rest.iter().cloned());
                    child
                })
            }
        }
    }

    fn record(&mut self, segments: &[String], line: usize) {
        if let Some(path) = self.absolute(segments) {
            self.found.push((path, line));
        }
    }

    /// The paths `tree` names, after `prefix`.
    fn use_paths(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        let leaf = |this: &mut Self, prefix: &mut Vec<String>, ident: &syn::Ident| {
            let pushed = ident != "self";
            if pushed {
                prefix.push(ident.to_string());
            }
            this.record(prefix, ident.span().start().line);
            if pushed {
                prefix.pop();
            }
        };
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_paths(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => leaf(self, prefix, &n.ident),
            syn::UseTree::Rename(r) => leaf(self, prefix, &r.ident),
            syn::UseTree::Glob(g) => self.record(prefix, g.star_token.spans[0].start().line),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.use_paths(prefix, t)),
        }
    }
}

impl<'ast> Visit<'ast> for Imports<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_cfg_test(&m.attrs) {
            self.at.push(m.ident.to_string());
            visit::visit_item_mod(self, m);
            self.at.pop();
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
        if !is_cfg_test(&u.attrs) && u.leading_colon.is_none() {
            self.use_paths(&mut Vec::new(), &u.tree);
        }
    }

    /// `pub(in crate::a)` names a module, but imports nothing.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() && p.segments.len() > 1 {
            let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            self.record(&segments, p.segments[0].ident.span().start().line);
        }
        visit::visit_path(self, p);
    }
}

/// The file `path` leads to: that of the deepest module it names.
fn file_of<'a>(modules: &'a BTreeMap<ModPath, PathBuf>, path: &[String]) -> Option<&'a PathBuf> {
    (0..=path.len()).rev().find_map(|n| modules.get(&path[..n]))
}

/// Every import of one file of the crate rooted at `src` by another (not by a file above it, see
/// the module's doc): (importer, imported), both relative to `src`.
fn file_edges(src: &Path) -> Edges {
    let modules = module_files(src);
    // Each file once, with the module it holds (not an inline one's).
    let mut files: BTreeMap<&PathBuf, &ModPath> = BTreeMap::new();
    for (path, file) in &modules {
        let held = files.entry(file).or_insert(path);
        if path.len() < held.len() {
            *held = path;
        }
    }
    let mut edges = Edges::new();
    for (&file, &at) in &files {
        let text = std::fs::read_to_string(src.join(file)).unwrap();
        let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut imports = Imports {
            modules: &modules,
            at: at.clone(),
            found: Vec::new(),
        };
        imports.visit_file(&parsed);
        let from = file.display().to_string();
        for (path, line) in imports.found {
            let Some(to) = file_of(&modules, &path) else {
                continue;
            };
            // The file itself, or one it holds (a module below its own).
            if to == file || files[to].starts_with(at) {
                continue;
            }
            let at = format!("{from}:{line}");
            let places = (edges.entry((from.clone(), to.display().to_string()))).or_default();
            if !places.contains(&at) {
                places.push(at);
            }
        }
    }
    edges
}

/// `edges` between the parts `part` puts files in (`None`: in none), an import inside one
/// part left out.
fn part_edges(edges: &Edges, part: impl Fn(&str) -> Option<String>) -> Edges {
    let mut out = Edges::new();
    for ((from, to), at) in edges {
        if let (Some(a), Some(b)) = (part(from), part(to))
            && a != b
        {
            let places = out.entry((a, b)).or_default();
            places.extend(
                at.iter()
                    .filter(|p| !places.contains(p))
                    .cloned()
                    .collect::<Vec<_>>(),
            );
        }
    }
    out
}

/// The command a file (relative to `src`) of `commands/` is part of: `create_api` for
/// `commands/create_api.rs` and `commands/create_api/*`, `mod` for the dispatcher
/// `commands/mod.rs`.
fn command_part(file: &str) -> Option<String> {
    let rest = Path::new(file).strip_prefix("commands").ok()?;
    let first = rest.components().next()?.as_os_str().to_string_lossy();
    Some(first.trim_end_matches(".rs").to_string())
}

/// The imports between commands of `edges` (between files): every one is refused.
fn between_commands(edges: &Edges) -> Vec<String> {
    (part_edges(edges, command_part).iter())
        .map(|((from, to), at)| format!("{from} -> {to} ({})", at.join(", ")))
        .collect()
}

/// The top-level module a file (relative to `src`) is part of; the crate root is none.
fn top_module(file: &str) -> Option<String> {
    let first = Path::new(file)
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy();
    (first != "lib.rs").then(|| first.trim_end_matches(".rs").to_string())
}

/// The part of crdgen a file (relative to `src`) is in: its stage folder or its file beside
/// them (`mod` for `crdgen/mod.rs`, `compat` for `compat.rs` and `compat/`).
fn crdgen_part(file: &str) -> Option<String> {
    let rest = Path::new(file).strip_prefix("crdgen").ok()?;
    let first = rest.components().next()?.as_os_str().to_string_lossy();
    Some(first.trim_end_matches(".rs").to_string())
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

/// Whether `floors` (bottom up) rule out `from` importing `to`: `to` is not on a floor below
/// `from`'s. A part on no floor is refused either way: the floors must name every part.
fn floor_forbids(floors: &[&[&str]], from: &str, to: &str) -> bool {
    let floor = |part: &str| floors.iter().position(|f| f.contains(&part));
    match (floor(from), floor(to)) {
        (Some(a), Some(b)) => b >= a,
        _ => true,
    }
}

/// Panics with the first circle of `edges` (between files or modules of `tree`), each step with
/// where it is imported.
fn refuse_cycles(tree: &str, what: &str, edges: &Edges) {
    if let Some(cycle) = find_cycle(edges) {
        let at = |from: &str, to: &str| edges[&(from.to_string(), to.to_string())].join(", ");
        let steps: Vec<String> = (cycle.windows(2))
            .map(|w| format!("{} -> {} ({})", w[0], w[1], at(&w[0], &w[1])))
            .collect();
        panic!(
            "{tree}: the {what} import each other in a circle:\n  {}",
            steps.join("\n  ")
        );
    }
}

/// Asserts the crate rooted at `src` has no import circle between its files (so none between its
/// modules) and none of the `forbidden` edges between its top-level modules.
fn assert_layered(src: &Path, forbidden: &[(&str, &str)]) -> Edges {
    let files = file_edges(src);
    let tree = src.display().to_string();
    let modules = part_edges(&files, top_module);
    assert!(
        modules.len() > 5,
        "{tree}: too few imports found ({modules:?}): the scan is broken",
    );
    refuse_cycles(&tree, "files", &files);
    refuse_cycles(&tree, "modules", &modules);
    for ((from, to), at) in &modules {
        assert!(
            !forbids(forbidden, from, to),
            "{tree}: {from} must not import {to}, but does at {}",
            at.join(", ")
        );
    }
    files
}

#[test]
fn the_cli_is_layered() {
    let files = assert_layered(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        CLI_FORBIDDEN,
    );
    let commands = between_commands(&files);
    assert!(
        commands.is_empty(),
        "src/commands: a command imports another command (or the dispatcher, commands/mod.rs); \
         move what they share below the commands (src/ops/):\n  {}",
        commands.join("\n  ")
    );
    let crdgen = part_edges(&files, crdgen_part);
    assert!(
        crdgen.len() > 5,
        "too few imports found inside crdgen ({crdgen:?}): the scan is broken"
    );
    let refused: Vec<String> = (crdgen.iter())
        .filter(|((from, to), _)| floor_forbids(CRDGEN_FLOORS, from, to))
        .map(|((from, to), at)| format!("{from} -> {to} ({})", at.join(", ")))
        .collect();
    assert!(
        refused.is_empty(),
        "src/crdgen: a part imports one on its own floor or above (crdgen's floors, bottom up: \
         {CRDGEN_FLOORS:?}; each part imports only floors below its own):\n  {}",
        refused.join("\n  ")
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
fn crdgen_stages_import_only_earlier_ones() {
    // Each stage down the pipeline may import the ones before it...
    for (from, to) in [
        ("read", "error"),
        ("read", "k8s"),
        ("derive", "read"),
        ("derive", "kind"),
        ("check", "kind"),
        ("check", "read"),
        ("emit", "kind"),
        ("mod", "check"),
        ("mod", "emit"),
        ("exact", "mod"),
        ("compat", "mod"),
    ] {
        assert!(!floor_forbids(CRDGEN_FLOORS, from, to), "{from} -> {to}");
    }
    // ...and none a later one, nor one beside it, nor a part no floor names.
    for (from, to) in [
        ("error", "read"),
        ("k8s", "error"),
        ("kind", "read"),
        ("read", "derive"),
        ("read", "check"),
        ("derive", "check"),
        ("derive", "emit"),
        ("derive", "mod"),
        ("check", "emit"),
        ("emit", "check"),
        ("check", "mod"),
        ("mod", "exact"),
        ("exact", "compat"),
        ("read", "new_stage"),
        ("new_stage", "error"),
    ] {
        assert!(floor_forbids(CRDGEN_FLOORS, from, to), "{from} -> {to}");
    }
    // A violation in the graph of files is found as such a pair.
    let mut files = Edges::new();
    files.insert(
        (
            "crdgen/read/values.rs".into(),
            "crdgen/derive/schema.rs".into(),
        ),
        vec!["crdgen/read/values.rs:12".into()],
    );
    files.insert(
        ("crdgen/derive/crd.rs".into(), "crdgen/read/attrs.rs".into()),
        vec!["crdgen/derive/crd.rs:3".into()],
    );
    files.insert(
        ("commands/generate.rs".into(), "crdgen/mod.rs".into()),
        vec!["commands/generate.rs:9".into()],
    );
    let parts = part_edges(&files, crdgen_part);
    let refused: Vec<&(String, String)> = (parts.keys())
        .filter(|(from, to)| floor_forbids(CRDGEN_FLOORS, from, to))
        .collect();
    assert_eq!(refused, [&("read".to_string(), "derive".to_string())]);
}

#[test]
fn a_command_importing_another_is_refused() {
    let dir = write_crate(&[
        ("lib.rs", "mod commands;\nmod ops;\n"),
        (
            "commands/mod.rs",
            "mod create_api;\nmod generate;\nmod import;\npub fn run() { create_api::run(); }\n",
        ),
        (
            "commands/create_api.rs",
            "mod from_crd;\npub fn run() { crate::ops::finish(); }\nfn plan() {}\n",
        ),
        (
            "commands/create_api/from_crd.rs",
            "pub fn run() { super::plan(); super::super::generate::regenerate(); }\n",
        ),
        ("commands/generate.rs", "pub fn regenerate() {}\n"),
        ("commands/import.rs", "fn replay() { super::run(); }\n"),
        ("ops.rs", "pub fn finish() {}\n"),
    ]);
    let files = file_edges(dir.path());
    // A submodule's use of its command, and a command's of `ops`, are no such import.
    assert_eq!(
        between_commands(&files),
        [
            "create_api -> generate (commands/create_api/from_crd.rs:1)",
            "import -> mod (commands/import.rs:1)",
        ]
    );
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

/// A crate of a few files, written under a fresh directory, for the scan to read.
fn write_crate(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn a_circle_of_files_is_refused_where_modules_see_none() {
    // `scaffold/entries.rs` <-> `scaffold/markers.rs` as it was: two files of one module.
    let dir = write_crate(&[
        ("lib.rs", "mod scaffold;\n"),
        ("scaffold/mod.rs", "mod entries;\nmod markers;\n"),
        (
            "scaffold/entries.rs",
            "use super::markers::PREFIX;\npub fn owned() {}\n",
        ),
        (
            "scaffold/markers.rs",
            "pub const PREFIX: &str = \"\";\nfn f() { super::entries::owned(); }\n",
        ),
    ]);
    let files = file_edges(dir.path());
    assert_eq!(find_cycle(&part_edges(&files, top_module)), None);
    let cycle = find_cycle(&files).expect("the circle of files");
    assert_eq!(
        cycle,
        [
            "scaffold/entries.rs",
            "scaffold/markers.rs",
            "scaffold/entries.rs"
        ]
    );
    let refused = std::panic::catch_unwind(|| refuse_cycles("src", "files", &files))
        .expect_err("a circle is refused");
    let message = refused.downcast_ref::<String>().unwrap();
    assert!(
        message.contains("scaffold/entries.rs -> scaffold/markers.rs (scaffold/entries.rs:1)"),
        "{message}"
    );
}

#[test]
fn imports_lead_to_the_file_of_the_module_they_name() {
    let dir = write_crate(&[
        (
            "lib.rs",
            "pub mod a;\nmod b;\nmod c;\n#[cfg(test)]\nmod t;\n",
        ),
        (
            "a/mod.rs",
            "//! see [`crate::c`]\nmod inner;\npub(in crate::b) struct T;\nfn f() { inner::g(); \"crate::c\"; }\n",
        ),
        (
            "a/inner.rs",
            "use super::super::b::{self, deep::X};\npub fn g() -> crate::c::Y { super::T; todo!() }\n",
        ),
        (
            "b.rs",
            "pub mod deep;\nmod inline { use super::super::a::T; }\n",
        ),
        ("b/deep.rs", "pub struct X;\n"),
        (
            "c.rs",
            "#[path = \"elsewhere.rs\"]\nmod k;\npub struct Y;\n#[cfg(test)]\nmod tests { use crate::a::T; }\n",
        ),
        ("elsewhere.rs", "fn h() { crate::a::T; }\n"),
        ("t.rs", "use crate::a::T;\n"),
    ]);
    let edges: BTreeSet<(String, String)> = file_edges(dir.path()).into_keys().collect();
    let expected: BTreeSet<(String, String)> = [
        ("a/inner.rs", "a/mod.rs"),
        ("a/inner.rs", "b.rs"),
        ("a/inner.rs", "b/deep.rs"),
        ("a/inner.rs", "c.rs"),
        ("b.rs", "a/mod.rs"),
        ("elsewhere.rs", "a/mod.rs"),
    ]
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .into();
    assert_eq!(edges, expected);
}
