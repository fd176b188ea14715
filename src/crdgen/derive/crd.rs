//! `#[derive(CustomResource)]`: finds the deriving structs, reads every `#[kube(...)]` attribute,
//! and builds the `CustomResourceDefinition` exactly as kube-derive 5's `crd()` does (same
//! `SchemaGenerator` settings and transforms), then merges versions with `kube_core::crd::merge_crds`.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::Once;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use crate::crdgen::derive::schema::{self, RootSpec};
use crate::crdgen::derive::structural;
use crate::crdgen::derive::transforms::{self, Rewriter};
use crate::crdgen::error::{CrdgenError, FIX_EXACT, Location};
use crate::crdgen::read::attrs::{self, MetaItem, MetaKind};
use crate::crdgen::read::loader::{DefId, DefItem};
use crate::crdgen::read::resolve::Ty;
use crate::crdgen::read::sources::Sources;
use crate::crdgen::read::type_info::{self, Model, Rule};
use crate::syntax::Pos;

/// One `#[derive(CustomResource)]` struct, its attributes read.
#[derive(Debug, Clone)]
pub(crate) struct KindDef {
    pub def: DefId,
    pub loc: Location,
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub storage: bool,
    pub crd: apiext::CustomResourceDefinition,
    /// The CRD's text, when it was rendered while the next kinds were built.
    pub rendered: Option<crate::crdgen::kind::Rendered>,
    /// Where its `#[kube(...)]` wrote what the version sets beside its schema.
    pub written: VersionAttrs,
    /// Its `#[kube(status = "..")]` type, as written.
    pub status: Option<String>,
    /// Which crate root it was read from (an index into the crates [`crate::crdgen::read`] loaded).
    pub krate: usize,
    /// Its schema, until it is finished (and set in `crd`).
    pub pending: Option<PendingSchema>,
    /// What its schema was made from (kube-core's rewriter is rerun over it for its message).
    pub root_spec: Option<RootSpec>,
    /// Where its `#[kube(validation = ...)]` rules were written.
    pub sources: Sources,
}

/// A kind's schema as the generator made it, before the generator's transforms and the conversion
/// to `JSONSchemaProps`: plain JSON, so both can run on another core, where the CRD is rendered
/// (they are a third of building a kind).
#[derive(Debug, Clone)]
pub(crate) struct PendingSchema {
    schema: schemars::Schema,
    /// Where a refusal of it points (the kind's name), and the kind's type name.
    loc: Location,
    ident: String,
}

/// Why a [`PendingSchema`] was not finished.
pub(crate) enum Refused {
    /// kube-core's rewriter would panic: [`KindDef::rerun_kube_core`] gives its message.
    Conflict,
    Error(CrdgenError),
}

impl PendingSchema {
    /// The generator's transforms (with the linear rewrite), then the `JSONSchemaProps`.
    pub fn finish(mut self) -> Result<apiext::JSONSchemaProps, Refused> {
        let mut generator = transforms::generator(Rewriter::Linear);
        let ran = catch_quietly(AssertUnwindSafe(|| {
            transforms::run(generator.transforms_mut(), &mut self.schema)
        }));
        match ran {
            Ok(()) => props(self.schema.to_value(), &self.loc, &self.ident).map_err(Refused::Error),
            Err(p) if p.is::<structural::Conflict>() => Err(Refused::Conflict),
            Err(p) => Err(Refused::Error(Self::panicked(&self.loc, &self.ident, p))),
        }
    }

    /// The refusal of a schema whose generator or transforms panic with `p`.
    fn panicked(loc: &Location, ident: &str, p: Box<dyn std::any::Any + Send>) -> CrdgenError {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        CrdgenError::KubeCannotRender {
            loc: loc.clone(),
            what: format!("kube-core's schema transforms panic on `{ident}`'s schema: {msg}"),
            fix: "change the enum or field that the message names (kube-derive's `crd()` would panic the same way)".into(),
        }
    }
}

/// A finished schema as kube-derive's `crd()` deserializes it (where it would panic, a refusal).
fn props(
    value: Value,
    loc: &Location,
    ident: &str,
) -> Result<apiext::JSONSchemaProps, CrdgenError> {
    serde_json::from_value(value).map_err(|e| CrdgenError::KubeCannotRender {
        loc: loc.clone(),
        what: format!("the schema of `{ident}` is not a valid JSONSchemaProps ({e}); kube-derive's `crd()` would panic"),
        fix: FIX_EXACT.into(),
    })
}

/// Put a finished schema in its one-version CRD.
pub(crate) fn set_schema(
    crd: &mut apiext::CustomResourceDefinition,
    props: apiext::JSONSchemaProps,
) {
    if let Some(v) = crd.spec.versions.first_mut() {
        v.schema = Some(apiext::CustomResourceValidation {
            open_api_v3_schema: Some(props),
        });
    }
}

impl KindDef {
    /// Finish the kind's pending schema here (where no other core does it).
    pub fn finish_schema(&mut self, krate: &Rc<Model>) -> Result<(), CrdgenError> {
        let Some(pending) = self.pending.take() else {
            return Ok(());
        };
        let finished = pending.finish();
        self.finished(krate, finished)
    }

    /// Take in the outcome of finishing the kind's schema: set in `crd`, or the refusal.
    pub fn finished(
        &mut self,
        krate: &Rc<Model>,
        outcome: Result<apiext::JSONSchemaProps, Refused>,
    ) -> Result<(), CrdgenError> {
        let props = match outcome {
            Ok(props) => props,
            Err(Refused::Error(e)) => return Err(e),
            Err(Refused::Conflict) => self.rerun_kube_core(krate)?,
        };
        set_schema(&mut self.crd, props);
        Ok(())
    }

    /// kube-core's own rewriter over the kind's schema, where the linear one found a conflict:
    /// its panic, as the refusal (or, were it not to panic, its schema).
    fn rerun_kube_core(&self, krate: &Rc<Model>) -> Result<apiext::JSONSchemaProps, CrdgenError> {
        let ident = krate.defs[self.def].ident().to_string();
        let spec = self
            .root_spec
            .as_ref()
            .expect("a kind with a schema keeps its root spec");
        let value = schema::with_crate(krate.clone(), || {
            catch_quietly(AssertUnwindSafe(|| {
                let mut g = transforms::generator(Rewriter::KubeCore);
                let mut s = schema::root_schema(&mut g, spec);
                transforms::run(g.transforms_mut(), &mut s);
                s.to_value()
            }))
        })?
        .map_err(|p| PendingSchema::panicked(&self.loc, &ident, p))?;
        props(value, &self.loc, &ident)
    }
}

/// Where the items of a kind's `#[kube(...)]` that set its version's printer columns, selectable
/// fields, scale subresource and deprecation are (a refusal of one points at it).
#[derive(Debug, Clone, Default)]
pub(crate) struct VersionAttrs {
    /// Each `printcolumn(..)`, in the order of the columns.
    pub printcolumns: Vec<Location>,
    /// Each `selectable = ".."`, in the order of the fields.
    pub selectable: Vec<Location>,
    pub scale: Option<Location>,
    pub deprecated: Option<Location>,
}

fn bad_attr(krate: &Model, d: DefId, span: impl Into<Pos>, what: String) -> CrdgenError {
    CrdgenError::Source {
        loc: krate.def_loc(d, span),
        what,
    }
}

fn str_of(krate: &Model, d: DefId, it: &MetaItem) -> Result<String, CrdgenError> {
    match &it.kind {
        MetaKind::Value(e) => match e.str() {
            Some(s) => Ok(s),
            None => Err(bad_attr(
                krate,
                d,
                it.pos,
                format!("`#[kube({} = ...)]` expects a string literal", it.name),
            )),
        },
        _ => Err(bad_attr(
            krate,
            d,
            it.pos,
            format!("`#[kube({} = ...)]` expects a value", it.name),
        )),
    }
}

fn bool_of(krate: &Model, d: DefId, it: &MetaItem) -> Result<bool, CrdgenError> {
    match &it.kind {
        MetaKind::Flag => Ok(true),
        MetaKind::Value(e)
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            }) = &*e.expr() =>
        {
            Ok(b.value)
        }
        _ => Err(bad_attr(
            krate,
            d,
            it.pos,
            format!("`#[kube({})]` expects a bool", it.name),
        )),
    }
}

fn kv(krate: &Model, d: DefId, it: &MetaItem) -> Result<(String, String), CrdgenError> {
    if let MetaKind::List(ts) = &it.kind {
        let p = syn::parse::Parser::parse2(
            syn::punctuated::Punctuated::<syn::LitStr, syn::Token![,]>::parse_terminated,
            ts.clone(),
        );
        if let Ok(p) = p
            && p.len() == 2
        {
            return Ok((p[0].value(), p[1].value()));
        }
    }
    Err(bad_attr(
        krate,
        d,
        it.pos,
        format!("`#[kube({}(\"key\", \"value\"))]` expected", it.name),
    ))
}

/// Every struct deriving `CustomResource`, in module order, but those of a file of external
/// types (kinds the project does not own: their CRD is not the project's to write).
pub(crate) fn custom_resources(krate: &Model) -> Vec<DefId> {
    (0..krate.defs.len())
        .filter(|d| {
            matches!(krate.defs[*d].item, DefItem::Struct(_) | DefItem::Enum(_))
                && !krate.external[krate.modules[krate.defs[*d].module].file]
                && krate.derives(*d).iter().any(|n| n == "CustomResource")
        })
        .collect()
}

/// A `#[derive(CustomResource)]` struct's `#[kube(...)]` items, parsed (what the source checks
/// and [`KubeAttrs::read`] read); a generic struct, which kube-derive cannot derive, is refused.
pub(crate) fn kube_items(krate: &Model, d: DefId) -> Result<Vec<MetaItem>, CrdgenError> {
    refuse_generics(krate, d)?;
    attrs::meta_items(krate.defs[d].attrs(), "kube").map_err(|e| {
        bad_attr(
            krate,
            d,
            e.span(),
            format!("invalid #[kube] attribute: {e}"),
        )
    })
}

/// kube-derive ignores the spec's generics: it writes `spec: FooSpec` with no type arguments,
/// which does not compile, so `--exact` cannot help either. Lifetimes and consts alike.
fn refuse_generics(krate: &Model, d: DefId) -> Result<(), CrdgenError> {
    let def = &krate.defs[d];
    let Some(p) = def.generics().params.first() else {
        return Ok(());
    };
    use syn::spanned::Spanned;
    let ident = def.ident();
    let params = match p {
        syn::GenericParam::Type(t) => t.ident.to_string(),
        syn::GenericParam::Lifetime(l) => l.lifetime.to_string(),
        syn::GenericParam::Const(c) => format!("const {}", c.ident),
    };
    Err(CrdgenError::KubeCannotRender {
        loc: krate.def_loc(d, p.span()),
        what: format!(
            "`{ident}` is generic (`{params}`): kube's `CustomResource` derive makes one kind of one spec type and writes `spec: {ident}` without type arguments, which does not compile (error[E0107]), with `--exact` as without"
        ),
        fix: format!(
            "write the types in, e.g. `pub struct {ident} {{ pub t: Option<String> }}`; a generic helper struct is fine as a field's type with its argument (`pub t: Wrapper<String>`)"
        ),
    })
}

/// What a kind's `#[kube(...)]` says, each key read as kube-derive reads it (the names it
/// derives when they are not written: singular, plural, root).
pub(crate) struct KubeAttrs {
    pub group: String,
    pub version: String,
    pub kind: String,
    /// The name of the root struct kube-derive writes (`root`, else the kind).
    root: String,
    doc: Option<String>,
    singular: String,
    pub plural: String,
    namespaced: bool,
    no_spec: bool,
    /// The status type as written, and where.
    status: Option<(String, Pos)>,
    categories: Vec<String>,
    shortnames: Vec<String>,
    printcolumns: Vec<apiext::CustomResourceColumnDefinition>,
    selectable: Vec<String>,
    scale: Option<apiext::CustomResourceSubresourceScale>,
    annotations: Vec<(String, String)>,
    labels: Vec<(String, String)>,
    /// The kind's own CEL rules (`#[kube(validation = ...)]`).
    rules: Vec<Rule>,
    storage: bool,
    served: bool,
    /// `deprecated` (`Some(None)`) or `deprecated = "warning"`.
    deprecated: Option<Option<String>>,
    schema_mode: String,
    written: VersionAttrs,
    /// Where its rules were written.
    sources: Sources,
}

impl KubeAttrs {
    /// Read `items`, the `#[kube(...)]` of the struct `d`.
    pub fn read(krate: &Model, d: DefId, items: &[MetaItem]) -> Result<KubeAttrs, CrdgenError> {
        let m = krate.defs[d].module;
        let (mut group, mut version, mut kind) = (None, None, None);
        let (mut root, mut singular, mut plural) = (None, None, None);
        let mut a = KubeAttrs {
            group: String::new(),
            version: String::new(),
            kind: String::new(),
            root: String::new(),
            doc: None,
            singular: String::new(),
            plural: String::new(),
            namespaced: false,
            no_spec: false,
            status: None,
            categories: Vec::new(),
            shortnames: Vec::new(),
            printcolumns: Vec::new(),
            selectable: Vec::new(),
            scale: None,
            annotations: Vec::new(),
            labels: Vec::new(),
            rules: Vec::new(),
            storage: true,
            served: true,
            deprecated: None,
            schema_mode: "derived".to_string(),
            written: VersionAttrs::default(),
            sources: Sources::default(),
        };
        for it in items {
            match it.name.as_str() {
                "group" => group = Some(str_of(krate, d, it)?),
                "version" => version = Some(str_of(krate, d, it)?),
                "kind" => kind = Some(str_of(krate, d, it)?),
                "doc" => a.doc = Some(str_of(krate, d, it)?),
                "root" => root = Some(str_of(krate, d, it)?),
                "plural" => plural = Some(str_of(krate, d, it)?),
                "singular" => singular = Some(str_of(krate, d, it)?),
                "namespaced" => a.namespaced = bool_of(krate, d, it)?,
                "no_spec" => a.no_spec = bool_of(krate, d, it)?,
                "status" => a.status = Some((str_of(krate, d, it)?, it.pos)),
                "category" => a.categories.push(str_of(krate, d, it)?),
                "shortname" => a.shortnames.push(str_of(krate, d, it)?),
                "selectable" => {
                    a.selectable.push(str_of(krate, d, it)?);
                    a.written.selectable.push(krate.def_loc(d, it.pos));
                }
                "annotation" => a.annotations.push(kv(krate, d, it)?),
                "label" => a.labels.push(kv(krate, d, it)?),
                "storage" => a.storage = bool_of(krate, d, it)?,
                "served" => a.served = bool_of(krate, d, it)?,
                "deprecated" => {
                    a.deprecated = Some(match &it.kind {
                        MetaKind::Flag => None,
                        _ => Some(str_of(krate, d, it)?),
                    });
                    a.written.deprecated = Some(krate.def_loc(d, it.pos));
                }
                "schema" => a.schema_mode = str_of(krate, d, it)?,
                "validation" => {
                    let MetaKind::Value(e) = &it.kind else {
                        return Err(bad_attr(
                            krate,
                            d,
                            it.pos,
                            "`#[kube(validation = ...)]` expects a value".into(),
                        ));
                    };
                    let rule = type_info::eval_rule(krate, m, &e.expr(), &mut a.sources)?;
                    a.rules.push(rule);
                }
                "printcolumn" => {
                    a.printcolumns.push(printcolumn(krate, d, it)?);
                    a.written.printcolumns.push(krate.def_loc(d, it.pos));
                }
                "scale" => {
                    a.scale = Some(scale_of(krate, d, it)?);
                    a.written.scale = Some(krate.def_loc(d, it.pos));
                }
                _ => {}
            }
        }
        let ident_span = krate.defs[d].ident().span();
        let missing = |n: &str| {
            bad_attr(
                krate,
                d,
                ident_span,
                format!("#[derive(CustomResource)] needs `#[kube({n} = \"...\")]`"),
            )
        };
        a.group = group.ok_or_else(|| missing("group"))?;
        a.version = version.ok_or_else(|| missing("version"))?;
        a.kind = kind.ok_or_else(|| missing("kind"))?;
        a.root = root.unwrap_or_else(|| a.kind.clone());
        a.singular = singular.unwrap_or_else(|| a.kind.to_ascii_lowercase());
        a.plural = plural.unwrap_or_else(|| crate::names::to_plural(&a.singular));
        Ok(a)
    }
}

/// The kind `d` as kube-derive's `crd()` builds it from its `#[kube(...)]` ([`KubeAttrs`]): its
/// one-version CRD, and its schema (unless `with_schema` is false) made but not finished.
pub(crate) fn build_kind(
    krate: &Rc<Model>,
    d: DefId,
    attrs: KubeAttrs,
    with_schema: bool,
) -> Result<KindDef, CrdgenError> {
    let loc = krate.def_loc(d, krate.defs[d].ident().span());
    let (pending, root_spec) = if with_schema {
        root_schema(krate, d, &attrs)?.unzip()
    } else {
        (None, None)
    };
    let crd = crd_of(&attrs);
    let KubeAttrs {
        group,
        version,
        kind,
        plural,
        storage,
        written,
        status,
        sources,
        ..
    } = attrs;
    Ok(KindDef {
        def: d,
        loc,
        group,
        version,
        kind,
        plural,
        storage,
        crd,
        rendered: None,
        written,
        status: status.map(|(path, _)| path),
        krate: 0,
        pending,
        root_spec,
        sources,
    })
}

/// The schema of the kind `d` as its generator makes it (not finished: see [`PendingSchema`]),
/// and what it was made from; none with `#[kube(schema = "disabled")]`.
fn root_schema(
    krate: &Rc<Model>,
    d: DefId,
    attrs: &KubeAttrs,
) -> Result<Option<(PendingSchema, RootSpec)>, CrdgenError> {
    let def = &krate.defs[d];
    let ident_span = def.ident().span();
    let ident = def.ident().to_string();
    match attrs.schema_mode.as_str() {
        "disabled" => return Ok(None),
        "manual" => {
            return Err(CrdgenError::Unsupported {
                loc: krate.def_loc(d, ident_span),
                what: format!(
                    "`#[kube(schema = \"manual\")]` on `{ident}` (a hand-written `impl JsonSchema` for the root)"
                ),
                fix: FIX_EXACT.into(),
            });
        }
        _ => {}
    }
    let status_ty = match &attrs.status {
        Some((p, span)) => {
            let path: syn::Type = syn::parse_str(p)
                .map_err(|e| bad_attr(krate, d, *span, format!("invalid status type: {e}")))?;
            Some(
                krate
                    .resolve_type(def.module, &path, Some(d))
                    .map_err(|e| match e {
                        CrdgenError::Unsupported { what, fix, .. } => CrdgenError::Unsupported {
                            loc: krate.def_loc(d, *span),
                            what,
                            fix,
                        },
                        o => o,
                    })?,
            )
        }
        None => None,
    };
    let docstr = attrs.doc.clone().unwrap_or_else(|| {
        format!(" Auto-generated derived type for {ident} via `CustomResource`")
    });
    let spec = RootSpec {
        spec: Ty::User(d),
        status: status_ty,
        no_spec: attrs.no_spec,
        doc: docstr,
        root_name: attrs.root.clone(),
        rules: attrs.rules.clone(),
    };
    let loc = krate.def_loc(d, ident_span);
    let made = schema::with_crate(krate.clone(), || {
        catch_quietly(AssertUnwindSafe(|| {
            schema::root_schema(&mut transforms::generator(Rewriter::Linear), &spec)
        }))
    })?
    .map_err(|p| PendingSchema::panicked(&loc, &ident, p))?;
    let pending = PendingSchema {
        schema: made,
        loc,
        ident,
    };
    Ok(Some((pending, spec)))
}

/// The kind's one-version CRD as kube-derive's `crd()` writes it, its schema left empty (it goes
/// in when it is finished, see [`PendingSchema`]).
fn crd_of(a: &KubeAttrs) -> apiext::CustomResourceDefinition {
    let opt = |v: &Vec<String>| (!v.is_empty()).then(|| v.clone());
    let map = |v: &Vec<(String, String)>| {
        (!v.is_empty()).then(|| v.iter().cloned().collect::<BTreeMap<String, String>>())
    };
    let (deprecated_flag, deprecation_warning) = match &a.deprecated {
        None => (None, None),
        Some(None) => (Some(true), None),
        Some(Some(w)) => (Some(true), Some(w.clone())),
    };
    let version = apiext::CustomResourceDefinitionVersion {
        additional_printer_columns: (!a.printcolumns.is_empty()).then(|| a.printcolumns.clone()),
        deprecated: deprecated_flag,
        deprecation_warning,
        name: a.version.clone(),
        // The schema goes in when it is finished (`PendingSchema`).
        schema: Some(apiext::CustomResourceValidation {
            open_api_v3_schema: None,
        }),
        selectable_fields: (!a.selectable.is_empty()).then(|| {
            (a.selectable.iter())
                .map(|json_path| apiext::SelectableField {
                    json_path: json_path.clone(),
                })
                .collect()
        }),
        served: a.served,
        storage: a.storage,
        subresources: a
            .status
            .as_ref()
            .map(|_| apiext::CustomResourceSubresources {
                scale: a.scale.clone(),
                status: Some(apiext::CustomResourceSubresourceStatus(serde_json::json!(
                    {}
                ))),
            }),
    };
    apiext::CustomResourceDefinition {
        metadata: ObjectMeta {
            annotations: map(&a.annotations),
            labels: map(&a.labels),
            name: Some(format!("{}.{}", a.plural, a.group)),
            ..Default::default()
        },
        spec: apiext::CustomResourceDefinitionSpec {
            group: a.group.clone(),
            names: apiext::CustomResourceDefinitionNames {
                categories: opt(&a.categories),
                kind: a.kind.clone(),
                plural: a.plural.clone(),
                short_names: opt(&a.shortnames),
                singular: Some(a.singular.clone()),
                ..Default::default()
            },
            scope: if a.namespaced {
                "Namespaced"
            } else {
                "Cluster"
            }
            .into(),
            versions: vec![version],
            ..Default::default()
        },
        ..Default::default()
    }
}

fn printcolumn(
    krate: &Model,
    d: DefId,
    it: &MetaItem,
) -> Result<apiext::CustomResourceColumnDefinition, CrdgenError> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Pc {
        description: Option<String>,
        format: Option<String>,
        json_path: String,
        name: String,
        priority: Option<i32>,
        type_: String,
    }
    let pc: Pc = match &it.kind {
        MetaKind::Value(_) => {
            let s = str_of(krate, d, it)?;
            serde_json::from_str(&s)
                .map_err(|e| bad_attr(krate, d, it.pos, format!("invalid printcolumn JSON: {e}")))?
        }
        MetaKind::List(ts) => {
            let nested = attrs::parse_meta_list(ts.clone())
                .map_err(|e| bad_attr(krate, d, e.span(), e.to_string()))?;
            let mut obj = serde_json::Map::new();
            for n in nested {
                let key = match n.name.as_str() {
                    "json_path" => "jsonPath",
                    "type_" => "type",
                    other => other,
                }
                .to_string();
                let v = match &n.kind {
                    MetaKind::Value(e) => match (&*e.expr(), e.str()) {
                        (
                            syn::Expr::Lit(syn::ExprLit {
                                lit: syn::Lit::Int(i),
                                ..
                            }),
                            _,
                        ) => Value::from(
                            i.base10_parse::<i32>()
                                .map_err(|e| bad_attr(krate, d, n.pos, e.to_string()))?,
                        ),
                        (_, Some(s)) => Value::String(s),
                        (_, None) => {
                            return Err(bad_attr(
                                krate,
                                d,
                                n.pos,
                                format!("printcolumn `{}` expects a literal", n.name),
                            ));
                        }
                    },
                    _ => {
                        return Err(bad_attr(
                            krate,
                            d,
                            n.pos,
                            format!("printcolumn `{}` expects a value", n.name),
                        ));
                    }
                };
                obj.insert(key, v);
            }
            serde_json::from_value(Value::Object(obj))
                .map_err(|e| bad_attr(krate, d, it.pos, format!("invalid printcolumn: {e}")))?
        }
        _ => {
            return Err(bad_attr(
                krate,
                d,
                it.pos,
                "printcolumn expects a JSON string or a list".into(),
            ));
        }
    };
    Ok(apiext::CustomResourceColumnDefinition {
        description: pc.description,
        format: pc.format,
        json_path: pc.json_path,
        name: pc.name,
        priority: pc.priority,
        type_: pc.type_,
    })
}

fn scale_of(
    krate: &Model,
    d: DefId,
    it: &MetaItem,
) -> Result<apiext::CustomResourceSubresourceScale, CrdgenError> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Sc {
        label_selector_path: Option<String>,
        spec_replicas_path: String,
        status_replicas_path: String,
    }
    let sc: Sc = match &it.kind {
        MetaKind::Value(_) => {
            let s = str_of(krate, d, it)?;
            serde_json::from_str(&s)
                .map_err(|e| bad_attr(krate, d, it.pos, format!("invalid scale JSON: {e}")))?
        }
        MetaKind::List(ts) => {
            let nested = attrs::parse_meta_list(ts.clone())
                .map_err(|e| bad_attr(krate, d, e.span(), e.to_string()))?;
            let mut obj = serde_json::Map::new();
            for n in nested {
                let key = match n.name.as_str() {
                    "spec_replicas_path" => "specReplicasPath",
                    "status_replicas_path" => "statusReplicasPath",
                    "label_selector_path" => "labelSelectorPath",
                    other => other,
                };
                obj.insert(key.to_string(), Value::String(str_of(krate, d, &n)?));
            }
            serde_json::from_value(Value::Object(obj))
                .map_err(|e| bad_attr(krate, d, it.pos, format!("invalid scale: {e}")))?
        }
        _ => {
            return Err(bad_attr(
                krate,
                d,
                it.pos,
                "scale expects a JSON string or a list".into(),
            ));
        }
    };
    Ok(apiext::CustomResourceSubresourceScale {
        label_selector_path: sc.label_selector_path,
        spec_replicas_path: sc.spec_replicas_path,
        status_replicas_path: sc.status_replicas_path,
    })
}

/// `catch_unwind` without the panic hook's message: a panic of kube-core's transforms becomes a
/// [`CrdgenError::KubeCannotRender`], so the "thread panicked" line would only be noise. Other
/// threads' panics (and this thread's outside `f`) still reach the previous hook. Public only for
/// the property tests of the schema passes, which run kube-core's panicking ones.
pub fn catch_quietly<R>(f: AssertUnwindSafe<impl FnOnce() -> R>) -> std::thread::Result<R> {
    // Whether this thread is inside `f`. The panic hook is one for the whole process and is
    // handed nothing but the panic, so which thread panicked and whether it is quiet can only be
    // told by a thread-local: it carries no data, and no code outside this function sees it.
    thread_local! {
        static QUIET: Cell<bool> = const { Cell::new(false) };
    }
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let outer = QUIET.with(|q| q.replace(true));
    let r = catch_unwind(f);
    QUIET.with(|q| q.set(outer));
    r
}
