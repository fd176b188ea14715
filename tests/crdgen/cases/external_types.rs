//! The recorded kube-derive output of `fixtures/crdgen/external_types.rs`
//! (`fixtures/crdgen/external_types.crd.yaml`): its header names the versions it was rendered
//! with, which must be Cargo.lock's.

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

/// The header of the recorded file for the versions of `lock`.
pub fn header(lock: &str) -> String {
    let versions: Vec<String> = (CRATES.iter())
        .map(|c| format!("{c} {}", locked(lock, c)))
        .collect();
    format!(
        "# kube-derive's crd() of fixtures/crdgen/external_types.rs, rendered with {}.\n\
         # Recorded by `cargo test --test crdgen -- --ignored exact::records_kube_derive_output_of_external_types`.\n",
        versions.join(", ")
    )
}
