//! Snapshot tests of rendered files: every Rust file of the reference project (controllers of
//! each flavour, wiring, types, tests; the vendored runtime is checked byte for byte elsewhere),
//! its CRD list, samples and role, as `init` plus the reference `create api` runs render them.
//! A template change shows up here as a reviewable diff (`cargo insta review`, or
//! INSTA_UPDATE=always).

mod common;

use common::*;

#[test]
fn reference_project_files() {
    let tmp = reference_project("memcached-operator");
    let dir = project_dir(&tmp, "memcached-operator");
    let mut rust = rust_files(&dir, &dir.join("src"));
    rust.extend(rust_files(&dir, &dir.join("tests")));
    assert!(rust.len() > 10, "{rust:?}");
    for rel in rust.iter().map(String::as_str).chain([
        "PROJECT",
        "config/crd/kustomization.yaml",
        "config/samples/kustomization.yaml",
        "config/samples/cache_v1alpha1_memcached.yaml",
        "config/rbac/kustomization.yaml",
        "config/rbac/role.yaml",
        "config/manager/manager.yaml",
    ]) {
        let name = rel.replace(['/', '.'], "_");
        insta::assert_snapshot!(name, read(&dir, rel));
    }
}

/// The `.rs` files under `dir`, relative to `root`, sorted.
fn rust_files(root: &std::path::Path, dir: &std::path::Path) -> Vec<String> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("readable folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files.extend(rust_files(root, &path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).expect("under root");
            files.push(rel.to_string_lossy().into_owned());
        }
    }
    files.sort();
    files
}
