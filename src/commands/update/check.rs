//! After `update` wrote the merged project: `cargo check --all-targets` in it (unless
//! `--no-check`; skipped with a line saying so when cargo is absent), and what still fails, with
//! where the changes that explain it are written (CHANGELOG.md of operator-rs between the two
//! versions).

use std::path::Path;
use std::process::Command;

use anyhow::Result;

/// Check the updated project at `root` (made by operator-rs `from`); `Ok(false)` when it does not
/// build, after printing its errors and what to read.
pub fn cargo_check(root: &Path, from: &str) -> Result<bool> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    if Command::new(&cargo).arg("--version").output().is_err() {
        crate::errln!(
            "SKIPPED `cargo check --all-targets`: cargo is not installed here; run it yourself before committing."
        );
        return Ok(true);
    }
    crate::errln!(
        "\nRunning `cargo check --all-targets` in the updated project (skip it with --no-check)..."
    );
    let out = Command::new(&cargo)
        .args(["check", "--all-targets", "--message-format=short"])
        .current_dir(root)
        .output()?;
    if out.status.success() {
        crate::errln!("cargo check --all-targets: the updated project builds.");
        return Ok(true);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = (stderr.lines())
        .filter(|l| l.contains("error") && !l.trim_start().starts_with("Compiling"))
        .collect();
    for line in errors.iter().take(30) {
        crate::errln!("  {line}");
    }
    if errors.len() > 30 {
        crate::errln!("  ... and {} more lines", errors.len() - 30);
    }
    crate::errln!(
        "\nThe update is written, but the project does not build yet: fix what `cargo check --all-targets` reports above. What changed in the runtime and the scaffold, and what to do about it: see CHANGELOG.md of operator-rs between {from} and {}.",
        crate::release::VERSION
    );
    Ok(false)
}
