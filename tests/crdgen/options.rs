//! PROJECT's `crd:` options and `--max-desc-len`: off by default (kube-derive's output, with
//! warnings that say how to turn them on), and what they do when on. A Spec embedding
//! JobTemplateSpec is about 376 KiB of JSON a version (700 KiB of YAML; the JSON is what the API
//! server stores): two versions warn, five pass etcd's 1.5 MiB limit and are refused, unless
//! descriptions are dropped (kube-apiserver 1.36.2 stores three and four of them).

use crate::common;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};
use operator_rs::crdgen::{self, CrdgenError};
use operator_rs::project::{LAYOUT, Project};
use operator_rs::workspace::DiskTree;

fn project() -> Project {
    Project {
        version: "3".into(),
        domain: "example.com".into(),
        repo: String::new(),
        project_name: "opts".into(),
        crate_name: "opts".into(),
        layout: vec![LAYOUT.into()],
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

fn crate_with(lib: &str, project: &Project) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), lib).unwrap();
    std::fs::write(dir.path().join("PROJECT"), project.render().unwrap()).unwrap();
    dir
}

const SCALARS: &str = "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n\n#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[kube(group = \"f.example.com\", version = \"v1\", kind = \"F\")]\npub struct FSpec {\n    pub a: u8,\n    pub b: u16,\n    pub c: u32,\n    pub d: u64,\n    pub e: i8,\n    pub f: i32,\n    pub g: Option<usize>,\n}\n";

fn spec_formats(crd: &CustomResourceDefinition) -> Vec<(String, Option<String>)> {
    let schema = crd.spec.versions[0]
        .schema
        .as_ref()
        .unwrap()
        .open_api_v3_schema
        .as_ref()
        .unwrap();
    let spec = &schema.properties.as_ref().unwrap()["spec"];
    spec.properties
        .as_ref()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.format.clone()))
        .collect()
}

#[test]
fn unknown_formats_kept_by_default_with_a_warning_that_says_how() {
    let dir = crate_with(SCALARS, &project());
    let tree = DiskTree::new(dir.path());
    let out = crdgen::generate(&tree, &project()).unwrap();
    let crds = crdgen::crds(&tree, &project()).unwrap();
    let formats = spec_formats(&crds[0].crd);
    assert!(
        formats.contains(&("a".into(), Some("uint8".into()))),
        "{formats:?}"
    );
    assert!(
        formats.contains(&("d".into(), Some("uint64".into()))),
        "{formats:?}"
    );
    let w = out
        .warnings
        .iter()
        .find(|w| w.contains("does not know the formats"))
        .unwrap_or_else(|| panic!("{:?}", out.warnings));
    for part in [
        "uint8 at `.v1.spec.a`",
        "uint64 at `.v1.spec.d`",
        "int8 at `.v1.spec.e`",
        "crd: {knownFormatsOnly: true}",
    ] {
        assert!(w.contains(part), "{part:?} not in {w}");
    }
    assert!(!w.contains(".v1.spec.f"), "int32 is known: {w}");
}

#[test]
fn known_formats_only_writes_int32_and_int64() {
    let mut p = project();
    p.crd.known_formats_only = true;
    let dir = crate_with(SCALARS, &p);
    let tree = DiskTree::new(dir.path());
    let out = crdgen::generate(&tree, &p).unwrap();
    assert!(
        !out.warnings.iter().any(|w| w.contains("format")),
        "{:?}",
        out.warnings
    );
    let formats = spec_formats(&crdgen::crds(&tree, &p).unwrap()[0].crd);
    let want: Vec<(String, Option<String>)> = [
        ("a", "int32"),
        ("b", "int32"),
        ("c", "int64"),
        ("d", "int64"),
        ("e", "int32"),
        ("f", "int32"),
        ("g", "int64"),
    ]
    .iter()
    .map(|(k, f)| (k.to_string(), Some(f.to_string())))
    .collect();
    assert_eq!(formats, want);
    // The setting round-trips through PROJECT.
    let text = p.render().unwrap();
    assert!(text.contains("knownFormatsOnly: true"), "{text}");
    assert_eq!(Project::parse(&text).unwrap().crd, p.crd);
}

/// `n` versions of a kind whose Spec embeds JobTemplateSpec.
fn job_versions(n: usize) -> String {
    let mut s = String::from(
        "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n",
    );
    for (i, v) in ["v1", "v1beta1", "v1alpha1", "v1beta2", "v1alpha2"]
        .iter()
        .take(n)
        .enumerate()
    {
        let storage = if i == 0 { "" } else { ", storage = false" };
        s.push_str(&format!(
            "pub mod {v} {{\n    use super::*;\n    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]\n    #[kube(group = \"j.example.com\", version = \"{v}\", kind = \"Cron\"{storage})]\n    pub struct CronSpec {{\n        pub job: k8s_openapi::api::batch::v1::JobTemplateSpec,\n    }}\n}}\n"
        ));
    }
    s
}

fn descriptions(s: &JSONSchemaProps, out: &mut Vec<String>) {
    out.extend(s.description.clone());
    for p in s.properties.iter().flat_map(|p| p.values()) {
        descriptions(p, out);
    }
    if let Some(k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrArray::Schema(i)) = &s.items {
        descriptions(i, out);
    }
    if let Some(k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrBool::Schema(a)) = &s.additional_properties {
        descriptions(a, out);
    }
}

fn all_descriptions(crd: &CustomResourceDefinition) -> Vec<String> {
    let mut out = Vec::new();
    for v in &crd.spec.versions {
        descriptions(
            v.schema
                .as_ref()
                .unwrap()
                .open_api_v3_schema
                .as_ref()
                .unwrap(),
            &mut out,
        );
    }
    out
}

#[test]
fn two_large_versions_warn_with_the_fix() {
    let dir = crate_with(&job_versions(2), &project());
    let out = crdgen::generate(&DiskTree::new(dir.path()), &project()).unwrap();
    let w = out
        .warnings
        .iter()
        .find(|w| w.contains("etcd's 1.5 MiB limit"))
        .unwrap_or_else(|| panic!("{:?}", out.warnings));
    assert!(
        w.starts_with("config/crd/bases/j.example.com_crons.yaml: the CRD is "),
        "{w}"
    );
    assert!(
        w.contains("crd: {maxDescLen: 0}") && w.contains("--max-desc-len 0"),
        "{w}"
    );
}

/// Three versions are 1127 KiB of JSON (2.1 MiB of YAML): kube-apiserver 1.36.2 stores them
/// (`kubectl apply --server-side`, as `make install` runs it), so they are not refused.
#[test]
fn three_large_versions_are_not_refused() {
    let dir = crate_with(&job_versions(3), &project());
    let out = crdgen::generate(&DiskTree::new(dir.path()), &project()).unwrap();
    assert!(
        out.files[0].contents.len() > 1_572_864,
        "the YAML is past the limit"
    );
    let w = out
        .warnings
        .iter()
        .find(|w| w.contains("etcd's 1.5 MiB limit"));
    assert!(
        w.is_some_and(|w| w.contains("as JSON")),
        "{:?}",
        out.warnings
    );
}

#[test]
fn five_large_versions_are_refused_unless_descriptions_go() {
    let dir = crate_with(&job_versions(5), &project());
    let tree = DiskTree::new(dir.path());
    let e = crdgen::generate(&tree, &project()).unwrap_err();
    assert!(matches!(e, CrdgenError::TooLarge(_)), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("over etcd's 1.5 MiB limit"), "{msg}");
    assert!(msg.contains("crd: {maxDescLen: 0}"), "{msg}");

    let mut p = project();
    p.crd.max_desc_len = Some(0);
    let out = crdgen::generate(&tree, &p).unwrap();
    let crd = &crdgen::crds(&tree, &p).unwrap()[0].crd;
    assert_eq!(crd.spec.versions.len(), 5);
    assert!(all_descriptions(crd).is_empty());
    let size = out.files[0].contents.len();
    assert!(
        size < 1_572_864,
        "{size} bytes of YAML without descriptions"
    );

    p.crd.max_desc_len = Some(40);
    let crd = &crdgen::crds(&tree, &p).unwrap()[0].crd;
    let descs = all_descriptions(crd);
    assert!(!descs.is_empty());
    assert!(descs.iter().all(|d| d.len() <= 43), "{descs:?}");
    assert!(
        descs.iter().any(|d| d.ends_with("...")),
        "some were cut at a word"
    );
}

/// The flag, through the binary: refused and nothing written without it; written with it.
#[test]
fn max_desc_len_flag() {
    let dir = crate_with(&job_versions(5), &project());
    let refused = common::run(dir.path(), &["generate", "crds"]);
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("--max-desc-len 0"),
        "{}",
        refused.stderr
    );
    assert!(!dir.path().join("config").exists(), "nothing written");
    let ok = common::run(dir.path(), &["generate", "crds", "--max-desc-len", "0"]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    let text =
        std::fs::read_to_string(dir.path().join("config/crd/bases/j.example.com_crons.yaml"))
            .unwrap();
    assert!(!text.contains("description:"));
}
