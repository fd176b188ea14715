//! The drift check of a project's committed CRDs: the one under `config/crd/bases` must be
//! exactly what the Rust types produce at run time (`Kind::crd()`), tailored by PROJECT's `crd:`
//! options (`maxDescLen`, `knownFormatsOnly`) as `operator-rs generate crds` tailors them.

use std::path::Path;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{CustomResourceExt, Resource};

use crate::crd::CrdSettings;

/// Panics, saying what differs and to run `operator-rs generate crds`, unless the version of
/// `K` in the CRD committed under `<project>/config/crd/bases` is the one `K::crd()` makes
/// (its storage flag aside: PROJECT decides that across versions), with the same name, group,
/// names and scope.
///
/// ```no_run
/// # #[derive(kube::CustomResource, Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
/// # #[kube(group = "cache.example.com", version = "v1alpha1", kind = "Memcached", namespaced)]
/// # struct MemcachedSpec { size: i32 }
/// #[test]
/// fn committed_crds_match_the_types() {
///     let project = env!("CARGO_MANIFEST_DIR");
///     operator_rs_runtime::testing::crd_drift::assert_committed::<Memcached>(project);
/// }
/// ```
pub fn assert_committed<K: CustomResourceExt + Resource<DynamicType = ()>>(
    project: impl AsRef<Path>,
) {
    let root = project.as_ref();
    let project =
        std::fs::read_to_string(root.join("PROJECT")).unwrap_or_else(|e| panic!("PROJECT: {e}"));
    let settings = CrdSettings::from_project(&project).unwrap_or_else(|e| panic!("{e}"));
    let mut generated = K::crd();
    settings.apply_to_crd(&mut generated);
    let file = committed_file(root, generated.metadata.name.as_deref().unwrap_or_default());
    let path = root.join(&file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{file}: {e}; run `operator-rs generate crds`"));
    let committed: CustomResourceDefinition =
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{file} is not a CRD: {e}"));
    let version = &generated.spec.versions[0];
    let Some(mut stored) = committed
        .spec
        .versions
        .iter()
        .find(|v| v.name == version.name)
        .cloned()
    else {
        panic!(
            "{file} has no version {}: run `operator-rs generate crds`",
            version.name
        );
    };
    // Which version is the storage version is decided across versions (PROJECT), not by one type.
    stored.storage = version.storage;
    let as_json = |v| serde_json::to_string_pretty(&v).expect("a CRD serializes");
    assert!(
        stored == *version,
        "{file}: version {} differs from the Rust types; run `operator-rs generate crds`.\ncommitted:\n{}\ntypes:\n{}",
        version.name,
        as_json(&stored),
        as_json(version)
    );
    assert_eq!(
        committed.metadata.name, generated.metadata.name,
        "{file}: name"
    );
    assert_eq!(committed.spec.group, generated.spec.group, "{file}: group");
    assert_eq!(committed.spec.names, generated.spec.names, "{file}: names");
    assert_eq!(committed.spec.scope, generated.spec.scope, "{file}: scope");
}

/// The file of `<root>/config/crd/bases` that holds the CRD `name` (`<plural>.<group>`):
/// controller-gen's `<group>_<plural>.yaml`, or, when that is too long for a file name, the
/// one operator-rs shortened (whose CRD has this name).
fn committed_file(root: &Path, name: &str) -> String {
    let (plural, group) = name.split_once('.').unwrap_or((name, ""));
    let file = format!("config/crd/bases/{group}_{plural}.yaml");
    let bases = root.join("config/crd/bases");
    if file.len() - "config/crd/bases/".len() <= 255 {
        return file;
    }
    std::fs::read_dir(&bases)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|f| {
            std::fs::read_to_string(bases.join(f)).is_ok_and(|text| {
                serde_saphyr::from_str::<CustomResourceDefinition>(&text)
                    .is_ok_and(|c| c.metadata.name.as_deref() == Some(name))
            })
        })
        .map_or(file, |f| format!("config/crd/bases/{f}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// The size, described.
    #[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
    #[kube(group = "cache.example.com", version = "v1alpha1", kind = "Memcached")]
    #[kube(namespaced)]
    struct MemcachedSpec {
        /// How many replicas.
        size: i32,
    }

    /// A project folder with `PROJECT` and, if given, the committed CRD (as JSON, which is YAML).
    fn project(settings: &str, committed: Option<&CustomResourceDefinition>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("PROJECT"),
            format!("domain: example.com\n{settings}"),
        )
        .unwrap();
        let bases = dir.path().join("config/crd/bases");
        std::fs::create_dir_all(&bases).unwrap();
        if let Some(crd) = committed {
            let file = bases.join("cache.example.com_memcacheds.yaml");
            std::fs::write(file, serde_json::to_string(crd).unwrap()).unwrap();
        }
        dir
    }

    fn panic_message(check: impl FnOnce() + std::panic::UnwindSafe) -> String {
        let panic = std::panic::catch_unwind(check).expect_err("the check fails");
        let text = panic.downcast_ref::<String>().cloned();
        text.unwrap_or_else(|| panic.downcast_ref::<&str>().unwrap().to_string())
    }

    #[test]
    fn the_crd_of_the_types_passes_and_its_storage_flag_is_not_compared() {
        let dir = project("", Some(&Memcached::crd()));
        assert_committed::<Memcached>(dir.path());
        let mut other_storage = Memcached::crd();
        other_storage.spec.versions[0].storage = false;
        let dir = project("", Some(&other_storage));
        assert_committed::<Memcached>(dir.path());
    }

    #[test]
    fn a_crd_not_tailored_by_project_fails_naming_the_file_and_the_fix() {
        let dir = project("crd:\n  maxDescLen: 0\n", Some(&Memcached::crd()));
        let message = panic_message(|| assert_committed::<Memcached>(dir.path()));
        assert!(
            message.contains("cache.example.com_memcacheds.yaml: version v1alpha1 differs"),
            "{message}"
        );
        assert!(
            message.contains("run `operator-rs generate crds`"),
            "{message}"
        );
        let mut tailored = Memcached::crd();
        CrdSettings::from_project("crd:\n  maxDescLen: 0\n")
            .unwrap()
            .apply_to_crd(&mut tailored);
        let dir = project("crd:\n  maxDescLen: 0\n", Some(&tailored));
        assert_committed::<Memcached>(dir.path());
    }

    #[test]
    fn a_missing_crd_or_another_scope_fails() {
        let dir = project("", None);
        let message = panic_message(|| assert_committed::<Memcached>(dir.path()));
        assert!(
            message.contains("run `operator-rs generate crds`"),
            "{message}"
        );
        let mut cluster = Memcached::crd();
        cluster.spec.scope = "Cluster".into();
        let dir = project("", Some(&cluster));
        let message = panic_message(|| assert_committed::<Memcached>(dir.path()));
        assert!(message.contains("scope"), "{message}");
    }
}
