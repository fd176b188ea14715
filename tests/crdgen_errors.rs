//! Every construct the static reader cannot evaluate, or kube-derive cannot render, stops with
//! `file:line:col`, the construct and the fix.

use operator_rs::crdgen::{self, CrdgenError};
use operator_rs::project::{LAYOUT, Project};
use operator_rs::workspace::DiskTree;

fn project() -> Project {
    Project {
        version: "3".into(),
        domain: "example.com".into(),
        repo: String::new(),
        project_name: "errs".into(),
        crate_name: "errs".into(),
        layout: vec![LAYOUT.into()],
        cli_version: "0.1.0".into(),
        k8s_openapi_feature: "v1_37".into(),
        resources: Vec::new(),
    }
}

const HEAD: &str =
    "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n";

/// Generate from a crate whose src/lib.rs is `HEAD` + `body`; return the error.
fn err(body: &str) -> CrdgenError {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), format!("{HEAD}{body}")).unwrap();
    match crdgen::generate(&DiskTree::new(dir.path()), &project()) {
        Ok(_) => panic!("expected an error for:\n{body}"),
        Err(e) => e,
    }
}

/// The 1-based line (in `body`, after the 3 lines of HEAD) and column of the first `marker`.
fn pos(body: &str, marker: &str) -> (usize, usize) {
    for (i, l) in body.lines().enumerate() {
        if let Some(c) = l.find(marker) {
            return (i + 4, c + 1);
        }
    }
    panic!("marker {marker} not in body")
}

fn assert_at(body: &str, marker: &str, contains: &[&str]) {
    let e = err(body);
    let msg = e.to_string();
    let (line, col) = pos(body, marker);
    assert!(
        msg.starts_with(&format!("src/lib.rs:{line}:{col}: ")),
        "expected src/lib.rs:{line}:{col}, got: {msg}"
    );
    for c in contains {
        assert!(msg.contains(c), "expected {c:?} in: {msg}");
    }
}

const KIND: &str = "#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[kube(group = \"e.example.com\", version = \"v1\", kind = \"E\")]\n";

#[test]
fn unknown_crate_type() {
    let body =
        format!("{KIND}pub struct ESpec {{\n    pub at: chrono::DateTime<chrono::Utc>,\n}}\n");
    assert_at(&body, "chrono::DateTime", &["unknown crate", "--exact"]);
}

#[test]
fn default_fn_not_literal() {
    let body = format!(
        "{KIND}pub struct ESpec {{\n    #[serde(default = \"d\")]\n    pub n: i32,\n}}\nfn d() -> i32 {{\n    std::env::args().count() as i32\n}}\n"
    );
    assert_at(&body, "std::env::args", &["not a plain literal", "--exact"]);
}

#[test]
fn hand_written_json_schema() {
    let body = format!(
        "{KIND}pub struct ESpec {{\n    pub c: Custom,\n}}\n#[derive(Clone, Debug, Serialize, Deserialize)]\npub struct Custom;\nimpl JsonSchema for Custom {{\n    fn schema_name() -> std::borrow::Cow<'static, str> {{ \"Custom\".into() }}\n    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {{ schemars::json_schema!({{}}) }}\n}}\n"
    );
    assert_at(
        &body,
        "impl JsonSchema",
        &["hand-written `impl JsonSchema for Custom`", "--exact"],
    );
}

#[test]
fn generic_type() {
    let body = format!(
        "{KIND}pub struct ESpec {{\n    pub w: Wrapper<String>,\n}}\n#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct Wrapper<T> {{ pub inner: T }}\n"
    );
    assert_at(&body, "Wrapper<String>", &["generic", "--exact"]);
}

#[test]
fn macro_made_type() {
    let body = format!("make_types!(Gen);\n{KIND}pub struct ESpec {{\n    pub g: Gen,\n}}\n");
    assert_at(&body, "Gen,", &["make_types!", "--exact"]);
}

#[test]
fn internally_tagged_enum() {
    let body = format!(
        "{KIND}pub struct ESpec {{\n    pub s: Shape,\n}}\n#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[serde(tag = \"kind\")]\npub enum Shape {{ Circle {{ r: f64 }}, Square {{ side: f64 }} }}\n"
    );
    let e = err(&body);
    assert!(matches!(e, CrdgenError::KubeCannotRender { .. }), "{e}");
    assert_at(&body, "tag = ", &["internally tagged", "kube"]);
}

#[test]
fn mixed_unit_and_data_enum() {
    let body = format!(
        "{KIND}pub struct ESpec {{\n    pub s: Mixed,\n}}\n#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub enum Mixed {{ Off, On {{ level: i32 }} }}\n"
    );
    assert_at(&body, "Mixed {", &["mixes unit and data variants"]);
}

#[test]
fn two_storage_versions() {
    let body = "pub mod v1 {\n    use super::*;\n    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]\n    #[kube(group = \"e.example.com\", version = \"v1\", kind = \"E\")]\n    pub struct ESpec { pub a: i32 }\n}\npub mod v2 {\n    use super::*;\n    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]\n    #[kube(group = \"e.example.com\", version = \"v2\", kind = \"E\")]\n    pub struct ESpec { pub a: i32 }\n}\n";
    let msg = err(body).to_string();
    assert!(msg.contains("2 storage versions"), "{msg}");
    assert!(
        msg.contains("v1 at src/lib.rs:8:16") && msg.contains("v2 at src/lib.rs:14:16"),
        "{msg}"
    );
}

#[test]
fn schema_with_function() {
    let body = format!(
        "{KIND}pub struct ESpec {{\n    #[schemars(schema_with = \"f\")]\n    pub v: serde_json::Value,\n}}\n"
    );
    assert_at(&body, "schema_with", &["schema_with", "--exact"]);
}

#[test]
fn missing_module_file() {
    let body = "mod nowhere;\n";
    assert_at(body, "nowhere", &["has no file"]);
}
