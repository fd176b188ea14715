//! Loads the user's crate as the compiler sees it: starts at `src/lib.rs` / `src/main.rs`, follows
//! `mod` declarations (files `name.rs` / `name/mod.rs`, `#[path]`, inline modules), skips
//! items, fields and variants whose `#[cfg]` never holds (`#[cfg(test)]`), and indexes every module's types, functions, consts, `use`s and impls.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use proc_macro2::Span;
use syn::spanned::Spanned;

use crate::crdgen::error::{CrdgenError, Location};
use crate::crdgen::read::attrs;
use crate::crdgen::read::place_attrs::{DefAttrs, PlaceAttrs};
use crate::syntax::{Bodies, DocComments, Pos, Prepared, SetAsideAttrs};
use crate::workspace::SourceTree;

pub(crate) type ModId = usize;
pub(crate) type DefId = usize;

/// One module of the crate.
#[derive(Debug)]
pub(crate) struct Module {
    pub file: usize,
    pub parent: Option<ModId>,
    /// Declared `pub mod` (other crates can name what is in it, if its parents are public too).
    pub public: bool,
    pub children: BTreeMap<String, ModId>,
    pub defs: BTreeMap<String, DefId>,
    pub fns: BTreeMap<String, syn::ItemFn>,
    pub consts: BTreeMap<String, (syn::Type, syn::Expr)>,
    pub uses: Vec<UseEntry>,
    /// Item-level macro invocations (they may define types the reader cannot see).
    pub item_macros: Vec<(Span, String)>,
    /// Where a `#[cfg(...)]` whose value depends on the build is on this module or one of its
    /// parents (its items may not be compiled at all).
    pub undecided_cfg: Option<Location>,
}

/// One name a `use` brings into scope (`glob`: every public name of `path`).
#[derive(Debug, Clone)]
pub(crate) struct UseEntry {
    pub name: String,
    pub path: Vec<String>,
    pub leading_colon: bool,
    pub glob: bool,
    /// A `pub use`: a re-export other crates can name.
    pub public: bool,
}

/// A struct, enum or type alias of the crate.
#[derive(Debug)]
pub(crate) struct Def {
    pub module: ModId,
    pub item: DefItem,
}

#[derive(Debug)]
pub(crate) enum DefItem {
    Struct(syn::ItemStruct),
    Enum(syn::ItemEnum),
    Alias(syn::ItemType),
}

impl Def {
    pub fn ident(&self) -> &syn::Ident {
        match &self.item {
            DefItem::Struct(s) => &s.ident,
            DefItem::Enum(e) => &e.ident,
            DefItem::Alias(a) => &a.ident,
        }
    }
    pub fn attrs(&self) -> &[syn::Attribute] {
        match &self.item {
            DefItem::Struct(s) => &s.attrs,
            DefItem::Enum(e) => &e.attrs,
            DefItem::Alias(a) => &a.attrs,
        }
    }
    pub fn vis(&self) -> &syn::Visibility {
        match &self.item {
            DefItem::Struct(s) => &s.vis,
            DefItem::Enum(e) => &e.vis,
            DefItem::Alias(a) => &a.vis,
        }
    }

    pub fn generics(&self) -> &syn::Generics {
        match &self.item {
            DefItem::Struct(s) => &s.generics,
            DefItem::Enum(e) => &e.generics,
            DefItem::Alias(a) => &a.generics,
        }
    }
}

/// A path as written in a module: the module, a leading `::`, the segments.
pub(crate) type PathKey = (ModId, bool, Vec<String>);

/// What a path names (`resolve` finds it; [`Crate::resolved`] caches it).
#[derive(Debug, Clone)]
pub(crate) enum Res {
    Def(DefId),
    Module(ModId),
    Fn(ModId, String),
    Const(ModId, String),
    /// A path outside the crate, canonical (`std::collections::BTreeMap`, `k8s_openapi::...`).
    External(Vec<String>),
}

/// The crate: its files, modules, definitions and impl blocks.
#[derive(Debug, Default)]
pub(crate) struct Crate {
    pub files: Vec<PathBuf>,
    /// Whether each file holds the types of kinds the project does not own (generated from their
    /// CRD, marked [`crate::fromcrd::EXTERNAL_MARKER`]): no CRD is written for them.
    pub external: Vec<bool>,
    /// The function bodies of each file, parsed only when a default value needs one.
    pub bodies: Vec<Bodies>,
    /// The doc comments of each file, set aside before lexing (see [`crate::syntax::DocComments`]).
    pub docs: Vec<DocComments>,
    /// The `#[serde(...)]` and `#[derive(...)]` of each file set aside before lexing, until the
    /// loader moves them into [`Crate::attrs`] (see [`crate::syntax::meta`]).
    set_aside: Vec<SetAsideAttrs>,
    pub modules: Vec<Module>,
    pub defs: Vec<Def>,
    pub impls: Vec<(ModId, syn::ItemImpl)>,
    /// The attributes of each definition, parsed once (by [`DefId`]).
    pub attrs: Vec<DefAttrs>,
    /// The derive macros of each definition, by their real names (see [`Crate::derives`]).
    pub derive_names: Vec<Vec<String>>,
    /// What each path resolved to, by module (see [`Crate::resolve_path`]).
    pub resolved: RefCell<HashMap<PathKey, Option<Res>>>,
    /// Each file parsed, with the first name it declares twice at its top level (Rust refuses
    /// it; the check of what a command writes reuses this verdict: [`super::super::Found::parsed`]).
    pub parsed: Vec<(PathBuf, Option<String>)>,
}

impl Crate {
    /// The place `at` (a syn span, or a [`Pos`] read without syn) of file `file`.
    pub fn loc(&self, file: usize, at: impl Into<Pos>) -> Location {
        let at = at.into();
        Location {
            file: self.files[file].clone(),
            line: at.line,
            column: at.column + 1,
        }
    }

    pub fn def_loc(&self, def: DefId, at: impl Into<Pos>) -> Location {
        self.loc(self.modules[self.defs[def].module].file, at)
    }

    pub fn mod_loc(&self, m: ModId, at: impl Into<Pos>) -> Location {
        self.loc(self.modules[m].file, at)
    }

    /// The body of a function of module `m` (the loader keeps bodies unparsed).
    pub fn body(&self, m: ModId, block: &syn::Block) -> Result<syn::Block, CrdgenError> {
        let file = self.modules[m].file;
        self.bodies[file]
            .block(block)
            .map_err(|e| CrdgenError::Source {
                loc: self.loc(file, e.span()),
                what: format!("does not parse as Rust: {e}"),
            })
    }
}

/// Load the crate whose root file is `root_rel` (relative to the tree's root).
pub(crate) fn load(tree: &dyn SourceTree, root_rel: &Path) -> Result<Crate, CrdgenError> {
    let mut krate = Crate::default();
    let text =
        read(tree, root_rel)?.ok_or_else(|| CrdgenError::NoCrateRoot(tree.root().to_path_buf()))?;
    let (file, items) = parse(&mut krate, root_rel, &text, None)?;
    // A crate root's `mod x;` files live beside it.
    let dir = root_rel.parent().unwrap_or(Path::new("")).to_path_buf();
    add_module(&mut krate, tree, Vec::new(), None, file, items, &dir, &dir)?;
    krate.modules[0].public = true;
    let mut set_aside = std::mem::take(&mut krate.set_aside);
    krate.attrs = krate
        .defs
        .iter()
        .map(|def| {
            let file = krate.modules[def.module].file;
            def_attrs(&def.item, def.attrs(), &mut set_aside[file])
        })
        .collect();
    krate.derive_names = krate.resolve_derives();
    Ok(krate)
}

fn read(tree: &dyn SourceTree, rel: &Path) -> Result<Option<String>, CrdgenError> {
    tree.read(rel).map_err(|source| CrdgenError::Io {
        path: rel.to_path_buf(),
        source,
    })
}

/// Parses a file (bodies set aside) and registers it: its id and its items.
fn parse(
    krate: &mut Crate,
    rel: &Path,
    text: &str,
    prepared: Option<Prepared>,
) -> Result<(usize, Vec<syn::Item>), CrdgenError> {
    let prepared = prepared.unwrap_or_else(|| crate::syntax::prepare(text));
    let parsed = crate::syntax::parse_prepared(text, prepared)
        .inspect(|p| {
            let duplicate = crate::workspace::rust_items::duplicate_name(&p.file);
            krate.parsed.push((rel.to_path_buf(), duplicate));
        })
        .map_err(|e| {
            let start = e.span().start();
            CrdgenError::Source {
                loc: Location {
                    file: rel.to_path_buf(),
                    line: start.line,
                    column: start.column + 1,
                },
                what: format!("does not parse as Rust: {e}"),
            }
        })?;
    krate.files.push(rel.to_path_buf());
    krate.external.push(crate::fromcrd::is_external_file(text));
    krate.bodies.push(parsed.bodies);
    krate.docs.push(parsed.docs);
    krate.set_aside.push(parsed.attrs);
    Ok((krate.files.len() - 1, parsed.file.items))
}

/// Whether an item's `#[cfg]` never holds in the builds `generate crds` stands for (see
/// [`crate::crdgen::read::cfg`]): the compiler never sees it.
fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    crate::crdgen::read::cfg::holds(attrs) == Some(false)
}

/// The fields of `fields` the compiler sees (those whose `#[cfg]` may hold).
fn compiled_fields(fields: &mut syn::Fields) {
    let keep = |f: &syn::Field| !is_cfg_test(&f.attrs);
    match fields {
        syn::Fields::Named(n) => {
            n.named = std::mem::take(&mut n.named)
                .into_iter()
                .filter(keep)
                .collect()
        }
        syn::Fields::Unnamed(u) => {
            u.unnamed = std::mem::take(&mut u.unnamed)
                .into_iter()
                .filter(keep)
                .collect()
        }
        syn::Fields::Unit => {}
    }
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs
        .iter()
        .find(|a| a.path().is_ident("path"))
        .and_then(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
}

/// Add a module and, recursively, its children. `dir` is where its `mod x;` children live;
/// `path_dir` is the directory `#[path]` attributes of its children are relative to.
#[allow(clippy::too_many_arguments)]
fn add_module(
    krate: &mut Crate,
    tree: &dyn SourceTree,
    path: Vec<String>,
    parent: Option<ModId>,
    file_id: usize,
    items: Vec<syn::Item>,
    dir: &Path,
    path_dir: &Path,
) -> Result<ModId, CrdgenError> {
    if path.len() > MAX_MODULE_DEPTH {
        return Err(CrdgenError::Source {
            loc: Location {
                file: krate.files[file_id].clone(),
                line: 1,
                column: 1,
            },
            what: format!(
                "modules nested more than {MAX_MODULE_DEPTH} deep (`crate::{}::...`); operator-rs reads no deeper. Flatten the module tree",
                path[..3].join("::")
            ),
        });
    }
    let id = krate.modules.len();
    krate.modules.push(Module {
        file: file_id,
        parent,
        public: false,
        children: BTreeMap::new(),
        defs: BTreeMap::new(),
        fns: BTreeMap::new(),
        consts: BTreeMap::new(),
        uses: Vec::new(),
        item_macros: Vec::new(),
        undecided_cfg: parent.and_then(|p| krate.modules[p].undecided_cfg.clone()),
    });
    // The files of the `mod x;` children are read first and set aside on the other core while
    // each is parsed in turn here (the parse stays on this thread: syn's spans are thread-local).
    let mut files: Vec<Option<Result<ChildFile, CrdgenError>>> = items
        .iter()
        .map(|item| match item {
            syn::Item::Mod(m) if m.content.is_none() && !is_cfg_test(&m.attrs) => {
                Some(child_file(tree, m, dir, path_dir))
            }
            _ => None,
        })
        .collect();
    let texts: Vec<String> = files
        .iter_mut()
        .filter_map(|f| f.as_mut()?.as_mut().ok()?.text.take())
        .collect();
    std::thread::scope(|scope| {
        let mut prepping = Prepping::start(scope, texts);
        for (item, file) in items.into_iter().zip(files) {
            match item {
                syn::Item::Mod(m) => {
                    if is_cfg_test(&m.attrs) {
                        continue;
                    }
                    let name = m.ident.to_string();
                    let name_unraw = name.trim_start_matches("r#").to_string();
                    let mut child_path = path.clone();
                    child_path.push(name_unraw.clone());
                    let child = if let Some((_, content)) = m.content {
                        // Inline module: its `mod x;` children live in `dir/name/`, `#[path]` too.
                        let sub = match path_attr(&m.attrs) {
                            Some(p) => path_dir.join(p),
                            None => dir.join(&name_unraw),
                        };
                        add_module(
                            krate,
                            tree,
                            child_path,
                            Some(id),
                            file_id,
                            content,
                            &sub,
                            &sub,
                        )?
                    } else {
                        let ChildFile {
                            rel,
                            dir: child_dir,
                            path_dir: child_path_dir,
                            found,
                            ..
                        } = file.expect("every `mod x;` has its file looked up")?;
                        if let Some(chain) = module_loop(krate, id, &rel) {
                            return Err(CrdgenError::Source {
                                loc: krate.loc(file_id, m.ident.span()),
                                what: format!(
                                    "module `{name_unraw}` loads {}, which is already loading it: a module loop ({chain}). Point its `#[path]` at another file",
                                    rel.display()
                                ),
                            });
                        }
                        if !found {
                            return Err(CrdgenError::Source {
                                loc: krate.loc(file_id, m.ident.span()),
                                what: format!(
                                    "module `{name_unraw}` has no file ({} not found)",
                                    rel.display()
                                ),
                            });
                        }
                        let (text, prepared) =
                            prepping.next().expect("a text for every file found");
                        let (child_file, child_items) = parse(krate, &rel, &text, Some(prepared))?;
                        add_module(
                            krate,
                            tree,
                            child_path,
                            Some(id),
                            child_file,
                            child_items,
                            &child_dir,
                            &child_path_dir,
                        )?
                    };
                    krate.modules[child].public = matches!(m.vis, syn::Visibility::Public(_));
                    if let Some(a) = crate::crdgen::read::cfg::undecided(&m.attrs) {
                        let at = krate.loc(file_id, a.pound_token.span);
                        krate.modules[child].undecided_cfg.get_or_insert(at);
                    }
                    krate.modules[id].children.insert(name_unraw, child);
                }
                syn::Item::Struct(s) => {
                    let name = s.ident.to_string();
                    add_def(krate, id, name, DefItem::Struct(s));
                }
                syn::Item::Enum(e) => {
                    let name = e.ident.to_string();
                    add_def(krate, id, name, DefItem::Enum(e));
                }
                syn::Item::Type(t) => {
                    let name = t.ident.to_string();
                    add_def(krate, id, name, DefItem::Alias(t));
                }
                syn::Item::Fn(f) => {
                    krate.modules[id].fns.insert(f.sig.ident.to_string(), f);
                }
                syn::Item::Const(c) => {
                    krate.modules[id]
                        .consts
                        .insert(c.ident.to_string(), (*c.ty, *c.expr));
                }
                syn::Item::Static(s) => {
                    krate.modules[id]
                        .consts
                        .insert(s.ident.to_string(), (*s.ty, *s.expr));
                }
                syn::Item::Use(u) => {
                    if is_cfg_test(&u.attrs) {
                        continue;
                    }
                    let mut out = Vec::new();
                    let public = matches!(u.vis, syn::Visibility::Public(_));
                    flatten_use(&u.tree, Vec::new(), u.leading_colon.is_some(), &mut out);
                    out.iter_mut().for_each(|e| e.public = public);
                    krate.modules[id].uses.extend(out);
                }
                syn::Item::Impl(i) if !is_cfg_test(&i.attrs) => krate.impls.push((id, i)),
                syn::Item::Macro(m) => {
                    let name = m
                        .mac
                        .path
                        .segments
                        .last()
                        .map(|s| s.ident.to_string())
                        .unwrap_or_default();
                    if m.ident.is_none() {
                        krate.modules[id]
                            .item_macros
                            .push((m.mac.path.span(), name));
                    }
                }
                _ => {}
            }
        }
        Ok(id)
    })
}

/// Where the file of a `mod x;` is (`#[path]`, `x.rs`, else `x/mod.rs`), where its own children
/// live, and its text (taken to be prepared; `found`: the file exists).
struct ChildFile {
    rel: PathBuf,
    dir: PathBuf,
    path_dir: PathBuf,
    text: Option<String>,
    found: bool,
}

fn child_file(
    tree: &dyn SourceTree,
    m: &syn::ItemMod,
    dir: &Path,
    path_dir: &Path,
) -> Result<ChildFile, CrdgenError> {
    let name = m.ident.to_string();
    let name = name.trim_start_matches("r#");
    let (rel, dir, path_dir, text) = match path_attr(&m.attrs) {
        Some(p) => {
            let rel = normalize(&path_dir.join(p));
            let parent_dir = rel.parent().unwrap_or(Path::new("")).to_path_buf();
            let text = read(tree, &rel)?;
            // A `#[path]` file's children resolve like a mod.rs's: beside it.
            (rel, parent_dir.clone(), parent_dir, text)
        }
        None => {
            let flat = dir.join(format!("{name}.rs"));
            match read(tree, &flat)? {
                Some(text) => (flat, dir.join(name), dir.to_path_buf(), Some(text)),
                None => {
                    let nested = dir.join(name).join("mod.rs");
                    let text = read(tree, &nested)?;
                    (nested, dir.join(name), dir.join(name), text)
                }
            }
        }
    };
    Ok(ChildFile {
        rel,
        dir,
        path_dir,
        found: text.is_some(),
        text,
    })
}

/// The texts of a module's child files, set aside in order: on the other core when there are
/// several (the rendering thread idles while the crate is read), else here when asked.
enum Prepping {
    Here(std::vec::IntoIter<String>),
    Beside(std::sync::mpsc::Receiver<(String, Prepared)>),
}

impl Prepping {
    fn start<'scope>(scope: &'scope std::thread::Scope<'scope, '_>, texts: Vec<String>) -> Self {
        if texts.len() < 2 {
            return Prepping::Here(texts.into_iter());
        }
        let (tx, rx) = std::sync::mpsc::channel();
        scope.spawn(move || {
            for text in texts {
                let prepared = crate::syntax::prepare(&text);
                if tx.send((text, prepared)).is_err() {
                    return;
                }
            }
        });
        Prepping::Beside(rx)
    }

    fn next(&mut self) -> Option<(String, Prepared)> {
        match self {
            Prepping::Here(texts) => texts.next().map(|text| {
                let prepared = crate::syntax::prepare(&text);
                (text, prepared)
            }),
            Prepping::Beside(rx) => rx.recv().ok(),
        }
    }
}

/// The deepest module nesting the reader follows (real crates stay far below).
const MAX_MODULE_DEPTH: usize = 64;

/// When `rel` is the file of module `m` or of one of its ancestors: the chain, for the message.
fn module_loop(krate: &Crate, m: ModId, rel: &Path) -> Option<String> {
    let mut chain = Vec::new();
    let mut at = Some(m);
    while let Some(id) = at {
        let file = &krate.files[krate.modules[id].file];
        chain.push(file.display().to_string());
        if file == rel {
            chain.reverse();
            chain.push(rel.display().to_string());
            return Some(chain.join(" → "));
        }
        at = krate.modules[id].parent;
    }
    None
}

fn add_def(krate: &mut Crate, m: ModId, name: String, mut item: DefItem) {
    let attrs = match &item {
        DefItem::Struct(s) => &s.attrs,
        DefItem::Enum(e) => &e.attrs,
        DefItem::Alias(a) => &a.attrs,
    };
    if is_cfg_test(attrs) {
        return;
    }
    match &mut item {
        DefItem::Struct(s) => compiled_fields(&mut s.fields),
        DefItem::Enum(e) => {
            e.variants = std::mem::take(&mut e.variants)
                .into_iter()
                .filter(|v| !is_cfg_test(&v.attrs))
                .map(|mut v| {
                    compiled_fields(&mut v.fields);
                    v
                })
                .collect();
        }
        DefItem::Alias(_) => {}
    }
    krate.defs.push(Def { module: m, item });
    let id = krate.defs.len() - 1;
    krate.modules[m].defs.insert(name, id);
}

fn flatten_use(
    tree: &syn::UseTree,
    prefix: Vec<String>,
    leading_colon: bool,
    out: &mut Vec<UseEntry>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            let mut prefix = prefix;
            prefix.push(p.ident.to_string());
            flatten_use(&p.tree, prefix, leading_colon, out);
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                if let Some(last) = prefix.last().cloned() {
                    out.push(UseEntry {
                        name: last,
                        path: prefix,
                        leading_colon,
                        glob: false,
                        public: false,
                    });
                }
            } else {
                let mut path = prefix;
                path.push(name.clone());
                out.push(UseEntry {
                    name,
                    path,
                    leading_colon,
                    glob: false,
                    public: false,
                });
            }
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix;
            let ident = r.ident.to_string();
            if ident != "self" {
                path.push(ident);
            }
            let name = r.rename.to_string();
            if name != "_" {
                out.push(UseEntry {
                    name,
                    path,
                    leading_colon,
                    glob: false,
                    public: false,
                });
            }
        }
        syn::UseTree::Glob(_) => {
            out.push(UseEntry {
                name: String::new(),
                path: prefix,
                leading_colon,
                glob: true,
                public: false,
            });
        }
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten_use(t, prefix.clone(), leading_colon, out);
            }
        }
    }
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The attributes of the definition `item` (whose own attributes are `own`), parsed once:
/// `set_aside` holds the attributes of its file read without syn.
fn def_attrs(item: &DefItem, own: &[syn::Attribute], set_aside: &mut SetAsideAttrs) -> DefAttrs {
    let fields_of = |fields: &syn::Fields, set_aside: &mut SetAsideAttrs| {
        fields
            .iter()
            .map(|f| PlaceAttrs::parse(&f.attrs, set_aside))
            .collect()
    };
    let (fields, variants) = match item {
        DefItem::Struct(s) => (fields_of(&s.fields, set_aside), Vec::new()),
        DefItem::Enum(e) => (
            Vec::new(),
            e.variants
                .iter()
                .map(|v| {
                    let own = PlaceAttrs::parse(&v.attrs, set_aside);
                    (own, fields_of(&v.fields, set_aside))
                })
                .collect(),
        ),
        DefItem::Alias(_) => (Vec::new(), Vec::new()),
    };
    DefAttrs {
        own: PlaceAttrs::parse(own, set_aside),
        fields,
        variants,
        derives: attrs::derive_paths(own, set_aside),
    }
}
