//! The CRD options of a project's `PROJECT` (`crd: {knownFormatsOnly, maxDescLen}`): how
//! `operator-rs generate crds` tailors kube-derive's CRDs, in one place for the CLI and for the
//! generated project's drift test (`tests/crds.rs`), so both compare the same CRD. With no option
//! set, the CRD is kube-derive's, byte for byte.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use serde::{Deserialize, Serialize};

/// The integer formats schemars writes that kube-apiserver does not know, and the known format
/// each becomes with `knownFormatsOnly` (int32 when every value fits in it, else int64).
pub const UNKNOWN_INT_FORMATS: &[(&str, &str)] = &[
    ("int8", "int32"),
    ("int16", "int32"),
    ("uint8", "int32"),
    ("uint16", "int32"),
    ("uint32", "int64"),
    ("uint64", "int64"),
    ("uint", "int64"),
    ("int", "int64"),
    ("int128", "int64"),
    ("uint128", "int64"),
];

/// `crd:` in PROJECT: how `operator-rs generate crds` tailors kube-derive's CRDs (absent:
/// kube-derive's output exactly).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CrdSettings {
    /// Write the formats kube-apiserver knows (`int32`/`int64`) instead of schemars' `uint8`,
    /// `uint32`, `uint64`... (which it accepts with an "unrecognized format" warning).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub known_formats_only: bool,
    /// controller-gen's `crd:maxDescLen`: cut field descriptions to this many bytes (0 drops
    /// them), for CRDs too large to install.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_desc_len: Option<usize>,
    /// The CRD as controller-gen writes it for the same API (what `operator-rs import` of a
    /// kubebuilder project sets, so the imported CRDs stay those the Go project installed): the
    /// root's `apiVersion`, `kind` and `metadata` properties and no `title`, the `listKind`,
    /// no `nullable` (controller-gen writes it only for `+nullable`), `metav1.Condition`'s
    /// validation (k8s-openapi's schema of it has none), and an ObjectMeta below the root as
    /// `type: object` (controller-gen without `generateEmbeddedObjectMeta`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub controller_gen: bool,
}

/// `crd:` of a PROJECT file that is not valid.
#[derive(Debug, thiserror::Error)]
#[error(
    "PROJECT: `crd:` is not valid: {0}; valid: `crd: {{knownFormatsOnly: true, maxDescLen: 0, controllerGen: true}}`"
)]
pub struct ProjectError(String);

impl CrdSettings {
    /// No option set.
    pub fn is_default(&self) -> bool {
        *self == CrdSettings::default()
    }

    /// The `crd:` options of the text of a `PROJECT` file (its other keys are not read).
    pub fn from_project(text: &str) -> Result<Self, ProjectError> {
        #[derive(Deserialize)]
        struct Project {
            #[serde(default)]
            crd: CrdSettings,
        }
        serde_saphyr::from_str::<Project>(text)
            .map(|p| p.crd)
            .map_err(|e| ProjectError(e.to_string()))
    }

    /// Whether [`CrdSettings::apply`] changes nothing, whatever the schema.
    pub fn leaves_schemas_as_they_are(&self) -> bool {
        !self.known_formats_only && self.max_desc_len.is_none() && !self.controller_gen
    }

    /// Applies the options to a CRD's names (`controllerGen`: the `listKind`).
    pub fn apply_to_names(&self, crd: &mut CustomResourceDefinition) {
        let names = &mut crd.spec.names;
        if self.controller_gen && names.list_kind.is_none() {
            names.list_kind = Some(format!("{}List", names.kind));
        }
    }

    /// Applies the options to the schema of every version of `crd`, as `generate crds` does.
    pub fn apply_to_crd(&self, crd: &mut CustomResourceDefinition) {
        self.apply_to_names(crd);
        for version in &mut crd.spec.versions {
            let schema = version.schema.as_mut();
            if let Some(schema) = schema.and_then(|s| s.open_api_v3_schema.as_mut()) {
                self.apply(schema);
            }
        }
    }

    /// Applies the options to one CRD schema.
    pub fn apply(&self, schema: &mut JSONSchemaProps) {
        if self.leaves_schemas_as_they_are() {
            return;
        }
        if self.controller_gen {
            as_controller_gen(schema);
        }
        for_each_schema(schema, &mut |s| {
            if self.known_formats_only
                && let Some(f) = &s.format
                && let Some((_, known)) = UNKNOWN_INT_FORMATS.iter().find(|(u, _)| u == f)
            {
                s.format = Some((*known).to_string());
            }
            if let Some(max) = self.max_desc_len {
                s.description = s
                    .description
                    .take()
                    .and_then(|d| truncate_description(&d, max));
            }
        });
    }
}

/// The descriptions controller-gen gives the root's `apiVersion` and `kind` (apimachinery's
/// `TypeMeta`).
const API_VERSION_DESCRIPTION: &str = "APIVersion defines the versioned schema of this representation of an object.\nServers should convert recognized schemas to the latest internal value, and\nmay reject unrecognized values.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DESCRIPTION: &str = "Kind is a string value representing the REST resource this object represents.\nServers may infer this from the endpoint the client submits requests to.\nCannot be updated.\nIn CamelCase.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// The properties of apimachinery's `ObjectMeta`, by which its schema is known below the root.
const OBJECT_META: &[&str] = &[
    "annotations",
    "creationTimestamp",
    "finalizers",
    "generateName",
    "labels",
    "name",
    "namespace",
    "ownerReferences",
    "resourceVersion",
    "uid",
];

/// `controllerGen`: the root schema as controller-gen writes it (see [`CrdSettings::controller_gen`]).
fn as_controller_gen(root: &mut JSONSchemaProps) {
    root.title = None;
    let props = root.properties.get_or_insert_with(Default::default);
    let string = |description: &str| JSONSchemaProps {
        type_: Some("string".into()),
        description: Some(description.into()),
        ..Default::default()
    };
    props
        .entry("apiVersion".into())
        .or_insert_with(|| string(API_VERSION_DESCRIPTION));
    props
        .entry("kind".into())
        .or_insert_with(|| string(KIND_DESCRIPTION));
    props
        .entry("metadata".into())
        .or_insert_with(|| JSONSchemaProps {
            type_: Some("object".into()),
            ..Default::default()
        });
    for_each_schema(root, &mut |s| {
        if s.nullable == Some(true) {
            s.nullable = None;
            if let Some(values) = &mut s.enum_ {
                values.retain(|v| !v.0.is_null());
            }
        }
        let Some(props) = &mut s.properties else {
            return;
        };
        for p in props.values_mut() {
            let is_meta = p
                .properties
                .as_ref()
                .is_some_and(|m| OBJECT_META.iter().all(|k| m.contains_key(*k)));
            if is_meta {
                p.properties = None;
                p.required = None;
            }
        }
        condition_validation(s);
    });
}

/// apimachinery's `metav1.Condition` carries validation markers that k8s-openapi's schema of it
/// lacks: added to a schema with exactly its properties.
fn condition_validation(s: &mut JSONSchemaProps) {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSON;
    const FIELDS: &[&str] = &[
        "lastTransitionTime",
        "message",
        "observedGeneration",
        "reason",
        "status",
        "type",
    ];
    let Some(props) = &mut s.properties else {
        return;
    };
    if props.len() != FIELDS.len() || !FIELDS.iter().all(|f| props.contains_key(*f)) {
        return;
    }
    let set = |props: &mut std::collections::BTreeMap<String, JSONSchemaProps>,
               name: &str,
               f: &dyn Fn(&mut JSONSchemaProps)| {
        if let Some(p) = props.get_mut(name) {
            f(p);
        }
    };
    set(props, "message", &|p| p.max_length = Some(32768));
    set(props, "observedGeneration", &|p| p.minimum = Some(0.0));
    set(props, "reason", &|p| {
        p.max_length = Some(1024);
        p.min_length = Some(1);
        p.pattern = Some("^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$".into());
    });
    set(props, "status", &|p| {
        p.enum_ = Some(
            ["True", "False", "Unknown"]
                .iter()
                .map(|v| JSON(serde_json::Value::String((*v).into())))
                .collect(),
        );
    });
    set(props, "type", &|p| {
        p.max_length = Some(316);
        p.pattern = Some(
            r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
                .into(),
        );
    });
}

/// controller-gen's `crd:maxDescLen`: 0 drops the description; otherwise one longer than `max`
/// bytes is cut at the last sentence end within them, else at the last space (plus `...`), else
/// at `max` (plus `...`).
pub(crate) fn truncate_description(desc: &str, max: usize) -> Option<String> {
    if max == 0 {
        return None;
    }
    if desc.len() <= max {
        return Some(desc.to_string());
    }
    let mut cut = max;
    while !desc.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &desc[..cut];
    if let Some((n, c)) = head
        .char_indices()
        .rev()
        .find(|(_, c)| is_sentence_terminal(*c))
        && n > 0
    {
        return Some(head[..n + c.len_utf8()].to_string());
    }
    if let Some((n, _)) = head.char_indices().rev().find(|(_, c)| c.is_whitespace())
        && n > 0
    {
        return Some(format!("{}...", &head[..n]));
    }
    Some(format!("{head}..."))
}

/// Unicode's `STerm` for the scripts descriptions are written in.
fn is_sentence_terminal(c: char) -> bool {
    matches!(
        c,
        '.' | '!'
            | '?'
            | '\u{589}'
            | '\u{61F}'
            | '\u{6D4}'
            | '\u{964}'
            | '\u{965}'
            | '\u{3002}'
            | '\u{FF01}'
            | '\u{FF0E}'
            | '\u{FF1F}'
    )
}

/// Call `f` on `schema` and every schema below it.
pub(crate) fn for_each_schema(
    schema: &mut JSONSchemaProps,
    f: &mut impl FnMut(&mut JSONSchemaProps),
) {
    f(schema);
    for list in [&mut schema.all_of, &mut schema.any_of, &mut schema.one_of]
        .into_iter()
        .flatten()
    {
        for s in list {
            for_each_schema(s, f);
        }
    }
    for map in [
        &mut schema.properties,
        &mut schema.pattern_properties,
        &mut schema.definitions,
    ]
    .into_iter()
    .flatten()
    {
        for s in map.values_mut() {
            for_each_schema(s, f);
        }
    }
    if let Some(n) = &mut schema.not {
        for_each_schema(n, f);
    }
    match &mut schema.items {
        Some(JSONSchemaPropsOrArray::Schema(s)) => for_each_schema(s, f),
        Some(JSONSchemaPropsOrArray::Schemas(v)) => {
            v.iter_mut().for_each(|s| for_each_schema(s, f))
        }
        None => {}
    }
    for b in [
        &mut schema.additional_properties,
        &mut schema.additional_items,
    ]
    .into_iter()
    .flatten()
    {
        if let JSONSchemaPropsOrBool::Schema(s) = b {
            for_each_schema(s, f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_follows_controller_gen() {
        assert_eq!(
            truncate_description("Short.", 10).as_deref(),
            Some("Short.")
        );
        assert_eq!(truncate_description("anything", 0), None);
        assert_eq!(
            truncate_description("First sentence. Second sentence.", 20).as_deref(),
            Some("First sentence.")
        );
        assert_eq!(
            truncate_description("no sentence end here at all", 12).as_deref(),
            Some("no sentence...")
        );
        assert_eq!(
            truncate_description("unbrokenwordlongerthanmax", 8).as_deref(),
            Some("unbroken...")
        );
        // A cut inside a multi-byte character backs off to its start.
        assert_eq!(truncate_description("ééééé", 3).as_deref(), Some("é..."));
    }

    #[test]
    fn options_are_read_from_project() {
        let text = "domain: example.com\nlayout: [rust.operator-rs/v1]\nresources: []\n";
        assert!(CrdSettings::from_project(text).unwrap().is_default());
        let text = "domain: example.com\ncrd:\n  maxDescLen: 0\n  knownFormatsOnly: true\n";
        let settings = CrdSettings::from_project(text).unwrap();
        assert_eq!(settings.max_desc_len, Some(0));
        assert!(settings.known_formats_only);
        let err = CrdSettings::from_project("crd: {maxDescLength: 0}\n").unwrap_err();
        assert!(err.to_string().contains("maxDescLength"), "{err}");
    }

    #[test]
    fn controller_gen_writes_the_crd_as_controller_gen_does() {
        let condition = serde_json::json!({
            "type": "object",
            "required": ["lastTransitionTime", "message", "reason", "status", "type"],
            "properties": {
                "lastTransitionTime": {"type": "string", "format": "date-time"},
                "message": {"type": "string"},
                "observedGeneration": {"type": "integer", "format": "int64"},
                "reason": {"type": "string"},
                "status": {"type": "string"},
                "type": {"type": "string"}
            }
        });
        let mut crd: CustomResourceDefinition = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "names": {"kind": "Widget", "plural": "widgets"},
                "scope": "Namespaced",
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {
                        "type": "object", "title": "Widget",
                        "properties": {
                            "spec": {"type": "object", "properties": {
                                "mode": {"type": "string", "nullable": true,
                                         "enum": ["Fast", "Slow", null]},
                                "template": {"type": "object", "properties": {
                                    "metadata": {"type": "object", "description": "Its metadata.",
                                        "properties": super::OBJECT_META.iter()
                                            .map(|k| (k.to_string(), serde_json::json!({"type": "string"})))
                                            .collect::<serde_json::Map<_, _>>()}
                                }}
                            }},
                            "status": {"type": "object", "nullable": true, "properties": {
                                "conditions": {"type": "array", "items": condition}
                            }}
                        }
                    }}
                }]
            }
        }))
        .unwrap();
        let settings = CrdSettings {
            controller_gen: true,
            ..CrdSettings::default()
        };
        assert!(!settings.leaves_schemas_as_they_are());
        settings.apply_to_crd(&mut crd);
        let crd = serde_json::to_value(&crd).unwrap();
        assert_eq!(crd["spec"]["names"]["listKind"], "WidgetList");
        let root = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        assert!(root.get("title").is_none());
        assert_eq!(
            root["properties"]["metadata"],
            serde_json::json!({"type": "object"})
        );
        assert_eq!(root["properties"]["kind"]["type"], "string");
        assert!(
            root["properties"]["apiVersion"]["description"]
                .as_str()
                .unwrap()
                .starts_with("APIVersion defines")
        );
        let mode = &root["properties"]["spec"]["properties"]["mode"];
        assert_eq!(
            *mode,
            serde_json::json!({"type": "string", "enum": ["Fast", "Slow"]})
        );
        assert!(root["properties"]["status"].get("nullable").is_none());
        assert_eq!(
            root["properties"]["spec"]["properties"]["template"]["properties"]["metadata"],
            serde_json::json!({"type": "object", "description": "Its metadata."})
        );
        let c = &root["properties"]["status"]["properties"]["conditions"]["items"]["properties"];
        assert_eq!(
            c["status"]["enum"],
            serde_json::json!(["True", "False", "Unknown"])
        );
        assert_eq!(c["reason"]["minLength"], 1);
        assert_eq!(c["type"]["maxLength"], 316);
        assert_eq!(c["message"]["maxLength"], 32768);
        assert_eq!(c["observedGeneration"]["minimum"], 0.0);
    }

    #[test]
    fn every_version_of_a_crd_is_tailored() {
        let version = |name: &str, storage: bool| {
            serde_json::json!({
                "name": name, "served": true, "storage": storage,
                "schema": {"openAPIV3Schema": {
                    "type": "object", "description": "A widget.",
                    "properties": {"size": {
                        "type": "integer", "format": "uint8", "description": "How big."
                    }}
                }}
            })
        };
        let mut crd: CustomResourceDefinition = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "names": {"kind": "Widget", "plural": "widgets"},
                "scope": "Namespaced",
                "versions": [version("v1", true), version("v2", false)],
            }
        }))
        .unwrap();
        let settings = CrdSettings {
            known_formats_only: true,
            max_desc_len: Some(0),
            ..CrdSettings::default()
        };
        settings.apply_to_crd(&mut crd);
        for version in &crd.spec.versions {
            let schema = version.schema.as_ref().unwrap();
            let schema = schema.open_api_v3_schema.as_ref().unwrap();
            assert_eq!(schema.description, None);
            let size = &schema.properties.as_ref().unwrap()["size"];
            assert_eq!(
                (size.description.as_deref(), size.format.as_deref()),
                (None, Some("int32"))
            );
        }
    }
}
