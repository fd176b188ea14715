//! `operator-rs upgrade-runtime`: replace a project's vendored operator-rs-runtime with the copy
//! this binary embeds (files it no longer has are removed), all-or-nothing; `--check` only says
//! whether the project's copy differs.

use std::path::Path;

use anyhow::{Result, bail};

use crate::ops::{self, Plan};
use crate::project::{self, Project};
use crate::vendor;
use crate::workspace::{DiskTree, Overlay};

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
    let (files, stale) = vendor::replacing(root)?;
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
    let disk = DiskTree::new(root);
    let mut overlay = Overlay::new(&disk);
    for path in stale {
        overlay.remove(path);
    }
    for (path, text) in files {
        overlay.put(path, text);
    }
    // PROJECT and the manifests stay as they are.
    ops::finish(root, Plan::files(overlay))?;
    crate::errln!(
        "\n{} is now operator-rs-runtime {version}. Next: `cargo build` and `cargo test`.",
        vendor::DIR
    );
    Ok(0)
}
