//! kubebuilder's projects in fixtures/kubebuilder (copied from kubebuilder's repository, both
//! sides committed) and ours in fixtures/import-grammar, and their import into a new folder,
//! for the import test binaries.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use crate::common::run;

/// The folders of fixtures: kubebuilder's projects, then ours (fixtures/import-grammar: Go
/// grammar kubebuilder's lack, with the CRD controller-gen writes for it).
fn roots() -> [PathBuf; 2] {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    [here.join("kubebuilder"), here.join("import-grammar")]
}

/// The fixture `name`'s folder.
pub fn fixture(name: &str) -> PathBuf {
    let [kubebuilder, grammar] = roots();
    match grammar.join(name) {
        ours if !name.is_empty() && ours.join("PROJECT").exists() => ours,
        _ => kubebuilder.join(name),
    }
}

/// Every fixture (each folder of fixtures/kubebuilder and fixtures/import-grammar with a
/// PROJECT), by name.
pub fn fixtures() -> Vec<String> {
    let mut names: Vec<String> = roots()
        .iter()
        .flat_map(|root| std::fs::read_dir(root).unwrap())
        .filter_map(|e| {
            let e = e.ok()?;
            e.path()
                .join("PROJECT")
                .exists()
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    names
}

/// Imports the fixture `name` into a new folder; returns it (kept in the TempDir).
pub fn import(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(name);
    let source = fixture(name);
    let r = run(
        tmp.path(),
        &[
            "-C",
            dir.to_str().unwrap(),
            "import",
            source.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "import {name} failed:\n{}", r.stderr);
    (tmp, dir)
}
