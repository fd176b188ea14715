//! Differential tests of the static CRD generator: every fixture under `fixtures/crdgen/` is
//! compiled here with kube-derive (as a module of this test crate) and read statically from a
//! temp crate; the two CRDs must be equal as parsed values, and the written files must pass `--check`.

use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use kube::core::crd::merge_crds;
use operator_rs::commands::generate::apply;
use operator_rs::crdgen;
use operator_rs::project::Project;
use operator_rs::workspace::DiskTree;

pub fn project() -> Project {
    Project {
        version: "3".into(),
        domain: "example.com".into(),
        repo: String::new(),
        project_name: "fixture".into(),
        crate_name: "fixture".into(),
        layout: vec![operator_rs::project::LAYOUT.into()],
        cli_version: "0.1.0".into(),
        k8s_openapi_feature: "v1_37".into(),
        resources: Vec::new(),
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// A temp crate whose `src/lib.rs` is `pub mod <name>;` and whose `src/<name>.rs` (or
/// `src/<name>/`) is the fixture, so `crate::<name>::...` paths mean the same in both worlds.
pub fn fixture_crate(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/crdgen");
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), format!("pub mod {name};\n")).unwrap();
    let file = fixtures.join(format!("{name}.rs"));
    if file.exists() {
        std::fs::copy(&file, dir.path().join(format!("src/{name}.rs"))).unwrap();
    } else {
        copy_dir(&fixtures.join(name), &dir.path().join("src").join(name));
    }
    std::fs::write(dir.path().join("PROJECT"), project().render().unwrap()).unwrap();
    dir
}

fn check_with(name: &str, project: &Project, expected: Vec<CustomResourceDefinition>) {
    let dir = fixture_crate(name);
    let tree = DiskTree::new(dir.path());
    let out = crdgen::generate(&tree, project).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        out.files.len(),
        expected.len() + 1,
        "{name}: one file per kind + the kustomization"
    );
    for crd in &expected {
        let path = crdgen::crd_path(&crd.spec.group, &crd.spec.names.plural);
        let file = out
            .files
            .iter()
            .find(|f| f.path == path)
            .unwrap_or_else(|| panic!("{name}: no {}", path.display()));
        assert_eq!(
            file.contents,
            crdgen::to_yaml(&serde_saphyr::from_str(&file.contents).unwrap()),
            "{name}: YAML round-trips"
        );
        let got: serde_json::Value = serde_json::to_value(
            serde_saphyr::from_str::<CustomResourceDefinition>(&file.contents).unwrap(),
        )
        .unwrap();
        let want = serde_json::to_value(crd).unwrap();
        if got != want {
            let g = serde_json::to_string_pretty(&got).unwrap();
            let w = serde_json::to_string_pretty(&want).unwrap();
            let diff = similar::TextDiff::from_lines(&w, &g)
                .unified_diff()
                .header("kube-derive", "static")
                .to_string();
            panic!(
                "{name}: {} differs from kube-derive's crd():\n{diff}",
                path.display()
            );
        }
    }
    // Written once, a second run is a no-op (`--check` passes).
    apply(dir.path(), &out, false).unwrap();
    let again = crdgen::generate(&tree, project).unwrap();
    let applied = apply(dir.path(), &again, true).unwrap();
    assert!(
        applied.changed.is_empty(),
        "{name}: --check after writing reports {:?}",
        applied.changed
    );
}

fn check(name: &str, expected: Vec<CustomResourceDefinition>) {
    check_with(name, &project(), expected)
}

#[path = "../fixtures/crdgen/basic.rs"]
mod basic;
#[path = "../fixtures/crdgen/db_cluster.rs"]
mod db_cluster;
#[path = "../fixtures/crdgen/multi_version.rs"]
mod multi_version;

#[path = "../fixtures/crdgen/enums.rs"]
mod enums;

#[path = "../fixtures/crdgen/flatten_value.rs"]
mod flatten_value;

#[path = "../fixtures/crdgen/validation.rs"]
mod validation;

#[path = "../fixtures/crdgen/pod_template.rs"]
mod pod_template;

#[path = "../fixtures/crdgen/defaults.rs"]
mod defaults;

#[test]
fn basic() {
    check("basic", vec![basic::Widget::crd()]);
}

#[test]
fn db_cluster() {
    check("db_cluster", vec![db_cluster::DbCluster::crd()]);
}

#[test]
fn multi_version() {
    let merged = merge_crds(
        vec![
            multi_version::v1::Guestbook::crd(),
            multi_version::v2::Guestbook::crd(),
        ],
        "v1",
    )
    .unwrap();
    check("multi_version", vec![merged]);
}

#[test]
fn enums() {
    check("enums", vec![enums::Router::crd()]);
}

#[test]
fn flatten_value() {
    check("flatten_value", vec![flatten_value::Bag::crd()]);
}

#[test]
fn validation() {
    check("validation", vec![validation::Gate::crd()]);
}

#[test]
fn pod_template() {
    check("pod_template", vec![pod_template::Batch::crd()]);
}

#[test]
fn defaults() {
    check("defaults", vec![defaults::Tuned::crd()]);
}
