//! The real-world corpus (`fixtures/crdgen-realworld/`, 20 public CRDs of cert-manager, Gateway API,
//! prometheus-operator and CloudNativePG turned into Rust by kopium; regenerate with
//! `scripts/gen-realworld-corpus.sh`): compiled here with kube-derive, read statically from one temp
//! crate; every CRD must equal kube-derive's `crd()`, and the linear structural rewrite must give
//! kube-core's output on each kind's schema (compared without kube-apiserver's checks, which 4
//! of the kinds fail: see `apiserver_checks_on_the_corpus`).
// The corpus is compiled only for its CRDs: its fields are never read.
#![allow(dead_code, clippy::all)]

use std::path::PathBuf;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use operator_rs::crdgen::{self, structural};
use operator_rs::project::Project;
use operator_rs::workspace::DiskTree;
use schemars::transform::Transform;

#[path = "../../fixtures/crdgen-realworld/cm_certificates.rs"]
mod cm_certificates;
#[path = "../../fixtures/crdgen-realworld/cm_challenges.rs"]
mod cm_challenges;
#[path = "../../fixtures/crdgen-realworld/cm_clusterissuers.rs"]
mod cm_clusterissuers;
#[path = "../../fixtures/crdgen-realworld/cm_issuers.rs"]
mod cm_issuers;
#[path = "../../fixtures/crdgen-realworld/cnpg_clusters.rs"]
mod cnpg_clusters;
#[path = "../../fixtures/crdgen-realworld/cnpg_poolers.rs"]
mod cnpg_poolers;
#[path = "../../fixtures/crdgen-realworld/gw_gatewayclasses.rs"]
mod gw_gatewayclasses;
#[path = "../../fixtures/crdgen-realworld/gw_gateways.rs"]
mod gw_gateways;
#[path = "../../fixtures/crdgen-realworld/gw_grpcroutes.rs"]
mod gw_grpcroutes;
#[path = "../../fixtures/crdgen-realworld/gw_httproutes.rs"]
mod gw_httproutes;
#[path = "../../fixtures/crdgen-realworld/gw_listenersets.rs"]
mod gw_listenersets;
#[path = "../../fixtures/crdgen-realworld/po_alertmanagerconfigs.rs"]
mod po_alertmanagerconfigs;
#[path = "../../fixtures/crdgen-realworld/po_alertmanagers.rs"]
mod po_alertmanagers;
#[path = "../../fixtures/crdgen-realworld/po_podmonitors.rs"]
mod po_podmonitors;
#[path = "../../fixtures/crdgen-realworld/po_probes.rs"]
mod po_probes;
#[path = "../../fixtures/crdgen-realworld/po_prometheusagents.rs"]
mod po_prometheusagents;
#[path = "../../fixtures/crdgen-realworld/po_prometheuses.rs"]
mod po_prometheuses;
#[path = "../../fixtures/crdgen-realworld/po_scrapeconfigs.rs"]
mod po_scrapeconfigs;
#[path = "../../fixtures/crdgen-realworld/po_servicemonitors.rs"]
mod po_servicemonitors;
#[path = "../../fixtures/crdgen-realworld/po_thanosrulers.rs"]
mod po_thanosrulers;

/// Every kind: its module, kube-derive's CRD, and its schema before kube-core's rewrite.
fn corpus() -> Vec<(&'static str, CustomResourceDefinition, serde_json::Value)> {
    vec![
        (
            "cm_certificates",
            cm_certificates::Certificate::crd(),
            root_schema::<cm_certificates::Certificate>(),
        ),
        (
            "cm_challenges",
            cm_challenges::Challenge::crd(),
            root_schema::<cm_challenges::Challenge>(),
        ),
        (
            "cm_clusterissuers",
            cm_clusterissuers::ClusterIssuer::crd(),
            root_schema::<cm_clusterissuers::ClusterIssuer>(),
        ),
        (
            "cm_issuers",
            cm_issuers::Issuer::crd(),
            root_schema::<cm_issuers::Issuer>(),
        ),
        (
            "cnpg_clusters",
            cnpg_clusters::Cluster::crd(),
            root_schema::<cnpg_clusters::Cluster>(),
        ),
        (
            "cnpg_poolers",
            cnpg_poolers::Pooler::crd(),
            root_schema::<cnpg_poolers::Pooler>(),
        ),
        (
            "gw_gatewayclasses",
            gw_gatewayclasses::GatewayClass::crd(),
            root_schema::<gw_gatewayclasses::GatewayClass>(),
        ),
        (
            "gw_gateways",
            gw_gateways::Gateway::crd(),
            root_schema::<gw_gateways::Gateway>(),
        ),
        (
            "gw_grpcroutes",
            gw_grpcroutes::GrpcRoute::crd(),
            root_schema::<gw_grpcroutes::GrpcRoute>(),
        ),
        (
            "gw_httproutes",
            gw_httproutes::HttpRoute::crd(),
            root_schema::<gw_httproutes::HttpRoute>(),
        ),
        (
            "gw_listenersets",
            gw_listenersets::ListenerSet::crd(),
            root_schema::<gw_listenersets::ListenerSet>(),
        ),
        (
            "po_alertmanagerconfigs",
            po_alertmanagerconfigs::AlertmanagerConfig::crd(),
            root_schema::<po_alertmanagerconfigs::AlertmanagerConfig>(),
        ),
        (
            "po_alertmanagers",
            po_alertmanagers::Alertmanager::crd(),
            root_schema::<po_alertmanagers::Alertmanager>(),
        ),
        (
            "po_podmonitors",
            po_podmonitors::PodMonitor::crd(),
            root_schema::<po_podmonitors::PodMonitor>(),
        ),
        (
            "po_probes",
            po_probes::Probe::crd(),
            root_schema::<po_probes::Probe>(),
        ),
        (
            "po_prometheusagents",
            po_prometheusagents::PrometheusAgent::crd(),
            root_schema::<po_prometheusagents::PrometheusAgent>(),
        ),
        (
            "po_prometheuses",
            po_prometheuses::Prometheus::crd(),
            root_schema::<po_prometheuses::Prometheus>(),
        ),
        (
            "po_scrapeconfigs",
            po_scrapeconfigs::ScrapeConfig::crd(),
            root_schema::<po_scrapeconfigs::ScrapeConfig>(),
        ),
        (
            "po_servicemonitors",
            po_servicemonitors::ServiceMonitor::crd(),
            root_schema::<po_servicemonitors::ServiceMonitor>(),
        ),
        (
            "po_thanosrulers",
            po_thanosrulers::ThanosRuler::crd(),
            root_schema::<po_thanosrulers::ThanosRuler>(),
        ),
    ]
}

/// The root schema as `crd()` generates it, with the transforms before the structural rewrite only.
fn root_schema<K: schemars::JsonSchema>() -> serde_json::Value {
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
        commands: Vec::new(),
        k8s_openapi_feature: "v1_37".into(),
        namespaced: false,
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
        let mut theirs = schemars::Schema::try_from(schema.clone()).unwrap();
        kube_core::schema::StructuralSchemaRewriter.transform(&mut theirs);
        let mut ours = schema;
        structural::rewrite(&mut ours).unwrap();
        assert!(
            serde_json::to_string(&ours).unwrap()
                == serde_json::to_string(&theirs.to_value()).unwrap(),
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
    for (module, _, _) in corpus() {
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
