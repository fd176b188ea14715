//! Name and type resolution: a path written in a module (through `use`, globs, `self::`, `crate::crdgen::`,
//! `crate::`, aliases, nested modules) to a definition of the crate or an external path; a
//! `syn::Type` to a [`Ty`], the closed set of types whose schema the generator knows.

use std::collections::HashMap;

use proc_macro2::Span;
use syn::spanned::Spanned;

use crate::crdgen::error::{CrdgenError, FIX_EXACT};
use crate::crdgen::k8s;
use crate::crdgen::read::loader::{Crate, DefId, DefItem, ModId, PathKey, Res};

const EXTERN_CRATES: &[&str] = &[
    "std",
    "core",
    "alloc",
    "k8s_openapi",
    "serde_json",
    "kube",
    "kube_core",
    "schemars",
    "serde",
];

fn prelude(name: &str) -> Option<Vec<String>> {
    let p: &[&str] = match name {
        "Option" => &["std", "option", "Option"],
        "Vec" => &["std", "vec", "Vec"],
        "String" => &["std", "string", "String"],
        "Box" => &["std", "boxed", "Box"],
        "bool" | "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64"
        | "u128" | "usize" | "f32" | "f64" | "char" | "str" => return Some(vec![name.to_string()]),
        _ => return None,
    };
    Some(p.iter().map(|s| s.to_string()).collect())
}

fn canonical(mut segs: Vec<String>) -> Vec<String> {
    if matches!(segs.first().map(String::as_str), Some("core" | "alloc")) {
        segs[0] = "std".into();
    }
    segs
}

impl Crate {
    /// Look `name` up in the scope of module `m`.
    fn lookup(&self, m: ModId, name: &str, depth: usize) -> Option<Res> {
        if depth > 32 {
            return None;
        }
        let module = &self.modules[m];
        if let Some(d) = module.defs.get(name) {
            return Some(Res::Def(*d));
        }
        if let Some(c) = module.children.get(name) {
            return Some(Res::Module(*c));
        }
        if module.fns.contains_key(name) {
            return Some(Res::Fn(m, name.to_string()));
        }
        if module.consts.contains_key(name) {
            return Some(Res::Const(m, name.to_string()));
        }
        for u in module.uses.iter().filter(|u| !u.glob && u.name == name) {
            if let Some(r) = self.resolve_segs(m, &u.path, u.leading_colon, depth + 1) {
                return Some(r);
            }
        }
        for u in module.uses.iter().filter(|u| u.glob) {
            match self.resolve_segs(m, &u.path, u.leading_colon, depth + 1) {
                Some(Res::Module(g)) if g != m => {
                    if let Some(r) = self.lookup(g, name, depth + 1) {
                        return Some(r);
                    }
                }
                Some(Res::Def(d)) => {
                    // `use Enum::*` brings variants, not types.
                    let _ = d;
                }
                Some(Res::External(mut p)) => {
                    p.push(name.to_string());
                    if k8s::lookup(&p.join("::")).is_some() {
                        return Some(Res::External(p));
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// Resolve a path written in module `m`.
    pub fn resolve_segs(
        &self,
        m: ModId,
        segs: &[String],
        leading_colon: bool,
        depth: usize,
    ) -> Option<Res> {
        if depth > 32 || segs.is_empty() {
            return None;
        }
        if leading_colon {
            return Some(Res::External(canonical(segs.to_vec())));
        }
        let (mut cur, rest): (Res, &[String]) = match segs[0].as_str() {
            "crate" => (Res::Module(0), &segs[1..]),
            "self" => (Res::Module(m), &segs[1..]),
            "super" => {
                let mut at = m;
                let mut i = 0;
                while i < segs.len() && segs[i] == "super" {
                    at = self.modules[at].parent?;
                    i += 1;
                }
                (Res::Module(at), &segs[i..])
            }
            first => match self.lookup(m, first, depth) {
                Some(r) => (r, &segs[1..]),
                None => {
                    if segs.len() == 1
                        && let Some(p) = prelude(first)
                    {
                        return Some(Res::External(p));
                    }
                    if EXTERN_CRATES.contains(&first) || segs.len() > 1 {
                        return Some(Res::External(canonical(segs.to_vec())));
                    }
                    return None;
                }
            },
        };
        for seg in rest {
            cur = match cur {
                Res::Module(mm) => self.lookup_public(mm, seg, depth + 1)?,
                Res::External(mut p) => {
                    p.push(seg.clone());
                    Res::External(p)
                }
                _ => return None,
            };
        }
        Some(cur)
    }

    fn lookup_public(&self, m: ModId, name: &str, depth: usize) -> Option<Res> {
        // Visibility is not checked: code that compiles only reaches what it may.
        self.lookup(m, name, depth)
    }

    /// The derive macros of definition `d`, by their real names: `use kube::CustomResource as
    /// Cr;` + `#[derive(Cr)]` is `CustomResource`. A name that resolves to nothing (`Clone`) is
    /// kept as written.
    pub fn derives(&self, d: DefId) -> &[String] {
        &self.derive_names[d]
    }

    /// [`Crate::derives`] of every definition, for the loader. The definitions of a module mostly
    /// derive the same few names: each is resolved once per module.
    pub(super) fn resolve_derives(&self) -> Vec<Vec<String>> {
        let mut resolved: HashMap<PathKey, String> = HashMap::new();
        self.defs
            .iter()
            .zip(&self.attrs)
            .map(|(def, attrs)| {
                attrs
                    .derives
                    .iter()
                    .filter_map(|p| {
                        let segs: Vec<String> = p
                            .segments
                            .iter()
                            .map(|s| s.strip_prefix("r#").unwrap_or(s).to_string())
                            .collect();
                        let written = segs.last()?.clone();
                        let key = (def.module, p.leading_colon, segs);
                        if let Some(name) = resolved.get(&key) {
                            return Some(name.clone());
                        }
                        let name = match self.resolve_segs(key.0, &key.2, key.1, 0) {
                            Some(Res::External(segs)) => segs.last().cloned().unwrap_or(written),
                            _ => written,
                        };
                        resolved.insert(key, name.clone());
                        Some(name)
                    })
                    .collect()
            })
            .collect()
    }

    pub fn resolve_path(&self, m: ModId, path: &syn::Path, depth: usize) -> Option<Res> {
        let segs: Vec<String> = path
            .segments
            .iter()
            .map(|s| s.ident.unraw_string())
            .collect();
        let leading_colon = path.leading_colon.is_some();
        if depth > 0 {
            return self.resolve_segs(m, &segs, leading_colon, depth);
        }
        // A module's paths repeat (the same few types, field after field): each is resolved once.
        let key = (m, leading_colon, segs);
        if let Some(res) = self.resolved.borrow().get(&key) {
            return res.clone();
        }
        let res = self.resolve_segs(m, &key.2, leading_colon, 0);
        self.resolved.borrow_mut().insert(key, res.clone());
        res
    }
}

trait Unraw {
    fn unraw_string(&self) -> String;
}
impl Unraw for syn::Ident {
    fn unraw_string(&self) -> String {
        let s = self.to_string();
        s.strip_prefix("r#").map(str::to_string).unwrap_or(s)
    }
}

/// A std type whose schema (and default) comes from the real type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leaf {
    Bool,
    I8,
    I16,
    I32,
    I64,
    I128,
    Isize,
    U8,
    U16,
    U32,
    U64,
    U128,
    Usize,
    F32,
    F64,
    Char,
    String,
    Unit,
    JsonValue,
    JsonMap,
    PathBuf,
    NonZeroU32,
    NonZeroU64,
    NonZeroI32,
    NonZeroI64,
    IpAddr,
    Ipv4Addr,
    Ipv6Addr,
    SocketAddr,
    NonZeroU8,
    NonZeroU16,
    NonZeroU128,
    NonZeroUsize,
    NonZeroI8,
    NonZeroI16,
    NonZeroI128,
    NonZeroIsize,
    SocketAddrV4,
    SocketAddrV6,
    /// `std::time::Duration`: `{secs, nanos}`.
    StdDuration,
    SystemTime,
    /// `kube::core::Duration`, a Go duration string.
    KubeDuration,
    /// A type of another crate that schemars' optional features give a `{type: string, format}`
    /// schema (chrono, jiff, uuid, url): the format.
    FormattedString(&'static str),
    /// `semver::Version` (schemars' `semver1` feature): a string with the SemVer pattern.
    SemVer,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SeqKind {
    Vec,
    VecDeque,
    LinkedList,
    BTreeSet,
    HashSet,
}

/// A resolved type.
#[derive(Debug, Clone)]
pub(crate) enum Ty {
    Leaf(Leaf),
    Option(Box<Ty>),
    Seq(SeqKind, Box<Ty>),
    /// A map with string keys (other keys are refused when resolving): the type of its values.
    Map(Box<Ty>),
    /// `Box`, `Rc`, `Arc`: the same schema as the inner type.
    Boxed(Box<Ty>),
    Tuple(Vec<Ty>),
    Array(Box<Ty>, usize),
    K8s(String),
    User(DefId),
}

fn generic_args(seg: &syn::PathSegment) -> Vec<&syn::Type> {
    match &seg.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The leaf type std (or the prelude) names `name`, if it is one.
fn std_leaf(name: &str) -> Option<Leaf> {
    match name {
        "bool" => Some(Leaf::Bool),
        "i8" => Some(Leaf::I8),
        "i16" => Some(Leaf::I16),
        "i32" => Some(Leaf::I32),
        "i64" => Some(Leaf::I64),
        "i128" => Some(Leaf::I128),
        "isize" => Some(Leaf::Isize),
        "u8" => Some(Leaf::U8),
        "u16" => Some(Leaf::U16),
        "u32" => Some(Leaf::U32),
        "u64" => Some(Leaf::U64),
        "u128" => Some(Leaf::U128),
        "usize" => Some(Leaf::Usize),
        "f32" => Some(Leaf::F32),
        "f64" => Some(Leaf::F64),
        "char" => Some(Leaf::Char),
        "String" | "str" => Some(Leaf::String),
        "PathBuf" => Some(Leaf::PathBuf),
        "NonZeroU32" => Some(Leaf::NonZeroU32),
        "NonZeroU64" => Some(Leaf::NonZeroU64),
        "NonZeroI32" => Some(Leaf::NonZeroI32),
        "NonZeroI64" => Some(Leaf::NonZeroI64),
        "IpAddr" => Some(Leaf::IpAddr),
        "Ipv4Addr" => Some(Leaf::Ipv4Addr),
        "Ipv6Addr" => Some(Leaf::Ipv6Addr),
        "SocketAddr" => Some(Leaf::SocketAddr),
        "NonZeroU8" => Some(Leaf::NonZeroU8),
        "NonZeroU16" => Some(Leaf::NonZeroU16),
        "NonZeroU128" => Some(Leaf::NonZeroU128),
        "NonZeroUsize" => Some(Leaf::NonZeroUsize),
        "NonZeroI8" => Some(Leaf::NonZeroI8),
        "NonZeroI16" => Some(Leaf::NonZeroI16),
        "NonZeroI128" => Some(Leaf::NonZeroI128),
        "NonZeroIsize" => Some(Leaf::NonZeroIsize),
        "SocketAddrV4" => Some(Leaf::SocketAddrV4),
        "SocketAddrV6" => Some(Leaf::SocketAddrV6),
        "Duration" => Some(Leaf::StdDuration),
        "SystemTime" => Some(Leaf::SystemTime),
        _ => None,
    }
}

impl Crate {
    fn unsupported(&self, m: ModId, span: Span, what: String, fix: &str) -> CrdgenError {
        CrdgenError::Unsupported {
            loc: self.mod_loc(m, span),
            what,
            fix: fix.to_string(),
        }
    }

    /// Resolve a type written in module `m` (`self_def`: the type `Self` names there).
    pub fn resolve_type(
        &self,
        m: ModId,
        ty: &syn::Type,
        self_def: Option<DefId>,
    ) -> Result<Ty, CrdgenError> {
        self.resolve_type_in(m, ty, self_def, &[])
    }

    /// [`Crate::resolve_type`] inside a generic alias, whose parameters `env` binds.
    fn resolve_type_in(
        &self,
        m: ModId,
        ty: &syn::Type,
        self_def: Option<DefId>,
        env: &[(String, Ty)],
    ) -> Result<Ty, CrdgenError> {
        match ty {
            syn::Type::Paren(p) => self.resolve_type_in(m, &p.elem, self_def, env),
            syn::Type::Group(g) => self.resolve_type_in(m, &g.elem, self_def, env),
            syn::Type::Reference(r) => self.resolve_type_in(m, &r.elem, self_def, env),
            syn::Type::Tuple(t) if t.elems.is_empty() => Ok(Ty::Leaf(Leaf::Unit)),
            syn::Type::Tuple(t) => Ok(Ty::Tuple(
                t.elems
                    .iter()
                    .map(|e| self.resolve_type_in(m, e, self_def, env))
                    .collect::<Result<_, _>>()?,
            )),
            syn::Type::Array(a) => {
                let len = match &a.len {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(i),
                        ..
                    }) => i.base10_parse::<usize>().ok(),
                    _ => None,
                };
                let Some(len) = len else {
                    return Err(self.unsupported(
                        m,
                        a.len.span(),
                        "an array length that is not a literal".into(),
                        FIX_EXACT,
                    ));
                };
                Ok(Ty::Array(
                    Box::new(self.resolve_type_in(m, &a.elem, self_def, env)?),
                    len,
                ))
            }
            syn::Type::Path(p) if p.qself.is_none() => {
                self.resolve_type_path(m, &p.path, self_def, env, ty)
            }
            syn::Type::Macro(mac) => Err(self.unsupported(
                m,
                mac.span(),
                format!(
                    "a type made by a macro (`{}!`)",
                    quote::quote!(#mac)
                        .to_string()
                        .split('!')
                        .next()
                        .unwrap_or("")
                        .trim()
                ),
                FIX_EXACT,
            )),
            other => Err(self.unsupported(
                m,
                other.span(),
                format!("the type `{}`", quote::quote!(#other)),
                FIX_EXACT,
            )),
        }
    }

    fn resolve_type_path(
        &self,
        m: ModId,
        path: &syn::Path,
        self_def: Option<DefId>,
        env: &[(String, Ty)],
        ty: &syn::Type,
    ) -> Result<Ty, CrdgenError> {
        // Where the type is written, for messages (its span walks all its tokens: only built for
        // one).
        let span = || ty.span();
        let last = path.segments.last().expect("a path has a segment");
        let args = generic_args(last);
        // The path as written, for messages (only built for one).
        let shown = || quote::quote!(#path).to_string().replace(' ', "");
        if path.segments.len() == 1
            && args.is_empty()
            && let Some((_, t)) = env.iter().find(|(n, _)| last.ident == n)
        {
            return Ok(t.clone());
        }
        if path.segments.len() == 1
            && last.ident == "Self"
            && let Some(d) = self_def
        {
            return Ok(Ty::User(d));
        }
        let res = self.resolve_path(m, path, 0);
        let arg = |i: usize| -> Result<Ty, CrdgenError> {
            match args.get(i) {
                Some(t) => self.resolve_type_in(m, t, self_def, env),
                None => Err(self.unsupported(
                    m,
                    span(),
                    format!("`{}` without its type arguments", shown()),
                    FIX_EXACT,
                )),
            }
        };
        match res {
            Some(Res::Def(d)) => self.resolve_def_type(m, d, args.len(), &arg, span(), &shown),
            Some(Res::External(segs)) => {
                self.resolve_external_type(m, &segs, args.len(), &arg, span(), &shown)
            }
            _ => Err(self.unknown_type(m, span(), &shown(), None)),
        }
    }

    /// The type of the crate's definition `d`, written in module `m` with `n_args` type arguments
    /// (`arg(i)` resolves one): an alias is resolved with its arguments bound, a generic type is
    /// refused.
    fn resolve_def_type(
        &self,
        m: ModId,
        d: DefId,
        n_args: usize,
        arg: &dyn Fn(usize) -> Result<Ty, CrdgenError>,
        span: Span,
        shown: &dyn Fn() -> String,
    ) -> Result<Ty, CrdgenError> {
        let def = &self.defs[d];
        if let DefItem::Alias(a) = &def.item {
            let params: Vec<String> = a
                .generics
                .type_params()
                .map(|p| p.ident.to_string())
                .collect();
            if params.len() != n_args {
                return Err(self.unsupported(
                    m,
                    span,
                    format!(
                        "`{}`: the alias takes {} type arguments (defaulted alias parameters are not evaluated statically)",
                        shown(),
                        params.len()
                    ),
                    FIX_EXACT,
                ));
            }
            let bound = params
                .into_iter()
                .enumerate()
                .map(|(i, p)| Ok((p, arg(i)?)))
                .collect::<Result<Vec<_>, CrdgenError>>()?;
            return self.resolve_type_in(def.module, &a.ty, None, &bound);
        }
        if !def.generics().params.is_empty() {
            let params = def
                .generics()
                .params
                .iter()
                .map(|p| quote::quote!(#p).to_string())
                .collect::<Vec<_>>()
                .join(", ");
            return Err(self.unsupported(
                m,
                span,
                format!(
                    "the generic type `{}`: the static reader reads each definition once, as written, and does not substitute type arguments for `{}<{params}>`'s parameters (schemars' derive makes one schema per instance, with the argument's schema, default and attributes in place of each parameter)",
                    shown(),
                    def.ident()
                ),
                &format!(
                    "{FIX_EXACT}, or give the field a non-generic type (e.g. `struct {}I32 {{ .. }}` with the argument written in)",
                    def.ident()
                ),
            ));
        }
        Ok(Ty::User(d))
    }

    /// The type outside the crate at `segs` (canonical), written in module `m`: k8s-openapi's,
    /// std's and serde_json's, kube's `Duration`, and those of schemars' features.
    fn resolve_external_type(
        &self,
        m: ModId,
        segs: &[String],
        n_args: usize,
        arg: &dyn Fn(usize) -> Result<Ty, CrdgenError>,
        span: Span,
        shown: &dyn Fn() -> String,
    ) -> Result<Ty, CrdgenError> {
        // A map's schema: its keys must be strings.
        let map = || -> Result<Ty, CrdgenError> {
            if !matches!(arg(0)?, Ty::Leaf(Leaf::String)) {
                return Err(self.unsupported(
                    m,
                    span,
                    format!("the map `{}` with a key that is not a string", shown()),
                    FIX_EXACT,
                ));
            }
            Ok(Ty::Map(Box::new(arg(1)?)))
        };
        let joined = segs.join("::");
        // k8s-openapi re-exports jiff (`k8s_openapi::jiff::Timestamp`): read below.
        if segs[0] == "k8s_openapi" && segs.get(1).is_none_or(|s| s != "jiff") {
            if k8s::lookup(&joined).is_some() {
                return Ok(Ty::K8s(joined));
            }
            return Err(self.unsupported(
                m,
                span,
                format!("`{joined}` is not a k8s-openapi type with a JSON schema"),
                "check the path (k8s-openapi's `schemars` feature provides a schema for every API type)",
            ));
        }
        let name = segs.last().map(String::as_str).unwrap_or("");
        let std_like = segs.len() == 1 || segs[0] == "std";
        if std_like {
            let leaf = std_leaf(name);
            if let Some(l) = leaf {
                return Ok(Ty::Leaf(l));
            }
            match name {
                "Option" => return Ok(Ty::Option(Box::new(arg(0)?))),
                "Vec" => return Ok(Ty::Seq(SeqKind::Vec, Box::new(arg(0)?))),
                "VecDeque" => return Ok(Ty::Seq(SeqKind::VecDeque, Box::new(arg(0)?))),
                "LinkedList" => return Ok(Ty::Seq(SeqKind::LinkedList, Box::new(arg(0)?))),
                "BTreeSet" => return Ok(Ty::Seq(SeqKind::BTreeSet, Box::new(arg(0)?))),
                "HashSet" => return Ok(Ty::Seq(SeqKind::HashSet, Box::new(arg(0)?))),
                "BTreeMap" | "HashMap" => return map(),
                "Box" | "Rc" | "Arc" => return Ok(Ty::Boxed(Box::new(arg(0)?))),
                "Cow" => return arg(n_args.saturating_sub(1)),
                _ => {}
            }
        }
        if segs[0] == "serde_json" && name == "Value" {
            return Ok(Ty::Leaf(Leaf::JsonValue));
        }
        if segs[0] == "serde_json" && name == "Map" {
            return Ok(Ty::Leaf(Leaf::JsonMap));
        }
        if is_kube_duration(segs) {
            return Ok(Ty::Leaf(Leaf::KubeDuration));
        }
        match schemars_feature_type(segs) {
            Some(FeatureType::Leaf(l)) => Ok(Ty::Leaf(l)),
            Some(FeatureType::Map) => map(),
            Some(FeatureType::Set) => Ok(Ty::Seq(SeqKind::BTreeSet, Box::new(arg(0)?))),
            None => Err(self.unknown_type(m, span, &shown(), Some(&joined))),
        }
    }

    fn unknown_type(
        &self,
        m: ModId,
        span: Span,
        shown: &str,
        external: Option<&str>,
    ) -> CrdgenError {
        let macros = &self.modules[m].item_macros;
        if let Some((_, name)) = macros.first() {
            return self.unsupported(
                m,
                span,
                format!("the type `{shown}`, which the macro `{name}!` in this module may define"),
                FIX_EXACT,
            );
        }
        let what = match external {
            Some(p) if !p.starts_with("std::") => {
                format!("the type `{shown}` from an unknown crate (`{p}`)")
            }
            _ => format!(
                "the type `{shown}`, which is not defined in the crate nor a known std, serde_json or k8s-openapi type"
            ),
        };
        self.unsupported(m, span, what, FIX_EXACT)
    }
}

/// A type of another crate with a `JsonSchema` impl in schemars behind one of its features.
enum FeatureType {
    Leaf(Leaf),
    /// `indexmap::IndexMap<K, V>`: a `BTreeMap<K, V>`'s schema.
    Map,
    /// `indexmap::IndexSet<T>`: a `BTreeSet<T>`'s schema.
    Set,
}

/// The types that schemars' `chrono04`, `jiff02`, `uuid1`, `url2`, `semver1` and `indexmap2`
/// features give a schema, by the crate's name and the type's (the modules between vary:
/// `chrono::prelude::DateTime`, `jiff::civil::Date`, k8s-openapi's re-export
/// `k8s_openapi::jiff::Timestamp`). Code that compiles has the feature on, so the schema is the
/// feature's. Types of these crates left out (chrono's `TimeDelta`, a `prefixItems` tuple
/// Kubernetes cannot hold) stay unknown and point to `--exact`.
fn schemars_feature_type(segs: &[String]) -> Option<FeatureType> {
    let segs = match segs {
        [k8s, rest @ ..] if k8s == "k8s_openapi" && rest.first().is_some_and(|c| c == "jiff") => {
            rest
        }
        _ => segs,
    };
    let (krate, name) = (segs.first()?.as_str(), segs.last()?.as_str());
    if segs.len() < 2 {
        return None;
    }
    let formatted = |f| Some(FeatureType::Leaf(Leaf::FormattedString(f)));
    match (krate, name) {
        ("chrono", "DateTime") | ("jiff", "Timestamp") => formatted("date-time"),
        ("chrono" | "jiff", "NaiveDate" | "Date") => formatted("date"),
        ("chrono" | "jiff", "NaiveDateTime" | "DateTime") => formatted("partial-date-time"),
        ("chrono" | "jiff", "NaiveTime" | "Time") => formatted("partial-time"),
        ("jiff", "Zoned") => formatted("zoned-date-time"),
        ("jiff", "Span" | "SignedDuration") => formatted("duration"),
        ("uuid", "Uuid") => formatted("uuid"),
        ("url", "Url") => formatted("uri"),
        ("semver", "Version") => Some(FeatureType::Leaf(Leaf::SemVer)),
        ("indexmap", "IndexMap") => Some(FeatureType::Map),
        ("indexmap", "IndexSet") => Some(FeatureType::Set),
        _ => None,
    }
}

/// `kube::core::Duration` by any of its paths.
fn is_kube_duration(segs: &[String]) -> bool {
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    matches!(
        segs.as_slice(),
        ["kube", "core", "Duration"]
            | ["kube", "core", "duration", "Duration"]
            | ["kube_core", "Duration"]
            | ["kube_core", "duration", "Duration"]
    )
}
