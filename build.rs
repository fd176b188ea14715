//! Finds the sources of operator-rs-runtime (a dependency whose build script reports its folder
//! as DEP_OPERATOR_RS_RUNTIME_DIR) for `src/vendor.rs` to embed.

fn main() {
    let dir = std::env::var("DEP_OPERATOR_RS_RUNTIME_DIR")
        .expect("operator-rs-runtime's build script reports its folder");
    println!("cargo::rustc-env=OPERATOR_RS_RUNTIME_DIR={dir}");
    // include_dir cannot tell cargo which files it read: rebuild when any of them changes.
    println!("cargo::rerun-if-changed={dir}/src");
    println!("cargo::rerun-if-changed={dir}/Cargo.toml");
    println!("cargo::rerun-if-changed={dir}/README.md");
    println!("cargo::rerun-if-changed={dir}/build.rs");
}
