//! Differential tests of the static CRD generator: every fixture under `fixtures/crdgen/` is
//! compiled here with kube-derive (as a module of this test crate) and read statically from a
//! temp crate; the two CRDs must be equal as parsed values, and the written files must pass `--check`.
//! Fidelity is checked without kube-apiserver's checks (`generate_unchecked`): some fixtures hold
//! what kube-derive renders and the API server refuses (see `tests/apiserver/crds.rs`).
// The fixtures are compiled only for their CRDs: their fields are never read.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use kube::core::crd::merge_crds;
use operator_rs::commands::generate::apply;
use operator_rs::crdgen;
use operator_rs::project::Project;
use operator_rs::workspace::DiskTree;

use crate::crdgen_cases::recorded;

pub fn project() -> Project {
    Project {
        version: "3".into(),
        domain: "example.com".into(),
        repo: String::new(),
        project_name: "fixture".into(),
        crate_name: "fixture".into(),
        layout: vec![operator_rs::project::LAYOUT.into()],
        cli_version: "0.1.0".into(),
        cli_source: String::new(),
        scaffold: None,
        commands: Vec::new(),
        k8s_openapi_feature: "v1_37".into(),
        namespaced: false,
        multigroup: false,
        sharded: false,
        resources: Vec::new(),
        crd: Default::default(),
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
    check_in(fixture_crate(name), name, project, expected)
}

/// [`check_with`] on a crate already laid out in `dir`.
fn check_in(
    dir: tempfile::TempDir,
    name: &str,
    project: &Project,
    expected: Vec<CustomResourceDefinition>,
) {
    let tree = DiskTree::new(dir.path());
    let out = crdgen::generate_unchecked(&tree, project).unwrap_or_else(|e| panic!("{name}: {e}"));
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
    let again = crdgen::generate_unchecked(&tree, project).unwrap();
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

#[path = "../../fixtures/crdgen/basic.rs"]
mod basic;
#[path = "../../fixtures/crdgen/db_cluster.rs"]
mod db_cluster;
#[path = "../../fixtures/crdgen/multi_version.rs"]
mod multi_version;

#[path = "../../fixtures/crdgen/enums.rs"]
mod enums;

#[path = "../../fixtures/crdgen/flatten_value.rs"]
mod flatten_value;

#[path = "../../fixtures/crdgen/validation.rs"]
mod validation;

#[path = "../../fixtures/crdgen/pod_template.rs"]
mod pod_template;

#[path = "../../fixtures/crdgen/as_compiled.rs"]
mod as_compiled;
#[path = "../../fixtures/crdgen/backup_schedule.rs"]
mod backup_schedule;
#[path = "../../fixtures/crdgen/cel_rules.rs"]
mod cel_rules;
#[path = "../../fixtures/crdgen/certificate.rs"]
mod certificate;
#[path = "../../fixtures/crdgen/collections.rs"]
mod collections;
#[path = "../../fixtures/crdgen/defaults.rs"]
mod defaults;
#[path = "../../fixtures/crdgen/docs.rs"]
mod docs;
#[path = "../../fixtures/crdgen/durations.rs"]
mod durations;
#[path = "../../fixtures/crdgen/enum_variants.rs"]
mod enum_variants;
#[path = "../../fixtures/crdgen/feature_flags.rs"]
mod feature_flags;
#[path = "../../fixtures/crdgen/flatten_more.rs"]
mod flatten_more;
#[path = "../../fixtures/crdgen/gateway.rs"]
mod gateway;
#[path = "../../fixtures/crdgen/ingress_route.rs"]
mod ingress_route;
#[path = "../../fixtures/crdgen/k8s_types.rs"]
mod k8s_types;
#[path = "../../fixtures/crdgen/kafka_topic.rs"]
mod kafka_topic;
#[path = "../../fixtures/crdgen/kube_attrs.rs"]
mod kube_attrs;
#[path = "../../fixtures/crdgen/large.rs"]
mod large;
#[path = "../../fixtures/crdgen/modular/mod.rs"]
pub(crate) mod modular;
#[path = "../../fixtures/crdgen/newtypes.rs"]
mod newtypes;
#[path = "../../fixtures/crdgen/no_spec.rs"]
mod no_spec;
#[path = "../../fixtures/crdgen/option_enums.rs"]
mod option_enums;
#[path = "../../fixtures/crdgen/reexported/mod.rs"]
mod reexported;
#[path = "../../fixtures/crdgen/rename_cases.rs"]
mod rename_cases;
#[path = "../../fixtures/crdgen/scalars.rs"]
mod scalars;
#[path = "../../fixtures/crdgen/schema_with.rs"]
mod schema_with;
#[path = "../../fixtures/crdgen/schemars_attrs.rs"]
mod schemars_attrs;
#[path = "../../fixtures/crdgen/serde_attrs.rs"]
pub(crate) mod serde_attrs;
#[path = "../../fixtures/crdgen/versions3.rs"]
mod versions3;
// Rendered from docs/markers.md by tests/crdgen/markers_doc.rs: every snippet of the page.
#[path = "../../fixtures/crdgen/markers_doc.rs"]
mod markers_doc;

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

/// `#[cfg]`/`#[cfg_attr]` decided as the compiler decides them, `IntOrString` default functions,
/// a `Default` setting skipped fields to values that are not plain, a rule on `self.namespace`.
#[test]
fn as_compiled() {
    check("as_compiled", vec![as_compiled::Compiled::crd()]);
}

#[test]
fn rename_cases() {
    check("rename_cases", vec![rename_cases::Cases::crd()]);
}

#[test]
fn scalars() {
    check("scalars", vec![scalars::Scalars::crd()]);
}

/// The types schemars gives a schema behind its features (chrono, jiff, uuid, url, semver,
/// indexmap): compiled here, they would make schemars and k8s-openapi compile a second time in
/// every test build, so kube-derive's output for them is recorded (through `--exact`, by
/// tests/crdgen/exact.rs) for the versions in Cargo.lock, and the static reader must write it exactly.
#[test]
fn external_types() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let path = "fixtures/crdgen/external_types.crd.yaml";
    let recorded = std::fs::read_to_string(repo.join(path)).unwrap();
    // Its first line ends "rendered with <versions>."
    let first = recorded.lines().next().unwrap_or_default();
    let with = first.rsplit_once("rendered with ").map_or("", |(_, v)| v);
    recorded::assert_current(
        path,
        with.trim_end_matches('.'),
        recorded::EXTERNAL_TYPES_RECORDER,
    );
    let crd = (recorded.strip_prefix(&recorded::header(&recorded::workspace_lock())))
        .unwrap_or_else(|| panic!("{path}: not headed as the recorder heads it: record it again"));
    let crd: CustomResourceDefinition = serde_saphyr::from_str(crd).unwrap();
    check("external_types", vec![crd]);
}

#[test]
fn schema_with() {
    check("schema_with", vec![schema_with::Shaped::crd()]);
}

#[test]
fn collections() {
    check("collections", vec![collections::Coll::crd()]);
}

#[test]
fn newtypes() {
    check("newtypes", vec![newtypes::Wrapped::crd()]);
}

#[test]
fn docs() {
    check("docs", vec![docs::Documented::crd()]);
}

#[test]
fn schemars_attrs() {
    check("schemars_attrs", vec![schemars_attrs::Attrs::crd()]);
}

#[test]
fn serde_attrs() {
    check("serde_attrs", vec![serde_attrs::SerdeAttrs::crd()]);
}

#[test]
fn feature_flags() {
    check("feature_flags", vec![feature_flags::FeatureFlags::crd()]);
}

#[test]
fn k8s_types() {
    check("k8s_types", vec![k8s_types::Typed::crd()]);
}

#[test]
fn kube_attrs() {
    check("kube_attrs", vec![kube_attrs::Everything::crd()]);
}

#[test]
fn certificate() {
    check("certificate", vec![certificate::Certificate::crd()]);
}

#[test]
fn ingress_route() {
    check("ingress_route", vec![ingress_route::Route::crd()]);
}

#[test]
fn backup_schedule() {
    check(
        "backup_schedule",
        vec![backup_schedule::BackupSchedule::crd()],
    );
}

#[test]
fn kafka_topic() {
    check("kafka_topic", vec![kafka_topic::Topic::crd()]);
}

#[test]
fn gateway() {
    check("gateway", vec![gateway::Gateway::crd()]);
}

#[test]
fn option_enums() {
    check("option_enums", vec![option_enums::OptEnums::crd()]);
}

#[test]
fn no_spec() {
    check("no_spec", vec![no_spec::FlatThing::crd()]);
}

#[test]
fn flatten_more() {
    check("flatten_more", vec![flatten_more::Layered::crd()]);
}

#[test]
fn cel_rules() {
    check("cel_rules", vec![cel_rules::Guarded::crd()]);
}

#[test]
fn modular() {
    check("modular", vec![modular::api::v1::Site::crd()]);
}

#[test]
fn reexported() {
    check(
        "reexported",
        vec![
            reexported::v1::Widget::crd(),
            reexported::v2::Gadget::crd(),
            reexported::v3::Thingamajig::crd(),
            reexported::gizmo_api::Gizmo::crd(),
        ],
    );
}

/// The source decides the storage version: every version saying `storage = false` is refused
/// even where PROJECT marks one (its mark only picks the version the fix names); once the
/// source stores v1beta1, the merge is kube-core's with v1beta1 stored.
#[test]
fn versions3_storage_from_project() {
    let mut project = project();
    for (version, storage) in [("v1alpha1", false), ("v1beta1", true), ("v1", false)] {
        project.resources.push(operator_rs::project::Resource {
            api: Some(operator_rs::project::Api {
                crd_version: "v1".into(),
                namespaced: true,
                storage,
            }),
            path: format!("crate::versions3::{version}::Shop"),
            ..operator_rs::project::Resource::new("ver", "example.com", version, "Shop", "shops")
        });
    }
    let dir = fixture_crate("versions3");
    let err = crdgen::generate(&DiskTree::new(dir.path()), &project).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("Shop.ver.example.com has no storage version")
            && msg.contains(
                "operator-rs edit api --group ver --version v1beta1 --kind Shop --storage"
            ),
        "{msg}"
    );
    let file = dir.path().join("src/versions3.rs");
    let text = std::fs::read_to_string(&file).unwrap();
    let stored = text.replacen(
        "        storage = false,\n        status = \"ShopStatus\",",
        "        status = \"ShopStatus\",",
        1,
    );
    assert_ne!(stored, text, "the fixture's v1beta1 says `storage = false`");
    std::fs::write(&file, stored).unwrap();
    let merged = merge_crds(
        vec![
            versions3::v1alpha1::Shop::crd(),
            versions3::v1beta1::Shop::crd(),
            versions3::v1::Shop::crd(),
        ],
        "v1beta1",
    )
    .unwrap();
    check_in(dir, "versions3", &project, vec![merged]);
}

/// Without PROJECT's word, three `storage = false` versions have no storage version.
#[test]
fn versions3_without_project_storage() {
    let dir = fixture_crate("versions3");
    let err = crdgen::generate(&DiskTree::new(dir.path()), &project()).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("Shop.ver.example.com has no storage version"),
        "{msg}"
    );
    assert!(msg.contains("v1alpha1 at src/versions3.rs:"), "{msg}");
}

/// The warnings of a 1.4 MiB CRD (over 256 KiB, past a third of etcd's limit); its bare
/// `serde_json::Value` fields are refused as non-structural, as kube-apiserver refuses them.
#[test]
fn large_warnings() {
    check("large", vec![large::Pipeline::crd()]);
    let dir = fixture_crate("large");
    let out = crdgen::generate_unchecked(&DiskTree::new(dir.path()), &project()).unwrap();
    let path = "config/crd/bases/big.example.com_pipelines.yaml";
    for what in [
        "over the 256 KiB limit",
        "past a third of etcd's 1.5 MiB limit",
    ] {
        assert!(
            out.warnings
                .iter()
                .any(|w| w.starts_with(path) && w.contains(what)),
            "{what}: {:?}",
            out.warnings
        );
    }
    assert_eq!(out.warnings.len(), 2, "{:#?}", out.warnings);
    let e = crdgen::generate(&DiskTree::new(dir.path()), &project()).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("`.spec.anything`: type: must not be empty"),
        "{msg}"
    );
}

/// A fixture without either problem has no warnings.
#[test]
fn no_warnings() {
    let dir = fixture_crate("k8s_types");
    let out = crdgen::generate(&DiskTree::new(dir.path()), &project()).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

/// An existing kustomization with the marker, user entries and other keys: the CRDs are merged
/// into `resources:` (sorted, deduplicated), a `bases/` entry no kind produces is dropped
/// (`generate crds` owns `bases/`), the marker and everything else kept; idempotent.
#[test]
fn kustomization_merge() {
    let dir = fixture_crate("multi_version");
    let existing = "# user comment\nresources:\n- bases/zzz.example.com_others.yaml\n- bases/webapp.example.com_guestbooks.yaml\n- extra/patch.yaml\n# +operator-rs:scaffold:crdkustomizeresource\n\npatches:\n- path: patches/webhook_in_guestbooks.yaml\n";
    std::fs::create_dir_all(dir.path().join("config/crd")).unwrap();
    std::fs::write(dir.path().join(crdgen::KUSTOMIZATION), existing).unwrap();
    let tree = DiskTree::new(dir.path());
    let out = crdgen::generate(&tree, &project()).unwrap();
    let k = out
        .files
        .iter()
        .find(|f| f.path == std::path::Path::new(crdgen::KUSTOMIZATION))
        .unwrap();
    assert_eq!(
        k.contents,
        "# user comment\nresources:\n- bases/webapp.example.com_guestbooks.yaml\n- extra/patch.yaml\n# +operator-rs:scaffold:crdkustomizeresource\n\npatches:\n- path: patches/webhook_in_guestbooks.yaml\n"
    );
    apply(dir.path(), &out, false).unwrap();
    let again = crdgen::generate(&tree, &project()).unwrap();
    assert!(apply(dir.path(), &again, true).unwrap().changed.is_empty());
}

#[test]
fn durations() {
    check("durations", vec![durations::Rollout::crd()]);
}

#[test]
fn enum_variants() {
    check("enum_variants", vec![enum_variants::Storage::crd()]);
}

#[test]
fn markers_doc() {
    check("markers_doc", markers_doc::crds());
}
