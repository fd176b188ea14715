//! `operator-rs upgrade-runtime`: replace a project's vendored operator-rs-runtime with the copy
//! this binary embeds (files it no longer has are removed), all-or-nothing; `--check` only says
//! whether the project's copy differs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::project::{self, Project};
use crate::scaffold::Report;
use crate::vendor;
use crate::workspace::write_all;

/// Runs the command; the exit code is 1 when `check` finds the copy out of date.
pub fn run(root: &Path, check: bool) -> Result<i32> {
    if !root.join(project::FILE).is_file() {
        bail!(
            "{} is not an operator-rs project (it has no PROJECT file): nothing to upgrade.\n  \
             Run it in a project made by `operator-rs init`, e.g. `operator-rs -C memcached-operator upgrade-runtime`.",
            root.display()
        );
    }
    Project::load(root)?;
    let files: BTreeMap<PathBuf, String> = (vendor::files().into_iter())
        .map(|(path, text)| (path, text.to_string()))
        .collect();
    let stale = existing_files(root, Path::new(vendor::DIR))?
        .into_iter()
        .filter(|path| !files.contains_key(path))
        .collect::<BTreeSet<_>>();
    let differs = (files.iter()).any(|(path, text)| {
        std::fs::read(root.join(path)).ok().as_deref() != Some(text.as_bytes())
    });
    let version = vendor::version();
    if !differs && stale.is_empty() {
        crate::errln!(
            "{} holds operator-rs-runtime {version} already.",
            vendor::DIR
        );
        return Ok(0);
    }
    if check {
        crate::errln!(
            "{} differs from the operator-rs-runtime {version} of this operator-rs; run `operator-rs upgrade-runtime`.",
            vendor::DIR
        );
        return Ok(1);
    }
    let changes = write_all(root, &files, &stale)?;
    super::print_changes(&Report::default(), &changes);
    crate::errln!(
        "\n{} is now operator-rs-runtime {version}. Next: `cargo build` and `cargo test`.",
        vendor::DIR
    );
    Ok(0)
}

/// Every file under `dir` (relative to `root`), if it exists.
pub(super) fn existing_files(root: &Path, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let full = root.join(dir);
    if !full.is_dir() {
        return Ok(files);
    }
    for entry in
        std::fs::read_dir(&full).map_err(|e| anyhow::anyhow!("reading {}: {e}", full.display()))?
    {
        let entry = entry.map_err(|e| anyhow::anyhow!("reading {}: {e}", full.display()))?;
        let rel = dir.join(entry.file_name());
        if entry.path().is_dir() {
            files.extend(existing_files(root, &rel)?);
        } else {
            files.push(rel);
        }
    }
    Ok(files)
}
