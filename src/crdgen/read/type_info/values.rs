//! Values the derive macros evaluate at run time, evaluated statically when they are plain:
//! `Default` values (derived, or a hand-written `impl Default` made of literals), `default = "fn"`
//! bodies that are literals, consts, unit enum variants, `vec![...]`, `Some(..)`, `"x".to_string()`.
//! Values are the serialized JSON (what `serde_json::to_value` gives), typed by the expected [`Ty`].

use proc_macro2::Span;
use serde_json::{Map, Value};
use syn::spanned::Spanned;

use crate::crdgen::error::{CrdgenError, FIX_EXACT};
use crate::crdgen::k8s;
use crate::crdgen::read::attrs;
use crate::crdgen::read::loader::Res;
use crate::crdgen::read::loader::{DefId, DefItem, ModId};
use crate::crdgen::read::resolve::{Leaf, Ty};
use crate::crdgen::read::type_info::{FieldInfo, Model, Tag, TypeInfo, VariantInfo};
use crate::syntax::Pos;

pub(crate) struct Eval<'a> {
    pub krate: &'a Model,
    pub depth: usize,
}

fn not_plain(krate: &Model, m: ModId, span: impl Into<Pos>, what: &str) -> CrdgenError {
    CrdgenError::Unsupported {
        loc: krate.mod_loc(m, span),
        what: format!("{what}, which is not a plain literal"),
        fix: format!("{FIX_EXACT}, or make it a literal"),
    }
}

/// The refusal of the expression `e` (in module `m`), which is no plain value.
fn not_plain_expr(krate: &Model, m: ModId, e: &syn::Expr) -> CrdgenError {
    not_plain(
        krate,
        m,
        e.span(),
        &format!("the expression `{}`", quote::quote!(#e)),
    )
}

impl<'a> Eval<'a> {
    pub fn new(krate: &'a Model) -> Self {
        Self { krate, depth: 0 }
    }

    /// `T::default()` serialized.
    pub fn default_value(&mut self, ty: &Ty, m: ModId, span: Span) -> Result<Value, CrdgenError> {
        self.depth += 1;
        if self.depth > 64 {
            return Err(not_plain(self.krate, m, span, "a recursive default value"));
        }
        let r = self.default_value_inner(ty, m, span);
        self.depth -= 1;
        r
    }

    fn default_value_inner(&mut self, ty: &Ty, m: ModId, span: Span) -> Result<Value, CrdgenError> {
        Ok(match ty {
            Ty::Leaf(l) => match l {
                Leaf::Bool => Value::Bool(false),
                Leaf::F32 | Leaf::F64 => serde_json::json!(0.0),
                Leaf::Char => Value::String("\0".into()),
                Leaf::String | Leaf::PathBuf => Value::String(String::new()),
                Leaf::Unit | Leaf::JsonValue => Value::Null,
                Leaf::JsonMap => Value::Object(Map::new()),
                Leaf::NonZeroU32
                | Leaf::NonZeroU64
                | Leaf::NonZeroI32
                | Leaf::NonZeroI64
                | Leaf::IpAddr
                | Leaf::Ipv4Addr
                | Leaf::Ipv6Addr
                | Leaf::SocketAddr
                | Leaf::NonZeroU8
                | Leaf::NonZeroU16
                | Leaf::NonZeroU128
                | Leaf::NonZeroUsize
                | Leaf::NonZeroI8
                | Leaf::NonZeroI16
                | Leaf::NonZeroI128
                | Leaf::NonZeroIsize
                | Leaf::SocketAddrV4
                | Leaf::SocketAddrV6
                | Leaf::SystemTime
                | Leaf::KubeDuration => {
                    return Err(not_plain(
                        self.krate,
                        m,
                        span,
                        "a default of a type without `Default`",
                    ));
                }
                Leaf::StdDuration | Leaf::FormattedString(_) | Leaf::SemVer => {
                    return Err(not_plain(
                        self.krate,
                        m,
                        span,
                        "the `Default` of a std or schemars-supported crate's type (not evaluated statically)",
                    ));
                }
                _ => Value::from(0),
            },
            Ty::Option(_) => Value::Null,
            Ty::Seq(..) => Value::Array(Vec::new()),
            Ty::Map(..) => Value::Object(Map::new()),
            Ty::Boxed(inner) => self.default_value(inner, m, span)?,
            Ty::Tuple(items) => Value::Array(
                items
                    .iter()
                    .map(|t| self.default_value(t, m, span))
                    .collect::<Result<_, _>>()?,
            ),
            Ty::Array(item, n) => {
                let v = self.default_value(item, m, span)?;
                Value::Array(vec![v; *n])
            }
            Ty::K8s(p) => match k8s::lookup(p).and_then(|t| t.default()) {
                Some(v) => v,
                None => {
                    return Err(not_plain(
                        self.krate,
                        m,
                        span,
                        &format!("the default of `{p}`"),
                    ));
                }
            },
            Ty::User(d) => self.user_default(*d, span)?,
        })
    }

    /// `X::default()` serialized, for a type of the crate.
    pub fn user_default(&mut self, d: DefId, span: Span) -> Result<Value, CrdgenError> {
        let def = &self.krate.defs[d];
        let m = def.module;
        let derived = self.krate.derives(d).iter().any(|n| n == "Default");
        if derived {
            let info = TypeInfo::of(self.krate, d)?;
            return match &def.item {
                DefItem::Struct(s) => match &s.fields {
                    syn::Fields::Unit => Ok(Value::Null),
                    _ => {
                        let mut members = Vec::new();
                        for f in &info.fields {
                            members.push(if f.skip_ser {
                                Value::Null
                            } else {
                                self.default_value(&f.ty, m, f.span)?
                            });
                        }
                        self.serialize_struct(&info, &info.fields, members)
                    }
                },
                DefItem::Enum(e) => {
                    let Some(idx) = e
                        .variants
                        .iter()
                        .position(|v| v.attrs.iter().any(|a| a.path().is_ident("default")))
                    else {
                        return Err(not_plain(
                            self.krate,
                            m,
                            e.ident.span(),
                            "a derived `Default` without a `#[default]` variant",
                        ));
                    };
                    self.serialize_unit_variant(&info, &info.variants[idx])
                }
                DefItem::Alias(_) => Err(not_plain(self.krate, m, span, "a default")),
            };
        }
        // A hand-written `impl Default`.
        for (im, imp) in &self.krate.impls {
            let Some((_, tp, _)) = &imp.trait_ else {
                continue;
            };
            if tp
                .segments
                .last()
                .map(|s| s.ident != "Default")
                .unwrap_or(true)
            {
                continue;
            }
            let self_d = match &*imp.self_ty {
                syn::Type::Path(p) => match self.krate.resolve_path(*im, &p.path, 0) {
                    Some(Res::Def(x)) => Some(x),
                    _ => None,
                },
                _ => None,
            };
            if self_d != Some(d) {
                continue;
            }
            for item in &imp.items {
                if let syn::ImplItem::Fn(f) = item
                    && f.sig.ident == "default"
                {
                    let block = self.krate.body(*im, &f.block)?;
                    let body = single_expr(&block).ok_or_else(|| {
                        not_plain(
                            self.krate,
                            *im,
                            f.block.span(),
                            &format!("`impl Default for {}`", def.ident()),
                        )
                    })?;
                    return self.eval(body, &Ty::User(d), *im, Some(d));
                }
            }
        }
        Err(CrdgenError::Unsupported {
            loc: self.krate.def_loc(d, span),
            what: format!(
                "the default value of `{}`, which has no `Default` the reader can see",
                def.ident()
            ),
            fix: FIX_EXACT.into(),
        })
    }

    /// Serialize a struct from its member values (in field order), as serde's derive does.
    pub fn serialize_struct(
        &mut self,
        info: &TypeInfo,
        fields: &[FieldInfo],
        members: Vec<Value>,
    ) -> Result<Value, CrdgenError> {
        if info.transparent {
            let idx = fields.iter().position(|f| !f.skip_ser).unwrap_or(0);
            return Ok(members.into_iter().nth(idx).unwrap_or(Value::Null));
        }
        if info.is_tuple {
            let vals: Vec<Value> = members
                .into_iter()
                .zip(fields)
                .filter(|(_, f)| !f.skip_ser)
                .map(|(v, _)| v)
                .collect();
            if vals.len() == 1 && fields.len() == 1 {
                return Ok(vals.into_iter().next().unwrap_or(Value::Null));
            }
            return Ok(Value::Array(vals));
        }
        let mut obj = Map::new();
        for (v, f) in members.into_iter().zip(fields) {
            if let Some((pos, how)) = &f.schema_only {
                return Err(CrdgenError::Refused {
                    loc: self.krate.def_loc(info.def, *pos),
                    what: format!(
                        "a default value of `{}` holds a field its schema does not have ({how}): must not have unknown fields",
                        info.ident
                    ),
                    fix: "give serde and the schema the same view of the field (`#[serde(skip)]` or `#[serde(rename = ..)]` instead of the `#[schemars(..)]` one), or no default that holds it".into(),
                });
            }
            if f.skip_ser {
                continue;
            }
            if let Some(pred) = &f.skip_ser_if
                && self.predicate(pred, &v, info.module, f.span)?
            {
                continue;
            }
            if f.flatten {
                if let Value::Object(o) = v {
                    obj.extend(o);
                }
                continue;
            }
            obj.insert(f.ser_name.clone(), v);
        }
        Ok(Value::Object(obj))
    }

    pub fn serialize_unit_variant(
        &mut self,
        info: &TypeInfo,
        v: &VariantInfo,
    ) -> Result<Value, CrdgenError> {
        Ok(match (&info.tag, v.untagged) {
            (_, true) | (Tag::Untagged, _) => Value::Null,
            (Tag::External, _) => Value::String(v.ser_name.clone()),
            (Tag::Internal(t), _) | (Tag::Adjacent(t, _), _) => {
                serde_json::json!({ t.as_str(): v.ser_name })
            }
        })
    }

    /// Evaluate a `skip_serializing_if` predicate on a serialized value.
    pub fn predicate(
        &self,
        pred: &str,
        v: &Value,
        m: ModId,
        span: Span,
    ) -> Result<bool, CrdgenError> {
        let last = pred.rsplit("::").next().unwrap_or(pred).trim();
        match last {
            "is_none" => Ok(v.is_null()),
            "is_some" => Ok(!v.is_null()),
            "is_empty" => Ok(match v {
                Value::Array(a) => a.is_empty(),
                Value::Object(o) => o.is_empty(),
                Value::String(s) => s.is_empty(),
                Value::Null => true,
                _ => false,
            }),
            _ => Err(CrdgenError::Unsupported {
                loc: self.krate.mod_loc(m, span),
                what: format!(
                    "`skip_serializing_if = \"{pred}\"` on a field with a default, which the reader cannot evaluate"
                ),
                fix: format!("{FIX_EXACT}, or use `Option::is_none` / `Vec::is_empty`"),
            }),
        }
    }

    /// Evaluate `path()` (a `default = "path"` function) for a value of type `ty`.
    pub fn call_fn(
        &mut self,
        path: &str,
        ty: &Ty,
        m: ModId,
        self_def: Option<DefId>,
        span: Span,
    ) -> Result<Value, CrdgenError> {
        let (fm, f) = self.found_fn(path, m, self_def, span.into(), "the default function")?;
        let block = self.krate.body(fm, &f.block)?;
        let body = single_expr(&block).ok_or_else(|| {
            not_plain(
                self.krate,
                fm,
                f.block.span(),
                &format!("the body of `{path}`"),
            )
        })?;
        self.eval(body, ty, fm, self_def)
    }

    /// The function `path` names in module `m` (`role` and `at` say which attribute named it,
    /// for the error when the reader cannot find it).
    pub fn found_fn(
        &self,
        path: &str,
        m: ModId,
        self_def: Option<DefId>,
        at: Pos,
        role: &str,
    ) -> Result<(ModId, syn::ItemFn), CrdgenError> {
        let parsed: syn::Path =
            syn::parse_str(path).map_err(|_| not_plain(self.krate, m, at, &format!("`{path}`")))?;
        self.find_fn(&parsed, m, self_def)
            .ok_or_else(|| CrdgenError::Unsupported {
                loc: self.krate.mod_loc(m, at),
                what: format!("{role} `{path}`, which the reader cannot find in the crate"),
                fix: FIX_EXACT.into(),
            })
    }

    fn find_fn(
        &self,
        path: &syn::Path,
        m: ModId,
        self_def: Option<DefId>,
    ) -> Option<(ModId, syn::ItemFn)> {
        match self.krate.resolve_path(m, path, 0) {
            Some(Res::Fn(fm, name)) => {
                return Some((fm, self.krate.modules[fm].fns[&name].clone()));
            }
            _ if path.segments.len() >= 2 => {}
            _ => return None,
        }
        // `Type::assoc_fn` or `Self::assoc_fn`.
        let n = path.segments.len();
        let fname = path.segments[n - 1].ident.to_string();
        let mut tpath = path.clone();
        tpath.segments.pop();
        let tpath_segments: syn::punctuated::Punctuated<syn::PathSegment, syn::Token![::]> =
            tpath.segments.iter().cloned().collect();
        tpath.segments = tpath_segments;
        let target = if tpath.segments.len() == 1 && tpath.segments[0].ident == "Self" {
            self_def?
        } else {
            match self.krate.resolve_path(m, &tpath, 0)? {
                Res::Def(d) => d,
                _ => return None,
            }
        };
        for (im, imp) in &self.krate.impls {
            if imp.trait_.is_some() {
                continue;
            }
            let syn::Type::Path(p) = &*imp.self_ty else {
                continue;
            };
            if !matches!(self.krate.resolve_path(*im, &p.path, 0), Some(Res::Def(x)) if x == target)
            {
                continue;
            }
            for item in &imp.items {
                if let syn::ImplItem::Fn(f) = item
                    && f.sig.ident == fname
                {
                    return Some((
                        *im,
                        syn::ItemFn {
                            attrs: f.attrs.clone(),
                            vis: f.vis.clone(),
                            sig: f.sig.clone(),
                            block: Box::new(f.block.clone()),
                        },
                    ));
                }
            }
        }
        None
    }

    /// Evaluate a plain expression as a value of type `ty`.
    pub fn eval(
        &mut self,
        e: &syn::Expr,
        ty: &Ty,
        m: ModId,
        self_def: Option<DefId>,
    ) -> Result<Value, CrdgenError> {
        self.depth += 1;
        if self.depth > 64 {
            return Err(not_plain(self.krate, m, e.span(), "a recursive expression"));
        }
        let r = self.eval_inner(e, ty, m, self_def);
        self.depth -= 1;
        r
    }

    fn eval_inner(
        &mut self,
        e: &syn::Expr,
        ty: &Ty,
        m: ModId,
        self_def: Option<DefId>,
    ) -> Result<Value, CrdgenError> {
        let bad = |k: &Model| not_plain_expr(k, m, e);
        let ty = match ty {
            Ty::Boxed(inner) => inner.as_ref(),
            t => t,
        };
        match e {
            syn::Expr::Paren(p) => self.eval(&p.expr, ty, m, self_def),
            syn::Expr::Group(g) => self.eval(&g.expr, ty, m, self_def),
            syn::Expr::Block(b) => match single_expr(&b.block) {
                Some(x) => self.eval(x, ty, m, self_def),
                None => Err(bad(self.krate)),
            },
            syn::Expr::Lit(l) => lit_value(&l.lit, ty, false).ok_or_else(|| bad(self.krate)),
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match &*u.expr {
                syn::Expr::Lit(l) => lit_value(&l.lit, ty, true).ok_or_else(|| bad(self.krate)),
                _ => Err(bad(self.krate)),
            },
            syn::Expr::MethodCall(mc)
                if mc.args.is_empty()
                    && ["to_string", "to_owned", "into", "clone"]
                        .contains(&mc.method.to_string().as_str()) =>
            {
                self.eval(&mc.receiver, ty, m, self_def)
            }
            syn::Expr::Macro(mac) if mac.mac.path.is_ident("vec") => {
                self.eval_vec_macro(e, mac, ty, m, self_def)
            }
            syn::Expr::Array(a) => {
                let item = match ty {
                    Ty::Seq(_, i) | Ty::Array(i, _) => i.as_ref(),
                    _ => return Err(bad(self.krate)),
                };
                Ok(Value::Array(
                    a.elems
                        .iter()
                        .map(|x| self.eval(x, item, m, self_def))
                        .collect::<Result<_, _>>()?,
                ))
            }
            syn::Expr::Call(c) => self.eval_call(e, c, ty, m, self_def),
            syn::Expr::Path(p) => self.eval_path(e, p, ty, m, self_def),
            syn::Expr::Struct(s) => self.eval_struct(e, s, m, self_def),
            _ => Err(bad(self.krate)),
        }
    }

    /// `vec![..]` (`e`) of a sequence type.
    fn eval_vec_macro(
        &mut self,
        e: &syn::Expr,
        mac: &syn::ExprMacro,
        ty: &Ty,
        m: ModId,
        self_def: Option<DefId>,
    ) -> Result<Value, CrdgenError> {
        let bad = |k: &Model| not_plain_expr(k, m, e);
        let Ty::Seq(_, item) = ty else {
            return Err(bad(self.krate));
        };
        let items = mac
            .mac
            .parse_body_with(
                syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
            )
            .map_err(|_| bad(self.krate))?;
        Ok(Value::Array(
            items
                .iter()
                .map(|x| self.eval(x, item, m, self_def))
                .collect::<Result<_, _>>()?,
        ))
    }

    /// A call `e`: a variant or constructor whose value is its argument's, `Default`, or a
    /// function of the crate without arguments.
    fn eval_call(
        &mut self,
        e: &syn::Expr,
        c: &syn::ExprCall,
        ty: &Ty,
        m: ModId,
        self_def: Option<DefId>,
    ) -> Result<Value, CrdgenError> {
        let bad = |k: &Model| not_plain_expr(k, m, e);
        let syn::Expr::Path(fp) = &*c.func else {
            return Err(bad(self.krate));
        };
        let segs: Vec<String> = fp
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let last = segs.last().map(String::as_str).unwrap_or("");
        match (last, c.args.len()) {
            // `IntOrString::Int(3)` / `IntOrString::String(..)`: serialized as the value
            // it holds (k8s-openapi's untagged `Serialize`).
            ("Int" | "String", 1) if is_int_or_string(ty) => {
                let held = Ty::Leaf(if last == "Int" {
                    Leaf::I32
                } else {
                    Leaf::String
                });
                self.eval(&c.args[0], &held, m, self_def)
            }
            ("Some", 1) => {
                let Ty::Option(inner) = ty else {
                    return Err(bad(self.krate));
                };
                self.eval(&c.args[0], inner, m, self_def)
            }
            ("from" | "new" | "from_str", 1) if segs.len() >= 2 => {
                self.eval(&c.args[0], ty, m, self_def)
            }
            ("new" | "default", 0) => self.default_value(ty, m, e.span()),
            _ => {
                // A call of a function of the crate with no arguments.
                if c.args.is_empty() {
                    let p = quote::quote!(#fp).to_string().replace(' ', "");
                    return self.call_fn(&p, ty, m, self_def, e.span());
                }
                Err(bad(self.krate))
            }
        }
    }

    /// A path `e`: `None`, a constant of the crate, or a unit variant of an enum of the crate.
    fn eval_path(
        &mut self,
        e: &syn::Expr,
        p: &syn::ExprPath,
        ty: &Ty,
        m: ModId,
        self_def: Option<DefId>,
    ) -> Result<Value, CrdgenError> {
        let bad = |k: &Model| not_plain_expr(k, m, e);
        if p.path.is_ident("None") {
            return Ok(Value::Null);
        }
        if let Some(Res::Const(cm, name)) = self.krate.resolve_path(m, &p.path, 0) {
            let (cty, cexpr) = self.krate.modules[cm].consts[&name].clone();
            let cty = self
                .krate
                .resolve_type(cm, &cty, None)
                .unwrap_or_else(|_| ty.clone());
            return self.eval(&cexpr, &cty, cm, None);
        }
        // A unit variant `Enum::Variant` / `Self::Variant`.
        if p.path.segments.len() >= 2 {
            let n = p.path.segments.len();
            let vname = p.path.segments[n - 1].ident.to_string();
            let mut tpath = p.path.clone();
            tpath.segments = p.path.segments.iter().take(n - 1).cloned().collect();
            let d = if tpath.is_ident("Self") {
                self_def
            } else {
                match self.krate.resolve_path(m, &tpath, 0) {
                    Some(Res::Def(d)) => Some(d),
                    _ => None,
                }
            };
            if let Some(d) = d
                && let DefItem::Enum(_) = &self.krate.defs[d].item
            {
                let info = TypeInfo::of(self.krate, d)?;
                if let Some(v) = info.variants.iter().find(|v| v.ident == vname) {
                    return self.serialize_unit_variant(&info, v);
                }
            }
        }
        Err(bad(self.krate))
    }

    /// A struct literal `e` of a struct of the crate (`..Default::default()` for the rest, when
    /// its `Default` is derived), serialized as serde does.
    fn eval_struct(
        &mut self,
        e: &syn::Expr,
        s: &syn::ExprStruct,
        m: ModId,
        self_def: Option<DefId>,
    ) -> Result<Value, CrdgenError> {
        let bad = |k: &Model| not_plain_expr(k, m, e);
        let d = if s.path.is_ident("Self") {
            self_def
        } else {
            match self.krate.resolve_path(m, &s.path, 0) {
                Some(Res::Def(d)) => Some(d),
                _ => None,
            }
        };
        let Some(d) = d else {
            return Err(bad(self.krate));
        };
        let info = TypeInfo::of(self.krate, d)?;
        let base = match &s.rest {
            Some(rest) => match &**rest {
                syn::Expr::Call(c) if c.args.is_empty() => {
                    let p = &c.func;
                    let txt = quote::quote!(#p).to_string().replace(' ', "");
                    if txt.ends_with("default") {
                        // Only a derived Default can serve as the base here.
                        let dm = self.krate.defs[d].module;
                        let mut members = Vec::new();
                        for f in &info.fields {
                            members.push(if f.skip_ser {
                                Value::Null
                            } else {
                                self.default_value(&f.ty, dm, f.span)?
                            });
                        }
                        Some(members)
                    } else {
                        return Err(bad(self.krate));
                    }
                }
                _ => return Err(bad(self.krate)),
            },
            None => None,
        };
        let mut members: Vec<Option<Value>> = match base {
            Some(b) => b.into_iter().map(Some).collect(),
            None => vec![None; info.fields.len()],
        };
        for fv in &s.fields {
            let syn::Member::Named(id) = &fv.member else {
                return Err(bad(self.krate));
            };
            let Some(idx) = info.fields.iter().position(|f| *id == f.ident.as_str()) else {
                return Err(bad(self.krate));
            };
            let field = &info.fields[idx];
            // A member serde never serializes is in no default: its value (often not a
            // plain one: a handle, a cache, a clock) is not evaluated.
            members[idx] = Some(if field.skip_ser {
                Value::Null
            } else {
                let fty = field.ty.clone();
                self.eval(&fv.expr, &fty, m, self_def)?
            });
        }
        if members.iter().any(Option::is_none) {
            return Err(bad(self.krate));
        }
        let members = members
            .into_iter()
            .map(|v| v.unwrap_or(Value::Null))
            .collect();
        let fields = info.fields.clone();
        self.serialize_struct(&info, &fields, members)
    }
}

/// The single expression of a block (`{ expr }` or `{ return expr; }`).
pub(crate) fn single_expr(b: &syn::Block) -> Option<&syn::Expr> {
    if b.stmts.len() != 1 {
        return None;
    }
    match &b.stmts[0] {
        syn::Stmt::Expr(e, None) => Some(e),
        syn::Stmt::Expr(syn::Expr::Return(r), Some(_)) => r.expr.as_deref(),
        _ => None,
    }
}

/// k8s-openapi's `IntOrString`.
fn is_int_or_string(ty: &Ty) -> bool {
    matches!(ty, Ty::K8s(p) if p == INT_OR_STRING)
}

const INT_OR_STRING: &str = "k8s_openapi::apimachinery::pkg::util::intstr::IntOrString";

fn is_float(ty: &Ty) -> Option<bool> {
    match ty {
        Ty::Leaf(Leaf::F32) => Some(true),
        Ty::Leaf(Leaf::F64) => Some(false),
        _ => None,
    }
}

fn is_int(ty: &Ty) -> bool {
    matches!(
        ty,
        Ty::Leaf(
            Leaf::I8
                | Leaf::I16
                | Leaf::I32
                | Leaf::I64
                | Leaf::I128
                | Leaf::Isize
                | Leaf::U8
                | Leaf::U16
                | Leaf::U32
                | Leaf::U64
                | Leaf::U128
                | Leaf::Usize
        )
    )
}

fn lit_value(lit: &syn::Lit, ty: &Ty, neg: bool) -> Option<Value> {
    match lit {
        syn::Lit::Str(s)
            if !neg && matches!(ty, Ty::Leaf(Leaf::String | Leaf::PathBuf) | Ty::K8s(_)) =>
        {
            Some(Value::String(s.value()))
        }
        syn::Lit::Bool(b) if !neg && matches!(ty, Ty::Leaf(Leaf::Bool)) => {
            Some(Value::Bool(b.value))
        }
        syn::Lit::Char(c) if !neg && matches!(ty, Ty::Leaf(Leaf::Char)) => {
            Some(Value::String(c.value().to_string()))
        }
        syn::Lit::Int(i) if is_int(ty) => {
            let v: i128 = i.base10_parse().ok()?;
            let v = if neg { -v } else { v };
            if let Ok(x) = i64::try_from(v) {
                Some(Value::from(x))
            } else {
                u64::try_from(v).ok().map(Value::from)
            }
        }
        syn::Lit::Int(i) if is_float(ty).is_some() => {
            let v: f64 = i.base10_digits().parse().ok()?;
            float_value(if neg { -v } else { v }, is_float(ty)?)
        }
        syn::Lit::Float(f) if is_float(ty).is_some() => {
            let v: f64 = f.base10_digits().parse().ok()?;
            float_value(if neg { -v } else { v }, is_float(ty)?)
        }
        _ => None,
    }
}

fn float_value(v: f64, f32_: bool) -> Option<Value> {
    if f32_ {
        serde_json::to_value(v as f32).ok()
    } else {
        serde_json::to_value(v).ok()
    }
}

/// A number as an untyped Rust literal would become a `serde_json::Value` through `Into<Value>`
/// (integers default to i32, floats to f64), or a const of the crate.
pub(crate) fn number_value(krate: &Model, e: &syn::Expr, m: ModId) -> Result<Value, CrdgenError> {
    let bad = || CrdgenError::Unsupported {
        loc: krate.mod_loc(m, e.span()),
        what: format!(
            "the bound `{}`, which is not a literal or a const",
            quote::quote!(#e)
        ),
        fix: format!("{FIX_EXACT}, or write a literal"),
    };
    let e = match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => &s.parse::<syn::Expr>().map_err(|_| bad())?,
        other => other,
    };
    let e = e.clone();
    match &e {
        syn::Expr::Lit(l) => match &l.lit {
            syn::Lit::Int(i) => i.base10_parse::<i64>().map(Value::from).map_err(|_| bad()),
            syn::Lit::Float(f) => {
                let v: f64 = f.base10_digits().parse().map_err(|_| bad())?;
                if f.suffix() == "f32" {
                    Ok(serde_json::to_value(v as f32).unwrap_or(Value::Null))
                } else {
                    Ok(serde_json::json!(v))
                }
            }
            _ => Err(bad()),
        },
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
            match number_value(krate, &u.expr, m)? {
                Value::Number(n) => {
                    if let Some(i) = n.as_i64() {
                        Ok(Value::from(-i))
                    } else {
                        Ok(serde_json::json!(-n.as_f64().unwrap_or(0.0)))
                    }
                }
                _ => Err(bad()),
            }
        }
        syn::Expr::Path(p) => match krate.resolve_path(m, &p.path, 0) {
            Some(Res::Const(cm, name)) => {
                let (cty, cexpr) = krate.modules[cm].consts[&name].clone();
                let cty = krate.resolve_type(cm, &cty, None)?;
                Eval::new(krate).eval(&cexpr, &cty, cm, None)
            }
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

/// A string as `(expr).to_string()` gives it: a literal or a const of the crate.
pub(crate) fn string_value(krate: &Model, e: &syn::Expr, m: ModId) -> Result<String, CrdgenError> {
    if let Some(inner) = string_conversion_arg(e) {
        return string_value(krate, inner, m);
    }
    if let Some(s) = attrs::lit_str(e) {
        return Ok(s);
    }
    if let syn::Expr::Path(p) = e
        && let Some(Res::Const(cm, name)) = krate.resolve_path(m, &p.path, 0)
    {
        let (_, cexpr) = krate.modules[cm].consts[&name].clone();
        if let Some(s) = attrs::lit_str(&cexpr) {
            return Ok(s);
        }
    }
    Err(CrdgenError::Unsupported {
        loc: krate.mod_loc(m, e.span()),
        what: format!(
            "the string `{}`, which is not a literal or a const",
            quote::quote!(#e)
        ),
        fix: format!("{FIX_EXACT}, or write a literal"),
    })
}

/// The argument of a conversion that keeps a string's value: `x.into()`, `x.to_string()`,
/// `x.to_owned()`, `String::from(x)`, `&x`, `(x)`.
fn string_conversion_arg(e: &syn::Expr) -> Option<&syn::Expr> {
    match e {
        syn::Expr::MethodCall(mc)
            if mc.args.is_empty()
                && ["into", "to_string", "to_owned"].contains(&mc.method.to_string().as_str()) =>
        {
            Some(&mc.receiver)
        }
        syn::Expr::Call(c) if c.args.len() == 1 => match &*c.func {
            syn::Expr::Path(p)
                if p.path.segments.len() == 2
                    && p.path.segments[0].ident == "String"
                    && p.path.segments[1].ident == "from" =>
            {
                Some(&c.args[0])
            }
            _ => None,
        },
        syn::Expr::Reference(r) => Some(&r.expr),
        syn::Expr::Paren(p) => Some(&p.expr),
        _ => None,
    }
}
