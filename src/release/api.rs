//! The runtime crate's public API as a listing, read from its source with syn (rustdoc's JSON
//! needs a nightly compiler): one line per item a user can name, at every public path it is
//! reachable by (its own, and each `pub use` of it), with its signature normalised. The
//! listing is recorded in `runtime/API.txt`; a test regenerates it, and checks that no item of
//! the previous release's listing (`runtime/api/<version>.txt`) is gone unless it was
//! deprecated there.
//!
//! A line is `<path> [#[doc(hidden)] ][#[deprecated] ]<kind and signature>`: `webhook::Defaulter trait
//! Defaulter<K>: ...`, a trait's method `webhook::Defaulter::apply_defaults fn ...`, a struct's
//! public field `manager::ManagerArgs::leader_elect field: bool`, an enum's variant, an
//! inherent method, a trait implemented for a type (`manager::ManagerArgs::impl(Default)`), a
//! re-export of another crate's item (`controller::Action use kube::runtime::controller::Action`).
//! Items compiled only in tests (`#[cfg(test)]`) are left out; every feature counts as on. The
//! lines without `#[doc(hidden)]` are what `cargo doc` shows; a hidden line (an item, or what
//! is reachable only through a hidden module or `pub use`) is still a path users' code may
//! name, so it is listed, and kept, all the same.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use quote::ToTokens;

use crate::syntax::{is_cfg_test, path_idents};

/// What went wrong reading the crate.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A file of the crate could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A file of the crate does not parse.
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line of the fault, from 1.
        line: usize,
        /// The column of the fault, from 1.
        column: usize,
        /// What syn says is wrong there.
        message: String,
    },
    /// A `mod` declaration whose file is not there.
    #[error("{path}: module `{module}` has no file (looked for {candidates})")]
    NoModuleFile {
        /// The file that declares the module.
        path: PathBuf,
        /// The module's name.
        module: String,
        /// The files looked for, as a list for the message.
        candidates: String,
    },
}

/// One module of the crate: its items (those compiled in tests only left out).
struct Module {
    items: Vec<syn::Item>,
}

/// An item a path resolves to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    /// A module of the crate, by its path.
    Module(Vec<String>),
    /// An item defined in the crate: its module and name.
    Local(Vec<String>, String),
    /// Another crate's item, as written.
    External(String),
}

/// The crate's modules, by path (`[]` is the crate root).
struct Crate {
    modules: BTreeMap<Vec<String>, Module>,
}

/// The listing of the crate whose `lib.rs` is in `src`: sorted lines, each ending in `\n`.
pub fn listing(src: &Path) -> Result<String, ApiError> {
    let mut krate = Crate {
        modules: BTreeMap::new(),
    };
    load(&mut krate, &src.join("lib.rs"), src, Vec::new(), true)?;
    let mut lines = BTreeSet::new();
    let mut stack = Vec::new();
    krate.emit_module(&[], "", &mut lines, &mut stack);
    let mut out = String::new();
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

/// `sha256:<hex>` of a listing: the runtime API fingerprint CHANGELOG.md records.
pub fn fingerprint(listing: &str) -> String {
    format!("sha256:{}", crate::fromcrd::sha256_hex(listing.as_bytes()))
}

/// The items of `old` (a listing) whose path `new` no longer has, as their lines, unless `old`
/// marked them (or an item they belong to) deprecated: those may go in the next minor release.
pub fn removed(old: &str, new: &str) -> Vec<String> {
    let paths: BTreeSet<&str> = new.lines().filter_map(|l| l.split(' ').next()).collect();
    let deprecated: BTreeSet<&str> = old
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(_, rest)| {
            let rest = rest.strip_prefix(HIDDEN).map_or(*rest, str::trim_start);
            rest.starts_with("#[deprecated]")
        })
        .map(|(path, _)| path)
        .collect();
    let is_deprecated = |path: &str| {
        let mut p = path;
        loop {
            if deprecated.contains(p) {
                return true;
            }
            match p.rfind("::") {
                Some(i) => p = &p[..i],
                None => return false,
            }
        }
    };
    old.lines()
        .filter(|l| {
            let path = l.split(' ').next().unwrap_or_default();
            !path.is_empty() && !paths.contains(path) && !is_deprecated(path)
        })
        .map(str::to_string)
        .collect()
}

fn load(
    krate: &mut Crate,
    file: &Path,
    dir: &Path,
    path: Vec<String>,
    owns_dir: bool,
) -> Result<(), ApiError> {
    let text = std::fs::read_to_string(file).map_err(|source| ApiError::Read {
        path: file.to_path_buf(),
        source,
    })?;
    let parsed = syn::parse_file(&text).map_err(|e| ApiError::Parse {
        path: file.to_path_buf(),
        line: e.span().start().line,
        column: e.span().start().column + 1,
        message: e.to_string(),
    })?;
    // A `foo.rs` keeps its submodules in `foo/`; `lib.rs` and `mod.rs` in their own folder.
    let sub_dir = if owns_dir {
        dir.to_path_buf()
    } else {
        dir.join(file.file_stem().unwrap_or_default())
    };
    load_items(krate, file, &sub_dir, path, parsed.items)
}

fn load_items(
    krate: &mut Crate,
    file: &Path,
    dir: &Path,
    path: Vec<String>,
    items: Vec<syn::Item>,
) -> Result<(), ApiError> {
    let items: Vec<syn::Item> = items
        .into_iter()
        .filter(|i| !is_cfg_test(attrs_of(i)))
        .collect();
    for item in &items {
        let syn::Item::Mod(m) = item else { continue };
        let mut child = path.clone();
        child.push(m.ident.to_string());
        match &m.content {
            Some((_, inner)) => load_items(
                krate,
                file,
                &dir.join(m.ident.to_string()),
                child,
                inner.clone(),
            )?,
            None => {
                let name = m.ident.to_string();
                let flat = dir.join(format!("{name}.rs"));
                let nested = dir.join(&name).join("mod.rs");
                if flat.is_file() {
                    load(krate, &flat, dir, child, false)?;
                } else if nested.is_file() {
                    load(krate, &nested, &dir.join(&name), child, true)?;
                } else {
                    return Err(ApiError::NoModuleFile {
                        path: file.to_path_buf(),
                        module: name,
                        candidates: format!("{} and {}", flat.display(), nested.display()),
                    });
                }
            }
        }
    }
    krate.modules.insert(path, Module { items });
    Ok(())
}

/// The attributes of an item.
fn attrs_of(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::ExternCrate(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::ForeignMod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::TraitAlias(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

fn is_deprecated(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("deprecated"))
}

/// `#[doc(hidden)]`: reachable, but not in the docs (an item kept for code written against an
/// older release, or plumbing the crate's own tests use).
fn is_doc_hidden(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("doc")
            && a.parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "hidden")
    })
}

/// `line` (`<path> <rest>`) marked `#[doc(hidden)]` after its path, once.
fn mark_hidden(line: &str) -> String {
    match line.split_once(' ') {
        Some((_, rest)) if rest.starts_with(HIDDEN) => line.to_string(),
        Some((path, rest)) => format!("{path} {HIDDEN} {rest}"),
        None => line.to_string(),
    }
}

/// The mark of a line the docs do not show.
const HIDDEN: &str = "#[doc(hidden)]";

fn is_pub(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

/// The name an item is known by, if it has one (impls, uses and macros without a name have none).
fn name_of(item: &syn::Item) -> Option<String> {
    Some(match item {
        syn::Item::Const(i) => i.ident.to_string(),
        syn::Item::Enum(i) => i.ident.to_string(),
        syn::Item::Fn(i) => i.sig.ident.to_string(),
        syn::Item::Mod(i) => i.ident.to_string(),
        syn::Item::Static(i) => i.ident.to_string(),
        syn::Item::Struct(i) => i.ident.to_string(),
        syn::Item::Trait(i) => i.ident.to_string(),
        syn::Item::Type(i) => i.ident.to_string(),
        syn::Item::Union(i) => i.ident.to_string(),
        syn::Item::Macro(i) => i.ident.as_ref()?.to_string(),
        _ => return None,
    })
}

fn vis_of(item: &syn::Item) -> Option<&syn::Visibility> {
    Some(match item {
        syn::Item::Const(i) => &i.vis,
        syn::Item::Enum(i) => &i.vis,
        syn::Item::Fn(i) => &i.vis,
        syn::Item::Mod(i) => &i.vis,
        syn::Item::Static(i) => &i.vis,
        syn::Item::Struct(i) => &i.vis,
        syn::Item::Trait(i) => &i.vis,
        syn::Item::Type(i) => &i.vis,
        syn::Item::Union(i) => &i.vis,
        syn::Item::Use(i) => &i.vis,
        _ => return None,
    })
}

/// The names a `use` tree binds: (name, path) for each, and the paths of its globs.
fn flatten_use(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    names: &mut Vec<(String, Vec<String>)>,
    globs: &mut Vec<Vec<String>>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten_use(&p.tree, prefix, names, globs);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            if n.ident == "self" {
                if let Some(last) = prefix.last() {
                    names.push((last.clone(), prefix.clone()));
                }
            } else {
                let mut path = prefix.clone();
                path.push(n.ident.to_string());
                names.push((n.ident.to_string(), path));
            }
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            if r.ident != "self" {
                path.push(r.ident.to_string());
            }
            names.push((r.rename.to_string(), path));
        }
        syn::UseTree::Glob(_) => globs.push(prefix.clone()),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten_use(t, prefix, names, globs);
            }
        }
    }
}

impl Crate {
    fn items(&self, module: &[String]) -> &[syn::Item] {
        self.modules
            .get(module)
            .map(|m| m.items.as_slice())
            .unwrap_or_default()
    }

    fn item(&self, module: &[String], name: &str) -> Option<&syn::Item> {
        self.items(module)
            .iter()
            .find(|i| !matches!(i, syn::Item::Mod(_)) && name_of(i).as_deref() == Some(name))
    }

    /// What `name` means in `module`: a submodule, an item, or a name a `use` binds.
    fn lookup(&self, module: &[String], name: &str, depth: usize) -> Option<Target> {
        let mut child = module.to_vec();
        child.push(name.to_string());
        if self.modules.contains_key(&child) {
            return Some(Target::Module(child));
        }
        if self.item(module, name).is_some() {
            return Some(Target::Local(module.to_vec(), name.to_string()));
        }
        for item in self.items(module) {
            let syn::Item::Use(u) = item else { continue };
            let (mut names, mut globs) = (Vec::new(), Vec::new());
            flatten_use(&u.tree, &mut Vec::new(), &mut names, &mut globs);
            if let Some((_, path)) = names.iter().find(|(n, _)| n == name) {
                return self.resolve(module, path, depth + 1);
            }
        }
        None
    }

    /// What `path`, written in `module`, names.
    fn resolve(&self, module: &[String], path: &[String], depth: usize) -> Option<Target> {
        if depth > 16 || path.is_empty() {
            return None;
        }
        let (mut current, rest): (Vec<String>, &[String]) = match path[0].as_str() {
            "crate" => (Vec::new(), &path[1..]),
            "self" => (module.to_vec(), &path[1..]),
            "super" => {
                let mut m = module.to_vec();
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    m.pop();
                    rest = &rest[1..];
                }
                (m, rest)
            }
            first => {
                if self.lookup(module, first, depth).is_none() {
                    return Some(Target::External(path.join("::")));
                }
                (module.to_vec(), path)
            }
        };
        if rest.is_empty() {
            return Some(Target::Module(current));
        }
        for (i, seg) in rest.iter().enumerate() {
            let found = self.lookup(&current, seg, depth + 1)?;
            if i + 1 == rest.len() {
                return Some(found);
            }
            match found {
                Target::Module(m) => current = m,
                Target::External(e) => {
                    return Some(Target::External(
                        std::iter::once(e)
                            .chain(rest[i + 1..].iter().cloned())
                            .collect::<Vec<_>>()
                            .join("::"),
                    ));
                }
                Target::Local(..) => return None,
            }
        }
        None
    }

    /// The names `module` exports: its `pub` items and modules, and what its `pub use`s bind.
    fn exports(&self, module: &[String], depth: usize) -> BTreeMap<String, Target> {
        let mut out = BTreeMap::new();
        if depth > 16 {
            return out;
        }
        for item in self.items(module) {
            if module.is_empty()
                && let syn::Item::Macro(m) = item
                && m.attrs.iter().any(|a| a.path().is_ident("macro_export"))
                && let Some(name) = &m.ident
            {
                out.insert(
                    name.to_string(),
                    Target::Local(Vec::new(), name.to_string()),
                );
            }
            if !vis_of(item).is_some_and(is_pub) {
                continue;
            }
            match item {
                syn::Item::Use(u) => {
                    let (mut names, mut globs) = (Vec::new(), Vec::new());
                    flatten_use(&u.tree, &mut Vec::new(), &mut names, &mut globs);
                    for (name, path) in names {
                        if name == "_" {
                            continue;
                        }
                        if let Some(t) = self.resolve(module, &path, depth) {
                            out.insert(name, t);
                        }
                    }
                    for glob in globs {
                        if let Some(Target::Module(m)) = self.resolve(module, &glob, depth) {
                            out.extend(self.exports(&m, depth + 1));
                        }
                    }
                }
                syn::Item::Mod(m) => {
                    let mut child = module.to_vec();
                    child.push(m.ident.to_string());
                    out.insert(m.ident.to_string(), Target::Module(child));
                }
                other => {
                    if let Some(name) = name_of(other) {
                        out.insert(name.clone(), Target::Local(module.to_vec(), name));
                    }
                }
            }
        }
        // `#[macro_export]` macros of any module are at the crate root.
        if module.is_empty() {
            for (path, m) in &self.modules {
                for item in &m.items {
                    if let syn::Item::Macro(mac) = item
                        && mac.attrs.iter().any(|a| a.path().is_ident("macro_export"))
                        && let Some(name) = &mac.ident
                    {
                        out.insert(
                            name.to_string(),
                            Target::Local(path.clone(), name.to_string()),
                        );
                    }
                }
            }
        }
        out
    }

    fn emit_module(
        &self,
        module: &[String],
        prefix: &str,
        lines: &mut BTreeSet<String>,
        stack: &mut Vec<Vec<String>>,
    ) {
        if stack.iter().any(|m| m == module) {
            return;
        }
        stack.push(module.to_vec());
        let hidden_uses = self.hidden_uses(module);
        for (name, target) in self.exports(module, 0) {
            let path = join(prefix, &name);
            let mut below = BTreeSet::new();
            self.emit_target(&target, &path, &mut below, stack);
            if hidden_uses.contains(&name) || self.is_hidden(&target) {
                // Hidden from the docs, and so is everything reachable only through it.
                below = below.into_iter().map(|l| mark_hidden(&l)).collect();
            }
            lines.extend(below);
        }
        stack.pop();
    }

    /// The names `module` exports through a `#[doc(hidden)] pub use`.
    fn hidden_uses(&self, module: &[String]) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for item in self.items(module) {
            let syn::Item::Use(u) = item else { continue };
            if !is_pub(&u.vis) || !is_doc_hidden(&u.attrs) {
                continue;
            }
            let (mut names, mut globs) = (Vec::new(), Vec::new());
            flatten_use(&u.tree, &mut Vec::new(), &mut names, &mut globs);
            out.extend(names.into_iter().map(|(name, _)| name));
            for glob in globs {
                if let Some(Target::Module(m)) = self.resolve(module, &glob, 0) {
                    out.extend(self.exports(&m, 1).into_keys());
                }
            }
        }
        out
    }

    /// Whether `target` itself says `#[doc(hidden)]` (a module's declaration, an item).
    fn is_hidden(&self, target: &Target) -> bool {
        match target {
            Target::Module(m) => self.module_item(m).is_some_and(|i| is_doc_hidden(&i.attrs)),
            Target::Local(module, name) => self
                .item(module, name)
                .is_some_and(|i| is_doc_hidden(attrs_of(i))),
            Target::External(_) => false,
        }
    }

    fn emit_target(
        &self,
        target: &Target,
        path: &str,
        lines: &mut BTreeSet<String>,
        stack: &mut Vec<Vec<String>>,
    ) {
        match target {
            Target::Module(m) => {
                let deprecated = self.module_item(m).is_some_and(|i| is_deprecated(&i.attrs));
                lines.insert(format!("{path} {}mod", mark(deprecated)));
                self.emit_module(m, path, lines, stack);
            }
            Target::External(e) => {
                lines.insert(format!("{path} use {e}"));
            }
            Target::Local(module, name) => {
                if let Some(item) = self.item(module, name) {
                    self.emit_item(module, item, path, lines);
                }
            }
        }
    }

    fn module_item(&self, module: &[String]) -> Option<&syn::ItemMod> {
        let (name, parent) = module.split_last()?;
        self.items(parent).iter().find_map(|i| match i {
            syn::Item::Mod(m) if m.ident == name => Some(m),
            _ => None,
        })
    }

    fn emit_item(
        &self,
        module: &[String],
        item: &syn::Item,
        path: &str,
        lines: &mut BTreeSet<String>,
    ) {
        let dep = mark(is_deprecated(attrs_of(item)));
        let mut line = |text: String| {
            lines.insert(format!("{path} {dep}{text}"));
        };
        match item {
            syn::Item::Fn(f) => line(render_sig(&f.sig)),
            syn::Item::Const(c) => line(format!("const {}: {}", c.ident, render(&c.ty))),
            syn::Item::Static(s) => line(format!("static {}: {}", s.ident, render(&s.ty))),
            syn::Item::Macro(m) => line(format!(
                "macro_rules! {}",
                m.ident
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default()
            )),
            syn::Item::Type(t) => {
                line(format!(
                    "type {}{} = {}",
                    t.ident,
                    render_generics(&t.generics),
                    render(&t.ty)
                ));
                // An alias has the members of what it names (an old name kept for a type).
                if let syn::Type::Path(p) = &*t.ty {
                    let segs = path_idents(&p.path);
                    if let Some(Target::Local(m, n)) = self.resolve(module, &segs, 0)
                        && let Some(target) = self.item(&m, &n)
                        && !matches!(target, syn::Item::Type(_))
                    {
                        self.emit_members(&m, target, path, lines);
                    }
                }
            }
            syn::Item::Struct(s) => {
                let private = s.fields.iter().any(|f| !is_pub(&f.vis));
                line(format!(
                    "struct {}{}{}{}",
                    s.ident,
                    render_generics(&s.generics),
                    if non_exhaustive(&s.attrs) {
                        " #[non_exhaustive]"
                    } else {
                        ""
                    },
                    if private { " (private fields)" } else { "" }
                ));
                self.emit_members(module, item, path, lines);
            }
            syn::Item::Enum(e) => {
                line(format!(
                    "enum {}{}{}",
                    e.ident,
                    render_generics(&e.generics),
                    if non_exhaustive(&e.attrs) {
                        " #[non_exhaustive]"
                    } else {
                        ""
                    }
                ));
                self.emit_members(module, item, path, lines);
            }
            syn::Item::Trait(t) => {
                let supertraits = if t.supertraits.is_empty() {
                    String::new()
                } else {
                    format!(": {}", render(&t.supertraits))
                };
                line(format!(
                    "{}trait {}{}{}",
                    if t.unsafety.is_some() { "unsafe " } else { "" },
                    t.ident,
                    render_generics(&t.generics),
                    supertraits
                ));
                self.emit_members(module, item, path, lines);
            }
            syn::Item::Union(u) => line(format!("union {}", u.ident)),
            _ => {}
        }
    }

    /// Fields, variants, trait items, inherent methods and trait impls of `item`, under `path`.
    fn emit_members(
        &self,
        module: &[String],
        item: &syn::Item,
        path: &str,
        lines: &mut BTreeSet<String>,
    ) {
        let name = name_of(item).unwrap_or_default();
        match item {
            syn::Item::Struct(s) => {
                for (i, f) in s.fields.iter().enumerate() {
                    if !is_pub(&f.vis) {
                        continue;
                    }
                    let field = f.ident.as_ref().map_or(i.to_string(), ToString::to_string);
                    lines.insert(format!(
                        "{}::{field} {}field: {}",
                        path,
                        mark(is_deprecated(&f.attrs)),
                        render(&f.ty)
                    ));
                }
            }
            syn::Item::Enum(e) => {
                for v in &e.variants {
                    let mut text = v.ident.to_string();
                    match &v.fields {
                        syn::Fields::Named(n) => {
                            let fields: Vec<String> = n
                                .named
                                .iter()
                                .map(|f| {
                                    format!(
                                        "{}: {}",
                                        f.ident
                                            .as_ref()
                                            .map(ToString::to_string)
                                            .unwrap_or_default(),
                                        render(&f.ty)
                                    )
                                })
                                .collect();
                            text.push_str(&format!(" {{ {} }}", fields.join(", ")));
                        }
                        syn::Fields::Unnamed(u) => {
                            let fields: Vec<String> =
                                u.unnamed.iter().map(|f| render(&f.ty)).collect();
                            text.push_str(&format!("({})", fields.join(", ")));
                        }
                        syn::Fields::Unit => {}
                    }
                    lines.insert(format!(
                        "{path}::{} {}variant {text}",
                        v.ident,
                        mark(is_deprecated(&v.attrs))
                    ));
                }
            }
            syn::Item::Trait(t) => {
                for ti in &t.items {
                    match ti {
                        syn::TraitItem::Fn(f) => lines.insert(format!(
                            "{path}::{} {}{}{}",
                            f.sig.ident,
                            mark(is_deprecated(&f.attrs)),
                            render_sig(&f.sig),
                            if f.default.is_some() { " { .. }" } else { "" }
                        )),
                        syn::TraitItem::Type(ty) => lines.insert(format!(
                            "{path}::{} type {}{}",
                            ty.ident,
                            ty.ident,
                            if ty.bounds.is_empty() {
                                String::new()
                            } else {
                                format!(": {}", render(&ty.bounds))
                            }
                        )),
                        syn::TraitItem::Const(c) => lines.insert(format!(
                            "{path}::{} const {}: {}",
                            c.ident,
                            c.ident,
                            render(&c.ty)
                        )),
                        _ => false,
                    };
                }
            }
            _ => {}
        }
        // Derived traits, as the impls they are.
        let attrs = match item {
            syn::Item::Struct(s) => s.attrs.as_slice(),
            syn::Item::Enum(e) => e.attrs.as_slice(),
            _ => &[],
        };
        for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
            let Ok(traits) = attr.parse_args_with(
                syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
            ) else {
                continue;
            };
            for t in traits {
                let key = render(&t.segments.last().map(|s| s.to_token_stream()));
                lines.insert(format!("{path}::impl({key}) #[derive({})]", render(&t)));
            }
        }
        // Impls anywhere in the crate whose self type (or, for a blanket impl, whose trait) is
        // this item.
        let me = Target::Local(module.to_vec(), name);
        for (impl_module, m) in &self.modules {
            for i in &m.items {
                let syn::Item::Impl(imp) = i else { continue };
                let self_target = match &*imp.self_ty {
                    syn::Type::Path(p) => {
                        let segs = path_idents(&p.path);
                        self.resolve(impl_module, &segs, 0)
                    }
                    _ => None,
                };
                let trait_target = (imp.trait_.as_ref())
                    .and_then(|(_, p, _)| self.resolve(impl_module, &path_idents(p), 0));
                let header = format!(
                    "impl{} {} for {}{}",
                    render(&imp.generics),
                    imp.trait_
                        .as_ref()
                        .map_or(String::new(), |(bang, p, _)| format!(
                            "{}{}",
                            if bang.is_some() { "!" } else { "" },
                            render(p)
                        )),
                    render(&imp.self_ty),
                    imp.generics
                        .where_clause
                        .as_ref()
                        .map_or(String::new(), |w| format!(" {}", render(w)))
                );
                if self_target.as_ref() == Some(&me) {
                    match &imp.trait_ {
                        Some((_, p, _)) => {
                            let key = render(&p.segments.last().map(|s| s.to_token_stream()))
                                .replace(' ', "");
                            lines.insert(format!(
                                "{path}::impl({key}) {}{header}",
                                mark(is_deprecated(&imp.attrs))
                            ));
                        }
                        None => {
                            for ii in &imp.items {
                                if let syn::ImplItem::Fn(f) = ii
                                    && is_pub(&f.vis)
                                {
                                    lines.insert(format!(
                                        "{path}::{} {}{}",
                                        f.sig.ident,
                                        mark(is_deprecated(&f.attrs)),
                                        render_sig(&f.sig)
                                    ));
                                }
                                if let syn::ImplItem::Const(c) = ii
                                    && is_pub(&c.vis)
                                {
                                    lines.insert(format!(
                                        "{path}::{} const {}: {}",
                                        c.ident,
                                        c.ident,
                                        render(&c.ty)
                                    ));
                                }
                            }
                        }
                    }
                } else if trait_target.as_ref() == Some(&me)
                    && !matches!(self_target, Some(Target::Local(..)))
                {
                    // A blanket impl (`impl<T: Old> New for T`), or one for another crate's type.
                    let key = render(&imp.self_ty).replace(' ', "");
                    lines.insert(format!(
                        "{path}::impl(for {key}) {}{header}",
                        mark(is_deprecated(&imp.attrs))
                    ));
                }
            }
        }
    }
}

fn non_exhaustive(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("non_exhaustive"))
}

fn mark(deprecated: bool) -> &'static str {
    if deprecated { "#[deprecated] " } else { "" }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}::{name}")
    }
}

/// A function's signature without attributes: `async fn run(self) -> Result<(), Error>`.
fn render_sig(sig: &syn::Signature) -> String {
    let mut sig = sig.clone();
    for input in sig.inputs.iter_mut() {
        match input {
            syn::FnArg::Receiver(r) => r.attrs.clear(),
            syn::FnArg::Typed(t) => t.attrs.clear(),
        }
    }
    render(&sig)
}

fn render_generics(g: &syn::Generics) -> String {
    let mut out = render(g);
    if let Some(w) = &g.where_clause {
        out.push(' ');
        out.push_str(&render(w));
    }
    out
}

/// Tokens as one normalised line: `&mut Vec<String>`, `fn f(a: u8) -> Option<T>`.
fn render(tokens: &impl ToTokens) -> String {
    let mut out = String::new();
    write_tokens(tokens.to_token_stream(), &mut out);
    let out = out.trim();
    out.strip_suffix(',').unwrap_or(out).to_string()
}

fn write_tokens(ts: TokenStream, out: &mut String) {
    // Whether the next word is written without a space before it.
    let mut glue = true;
    // Whether the last token was an operator written with spaces around it (`=`, `->`).
    let mut spaced_operator = false;
    let mut op = String::new();
    let mut tokens = ts.into_iter().peekable();
    while let Some(tt) = tokens.next() {
        let was_spaced = std::mem::take(&mut spaced_operator);
        match tt {
            TokenTree::Ident(_) | TokenTree::Literal(_) => {
                if !glue {
                    out.push(' ');
                }
                out.push_str(&tt.to_string());
                glue = false;
            }
            TokenTree::Punct(p) => {
                op.push(p.as_char());
                if p.spacing() == Spacing::Joint
                    && matches!(tokens.peek(), Some(TokenTree::Punct(_)))
                {
                    continue;
                }
                let operator = std::mem::take(&mut op);
                match operator.as_str() {
                    "::" | "<" | "." => {
                        out.push_str(&operator);
                        glue = true;
                    }
                    ">" | "," | ";" | ":" => {
                        out.push_str(&operator);
                        glue = false;
                    }
                    "&" | "'" | "#" | "!" | "*" | "?" | "&&" => {
                        if !glue {
                            out.push(' ');
                        }
                        out.push_str(&operator);
                        glue = true;
                    }
                    _ => {
                        if !glue {
                            out.push(' ');
                        }
                        out.push_str(&operator);
                        glue = false;
                        spaced_operator = true;
                    }
                }
            }
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{ ", " }"),
                    Delimiter::None => ("", ""),
                };
                if !glue && (g.delimiter() == Delimiter::Brace || was_spaced) {
                    out.push(' ');
                }
                out.push_str(open);
                let mut inner = String::new();
                write_tokens(g.stream(), &mut inner);
                let inner = inner.trim();
                out.push_str(inner.strip_suffix(',').unwrap_or(inner));
                out.push_str(close);
                glue = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(s: &str) -> String {
        render(&syn::parse_str::<syn::Type>(s).unwrap())
    }

    #[test]
    fn types_render_as_written() {
        assert_eq!(ty("& 'a mut Vec < String >"), "&'a mut Vec<String>");
        assert_eq!(
            ty("std :: collections :: BTreeMap<K, V>"),
            "std::collections::BTreeMap<K, V>"
        );
        assert_eq!(
            ty("Box<dyn Fn(u8) -> Option<T> + Send>"),
            "Box<dyn Fn(u8) -> Option<T> + Send>"
        );
        assert_eq!(ty("Vec<Vec<u8>>"), "Vec<Vec<u8>>");
        assert_eq!(ty("[u8; 4]"), "[u8; 4]");
        assert_eq!(
            ty("impl Resource<DynamicType = ()>"),
            "impl Resource<DynamicType = ()>"
        );
    }

    fn listing_of(files: &[(&str, &str)]) -> String {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        listing(dir.path()).unwrap()
    }

    #[test]
    fn hidden_items_and_what_is_reachable_only_through_them_are_marked() {
        let lines = listing_of(&[
            (
                "lib.rs",
                "pub mod a;\n#[doc(hidden)]\npub mod old;\nmod private;\n\
                 pub use private::Shown;\n#[doc(hidden)]\npub use private::Kept;\n\
                 #[doc(hidden)]\n#[deprecated]\npub fn gone() {}\n",
            ),
            ("a.rs", "pub struct A;\n#[doc = \"shown\"]\npub fn f() {}\n"),
            ("old.rs", "pub struct B { pub x: u8 }\n"),
            ("private.rs", "pub struct Shown;\npub struct Kept;\n"),
        ]);
        assert_eq!(
            lines,
            "Kept #[doc(hidden)] struct Kept\n\
             Shown struct Shown\n\
             a mod\n\
             a::A struct A\n\
             a::f fn f()\n\
             gone #[doc(hidden)] #[deprecated] fn gone()\n\
             old #[doc(hidden)] mod\n\
             old::B #[doc(hidden)] struct B\n\
             old::B::x #[doc(hidden)] field: u8\n"
        );
        // A hidden deprecated item may go in the next release, as a shown one.
        assert!(removed(&lines, "").iter().all(|l| !l.starts_with("gone ")));
    }

    #[test]
    fn a_gone_item_is_reported_unless_it_was_deprecated() {
        let old = "a fn a()\nb #[deprecated] fn b()\nc #[deprecated] trait C\nc::m fn m(&self)\nd struct D\nd::x field: u8\n";
        let new = "a fn a(x: u8)\nd struct D\n";
        assert_eq!(removed(old, new), vec!["d::x field: u8".to_string()]);
    }
}
