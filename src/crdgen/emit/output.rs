//! Output: the file layout (`config/crd/bases/<group>_<plural>.yaml`),
//! `config/crd/kustomization.yaml`, and the warnings for CRDs that will fail on a cluster.

use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};

use crate::crdgen::emit::render;
use crate::crdgen::error::CrdgenError;
use crate::crdgen::kind::{Checks, KindCrd, crd_path};
use crate::project::CrdSettings;
use crate::workspace::{GeneratedFile, GeneratorOutput, SourceTree};
use operator_rs_runtime::crd::UNKNOWN_INT_FORMATS;

/// The kustomization listing the CRDs.
pub const KUSTOMIZATION: &str = "config/crd/kustomization.yaml";
const MARKER: &str = "# +operator-rs:scaffold:crdkustomizeresource";
/// The limit of an object's annotations, keys and values together (kube-apiserver's
/// `TotalAnnotationSizeLimitB`), which `kubectl apply` (client-side) fills with
/// [`LAST_APPLIED`].
const LAST_APPLIED_LIMIT: usize = 262_144;
/// The annotation of client-side `kubectl apply`: the object's compact JSON, and a newline.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// etcd's default `--max-request-bytes`: a larger CRD cannot be stored.
pub(crate) const ETCD_LIMIT: usize = 1_572_864;
/// What kube-apiserver adds to a CRD it stores (status, managed fields, uid, timestamps): about
/// 900 bytes, measured on kube-apiserver 1.36.2 (a CRD of 1,571,969 bytes of JSON is stored,
/// one of 1,572,013 is "too large"); a KiB of margin.
const APISERVER_ADDS: usize = 1024;
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
        // What etcd holds is the object, sized as its JSON (the YAML's indentation is not sent:
        // kubectl sends JSON, and kube-apiserver stores a binary encoding no larger).
        if checks == Checks::ApiServer && stored_len(json_len) > ETCD_LIMIT {
            return Err(CrdgenError::TooLarge(format!(
                "{}: the CRD is {} KiB as JSON (the object kube-apiserver stores, with about 1 KiB it adds), over etcd's 1.5 MiB limit per object: kube-apiserver cannot store it (\"etcdserver: request is too large\"); {FIX_SIZE}",
                path.display(),
                json_len / 1024
            )));
        }
        warnings(&path, &k.crd, json_len, settings, &mut out.warnings);
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
    let contents = kustomization(existing.as_deref(), &names);
    check_kustomization(existing.as_deref(), &contents, &names)?;
    out.files.push(GeneratedFile {
        path: rel,
        contents,
    });
    Ok(out)
}

/// The kustomization is edited as lines (its comments and layout kept): refused when the file
/// does not parse as YAML, and when the edit would not leave it a YAML mapping whose `resources`
/// lists every CRD (a `resources:` written as a flow list `[a, b]`, or with a comment on its line,
/// would be given a second `resources:` key, which kustomize refuses).
fn check_kustomization(
    existing: Option<&str>,
    new: &str,
    names: &[String],
) -> Result<(), CrdgenError> {
    fn parse(text: &str) -> Result<Vec<serde_json::Value>, String> {
        serde_saphyr::from_multiple::<serde_json::Value>(text).map_err(|e| {
            let e = e.to_string();
            let first = e.lines().next().unwrap_or_default();
            // serde-saphyr's advice to its caller, not to the user.
            first
                .trim_end_matches(", set DuplicateKeyPolicy in Options if acceptable")
                .to_string()
        })
    }
    if let Some(Err(e)) = existing.map(parse) {
        return Err(CrdgenError::Kustomization(format!(
            "{KUSTOMIZATION}: not valid YAML ({e}); `generate crds` lists the CRDs in its `resources:`. Nothing was written.\n  \
             Fix the file (or restore it from version control: `git checkout -- {KUSTOMIZATION}`), then re-run."
        )));
    }
    let problem = match parse(new) {
        Err(e) => Some(e),
        Ok(docs) => match docs.as_slice() {
            // With no CRD, `resources:` may be left with no entries (null).
            [_] if names.is_empty() => None,
            [doc] => match doc.get("resources").and_then(|r| r.as_array()) {
                Some(list) => names
                    .iter()
                    .find(|n| !list.iter().any(|e| e.as_str() == Some(n.as_str())))
                    .map(|n| format!("`resources` would not list {n}")),
                None => Some("`resources` would not be a list".into()),
            },
            _ => Some(format!("it has {} YAML documents, not one", docs.len())),
        },
    };
    match problem {
        None => Ok(()),
        Some(p) => Err(CrdgenError::Kustomization(format!(
            "{KUSTOMIZATION}: operator-rs keeps its `resources:` in step with the CRDs as a block list, one `- ` entry a line, ended by the line `{MARKER}`; this file's is not one it can keep ({p}). Nothing was written.\n  \
             e.g.\n  resources:\n  - bases/cache.example.com_memcacheds.yaml\n  {MARKER}"
        ))),
    }
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
    // `resources:`, or with a comment after it.
    let is_key = |l: &str| {
        l.strip_prefix("resources:")
            .is_some_and(|rest| rest.trim().is_empty() || rest.trim_start().starts_with('#'))
    };
    let Some(start) = lines.iter().position(|l| is_key(l)) else {
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
    json_len: usize,
    settings: &CrdSettings,
    out: &mut Vec<String>,
) {
    if stored_len(json_len) > ETCD_WARN_AT {
        out.push(format!(
            "{}: the CRD is {} KiB as JSON (the object kube-apiserver stores; {} version{}), past a third of etcd's 1.5 MiB limit per object: another version or two of this size will not install; {FIX_SIZE}",
            path.display(),
            json_len / 1024,
            crd.spec.versions.len(),
            if crd.spec.versions.len() == 1 { "" } else { "s" }
        ));
    }
    let mut unknown_formats = Vec::new();
    let annotation = annotations_len(crd, json_len);
    if annotation > LAST_APPLIED_LIMIT {
        out.push(format!(
            "{}: the CRD's last-applied-configuration annotation would be {} KiB (its JSON, as client-side `kubectl apply` writes it there), over the 256 KiB limit of an object's annotations: `kubectl apply` (client-side) will fail; install it with `kubectl apply --server-side` (as `make install` does) or create/replace",
            path.display(),
            annotation / 1024
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

/// The size of the CRD's stored object as etcd's limit counts it: its JSON and what
/// kube-apiserver adds.
fn stored_len(json_len: usize) -> usize {
    json_len + APISERVER_ADDS
}

/// The size of the CRD's annotations, as kube-apiserver counts them (every key and value), once
/// client-side `kubectl apply` has added [`LAST_APPLIED`]: its key, and its value, the object's
/// JSON (`json_len` long; with `"annotations":{},` in `metadata` when the object had none, as
/// kubectl writes it) and a newline (kubectl's encoder ends it with one). Measured on
/// kube-apiserver 1.36.2: a CRD without annotations of 262,078 bytes of JSON applies, one of
/// 262,079 is refused ("metadata.annotations: Too long").
fn annotations_len(crd: &CustomResourceDefinition, json_len: usize) -> usize {
    let others: usize = (crd.metadata.annotations.iter().flatten())
        .map(|(k, v)| k.len() + v.len())
        .sum();
    let empty_map = match crd.metadata.annotations {
        None => r#""annotations":{},"#.len(),
        Some(_) => 0,
    };
    others + LAST_APPLIED.len() + json_len + empty_map + 1
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

    /// A CRD whose compact JSON (as Go writes it) is exactly `len` bytes: one long description
    /// pads it, as the probes against kube-apiserver 1.36.2 were built.
    fn crd_of_json_len(len: usize, description: char) -> CustomResourceDefinition {
        let build = |pad: usize| -> CustomResourceDefinition {
            serde_json::from_value(serde_json::json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "pads.size.example.com"},
                "spec": {
                    "group": "size.example.com",
                    "scope": "Namespaced",
                    "names": {"plural": "pads", "singular": "pad", "kind": "Pad", "listKind": "PadList"},
                    "versions": [{"name": "v1", "served": true, "storage": true, "schema": {
                        "openAPIV3Schema": {"type": "object", "description":
                            description.to_string().repeat(pad)}
                    }}]
                }
            }))
            .unwrap()
        };
        let base = render::render(&build(0)).json_len;
        let unit = render::render(&build(1)).json_len - base;
        let crd = build((len - base) / unit);
        assert_eq!(render::render(&crd).json_len, len);
        crd
    }

    fn warns_last_applied(crd: &CustomResourceDefinition) -> bool {
        let mut out = Vec::new();
        let json_len = render::render(crd).json_len;
        warnings(
            Path::new("x.yaml"),
            crd,
            json_len,
            &CrdSettings::default(),
            &mut out,
        );
        out.iter().any(|w| w.contains("last-applied-configuration"))
    }

    /// kube-apiserver 1.36.2 took `kubectl apply` (client-side) of a CRD without annotations of
    /// 262,078 bytes of JSON and refused one of 262,079; the warning falls between the two, on
    /// the JSON, not on the YAML (longer by its indentation).
    #[test]
    fn the_last_applied_warning_is_where_kube_apiserver_refuses() {
        let fits = crd_of_json_len(262_078, 'd');
        assert!(!warns_last_applied(&fits));
        assert!(warns_last_applied(&crd_of_json_len(262_079, 'd')));
    }

    /// Go escapes `<`, `>` and `&` in JSON strings (`\u003c`): six bytes where serde_json writes
    /// one; U+2028 and U+2029 too (six bytes for their three).
    #[test]
    fn the_json_is_measured_as_go_writes_it() {
        let with = |description: &str| {
            let mut crd = crd_of_json_len(1_000, 'd');
            let schema = (crd.spec.versions[0].schema.as_mut())
                .and_then(|s| s.open_api_v3_schema.as_mut())
                .unwrap();
            schema.description = Some(description.into());
            render::render(&crd).json_len
        };
        assert_eq!(with("<&>") - with("abc"), 15);
        assert_eq!(with("\u{2028}") - with("abc"), 3);
    }

    /// A CRD of many small nested fields: its YAML (indented) is past 256 KiB, its JSON, which
    /// is what the annotation holds, is not: no warning.
    #[test]
    fn the_yaml_is_not_what_is_measured() {
        let mut props = serde_json::Map::new();
        for i in 0..1_800 {
            props.insert(
                format!("field{i}"),
                serde_json::json!({"type": "object", "properties": {"inner": {"type": "object",
                    "properties": {"leaf": {"type": "string", "description": "a leaf"}}}}}),
            );
        }
        let crd: CustomResourceDefinition = serde_json::from_value(serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "pads.size.example.com"},
            "spec": {"group": "size.example.com", "scope": "Namespaced",
                "names": {"plural": "pads", "singular": "pad", "kind": "Pad", "listKind": "PadList"},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {
                    "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                        "type": "object", "properties": props}}}}}]}
        }))
        .unwrap();
        let r = render::render(&crd);
        assert!(r.yaml.len() > LAST_APPLIED_LIMIT, "{}", r.yaml.len());
        assert!(
            annotations_len(&crd, r.json_len) < LAST_APPLIED_LIMIT,
            "{}",
            r.json_len
        );
        assert!(!warns_last_applied(&crd));
    }

    /// kube-apiserver 1.36.2 stored a CRD of 1,571,969 bytes of JSON and refused one of
    /// 1,572,013 ("etcdserver: request is too large"); the refusal is at or before the latter.
    #[test]
    fn the_etcd_refusal_is_on_the_json() {
        assert!(stored_len(1_572_013) > ETCD_LIMIT);
        assert!(stored_len(1_571_969 - 200) <= ETCD_LIMIT);
    }

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
