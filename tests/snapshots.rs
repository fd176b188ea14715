//! Snapshot tests of rendered files: every Rust file of the reference project (controllers of
//! each flavour, wiring, types, tests; the vendored runtime is checked byte for byte elsewhere),
//! its CRD list, samples and role, as `init` plus the reference `create api` runs render them;
//! every Rust file of a bare `init`; and every Rust file of a project of the variants the
//! reference project does not take (a built-in kind of the core and of other groups, deploy-image
//! kinds with a command, a digest, no port, cluster scope; a controller added to an existing kind;
//! a plural of its own; each webhook type alone, on a cluster-scoped and on a built-in kind);
//! those of a multigroup project (`init --multigroup`) with one kind name in two groups; and the
//! files `init --sharded` changes.
//! A template change shows up here as a reviewable diff (`cargo insta review`, or
//! INSTA_UPDATE=always).

mod common;

use std::path::Path;

use common::*;

#[test]
fn reference_project_files() {
    let tmp = reference_project("memcached-operator");
    let dir = project_dir(&tmp, "memcached-operator");
    let rust = rust_files(&dir);
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
        let text = match rel {
            "PROJECT" => without_varying_record(&read(&dir, rel)),
            _ => read(&dir, rel),
        };
        insta::assert_snapshot!(snapshot_name("", rel), text);
    }
}

/// PROJECT's `scaffold:` record with its fingerprint, digest and license year replaced by
/// placeholders: the first two change with every file of the scaffold (each has its own
/// snapshot; release.rs's test pins the fingerprint), the year with the calendar.
fn without_varying_record(text: &str) -> String {
    (text.lines())
        .map(|l| match l.trim_start() {
            t if t.starts_with("fingerprint: sha256:") => "  fingerprint: <this operator-rs's>",
            t if t.starts_with("digest: sha256:") => "  digest: sha256:<the replayed tree's>",
            t if t.starts_with("licenseYear: ") => "  licenseYear: <this year>",
            _ => l,
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn bare_project_files() {
    let tmp = init_project("bare-operator");
    let dir = project_dir(&tmp, "bare-operator");
    let rust = rust_files(&dir);
    assert!(rust.len() >= 7, "{rust:?}");
    for rel in &rust {
        insta::assert_snapshot!(snapshot_name("bare", rel), read(&dir, rel));
    }
}

/// A sharded project (`init --sharded`): the files sharding changes, and every other file of
/// `init` byte-identical to the bare project's (sharding changes nothing else).
#[test]
fn sharded_project_files() {
    let tmp = tempfile::Builder::new()
        .prefix("operator-rs-test-")
        .tempdir()
        .unwrap();
    let dir = tmp.path().join("bare-operator");
    std::fs::create_dir(&dir).unwrap();
    let repo = "github.com/acme/bare-operator";
    ok(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--repo",
            repo,
            "--sharded",
        ],
    );
    let changed = [
        "PROJECT",
        "src/main.rs",
        "config/manager/manager.yaml",
        "config/manager/kustomization.yaml",
        "config/manager/pdb.yaml",
        "config/rbac/leader_election_role.yaml",
        "README.md",
    ];
    for rel in changed.iter().filter(|r| **r != "README.md") {
        let text = match *rel {
            "PROJECT" => without_varying_record(&read(&dir, rel)),
            _ => read(&dir, rel),
        };
        insta::assert_snapshot!(snapshot_name("sharded", rel), text);
    }
    let bare = init_project("bare-operator");
    let bare = snapshot(&project_dir(&bare, "bare-operator"));
    for (path, text) in snapshot(&dir) {
        let rel = path.to_string_lossy();
        if !changed.contains(&rel.as_ref()) && !rel.starts_with(".operator-rs") {
            assert_eq!(bare.get(&path), Some(&text), "{rel}");
        }
    }
}

#[test]
fn variant_project_files() {
    let tmp = init_project("variants-operator");
    let dir = project_dir(&tmp, "variants-operator");
    for api in VARIANT_APIS {
        ok(&dir, &words(&format!("create api {api}")));
    }
    for webhook in VARIANT_WEBHOOKS {
        ok(&dir, &words(&format!("create webhook {webhook}")));
    }
    let rust = rust_files(&dir);
    assert!(rust.len() > 20, "{rust:?}");
    for rel in &rust {
        insta::assert_snapshot!(snapshot_name("variants", rel), read(&dir, rel));
    }
}

/// A multigroup project (`init --multigroup`): one kind name in two groups of a version, each
/// with a deploy-image controller and webhooks, a conversion spoke, and a built-in kind's
/// controller; its Rust files, PROJECT and the files named after its kinds.
#[test]
fn multigroup_project_files() {
    let tmp = tempfile::Builder::new()
        .prefix("operator-rs-test-")
        .tempdir()
        .unwrap();
    let dir = tmp.path().join("fleet-operator");
    std::fs::create_dir(&dir).unwrap();
    ok(&dir, &words("init --domain example.com --multigroup"));
    for command in [
        "create api --group ship --version v1 --kind Frigate --image nginx:1.27",
        "create api --group ship --version v2 --kind Frigate --controller=false",
        "create api --group sea --version v1 --kind Frigate --image nginx:1.27",
        "create api --group core --version v1 --kind ConfigMap --resource=false",
        "create webhook --group ship --version v1 --kind Frigate --defaulting --conversion --spoke v2",
        "create webhook --group sea --version v1 --kind Frigate --defaulting --programmatic-validation",
    ] {
        ok(&dir, &words(command));
    }
    let rust = rust_files(&dir);
    assert!(rust.len() > 20, "{rust:?}");
    for rel in rust.iter().map(String::as_str).chain([
        "PROJECT",
        "config/rbac/kustomization.yaml",
        "config/manager/manager.yaml",
        "config/webhook/manifests.yaml",
    ]) {
        let text = match rel {
            "PROJECT" => without_varying_record(&read(&dir, rel)),
            _ => read(&dir, rel),
        };
        insta::assert_snapshot!(snapshot_name("multigroup", rel), text);
    }
}

/// `src/lib.rs` as `src_lib_rs`, under a prefix for projects other than the reference one.
fn snapshot_name(prefix: &str, rel: &str) -> String {
    let name = rel.replace(['/', '.'], "_");
    if prefix.is_empty() {
        name
    } else {
        format!("{prefix}__{name}")
    }
}

/// The `.rs` files of a project under `src/` and `tests/` (not the vendored runtime), relative
/// to `root`, sorted.
fn rust_files(root: &Path) -> Vec<String> {
    let mut files: Vec<String> = snapshot(root)
        .into_keys()
        .filter(|p| p.starts_with("src") || p.starts_with("tests"))
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    files.sort();
    files
}
