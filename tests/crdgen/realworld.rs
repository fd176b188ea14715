//! The real-world corpus (`fixtures/crdgen-realworld/`, 20 public CRDs of cert-manager, Gateway API,
//! prometheus-operator and CloudNativePG turned into Rust by kopium; regenerate with
//! `scripts/gen-realworld-corpus.sh`), read statically from one temp crate: every CRD must equal
//! kube-derive's `crd()`, and the linear structural rewrite must give kube-core's output on each
//! kind's schema (compared without kube-apiserver's checks, which 4 of the kinds fail: see
//! `apiserver_checks_on_the_corpus`).
//!
//! kube-derive's output is recorded (`fixtures/crdgen-realworld/recorded/`, by
//! [`records_kube_derive_output`], which compiles the corpus with kube-derive in a crate of its
//! own): compiled in this test crate, the corpus's derives (2 million lines once expanded) took
//! two thirds of the test build's longest crate, and each record says the versions of kube-derive,
//! schemars and k8s-openapi it was rendered with, which must be Cargo.lock's.

use std::path::{Path, PathBuf};
use std::process::Command;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use operator_rs::crdgen::{self, structural};
use operator_rs::project::Project;
use operator_rs::workspace::DiskTree;
use schemars::transform::Transform;
use serde_json::{Value, json};

use crate::crdgen_cases::recorded;

/// Each module of the corpus and its kind.
const CORPUS: [(&str, &str); 20] = [
    ("cm_certificates", "Certificate"),
    ("cm_challenges", "Challenge"),
    ("cm_clusterissuers", "ClusterIssuer"),
    ("cm_issuers", "Issuer"),
    ("cnpg_clusters", "Cluster"),
    ("cnpg_poolers", "Pooler"),
    ("gw_gatewayclasses", "GatewayClass"),
    ("gw_gateways", "Gateway"),
    ("gw_grpcroutes", "GrpcRoute"),
    ("gw_httproutes", "HttpRoute"),
    ("gw_listenersets", "ListenerSet"),
    ("po_alertmanagerconfigs", "AlertmanagerConfig"),
    ("po_alertmanagers", "Alertmanager"),
    ("po_podmonitors", "PodMonitor"),
    ("po_probes", "Probe"),
    ("po_prometheusagents", "PrometheusAgent"),
    ("po_prometheuses", "Prometheus"),
    ("po_scrapeconfigs", "ScrapeConfig"),
    ("po_servicemonitors", "ServiceMonitor"),
    ("po_thanosrulers", "ThanosRuler"),
];

const RECORDER: &str =
    "cargo test --test crdgen -- --ignored realworld::records_kube_derive_output";

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/crdgen-realworld")
}

fn record_path(module: &str) -> PathBuf {
    corpus_dir().join("recorded").join(format!("{module}.json"))
}

/// Every kind: its module, kube-derive's CRD, and its schema before kube-core's rewrite, as
/// recorded for Cargo.lock's versions.
fn corpus() -> Vec<(&'static str, CustomResourceDefinition, Value)> {
    (CORPUS.iter())
        .map(|(module, _)| {
            let path = record_path(module);
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}: record it with `{RECORDER}`", path.display()));
            let mut record: Value = serde_json::from_str(&text).unwrap();
            let with = record["rendered_with"].as_str().unwrap_or_default();
            recorded::assert_current(&path.display().to_string(), with, RECORDER);
            let crd = serde_json::from_value(record["crd"].take()).unwrap();
            (*module, crd, record["schema"].take())
        })
        .collect()
}

/// kube-core's structural rewrite of `schema` (what kube-derive's `crd()` applies last).
fn kube_core_rewrite(schema: &Value) -> Value {
    let mut schema = schemars::Schema::try_from(schema.clone()).unwrap();
    kube_core::schema::StructuralSchemaRewriter.transform(&mut schema);
    schema.to_value()
}

/// The root schema as `crd()` generates it, with the transforms before the structural rewrite
/// only: the recorder's harness computes it with this function's text.
const ROOT_SCHEMA: &str = r#"fn root_schema<K: schemars::JsonSchema>() -> serde_json::Value {
    schemars::generate::SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(schemars::transform::AddNullable::default())
        .into_generator()
        .into_root_schema_for::<K>()
        .to_value()
}
"#;

/// Compiles the corpus with kube-derive in a crate of its own (its dependencies as the `--exact`
/// harness's, in the workspace's build directory) and records, for each kind, `crd()` and the
/// root schema before kube-core's rewrite, with the versions they were rendered with.
#[test]
#[ignore = "records fixtures: run it when Cargo.lock's kube, schemars or k8s-openapi changes, or the corpus does"]
fn records_kube_derive_output() {
    let modules: Vec<&str> = CORPUS.iter().map(|(m, _)| *m).collect();
    let dir = corpus_crate(&modules);
    let root = dir.path();
    std::fs::write(root.join("Cargo.toml"), crate::exact::harness_manifest("")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock"),
        root.join("Cargo.lock"),
    )
    .unwrap();
    let mut main = format!(
        "#![allow(dead_code)]\nuse kube::CustomResourceExt;\n\n{ROOT_SCHEMA}\nfn main() {{\n    let out = serde_json::json!({{\n"
    );
    for (module, kind) in CORPUS {
        main.push_str(&format!(
            "        \"{module}\": {{ \"crd\": fixture::{module}::{kind}::crd(), \"schema\": root_schema::<fixture::{module}::{kind}>() }},\n"
        ));
    }
    main.push_str("    });\n    println!(\"{out}\");\n}\n");
    std::fs::write(root.join("src/main.rs"), main).unwrap();
    let out = crate::common::as_user(&mut Command::new(env!("CARGO")))
        .args(["run", "--quiet", "--offline"])
        .current_dir(root)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env("CARGO_BUILD_BUILD_DIR", crate::exact::workspace_build_dir())
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the corpus did not build with kube-derive:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut all: Value = serde_json::from_slice(&out.stdout).unwrap();
    let with = recorded::versions(&recorded::workspace_lock());
    std::fs::create_dir_all(corpus_dir().join("recorded")).unwrap();
    for (module, _) in CORPUS {
        let record = json!({
            "rendered_with": with,
            "recorded_by": RECORDER,
            "crd": all[module]["crd"].take(),
            "schema": all[module]["schema"].take(),
        });
        // One space of indent: lines to diff when a record changes, at two thirds of the size.
        let mut text = Vec::new();
        let format = serde_json::ser::PrettyFormatter::with_indent(b" ");
        serde::Serialize::serialize(
            &record,
            &mut serde_json::Serializer::with_formatter(&mut text, format),
        )
        .unwrap();
        text.push(b'\n');
        std::fs::write(record_path(module), text).unwrap();
    }
}

fn project() -> Project {
    Project {
        version: "3".into(),
        domain: "example.com".into(),
        repo: String::new(),
        project_name: "realworld".into(),
        crate_name: "realworld".into(),
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

/// A temp crate holding the whole corpus, one module per file, as in this test crate.
fn corpus_crate(modules: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/crdgen-realworld");
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    let mut lib = String::new();
    for m in modules {
        lib.push_str(&format!("pub mod {m};\n"));
        std::fs::copy(
            from.join(format!("{m}.rs")),
            dir.path().join(format!("src/{m}.rs")),
        )
        .unwrap();
    }
    std::fs::write(dir.path().join("src/lib.rs"), lib).unwrap();
    dir
}

#[test]
fn static_output_equals_kube_derive() {
    let corpus = corpus();
    let modules: Vec<&str> = corpus.iter().map(|(m, _, _)| *m).collect();
    let dir = corpus_crate(&modules);
    let out = crdgen::generate_unchecked(&DiskTree::new(dir.path()), &project()).unwrap();
    assert_eq!(
        out.files.len(),
        corpus.len() + 1,
        "one file per kind + the kustomization"
    );
    let mut differing = Vec::new();
    for (module, crd, _) in &corpus {
        let path = crdgen::crd_path(&crd.spec.group, &crd.spec.names.plural);
        let file = out
            .files
            .iter()
            .find(|f| f.path == path)
            .unwrap_or_else(|| panic!("{module}: no {}", path.display()));
        if file.contents != crdgen::to_yaml(crd) {
            differing.push(*module);
        }
    }
    assert!(
        differing.is_empty(),
        "the static YAML differs from kube-derive's crd() for {differing:?}"
    );
}

#[test]
fn linear_rewrite_equals_kube_core() {
    for (module, _, schema) in corpus() {
        let theirs = kube_core_rewrite(&schema);
        let mut ours = schema;
        structural::rewrite(&mut ours).unwrap();
        assert!(
            serde_json::to_string(&ours).unwrap() == serde_json::to_string(&theirs).unwrap(),
            "{module}: the linear rewrite differs from kube-core's"
        );
    }
}

/// kopium writes `serde_json::Value` for objects that preserve unknown fields, so kube-derive's
/// CRD of these kinds has untyped fields: kube-apiserver refuses them, and so does
/// `generate crds` (each at the untyped field); the other 16 pass every check.
#[test]
fn apiserver_checks_on_the_corpus() {
    let mut refused = Vec::new();
    for (module, _) in CORPUS {
        let dir = corpus_crate(&[module]);
        match crdgen::generate(&DiskTree::new(dir.path()), &project()) {
            Ok(_) => {}
            Err(e) => {
                let msg = e.to_string();
                assert!(
                    msg.starts_with(&format!("src/{module}.rs:"))
                        && msg.contains("type: must not be empty"),
                    "{module}: {msg}"
                );
                refused.push(module);
            }
        }
    }
    assert_eq!(
        refused,
        [
            "cm_challenges",
            "cm_clusterissuers",
            "cm_issuers",
            "po_alertmanagerconfigs"
        ]
    );
}
