//! A project's samples (`config/samples`) as typed objects, and whether an object is
//! reconciled: what its integration and end-to-end tests share.

use std::path::Path;

use kube::Resource;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::envtest::{Error, Result};

/// The sample of `K` in `<project>/config/samples`: the file whose `apiVersion` and `kind`
/// are `K`'s (files that are not YAML objects are passed over).
///
/// ```no_run
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use operator_rs_runtime::testing::samples::sample;
///
/// let map: ConfigMap = sample(env!("CARGO_MANIFEST_DIR")).unwrap();
/// ```
///
/// # Errors
///
/// [`Error::Manifest`] when there is no such file, or it is not a valid `K`;
/// [`Error::Io`] when the folder cannot be read.
pub fn sample<K>(project: impl AsRef<Path>) -> Result<K>
where
    K: Resource<DynamicType = ()> + DeserializeOwned,
{
    let dir = project.as_ref().join("config/samples");
    let (api_version, kind) = (K::api_version(&()), K::kind(&()));
    let files = std::fs::read_dir(&dir).map_err(|e| Error::io(format!("{}", dir.display()), e))?;
    let mut paths: Vec<_> = files.flatten().map(|f| f.path()).collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let Ok(value) = serde_saphyr::from_str::<Value>(&text) else {
            continue;
        };
        if value["apiVersion"] == api_version.as_ref() && value["kind"] == kind.as_ref() {
            return serde_json::from_value(value).map_err(|e| Error::Manifest {
                path,
                message: format!("not a valid {kind}: {e}"),
            });
        }
    }
    Err(Error::Manifest {
        path: dir,
        message: format!(
            "no sample of {api_version} {kind}: add a file with `apiVersion: {api_version}` and \
             `kind: {kind}`"
        ),
    })
}

/// Whether the operator reconciled `obj`'s current generation: its status reports it in
/// `observedGeneration`.
///
/// ```
/// use operator_rs_runtime::testing::samples::reconciled;
/// use serde_json::json;
///
/// assert!(reconciled(&json!({"metadata": {"generation": 1}, "status": {"observedGeneration": 1}})));
/// assert!(!reconciled(&json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 1}})));
/// assert!(!reconciled(&json!({"metadata": {"generation": 1}})));
/// ```
pub fn reconciled(obj: &Value) -> bool {
    let observed = &obj["status"]["observedGeneration"];
    !observed.is_null() && *observed == obj["metadata"]["generation"]
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("config/samples")).unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join("config/samples").join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn the_file_of_the_kind_is_read_and_others_passed_over() {
        let dir = project(&[
            ("kustomization.yaml", "resources:\n- a.yaml\n"),
            ("broken.yaml", ": : :\n"),
            (
                "secret.yaml",
                "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n",
            ),
            (
                "map.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\ndata: {a: b}\n",
            ),
        ]);
        let map: ConfigMap = sample(dir.path()).unwrap();
        assert_eq!(map.metadata.name.as_deref(), Some("m"));
        assert_eq!(map.data.unwrap()["a"], "b");
    }

    #[test]
    fn a_missing_or_invalid_sample_says_which_and_how() {
        let dir = project(&[("secret.yaml", "apiVersion: v1\nkind: Secret\n")]);
        let error = sample::<ConfigMap>(dir.path()).unwrap_err().to_string();
        assert!(error.contains("no sample of v1 ConfigMap"), "{error}");
        assert!(error.contains("`kind: ConfigMap`"), "{error}");
        let dir = project(&[("map.yaml", "apiVersion: v1\nkind: ConfigMap\ndata: 3\n")]);
        let error = sample::<ConfigMap>(dir.path()).unwrap_err().to_string();
        assert!(
            error.contains("map.yaml") && error.contains("not a valid ConfigMap"),
            "{error}"
        );
    }
}
