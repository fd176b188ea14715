//! kube-derive's output, recorded where compiling the types in the test build would cost every
//! build more than it proves: `fixtures/crdgen/external_types.crd.yaml` (types behind schemars'
//! features, which would compile schemars and k8s-openapi a second time) and
//! `fixtures/crdgen-realworld/recorded/` (the real-world corpus, two thirds of the test build's
//! longest crate). A record names the versions it was rendered with, which must be Cargo.lock's:
//! when Cargo.lock moves past them, the tests reading it fail and name the test that records it
//! again.

use std::path::Path;

/// The crates whose versions decide what kube-derive renders.
const CRATES: [&str; 3] = ["kube-derive", "schemars", "k8s-openapi"];

/// The version of `name` in the Cargo.lock text `lock`.
fn locked(lock: &str, name: &str) -> String {
    let at = lock
        .find(&format!("name = \"{name}\"\nversion = \""))
        .unwrap_or_else(|| panic!("{name} is not in Cargo.lock"));
    let rest = &lock[at..];
    let start = rest.find("version = \"").unwrap() + "version = \"".len();
    rest[start..].split('"').next().unwrap().to_owned()
}

/// This workspace's Cargo.lock.
pub fn workspace_lock() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock")).unwrap()
}

/// The versions of [`CRATES`] in `lock`: `kube-derive 5.0.0, schemars 1.2.3, k8s-openapi 0.29.0`.
pub fn versions(lock: &str) -> String {
    let versions: Vec<String> = (CRATES.iter())
        .map(|c| format!("{c} {}", locked(lock, c)))
        .collect();
    versions.join(", ")
}

/// The test that records `fixtures/crdgen/external_types.crd.yaml`.
pub const EXTERNAL_TYPES_RECORDER: &str =
    "cargo test --test crdgen -- --ignored exact::records_kube_derive_output_of_external_types";

/// The header of `fixtures/crdgen/external_types.crd.yaml` for the versions of `lock`.
pub fn header(lock: &str) -> String {
    format!(
        "# kube-derive's crd() of fixtures/crdgen/external_types.rs, rendered with {}.\n\
         # Recorded by `{EXTERNAL_TYPES_RECORDER}`.\n",
        versions(lock)
    )
}

/// Fails, naming `recorder`, unless `recorded_with` (what a record says it was rendered with) is
/// this workspace's [`versions`].
pub fn assert_current(what: &str, recorded_with: &str, recorder: &str) {
    let lock = versions(&workspace_lock());
    assert_eq!(
        recorded_with, lock,
        "{what} was recorded with other versions than Cargo.lock's: record it again with `{recorder}`"
    );
}

#[test]
#[should_panic(expected = "record it again with `cargo test --test crdgen")]
fn a_record_of_other_versions_names_its_recorder() {
    assert_current(
        "a record",
        "kube-derive 0.0.1, schemars 0.0.1, k8s-openapi 0.0.1",
        EXTERNAL_TYPES_RECORDER,
    );
}
