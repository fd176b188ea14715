//! The type model, what reading a type gives: what serde's, schemars' and kube's attributes say
//! about each type of the crate ([`TypeInfo`]: its fields, variants, tagging, renames, defaults,
//! validations and CEL rules), read once per crate and cached by definition, and where each rule
//! and schema keyword an attribute set was written (each [`TypeInfo`]'s
//! [`super::sources::Sources`]). `derive::schema` turns it into schemas.
//!
//! Its children evaluate what the attributes and defaults write: [`values`] (literals, constants,
//! `Default` impls, as serde would serialize them) and [`schema_fn`] (`schema_with` functions).
//! They are children because the model and they need each other: reading a type evaluates the
//! constants of its attributes, and a default's value is its type's serde form, which the model
//! says.

pub mod schema_fn;
pub mod values;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use proc_macro2::Span;
use schemars::{_private as sp, Schema};
use serde_json::Value;
use syn::spanned::Spanned;

use crate::crdgen::error::{CrdgenError, FIX_EXACT};
use crate::crdgen::read::attrs::{self, MetaItem, MetaKind, RenameRule};
use crate::crdgen::read::loader::{Crate, DefId, DefItem, ModId};
use crate::crdgen::read::place_attrs::PlaceAttrs;
use crate::crdgen::read::resolve::{Leaf, Ty};
use crate::crdgen::read::sources::Sources;
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
    pub(crate) fn is_default(&self) -> bool {
        self.doc.is_none()
            && self.title.is_none()
            && self.description.is_none()
            && !self.deprecated
            && self.examples.is_empty()
            && self.extensions.is_empty()
    }

    pub(crate) fn apply(&self, s: &mut Schema) {
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

    pub(crate) fn apply_post(&self, s: &mut Schema) {
        for (k, v) in &self.extensions {
            s.insert(k.clone(), v.clone());
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) enum With {
    Type(Ty),
    /// `schema_with = "f"`: the schema `f` returns (see [`schema_fn`](crate::crdgen::read::type_info::schema_fn)).
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

    pub(crate) fn is_default(&self) -> bool {
        self.length.is_none()
            && self.range.is_none()
            && self.pattern.is_none()
            && self.contains.is_none()
            && !self.required
            && self.format.is_none()
            && self.inner.is_none()
    }

    pub(crate) fn apply(&self, s: &mut Schema) {
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

    pub(crate) fn attrs_default(&self) -> bool {
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
    pub(crate) fn attrs_default(&self) -> bool {
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
    /// Where its rules and attribute-set keywords (its fields' and variants' too) were written.
    pub sources: Sources,
}

pub(crate) fn unsupported(
    krate: &Model,
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

fn syn_err(krate: &Model, m: ModId, e: impl Into<attrs::AttrError>) -> CrdgenError {
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
    krate: &Model,
    m: ModId,
    attrs_: &[syn::Attribute],
    items: &[MetaItem],
    sources: &mut Sources,
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
                    sources.attr_written(&k, &v, krate.mod_loc(m, it.pos));
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
    krate: &Model,
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
    krate: &Model,
    m: ModId,
    items: &[MetaItem],
    dialect: Dialect,
    sources: &mut Sources,
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
                        sources.attr_written("pattern", &p, krate.mod_loc(m, it.pos));
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
                v.inner = Some(Box::new(validation_attrs(
                    krate, m, &nested, dialect, sources,
                )?));
            }
            _ => {}
        }
    }
    Ok(v)
}

fn with_attr(
    krate: &Model,
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
fn relocate(e: CrdgenError, krate: &Model, m: ModId, span: Pos) -> CrdgenError {
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
    krate: &Model,
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
    krate: &Model,
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
    krate: &Model,
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
    krate: &Model,
    m: ModId,
    place: &PlaceAttrs,
    sources: &mut Sources,
) -> Result<(Vec<Rule>, Option<kube_core::cel::MergeStrategy>), CrdgenError> {
    let items = place
        .x_kube
        .as_ref()
        .map_err(|e| syn_err(krate, m, e.clone()))?;
    let mut rules = Vec::new();
    let mut strategy = None;
    for it in items {
        match (it.name.as_str(), &it.kind) {
            ("validation", MetaKind::Value(e)) => {
                rules.push(eval_rule(krate, m, &e.expr(), sources)?)
            }
            ("merge_strategy", MetaKind::Value(e)) => {
                strategy = Some(eval_merge_strategy(krate, m, &e.expr())?)
            }
            _ => {}
        }
    }
    Ok((rules, strategy))
}

/// Evaluate a CEL rule: `"expr"`, `("expr", "message")` or a `Rule::new(..)` builder chain;
/// `sources` records where it was written.
pub(crate) fn eval_rule(
    krate: &Model,
    m: ModId,
    e: &syn::Expr,
    sources: &mut Sources,
) -> Result<Rule, CrdgenError> {
    let rule = eval_rule_inner(krate, m, e)?;
    sources.rule_written(&rule.rule, krate.mod_loc(m, e.span()));
    Ok(rule)
}

fn eval_rule_inner(krate: &Model, m: ModId, e: &syn::Expr) -> Result<Rule, CrdgenError> {
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
    krate: &Model,
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
    krate: &Model,
    m: ModId,
    d: DefId,
    (f, place): (&syn::Field, &PlaceAttrs),
    index: usize,
    rule: (RenameRule, RenameRule),
    container_transparent: bool,
    sources: &mut Sources,
) -> Result<FieldInfo, CrdgenError> {
    let merged = place.merged().map_err(|e| syn_err(krate, m, e))?;
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
    let validation = validation_attrs(krate, m, merged.schemars, Dialect::Schemars, sources)?
        .or(validation_attrs(
            krate,
            m,
            merged.validate,
            Dialect::Validate,
            sources,
        )?)
        .or(validation_attrs(krate, m, garde, Dialect::Garde, sources)?);
    let (rules, merge_strategy) = x_kube(krate, m, place, sources)?;
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
        common: common_attrs(krate, m, &f.attrs, merged.schemars, sources)?,
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
    krate: &Model,
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
    krate: &Model,
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

/// A crate as the read stage hands it on: the [`Crate`] loaded (reached through `Deref`, so a
/// `&Model` goes wherever a `&Crate` does) and its type model, the [`TypeInfo`] of each
/// definition asked for, cached with the crate it describes. Schemas are inlined, so a type is
/// asked for at every place it is used (hundreds of times in large CRDs); keeping the cache in
/// the value the stages pass along (not in a thread-local) means it can never answer for another
/// crate.
pub(crate) struct Model {
    krate: Crate,
    infos: RefCell<TypeInfos>,
}

/// The cache of [`TypeInfo`]s: by definition, and those whose [`Sources`]
/// [`Model::take_sources`] has not handed over yet, in reading order.
#[derive(Default)]
struct TypeInfos {
    by_def: HashMap<DefId, Rc<TypeInfo>>,
    unhanded: Vec<Rc<TypeInfo>>,
}

impl Model {
    /// The crate `krate`, with no type read yet.
    pub(crate) fn new(krate: Crate) -> Model {
        Model {
            krate,
            infos: RefCell::default(),
        }
    }

    /// Where the rules and attribute-set keywords of the types read since the last call were
    /// written, in reading order: the driver adds them to what it hands the checks.
    pub(crate) fn take_sources(&self) -> Sources {
        let read = std::mem::take(&mut self.infos.borrow_mut().unhanded);
        let mut sources = Sources::default();
        for info in read {
            sources.extend(&info.sources);
        }
        sources
    }
}

impl std::ops::Deref for Model {
    type Target = Crate;

    fn deref(&self) -> &Crate {
        &self.krate
    }
}

impl TypeInfo {
    /// The attributes and fields of a definition, read once per crate.
    pub fn of(krate: &Model, d: DefId) -> Result<Rc<TypeInfo>, CrdgenError> {
        if let Some(info) = krate.infos.borrow().by_def.get(&d).cloned() {
            return Ok(info);
        }
        // Not borrowed while reading: reading a type reads others (its constants' types).
        let info = Rc::new(Self::read(krate, d)?);
        let mut infos = krate.infos.borrow_mut();
        infos.by_def.insert(d, info.clone());
        infos.unhanded.push(info.clone());
        Ok(info)
    }

    fn read(krate: &Model, d: DefId) -> Result<TypeInfo, CrdgenError> {
        let def = &krate.defs[d];
        let m = def.module;
        let attrs_ = def.attrs();
        let parsed = &krate.attrs[d];
        let merged = parsed.own.merged().map_err(|e| syn_err(krate, m, e))?;
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
        let mut sources = Sources::default();
        let (rules, _) = x_kube(krate, m, &parsed.own, &mut sources)?;
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
            common: common_attrs(krate, m, attrs_, merged.schemars, &mut sources)?,
            derive,
            rules,
            sources: Sources::default(),
        };
        match &def.item {
            DefItem::Struct(st) => {
                info.style = style_of(&st.fields);
                info.is_tuple = matches!(info.style, Style::Newtype | Style::Tuple);
                for (i, f) in st.fields.iter().zip(&parsed.fields).enumerate() {
                    info.fields.push(field_info(
                        krate,
                        m,
                        d,
                        f,
                        i,
                        rename_all,
                        transparent,
                        &mut sources,
                    )?);
                }
                if info.style == Style::Struct {
                    one_key_per_field(krate, m, &info.ident, &info.fields)?;
                }
            }
            DefItem::Enum(en) => {
                info.is_enum = true;
                for (v, (v_parsed, f_parsed)) in en.variants.iter().zip(&parsed.variants) {
                    let vm = v_parsed.merged().map_err(|e| syn_err(krate, m, e))?;
                    let (ser_r, de_r) = rename(&vm.serde, krate, m)?;
                    let vname = unraw(&v.ident);
                    let vrule = rename_rule(&vm.serde, "rename_all", krate, m)?;
                    let frule = (
                        vrule.0.or(rename_all_fields.0),
                        vrule.1.or(rename_all_fields.1),
                    );
                    let mut fields = Vec::new();
                    for (i, f) in v.fields.iter().zip(f_parsed).enumerate() {
                        fields.push(field_info(krate, m, d, f, i, frule, false, &mut sources)?);
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
                        common: common_attrs(krate, m, &v.attrs, vm.schemars, &mut sources)?,
                    });
                }
                one_name_per_variant(krate, m, &info, en)?;
            }
            DefItem::Alias(_) => unreachable!("aliases are resolved before"),
        }
        info.sources = sources;
        Ok(info)
    }
}

/// The last segment of a path expression (`Message::Expression` → `Expression`).
fn last_path_ident(e: &syn::Expr) -> Option<String> {
    let syn::Expr::Path(p) = e else { return None };
    p.path.segments.last().map(|x| x.ident.to_string())
}
