//! Rust types for a kind this project does not own, from its CRD file (`create api --from-crd`):
//! finds the CRD of a group and kind in a (multi-document) YAML file, picks a served version, and
//! writes its types as kopium does ([`rust`]). Written here rather than with the `kopium` crate: it
//! pins kube 4 and k8s-openapi 0.28, a second kube stack beside the one generated projects use.
//!
//! The generated file carries [`EXTERNAL_MARKER`]: `generate crds` never writes a CRD for the
//! kinds of such a file (the project does not own them).

mod rust;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The comment line that marks a file of external types (`generate crds` skips its kinds).
pub const EXTERNAL_MARKER: &str = "// operator-rs:external-types";

/// Whether a Rust file is one of external types: a line starting with [`EXTERNAL_MARKER`] (then
/// a space or nothing) among its leading comment lines.
pub fn is_external_file(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .take_while(|l| l.starts_with("//") || l.is_empty() || l.starts_with("#!"))
        .any(|l| {
            l.strip_prefix(EXTERNAL_MARKER)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
        })
}

/// Why a CRD file cannot give the types.
#[derive(Debug, thiserror::Error)]
pub enum FromCrdError {
    /// The file cannot be read.
    #[error(
        "cannot read --from-crd {}: {source}\n  e.g. --from-crd config/external/certificates.yaml (a CRD file, relative to the current folder)",
        path.display()
    )]
    Read {
        /// The CRD file, as given.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file is not YAML.
    #[error(
        "--from-crd {}: invalid YAML: {message}\n  The file must hold CustomResourceDefinition documents (apiextensions.k8s.io/v1), separated by `---`.\n  e.g. {CRD_FILE_EXAMPLE}",
        path.display()
    )]
    Yaml {
        /// The CRD file, as given.
        path: PathBuf,
        /// What the YAML parser said, with where.
        message: String,
    },
    /// No CRD of the file is of the kind asked for.
    #[error(
        "--from-crd {}: no CustomResourceDefinition of {wanted} there; {found}\n  e.g. {example}",
        path.display()
    )]
    NoSuchKind {
        /// The CRD file, as given.
        path: PathBuf,
        /// `kind Issuer in group cert-manager.io`.
        wanted: String,
        /// The kinds the file has, as a sentence.
        found: String,
        /// `--group cert-manager.io --kind Certificate`.
        example: String,
    },
    /// The CRD has no version of the name asked for.
    #[error(
        "--from-crd {}: {crd} has no version {version}; it has {versions}\n  e.g. --version {example}",
        path.display()
    )]
    NoSuchVersion {
        /// The CRD file, as given.
        path: PathBuf,
        /// The CRD's name, e.g. `certificates.cert-manager.io`.
        crd: String,
        /// The version asked for.
        version: String,
        /// The versions it has, as a list.
        versions: String,
        /// A version it has.
        example: String,
    },
    /// The version asked for is not served.
    #[error(
        "--from-crd {}: version {version} of {crd} is not served (`served: false`), so the API server has no objects of it to read; served: {served}\n  e.g. --version {example}",
        path.display()
    )]
    NotServed {
        /// The CRD file, as given.
        path: PathBuf,
        /// The CRD's name, e.g. `certificates.cert-manager.io`.
        crd: String,
        /// The version asked for.
        version: String,
        /// The versions served, as a list.
        served: String,
        /// A version served.
        example: String,
    },
    #[error("--from-crd {}: {crd}: {what}; {rule}\n  e.g. {example}", path.display())]
    /// The CRD lacks what types can be written from (a schema, names...).
    Invalid {
        /// The CRD file, as given.
        path: PathBuf,
        /// The CRD's name, e.g. `certificates.cert-manager.io`.
        crd: String,
        /// What is missing or wrong in it.
        what: String,
        /// What the CRD must have, and why.
        rule: &'static str,
        /// The part of a valid CRD that says it.
        example: &'static str,
    },
}

/// A valid input, for the errors about the file as a whole.
const CRD_FILE_EXAMPLE: &str = "--from-crd certificates.yaml, a file of CRDs as their project publishes them (cert-manager's deploy/crds/cert-manager.io_certificates.yaml), starting `apiVersion: apiextensions.k8s.io/v1` and `kind: CustomResourceDefinition`";

/// The chosen version of one CRD of the file.
#[derive(Debug, Clone)]
pub struct Selected {
    /// The CRD's group, e.g. `cert-manager.io`.
    pub group: String,
    /// The version chosen, e.g. `v1`.
    pub version: String,
    /// The kind, e.g. `Certificate`.
    pub kind: String,
    /// The resource's plural name, e.g. `certificates`.
    pub plural: String,
    /// Whether the kind is namespaced (`scope: Namespaced`).
    pub namespaced: bool,
    /// `certificates.cert-manager.io`.
    pub crd_name: String,
    schema: Value,
    status: bool,
    scale: Option<Scale>,
}

impl Selected {
    /// The name of the kind's Rust type (kube-derive's root struct, `#[kube(root = ...)]`): the
    /// kind, or `<Kind>Resource` when a type named as the kind would clash with one the
    /// generated files import or the prelude has (a CRD whose kind is `Option` or `Time`).
    pub fn root_type(&self) -> String {
        if crate::names::is_reserved_kind(&self.kind)
            || ["IntOrString", "Quantity", "BTreeMap"].contains(&self.kind.as_str())
        {
            format!("{}Resource", self.kind)
        } else {
            self.kind.clone()
        }
    }
}

#[derive(Debug, Clone)]
struct Scale {
    spec_replicas_path: String,
    status_replicas_path: String,
    label_selector_path: Option<String>,
}

/// Where the types came from, for the generated file's header.
#[derive(Debug, Clone)]
pub struct Source<'a> {
    /// The CRD file as PROJECT records it (relative to the project, or as given).
    pub file: &'a str,
    /// The hex SHA-256 of the file.
    pub sha256: &'a str,
}

/// The hex SHA-256 of `bytes` (ring: already built for the runtime's TLS).
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Read `path` and pick the CRD of `group`/`kind` at `version` (served).
pub fn select_file(
    path: &Path,
    group: &str,
    version: &str,
    kind: &str,
) -> Result<(Vec<u8>, Selected), FromCrdError> {
    let bytes = std::fs::read(path).map_err(|source| FromCrdError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let text = String::from_utf8(bytes.clone()).map_err(|e| FromCrdError::Yaml {
        path: path.to_path_buf(),
        message: format!("not UTF-8: {e}"),
    })?;
    let selected = select(path, &text, group, version, kind)?;
    Ok((bytes, selected))
}

/// Pick the CRD of `group`/`kind` at `version` in the YAML `text` (read from `path`).
pub fn select(
    path: &Path,
    text: &str,
    group: &str,
    version: &str,
    kind: &str,
) -> Result<Selected, FromCrdError> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(text).map_err(|e| FromCrdError::Yaml {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let crds: Vec<&Value> = docs
        .iter()
        .filter(|d| {
            d["kind"] == "CustomResourceDefinition" && d["apiVersion"] == "apiextensions.k8s.io/v1"
        })
        .collect();
    let Some(crd) = crds
        .iter()
        .find(|d| d["spec"]["group"] == group && d["spec"]["names"]["kind"] == kind)
    else {
        let names: Vec<String> = crds
            .iter()
            .map(|d| {
                format!(
                    "{} {}",
                    d["spec"]["group"].as_str().unwrap_or("?"),
                    d["spec"]["names"]["kind"].as_str().unwrap_or("?")
                )
            })
            .collect();
        let (found, example) = match names.first().and_then(|n| n.split_once(' ')) {
            Some((example_group, example_kind)) => (
                format!("it holds {}", names.join(", ")),
                format!("--group {example_group} --kind {example_kind}"),
            ),
            None => (
                format!(
                    "the file holds no apiextensions.k8s.io/v1 CustomResourceDefinition, only {}",
                    what_documents_are(&docs)
                ),
                CRD_FILE_EXAMPLE.to_string(),
            ),
        };
        return Err(FromCrdError::NoSuchKind {
            path: path.to_path_buf(),
            wanted: format!("kind {kind} in group {group}"),
            found,
            example,
        });
    };
    let spec = &crd["spec"];
    let crd_name = crd["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let invalid = |what: String, rule: &'static str, example: &'static str| FromCrdError::Invalid {
        path: path.to_path_buf(),
        crd: crd_name.clone(),
        what,
        rule,
        example,
    };
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    if versions.is_empty() {
        return Err(invalid(
            "spec.versions is missing or empty".into(),
            "a CRD lists the versions the API server serves, each with its schema",
            VERSIONS_EXAMPLE,
        ));
    }
    let served: Vec<&str> = versions
        .iter()
        .filter(|v| v["served"] == true)
        .filter_map(|v| v["name"].as_str())
        .collect();
    let example = served.first().copied().unwrap_or("v1").to_string();
    let Some(v) = versions.iter().find(|v| v["name"] == version) else {
        let all: Vec<&str> = versions.iter().filter_map(|v| v["name"].as_str()).collect();
        return Err(FromCrdError::NoSuchVersion {
            path: path.to_path_buf(),
            crd: crd_name,
            version: version.to_string(),
            versions: all.join(", "),
            example,
        });
    };
    if v["served"] != true {
        return Err(FromCrdError::NotServed {
            path: path.to_path_buf(),
            crd: crd_name,
            version: version.to_string(),
            served: if served.is_empty() {
                "none".into()
            } else {
                served.join(", ")
            },
            example,
        });
    }
    let schema = v["schema"]["openAPIV3Schema"].clone();
    if !schema.is_object() {
        return Err(invalid(
            format!("version {version} has no schema.openAPIV3Schema"),
            "the types are generated from the version's OpenAPI schema, which every version of an apiextensions.k8s.io/v1 CRD has",
            VERSIONS_EXAMPLE,
        ));
    }
    let plural = spec["names"]["plural"]
        .as_str()
        .filter(|p| !p.is_empty())
        .ok_or_else(|| {
            invalid(
                "spec.names.plural is missing".into(),
                "the plural names the resource in the API's paths and in RBAC rules",
                "names: {kind: Certificate, plural: certificates}",
            )
        })?
        .to_string();
    let namespaced = match spec["scope"].as_str() {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        other => {
            return Err(invalid(
                match other {
                    Some(scope) => format!("spec.scope is {scope:?}"),
                    None => "spec.scope is missing".to_string(),
                },
                "a CRD's scope is Namespaced or Cluster",
                "scope: Namespaced",
            ));
        }
    };
    let sub = &v["subresources"];
    let scale = sub["scale"].as_object().map(|s| Scale {
        spec_replicas_path: s
            .get("specReplicasPath")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .into(),
        status_replicas_path: s
            .get("statusReplicasPath")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .into(),
        label_selector_path: s
            .get("labelSelectorPath")
            .and_then(Value::as_str)
            .map(String::from),
    });
    Ok(Selected {
        group: group.to_string(),
        version: version.to_string(),
        kind: kind.to_string(),
        plural,
        namespaced,
        crd_name,
        schema,
        status: sub["status"].is_object(),
        scale,
    })
}

/// A valid `spec.versions`, for the errors about it.
const VERSIONS_EXAMPLE: &str = "versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object}}}}}]";

/// What the documents of a file without a v1 CRD are, for the error: `2 documents: apps/v1
/// Deployment, apiextensions.k8s.io/v1beta1 CustomResourceDefinition (v1beta1 CRDs were
/// removed in Kubernetes 1.22: convert it to v1)`, or `no YAML document`.
fn what_documents_are(docs: &[Value]) -> String {
    if docs.is_empty() {
        return "no YAML document".to_string();
    }
    let kinds: Vec<String> = docs
        .iter()
        .map(|d| {
            let api_version = d["apiVersion"].as_str().unwrap_or("(no apiVersion)");
            let kind = d["kind"].as_str().unwrap_or("(no kind)");
            if kind == "CustomResourceDefinition" {
                format!(
                    "{api_version} {kind} (only apiextensions.k8s.io/v1 is read; v1beta1 CRDs were removed in Kubernetes 1.22: convert it to v1)"
                )
            } else {
                format!("{api_version} {kind}")
            }
        })
        .collect();
    format!(
        "{} document{}: {}",
        docs.len(),
        if docs.len() == 1 { "" } else { "s" },
        kinds.join(", ")
    )
}

impl Selected {
    /// The Rust source of the kind's types (rustfmt-clean).
    pub fn rust(&self, source: &Source<'_>) -> String {
        rust::render(self, source)
    }

    /// The module name of the group: `cert-manager.io` -> `cert_manager_io`.
    pub fn group_module(&self) -> String {
        module_name(&self.group)
    }

    /// The smallest `spec` the CRD's schema accepts, for the scaffold's e2e test of the kind:
    /// each required field (recursively) with a value of its schema (see [`minimal`]); `None`
    /// when the schema has no `spec`.
    pub fn minimal_spec(&self) -> Option<Value> {
        let spec = self.schema.get("properties")?.get("spec")?;
        Some(minimal(spec, 0))
    }
}

/// The smallest value `schema` accepts, as far as its type, required fields, enum, default,
/// bounds and lengths say (a `pattern` or CEL rule is not solved: `e2e` is the string).
pub fn minimal(schema: &Value, depth: usize) -> Value {
    if let Some(default) = schema.get("default") {
        return default.clone();
    }
    if let Some(first) = schema.get("enum").and_then(|e| e.as_array()?.first()) {
        return first.clone();
    }
    let number = |key: &str| schema.get(key).and_then(Value::as_f64);
    let count = |key: &str| schema.get(key).and_then(Value::as_u64).unwrap_or(0) as usize;
    if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        return Value::from(1);
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => match schema.get("format").and_then(Value::as_str) {
            Some("date-time") => Value::from("2026-01-01T00:00:00Z"),
            Some("date") => Value::from("2026-01-01"),
            Some("duration") => Value::from("1h"),
            Some("int-or-string") => Value::from(1),
            _ => Value::from("e2e".repeat(count("minLength").div_ceil(3).max(1))),
        },
        Some("integer") => Value::from(number("minimum").map_or(1, |m| m.ceil().max(1.0) as i64)),
        Some("number") => Value::from(number("minimum").map_or(1.0, |m| m.max(1.0))),
        Some("boolean") => Value::Bool(false),
        Some("array") => {
            let item = schema
                .get("items")
                .map_or(Value::Null, |i| minimal(i, depth + 1));
            Value::Array(vec![item; count("minItems")])
        }
        _ if depth > 32 => Value::Object(Default::default()),
        _ => {
            let mut out = serde_json::Map::new();
            let required = schema.get("required").and_then(Value::as_array);
            for name in required.into_iter().flatten().filter_map(Value::as_str) {
                if let Some(p) = schema.get("properties").and_then(|p| p.get(name)) {
                    out.insert(name.to_string(), minimal(p, depth + 1));
                }
            }
            Value::Object(out)
        }
    }
}

pub use crate::names::module_name;

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest spec of a schema: required fields only, recursively, each of its type
    /// (default, first enum value, minimum, minLength, minItems honoured).
    #[test]
    fn minimal_values_follow_the_schema() {
        let schema = serde_json::json!({
            "type": "object",
            "required": ["issuerRef", "secretName", "count", "mode", "kept", "list", "at", "port"],
            "properties": {
                "issuerRef": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string"}, "kind": {"type": "string"}}},
                "secretName": {"type": "string", "minLength": 5},
                "count": {"type": "integer", "minimum": 3},
                "mode": {"type": "string", "enum": ["Fast", "Slow"]},
                "kept": {"type": "boolean", "default": true},
                "list": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                "at": {"type": "string", "format": "date-time"},
                "port": {"x-kubernetes-int-or-string": true},
                "optional": {"type": "string"}
            }
        });
        assert_eq!(
            super::minimal(&schema, 0),
            serde_json::json!({
                "issuerRef": {"name": "e2e"},
                "secretName": "e2ee2e",
                "count": 3,
                "mode": "Fast",
                "kept": true,
                "list": ["e2e"],
                "at": "2026-01-01T00:00:00Z",
                "port": 1
            })
        );
    }

    const TWO: &str = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.org}\nspec:\n  group: example.org\n  names: {kind: Widget, plural: widgets}\n  scope: Cluster\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema: {openAPIV3Schema: {type: object}}\n  - name: v0\n    served: false\n    storage: false\n    schema: {openAPIV3Schema: {type: object}}\n";

    #[test]
    fn picks_the_crd_of_a_multi_document_file() {
        let s = select(Path::new("f.yaml"), TWO, "example.org", "v1", "Widget").unwrap();
        assert_eq!((s.plural.as_str(), s.namespaced), ("widgets", false));
    }

    #[test]
    fn refuses_what_the_file_lacks() {
        let p = Path::new("f.yaml");
        let e = select(p, TWO, "example.org", "v1", "Gadget").unwrap_err();
        assert!(e.to_string().contains("it holds example.org Widget"), "{e}");
        let e = select(p, TWO, "example.org", "v2", "Widget").unwrap_err();
        assert!(e.to_string().contains("it has v1, v0"), "{e}");
        let e = select(p, TWO, "example.org", "v0", "Widget").unwrap_err();
        assert!(e.to_string().contains("not served"), "{e}");
        let e = select(p, "a: [", "example.org", "v0", "Widget").unwrap_err();
        assert!(e.to_string().contains("invalid YAML"), "{e}");
    }

    #[test]
    fn module_names() {
        assert_eq!(module_name("cert-manager.io"), "cert_manager_io");
        assert_eq!(module_name("1password.com"), "g1password_com");
        assert_eq!(module_name("v1beta1"), "v1beta1");
    }

    #[test]
    fn marker_is_found_in_the_header_only() {
        assert!(is_external_file(&format!(
            "//! x\n{EXTERNAL_MARKER}\nuse a;"
        )));
        assert!(!is_external_file(&format!("use a;\n{EXTERNAL_MARKER}\n")));
    }
}
