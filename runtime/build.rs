//! Tells crates that depend on this one where its sources are (`DEP_OPERATOR_RS_RUNTIME_DIR`):
//! operator-rs embeds them, to vendor the runtime into the projects it generates.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo::metadata=dir={dir}");
    println!("cargo::rerun-if-changed=build.rs");
}
