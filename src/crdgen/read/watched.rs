//! Which versions of the crate's own kinds its controllers watch, read from the source as the
//! compiler would resolve it: the `type Kind = ...` of each `impl Reconciler for ...` (through
//! `use` renames, globs, type aliases and generic wrappers such as `PartialObjectMeta<_>`), each
//! `.owns::<T>(...)` in a function of the crate, and the hub `H` of each conversion's
//! `impl Spoke<H> for ...`. `edit api` uses it to refuse to stop serving a version a controller
//! needs, or to move the storage version away from the hub.

use std::collections::BTreeSet;

use syn::spanned::Spanned;
use syn::visit::Visit;

use crate::crdgen::error::Location;
use crate::crdgen::read::loader::Res;
use crate::crdgen::read::loader::{Crate, DefItem, ModId};

/// A place in the crate's source that makes a controller watch a kind: where it is, and where
/// (module, name) the type it names is defined.
#[derive(Debug, Clone)]
pub(crate) struct Watch {
    pub at: Location,
    /// What the source says there (`type Kind = ...`, `.owns::<...>()`).
    pub what: String,
    /// The hub of a conversion (`impl Spoke<H>`), not a watch.
    pub hub: bool,
    pub homes: BTreeSet<(ModId, String)>,
}

/// Every place of `krate` where a controller names the kind it watches or owns.
pub(crate) fn watches(krate: &Crate) -> Vec<Watch> {
    let mut out = Vec::new();
    for (m, imp) in &krate.impls {
        let Some((_, trait_path, _)) = &imp.trait_ else {
            continue;
        };
        let Some(last) = trait_path.segments.last() else {
            continue;
        };
        if last.ident == "Spoke"
            && let syn::PathArguments::AngleBracketed(args) = &last.arguments
        {
            let mut homes = BTreeSet::new();
            for arg in &args.args {
                if let syn::GenericArgument::Type(t) = arg {
                    type_homes(krate, *m, t, &mut homes, 0);
                }
            }
            out.push(Watch {
                at: krate.mod_loc(*m, last.span()),
                what: "the hub of its conversion (`impl Spoke<..>`)".into(),
                hub: true,
                homes,
            });
        }
        if last.ident != "Reconciler" {
            continue;
        }
        for item in &imp.items {
            if let syn::ImplItem::Type(t) = item
                && t.ident == "Kind"
            {
                let mut homes = BTreeSet::new();
                type_homes(krate, *m, &t.ty, &mut homes, 0);
                out.push(Watch {
                    at: krate.mod_loc(*m, t.span()),
                    what: "the `type Kind` of its Reconciler".into(),
                    hub: false,
                    homes,
                });
            }
        }
    }
    for (m, module) in krate.modules.iter().enumerate() {
        for f in module.fns.values() {
            let Ok(body) = krate.body(m, &f.block) else {
                continue;
            };
            let mut calls = OwnsCalls(Vec::new());
            calls.visit_block(&body);
            for (span, ty) in calls.0 {
                let mut homes = BTreeSet::new();
                type_homes(krate, m, &ty, &mut homes, 0);
                out.push(Watch {
                    at: krate.mod_loc(m, span),
                    what: "an `.owns::<..>()` of its controller".into(),
                    hub: false,
                    homes,
                });
            }
        }
    }
    out
}

/// The `.owns::<T>()` calls of a body: where each is and its `T`.
struct OwnsCalls(Vec<(proc_macro2::Span, syn::Type)>);

impl<'ast> Visit<'ast> for OwnsCalls {
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        if call.method == "owns"
            && let Some(turbofish) = &call.turbofish
        {
            for arg in &turbofish.args {
                if let syn::GenericArgument::Type(t) = arg {
                    self.0.push((call.method.span(), t.clone()));
                }
            }
        }
        syn::visit::visit_expr_method_call(self, call);
    }
}

/// The (module, name) of each type named anywhere in `ty` (generic arguments included),
/// written in module `m`.
fn type_homes(
    krate: &Crate,
    m: ModId,
    ty: &syn::Type,
    out: &mut BTreeSet<(ModId, String)>,
    depth: usize,
) {
    struct Paths(Vec<syn::Path>);
    impl<'ast> Visit<'ast> for Paths {
        fn visit_type_path(&mut self, tp: &'ast syn::TypePath) {
            self.0.push(tp.path.clone());
            syn::visit::visit_type_path(self, tp);
        }
    }
    if depth > 16 {
        return;
    }
    let mut paths = Paths(Vec::new());
    paths.visit_type(ty);
    for path in paths.0 {
        let segs: Vec<String> = (path.segments.iter())
            .map(|s| {
                let s = s.ident.to_string();
                s.strip_prefix("r#").map(str::to_string).unwrap_or(s)
            })
            .collect();
        path_homes(krate, m, &segs, out, depth);
    }
}

/// Where the type `segs` (written in module `m`) may be defined: a name is looked up in the
/// module (a type alias is followed into its type), then through its `use`s and globs. A type
/// a derive generates (a kind's struct) is in no module's definitions, so the module a name
/// reaches is one of its homes.
fn path_homes(
    krate: &Crate,
    m: ModId,
    segs: &[String],
    out: &mut BTreeSet<(ModId, String)>,
    depth: usize,
) {
    if depth > 16 || segs.is_empty() {
        return;
    }
    if segs.len() > 1 {
        let (prefix, name) = segs.split_at(segs.len() - 1);
        if let Some(Res::Module(mm)) = krate.resolve_segs(m, prefix, false, 0) {
            path_homes(krate, mm, name, out, depth + 1);
        }
        return;
    }
    let name = &segs[0];
    let module = &krate.modules[m];
    if let Some(d) = module.defs.get(name) {
        if let DefItem::Alias(a) = &krate.defs[*d].item {
            type_homes(krate, m, &a.ty, out, depth + 1);
        }
        out.insert((m, name.clone()));
        return;
    }
    if let Some(u) = module.uses.iter().find(|u| !u.glob && &u.name == name) {
        if u.path.len() > 1 {
            let (prefix, last) = u.path.split_at(u.path.len() - 1);
            if let Some(Res::Module(mm)) = krate.resolve_segs(m, prefix, u.leading_colon, 0) {
                path_homes(krate, mm, last, out, depth + 1);
            }
        }
        return;
    }
    out.insert((m, name.clone()));
    for u in module.uses.iter().filter(|u| u.glob) {
        if let Some(Res::Module(g)) = krate.resolve_segs(m, &u.path, u.leading_colon, 0)
            && g != m
        {
            path_homes(krate, g, segs, out, depth + 1);
        }
    }
}
