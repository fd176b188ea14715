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

const HEAD: &str =
    "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n";

/// A crate whose src/lib.rs is `HEAD` + `body`.
fn lib(body: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), format!("{HEAD}{body}")).unwrap();
    dir
}

/// Generate from a crate whose src/lib.rs is `HEAD` + `body`; return the error.
fn err(body: &str) -> CrdgenError {
    let dir = lib(body);
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
    let body = format!("{KIND}pub struct ESpec {{\n    pub at: time::OffsetDateTime,\n}}\n");
    assert_at(&body, "time::OffsetDateTime", &["unknown crate", "--exact"]);
}

/// chrono's `TimeDelta` (its `Duration`) has a `prefixItems` schema Kubernetes cannot hold: it
/// is left unknown, not guessed, though chrono's other types are read.
#[test]
fn a_schemars_feature_crates_type_left_out_is_unknown() {
    let body = format!(
        "{KIND}pub struct ESpec {{\n    pub at: chrono::DateTime<chrono::Utc>,\n    pub every: chrono::Duration,\n}}\n"
    );
    assert_at(
        &body,
        "chrono::Duration",
        &["unknown crate", "`chrono::Duration`", "--exact"],
    );
}

/// A default of a type the reader knows the schema of but does not evaluate the `Default` of.
#[test]
fn the_default_of_a_schemars_feature_crates_type() {
    let body =
        format!("{KIND}pub struct ESpec {{\n    #[serde(default)]\n    pub id: uuid::Uuid,\n}}\n");
    assert_at(
        &body,
        "id: uuid",
        &["`Default`", "not evaluated statically", "--exact"],
    );
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
fn schema_with_function_not_in_the_crate() {
    let body = format!(
        "{KIND}pub struct ESpec {{\n    #[schemars(schema_with = \"f\")]\n    pub v: serde_json::Value,\n}}\n"
    );
    assert_at(
        &body,
        "schema_with",
        &["the `schema_with` function `f`", "cannot find", "--exact"],
    );
}

/// A field `v: ty` with `#[schemars(schema_with = "f")]`, and `f` as `body` builds its schema.
fn with_schema_fn(ty: &str, body: &str) -> String {
    format!(
        "{KIND}pub struct ESpec {{\n    #[schemars(schema_with = \"f\")]\n    pub v: {ty},\n}}\nconst K: &str = \"type\";\nfn f(g: &mut schemars::SchemaGenerator) -> schemars::Schema {{\n{body}\n}}\n"
    )
}

/// A `schema_with` function that computes its schema: refused at what it computes (a value the
/// JSON interpolates, statements, a key that is a const), or at what is no schema.
#[test]
fn schema_with_functions_that_compute_their_schema() {
    let cases: [(&str, &str, &str, &[&str]); 4] = [
        (
            "Vec<i32>",
            "    schemars::json_schema!({\n        \"type\": \"array\",\n        \"items\": g.subschema_for::<i32>(),\n    })",
            "g.subschema_for",
            &["an expression in the schema `f` returns"],
        ),
        (
            "String",
            "    let mut s = g.subschema_for::<String>();\n    s.insert(\"maxLength\".into(), 8.into());\n    s",
            "let mut s",
            &["the body of `f`", "not a single `json_schema!"],
        ),
        (
            "String",
            "    schemars::json_schema!({ K: \"string\" })",
            "K: \"string",
            &["a key that is not a string literal"],
        ),
        (
            "String",
            "    serde_json::from_value(serde_json::json!(\"string\")).unwrap()",
            "serde_json::from_value",
            &["returns `\"string\"`", "not a schema"],
        ),
    ];
    for (ty, body, marker, says) in cases {
        let body = with_schema_fn(ty, body);
        assert_at(&body, marker, says);
        assert_at(&body, marker, &["--exact"]);
    }
}

#[test]
fn missing_module_file() {
    let body = "mod nowhere;\n";
    assert_at(body, "nowhere", &["has no file"]);
}

#[test]
fn adjacently_tagged_enum() {
    let body = format!(
        "{KIND}pub struct ESpec {{\n    pub a: Action,\n}}\n#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[serde(tag = \"type\", content = \"value\")]\npub enum Action {{ Noop, Scale(u32) }}\n"
    );
    let e = err(&body);
    assert!(matches!(e, CrdgenError::KubeCannotRender { .. }), "{e}");
    assert_at(
        &body,
        "tag = ",
        &["adjacently tagged", "`Action`", "untagged"],
    );
}

#[test]
fn internally_tagged_one_variant() {
    // kube renders it (nothing to conflict with), but internal tagging is not emulated.
    let body = format!(
        "{KIND}pub struct ESpec {{\n    pub s: Shape,\n}}\n#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[serde(tag = \"kind\")]\npub enum Shape {{ Circle {{ r: f64 }} }}\n"
    );
    let e = err(&body);
    assert!(matches!(e, CrdgenError::Unsupported { .. }), "{e}");
    assert_at(
        &body,
        "tag = ",
        &["internally tagged", "one variant", "--exact"],
    );
}

#[test]
fn doc_from_include_str() {
    let body = format!(
        "{KIND}pub struct ESpec {{\n    #[doc = include_str!(\"field.md\")]\n    pub a: i32,\n}}\n"
    );
    assert_at(
        &body,
        "include_str!",
        &["doc comment that is not a string literal", "--exact"],
    );
}

#[test]
fn schemars_transform() {
    let body = format!(
        "{KIND}pub struct ESpec {{\n    #[schemars(transform = my_transform)]\n    pub a: i32,\n}}\n"
    );
    assert_at(
        &body,
        "transform",
        &["`#[schemars(transform = ...)]`", "--exact"],
    );
}

#[test]
fn schemars_example() {
    let body =
        format!("{KIND}pub struct ESpec {{\n    #[schemars(example = 5)]\n    pub a: i32,\n}}\n");
    assert_at(&body, "5)]", &["`#[schemars(example = ...)]`", "--exact"]);
}

#[test]
fn regex_from_path() {
    let body = format!(
        "{KIND}pub struct ESpec {{\n    #[schemars(regex(path = *RE))]\n    pub a: String,\n}}\n"
    );
    assert_at(&body, "path = ", &["regex(path = ...)", "regex(pattern"]);
}

#[test]
fn length_from_function_call() {
    let body = format!(
        "{KIND}pub struct ESpec {{\n    #[schemars(length(max = max_len()))]\n    pub a: String,\n}}\n"
    );
    assert_at(
        &body,
        "max_len()",
        &["the bound `max_len", "not a literal or a const", "--exact"],
    );
}

#[test]
fn validation_built_at_run_time() {
    let body = format!(
        "{KIND}pub struct ESpec {{\n    #[x_kube(validation = format!(\"self.size() < {{}}\", 3))]\n    pub a: String,\n}}\n"
    );
    let body = body.replace("JsonSchema)]\n#[kube", "kube::KubeSchema)]\n#[kube");
    assert_at(&body, "format!", &["validation rule", "--exact"]);
}

#[test]
fn merge_strategy_from_variable() {
    let body = format!(
        "{KIND}pub struct ESpec {{\n    #[x_kube(merge_strategy = STRATEGY)]\n    pub a: Vec<String>,\n}}\n"
    );
    let body = body.replace("JsonSchema)]\n#[kube", "kube::KubeSchema)]\n#[kube");
    assert_at(&body, "STRATEGY", &["merge strategy", "--exact"]);
}

#[test]
fn generic_alias_arity() {
    let body = format!(
        "type Pair<A, B> = std::collections::BTreeMap<A, B>;\n{KIND}pub struct ESpec {{\n    pub p: Pair<String>,\n}}\n"
    );
    assert_at(
        &body,
        "Pair<String>",
        &["takes 2 type arguments", "--exact"],
    );
}

#[test]
fn non_string_map_key() {
    let body = format!(
        "{KIND}pub struct ESpec {{\n    pub m: std::collections::BTreeMap<u32, String>,\n}}\n"
    );
    assert_at(
        &body,
        "std::collections::BTreeMap<u32",
        &["key that is not a string", "--exact"],
    );
}

/// An error in a module file reached through `#[path]` names that file.
#[test]
fn error_in_path_module() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/types")).unwrap();
    std::fs::write(
        dir.path().join("src/lib.rs"),
        format!("{HEAD}#[path = \"types/kinds.rs\"]\npub mod kinds;\n"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("src/types/kinds.rs"),
        format!("{HEAD}{KIND}pub struct ESpec {{\n    pub t: time::Date,\n}}\n"),
    )
    .unwrap();
    let e = crdgen::generate(&DiskTree::new(dir.path()), &project()).unwrap_err();
    let msg = e.to_string();
    assert!(msg.starts_with("src/types/kinds.rs:7:12: "), "{msg}");
    assert!(
        msg.contains("time::Date") && msg.contains("--exact"),
        "{msg}"
    );
}

/// With several module files (set aside on another thread while each is parsed), the first fault
/// in the order of the `mod` items is the one reported, as when they were read one by one.
#[test]
fn the_first_fault_among_several_module_files_is_reported() {
    let with_files = |lib: &str, files: &[(&str, &str)]| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), lib).unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join("src").join(name), text).unwrap();
        }
        match crdgen::generate(&DiskTree::new(dir.path()), &project()) {
            Ok(_) => panic!("expected an error for:\n{lib}"),
            Err(e) => e.to_string(),
        }
    };
    let good = "pub struct A { pub x: u8 }\n";
    let bad = "pub struct C { pub x: }\n";
    let msg = with_files("mod a;\nmod b;\nmod c;\n", &[("a.rs", good), ("c.rs", bad)]);
    assert!(
        msg.starts_with("src/lib.rs:2:5: ") && msg.contains("has no file"),
        "{msg}"
    );
    let msg = with_files(
        "mod a;\nmod c;\nmod d;\n",
        &[("a.rs", good), ("c.rs", bad), ("d.rs", "pub struct D {\n")],
    );
    assert!(
        msg.starts_with("src/c.rs:1:23: ") && msg.contains("does not parse as Rust"),
        "{msg}"
    );
}

/// A kind's schema is finished (transformed, converted) on the other core while the next kinds
/// are built: its refusal still comes before a fault of a kind after it, in both orders, and
/// through the crate's crds as through `generate`.
#[test]
fn a_schema_refused_on_the_other_core_comes_before_a_later_kinds_fault() {
    // kube-core panics on this adjacently tagged enum (see `adjacently_tagged_enum`).
    let refused = "#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[kube(group = \"e.example.com\", version = \"v1\", kind = \"E\")]\npub struct ESpec {\n    pub a: Action,\n}\n#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[serde(tag = \"type\", content = \"value\")]\npub enum Action { Noop, Scale(u32) }\n";
    // No `group`: refused where it is built.
    let faulty = "#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[kube(version = \"v1\", kind = \"F\")]\npub struct FSpec {\n    pub n: u8,\n}\n";
    let first = err(&format!("{refused}{faulty}"));
    assert!(
        matches!(first, CrdgenError::KubeCannotRender { .. })
            && first.to_string().contains("adjacently tagged"),
        "{first}"
    );
    let first = err(&format!("{faulty}{refused}"));
    assert!(first.to_string().contains("needs `#[kube(group"), "{first}");
    // The same refusal where nothing runs on another core.
    let dir = lib(&format!("{refused}{faulty}"));
    let inline = crdgen::crds(&DiskTree::new(dir.path()), &project()).unwrap_err();
    assert_eq!(
        inline.to_string(),
        err(&format!("{refused}{faulty}")).to_string()
    );
}
