//! The parts of a CRD version beside its schema that kube-apiserver validates
//! (`validateCustomResourceDefinitionVersion`), all written by `#[kube(...)]` attributes: the
//! printer columns (`printcolumn`: type, format, JSON path), the selectable fields (`selectable`:
//! a path to a string, boolean or integer field outside metadata, at most 8, no duplicates), the
//! scale subresource (`scale`: replica paths under `.spec` and `.status`) and the deprecation
//! warning (`deprecated = "..."`: at most 256 printable characters).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinitionVersion, JSONSchemaProps, JSONSchemaPropsOrBool,
};

const COLUMN_TYPES: &[&str] = &["boolean", "date", "integer", "number", "string"];
const COLUMN_FORMATS: &[&str] = &[
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];
/// `MaxSelectableFields`.
const MAX_SELECTABLE: usize = 8;

/// Which attribute item wrote a refused part of a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Written {
    /// The `n`th `printcolumn(..)`.
    PrintColumn(usize),
    /// The `n`th `selectable = ".."`.
    Selectable(usize),
    Scale,
    Deprecated,
}

/// What the API server would refuse in `v` outside its schema: (what, fix, what wrote it).
pub(super) fn check(
    v: &CustomResourceDefinitionVersion,
) -> Option<(String, &'static str, Written)> {
    for (n, c) in v.additional_printer_columns.iter().flatten().enumerate() {
        let why = if c.name.is_empty() {
            Some("name: Required value".to_string())
        } else if !COLUMN_TYPES.contains(&c.type_.as_str()) {
            Some(format!("type: must be one of {}", COLUMN_TYPES.join(",")))
        } else if let Some(f) = c
            .format
            .as_deref()
            .filter(|f| !f.is_empty() && !COLUMN_FORMATS.contains(f))
        {
            Some(format!(
                "format `{f}`: must be one of {}",
                COLUMN_FORMATS.join(",")
            ))
        } else {
            simple_json_path(&c.json_path)
                .err()
                .map(|e| format!("JSONPath `{}`: {e}", c.json_path))
        };
        if let Some(why) = why {
            return Some((
                format!("printer column `{}`: {why}", c.name),
                "fix the `#[kube(printcolumn(..))]` of the kind",
                Written::PrintColumn(n),
            ));
        }
    }
    let schema = v
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref());
    let fields = v.selectable_fields.as_deref().unwrap_or_default();
    let mut seen: Vec<&str> = Vec::new();
    for (n, f) in fields.iter().enumerate() {
        let p = f.json_path.as_str();
        let why = match schema.map(|s| selectable(p, s)) {
            _ if p.is_empty() => Some("jsonPath: Required value".to_string()),
            Some(Err(e)) => Some(e),
            _ if seen.contains(&p) => Some("Duplicate value".to_string()),
            _ => None,
        };
        if let Some(why) = why {
            return Some((
                format!("selectable field `{p}`: {why}"),
                "name a string, boolean or integer field under .spec or .status, once, in `#[kube(selectable = \"..\")]`",
                Written::Selectable(n),
            ));
        }
        seen.push(p);
    }
    if seen.len() > MAX_SELECTABLE {
        return Some((
            format!(
                "selectableFields: Too many: {}: must have at most {MAX_SELECTABLE} items",
                seen.len()
            ),
            "keep at most 8 `#[kube(selectable = ..)]`",
            Written::Selectable(MAX_SELECTABLE),
        ));
    }
    if let Some(scale) = v.subresources.as_ref().and_then(|s| s.scale.as_ref()) {
        let paths = [
            (
                "specReplicasPath",
                Some(scale.spec_replicas_path.as_str()),
                &[".spec."][..],
                ".spec",
            ),
            (
                "statusReplicasPath",
                Some(scale.status_replicas_path.as_str()),
                &[".status."][..],
                ".status",
            ),
            (
                "labelSelectorPath",
                scale
                    .label_selector_path
                    .as_deref()
                    .filter(|p| !p.is_empty()),
                &[".spec.", ".status."][..],
                "either .spec or .status",
            ),
        ];
        for (name, path, under, under_text) in paths {
            let Some(p) = path else { continue };
            let why = if p.is_empty() {
                Some("Required value".to_string())
            } else if let Err(e) = simple_json_path(p) {
                Some(e)
            } else if !under.iter().any(|u| p.starts_with(u)) {
                Some(format!("should be a json path under {under_text}"))
            } else {
                None
            };
            if let Some(why) = why {
                return Some((
                    format!("scale.{name} `{p}`: {why}"),
                    "fix the `#[kube(scale(..))]` of the kind: `.spec.<field>` and `.status.<field>` paths",
                    Written::Scale,
                ));
            }
        }
    }
    if let Some(w) = &v.deprecation_warning {
        let why = if v.deprecated != Some(true) {
            Some("can only be set for deprecated versions".to_string())
        } else {
            deprecation_warning_problem(w)
        };
        if let Some(why) = why {
            return Some((
                format!("deprecationWarning: {why} (in {w:?})"),
                DEPRECATION_WARNING_RULE,
                Written::Deprecated,
            ));
        }
    }
    None
}

/// What a deprecation warning must be, with a valid one.
pub const DEPRECATION_WARNING_RULE: &str = "a deprecation warning is at most 256 bytes of printable characters (letters, marks, numbers, punctuation, symbols and the ASCII space; no tab, newline or other control, format or separator character), e.g. `deprecated = \"example.com/v1alpha1 CronJob is deprecated; use example.com/v1 CronJob\"`";

/// Why kube-apiserver refuses `w` as a deprecation warning (`validateDeprecationWarning`): more
/// than 256 bytes (Go's `len`), empty, or a rune Go's `unicode.IsPrint` refuses (categories L,
/// M, N, P, S and U+0020 only); None when it is accepted.
pub fn deprecation_warning_problem(w: &str) -> Option<String> {
    static NOT_PRINTABLE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"[^\p{L}\p{M}\p{N}\p{P}\p{S} ]").expect("a valid class")
    });
    if w.is_empty() {
        return Some("must not be an empty string".into());
    }
    if w.len() > 256 {
        return Some(format!(
            "must be <= 256 characters long (it is {} bytes)",
            w.len()
        ));
    }
    NOT_PRINTABLE.find(w).map(|m| {
        let c = m.as_str().chars().next().expect("one character");
        format!(
            "must only contain printable UTF-8 characters; {} U+{:04X} found at index {}",
            if c.is_control() {
                "control character"
            } else {
                "non-printable character"
            },
            u32::from(c),
            m.start()
        )
    })
}

/// `validateSimpleJSONPath`.
fn simple_json_path(p: &str) -> Result<(), String> {
    match p.as_bytes().first() {
        None => Err("must not be empty".into()),
        Some(b'.') => Ok(()),
        Some(_) => Err("must be a simple json path starting with .".into()),
    }
}

/// A selectable field: `ValidFieldPath` without array notation, then the field's checks.
fn selectable(p: &str, root: &JSONSchemaProps) -> Result<(), String> {
    let steps = p.strip_prefix('.').ok_or_else(|| {
        // The path parser names the first token it cannot start with.
        let token = p.split(['.', '[']).next().unwrap_or(p);
        format!("is an invalid path: expected [ or . but got: {token}")
    })?;
    if steps.contains('[') {
        return Err("is an invalid path: array notation is not allowed".into());
    }
    let mut s = root;
    for step in steps.split('.') {
        s = if let Some(props) = &s.properties {
            props
                .get(step)
                .ok_or("is an invalid path: does not refer to a valid field")?
        } else if let Some(JSONSchemaPropsOrBool::Schema(v)) = &s.additional_properties {
            v
        } else {
            return Err("is an invalid path: does not refer to a valid field".into());
        };
    }
    if steps.split('.').next() == Some("metadata") {
        return Err("must not point to fields in metadata".into());
    }
    if !matches!(s.type_.as_deref(), Some("string" | "boolean" | "integer")) {
        return Err("must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.".into());
    }
    Ok(())
}
