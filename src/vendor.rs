//! The runtime crate (operator-rs-runtime) as it ships inside every generated project.
//!
//! Until the runtime is published on crates.io, a generated project depends on it by path:
//! `init` writes it to [`DIR`] from the copy embedded in this binary, byte for byte the
//! workspace's `runtime/` crate (its manifest, README and sources), and `upgrade-runtime`
//! replaces it with this binary's copy. The user never edits it. Once the crate is published,
//! switching to it is one line in the project's Cargo.toml.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};

/// Where a generated project keeps the runtime crate.
pub const DIR: &str = "vendor/operator-rs-runtime";

// build.rs points OPERATOR_RS_RUNTIME_DIR at the runtime crate's folder: the workspace's
// `runtime/`, or the published crate's sources when operator-rs is built from crates.io.
static SOURCES: Dir<'static> = include_dir!("$OPERATOR_RS_RUNTIME_DIR/src");
const MANIFEST: &str = include_str!(concat!(env!("OPERATOR_RS_RUNTIME_DIR"), "/Cargo.toml"));
const README: &str = include_str!(concat!(env!("OPERATOR_RS_RUNTIME_DIR"), "/README.md"));
const BUILD: &str = include_str!(concat!(env!("OPERATOR_RS_RUNTIME_DIR"), "/build.rs"));

/// Every file of the vendored crate: its path inside the project, and its contents.
pub fn files() -> Vec<(PathBuf, &'static str)> {
    let root = Path::new(DIR);
    let mut files = vec![
        (root.join("Cargo.toml"), MANIFEST),
        (root.join("README.md"), README),
        (root.join("build.rs"), BUILD),
    ];
    collect(&SOURCES, &root.join("src"), &mut files);
    files.sort();
    files
}

fn collect(dir: &'static Dir<'static>, base: &Path, out: &mut Vec<(PathBuf, &'static str)>) {
    for file in dir.files() {
        let text = file
            .contents_utf8()
            .expect("the runtime's sources are UTF-8");
        out.push((base.join(file.path()), text));
    }
    for sub in dir.dirs() {
        collect(sub, base, out);
    }
}

/// What makes the vendored runtime of the project at `root` this binary's copy: every file of
/// [`files`] to write, and the files under [`DIR`] it no longer has, to remove (`upgrade-runtime`,
/// `update`).
pub fn replacing(root: &Path) -> std::io::Result<(BTreeMap<PathBuf, String>, BTreeSet<PathBuf>)> {
    let writes: BTreeMap<PathBuf, String> = (files().into_iter())
        .map(|(path, text)| (path, text.to_string()))
        .collect();
    let mut removals = BTreeSet::new();
    on_disk(root, Path::new(DIR), &mut |path| {
        if !writes.contains_key(&path) {
            removals.insert(path);
        }
    })?;
    Ok((writes, removals))
}

/// Every file under `dir` (relative to `root`, as `dir/...`), if it exists.
fn on_disk(root: &Path, dir: &Path, found: &mut impl FnMut(PathBuf)) -> std::io::Result<()> {
    let full = root.join(dir);
    if !full.is_dir() {
        return Ok(());
    }
    let about = |e: std::io::Error| {
        std::io::Error::new(e.kind(), format!("reading {}: {e}", full.display()))
    };
    for entry in std::fs::read_dir(&full).map_err(about)? {
        let entry = entry.map_err(about)?;
        let rel = dir.join(entry.file_name());
        if entry.path().is_dir() {
            on_disk(root, &rel, found)?;
        } else {
            found(rel);
        }
    }
    Ok(())
}

/// The version of the embedded runtime crate.
pub fn version() -> &'static str {
    (MANIFEST.lines())
        .find_map(|line| line.strip_prefix("version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .expect("runtime/Cargo.toml has a version")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ships_the_manifest_and_every_source_file() {
        let files = files();
        let paths: Vec<_> = files.iter().map(|(p, _)| p.to_string_lossy()).collect();
        assert!(paths.contains(&format!("{DIR}/Cargo.toml").into()));
        assert!(paths.contains(&format!("{DIR}/src/lib.rs").into()));
        assert!(paths.contains(&format!("{DIR}/src/controller/mod.rs").into()));
        assert_eq!(version(), env!("CARGO_PKG_VERSION"));
    }
}
