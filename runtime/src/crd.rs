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
}

/// `crd:` of a PROJECT file that is not valid.
#[derive(Debug, thiserror::Error)]
#[error(
    "PROJECT: `crd:` is not valid: {0}; valid: `crd: {{knownFormatsOnly: true, maxDescLen: 0}}`"
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
        !self.known_formats_only && self.max_desc_len.is_none()
    }

    /// Applies the options to the schema of every version of `crd`, as `generate crds` does.
    pub fn apply_to_crd(&self, crd: &mut CustomResourceDefinition) {
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
