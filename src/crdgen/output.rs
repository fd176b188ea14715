//! Output: the file layout (`config/crd/bases/<group>_<plural>.yaml`),
//! `config/crd/kustomization.yaml`, and the warnings for CRDs that will fail on a cluster.

use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};

use super::error::CrdgenError;
use super::render;
use super::{Checks, KindCrd, crd_path};
use crate::project::CrdSettings;
use crate::workspace::{GeneratedFile, GeneratorOutput, SourceTree};
use operator_rs_runtime::crd::UNKNOWN_INT_FORMATS;

/// The kustomization listing the CRDs.
pub const KUSTOMIZATION: &str = "config/crd/kustomization.yaml";
const MARKER: &str = "# +operator-rs:scaffold:crdkustomizeresource";
/// The limit of the `kubectl.kubernetes.io/last-applied-configuration` annotation.
const LAST_APPLIED_LIMIT: usize = 262_144;
/// etcd's default `--max-request-bytes`: a larger CRD cannot be stored.
pub(crate) const ETCD_LIMIT: usize = 1_572_864;
/// A CRD past a third of etcd's limit is warned about: one or two more versions of the same size
/// (each version carries its whole schema) would not fit.
const ETCD_WARN_AT: usize = ETCD_LIMIT / 3;
/// How to make a CRD smaller, in every size message.
const FIX_SIZE: &str = "drop field descriptions with `crd: {maxDescLen: 0}` in PROJECT (or `generate crds --max-desc-len 0`), as controller-gen's `crd:maxDescLen=0` does";

/// The file of each CRD (rendered now, unless rendered while it was built) and the
/// kustomization listing them; what will fail on a cluster is refused (over etcd's limit, with
/// kube-apiserver's checks) or warned about.
pub(crate) fn files(
    tree: &dyn SourceTree,
    mut crds: Vec<KindCrd>,
    settings: &CrdSettings,
    checks: Checks,
) -> Result<GeneratorOutput, CrdgenError> {
    let mut out = GeneratorOutput::default();
    let mut names = Vec::new();
    let prerendered = crds.iter_mut().map(|k| k.rendered.take()).collect();
    let refs: Vec<_> = crds.iter().map(|k| &k.crd).collect();
    let rendered = render::all(&refs, prerendered);
    for (k, r) in crds.iter().zip(rendered) {
        let (text, json_len) = (r.yaml, r.json_len);
        let path = crd_path(&k.group, &k.plural);
        // What etcd will hold: the JSON plus the managed fields kube-apiserver adds (a path per
        // field); the YAML's length is a close and conservative measure of the two.
        let stored = json_len.max(text.len());
        if checks == Checks::ApiServer && stored > ETCD_LIMIT {
            return Err(CrdgenError::TooLarge(format!(
                "{}: the CRD is {} KiB, over etcd's 1.5 MiB limit per object: kube-apiserver cannot store it (\"etcdserver: request is too large\"); {FIX_SIZE}",
                path.display(),
                stored / 1024
            )));
        }
        warnings(&path, &k.crd, &text, json_len, settings, &mut out.warnings);
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

fn warnings(
    path: &Path,
    crd: &CustomResourceDefinition,
    text: &str,
    json_len: usize,
    settings: &CrdSettings,
    out: &mut Vec<String>,
) {
    let stored = json_len.max(text.len());
    if stored > ETCD_WARN_AT {
        out.push(format!(
            "{}: the CRD is {} KiB ({} version{}), past a third of etcd's 1.5 MiB limit per object: another version or two of this size will not install; {FIX_SIZE}",
            path.display(),
            stored / 1024,
            crd.spec.versions.len(),
            if crd.spec.versions.len() == 1 { "" } else { "s" }
        ));
    }
    let mut unknown_formats = Vec::new();
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
            && !settings.known_formats_only
        {
            let mut at = vec![PathStep::Key(&v.name)];
            walk(s, &mut at, &mut |s, at| {
                if let Some(f) = &s.format
                    && UNKNOWN_INT_FORMATS.iter().any(|(u, _)| u == f)
                {
                    unknown_formats.push(format!("{f} at `{}`", shown(at)));
                }
            });
        }
    }
    if !unknown_formats.is_empty() {
        out.push(format!(
            "{}: kube-apiserver does not know the format{} {} and accepts {} with an \"unrecognized format\" warning; to write the formats it knows (int32, int64) instead, set `crd: {{knownFormatsOnly: true}}` in PROJECT",
            path.display(),
            if unknown_formats.len() == 1 { "" } else { "s" },
            unknown_formats.join(", "),
            if unknown_formats.len() == 1 { "it" } else { "them" }
        ));
    }
}

/// One step of the path to a schema: a property, the items of an array, the values of a map.
enum PathStep<'a> {
    Key(&'a str),
    Items,
    Values,
}

/// A path as messages show it: `.v1.spec.field`, `[]` for items, `.*` for map values.
fn shown(at: &[PathStep<'_>]) -> String {
    let mut out = String::new();
    for step in at {
        match step {
            PathStep::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            PathStep::Items => out.push_str("[]"),
            PathStep::Values => out.push_str(".*"),
        }
    }
    out
}

/// Call `f` on every schema under `s` with its path (built into text only where `f` needs it).
fn walk<'a>(
    s: &'a JSONSchemaProps,
    at: &mut Vec<PathStep<'a>>,
    f: &mut impl FnMut(&JSONSchemaProps, &[PathStep<'_>]),
) {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
        JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
    };
    f(s, at);
    let mut under = |step: PathStep<'a>, child: &'a JSONSchemaProps, at: &mut Vec<PathStep<'a>>| {
        at.push(step);
        walk(child, at, f);
        at.pop();
    };
    if let Some(props) = &s.properties {
        for (k, p) in props {
            under(PathStep::Key(k), p, at);
        }
    }
    if let Some(JSONSchemaPropsOrArray::Schema(i)) = &s.items {
        under(PathStep::Items, i, at);
    }
    if let Some(JSONSchemaPropsOrBool::Schema(a)) = &s.additional_properties {
        under(PathStep::Values, a, at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_gives_each_schema_its_path() {
        let schema: JSONSchemaProps = serde_json::from_value(serde_json::json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "list": {"type": "array", "items": {
                            "type": "object",
                            "additionalProperties": {"type": "integer", "format": "uint8"}
                        }},
                        "n": {"type": "integer", "format": "int32"}
                    }
                }
            }
        }))
        .unwrap();
        let mut seen = Vec::new();
        walk(&schema, &mut vec![PathStep::Key("v1")], &mut |s, at| {
            seen.push((shown(at), s.format.clone()));
        });
        assert_eq!(
            seen,
            [
                (".v1".to_string(), None),
                (".v1.spec".to_string(), None),
                (".v1.spec.list".to_string(), None),
                (".v1.spec.list[]".to_string(), None),
                (".v1.spec.list[].*".to_string(), Some("uint8".to_string())),
                (".v1.spec.n".to_string(), Some("int32".to_string())),
            ]
        );
    }
}
