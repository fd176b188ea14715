//! kubebuilder's projects in fixtures/kubebuilder (copied from kubebuilder's repository, both
//! sides committed), and their import into a new folder, for the import test binaries.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use crate::common::run;

/// The fixture `name`'s folder.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/kubebuilder")
        .join(name)
}

/// Every fixture (each folder of fixtures/kubebuilder with a PROJECT), by name.
pub fn fixtures() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixture(""))
        .unwrap()
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
