//! `generate crds --check-compat`: the CRDs a project's types produce now compared with those they
//! produced at an earlier revision, as typed [`Finding`]s (rule, severity, CRD, version, schema
//! path, message, fix, and where in the Rust types).
//!
//! The rules and their names follow crdify (kubernetes-sigs/crdify, OLM v1's CRD upgrade safety
//! check): `scope`, `storedVersionRemoval`, `existingFieldRemoval`, `required`, `type`, `enum`,
//! `default`, `maximum`/`maxLength`/`maxItems`/`maxProperties`, `minimum`/`minLength`/`minItems`/
//! `minProperties`, `pattern`, `nullable`; plus what crdify leaves to its "unhandled" catch-all:
//! `crdRemoval`, `names`, `servedVersionRemoval`, `versionRemoval`, `format`, `multipleOf`,
//! `validationRules`, `listType`, `listMapKeys`, `mapType`, `preserveUnknownFieldsRemoval`,
//! `embeddedResource`, `composition`, `subresourceRemoval`.
//!
//! Grading. An [`Severity::Error`] breaks what exists: objects already stored (they no longer
//! read, or read as something else) or clients (a field, version, kind or name they use is gone,
//! a type they decode changed, a value they send is refused). A [`Severity::Warning`] tightens
//! validation only: kube-apiserver ratchets it (an update that leaves a now-invalid value as it
//! was is still accepted), so stored objects keep working, but new writes of once-valid values
//! are refused; crdify grades these as errors by default and lets them be lowered, here they are
//! warnings that `--compat-warnings-as-errors` makes fatal. Loosening (a bound relaxed, an enum
//! value added is the one exception crdify makes a warning of), new optional fields, new versions
//! and description changes are compatible.

use std::collections::BTreeSet;
use std::fmt;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionVersion, JSONSchemaProps,
    JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

use super::{KindCrd, Location, Places};

pub mod allow;

/// How bad an incompatible change is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Breaks stored objects or clients: the check fails.
    Error,
    /// Tightens validation only: the check fails with `--compat-warnings-as-errors`.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// The rules, named as crdify names them where it has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    CrdRemoval,
    Names,
    Scope,
    StoredVersionRemoval,
    ServedVersionRemoval,
    VersionRemoval,
    SubresourceRemoval,
    ExistingFieldRemoval,
    Required,
    Type,
    Format,
    Enum,
    Default,
    Nullable,
    Maximum,
    MaxLength,
    MaxItems,
    MaxProperties,
    Minimum,
    MinLength,
    MinItems,
    MinProperties,
    MultipleOf,
    Pattern,
    ValidationRules,
    ListType,
    ListMapKeys,
    MapType,
    PreserveUnknownFieldsRemoval,
    EmbeddedResource,
    Composition,
}

impl Rule {
    /// Every rule.
    pub const ALL: [Rule; 31] = {
        use Rule::*;
        [
            CrdRemoval,
            Names,
            Scope,
            StoredVersionRemoval,
            ServedVersionRemoval,
            VersionRemoval,
            SubresourceRemoval,
            ExistingFieldRemoval,
            Required,
            Type,
            Format,
            Enum,
            Default,
            Nullable,
            Maximum,
            MaxLength,
            MaxItems,
            MaxProperties,
            Minimum,
            MinLength,
            MinItems,
            MinProperties,
            MultipleOf,
            Pattern,
            ValidationRules,
            ListType,
            ListMapKeys,
            MapType,
            PreserveUnknownFieldsRemoval,
            EmbeddedResource,
            Composition,
        ]
    };

    /// The rule's id, as printed (`error[existingFieldRemoval]`).
    pub fn id(self) -> &'static str {
        use Rule::*;
        match self {
            CrdRemoval => "crdRemoval",
            Names => "names",
            Scope => "scope",
            StoredVersionRemoval => "storedVersionRemoval",
            ServedVersionRemoval => "servedVersionRemoval",
            VersionRemoval => "versionRemoval",
            SubresourceRemoval => "subresourceRemoval",
            ExistingFieldRemoval => "existingFieldRemoval",
            Required => "required",
            Type => "type",
            Format => "format",
            Enum => "enum",
            Default => "default",
            Nullable => "nullable",
            Maximum => "maximum",
            MaxLength => "maxLength",
            MaxItems => "maxItems",
            MaxProperties => "maxProperties",
            Minimum => "minimum",
            MinLength => "minLength",
            MinItems => "minItems",
            MinProperties => "minProperties",
            MultipleOf => "multipleOf",
            Pattern => "pattern",
            ValidationRules => "validationRules",
            ListType => "listType",
            ListMapKeys => "listMapKeys",
            MapType => "mapType",
            PreserveUnknownFieldsRemoval => "preserveUnknownFieldsRemoval",
            EmbeddedResource => "embeddedResource",
            Composition => "composition",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// One incompatible change.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub rule: Rule,
    pub severity: Severity,
    /// The CRD's name (`widgets.example.com`) as it was.
    pub crd: String,
    /// The version it is about, for a version's or a schema's change.
    pub version: Option<String>,
    /// Where in the CRD: a schema path as kube-apiserver writes it (`.spec.items[*].name`), or a
    /// field of the CRD (`spec.scope`, `spec.versions[v1]`).
    pub path: String,
    pub message: String,
    /// What to do instead.
    pub fix: String,
    /// Where the Rust type or field behind it is now (`None` when the kind is gone).
    pub span: Option<Location>,
    /// Where it was at the revision compared with (for what was removed).
    pub was: Option<Location>,
}

/// One revision of a project: its CRDs and where their types are.
pub struct Side<'a> {
    pub crds: &'a [KindCrd],
    pub places: &'a Places,
}

/// Every incompatible change from `old` to `new`, CRD by CRD (in `old`'s order), errors and
/// warnings alike.
pub fn compare(old: &Side<'_>, new: &Side<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut matched = vec![false; new.crds.len()];
    let name = |k: &KindCrd| k.crd.metadata.name.clone().unwrap_or_default();
    let mut unmatched_old = Vec::new();
    for o in old.crds {
        match new.crds.iter().position(|n| name(n) == name(o)) {
            Some(i) => {
                matched[i] = true;
                compare_crd(old, o, new, &new.crds[i], &mut out);
            }
            None => unmatched_old.push(o),
        }
    }
    for o in unmatched_old {
        let stored = storage_version(&o.crd);
        let was = old.places.kind(&o.group, &o.kind, &stored).cloned();
        // A rename: the one new CRD of the same kind and plural (the group renamed), or of the
        // same group and either the same kind, plural or versions (the kind renamed, its plural
        // with it or not; the plural renamed).
        let versions = |k: &KindCrd| -> Vec<String> {
            (k.crd.spec.versions.iter())
                .map(|v| v.name.clone())
                .collect()
        };
        let renamed: Vec<usize> = (0..new.crds.len())
            .filter(|&i| !matched[i])
            .filter(|&i| {
                let n = &new.crds[i];
                (n.kind == o.kind && n.plural == o.plural)
                    || (n.group == o.group
                        && (n.kind == o.kind || n.plural == o.plural || versions(n) == versions(o)))
            })
            .collect();
        if let [i] = renamed[..] {
            matched[i] = true;
            let n = &new.crds[i];
            let what = [
                ("group", &o.group, &n.group),
                ("kind", &o.kind, &n.kind),
                ("plural", &o.plural, &n.plural),
            ]
            .iter()
            .filter(|(_, a, b)| a != b)
            .map(|(what, a, b)| format!("{what} {a} became {b}"))
            .collect::<Vec<_>>()
            .join(", ");
            out.push(Finding {
                rule: Rule::Names,
                severity: Severity::Error,
                crd: name(o),
                version: None,
                path: "spec.names".into(),
                message: format!(
                    "CRD {} was renamed ({what}): kube-apiserver makes {} a new, empty CRD, and the objects of {} are no longer served under the new name",
                    name(o),
                    name(n),
                    name(o)
                ),
                fix: "keep the group, kind and plural (`#[kube(group = .., kind = .., plural = ..)]`) as they were; to rename, add the new kind beside the old one and migrate the objects".into(),
                span: new
                    .places
                    .kind(&n.group, &n.kind, &storage_version(&n.crd))
                    .cloned(),
                was,
            });
        } else {
            out.push(Finding {
                rule: Rule::CrdRemoval,
                severity: Severity::Error,
                crd: name(o),
                version: None,
                path: String::new(),
                message: format!(
                    "kind {} ({}) is gone: its CRD would be deleted, and every object of it with it",
                    o.kind,
                    name(o)
                ),
                fix: "keep the kind's `#[derive(CustomResource)]` type; a kind is retired by deleting its CRD by hand once no object of it is left".into(),
                span: None,
                was,
            });
        }
    }
    out
}

/// The storage version of a CRD (its first version when none says so).
fn storage_version(crd: &CustomResourceDefinition) -> String {
    let versions = &crd.spec.versions;
    versions
        .iter()
        .find(|v| v.storage)
        .or(versions.first())
        .map(|v| v.name.clone())
        .unwrap_or_default()
}

/// The findings of one CRD, and where they point.
struct Cx<'a, 'o> {
    old: &'a Side<'a>,
    new: &'a Side<'a>,
    o: &'a KindCrd,
    n: &'a KindCrd,
    version: Option<&'a str>,
    out: &'o mut Vec<Finding>,
}

impl Cx<'_, '_> {
    /// The kind in the new tree: the version at hand, else the storage version.
    fn kind_span(&self) -> Option<Location> {
        let version = self
            .version
            .map(str::to_string)
            .unwrap_or_else(|| storage_version(&self.n.crd));
        self.new
            .places
            .kind(&self.n.group, &self.n.kind, &version)
            .cloned()
    }

    /// The field behind `path` in the new tree, else the kind.
    fn field_span(&self, path: &str) -> Option<Location> {
        self.version
            .and_then(|v| self.new.places.field(&self.n.group, &self.n.kind, v, path))
            .or_else(|| self.kind_span())
    }

    /// The field behind `path` at the revision compared with.
    fn field_was(&self, path: &str) -> Option<Location> {
        let v = self.version?;
        self.old.places.field(&self.o.group, &self.o.kind, v, path)
    }

    fn push(
        &mut self,
        rule: Rule,
        severity: Severity,
        path: &str,
        span: Option<Location>,
        message: String,
        fix: &str,
    ) -> &mut Finding {
        self.out.push(Finding {
            rule,
            severity,
            crd: self.o.crd.metadata.name.clone().unwrap_or_default(),
            version: self.version.map(str::to_string),
            path: path.to_string(),
            message,
            fix: fix.to_string(),
            span,
            was: None,
        });
        self.out.last_mut().expect("just pushed")
    }

    /// A finding about the field at `path`.
    fn field(
        &mut self,
        rule: Rule,
        severity: Severity,
        path: &str,
        message: String,
        fix: &str,
    ) -> &mut Finding {
        let span = self.field_span(path);
        self.push(rule, severity, path, span, message, fix)
    }
}

const FIX_NEW_VERSION: &str = "keep it as it was; to change it, add a new version of the kind with the change (and a conversion) instead";

fn compare_crd<'a>(
    old: &'a Side<'a>,
    o: &'a KindCrd,
    new: &'a Side<'a>,
    n: &'a KindCrd,
    out: &mut Vec<Finding>,
) {
    let mut cx = Cx {
        old,
        new,
        o,
        n,
        version: None,
        out,
    };
    let (os, ns) = (&o.crd.spec, &n.crd.spec);
    if os.scope != ns.scope {
        let span = cx.kind_span();
        cx.push(
            Rule::Scope,
            Severity::Error,
            "spec.scope",
            span,
            format!(
                "the scope changed from {} to {}: kube-apiserver refuses to change a CRD's scope",
                os.scope, ns.scope
            ),
            "keep `#[kube(namespaced)]` as it was; for the other scope, add a new kind (or group) and migrate the objects",
        );
    }
    let (on, nn) = (&os.names, &ns.names);
    // One finding for the names a rename changes together (kind, list kind, singular).
    let renamed: Vec<String> = [
        ("kind", Some(&on.kind), Some(&nn.kind)),
        ("listKind", on.list_kind.as_ref(), nn.list_kind.as_ref()),
        ("singular", on.singular.as_ref(), nn.singular.as_ref()),
    ]
    .into_iter()
    .filter(|(_, a, b)| a != b)
    .map(|(what, a, b)| {
        format!(
            "{what} {} became {}",
            a.map_or("(none)", |s| s.as_str()),
            b.map_or("(none)", |s| s.as_str())
        )
    })
    .collect();
    if !renamed.is_empty() {
        let span = cx.kind_span();
        cx.push(
            Rule::Names,
            Severity::Error,
            "spec.names",
            span,
            format!(
                "{}: clients that use the old names break",
                renamed.join(", ")
            ),
            "keep the names (`#[kube(kind = .., singular = ..)]`) as they were",
        );
    }
    for (what, a, b) in [
        ("shortNames", &on.short_names, &nn.short_names),
        ("categories", &on.categories, &nn.categories),
    ] {
        let gone: Vec<&String> = (a.iter().flatten())
            .filter(|s| !b.iter().flatten().any(|t| t == *s))
            .collect();
        if !gone.is_empty() {
            let span = cx.kind_span();
            cx.push(
                Rule::Names,
                Severity::Warning,
                &format!("spec.names.{what}"),
                span,
                format!("{what} removed: {}; `kubectl get` with them stops working", join(&gone)),
                "keep them (`#[kube(shortname = ..)]`, `#[kube(category = ..)]`) beside the new ones",
            );
        }
    }
    for ov in &os.versions {
        let Some(nv) = ns.versions.iter().find(|v| v.name == ov.name) else {
            let (rule, why) = if ov.storage {
                (
                    Rule::StoredVersionRemoval,
                    "it is the storage version: every object is stored in it, and kube-apiserver refuses to drop a version `status.storedVersions` lists",
                )
            } else if ov.served {
                (
                    Rule::ServedVersionRemoval,
                    "it is served: clients that use it break, and objects once stored in it become unreadable",
                )
            } else {
                (
                    Rule::VersionRemoval,
                    "objects once stored in it become unreadable (kube-apiserver refuses while `status.storedVersions` lists it)",
                )
            };
            cx.version = Some(&ov.name);
            let span = cx.kind_span();
            let was = old.places.kind(&o.group, &o.kind, &ov.name).cloned();
            cx.push(
                rule,
                Severity::Error,
                &format!("spec.versions[{}]", ov.name),
                span,
                format!("version {} was removed: {why}", ov.name),
                "keep the version's type (mark it `#[kube(deprecated = \"..\")]`, later `#[kube(served = false)]`) until every object is rewritten in the storage version and `status.storedVersions` no longer lists it",
            )
            .was = was;
            cx.version = None;
            continue;
        };
        cx.version = Some(&ov.name);
        compare_version(&mut cx, ov, nv);
        cx.version = None;
    }
}

fn compare_version(
    cx: &mut Cx<'_, '_>,
    ov: &CustomResourceDefinitionVersion,
    nv: &CustomResourceDefinitionVersion,
) {
    if ov.served && !nv.served {
        let span = cx.kind_span();
        cx.push(
            Rule::ServedVersionRemoval,
            Severity::Error,
            &format!("spec.versions[{}].served", ov.name),
            span,
            format!(
                "version {} is no longer served: clients that use it break",
                ov.name
            ),
            "serve it (mark it `#[kube(deprecated = \"..\")]` first) until no client uses it",
        );
    }
    let (osub, nsub) = (ov.subresources.as_ref(), nv.subresources.as_ref());
    for (what, had, has) in [
        (
            "status",
            osub.is_some_and(|s| s.status.is_some()),
            nsub.is_some_and(|s| s.status.is_some()),
        ),
        (
            "scale",
            osub.is_some_and(|s| s.scale.is_some()),
            nsub.is_some_and(|s| s.scale.is_some()),
        ),
    ] {
        if had && !has {
            let span = cx.kind_span();
            cx.push(
                Rule::SubresourceRemoval,
                Severity::Error,
                &format!("spec.versions[{}].subresources.{what}", ov.name),
                span,
                format!("the {what} subresource was removed: clients that use it break"),
                "keep it (`#[kube(status = ..)]`, `#[kube(scale(..))]`)",
            );
        }
    }
    let schema = |v: &CustomResourceDefinitionVersion| {
        v.schema.as_ref().and_then(|s| s.open_api_v3_schema.clone())
    };
    if let (Some(a), Some(b)) = (schema(ov), schema(nv)) {
        compare_schema(cx, "", &a, &b);
    }
}

fn join<T: fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A JSON value as kube-apiserver's messages write it.
fn json(v: &serde_json::Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The property `name` below `path`, as a schema path.
fn child(path: &str, name: &str) -> String {
    format!("{path}.{name}")
}

/// The place `path` for messages: the root is `.`.
fn shown(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}

/// A list type unset is `atomic`; a map type unset, `granular`.
fn list_type(s: &JSONSchemaProps) -> &str {
    s.x_kubernetes_list_type.as_deref().unwrap_or("atomic")
}

fn map_type(s: &JSONSchemaProps) -> &str {
    s.x_kubernetes_map_type.as_deref().unwrap_or("granular")
}

fn items(s: &JSONSchemaProps) -> Option<&JSONSchemaProps> {
    match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(i)) => Some(i),
        _ => None,
    }
}

fn additional(s: &JSONSchemaProps) -> Option<&JSONSchemaPropsOrBool> {
    s.additional_properties.as_ref()
}

/// One place of a version's schema (`path`, the root being `""`), and everything below it: each
/// change a client or a stored object would notice, old (`a`) to new (`b`), is a finding of `cx`.
fn compare_schema(cx: &mut Cx<'_, '_>, path: &str, a: &JSONSchemaProps, b: &JSONSchemaProps) {
    if !compare_type(cx, path, a, b) {
        return;
    }
    compare_enum(cx, path, a, b);
    compare_bounds(cx, path, a, b);
    compare_values(cx, path, a, b);
    compare_extensions(cx, path, a, b);
    compare_composition(cx, path, a, b);
    compare_map_or_required(cx, path, a, b);
    compare_children(cx, path, a, b);
}

/// The type and format: false when the type changed (what is below it is not compared).
fn compare_type(cx: &mut Cx<'_, '_>, path: &str, a: &JSONSchemaProps, b: &JSONSchemaProps) -> bool {
    let at = shown(path);
    let int_or_string = |s: &JSONSchemaProps| s.x_kubernetes_int_or_string == Some(true);
    if a.type_ != b.type_ || int_or_string(a) != int_or_string(b) {
        let ty = |s: &JSONSchemaProps| {
            if int_or_string(s) {
                "int-or-string".to_string()
            } else {
                s.type_.clone().unwrap_or_else(|| "(any)".into())
            }
        };
        cx.field(
            Rule::Type,
            Severity::Error,
            path,
            format!(
                "{at}: the type changed from {} to {}: stored objects no longer read, clients break",
                ty(a),
                ty(b)
            ),
            "keep the type; add a new field of the new type (and deprecate this one), or add a new version instead",
        );
        return false;
    }
    if a.format != b.format {
        let f = |s: &JSONSchemaProps| s.format.clone().unwrap_or_else(|| "(none)".into());
        cx.field(
            Rule::Format,
            Severity::Error,
            path,
            format!(
                "{at}: the format changed from {} to {}: clients decode it as another type, and values stored may no longer validate",
                f(a),
                f(b)
            ),
            "keep the Rust type (its format) as it was; add a new field or a new version instead",
        );
    }
    true
}

/// What values the node accepts and means beside its type: its pattern, CEL rules, default and
/// nullability.
fn compare_values(cx: &mut Cx<'_, '_>, path: &str, a: &JSONSchemaProps, b: &JSONSchemaProps) {
    let at = shown(path);
    if b.pattern.is_some() && a.pattern != b.pattern {
        let message = match &a.pattern {
            None => format!(
                "{at}: pattern {:?} added",
                b.pattern.as_deref().unwrap_or("")
            ),
            Some(p) => format!(
                "{at}: pattern changed from {p:?} to {:?}",
                b.pattern.as_deref().unwrap_or("")
            ),
        };
        cx.field(
            Rule::Pattern,
            Severity::Warning,
            path,
            format!("{message}: values valid before may be refused"),
            "keep the pattern, or make sure it accepts every value stored (kube-apiserver ratchets values left unchanged)",
        );
    }
    let rules = |s: &JSONSchemaProps| -> Vec<String> {
        (s.x_kubernetes_validations.iter().flatten())
            .map(|r| r.rule.clone())
            .collect()
    };
    let old_rules = rules(a);
    let added: Vec<String> = rules(b)
        .into_iter()
        .filter(|r| !old_rules.contains(r))
        .map(|r| format!("{r:?}"))
        .collect();
    if !added.is_empty() {
        cx.field(
            Rule::ValidationRules,
            Severity::Warning,
            path,
            format!(
                "{at}: new validation rule{} {}: objects valid before may be refused",
                if added.len() == 1 { "" } else { "s" },
                join(&added)
            ),
            "make sure every object stored passes the rule (kube-apiserver ratchets values left unchanged), or add it in a new version",
        );
    }
    if a.default.is_some() && a.default != b.default {
        let d = |s: &JSONSchemaProps| s.default.as_ref().map_or("(none)".into(), |d| json(&d.0));
        cx.field(
            Rule::Default,
            Severity::Warning,
            path,
            format!(
                "{at}: the default changed from {} to {}: objects that leave it out change meaning",
                d(a),
                d(b)
            ),
            "keep the default; add a new version with the new one instead",
        );
    }
    if a.nullable == Some(true) && b.nullable != Some(true) {
        cx.field(
            Rule::Nullable,
            Severity::Warning,
            path,
            format!("{at}: null is no longer allowed (a field `Option<_>` made plain?)"),
            "keep it nullable (`Option<_>`)",
        );
    }
}

/// The `x-kubernetes-*` extensions that decide how objects are merged and validated: list and
/// map types, list-map keys, preserved unknown fields, embedded resources.
fn compare_extensions(cx: &mut Cx<'_, '_>, path: &str, a: &JSONSchemaProps, b: &JSONSchemaProps) {
    let at = shown(path);
    if a.type_.as_deref() == Some("array") && list_type(a) != list_type(b) {
        cx.field(
            Rule::ListType,
            Severity::Error,
            path,
            format!(
                "{at}: x-kubernetes-list-type changed from {} to {}: server-side apply merges the list another way, and objects stored may no longer validate",
                list_type(a),
                list_type(b)
            ),
            FIX_NEW_VERSION,
        );
    } else if a.x_kubernetes_list_map_keys != b.x_kubernetes_list_map_keys {
        let keys = |s: &JSONSchemaProps| s.x_kubernetes_list_map_keys.clone().unwrap_or_default();
        cx.field(
            Rule::ListMapKeys,
            Severity::Error,
            path,
            format!(
                "{at}: x-kubernetes-list-map-keys changed from [{}] to [{}]: items are told apart another way, and objects stored may no longer validate",
                keys(a).join(", "),
                keys(b).join(", ")
            ),
            FIX_NEW_VERSION,
        );
    }
    if a.type_.as_deref() == Some("object") && map_type(a) != map_type(b) {
        cx.field(
            Rule::MapType,
            Severity::Error,
            path,
            format!(
                "{at}: x-kubernetes-map-type changed from {} to {}: server-side apply merges it another way",
                map_type(a),
                map_type(b)
            ),
            FIX_NEW_VERSION,
        );
    }
    if a.x_kubernetes_preserve_unknown_fields == Some(true)
        && b.x_kubernetes_preserve_unknown_fields != Some(true)
    {
        cx.field(
            Rule::PreserveUnknownFieldsRemoval,
            Severity::Error,
            path,
            format!(
                "{at}: x-kubernetes-preserve-unknown-fields removed: fields the schema does not list are pruned from objects stored"
            ),
            "keep it (a `serde_json::Value`, or `#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]`)",
        );
    }
    if a.x_kubernetes_embedded_resource != b.x_kubernetes_embedded_resource {
        cx.field(
            Rule::EmbeddedResource,
            Severity::Error,
            path,
            format!("{at}: x-kubernetes-embedded-resource changed: objects stored are validated another way"),
            FIX_NEW_VERSION,
        );
    }
}

/// A map that stopped being one (its entries pruned), else the fields required.
fn compare_map_or_required(
    cx: &mut Cx<'_, '_>,
    path: &str,
    a: &JSONSchemaProps,
    b: &JSONSchemaProps,
) {
    let at = shown(path);
    let map = |s: &JSONSchemaProps| {
        matches!(
            additional(s),
            Some(JSONSchemaPropsOrBool::Schema(_) | JSONSchemaPropsOrBool::Bool(true))
        )
    };
    if map(a) && !map(b) {
        // Reported below as a whole: the keys its struct now requires would say it again.
        cx.field(
            Rule::ExistingFieldRemoval,
            Severity::Error,
            path,
            format!("{at}: no longer a map: its entries are pruned from objects stored"),
            "keep it a map (`BTreeMap<String, _>`); add a new field or version instead",
        );
    } else {
        compare_required(cx, path, a, b);
    }
}

/// Below the node: the properties, the items of a list, the values of a map.
fn compare_children(cx: &mut Cx<'_, '_>, path: &str, a: &JSONSchemaProps, b: &JSONSchemaProps) {
    for (name, sa) in a.properties.iter().flatten() {
        let p = child(path, name);
        match b.properties.as_ref().and_then(|ps| ps.get(name)) {
            Some(sb) => compare_schema(cx, &p, sa, sb),
            None => {
                let was = cx.field_was(&p);
                cx.field(
                    Rule::ExistingFieldRemoval,
                    Severity::Error,
                    &p,
                    format!(
                        "{p}: field removed: clients that read or write it break, and its values are pruned from objects stored"
                    ),
                    "keep the field (mark it deprecated in its doc comment); to drop it, add a new version without it",
                )
                .was = was;
            }
        }
    }
    if let (Some(ia), Some(ib)) = (items(a), items(b)) {
        compare_schema(cx, &format!("{path}[*]"), ia, ib);
    }
    if let (Some(JSONSchemaPropsOrBool::Schema(va)), Some(JSONSchemaPropsOrBool::Schema(vb))) =
        (additional(a), additional(b))
    {
        compare_schema(cx, &child(path, "*"), va, vb)
    }
}

fn compare_enum(cx: &mut Cx<'_, '_>, path: &str, a: &JSONSchemaProps, b: &JSONSchemaProps) {
    let at = shown(path);
    let values = |s: &JSONSchemaProps| -> Option<Vec<String>> {
        s.enum_
            .as_ref()
            .map(|vs| vs.iter().map(|v| json(&v.0)).collect())
    };
    match (values(a), values(b)) {
        (None, Some(new)) => {
            cx.field(
            Rule::Enum,
            Severity::Error,
            path,
            format!(
                "{at}: now limited to [{}]: objects stored with another value no longer read, and clients that send one are refused",
                new.join(", ")
            ),
            "keep it open (a `String`), or add the restriction in a new version",
            );
        }
        (Some(old), Some(new)) => {
            let removed: Vec<&String> = old.iter().filter(|v| !new.contains(v)).collect();
            let added: Vec<&String> = new.iter().filter(|v| !old.contains(v)).collect();
            if !removed.is_empty() {
                cx.field(
                    Rule::Enum,
                    Severity::Error,
                    path,
                    format!(
                        "{at}: enum value{} {} removed: objects stored with {} no longer read, clients that send {} are refused",
                        if removed.len() == 1 { "" } else { "s" },
                        join(&removed),
                        if removed.len() == 1 { "it" } else { "them" },
                        if removed.len() == 1 { "it" } else { "them" },
                    ),
                    "keep the variant (document it as deprecated); to drop it, add a new version without it",
                );
            }
            if !added.is_empty() {
                cx.field(
                    Rule::Enum,
                    Severity::Warning,
                    path,
                    format!(
                        "{at}: enum value{} {} added: clients built against the old list (older operators among them) cannot read objects that use {}",
                        if added.len() == 1 { "" } else { "s" },
                        join(&added),
                        if added.len() == 1 { "it" } else { "them" },
                    ),
                    "make sure every client of the kind tolerates values it does not know before objects use them",
                );
            }
        }
        _ => {}
    }
}

/// A bound that tightened: added, or moved inward.
fn tighter<T: PartialOrd + Copy>(old: Option<T>, new: Option<T>, upper: bool) -> bool {
    match (old, new) {
        (None, Some(_)) => true,
        (Some(o), Some(n)) => {
            if upper {
                n < o
            } else {
                n > o
            }
        }
        _ => false,
    }
}

fn compare_bounds(cx: &mut Cx<'_, '_>, path: &str, a: &JSONSchemaProps, b: &JSONSchemaProps) {
    let at = shown(path);
    let show = |v: Option<f64>| v.map_or("(none)".into(), |v| v.to_string());
    let showi = |v: Option<i64>| v.map_or("(none)".into(), |v| v.to_string());
    // An exclusive bound at the same value is tighter than an inclusive one.
    let exclusive =
        |old: Option<bool>, new: Option<bool>| !old.unwrap_or(false) && new.unwrap_or(false);
    let mut checks: Vec<(Rule, bool, String)> = vec![
        (
            Rule::Maximum,
            tighter(a.maximum, b.maximum, true)
                || (a.maximum == b.maximum
                    && b.maximum.is_some()
                    && exclusive(a.exclusive_maximum, b.exclusive_maximum)),
            format!("maximum {} -> {}", show(a.maximum), show(b.maximum)),
        ),
        (
            Rule::Minimum,
            tighter(a.minimum, b.minimum, false)
                || (a.minimum == b.minimum
                    && b.minimum.is_some()
                    && exclusive(a.exclusive_minimum, b.exclusive_minimum)),
            format!("minimum {} -> {}", show(a.minimum), show(b.minimum)),
        ),
    ];
    for (rule, name, old, new, upper) in [
        (
            Rule::MaxLength,
            "maxLength",
            a.max_length,
            b.max_length,
            true,
        ),
        (Rule::MaxItems, "maxItems", a.max_items, b.max_items, true),
        (
            Rule::MaxProperties,
            "maxProperties",
            a.max_properties,
            b.max_properties,
            true,
        ),
        (
            Rule::MinLength,
            "minLength",
            a.min_length,
            b.min_length,
            false,
        ),
        (Rule::MinItems, "minItems", a.min_items, b.min_items, false),
        (
            Rule::MinProperties,
            "minProperties",
            a.min_properties,
            b.min_properties,
            false,
        ),
    ] {
        checks.push((
            rule,
            tighter(old, new, upper),
            format!("{name} {} -> {}", showi(old), showi(new)),
        ));
    }
    checks.push((
        Rule::MultipleOf,
        b.multiple_of.is_some() && a.multiple_of != b.multiple_of,
        format!(
            "multipleOf {} -> {}",
            show(a.multiple_of),
            show(b.multiple_of)
        ),
    ));
    for (rule, tightened, what) in checks {
        if tightened {
            cx.field(
                rule,
                Severity::Warning,
                path,
                format!("{at}: {what} tightened: values valid before are refused"),
                "keep the bound, or make sure every object stored is within it (kube-apiserver ratchets values left unchanged); to tighten it for sure, add a new version",
            );
        }
    }
}

/// `oneOf`/`anyOf`/`allOf`/`not`: a branch removed or changed restricts what validates.
fn compare_composition(cx: &mut Cx<'_, '_>, path: &str, a: &JSONSchemaProps, b: &JSONSchemaProps) {
    let at = shown(path);
    let lost = |old: &Option<Vec<JSONSchemaProps>>, new: &Option<Vec<JSONSchemaProps>>| {
        (old.iter().flatten()).any(|s| !new.iter().flatten().any(|t| t == s))
            || (old.is_none() && new.is_some())
    };
    let mut changed = Vec::new();
    if lost(&a.one_of, &b.one_of) {
        changed.push("oneOf");
    }
    if lost(&a.any_of, &b.any_of) {
        changed.push("anyOf");
    }
    if a.all_of != b.all_of && b.all_of.is_some() {
        changed.push("allOf");
    }
    if a.not != b.not && b.not.is_some() {
        changed.push("not");
    }
    if !changed.is_empty() {
        cx.field(
            Rule::Composition,
            Severity::Warning,
            path,
            format!(
                "{at}: {} changed: objects valid before may be refused",
                changed.join(", ")
            ),
            "check that every object stored still validates; add a new version for a restriction",
        );
    }
}

/// Properties newly required: a stored object without them no longer validates, a client that
/// leaves them out is refused, unless the schema defaults them.
fn compare_required(cx: &mut Cx<'_, '_>, path: &str, a: &JSONSchemaProps, b: &JSONSchemaProps) {
    let old: BTreeSet<&String> = a.required.iter().flatten().collect();
    for name in b.required.iter().flatten() {
        if old.contains(name) {
            continue;
        }
        let property = b.properties.as_ref().and_then(|ps| ps.get(name));
        if property.is_some_and(|p| p.default.is_some()) {
            continue;
        }
        let existed = (a.properties.iter()).any(|ps| ps.contains_key(name));
        let p = child(path, name);
        let message = if existed {
            format!(
                "{p}: an optional field became required without a default: objects stored without it no longer validate, clients that leave it out are refused"
            )
        } else {
            format!(
                "{p}: new required field without a default: objects stored have none, and clients that do not send it are refused"
            )
        };
        cx.field(
            Rule::Required,
            Severity::Error,
            &p,
            message,
            "add a default (`#[serde(default)]`, or `#[serde(default = \"path\")]`) or make it an `Option<_>`",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_tightens_when_added_or_moved_inward() {
        // Upper bounds: added or lowered; lower bounds: added or raised.
        assert!(tighter(None, Some(5), true));
        assert!(tighter(Some(10), Some(5), true));
        assert!(!tighter(Some(5), Some(10), true));
        assert!(!tighter(Some(5), None, true));
        assert!(!tighter(Some(5), Some(5), true));
        assert!(tighter(None, Some(1), false));
        assert!(tighter(Some(1), Some(2), false));
        assert!(!tighter(Some(2), Some(1), false));
        assert!(!tighter::<i64>(None, None, false));
    }

    #[test]
    fn unset_list_and_map_types_are_their_defaults() {
        let mut a = JSONSchemaProps::default();
        assert_eq!(list_type(&a), "atomic");
        assert_eq!(map_type(&a), "granular");
        a.x_kubernetes_list_type = Some("set".into());
        a.x_kubernetes_map_type = Some("atomic".into());
        assert_eq!(list_type(&a), "set");
        assert_eq!(map_type(&a), "atomic");
    }
}
