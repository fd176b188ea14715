//! Output: the one YAML writer for CRDs, the file layout (`config/crd/bases/<group>_<plural>.yaml`),
//! `config/crd/kustomization.yaml`, and the warnings for CRDs that will fail on a cluster.

use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};

use super::error::CrdgenError;
use super::{KindCrd, crd_path};
use crate::workspace::{GeneratedFile, GeneratorOutput, SourceTree};

/// The kustomization listing the CRDs.
pub const KUSTOMIZATION: &str = "config/crd/kustomization.yaml";
const MARKER: &str = "# +operator-rs:scaffold:crdkustomizeresource";
/// The limit of the `kubectl.kubernetes.io/last-applied-configuration` annotation.
const LAST_APPLIED_LIMIT: usize = 262_144;

/// The YAML of a CRD: serde-saphyr over the typed CRD (field order is the struct's, so the text is
/// deterministic).
pub fn to_yaml(crd: &CustomResourceDefinition) -> String {
    serde_saphyr::to_string(crd).expect("a CustomResourceDefinition serializes to YAML")
}

pub(crate) fn files(
    tree: &dyn SourceTree,
    crds: &[KindCrd],
) -> Result<GeneratorOutput, CrdgenError> {
    let mut out = GeneratorOutput::default();
    let mut names = Vec::new();
    for k in crds {
        let path = crd_path(&k.group, &k.plural);
        let text = to_yaml(&k.crd);
        warnings(&path, &k.crd, &text, &mut out.warnings);
        names.push(format!(
            "bases/{}",
            path.file_name()
                .and_then(|f| f.to_str())
                .unwrap_or_default()
        ));
        out.files.push(GeneratedFile {
            path,
            contents: text,
        });
    }
    let rel = PathBuf::from(KUSTOMIZATION);
    let existing = tree.read(&rel).map_err(|source| CrdgenError::Io {
        path: rel.clone(),
        source,
    })?;
    out.files.push(GeneratedFile {
        path: rel,
        contents: kustomization(existing.as_deref(), &names),
    });
    Ok(out)
}

/// `config/crd/kustomization.yaml` with `resources:` listing `names` (plus the entries already
/// there outside `bases/`, which `generate crds` owns: a `bases/` entry no kind produces goes), sorted, the scaffold marker kept after the list; other lines kept.
pub fn kustomization(existing: Option<&str>, names: &[String]) -> String {
    let Some(text) = existing else {
        let mut s = String::from(
            "# This kustomization.yaml is not intended to be run by itself,\n# since it depends on service name and namespace that are out of this kustomize package.\n# It should be run by config/default\nresources:\n",
        );
        let mut sorted = names.to_vec();
        sorted.sort();
        sorted.dedup();
        for n in sorted {
            s.push_str(&format!("- {n}\n"));
        }
        s.push_str(MARKER);
        s.push('\n');
        return s;
    };
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines.iter().position(|l| l.trim_end() == "resources:") else {
        let mut s = text.trim_end().to_string();
        s.push_str("\nresources:\n");
        let mut sorted = names.to_vec();
        sorted.sort();
        for n in sorted {
            s.push_str(&format!("- {n}\n"));
        }
        s.push_str(MARKER);
        s.push('\n');
        return s;
    };
    let mut end = start + 1;
    let mut entries: Vec<String> = Vec::new();
    let mut marker_indent = None;
    while end < lines.len() {
        let l = lines[end];
        let t = l.trim();
        if let Some(item) = t.strip_prefix("- ") {
            entries.push(item.trim().to_string());
        } else if t == MARKER {
            marker_indent = Some(l.len() - l.trim_start().len());
            end += 1;
            break;
        } else {
            break;
        }
        end += 1;
    }
    entries.retain(|e| !e.starts_with("bases/") || names.contains(e));
    entries.extend(names.iter().cloned());
    entries.sort();
    entries.dedup();
    let mut out: Vec<String> = lines[..=start].iter().map(|s| s.to_string()).collect();
    for e in entries {
        out.push(format!("- {e}"));
    }
    out.push(format!(
        "{}{MARKER}",
        " ".repeat(marker_indent.unwrap_or(0))
    ));
    out.extend(lines[end..].iter().map(|s| s.to_string()));
    let mut s = out.join("\n");
    s.push('\n');
    s
}

fn warnings(path: &Path, crd: &CustomResourceDefinition, text: &str, out: &mut Vec<String>) {
    let json_len = serde_json::to_string(crd).map(|s| s.len()).unwrap_or(0);
    if json_len > LAST_APPLIED_LIMIT || text.len() > LAST_APPLIED_LIMIT {
        out.push(format!(
            "{}: the CRD is {} KiB, over the 256 KiB limit of the last-applied-configuration annotation: `kubectl apply` (client-side) will fail; install it with `kubectl apply --server-side` (or create/replace)",
            path.display(),
            text.len().max(json_len) / 1024
        ));
    }
    for v in &crd.spec.versions {
        if let Some(s) = v
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
        {
            untyped(s, &format!(".{}", v.name), path, out);
        }
    }
}

/// Warn about schemas the apiserver rejects as non-structural: no `type` and no
/// `x-kubernetes-preserve-unknown-fields` / `x-kubernetes-int-or-string` (a bare `serde_json::Value`).
fn untyped(s: &JSONSchemaProps, at: &str, path: &Path, out: &mut Vec<String>) {
    let typed = s.type_.is_some()
        || s.x_kubernetes_preserve_unknown_fields == Some(true)
        || s.x_kubernetes_int_or_string == Some(true)
        || s.any_of.is_some()
        || s.one_of.is_some()
        || s.all_of.is_some();
    if !typed {
        out.push(format!(
            "{}: `{at}` has a schema with no type (a bare serde_json::Value?): the apiserver rejects it as non-structural; give the field `#[schemars(schema_with = ...)]` returning `{{\"type\": \"object\", \"x-kubernetes-preserve-unknown-fields\": true}}` or a concrete type",
            path.display()
        ));
    }
    if let Some(props) = &s.properties {
        for (k, p) in props {
            untyped(p, &format!("{at}.{k}"), path, out);
        }
    }
    if let Some(k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrArray::Schema(i)) = &s.items {
        untyped(i, &format!("{at}[]"), path, out);
    }
    if let Some(k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrBool::Schema(a)) = &s.additional_properties {
        untyped(a, &format!("{at}.*"), path, out);
    }
}
