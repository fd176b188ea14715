//! Schema emulation: what `#[derive(JsonSchema)]` (schemars_derive 1.2) and `#[derive(KubeSchema)]`
//! (kube-derive 5) would emit for the crate's types, built with the same `SchemaGenerator` and the
//! same schemars helper functions. Only the derive macros' logic is emulated: std, serde_json and
//! k8s-openapi schemas come from the real types (`generator.subschema_for::<T>()`), generic std
//! containers (`Option<T>`, `Vec<T>`, maps, `Box<T>`) run their real impls over [`Dyn`], a
//! placeholder type whose schema is the next pending [`Ty`].

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use proc_macro2::Span;
use schemars::{_private as sp, JsonSchema, Schema, SchemaGenerator};
use serde_json::{Value, json};
use syn::spanned::Spanned;

use crate::crdgen::error::{CrdgenError, FIX_EXACT};
use crate::crdgen::k8s;
use crate::crdgen::read::attrs::{self, MetaItem, MetaKind, RenameRule};
use crate::crdgen::read::loader::{Crate, DefId, DefItem, ModId};
use crate::crdgen::read::place_attrs::PlaceAttrs;
use crate::crdgen::read::resolve::{Leaf, SeqKind, Ty};
use crate::crdgen::read::schema_fn;
use crate::crdgen::read::values::{self, Eval};
use crate::syntax::Pos;

// ---------------------------------------------------------------------------------------------
// Parsed attributes of a type of the crate.

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tag {
    External,
    Internal(String),
    Adjacent(String, String),
    Untagged,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SerdeDefault {
    None,
    Default,
    Path(String),
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Common {
    pub doc: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub deprecated: bool,
    pub examples: Vec<Value>,
    pub extensions: Vec<(String, Value)>,
}

impl Common {
    fn is_default(&self) -> bool {
        self.doc.is_none()
            && self.title.is_none()
            && self.description.is_none()
            && !self.deprecated
            && self.examples.is_empty()
            && self.extensions.is_empty()
    }

    fn apply(&self, s: &mut Schema) {
        let (doc_title, doc_desc) = match &self.doc {
            Some(d) => {
                let (t, d) = sp::get_title_and_description(d);
                (Some(t.to_string()), Some(d.to_string()))
            }
            None => (None, None),
        };
        if let Some(t) = self.title.clone().or(doc_title) {
            sp::insert_metadata_property_if_nonempty(s, "title", t);
        }
        if let Some(d) = self.description.clone().or(doc_desc) {
            sp::insert_metadata_property_if_nonempty(s, "description", d);
        }
        if self.deprecated {
            s.insert("deprecated".into(), true.into());
        }
        if !self.examples.is_empty() {
            s.insert("examples".into(), Value::Array(self.examples.clone()));
        }
    }

    fn apply_post(&self, s: &mut Schema) {
        for (k, v) in &self.extensions {
            s.insert(k.clone(), v.clone());
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) enum With {
    Type(Ty),
    /// `schema_with = "f"`: the schema `f` returns (see [`schema_fn`](crate::crdgen::read::schema_fn)).
    Schema(Schema),
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Validation {
    pub length: Option<(Option<Value>, Option<Value>)>,
    pub range: Option<(Option<Value>, Option<Value>)>,
    pub pattern: Option<String>,
    pub contains: Option<String>,
    pub required: bool,
    pub format: Option<&'static str>,
    pub inner: Option<Box<Validation>>,
}

impl Validation {
    /// Keywords of `self`, then those only `other` sets: schemars reads `#[schemars]`,
    /// `#[validate]` and `#[garde]` into one set (a keyword given twice does not compile).
    fn or(self, other: Validation) -> Validation {
        Validation {
            length: self.length.or(other.length),
            range: self.range.or(other.range),
            pattern: self.pattern.or(other.pattern),
            contains: self.contains.or(other.contains),
            required: self.required || other.required,
            format: self.format.or(other.format),
            inner: match (self.inner, other.inner) {
                (Some(a), Some(b)) => Some(Box::new(a.or(*b))),
                (a, b) => a.or(b),
            },
        }
    }

    fn is_default(&self) -> bool {
        self.length.is_none()
            && self.range.is_none()
            && self.pattern.is_none()
            && self.contains.is_none()
            && !self.required
            && self.format.is_none()
            && self.inner.is_none()
    }

    fn apply(&self, s: &mut Schema) {
        if let Some((min, max)) = &self.length {
            if let Some(v) = min {
                sp::insert_validation_property(s, "string", "minLength", v.clone());
                sp::insert_validation_property(s, "array", "minItems", v.clone());
            }
            if let Some(v) = max {
                sp::insert_validation_property(s, "string", "maxLength", v.clone());
                sp::insert_validation_property(s, "array", "maxItems", v.clone());
            }
        }
        if let Some((min, max)) = &self.range {
            if let Some(v) = min {
                sp::insert_validation_property(s, "number", "minimum", v.clone());
            }
            if let Some(v) = max {
                sp::insert_validation_property(s, "number", "maximum", v.clone());
            }
        }
        if let Some(p) = &self.pattern {
            sp::insert_validation_property(s, "string", "pattern", p.clone());
        }
        if let Some(c) = &self.contains {
            sp::must_contain(s, c);
        }
        if let Some(f) = self.format {
            s.insert("format".into(), f.into());
        }
        if let Some(inner) = &self.inner
            && !inner.is_default()
            && let Some(items) = s
                .get_mut("items")
                .and_then(|i| <&mut Schema>::try_from(i).ok())
        {
            inner.apply(items);
        }
    }
}

/// A rule of `#[x_kube(validation = ...)]` / `#[kube(validation = ...)]`, evaluated.
pub(crate) type Rule = kube_core::Rule;

#[derive(Debug, Clone)]
pub(crate) struct FieldInfo {
    pub ident: String,
    pub span: Span,
    pub ty: Ty,
    pub de_name: String,
    pub ser_name: String,
    pub skip_ser: bool,
    pub skip_de: bool,
    pub skip_ser_if: Option<String>,
    /// Where a schemars-only attribute (`#[schemars(skip)]`, `#[schemars(rename = ..)]`, ...)
    /// makes the schema's view of this field differ from what serde serializes, and how: a
    /// default value holding the field would name a property the schema does not have.
    pub schema_only: Option<(Pos, String)>,
    pub default: SerdeDefault,
    /// Where its `#[serde(default ..)]` is (a refused default points there).
    pub default_at: Option<Pos>,
    pub flatten: bool,
    pub with: Option<With>,
    pub common: Common,
    pub validation: Validation,
    pub transparent_marker: bool,
    pub rules: Vec<Rule>,
    pub merge_strategy: Option<kube_core::cel::MergeStrategy>,
}

impl FieldInfo {
    /// The type the field's schema is made of: the one `#[schemars(with = "T")]` (or serde's
    /// `with`) puts in place of its own, else its own (also under `schema_with`, whose schema is
    /// the function's).
    pub fn schema_type(&self) -> &Ty {
        match &self.with {
            Some(With::Type(t)) => t,
            Some(With::Schema(_)) | None => &self.ty,
        }
    }

    fn attrs_default(&self) -> bool {
        self.common.is_default() && self.validation.is_default() && self.with.is_none()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Unit,
    Newtype,
    Tuple,
    Struct,
}

#[derive(Debug, Clone)]
pub(crate) struct VariantInfo {
    pub ident: String,
    pub de_name: String,
    pub ser_name: String,
    pub style: Style,
    pub fields: Vec<FieldInfo>,
    pub skip_de: bool,
    pub untagged: bool,
    pub with: Option<With>,
    pub common: Common,
}

impl VariantInfo {
    fn attrs_default(&self) -> bool {
        self.common.is_default() && self.with.is_none()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeriveKind {
    JsonSchema,
    KubeSchema,
}

#[derive(Debug, Clone)]
pub(crate) struct TypeInfo {
    pub def: DefId,
    pub module: ModId,
    pub ident: String,
    pub span: Span,
    pub is_enum: bool,
    pub style: Style,
    pub is_tuple: bool,
    pub fields: Vec<FieldInfo>,
    pub variants: Vec<VariantInfo>,
    pub tag: Tag,
    pub tag_span: Pos,
    pub deny_unknown_fields: bool,
    pub transparent: bool,
    pub default: SerdeDefault,
    /// Where its container `#[serde(default ..)]` is.
    pub default_at: Option<Pos>,
    pub from: Option<Ty>,
    pub with: Option<With>,
    pub common: Common,
    pub derive: Option<DeriveKind>,
    pub rules: Vec<Rule>,
}

fn unsupported(
    krate: &Crate,
    m: ModId,
    span: impl Into<Pos>,
    what: impl Into<String>,
    fix: impl Into<String>,
) -> CrdgenError {
    CrdgenError::Unsupported {
        loc: krate.mod_loc(m, span),
        what: what.into(),
        fix: fix.into(),
    }
}

fn syn_err(krate: &Crate, m: ModId, e: impl Into<attrs::AttrError>) -> CrdgenError {
    let e = e.into();
    CrdgenError::Source {
        loc: krate.mod_loc(m, e.pos),
        what: format!("invalid attribute: {}", e.message),
    }
}

fn unraw(id: &syn::Ident) -> String {
    let s = id.to_string();
    s.strip_prefix("r#").map(str::to_string).unwrap_or(s)
}

/// Parse `#[schemars]` common attributes (title, description, example, extend, transform) + doc.
fn common_attrs(
    krate: &Crate,
    m: ModId,
    attrs_: &[syn::Attribute],
    items: &[MetaItem],
) -> Result<Common, CrdgenError> {
    let mut c = Common {
        doc: attrs::doc(attrs_, &krate.docs[krate.modules[m].file]).map_err(|span| {
            unsupported(
                krate,
                m,
                span,
                "a doc comment that is not a string literal (e.g. `include_str!`)",
                FIX_EXACT,
            )
        })?,
        deprecated: attrs_.iter().any(|a| a.path().is_ident("deprecated")),
        ..Default::default()
    };
    for it in items {
        match (it.name.as_str(), &it.kind) {
            ("title", MetaKind::Value(e)) => {
                c.title = Some(values::string_value(krate, &e.expr(), m)?)
            }
            ("description", MetaKind::Value(e)) => {
                c.description = Some(values::string_value(krate, &e.expr(), m)?)
            }
            ("example", MetaKind::Value(e)) => {
                return Err(unsupported(
                    krate,
                    m,
                    e.pos(),
                    "`#[schemars(example = ...)]` (an expression evaluated at run time)",
                    FIX_EXACT,
                ));
            }
            ("extend", MetaKind::List(ts)) => {
                for (k, v) in parse_extensions(krate, m, ts.clone(), it.pos)? {
                    crate::crdgen::check::record_attr(&k, &v, krate.mod_loc(m, it.pos));
                    c.extensions.push((k, v));
                }
            }
            ("transform", _) => {
                return Err(unsupported(
                    krate,
                    m,
                    it.pos,
                    "`#[schemars(transform = ...)]` (a function run on the schema)",
                    FIX_EXACT,
                ));
            }
            _ => {}
        }
    }
    Ok(c)
}

/// `extend("x-key" = json, ...)`: the values are `json!` tokens; plain JSON is evaluated.
fn parse_extensions(
    krate: &Crate,
    m: ModId,
    ts: proc_macro2::TokenStream,
    span: Pos,
) -> Result<Vec<(String, Value)>, CrdgenError> {
    let mut out = Vec::new();
    let mut cur: Vec<proc_macro2::TokenTree> = Vec::new();
    let mut parts = Vec::new();
    for tt in ts {
        if let proc_macro2::TokenTree::Punct(p) = &tt
            && p.as_char() == ','
        {
            parts.push(std::mem::take(&mut cur));
            continue;
        }
        cur.push(tt);
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    for part in parts {
        let mut it = part.into_iter();
        let key = match it.next() {
            Some(proc_macro2::TokenTree::Literal(l)) => {
                let e: syn::LitStr =
                    syn::parse_str(&l.to_string()).map_err(|e| syn_err(krate, m, e))?;
                e.value()
            }
            _ => {
                return Err(unsupported(
                    krate,
                    m,
                    span,
                    "an `extend(...)` item that is not `\"key\" = value`",
                    FIX_EXACT,
                ));
            }
        };
        match it.next() {
            Some(proc_macro2::TokenTree::Punct(p)) if p.as_char() == '=' => {}
            _ => {
                return Err(unsupported(
                    krate,
                    m,
                    span,
                    "an `extend(...)` item that is not `\"key\" = value`",
                    FIX_EXACT,
                ));
            }
        }
        let rest: proc_macro2::TokenStream = it.collect();
        let text = rest.to_string();
        let compact = text.replace("- ", "-");
        let v: Value = serde_json::from_str(&compact).map_err(|_| {
            unsupported(
                krate,
                m,
                span,
                format!("the extension value `{text}`, which is not plain JSON"),
                format!("{FIX_EXACT}, or write the value as JSON literals"),
            )
        })?;
        out.push((key, v));
    }
    Ok(out)
}

/// The attribute validation keywords come from; schemars reads each in its own dialect:
/// `#[validate]` has no `pattern(..)` nor `inner(..)`, `#[garde]` has no `regex(..)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Schemars,
    Validate,
    Garde,
}

fn validation_attrs(
    krate: &Crate,
    m: ModId,
    items: &[MetaItem],
    dialect: Dialect,
) -> Result<Validation, CrdgenError> {
    let mut v = Validation::default();
    for it in items {
        let fmt = match it.name.as_str() {
            "email" => Some("email"),
            "url" => Some("uri"),
            "ip" => Some("ip"),
            "ipv4" => Some("ipv4"),
            "ipv6" => Some("ipv6"),
            _ => None,
        };
        if fmt.is_some() {
            v.format = fmt;
            continue;
        }
        match (it.name.as_str(), &it.kind) {
            ("length" | "range", MetaKind::List(ts)) => {
                let nested =
                    attrs::parse_meta_list(ts.clone()).map_err(|e| syn_err(krate, m, e))?;
                let (mut min, mut max) = (None, None);
                for n in nested {
                    let MetaKind::Value(e) = &n.kind else {
                        continue;
                    };
                    let val = values::number_value(krate, &e.expr(), m)?;
                    match n.name.as_str() {
                        "min" => min = Some(val),
                        "max" => max = Some(val),
                        "equal" => {
                            min = Some(val.clone());
                            max = Some(val);
                        }
                        _ => {}
                    }
                }
                if it.name == "length" {
                    v.length = Some((min, max));
                } else {
                    v.range = Some((min, max));
                }
            }
            ("required", MetaKind::Flag) => v.required = true,
            ("pattern", MetaKind::List(ts)) if dialect != Dialect::Validate => {
                let e: syn::Expr = syn::parse2(ts.clone()).map_err(|e| syn_err(krate, m, e))?;
                v.pattern = Some(values::string_value(krate, &e, m)?);
            }
            ("regex", MetaKind::List(ts)) if dialect != Dialect::Garde => {
                let nested =
                    attrs::parse_meta_list(ts.clone()).map_err(|e| syn_err(krate, m, e))?;
                for n in nested {
                    if let ("pattern", MetaKind::Value(e)) = (n.name.as_str(), &n.kind) {
                        v.pattern = Some(values::string_value(krate, &e.expr(), m)?);
                        let p = Value::String(v.pattern.clone().unwrap_or_default());
                        crate::crdgen::check::record_attr("pattern", &p, krate.mod_loc(m, it.pos));
                    } else if n.name == "path" {
                        return Err(unsupported(
                            krate,
                            m,
                            n.pos,
                            "`regex(path = ...)` (a regex built at run time)",
                            format!("{FIX_EXACT}, or use `#[schemars(regex(pattern = \"...\"))]`"),
                        ));
                    }
                }
            }
            ("contains", MetaKind::List(ts)) => {
                if let Ok(nested) = attrs::parse_meta_list(ts.clone())
                    && let Some(p) = nested.iter().find(|n| n.name == "pattern")
                    && let MetaKind::Value(e) = &p.kind
                {
                    v.contains = Some(values::string_value(krate, &e.expr(), m)?);
                } else {
                    let e: syn::Expr = syn::parse2(ts.clone()).map_err(|e| syn_err(krate, m, e))?;
                    v.contains = Some(values::string_value(krate, &e, m)?);
                }
            }
            ("inner", MetaKind::List(ts)) if dialect != Dialect::Validate => {
                let nested =
                    attrs::parse_meta_list(ts.clone()).map_err(|e| syn_err(krate, m, e))?;
                v.inner = Some(Box::new(validation_attrs(krate, m, &nested, dialect)?));
            }
            _ => {}
        }
    }
    Ok(v)
}

fn with_attr(
    krate: &Crate,
    m: ModId,
    items: &[MetaItem],
    self_def: DefId,
) -> Result<Option<With>, CrdgenError> {
    for it in items {
        match it.name.as_str() {
            "with" => {
                let Some(s) = it.str_value() else { continue };
                let ty: syn::Type = syn::parse_str(&s).map_err(|e| syn_err(krate, m, e))?;
                return Ok(Some(With::Type(
                    krate
                        .resolve_type(m, &ty, Some(self_def))
                        .map_err(|e| relocate(e, krate, m, it.pos))?,
                )));
            }
            "schema_with" => {
                let Some(path) = it.str_value() else { continue };
                return schema_fn::schema_of_fn(krate, &path, m, Some(self_def), it.pos)
                    .map(|s| Some(With::Schema(s)));
            }
            _ => {}
        }
    }
    Ok(None)
}

/// Errors from a type in an attribute string have no span of their own: point at the attribute.
fn relocate(e: CrdgenError, krate: &Crate, m: ModId, span: Pos) -> CrdgenError {
    match e {
        CrdgenError::Unsupported { what, fix, .. } => CrdgenError::Unsupported {
            loc: krate.mod_loc(m, span),
            what,
            fix,
        },
        other => other,
    }
}

/// How the schema's view of a field (serde's attributes as schemars overrides them) differs from
/// what serde itself serializes, and where the schemars attribute that makes it so is: `None`
/// when the two agree. schemars makes a default's value with `serde_json::to_value`, which knows
/// only serde's attributes.
fn schema_only_view(
    krate: &Crate,
    m: ModId,
    place: &PlaceAttrs,
    (merged, pruned): (&attrs::Merged<'_>, bool),
    ident: &str,
    rule: RenameRule,
) -> Result<Option<(Pos, String)>, CrdgenError> {
    let Ok(serde_items) = place.serde.as_ref() else {
        return Ok(None);
    };
    let serde: Vec<&MetaItem> = serde_items.iter().collect();
    let at = |names: &[&str]| {
        (merged.schemars.iter())
            .find(|i| names.contains(&i.name.as_str()))
            .map(|i| i.pos)
    };
    let serde_skips = ["skip", "skip_serializing"]
        .iter()
        .any(|n| serde_flag(&serde, n).is_some());
    if pruned
        && !serde_skips
        && let Some(pos) = at(&["skip", "skip_serializing", "skip_deserializing"])
    {
        return Ok(Some((
            pos,
            format!(
                "serde serializes `{ident}`, which a `#[schemars(..)]` skip prunes from the schema"
            ),
        )));
    }
    if pruned {
        return Ok(None);
    }
    let name = |items: &[&MetaItem]| -> Result<String, CrdgenError> {
        Ok(rename(items, krate, m)?
            .0
            .unwrap_or_else(|| rule.apply_to_field(ident)))
    };
    let (schema_name, serde_name) = (name(&merged.serde)?, name(&serde)?);
    match at(&["rename"]) {
        Some(pos) if schema_name != serde_name => Ok(Some((
            pos,
            format!(
                "serde serializes `{ident}` as `{serde_name}`, which `#[schemars(rename = {schema_name:?})]` names `{schema_name}` in the schema"
            ),
        ))),
        _ => Ok(None),
    }
}

fn serde_flag(items: &[&MetaItem], name: &str) -> Option<Pos> {
    items.iter().find(|i| i.name == name).map(|i| i.pos)
}

fn serde_default(items: &[&MetaItem]) -> SerdeDefault {
    match items.iter().find(|i| i.name == "default") {
        None => SerdeDefault::None,
        Some(i) => match i.str_value() {
            Some(p) => SerdeDefault::Path(p),
            None => SerdeDefault::Default,
        },
    }
}

fn rename(
    items: &[&MetaItem],
    krate: &Crate,
    m: ModId,
) -> Result<(Option<String>, Option<String>), CrdgenError> {
    match items.iter().find(|i| i.name == "rename") {
        Some(i) => attrs::ser_de_str(i).map_err(|e| syn_err(krate, m, e)),
        None => Ok((None, None)),
    }
}

fn rename_rule(
    items: &[&MetaItem],
    key: &str,
    krate: &Crate,
    m: ModId,
) -> Result<(RenameRule, RenameRule), CrdgenError> {
    match items.iter().find(|i| i.name == key) {
        Some(i) => {
            let (s, d) = attrs::ser_de_str(i).map_err(|e| syn_err(krate, m, e))?;
            let parse = |x: Option<String>| -> Result<RenameRule, CrdgenError> {
                match x {
                    None => Ok(RenameRule::None),
                    Some(x) => RenameRule::parse(&x).ok_or_else(|| CrdgenError::Source {
                        loc: krate.mod_loc(m, i.pos),
                        what: format!("unknown rename rule `{key} = {x:?}`"),
                    }),
                }
            };
            Ok((parse(s)?, parse(d)?))
        }
        None => Ok((RenameRule::None, RenameRule::None)),
    }
}

fn x_kube(
    krate: &Crate,
    m: ModId,
    place: &PlaceAttrs,
) -> Result<(Vec<Rule>, Option<kube_core::cel::MergeStrategy>), CrdgenError> {
    let items = place
        .x_kube
        .as_ref()
        .map_err(|e| syn_err(krate, m, e.clone()))?;
    let mut rules = Vec::new();
    let mut strategy = None;
    for it in items {
        match (it.name.as_str(), &it.kind) {
            ("validation", MetaKind::Value(e)) => rules.push(eval_rule(krate, m, &e.expr())?),
            ("merge_strategy", MetaKind::Value(e)) => {
                strategy = Some(eval_merge_strategy(krate, m, &e.expr())?)
            }
            _ => {}
        }
    }
    Ok((rules, strategy))
}

/// Evaluate a CEL rule: `"expr"`, `("expr", "message")` or a `Rule::new(..)` builder chain.
pub(crate) fn eval_rule(krate: &Crate, m: ModId, e: &syn::Expr) -> Result<Rule, CrdgenError> {
    let rule = eval_rule_inner(krate, m, e)?;
    crate::crdgen::check::record_rule(&rule.rule, krate.mod_loc(m, e.span()));
    Ok(rule)
}

fn eval_rule_inner(krate: &Crate, m: ModId, e: &syn::Expr) -> Result<Rule, CrdgenError> {
    let bad = || {
        unsupported(
            krate,
            m,
            e.span(),
            format!(
                "the validation rule `{}`, which is not a literal or a `Rule::new(..)` chain of literals",
                quote::quote!(#e)
            ),
            FIX_EXACT,
        )
    };
    let s = |x: &syn::Expr| values::string_value(krate, x, m).map_err(|_| bad());
    match e {
        syn::Expr::Lit(_) | syn::Expr::Path(_) => Ok(Rule::from(s(e)?.as_str())),
        syn::Expr::Tuple(t) if t.elems.len() == 2 => Ok(Rule::from((
            s(&t.elems[0])?.as_str(),
            s(&t.elems[1])?.as_str(),
        ))),
        syn::Expr::Paren(p) => eval_rule_inner(krate, m, &p.expr),
        syn::Expr::Call(c) if c.args.len() == 1 => {
            let syn::Expr::Path(p) = &*c.func else {
                return Err(bad());
            };
            let segs: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            if segs.len() >= 2
                && segs[segs.len() - 2] == "Rule"
                && (segs[segs.len() - 1] == "new" || segs[segs.len() - 1] == "from")
            {
                Ok(Rule::new(s(&c.args[0])?))
            } else {
                Err(bad())
            }
        }
        syn::Expr::MethodCall(mc) => {
            let base = eval_rule_inner(krate, m, &mc.receiver)?;
            let arg = mc.args.first().ok_or_else(bad)?;
            match mc.method.to_string().as_str() {
                "message" => {
                    // `Message::Expression(..)`, `Message::Message(..)`, either `.into()`, or a string.
                    let call = match arg {
                        syn::Expr::MethodCall(inner) if inner.method == "into" => &*inner.receiver,
                        other => other,
                    };
                    let msg = match call {
                        syn::Expr::Call(c) if c.args.len() == 1 => {
                            match last_path_ident(&c.func).as_deref() {
                                Some("Expression") => {
                                    kube_core::Message::Expression(s(&c.args[0])?)
                                }
                                Some("Message") => kube_core::Message::Message(s(&c.args[0])?),
                                _ => kube_core::Message::Message(s(call)?),
                            }
                        }
                        other => kube_core::Message::Message(s(other)?),
                    };
                    Ok(base.message(msg))
                }
                "reason" => {
                    let last = last_path_ident(arg).ok_or_else(bad)?;
                    let r: kube_core::Reason =
                        serde_json::from_value(Value::String(last)).map_err(|_| bad())?;
                    Ok(base.reason(r))
                }
                "field_path" => Ok(base.field_path(s(arg)?)),
                "optional_old_self" => match arg {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Bool(b),
                        ..
                    }) => Ok(base.optional_old_self(b.value)),
                    _ => Err(bad()),
                },
                _ => Err(bad()),
            }
        }
        _ => Err(bad()),
    }
}

fn eval_merge_strategy(
    krate: &Crate,
    m: ModId,
    e: &syn::Expr,
) -> Result<kube_core::cel::MergeStrategy, CrdgenError> {
    use kube_core::cel::MergeStrategy;
    use kube_core::{ListMerge, MapMerge, StructMerge};
    let bad = || {
        unsupported(
            krate,
            m,
            e.span(),
            format!("the merge strategy `{}`", quote::quote!(#e)),
            FIX_EXACT,
        )
    };
    let names = |p: &syn::Path| -> (String, String) {
        let n = p.segments.len();
        let a = if n >= 2 {
            p.segments[n - 2].ident.to_string()
        } else {
            String::new()
        };
        (a, p.segments[n - 1].ident.to_string())
    };
    match e {
        syn::Expr::Path(p) => Ok(match names(&p.path) {
            (t, v) if t == "ListMerge" && v == "Atomic" => {
                MergeStrategy::ListType(ListMerge::Atomic)
            }
            (t, v) if t == "ListMerge" && v == "Set" => MergeStrategy::ListType(ListMerge::Set),
            (t, v) if t == "MapMerge" && v == "Atomic" => MergeStrategy::MapType(MapMerge::Atomic),
            (t, v) if t == "MapMerge" && v == "Granular" => {
                MergeStrategy::MapType(MapMerge::Granular)
            }
            (t, v) if t == "StructMerge" && v == "Atomic" => {
                MergeStrategy::StructType(StructMerge::Atomic)
            }
            (t, v) if t == "StructMerge" && v == "Granular" => {
                MergeStrategy::StructType(StructMerge::Granular)
            }
            _ => return Err(bad()),
        }),
        syn::Expr::Call(c) if c.args.len() == 1 => {
            let syn::Expr::Path(p) = &*c.func else {
                return Err(bad());
            };
            let (t, v) = names(&p.path);
            if t != "ListMerge" || v != "Map" {
                return Err(bad());
            }
            let syn::Expr::Macro(mac) = &c.args[0] else {
                return Err(bad());
            };
            let items = mac
                .mac
                .parse_body_with(
                    syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
                )
                .map_err(|_| bad())?;
            let mut keys = Vec::new();
            for i in items {
                let inner = match &i {
                    syn::Expr::MethodCall(mc) => &*mc.receiver,
                    other => other,
                };
                keys.push(values::string_value(krate, inner, m).map_err(|_| bad())?);
            }
            Ok(MergeStrategy::ListType(ListMerge::Map(keys)))
        }
        _ => Err(bad()),
    }
}

#[allow(clippy::too_many_arguments)]
fn field_info(
    krate: &Crate,
    m: ModId,
    d: DefId,
    (f, place): (&syn::Field, &PlaceAttrs),
    index: usize,
    rule: (RenameRule, RenameRule),
    container_transparent: bool,
) -> Result<FieldInfo, CrdgenError> {
    let merged = attrs::merged(place).map_err(|e| syn_err(krate, m, e))?;
    let ident = f
        .ident
        .as_ref()
        .map(unraw)
        .unwrap_or_else(|| index.to_string());
    let (ser_r, de_r) = rename(&merged.serde, krate, m)?;
    let skip = serde_flag(&merged.serde, "skip").is_some();
    let skip_ser = skip || serde_flag(&merged.serde, "skip_serializing").is_some();
    let skip_de = skip || serde_flag(&merged.serde, "skip_deserializing").is_some();
    let skip_ser_if = merged
        .serde
        .iter()
        .find(|i| i.name == "skip_serializing_if")
        .and_then(|i| i.str_value());
    let span = f
        .ident
        .as_ref()
        .map(|i| i.span())
        .unwrap_or_else(|| f.ty.span());
    let pruned = skip_ser && skip_de;
    let schema_only = schema_only_view(krate, m, place, (&merged, pruned), &ident, rule.0)?;
    let needs_schema = !(skip_ser && skip_de);
    let ty = if needs_schema || !skip_ser {
        krate.resolve_type(m, &f.ty, Some(d))?
    } else {
        Ty::Leaf(Leaf::Unit)
    };
    let mut with = with_attr(krate, m, merged.schemars, d)?;
    if with.is_none()
        && needs_schema
        && let Some(sw) = merged.serde_with.iter().find(|i| i.name == "with")
    {
        // schemars reads `#[serde(with = "T")]` as the schema type too.
        let s = sw.str_value().unwrap_or_default();
        match syn::parse_str::<syn::Type>(&s)
            .ok()
            .and_then(|t| krate.resolve_type(m, &t, Some(d)).ok())
        {
            Some(t) => with = Some(With::Type(t)),
            None => {
                return Err(unsupported(
                    krate,
                    m,
                    sw.pos,
                    format!("`#[serde(with = {s:?})]` without `#[schemars(with = \"Type\")]`"),
                    "add `#[schemars(with = \"Type\")]` naming the type it serializes as, or use --exact",
                ));
            }
        }
    }
    // kube-derive's `KubeSchema` hands schemars only `serde`, `schemars`, `doc` and `validate`:
    // a `#[garde]` (for garde's own derive) leaves its schema as it is.
    let garde = if krate.derives(d).iter().any(|n| n == "KubeSchema") {
        &[]
    } else {
        merged.garde
    };
    let validation = validation_attrs(krate, m, merged.schemars, Dialect::Schemars)?
        .or(validation_attrs(
            krate,
            m,
            merged.validate,
            Dialect::Validate,
        )?)
        .or(validation_attrs(krate, m, garde, Dialect::Garde)?);
    let (rules, merge_strategy) = x_kube(krate, m, place)?;
    let has_ser_with = merged
        .serde_with
        .iter()
        .any(|i| i.name == "serialize_with" || i.name == "with");
    let default = serde_default(&merged.serde);
    if has_ser_with && default != SerdeDefault::None && !skip_ser {
        return Err(unsupported(
            krate,
            m,
            span,
            "a default value serialized through `serialize_with`",
            FIX_EXACT,
        ));
    }
    Ok(FieldInfo {
        de_name: de_r.unwrap_or_else(|| rule.1.apply_to_field(&ident)),
        ser_name: ser_r.unwrap_or_else(|| rule.0.apply_to_field(&ident)),
        ident,
        span,
        ty,
        skip_ser,
        skip_de,
        skip_ser_if,
        schema_only,
        default,
        default_at: serde_flag(&merged.serde, "default"),
        flatten: serde_flag(&merged.serde, "flatten").is_some(),
        with,
        common: common_attrs(krate, m, &f.attrs, merged.schemars)?,
        validation,
        transparent_marker: container_transparent && !skip_ser,
        rules,
        merge_strategy,
    })
}

/// Two fields of one struct (or struct variant, `owner`) that serde writes or reads under one
/// JSON key (a `rename` equal to another field's name, or to what `rename_all` makes of it):
/// serde compiles them, but an object then holds the key twice (its API server keeps one value)
/// and the CRD one property. Refused at the second, naming both. Flattened fields are left to
/// serde: their keys are the flattened type's.
fn one_key_per_field(
    krate: &Crate,
    m: ModId,
    owner: &str,
    fields: &[FieldInfo],
) -> Result<(), CrdgenError> {
    for (i, f) in fields.iter().enumerate() {
        if f.flatten {
            continue;
        }
        let clash = fields[..i].iter().filter(|o| !o.flatten).find_map(|o| {
            if !f.skip_ser && !o.skip_ser && f.ser_name == o.ser_name {
                Some((o, "serialize", &f.ser_name))
            } else if !f.skip_de && !o.skip_de && f.de_name == o.de_name {
                Some((o, "deserialize", &f.de_name))
            } else {
                None
            }
        });
        if let Some((other, how, key)) = clash {
            return Err(CrdgenError::Source {
                loc: krate.mod_loc(m, f.span),
                what: format!(
                    "the fields `{}` (at {}) and `{}` of `{owner}` both {how} as the JSON key {key:?} (their names after `#[serde(rename)]` and `rename_all`): an object would hold the key twice (or one key fill both fields), and the CRD has one property for both; each field needs a key of its own, e.g. `#[serde(rename = \"{key}2\")]` on `{}`",
                    other.ident,
                    krate.mod_loc(m, other.span),
                    f.ident,
                    f.ident,
                ),
            });
        }
    }
    Ok(())
}

/// Two variants of one enum that serde reads under one name (a `rename` equal to another
/// variant's name, or to what `rename_all` makes of it): the second is never read back, and the
/// CRD lists the name twice. Refused at the second, naming both. Skipped and untagged variants
/// have no name to read.
fn one_name_per_variant(
    krate: &Crate,
    m: ModId,
    info: &TypeInfo,
    en: &syn::ItemEnum,
) -> Result<(), CrdgenError> {
    let named: Vec<(&VariantInfo, &syn::Variant)> = info
        .variants
        .iter()
        .zip(&en.variants)
        .filter(|(v, _)| !v.skip_de && !v.untagged)
        .collect();
    for (i, (v, at)) in named.iter().enumerate() {
        if let Some((other, other_at)) = named[..i].iter().find(|(o, _)| o.de_name == v.de_name) {
            return Err(CrdgenError::Source {
                loc: krate.mod_loc(m, at.ident.span()),
                what: format!(
                    "the variants `{}` (at {}) and `{}` of `{}` are both named {:?} in JSON (their names after `#[serde(rename)]` and `rename_all`): serde never reads the second back, and the CRD lists the name twice; each variant needs a name of its own, e.g. `#[serde(rename = \"{}\")]` on `{}`",
                    other.ident,
                    krate.mod_loc(m, other_at.ident.span()),
                    v.ident,
                    info.ident,
                    v.de_name,
                    v.ident,
                    v.ident,
                ),
            });
        }
    }
    Ok(())
}

fn style_of(fields: &syn::Fields) -> Style {
    match fields {
        syn::Fields::Unit => Style::Unit,
        syn::Fields::Unnamed(u) if u.unnamed.len() == 1 => Style::Newtype,
        syn::Fields::Unnamed(_) => Style::Tuple,
        syn::Fields::Named(_) => Style::Struct,
    }
}

thread_local! {
    /// [`TypeInfo::of`] per definition of the crate being read: schemas are inlined, so a type is
    /// asked for at every place it is used (hundreds of times in large CRDs).
    static TYPE_INFOS: RefCell<HashMap<DefId, Rc<TypeInfo>>> = RefCell::new(HashMap::new());
}

/// Forget the [`TypeInfo`]s of the previous crate.
pub(crate) fn clear_type_infos() {
    TYPE_INFOS.with(|t| t.borrow_mut().clear());
}

/// Empty the type information cache without freeing what it held (see
/// [`crate::crdgen::Found::keep_until_exit`]).
pub(crate) fn keep_type_infos_until_exit() {
    TYPE_INFOS.with(|t| std::mem::forget(std::mem::take(&mut *t.borrow_mut())));
}

impl TypeInfo {
    /// The attributes and fields of a definition, read once per crate.
    pub fn of(krate: &Crate, d: DefId) -> Result<Rc<TypeInfo>, CrdgenError> {
        if let Some(info) = TYPE_INFOS.with(|t| t.borrow().get(&d).cloned()) {
            return Ok(info);
        }
        let info = Rc::new(Self::read(krate, d)?);
        TYPE_INFOS.with(|t| t.borrow_mut().insert(d, info.clone()));
        Ok(info)
    }

    fn read(krate: &Crate, d: DefId) -> Result<TypeInfo, CrdgenError> {
        let def = &krate.defs[d];
        let m = def.module;
        let attrs_ = def.attrs();
        let parsed = &krate.attrs[d];
        let merged = attrs::merged(&parsed.own).map_err(|e| syn_err(krate, m, e))?;
        let s = &merged.serde;
        let derive = {
            let ds = krate.derives(d);
            if ds.iter().any(|n| n == "KubeSchema") {
                Some(DeriveKind::KubeSchema)
            } else if ds.iter().any(|n| n == "JsonSchema") {
                Some(DeriveKind::JsonSchema)
            } else {
                None
            }
        };
        let transparent = serde_flag(s, "transparent").is_some();
        let untagged = serde_flag(s, "untagged");
        let tag = s.iter().find(|i| i.name == "tag");
        let content = s
            .iter()
            .find(|i| i.name == "content")
            .and_then(|i| i.str_value());
        let (tag, tag_span) = match (untagged, tag) {
            (Some(sp_), _) => (Tag::Untagged, sp_),
            (None, Some(t)) => {
                let name = t.str_value().unwrap_or_default();
                match content {
                    Some(c) => (Tag::Adjacent(name, c), t.pos),
                    None => (Tag::Internal(name), t.pos),
                }
            }
            (None, None) => (Tag::External, def.ident().span().into()),
        };
        let rename_all = rename_rule(s, "rename_all", krate, m)?;
        let rename_all_fields = rename_rule(s, "rename_all_fields", krate, m)?;
        let from = match s.iter().find(|i| i.name == "from" || i.name == "try_from") {
            Some(i) => {
                let t: syn::Type = syn::parse_str(&i.str_value().unwrap_or_default())
                    .map_err(|e| syn_err(krate, m, e))?;
                Some(
                    krate
                        .resolve_type(m, &t, Some(d))
                        .map_err(|e| relocate(e, krate, m, i.pos))?,
                )
            }
            None => None,
        };
        let with = with_attr(krate, m, merged.schemars, d)?;
        let (rules, _) = x_kube(krate, m, &parsed.own)?;
        let mut info = TypeInfo {
            def: d,
            module: m,
            ident: def.ident().to_string(),
            span: def.ident().span(),
            is_enum: false,
            style: Style::Struct,
            is_tuple: false,
            fields: Vec::new(),
            variants: Vec::new(),
            tag,
            tag_span,
            deny_unknown_fields: serde_flag(s, "deny_unknown_fields").is_some(),
            transparent,
            default: serde_default(s),
            default_at: serde_flag(s, "default"),
            from,
            with,
            common: common_attrs(krate, m, attrs_, merged.schemars)?,
            derive,
            rules,
        };
        match &def.item {
            DefItem::Struct(st) => {
                info.style = style_of(&st.fields);
                info.is_tuple = matches!(info.style, Style::Newtype | Style::Tuple);
                for (i, f) in st.fields.iter().zip(&parsed.fields).enumerate() {
                    info.fields
                        .push(field_info(krate, m, d, f, i, rename_all, transparent)?);
                }
                if info.style == Style::Struct {
                    one_key_per_field(krate, m, &info.ident, &info.fields)?;
                }
            }
            DefItem::Enum(en) => {
                info.is_enum = true;
                for (v, (v_parsed, f_parsed)) in en.variants.iter().zip(&parsed.variants) {
                    let vm = attrs::merged(v_parsed).map_err(|e| syn_err(krate, m, e))?;
                    let (ser_r, de_r) = rename(&vm.serde, krate, m)?;
                    let vname = unraw(&v.ident);
                    let vrule = rename_rule(&vm.serde, "rename_all", krate, m)?;
                    let frule = (
                        vrule.0.or(rename_all_fields.0),
                        vrule.1.or(rename_all_fields.1),
                    );
                    let mut fields = Vec::new();
                    for (i, f) in v.fields.iter().zip(f_parsed).enumerate() {
                        fields.push(field_info(krate, m, d, f, i, frule, false)?);
                    }
                    if style_of(&v.fields) == Style::Struct {
                        one_key_per_field(krate, m, &format!("{}::{vname}", info.ident), &fields)?;
                    }
                    let skip = serde_flag(&vm.serde, "skip").is_some();
                    info.variants.push(VariantInfo {
                        ident: vname.clone(),
                        de_name: de_r.unwrap_or_else(|| rename_all.1.apply_to_variant(&vname)),
                        ser_name: ser_r.unwrap_or_else(|| rename_all.0.apply_to_variant(&vname)),
                        style: style_of(&v.fields),
                        fields,
                        skip_de: skip || serde_flag(&vm.serde, "skip_deserializing").is_some(),
                        untagged: serde_flag(&vm.serde, "untagged").is_some(),
                        with: with_attr(krate, m, vm.schemars, d)?,
                        common: common_attrs(krate, m, &v.attrs, vm.schemars)?,
                    });
                }
                one_name_per_variant(krate, m, &info, en)?;
            }
            DefItem::Alias(_) => unreachable!("aliases are resolved before"),
        }
        Ok(info)
    }
}

// ---------------------------------------------------------------------------------------------
// The generator side: `Dyn` and the thread-local state it reads.

thread_local! {
    static CTX: RefCell<Option<Rc<Crate>>> = const { RefCell::new(None) };
    static JOBS: RefCell<Vec<Ty>> = const { RefCell::new(Vec::new()) };
    static ERR: RefCell<Option<CrdgenError>> = const { RefCell::new(None) };
    static STACK: RefCell<Vec<DefId>> = const { RefCell::new(Vec::new()) };
    static FLATTEN_IS_OPTION: Cell<bool> = const { Cell::new(false) };
}

/// A placeholder type: its schema is the schema of the [`Ty`] pushed last.
pub(crate) struct Dyn;

fn pop_job() -> Ty {
    JOBS.with(|j| j.borrow_mut().pop())
        .unwrap_or(Ty::Leaf(Leaf::Unit))
}

fn push_job(t: &Ty) {
    JOBS.with(|j| j.borrow_mut().push(t.clone()));
}

fn set_err(e: CrdgenError) {
    ERR.with(|x| {
        let mut x = x.borrow_mut();
        if x.is_none() {
            *x = Some(e);
        }
    });
}

fn krate() -> Rc<Crate> {
    CTX.with(|c| c.borrow().clone())
        .expect("crdgen context is set while generating")
}

impl JsonSchema for Dyn {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Dyn".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let t = pop_job();
        subschema(g, &t)
    }
    fn _schemars_private_non_optional_json_schema(g: &mut SchemaGenerator) -> Schema {
        let t = pop_job();
        non_optional(g, &t)
    }
    fn _schemars_private_is_option() -> bool {
        FLATTEN_IS_OPTION.with(Cell::get)
    }
}

/// Run `f` with the crate installed for [`Dyn`]; the first error raised inside wins.
pub(crate) fn with_crate<R>(krate: Rc<Crate>, f: impl FnOnce() -> R) -> Result<R, CrdgenError> {
    CTX.with(|c| *c.borrow_mut() = Some(krate));
    ERR.with(|e| *e.borrow_mut() = None);
    JOBS.with(|j| j.borrow_mut().clear());
    STACK.with(|s| s.borrow_mut().clear());
    let r = f();
    CTX.with(|c| *c.borrow_mut() = None);
    match ERR.with(|e| e.borrow_mut().take()) {
        Some(e) => Err(e),
        None => Ok(r),
    }
}

fn is_option(t: &Ty) -> bool {
    match t {
        Ty::Option(_) => true,
        Ty::User(d) => {
            let k = krate();
            match TypeInfo::of(&k, *d) {
                Ok(info) => transparent_type(&info)
                    .map(|t| is_option(&t))
                    .unwrap_or(false),
                Err(_) => false,
            }
        }
        _ => false,
    }
}

/// `get_transparent_type`: the type a container forwards everything to.
fn transparent_type(info: &TypeInfo) -> Option<Ty> {
    if let Some(With::Type(t)) = &info.with
        && info.common.is_default()
    {
        return Some(t.clone());
    }
    if info.transparent
        && let Some(f) = info.fields.iter().find(|f| f.transparent_marker)
        && info.common.is_default()
        && f.attrs_default()
    {
        return Some(f.ty.clone());
    }
    None
}

/// `generator.subschema_for::<T>()`.
pub(crate) fn subschema(g: &mut SchemaGenerator, t: &Ty) -> Schema {
    match t {
        Ty::Leaf(l) => leaf_schema(g, *l),
        Ty::Option(inner) => {
            push_job(inner);
            g.subschema_for::<Option<Dyn>>()
        }
        // schemars' impls for sequences and string-keyed maps, with the items' schema moved in
        // where `json_schema!` would serialize a copy of it (quadratic in the nesting of lists).
        Ty::Seq(kind, inner) => {
            let items = subschema(g, inner).to_value();
            let mut s = serde_json::Map::new();
            s.insert("type".into(), "array".into());
            if matches!(kind, SeqKind::BTreeSet | SeqKind::HashSet) {
                s.insert("uniqueItems".into(), true.into());
            }
            s.insert("items".into(), items);
            Schema::from(s)
        }
        Ty::Map(v) => {
            let values = subschema(g, v).to_value();
            let mut s = serde_json::Map::new();
            s.insert("type".into(), "object".into());
            s.insert("additionalProperties".into(), values);
            Schema::from(s)
        }
        Ty::Boxed(inner) => {
            push_job(inner);
            g.subschema_for::<Box<Dyn>>()
        }
        Ty::Tuple(items) => {
            for i in items.iter().rev() {
                push_job(i);
            }
            match items.len() {
                1 => g.subschema_for::<(Dyn,)>(),
                2 => g.subschema_for::<(Dyn, Dyn)>(),
                3 => g.subschema_for::<(Dyn, Dyn, Dyn)>(),
                4 => g.subschema_for::<(Dyn, Dyn, Dyn, Dyn)>(),
                _ => {
                    set_err(CrdgenError::Versions(
                        "tuples of more than 4 elements are not supported statically; use --exact"
                            .into(),
                    ));
                    Schema::default()
                }
            }
        }
        Ty::Array(inner, n) => {
            push_job(inner);
            let mut s = json!({"type": "array", "items": Value::Null});
            let item = pop_job();
            s["items"] = subschema(g, &item).to_value();
            s["minItems"] = (*n).into();
            s["maxItems"] = (*n).into();
            Schema::try_from(s).unwrap_or_default()
        }
        Ty::K8s(p) => match k8s::lookup(p) {
            Some(t) => t.schema(g),
            None => Schema::default(),
        },
        Ty::User(d) => user_schema(g, *d),
    }
}

/// `T::_schemars_private_non_optional_json_schema`.
fn non_optional(g: &mut SchemaGenerator, t: &Ty) -> Schema {
    match t {
        Ty::Option(inner) => non_optional(g, inner),
        Ty::User(d) => {
            let k = krate();
            if let Ok(info) = TypeInfo::of(&k, *d)
                && let Some(inner) = transparent_type(&info)
            {
                return non_optional(g, &inner);
            }
            subschema(g, t)
        }
        _ => subschema(g, t),
    }
}

fn leaf_schema(g: &mut SchemaGenerator, l: Leaf) -> Schema {
    match l {
        Leaf::Bool => g.subschema_for::<bool>(),
        Leaf::I8 => g.subschema_for::<i8>(),
        Leaf::I16 => g.subschema_for::<i16>(),
        Leaf::I32 => g.subschema_for::<i32>(),
        Leaf::I64 => g.subschema_for::<i64>(),
        Leaf::I128 => g.subschema_for::<i128>(),
        Leaf::Isize => g.subschema_for::<isize>(),
        Leaf::U8 => g.subschema_for::<u8>(),
        Leaf::U16 => g.subschema_for::<u16>(),
        Leaf::U32 => g.subschema_for::<u32>(),
        Leaf::U64 => g.subschema_for::<u64>(),
        Leaf::U128 => g.subschema_for::<u128>(),
        Leaf::Usize => g.subschema_for::<usize>(),
        Leaf::F32 => g.subschema_for::<f32>(),
        Leaf::F64 => g.subschema_for::<f64>(),
        Leaf::Char => g.subschema_for::<char>(),
        Leaf::String => g.subschema_for::<String>(),
        Leaf::Unit => g.subschema_for::<()>(),
        Leaf::JsonValue => g.subschema_for::<serde_json::Value>(),
        Leaf::JsonMap => g.subschema_for::<serde_json::Map<String, Value>>(),
        Leaf::PathBuf => g.subschema_for::<std::path::PathBuf>(),
        Leaf::NonZeroU32 => g.subschema_for::<std::num::NonZeroU32>(),
        Leaf::NonZeroU64 => g.subschema_for::<std::num::NonZeroU64>(),
        Leaf::NonZeroI32 => g.subschema_for::<std::num::NonZeroI32>(),
        Leaf::NonZeroI64 => g.subschema_for::<std::num::NonZeroI64>(),
        Leaf::IpAddr => g.subschema_for::<std::net::IpAddr>(),
        Leaf::Ipv4Addr => g.subschema_for::<std::net::Ipv4Addr>(),
        Leaf::Ipv6Addr => g.subschema_for::<std::net::Ipv6Addr>(),
        Leaf::SocketAddr => g.subschema_for::<std::net::SocketAddr>(),
        Leaf::NonZeroU8 => g.subschema_for::<std::num::NonZeroU8>(),
        Leaf::NonZeroU16 => g.subschema_for::<std::num::NonZeroU16>(),
        Leaf::NonZeroU128 => g.subschema_for::<std::num::NonZeroU128>(),
        Leaf::NonZeroUsize => g.subschema_for::<std::num::NonZeroUsize>(),
        Leaf::NonZeroI8 => g.subschema_for::<std::num::NonZeroI8>(),
        Leaf::NonZeroI16 => g.subschema_for::<std::num::NonZeroI16>(),
        Leaf::NonZeroI128 => g.subschema_for::<std::num::NonZeroI128>(),
        Leaf::NonZeroIsize => g.subschema_for::<std::num::NonZeroIsize>(),
        Leaf::SocketAddrV4 => g.subschema_for::<std::net::SocketAddrV4>(),
        Leaf::SocketAddrV6 => g.subschema_for::<std::net::SocketAddrV6>(),
        Leaf::StdDuration => g.subschema_for::<std::time::Duration>(),
        Leaf::SystemTime => g.subschema_for::<std::time::SystemTime>(),
        Leaf::KubeDuration => g.subschema_for::<kube_core::Duration>(),
        // schemars' `formatted_string_impl!` (chrono04, jiff02) and its uuid1 and url2 impls.
        Leaf::FormattedString(format) => schemars::json_schema!({
            "type": "string",
            "format": format,
        }),
        // schemars' semver1 impl.
        Leaf::SemVer => schemars::json_schema!({
            "type": "string",
            "pattern": r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
        }),
    }
}

fn user_schema(g: &mut SchemaGenerator, d: DefId) -> Schema {
    let k = krate();
    if STACK.with(|s| s.borrow().contains(&d)) {
        let def = &k.defs[d];
        // Not a limit of the static reader: through the compiler (`--exact`) schemars emits the
        // same `$ref`, so no command of operator-rs can make a CRD of it.
        let ident = def.ident();
        set_err(CrdgenError::KubeCannotRender {
            loc: k.mod_loc(def.module, ident.span()),
            what: format!(
                "the recursive type `{ident}`: a CRD's schema is structural, with no `$ref`, so it cannot describe a type that contains itself (schemars emits a `$ref` for it, with `--exact` as without, and kube-apiserver refuses it)"
            ),
            fix: format!(
                "bound the depth with distinct types (a `{ident}` holding a `{ident}Leaf` without the recursive field), or make the recursive field schemaless: `#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))] pub children: serde_json::Value`"
            ),
        });
        return Schema::default();
    }
    STACK.with(|s| s.borrow_mut().push(d));
    let r = derive(g, &k, d);
    STACK.with(|s| s.borrow_mut().pop());
    match r {
        Ok(s) => s,
        Err(e) => {
            set_err(e);
            Schema::default()
        }
    }
}

/// The manual `impl JsonSchema for X` of the crate, if any.
fn manual_impl(krate: &Crate, d: DefId) -> Option<(ModId, Span)> {
    for (im, imp) in &krate.impls {
        let Some((_, tp, _)) = &imp.trait_ else {
            continue;
        };
        if tp
            .segments
            .last()
            .map(|s| s.ident != "JsonSchema")
            .unwrap_or(true)
        {
            continue;
        }
        if let syn::Type::Path(p) = &*imp.self_ty
            && matches!(krate.resolve_path(*im, &p.path, 0), Some(crate::crdgen::read::resolve::Res::Def(x)) if x == d)
        {
            return Some((*im, imp.impl_token.span));
        }
    }
    None
}

fn derive(g: &mut SchemaGenerator, krate: &Crate, d: DefId) -> Result<Schema, CrdgenError> {
    let info = TypeInfo::of(krate, d)?;
    match info.derive {
        Some(DeriveKind::JsonSchema) => derive_json(g, krate, &info),
        Some(DeriveKind::KubeSchema) => derive_kube(g, krate, &info),
        None => {
            if let Some((m, span)) = manual_impl(krate, d) {
                return Err(unsupported(
                    krate,
                    m,
                    span,
                    format!("a hand-written `impl JsonSchema for {}`", info.ident),
                    format!(
                        "{FIX_EXACT}, or derive `JsonSchema` and express the schema with attributes"
                    ),
                ));
            }
            Err(unsupported(
                krate,
                info.module,
                info.span,
                format!(
                    "the type `{}`, which does not derive `JsonSchema`",
                    info.ident
                ),
                "add `#[derive(JsonSchema)]` (kube-derive needs it too)",
            ))
        }
    }
}

/// `#[derive(KubeSchema)]`: the derived schema, plus struct rules and per-field x-kube properties.
fn derive_kube(
    g: &mut SchemaGenerator,
    krate: &Crate,
    info: &TypeInfo,
) -> Result<Schema, CrdgenError> {
    let mut s = derive_json(g, krate, info)?;
    for r in &info.rules {
        kube_core::validate(&mut s, r.clone()).map_err(|e| CrdgenError::Versions(e.to_string()))?;
    }
    for f in &info.fields {
        if f.rules.is_empty() && f.merge_strategy.is_none() {
            continue;
        }
        let mut merge = expr_for_struct(
            g,
            krate,
            info,
            std::slice::from_ref(f),
            &info.default,
            info.deny_unknown_fields,
        )?;
        for r in &f.rules {
            kube_core::validate_property(&mut merge, 0, r.clone())
                .map_err(|e| CrdgenError::Versions(e.to_string()))?;
        }
        if let Some(st) = &f.merge_strategy {
            kube_core::merge_strategy_property(&mut merge, 0, st.clone())
                .map_err(|e| CrdgenError::Versions(e.to_string()))?;
        }
        kube_core::merge_properties(&mut s, &mut merge);
    }
    Ok(s)
}

/// `#[derive(JsonSchema)]`: `expr_for_container`.
pub(crate) fn derive_json(
    g: &mut SchemaGenerator,
    krate: &Crate,
    info: &TypeInfo,
) -> Result<Schema, CrdgenError> {
    if let Some(t) = transparent_type(info) {
        return Ok(subschema(g, &t));
    }
    let mut s = if let Some(With::Type(t)) = &info.with {
        subschema(g, t)
    } else if let Some(With::Schema(s)) = &info.with {
        s.clone()
    } else if info.transparent {
        let f = info
            .fields
            .iter()
            .find(|f| f.transparent_marker)
            .ok_or_else(|| {
                unsupported(
                    krate,
                    info.module,
                    info.span,
                    "a transparent type without a serialized field",
                    FIX_EXACT,
                )
            })?;
        only_field_schema(g, krate, info, f)?
    } else if let Some(from) = &info.from {
        subschema(g, from)
    } else if info.is_enum {
        expr_for_enum(g, krate, info)?
    } else {
        match info.style {
            Style::Unit => g.subschema_for::<()>(),
            Style::Newtype => only_field_schema(g, krate, info, &info.fields[0])?,
            Style::Tuple => expr_for_tuple(g, krate, info, &info.fields)?,
            Style::Struct => expr_for_struct(
                g,
                krate,
                info,
                &info.fields,
                &info.default,
                info.deny_unknown_fields,
            )?,
        }
    };
    info.common.apply(&mut s);
    info.common.apply_post(&mut s);
    Ok(s)
}

/// `expr_for_field` without its post-mutators (the caller adds the default first).
fn field_schema(
    g: &mut SchemaGenerator,
    krate: &Crate,
    info: &TypeInfo,
    f: &FieldInfo,
) -> Result<Schema, CrdgenError> {
    let _ = (krate, info);
    let mut s = match &f.with {
        Some(With::Schema(s)) => s.clone(),
        _ if f.validation.required => non_optional(g, f.schema_type()),
        _ => subschema(g, f.schema_type()),
    };
    f.common.apply(&mut s);
    f.validation.apply(&mut s);
    if f.skip_de {
        s.insert("readOnly".into(), true.into());
    }
    if f.skip_ser {
        s.insert("writeOnly".into(), true.into());
    }
    Ok(s)
}

fn expr_for_tuple(
    g: &mut SchemaGenerator,
    krate: &Crate,
    info: &TypeInfo,
    fields: &[FieldInfo],
) -> Result<Schema, CrdgenError> {
    let mut prefix = Vec::new();
    for f in fields.iter().filter(|f| !f.skip_de) {
        let mut s = field_schema(g, krate, info, f)?;
        f.common.apply_post(&mut s);
        prefix.push(s.to_value());
    }
    let len = prefix.len();
    let mut map = serde_json::Map::new();
    map.insert("type".into(), "array".into());
    if !prefix.is_empty() {
        map.insert("prefixItems".into(), prefix.into());
        map.insert("minItems".into(), len.into());
    }
    map.insert("maxItems".into(), len.into());
    Ok(Schema::from(map))
}

fn expr_for_struct(
    g: &mut SchemaGenerator,
    krate: &Crate,
    info: &TypeInfo,
    fields: &[FieldInfo],
    default: &SerdeDefault,
    deny: bool,
) -> Result<Schema, CrdgenError> {
    let mut schema = if deny {
        Schema::try_from(json!({"type": "object", "additionalProperties": false}))
            .unwrap_or_default()
    } else {
        Schema::try_from(json!({"type": "object"})).unwrap_or_default()
    };
    // The container default, member by member, computed once when a field needs it.
    let mut container_default: Option<Vec<Value>> = None;
    // Which field gave each property, for clashes through a flattened field.
    let mut keys: HashMap<String, &FieldInfo> = HashMap::new();
    for f in fields.iter().filter(|f| !f.skip_de) {
        if f.flatten {
            if let Some(With::Schema(_)) = &f.with {
                return Err(unsupported(
                    krate,
                    info.module,
                    f.span,
                    "a `#[serde(flatten)]` field with `schema_with`",
                    FIX_EXACT,
                ));
            }
            let ty = f.schema_type().clone();
            FLATTEN_IS_OPTION.with(|c| c.set(is_option(&ty)));
            push_job(&ty);
            let sub = sp::json_schema_for_flatten::<Dyn>(g, f.validation.required);
            FLATTEN_IS_OPTION.with(|c| c.set(false));
            let flattened = (sub.get("properties").and_then(Value::as_object))
                .map(|p| p.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default();
            for key in flattened {
                claim_key(krate, info, &mut keys, key, f)?;
            }
            sp::flatten(&mut schema, sub);
            continue;
        }
        claim_key(krate, info, &mut keys, f.de_name.clone(), f)?;
        let mut s = field_schema(g, krate, info, f)?;
        let container_has_default = *default != SerdeDefault::None;
        if !(f.skip_ser || (f.default == SerdeDefault::None && !container_has_default)) {
            let mut ev = Eval::new(krate);
            let value = match &f.default {
                SerdeDefault::None => {
                    if container_default.is_none() {
                        container_default = Some(container_default_members(krate, info, default)?);
                    }
                    let idx = info
                        .fields
                        .iter()
                        .position(|x| x.ident == f.ident)
                        .unwrap_or(0);
                    container_default
                        .as_ref()
                        .and_then(|c| c.get(idx).cloned())
                        .unwrap_or(Value::Null)
                }
                SerdeDefault::Default => ev.default_value(&f.ty, info.module, f.span)?,
                SerdeDefault::Path(p) => {
                    ev.call_fn(p, &f.ty, info.module, Some(info.def), f.span)?
                }
            };
            let keep = match &f.skip_ser_if {
                Some(pred) => !ev.predicate(pred, &value, info.module, f.span)?,
                None => true,
            };
            if keep {
                s.insert("default".into(), value);
            }
        }
        f.common.apply_post(&mut s);
        let has_default = container_has_default || f.default != SerdeDefault::None;
        let has_skip_if = f.skip_ser_if.is_some();
        let required_attr = f.validation.required;
        // A `schema_with` function's schema is never an `Option`'s (schemars asks the function's
        // stand-in type, which is not one).
        let of_option = match &f.with {
            Some(With::Schema(_)) => false,
            _ => is_option(f.schema_type()),
        };
        let is_optional = if has_skip_if && has_default {
            true
        } else {
            has_default || (!required_attr && of_option)
        };
        sp::insert_object_property(&mut schema, &f.de_name, is_optional, s);
    }
    Ok(schema)
}

/// Records that `field` gives the property `key` of `info`'s object, refusing a key another
/// field gave already. Through `#[serde(flatten)]` (a flattened struct's field named as one of the
/// outer struct's, or as one of another flattened struct's), serde compiles both: it writes the key
/// twice and, reading, gives it to the first field only (the other's is then missing), and the
/// CRD keeps one property. Two named fields are refused before ([`one_key_per_field`]).
fn claim_key<'f>(
    krate: &Crate,
    info: &TypeInfo,
    keys: &mut HashMap<String, &'f FieldInfo>,
    key: String,
    field: &'f FieldInfo,
) -> Result<(), CrdgenError> {
    let via = |f: &FieldInfo| {
        if f.flatten {
            format!("the flattened field `{}`", f.ident)
        } else {
            format!("the field `{}`", f.ident)
        }
    };
    if let Some(other) = keys.get(&key) {
        return Err(CrdgenError::Source {
            loc: krate.mod_loc(info.module, field.span),
            what: format!(
                "{} of `{}` gives the JSON key {key:?}, and so does {} (at {}): serde writes the key twice and reads it into one of them only, and the CRD has one property for both; give each a key of its own, e.g. `#[serde(rename = \"{key}2\")]` on the field named {key:?}",
                via(field),
                info.ident,
                via(other),
                krate.mod_loc(info.module, other.span),
            ),
        });
    }
    keys.insert(key, field);
    Ok(())
}

/// The members of the container's default value (`Self::default()` or `path()`), serialized.
fn container_default_members(
    krate: &Crate,
    info: &TypeInfo,
    default: &SerdeDefault,
) -> Result<Vec<Value>, CrdgenError> {
    let mut ev = Eval::new(krate);
    let whole = match default {
        SerdeDefault::Default => ev.user_default(info.def, info.span)?,
        SerdeDefault::Path(p) => ev.call_fn(
            p,
            &Ty::User(info.def),
            info.module,
            Some(info.def),
            info.span,
        )?,
        SerdeDefault::None => Value::Null,
    };
    // Re-derive member values: serialized object keyed by serialize names (skipped members absent).
    let mut out = Vec::new();
    for f in &info.fields {
        let v = whole.get(&f.ser_name).cloned();
        match v {
            Some(v) => out.push(v),
            None if f.skip_ser => out.push(Value::Null),
            None => {
                // Omitted by skip_serializing_if: the member's value is what the predicate skipped.
                out.push(
                    match f
                        .skip_ser_if
                        .as_deref()
                        .map(|p| p.rsplit("::").next().unwrap_or(p))
                    {
                        Some("is_none") => Value::Null,
                        Some("is_empty") => ev.default_value(&f.ty, info.module, f.span)?,
                        _ => Value::Null,
                    },
                );
            }
        }
    }
    Ok(out)
}

fn expr_for_enum(
    g: &mut SchemaGenerator,
    krate: &Crate,
    info: &TypeInfo,
) -> Result<Schema, CrdgenError> {
    if info.variants.is_empty() {
        return Ok(Schema::from(false));
    }
    let deny = info.deny_unknown_fields;
    match &info.tag {
        Tag::Internal(t) if tagged_variants(info) < 2 => Err(unsupported(
            krate,
            info.module,
            info.tag_span,
            format!(
                "the internally tagged enum `{}` (`#[serde(tag = {t:?})]`) with one variant (internal tagging is not emulated)",
                info.ident
            ),
            FIX_EXACT,
        )),
        Tag::Internal(t) => Err(tag_conflict(
            krate,
            info,
            format!("internally tagged (`#[serde(tag = {t:?})]`)"),
        )),
        Tag::Adjacent(t, c) if tagged_variants(info) >= 2 => Err(tag_conflict(
            krate,
            info,
            format!("adjacently tagged (`#[serde(tag = {t:?}, content = {c:?})]`)"),
        )),
        Tag::External => {
            let live: Vec<&VariantInfo> = info.variants.iter().filter(|v| !v.skip_de).collect();
            let has_unit = live.iter().any(|v| v.style == Style::Unit && !v.untagged);
            let has_data = live.iter().any(|v| v.style != Style::Unit || v.untagged);
            if has_unit && has_data {
                return Err(CrdgenError::KubeCannotRender {
                    loc: krate.mod_loc(info.module, info.span),
                    what: format!(
                        "the enum `{}` mixes unit and data variants: kube-core's structural rewriter panics on it in `crd()`",
                        info.ident
                    ),
                    fix: "make every variant carry data (e.g. `Variant {}`), or split the enum"
                        .into(),
                });
            }
            let (unit, complex): (Vec<&VariantInfo>, Vec<&VariantInfo>) = live
                .iter()
                .partition(|v| v.style == Style::Unit && v.attrs_default() && !v.untagged);
            let mut unit_map = serde_json::Map::new();
            unit_map.insert("type".into(), "string".into());
            unit_map.insert(
                "enum".into(),
                Value::Array(
                    unit.iter()
                        .map(|v| Value::from(v.de_name.clone()))
                        .collect(),
                ),
            );
            let unit_schema = Schema::from(unit_map);
            if complex.is_empty() {
                return Ok(unit_schema);
            }
            let mut schemas: Vec<Value> = Vec::new();
            if !unit.is_empty() {
                schemas.push(unit_schema.to_value());
            }
            let mut unique = true;
            for v in complex {
                if v.untagged {
                    unique = false;
                    schemas.push(untagged_variant(g, krate, info, v, deny, true)?.to_value());
                    continue;
                }
                let mut s = if v.style == Style::Unit && v.with.is_none() {
                    sp::new_unit_enum_variant(&v.de_name)
                } else {
                    let sub = untagged_variant(g, krate, info, v, deny, false)?;
                    externally_tagged_variant(&v.de_name, sub)
                };
                v.common.apply(&mut s);
                v.common.apply_post(&mut s);
                schemas.push(s.to_value());
            }
            Ok(one_of(unique, schemas))
        }
        Tag::Untagged => {
            let mut schemas = Vec::new();
            for v in info.variants.iter().filter(|v| !v.skip_de) {
                schemas.push(untagged_variant(g, krate, info, v, deny, true)?.to_value());
            }
            Ok(one_of(false, schemas))
        }
        Tag::Adjacent(tag, content) => {
            let mut schemas = Vec::new();
            let mut unique = true;
            for v in info.variants.iter().filter(|v| !v.skip_de) {
                if v.untagged {
                    unique = false;
                    schemas.push(untagged_variant(g, krate, info, v, deny, true)?.to_value());
                    continue;
                }
                let mut props = serde_json::Map::new();
                props.insert(tag.clone(), json!({"type": "string", "const": v.de_name}));
                let mut required = vec![Value::from(tag.clone())];
                if !(v.style == Style::Unit && v.with.is_none()) {
                    props.insert(
                        content.clone(),
                        untagged_variant(g, krate, info, v, deny, false)?.to_value(),
                    );
                    required.push(content.clone().into());
                }
                let mut obj = serde_json::Map::new();
                obj.insert("type".into(), "object".into());
                obj.insert("properties".into(), props.into());
                obj.insert("required".into(), required.into());
                if deny {
                    obj.insert("additionalProperties".into(), false.into());
                }
                let mut s = Schema::from(obj);
                v.common.apply(&mut s);
                v.common.apply_post(&mut s);
                schemas.push(s.to_value());
            }
            Ok(one_of(unique, schemas))
        }
    }
}

/// `schemars::_private::new_externally_tagged_enum_variant`, with the variant's schema moved in
/// rather than serialized into a copy.
fn externally_tagged_variant(variant: &str, sub: Schema) -> Schema {
    let mut obj = serde_json::Map::new();
    obj.insert("type".into(), "object".into());
    let mut props = serde_json::Map::new();
    props.insert(variant.into(), sub.to_value());
    obj.insert("properties".into(), props.into());
    obj.insert("required".into(), vec![Value::from(variant)].into());
    obj.insert("additionalProperties".into(), false.into());
    Schema::from(obj)
}

/// The variants that carry a tag (deserializable, not `#[serde(untagged)]`).
fn tagged_variants(info: &TypeInfo) -> usize {
    info.variants
        .iter()
        .filter(|v| !v.skip_de && !v.untagged)
        .count()
}

/// kube-core's structural rewriter hoists the variants' properties into one object and panics
/// when the tag property differs between them, which it does for every internally or adjacently
/// tagged enum with two variants or more (kube-rs/kube#1279).
fn tag_conflict(krate: &Crate, info: &TypeInfo, how: String) -> CrdgenError {
    CrdgenError::KubeCannotRender {
        loc: krate.mod_loc(info.module, info.tag_span),
        what: format!(
            "the {how} enum `{}`: kube-core's structural rewriter panics on it in `crd()` (the tag property differs per variant; kube-rs/kube#1279)",
            info.ident
        ),
        fix: "use an externally tagged enum, `#[serde(untagged)]`, or a struct with a `type` field and optional members".into(),
    }
}

fn one_of(unique: bool, schemas: Vec<Value>) -> Schema {
    let mut map = serde_json::Map::new();
    map.insert(
        if unique { "oneOf" } else { "anyOf" }.into(),
        Value::Array(schemas),
    );
    Schema::from(map)
}

fn untagged_variant(
    g: &mut SchemaGenerator,
    krate: &Crate,
    info: &TypeInfo,
    v: &VariantInfo,
    deny: bool,
    actually_untagged: bool,
) -> Result<Schema, CrdgenError> {
    let mut s = if let Some(With::Type(t)) = &v.with {
        subschema(g, t)
    } else if let Some(With::Schema(s)) = &v.with {
        s.clone()
    } else {
        match v.style {
            Style::Unit => g.subschema_for::<()>(),
            Style::Newtype => only_field_schema(g, krate, info, &v.fields[0])?,
            Style::Tuple => expr_for_tuple(g, krate, info, &v.fields)?,
            Style::Struct => expr_for_struct(g, krate, info, &v.fields, &SerdeDefault::None, deny)?,
        }
    };
    if actually_untagged {
        v.common.apply(&mut s);
        v.common.apply_post(&mut s);
    }
    Ok(s)
}

/// What the schema of the root struct kube-derive generates (`Kind { metadata, spec, status }`) is
/// made from.
#[derive(Debug, Clone)]
pub(crate) struct RootSpec {
    pub spec: Ty,
    pub status: Option<Ty>,
    pub no_spec: bool,
    pub doc: String,
    pub root_name: String,
    pub rules: Vec<Rule>,
}

/// The root's schema as `into_root_schema_for` makes it, before the generator's transforms (which
/// [`crate::crdgen::derive::transforms::run`] applies).
pub(crate) fn root_schema(g: &mut SchemaGenerator, root: &RootSpec) -> Schema {
    let mut s = Schema::try_from(json!({"type": "object"})).unwrap_or_default();
    if root.no_spec {
        FLATTEN_IS_OPTION.with(|c| c.set(false));
        push_job(&root.spec);
        let sub = sp::json_schema_for_flatten::<Dyn>(g, false);
        sp::flatten(&mut s, sub);
    } else {
        let spec = subschema(g, &root.spec);
        sp::insert_object_property(&mut s, "spec", is_option(&root.spec), spec);
    }
    if let Some(st) = &root.status {
        let status = subschema(g, &Ty::Option(Box::new(st.clone())));
        sp::insert_object_property(&mut s, "status", true, status);
    }
    let doc = root.doc.strip_prefix(' ').unwrap_or(&root.doc);
    let (title, desc) = sp::get_title_and_description(doc);
    sp::insert_metadata_property_if_nonempty(&mut s, "title", title.to_string());
    sp::insert_metadata_property_if_nonempty(&mut s, "description", desc.to_string());
    for r in &root.rules {
        if let Err(e) = kube_core::validate(&mut s, r.clone()) {
            set_err(CrdgenError::Versions(e.to_string()));
        }
    }
    let obj = s.ensure_object();
    obj.entry("title")
        .or_insert_with(|| root.root_name.as_str().into());
    let defs = g.take_definitions(false);
    if !defs.is_empty() {
        let comps = obj
            .entry("components")
            .or_insert_with(|| json!({}))
            .as_object_mut();
        if let Some(c) = comps
            && let Value::Object(_) = c.entry("schemas").or_insert_with(|| json!({}))
            && let Some(Value::Object(target)) = c.get_mut("schemas")
        {
            target.extend(defs);
        }
    }
    s
}

/// The last segment of a path expression (`Message::Expression` → `Expression`).
fn last_path_ident(e: &syn::Expr) -> Option<String> {
    let syn::Expr::Path(p) = e else { return None };
    p.path.segments.last().map(|x| x.ident.to_string())
}

/// The schema of a single field standing for its container (a newtype, a transparent struct):
/// the field's schema with its attributes applied after it, as schemars' derive does.
fn only_field_schema(
    g: &mut SchemaGenerator,
    krate: &Crate,
    info: &TypeInfo,
    f: &FieldInfo,
) -> Result<Schema, CrdgenError> {
    let mut s = field_schema(g, krate, info, f)?;
    f.common.apply_post(&mut s);
    Ok(s)
}
