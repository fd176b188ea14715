//! The runtime crate ships inside every generated project: `init` writes it byte for byte as
//! the workspace's `runtime/` crate has it, and `upgrade-runtime` brings an old copy back to it.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;

const VENDOR: &str = "vendor/operator-rs-runtime";

/// The workspace's runtime crate as a project gets it: its manifest, README, build script and
/// sources.
fn workspace_runtime() -> BTreeMap<PathBuf, Vec<u8>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime");
    let mut files: BTreeMap<_, _> = snapshot(&root.join("src"))
        .into_iter()
        .map(|(path, bytes)| (Path::new("src").join(path), bytes))
        .collect();
    for name in ["Cargo.toml", "README.md", "build.rs"] {
        files.insert(PathBuf::from(name), std::fs::read(root.join(name)).unwrap());
    }
    files
}

#[test]
fn init_vendors_the_workspace_runtime_byte_for_byte() {
    let tmp = init_project("vendor-op");
    let dir = project_dir(&tmp, "vendor-op");
    let vendored = snapshot(&dir.join(VENDOR));
    let expected = workspace_runtime();
    let names = |m: &BTreeMap<PathBuf, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&vendored), names(&expected));
    for (path, bytes) in &expected {
        assert!(
            vendored[path] == *bytes,
            "{VENDOR}/{} differs",
            path.display()
        );
    }
    let manifest = read(&dir, "Cargo.toml");
    assert!(
        manifest.contains(r#"operator-rs-runtime = { path = "vendor/operator-rs-runtime" }"#),
        "{manifest}"
    );
}

#[test]
fn upgrade_runtime_restores_an_edited_or_outdated_copy() {
    let tmp = init_project("upgrade-op");
    let dir = project_dir(&tmp, "upgrade-op");
    let fresh = snapshot(&dir);

    // Up to date: --check passes and nothing is written.
    let current = ok(&dir, &["upgrade-runtime", "--check"]);
    assert!(current.stderr.contains("already"), "{}", current.stderr);

    // An older copy: a file edited, one missing, one the runtime no longer has.
    let lib = dir.join(VENDOR).join("src/lib.rs");
    std::fs::write(&lib, "// an older runtime\n").unwrap();
    std::fs::remove_file(dir.join(VENDOR).join("src/controller/error.rs")).unwrap();
    std::fs::write(
        dir.join(VENDOR).join("src/gone.rs"),
        "// removed upstream\n",
    )
    .unwrap();
    let before = snapshot(&dir);
    let check = run(&dir, &["upgrade-runtime", "--check"]);
    assert_eq!(check.code, 1, "{}", check.stderr);
    assert!(check.stderr.contains("upgrade-runtime"), "{}", check.stderr);
    assert_eq!(snapshot(&dir), before, "--check wrote something");

    let upgraded = ok(&dir, &["upgrade-runtime"]).stderr;
    assert!(
        upgraded.contains("remove vendor/operator-rs-runtime/src/gone.rs"),
        "{upgraded}"
    );
    assert!(
        upgraded.contains("update vendor/operator-rs-runtime/src/lib.rs"),
        "{upgraded}"
    );
    assert_eq!(snapshot(&dir), fresh);
}

#[test]
fn upgrade_runtime_outside_a_project_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let refused = run(tmp.path(), &["upgrade-runtime"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("no PROJECT file"),
        "{}",
        refused.stderr
    );
    assert!(std::fs::read_dir(tmp.path()).unwrap().next().is_none());
}
