//! End to end: scaffold real projects and hold them to our own bar with cargo itself — build,
//! `clippy --all-targets -D warnings`, `fmt --check`, and their own tests — then render their
//! `config/default` with kubectl. Every generated build shares one target directory so kube and
//! k8s-openapi compile once per run (`target/generated-projects`, or $OPERATOR_RS_TEST_TARGET_DIR).
//!
//! The generated projects' integration tests (`tests/integration.rs`) run in their `cargo test`
//! on envtest, and the reference project's end-to-end suite (`tests/e2e.rs`, manager binary
//! included) runs against the same real control plane (etcd, kube-apiserver and
//! kube-controller-manager from $KUBEBUILDER_ASSETS). Without it, both say so and are skipped.

mod common;

use std::path::Path;
use std::sync::Mutex;

use common::*;
use operator_rs_runtime::testing::envtest::Envtest;

/// Cargo builds of generated projects run one at a time: they share a target directory.
static CARGO: Mutex<()> = Mutex::new(());

/// The bar every generated project is held to.
fn build_lint_test(dir: &Path) {
    let _guard = CARGO.lock().unwrap_or_else(|e| e.into_inner());
    cargo(dir, &["fmt", "--check"]);
    cargo(dir, &["build", "--all-targets"]);
    cargo(dir, &["clippy", "--all-targets", "--", "-D", "warnings"]);
    cargo(dir, &["test"]);
}

#[test]
fn the_reference_project_builds_lints_passes_its_tests_and_renders() {
    let tmp = reference_project("memcached-operator");
    let dir = project_dir(&tmp, "memcached-operator");
    // What create api wrote is what the generators produce.
    ok(&dir, &["generate", "manifests", "--check"]);
    // A user adds printcolumns of a type already used (clippy's duplicated_attributes must
    // not fire on them), then regenerates the CRD.
    let types = dir.join("src/api/v1/guestbook.rs");
    let text = std::fs::read_to_string(&types).unwrap();
    let more = r#"printcolumn(name = "Started", type_ = "date", json_path = ".status.startTime"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "Age","#;
    assert!(
        text.contains("printcolumn(\n        name = \"Age\","),
        "{text}"
    );
    let text = text.replacen("printcolumn(\n        name = \"Age\",", more, 1);
    std::fs::write(&types, text).unwrap();
    ok(&dir, &["generate", "manifests"]);
    build_lint_test(&dir);
    // `--exact` derives the same CRDs through the compiler: its harness crate names each kind
    // from outside the project (create api keeps kinds in private modules and re-exports them),
    // building in the shared target directory.
    {
        let _guard = CARGO.lock().unwrap_or_else(|e| e.into_inner());
        let target = shared_target_dir();
        let target = [("CARGO_TARGET_DIR", target.to_str().unwrap())];
        let exact = run_env(&dir, &["generate", "crds", "--exact", "--check"], &target);
        assert_eq!(exact.code, 0, "--exact --check:\n{}", exact.stderr);
    }
    let docs = kustomize(&dir, "config/default");
    assert_eq!(of_kind(&docs, "CustomResourceDefinition").len(), 4);
    assert_eq!(of_kind(&docs, "Deployment").len(), 1);
    assert!(!of_kind(&docs, "ClusterRole").is_empty());

    // Its end-to-end suite, at-scale tests included (with few objects: this checks the
    // harness and the manager's behaviour, not figures), against a real control plane, the
    // manager running with exactly the RBAC of config/rbac.
    if !Envtest::available() {
        return;
    }
    let env = Envtest::shared().expect("the control plane starts");
    let kubeconfig = env.kubeconfig().to_str().unwrap();
    let _guard = CARGO.lock().unwrap_or_else(|e| e.into_inner());
    let envs = [("KUBECONFIG", kubeconfig), ("E2E_OBJECTS", "40")];
    cargo_with(&dir, &e2e(&["--skip", "_faults::"]), &envs);

    // The faults, each on a control plane of its own, for one kind (the others run the same
    // code): a deploy-image kind, with owned Deployments.
    let envs = [("KUBECONFIG", kubeconfig), ("E2E_OBJECTS", "20")];
    cargo_with(
        &dir,
        &e2e(&["--nocapture", "memcached_v1alpha1_faults::"]),
        &envs,
    );

    // A rule missing from config/rbac fails the suite with the 403 it caused.
    let role = dir.join("config/rbac/role.yaml");
    let granted = std::fs::read_to_string(&role).unwrap();
    let status_rule = "- apiGroups:\n  - cache.example.com\n  resources:\n  - memcacheds/status\n";
    let at = granted
        .find(status_rule)
        .expect("role.yaml grants memcacheds/status");
    let end = granted[at + 1..]
        .find("\n- ")
        .map_or(granted.len(), |i| at + 2 + i);
    let stripped = format!("{}{}", &granted[..at], &granted[end..]);
    std::fs::write(&role, &stripped).unwrap();
    let out = cargo_output(&dir, &e2e(&["--exact", "memcached_v1alpha1"]), &envs);
    std::fs::write(&role, &granted).unwrap();
    let output = format!("{}{}", out.stdout, out.stderr);
    assert!(
        !out.success,
        "the e2e suite passed without memcacheds/status:\n{output}"
    );
    assert!(
        output.contains("config/rbac lacks a rule")
            && output.contains("cannot patch resource")
            && output.contains("memcacheds/status"),
        "the failure does not name the 403 of the missing rule:\n{output}"
    );
}

/// `cargo test --test e2e -- --ignored --test-threads=1 <more>`.
fn e2e<'a>(more: &[&'a str]) -> Vec<&'a str> {
    let mut args = [
        "test",
        "--test",
        "e2e",
        "--",
        "--ignored",
        "--test-threads=1",
    ]
    .to_vec();
    args.extend(more);
    args
}
