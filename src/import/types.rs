//! Go API types to Rust: a kind's root type, spec and status, and every type they reach, written
//! as the Rust module of one kind version (`src/api/[<group>/]<version>/<kind>.rs`), with json tags as serde
//! attributes, Go types as their Rust (k8s-openapi) types, markers as attributes
//! ([`super::markers`]) and Go doc comments as Rust doc comments.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, bail};
use heck::ToSnakeCase;

use super::go::{Field, GoFile, GoType, TypeBody, TypeDecl, description};
use super::markers::{self, FieldRules, lit};
use super::report::Report;

/// The Go files of one API package (`api/v1`, `api/ship/v1`), without tests and generated
/// deepcopy code.
#[derive(Debug, Clone, Default)]
pub struct Package {
    /// The package's folder, relative to the Go project.
    pub dir: std::path::PathBuf,
    pub files: Vec<GoFile>,
}

impl Package {
    fn find(&self, name: &str) -> Option<(&GoFile, &TypeDecl)> {
        self.files
            .iter()
            .find_map(|f| f.types.iter().find(|t| t.name == name).map(|t| (f, t)))
    }

    /// The package markers (`+kubebuilder:validation:Optional` on the package...).
    fn package_markers(&self) -> Vec<&super::go::Marker> {
        self.files
            .iter()
            .flat_map(|f| f.package_markers.iter())
            .collect()
    }
}

/// What the project says of the kind version being translated.
#[derive(Debug, Clone)]
pub struct KindInfo {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
    /// `Some(true/false)` when the kind has several versions: whether this one is stored.
    pub storage: Option<bool>,
}

/// One kind version's Rust module, and the types it declares (others of the same package
/// `use` them from it).
#[derive(Debug, Clone)]
pub struct KindModule {
    pub text: String,
    pub declared: BTreeSet<String>,
}

/// Writes the module of `info`'s kind; `declared` are the types other modules of this version
/// already declare (module name -> types), which this one imports.
pub fn kind_module(
    pkg: &Package,
    info: &KindInfo,
    declared: &BTreeMap<String, BTreeSet<String>>,
    report: &mut Report,
) -> Result<KindModule> {
    let Some((file, root)) = pkg.find(&info.kind) else {
        bail!(
            "no Go type {} in the package of {}/{}: PROJECT names the kind, its {}/ has no `type {} struct`\n  \
             add the type, or remove the kind from PROJECT, then run operator-rs import again",
            info.kind,
            info.group,
            info.version,
            pkg.dir.display(),
            info.kind
        );
    };
    let TypeBody::Struct(fields) = &root.body else {
        bail!("{}: the kind {} is not a struct", root.at, info.kind);
    };
    let field = |json: &str| {
        fields
            .iter()
            .find(|f| f.json.as_deref().map(json_name) == Some(json))
    };
    let Some(spec_field) = field("spec") else {
        bail!(
            "{}: the kind {} has no `spec` field; operator-rs kinds are derived from a spec struct (kube-derive)\n  \
             e.g. Spec {}Spec `json:\"spec,omitempty\"`",
            root.at,
            info.kind,
            info.kind
        );
    };
    let spec_name = match &spec_field.ty {
        GoType::Ident(n) => n.clone(),
        GoType::Pointer(inner) if matches!(**inner, GoType::Ident(_)) => match &**inner {
            GoType::Ident(n) => n.clone(),
            _ => unreachable!(),
        },
        other => bail!(
            "{}: the spec of {} is a {other:?}; import maps a spec that is a struct of the package",
            spec_field.at,
            info.kind
        ),
    };
    let status_name = field("status").and_then(|f| match &f.ty {
        GoType::Ident(n) => Some(n.clone()),
        GoType::Pointer(inner) => match &**inner {
            GoType::Ident(n) => Some(n.clone()),
            _ => None,
        },
        _ => None,
    });
    let root_markers = &root.comments.markers;
    let has_status_marker = root_markers
        .iter()
        .any(|m| m.text == "kubebuilder:subresource:status");
    if let (Some(status_field), false) = (field("status"), has_status_marker) {
        report.add(
            &status_field.at,
            format!("the status of {} without +kubebuilder:subresource:status", info.kind),
            "kube-derive declares a status only as a subresource: the imported kind has a status subresource (kubectl and controllers write it through /status)",
        );
    }
    for f in fields {
        let name = f.json.as_deref().map(json_name).unwrap_or_default();
        let known = matches!(name, "spec" | "status" | "metadata" | "")
            || matches!(&f.ty, GoType::Qualified(_, t) if t == "TypeMeta" || t == "ObjectMeta");
        if !known {
            report.add(
                &f.at,
                format!("the field {name:?} of the kind {}", info.kind),
                "kube-derive makes a kind of metadata, spec and status only: move it into the spec",
            );
        }
    }

    let mut w = Writer {
        pkg,
        report,
        version_declared: declared,
        declared: BTreeSet::new(),
        queue: Vec::new(),
        out: Vec::new(),
        imports: BTreeSet::new(),
        kube_schema: BTreeSet::new(),
        package_optional: pkg
            .package_markers()
            .iter()
            .any(|m| m.text == "kubebuilder:validation:Optional"),
        errors: Vec::new(),
    };
    // The spec first, as the kind's derive.
    let Some((_, spec)) = pkg.find(&spec_name) else {
        bail!(
            "{}: the spec type {spec_name} is not in the package",
            spec_field.at
        );
    };
    let spec_doc =
        description(&spec_field.comments.doc).or_else(|| description(&spec.comments.doc));
    let kube = kube_attribute(
        info,
        file,
        root,
        status_name.as_deref(),
        has_status_marker,
        w.report,
    );
    w.declared.insert(spec_name.clone());
    if let Some(status) = &status_name
        && has_status_marker
    {
        let status_doc = field("status").and_then(|f| description(&f.comments.doc));
        w.queue.push((status.clone(), status_doc));
    }
    w.write_struct(spec, spec_doc, Some(kube));
    while let Some((name, doc)) = w.queue.pop() {
        if w.declared.contains(&name) {
            continue;
        }
        if let Some((_, decl)) = pkg.find(&name) {
            w.declared.insert(name.clone());
            let decl = decl.clone();
            match &decl.body {
                TypeBody::Struct(_) => {
                    w.write_struct(&decl, doc.or_else(|| description(&decl.comments.doc)), None)
                }
                TypeBody::Named(_) => w.write_named(&decl),
            }
        }
    }
    if !w.errors.is_empty() {
        bail!("{}\nNothing was written.", w.errors.join("\n"));
    }
    let mut header = format!(
        "//! The `{}` kind of `{}/{}`, imported from its Go types by `operator-rs import`.\n//!\n//! How kubebuilder's CRD markers are written in Rust: docs/markers.md in operator-rs.\n\n",
        info.kind, info.group, info.version
    );
    let mut uses: Vec<String> = w.imports.iter().cloned().collect();
    uses.push("kube::CustomResource".into());
    if !w.kube_schema.is_empty() {
        uses.push("kube::KubeSchema".into());
    }
    if w.kube_schema.len() < w.declared.len() {
        uses.push("schemars::JsonSchema".into());
    }
    uses.push("serde::{Deserialize, Serialize}".into());
    uses.sort();
    uses.dedup();
    for u in uses {
        header.push_str(&format!("use {u};\n"));
    }
    header.push('\n');
    let text = format!("{header}{}", w.out.join("\n"));
    Ok(KindModule {
        text,
        declared: w.declared,
    })
}

/// The json name of a tag (`name,omitempty` -> `name`).
pub fn json_name(tag: &str) -> &str {
    tag.split(',').next().unwrap_or("")
}

fn tag_has(tag: Option<&str>, opt: &str) -> bool {
    tag.map(|t| t.split(',').skip(1).any(|o| o == opt))
        .unwrap_or(false)
}

/// `#[kube(...)]` of the kind from the markers of its root type.
fn kube_attribute(
    info: &KindInfo,
    file: &GoFile,
    root: &TypeDecl,
    status: Option<&str>,
    has_status: bool,
    report: &mut Report,
) -> String {
    let _ = file;
    let mut args = vec![
        format!("group = {}", lit(&info.group)),
        format!("version = {}", lit(&info.version)),
        format!("kind = {}", lit(&info.kind)),
        format!("plural = {}", lit(&info.plural)),
    ];
    let mut namespaced = info.namespaced;
    let mut extra = Vec::new();
    let mut storage = info.storage;
    for m in &root.comments.markers {
        let (name, arg) = markers::split(&m.text);
        match name {
            "kubebuilder:subresource:status" => {}
            "kubebuilder:subresource:scale" => {
                let a = markers::args(arg);
                let get = |k: &str| a.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
                let mut parts = Vec::new();
                if let Some(v) = get("specpath") {
                    parts.push(format!("spec_replicas_path = {}", lit(&v)));
                }
                if let Some(v) = get("statuspath") {
                    parts.push(format!("status_replicas_path = {}", lit(&v)));
                }
                if let Some(v) = get("selectorpath") {
                    parts.push(format!("label_selector_path = {}", lit(&v)));
                }
                extra.push(format!("scale({})", parts.join(", ")));
            }
            "kubebuilder:resource" => {
                for (k, v) in markers::args(arg) {
                    match k.as_str() {
                        "path" => {}
                        "scope" => namespaced = v != "Cluster",
                        "shortName" => extra.extend(
                            v.split(';')
                                .map(|s| format!("shortname = {}", lit(s.trim()))),
                        ),
                        "categories" => extra.extend(
                            v.split(';')
                                .map(|s| format!("category = {}", lit(s.trim()))),
                        ),
                        "singular" => extra.push(format!("singular = {}", lit(&v))),
                        _ => report.add(
                            &m.at,
                            format!("+{}", m.text),
                            format!("the argument {k} has no Rust form"),
                        ),
                    }
                }
            }
            "kubebuilder:printcolumn" => {
                let mut parts = Vec::new();
                for (k, v) in markers::args(arg) {
                    match k.as_str() {
                        "name" => parts.push(format!("name = {}", lit(&v))),
                        "type" => parts.push(format!("type_ = {}", lit(&v))),
                        "JSONPath" => parts.push(format!("json_path = {}", lit(&v))),
                        "description" => parts.push(format!("description = {}", lit(&v))),
                        "format" => parts.push(format!("format = {}", lit(&v))),
                        "priority" => parts.push(format!("priority = {v}")),
                        _ => report.add(
                            &m.at,
                            format!("+{}", m.text),
                            format!("the argument {k} has no Rust form"),
                        ),
                    }
                }
                extra.push(format!("printcolumn({})", parts.join(", ")));
            }
            "kubebuilder:storageversion" => storage = Some(true),
            "kubebuilder:deprecatedversion" => {
                let warning = markers::args(arg)
                    .into_iter()
                    .find(|(k, _)| k == "warning")
                    .map(|(_, v)| v);
                extra.push(match warning {
                    Some(w) => format!("deprecated = {}", lit(&w)),
                    None => "deprecated".into(),
                });
            }
            "kubebuilder:unservedversion" => extra.push("served = false".into()),
            "kubebuilder:validation:XValidation" => match markers::rule(arg) {
                Some(r) => extra.push(format!("validation = {r}")),
                None => report.add(
                    &m.at,
                    format!("+{}", m.text),
                    "an XValidation marker without rule=",
                ),
            },
            "kubebuilder:metadata" => {
                for (k, v) in markers::args(arg) {
                    let key = if k == "annotations" {
                        "annotation"
                    } else {
                        "label"
                    };
                    for pair in v.split(';') {
                        if let Some((a, b)) = pair.split_once('=') {
                            extra.push(format!("{key}({}, {})", lit(a.trim()), lit(b.trim())));
                        }
                    }
                }
            }
            "kubebuilder:selectablefield" => {
                if let Some((_, v)) = markers::args(arg)
                    .into_iter()
                    .find(|(k, _)| k == "JSONPath")
                {
                    extra.push(format!("selectable = {}", lit(&v)));
                }
            }
            _ if markers::no_counterpart(&m.text) => {}
            _ => report.add(
                &m.at,
                format!("+{}", m.text),
                "a kind marker without a Rust form (docs/markers.md); write its equivalent by hand",
            ),
        }
    }
    if namespaced {
        args.push("namespaced".into());
    }
    if let (Some(s), true) = (status, has_status) {
        args.push(format!("status = {}", lit(s)));
    }
    if let Some(stored) = storage {
        args.push(format!("storage = {stored}"));
    }
    if let Some(doc) = description(&root.comments.doc) {
        args.push(format!("doc = {}", lit(&doc)));
    }
    args.extend(extra);
    format!("#[kube(\n    {}\n)]", args.join(",\n    "))
}

struct Writer<'a> {
    pkg: &'a Package,
    report: &'a mut Report,
    version_declared: &'a BTreeMap<String, BTreeSet<String>>,
    declared: BTreeSet<String>,
    queue: Vec<(String, Option<String>)>,
    out: Vec<String>,
    imports: BTreeSet<String>,
    /// Types that derive `KubeSchema` (they carry `x_kube` rules).
    kube_schema: BTreeSet<String>,
    package_optional: bool,
    /// Fields whose Go type has no Rust form: the import is refused with all of them.
    errors: Vec<String>,
}

fn doc_lines(doc: &str, indent: &str) -> String {
    doc.lines()
        .map(|l| {
            if l.is_empty() {
                format!("{indent}///\n")
            } else {
                format!("{indent}/// {l}\n")
            }
        })
        .collect()
}

/// A Rust identifier for a json name (`replicas`, `type` -> `r#type`).
fn rust_ident(json: &str) -> String {
    let mut s = json.to_snake_case();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s = format!("f_{s}");
    }
    if crate::names::is_rust_keyword(&s) {
        if matches!(s.as_str(), "self" | "super" | "crate" | "Self") {
            return format!("{s}_");
        }
        return format!("r#{s}");
    }
    s
}

/// The Rust type of a Go type and what its items are: (type, is a list, is optional already).
enum Mapped {
    Ok(String),
    /// No Rust type: the reason.
    No(String),
}

impl Writer<'_> {
    /// A named type of the package, resolved through aliases: the declaration.
    fn local(&self, name: &str) -> Option<TypeDecl> {
        if self.declared.contains(name) {
            return self.pkg.find(name).map(|(_, d)| d.clone());
        }
        self.pkg.find(name).map(|(_, d)| d.clone())
    }

    /// The markers a named non-struct type carries to each field of its type.
    fn named_markers(&self, ty: &GoType) -> Vec<super::go::Marker> {
        let mut out = Vec::new();
        let mut t = ty.clone();
        let mut seen = 0;
        while seen < 8 {
            seen += 1;
            let name = match &t {
                GoType::Ident(n) => n.clone(),
                GoType::Pointer(inner) => {
                    t = (**inner).clone();
                    continue;
                }
                _ => break,
            };
            match self.local(&name) {
                Some(TypeDecl {
                    body: TypeBody::Named(under),
                    comments,
                    ..
                }) if !self.is_enum(&name) => {
                    out.extend(comments.markers.clone());
                    t = under;
                }
                _ => break,
            }
        }
        out
    }

    /// A named string type with `+kubebuilder:validation:Enum` or `+k8s:enum` (a Rust enum).
    fn is_enum(&self, name: &str) -> bool {
        matches!(self.pkg.find(name), Some((_, TypeDecl { body: TypeBody::Named(GoType::Ident(u)), comments, .. }))
            if u == "string" && comments.markers.iter().any(|m| is_enum_marker(&m.text)))
    }

    fn map(&mut self, ty: &GoType, file: &GoFile) -> Mapped {
        match ty {
            GoType::Ident(n) => match n.as_str() {
                "string" => Mapped::Ok("String".into()),
                "bool" => Mapped::Ok("bool".into()),
                "int" | "int64" => Mapped::Ok("i64".into()),
                "int32" => Mapped::Ok("i32".into()),
                "int16" => Mapped::Ok("i16".into()),
                "int8" => Mapped::Ok("i8".into()),
                "uint" | "uint64" => Mapped::Ok("u64".into()),
                "uint32" => Mapped::Ok("u32".into()),
                "uint16" => Mapped::Ok("u16".into()),
                "uint8" | "byte" => Mapped::Ok("u8".into()),
                "float32" => Mapped::Ok("f32".into()),
                "float64" => Mapped::Ok("f64".into()),
                "any" => Mapped::No("an interface (any) has no schema".into()),
                other => match self.local(other) {
                    Some(decl) => match &decl.body {
                        TypeBody::Struct(_) => {
                            self.want(other);
                            Mapped::Ok(other.to_string())
                        }
                        TypeBody::Named(under) => {
                            if self.is_enum(other) {
                                self.want(other);
                                Mapped::Ok(other.to_string())
                            } else {
                                let under = under.clone();
                                self.map(&under, file)
                            }
                        }
                    },
                    None => Mapped::No(format!(
                        "the type {other} is not declared in the API package"
                    )),
                },
            },
            GoType::Pointer(inner) => self.map(inner, file),
            GoType::Slice(inner) if **inner == GoType::Ident("byte".into()) => {
                self.imports.insert("k8s_openapi::ByteString".into());
                Mapped::Ok("ByteString".into())
            }
            GoType::Slice(inner) | GoType::Array(_, inner) => match self.map(inner, file) {
                Mapped::Ok(t) => Mapped::Ok(format!("Vec<{t}>")),
                no => no,
            },
            GoType::Map(k, v) => {
                if **k != GoType::Ident("string".into()) && !self.string_like(k) {
                    return Mapped::No("a map whose keys are not strings has no JSON form".into());
                }
                match self.map(v, file) {
                    Mapped::Ok(t) => {
                        self.imports.insert("std::collections::BTreeMap".into());
                        Mapped::Ok(format!("BTreeMap<String, {t}>"))
                    }
                    no => no,
                }
            }
            GoType::Qualified(pkg, name) => {
                let path = file.import(pkg).unwrap_or(pkg.as_str()).to_string();
                self.qualified(&path, name)
            }
            GoType::Other(text) => {
                Mapped::No(format!("the Go type `{text}` has no schema import can map"))
            }
        }
    }

    fn string_like(&self, ty: &GoType) -> bool {
        match ty {
            GoType::Ident(n) => {
                matches!(self.local(n), Some(TypeDecl { body: TypeBody::Named(GoType::Ident(u)), .. }) if u == "string")
            }
            _ => false,
        }
    }

    /// A type of another Go package: apimachinery's and k8s.io/api's as k8s-openapi's.
    fn qualified(&mut self, path: &str, name: &str) -> Mapped {
        let k8s = |imports: &mut BTreeSet<String>, module: &str, ty: &str| {
            imports.insert(format!("k8s_openapi::{module}::{ty}"));
            Mapped::Ok(ty.to_string())
        };
        match (path, name) {
            ("k8s.io/apimachinery/pkg/apis/meta/v1", "Duration") => Mapped::Ok("String".into()),
            ("k8s.io/apimachinery/pkg/apis/meta/v1", ty) => {
                k8s(&mut self.imports, "apimachinery::pkg::apis::meta::v1", ty)
            }
            ("k8s.io/apimachinery/pkg/api/resource", "Quantity") => k8s(
                &mut self.imports,
                "apimachinery::pkg::api::resource",
                "Quantity",
            ),
            ("k8s.io/apimachinery/pkg/util/intstr", "IntOrString") => k8s(
                &mut self.imports,
                "apimachinery::pkg::util::intstr",
                "IntOrString",
            ),
            ("k8s.io/apimachinery/pkg/runtime", "RawExtension") => {
                Mapped::Ok("RawExtension".into())
            }
            ("k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1", "JSON") => {
                Mapped::Ok("JSON".into())
            }
            (p, ty) if p.starts_with("k8s.io/api/") => {
                let rest = &p["k8s.io/api/".len()..];
                let module = format!("api::{}", rest.replace(['/', '.'], "::"));
                k8s(&mut self.imports, &module, ty)
            }
            (p, ty) => Mapped::No(format!(
                "the type {ty} of the Go package {p} has no Rust form import knows (apimachinery's and k8s.io/api's types map to k8s-openapi's)"
            )),
        }
    }

    fn want(&mut self, name: &str) {
        if !self.declared.contains(name) && self.imported_from(name).is_none() {
            self.queue.push((name.to_string(), None));
        } else if let Some(module) = self.imported_from(name) {
            self.imports.insert(format!("super::{module}::{name}"));
        }
    }

    fn imported_from(&self, name: &str) -> Option<String> {
        self.version_declared
            .iter()
            .find(|(_, names)| names.contains(name))
            .map(|(m, _)| m.clone())
    }

    fn write_named(&mut self, decl: &TypeDecl) {
        // Only enums are declared (other named types are inlined at their fields).
        let consts: Vec<&super::go::Const> = self
            .pkg
            .files
            .iter()
            .flat_map(|f| f.consts.iter())
            .filter(|c| c.ty.as_deref() == Some(decl.name.as_str()))
            .collect();
        let enum_marker = decl
            .comments
            .markers
            .iter()
            .find(|m| is_enum_marker(&m.text));
        let values: Vec<serde_json::Value> = match enum_marker {
            // `+k8s:enum`: the type's string constants, sorted by their JSON text, as
            // controller-gen (v0.21) writes them.
            Some(m) if markers::split(&m.text).0 == "k8s:enum" => {
                let mut values: Vec<serde_json::Value> = consts
                    .iter()
                    .filter(|c| c.value.trim().starts_with(['"', '`']))
                    .map(|c| serde_json::Value::String(markers::unquote(c.value.trim())))
                    .collect();
                values.sort_by_key(|v| v.to_string());
                values
            }
            Some(m) => markers::split_top(markers::split(&m.text).1, ';')
                .iter()
                .map(|s| markers::value(s))
                .collect(),
            None => Vec::new(),
        };
        let mut s = String::new();
        // The Go type's doc as a plain comment: a doc comment would be the schema's description
        // wherever the enum is used, where controller-gen writes the field's.
        if let Some(doc) = description(&decl.comments.doc) {
            s.push_str(&doc_lines(&doc, "").replace("///", "//"));
        }
        s.push_str("#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]\n");
        s.push_str(&format!("pub enum {} {{\n", decl.name));
        let mut used = BTreeSet::new();
        for v in values {
            let text = match &v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let konst = consts
                .iter()
                .find(|c| markers::unquote(c.value.trim()) == text);
            let mut variant = heck::ToUpperCamelCase::to_upper_camel_case(text.as_str());
            if variant.is_empty() || variant.starts_with(|c: char| c.is_ascii_digit()) {
                variant = format!("V{variant}");
            }
            while !used.insert(variant.clone()) {
                variant.push('_');
            }
            if let Some(doc) = konst.and_then(|c| description(&c.doc)) {
                s.push_str(&doc_lines(&doc, "    "));
            }
            s.push_str(&format!(
                "    #[serde(rename = {})]\n    {variant},\n",
                lit(&text)
            ));
        }
        s.push_str("}\n");
        self.out.push(s);
    }

    fn write_struct(&mut self, decl: &TypeDecl, doc: Option<String>, kube: Option<String>) {
        let TypeBody::Struct(fields) = &decl.body else {
            return;
        };
        let file = self
            .pkg
            .files
            .iter()
            .find(|f| f.types.iter().any(|t| t.name == decl.name))
            .cloned()
            .unwrap_or_default();
        let mut type_rules = FieldRules::default();
        let mut type_markers = Vec::new();
        for m in &decl.comments.markers {
            let (name, _) = markers::split(&m.text);
            // Markers of the type that apply to its schema; on the spec only those (its other
            // markers are the kind's, read from the root type).
            let schema_marker = name.starts_with("kubebuilder:validation:")
                || name.starts_with("kubebuilder:pruning:")
                || name == "structType"
                || name == "mapType";
            if schema_marker || (!markers::no_counterpart(&m.text) && kube.is_none()) {
                type_markers.push(m.clone());
            }
        }
        let root_type = kube.is_some();
        if !root_type || !type_markers.is_empty() {
            markers::field_rules(&type_markers, &mut type_rules, self.report);
        }
        let optional_struct = type_rules.optional == Some(true);
        let mut body = String::new();
        let mut needs_kube_schema = !type_rules.rules.is_empty();
        for f in fields {
            let (text, kube_schema) = self.field(f, &file, optional_struct, &decl.name);
            needs_kube_schema |= kube_schema;
            body.push_str(&text);
        }
        let mut s = String::new();
        if let Some(doc) = doc {
            s.push_str(&doc_lines(&doc, ""));
        }
        let schema = if needs_kube_schema {
            self.kube_schema.insert(decl.name.clone());
            "KubeSchema"
        } else {
            "JsonSchema"
        };
        if root_type {
            s.push_str(&format!(
                "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, {schema})]\n"
            ));
            s.push_str(&kube.unwrap_or_default());
            s.push('\n');
        } else {
            s.push_str(&format!(
                "#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, {schema})]\n"
            ));
        }
        for a in type_rules.attributes(None) {
            s.push_str(&a);
            s.push('\n');
        }
        s.push_str(&format!("pub struct {} {{\n{body}}}\n", decl.name));
        self.out.push(s);
    }

    /// A newtype of a list's items (`WidgetSpecHostsItem(String)`) that carries what the
    /// field's `+kubebuilder:validation:items:` markers ask of them beyond schemars' `inner(...)`
    /// (an enum, a format, `multipleOf`, a CEL rule...): its name.
    fn item_newtype(
        &mut self,
        at: &super::go::At,
        (owner, json): (&str, &str),
        item: &str,
        rules: &FieldRules,
    ) -> String {
        let base = format!(
            "{owner}{}Item",
            heck::ToUpperCamelCase::to_upper_camel_case(json)
        );
        let mut name = base.clone();
        let mut n = 1;
        while self.declared.contains(&name) || self.pkg.find(&name).is_some() {
            n += 1;
            name = format!("{base}{n}");
        }
        self.declared.insert(name.clone());
        if matches!(item, "IntOrString" | "Quantity") {
            self.report.add(
                at,
                format!("the items of {owner}.{json}"),
                format!("k8s-openapi's schema of {item} under the `items:` markers' keywords: its description, and no `anyOf: [{{type: integer}}, {{type: string}}]` beside `x-kubernetes-int-or-string` (controller-gen writes the anyOf, no description); the API server takes the same values"),
            );
        }
        let attrs = rules.item_attributes(item);
        let schema = if attrs.iter().any(|a| a.starts_with("#[x_kube")) {
            self.kube_schema.insert(name.clone());
            "KubeSchema"
        } else {
            "JsonSchema"
        };
        let mut s = format!(
            "// An item of `{json}`, with what its Go markers (`+kubebuilder:validation:items:`) ask of it.\n#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, {schema})]\n"
        );
        for a in &attrs {
            s.push_str(a);
            s.push('\n');
        }
        if schema == "KubeSchema" {
            // kube-derive's `KubeSchema` takes a struct with named fields only: one, transparent.
            s.push_str(&format!(
                "#[serde(transparent)]\npub struct {name} {{\n    pub value: {item},\n}}\n"
            ));
        } else {
            s.push_str(&format!("pub struct {name}(pub {item});\n"));
        }
        self.out.push(s);
        name
    }

    /// One field's Rust text, and whether it needs `KubeSchema` on its struct.
    fn field(
        &mut self,
        f: &Field,
        file: &GoFile,
        optional_struct: bool,
        owner: &str,
    ) -> (String, bool) {
        let tag = f.json.as_deref();
        let json = tag.map(json_name).unwrap_or("");
        if json == "-" {
            return (String::new(), false);
        }
        let inline = tag_has(tag, "inline") || (f.name.is_none() && json.is_empty());
        let mut rules = FieldRules::default();
        let named = self.named_markers(&f.ty);
        markers::field_rules(&named, &mut rules, self.report);
        markers::field_rules(&f.comments.markers, &mut rules, self.report);
        let mapped = self.map(&f.ty, file);
        let ty = match mapped {
            Mapped::Ok(t) => t,
            Mapped::No(why) => {
                self.errors.push(format!(
                    "{}: the field {} cannot be mapped: {why}\n  give it a type a CRD schema can describe (a struct of the package, a string, number, bool, slice, map with string keys, or an apimachinery / k8s.io/api type), then run operator-rs import again",
                    f.at,
                    f.name.as_deref().unwrap_or(json)
                ));
                return (String::new(), false);
            }
        };
        // `runtime.RawExtension` and `apiextensionsv1.JSON` are a `serde_json::Value` with
        // the keywords of controller-gen's schema of them: on the field, or on its items (a
        // newtype of the items says them, as `items:` markers').
        let (ty, special, on_items) = match ty.as_str() {
            "Vec<RawExtension>" | "Vec<JSON>" => {
                let item = &ty["Vec<".len()..ty.len() - 1];
                ("Vec<serde_json::Value>".to_string(), opaque(item), true)
            }
            "RawExtension" | "JSON" => ("serde_json::Value".to_string(), opaque(&ty), false),
            _ => (ty, Vec::new(), false),
        };
        let target = if on_items {
            rules.items.get_or_insert_with(Default::default)
        } else {
            &mut rules
        };
        for (k, v) in special {
            if !target.extend.iter().any(|(e, _)| *e == k) {
                target.extend.insert(0, (k, v));
            }
        }
        if let Some((path, name)) = k8s_api_type(&f.ty, file) {
            self.report.add(
                &f.at,
                format!("the schema of {path}.{name}"),
                "k8s-openapi's schema of it (Kubernetes 1.37), which lacks the Go type's +listType/+mapType markers and defaults and may have fields of a newer Kubernetes: check the CRD's difference there",
            );
        }
        let is_pointer = matches!(f.ty, GoType::Pointer(_));
        let is_list = ty.starts_with("Vec<");
        let ty = match rules.items.take() {
            Some(items) if !is_list => {
                self.report.add(
                    &f.at,
                    format!("the items: markers of {owner}.{json}"),
                    "not translated: the field is not a list (controller-gen refuses `+kubebuilder:validation:items:` markers on it); put them on the field's own markers, without `items:`",
                );
                let _ = items;
                ty
            }
            Some(items)
                if items.fits_inner(&ty["Vec<".len()..ty.len() - 1])
                    || items.item_attributes("").is_empty() =>
            {
                rules.items = Some(items);
                ty
            }
            Some(items) => {
                let item = &ty["Vec<".len()..ty.len() - 1];
                format!(
                    "Vec<{}>",
                    self.item_newtype(&f.at, (owner, json), item, &items)
                )
            }
            None => ty,
        };
        let is_map = ty.starts_with("BTreeMap<");
        let omit = tag_has(tag, "omitempty") || tag_has(tag, "omitzero");
        let optional = match rules.optional {
            Some(o) => o,
            None => omit || optional_struct || self.package_optional,
        };
        let mut s = String::new();
        if let Some(doc) = description(&f.comments.doc) {
            s.push_str(&doc_lines(&doc, "    "));
        }
        let mut serde = Vec::new();
        let name = if inline {
            serde.push("flatten".to_string());
            let base = match &f.ty {
                GoType::Ident(n) | GoType::Qualified(_, n) => n.to_snake_case(),
                GoType::Pointer(inner) => match &**inner {
                    GoType::Ident(n) | GoType::Qualified(_, n) => n.to_snake_case(),
                    _ => "inline".into(),
                },
                _ => "inline".into(),
            };
            rust_ident(&base)
        } else {
            let json = if json.is_empty() {
                f.name.clone().unwrap_or_default()
            } else {
                json.to_string()
            };
            let ident = rust_ident(&json);
            serde.push(format!("rename = {}", lit(&json)));
            ident
        };
        let rust_ty = if inline {
            ty.clone()
        } else if optional {
            if is_list {
                serde.push("default".into());
                serde.push("skip_serializing_if = \"Vec::is_empty\"".into());
                ty.clone()
            } else if is_map {
                serde.push("default".into());
                serde.push("skip_serializing_if = \"BTreeMap::is_empty\"".into());
                ty.clone()
            } else if ty == "String" && !is_pointer {
                serde.push("default".into());
                serde.push("skip_serializing_if = \"String::is_empty\"".into());
                ty.clone()
            } else {
                serde.push("default".into());
                serde.push("skip_serializing_if = \"Option::is_none\"".into());
                format!("Option<{ty}>")
            }
        } else {
            ty.clone()
        };
        s.push_str(&format!("    #[serde({})]\n", serde.join(", ")));
        let attrs = rules.attributes(ty.strip_prefix("Vec<").and_then(|t| t.strip_suffix('>')));
        let kube_schema = attrs.iter().any(|a| a.starts_with("#[x_kube"));
        for a in attrs {
            s.push_str(&format!("    {a}\n"));
        }
        s.push_str(&format!("    pub {name}: {rust_ty},\n"));
        (s, kube_schema)
    }
}

/// The keywords of controller-gen's schema of `runtime.RawExtension` (`RawExtension`) or
/// `apiextensionsv1.JSON` (`JSON`), which are a `serde_json::Value` in Rust.
fn opaque(ty: &str) -> Vec<(String, serde_json::Value)> {
    let preserve = (
        "x-kubernetes-preserve-unknown-fields".to_string(),
        serde_json::json!(true),
    );
    match ty {
        "RawExtension" => vec![("type".to_string(), serde_json::json!("object")), preserve],
        _ => vec![preserve],
    }
}

/// `+kubebuilder:validation:Enum=a;b` or `+k8s:enum` (on a type: its constants are the values).
fn is_enum_marker(text: &str) -> bool {
    matches!(
        markers::split(text).0,
        "kubebuilder:validation:Enum" | "k8s:enum"
    )
}

/// The k8s.io/api type a field's type is (through pointers and slices): its package and name.
fn k8s_api_type(ty: &GoType, file: &GoFile) -> Option<(String, String)> {
    match ty {
        GoType::Pointer(inner) | GoType::Slice(inner) | GoType::Array(_, inner) => {
            k8s_api_type(inner, file)
        }
        GoType::Map(_, v) => k8s_api_type(v, file),
        GoType::Qualified(pkg, name) => {
            let path = file.import(pkg)?;
            path.starts_with("k8s.io/api/")
                .then(|| (path.to_string(), name.clone()))
        }
        _ => None,
    }
}
