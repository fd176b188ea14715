//! After `update` wrote the merged project: `cargo check --all-targets` in it, then, when that
//! passes and clippy is installed, `cargo clippy --all-targets -- -D warnings` (the bar of the
//! project's own `make lint` and CI; cheap after the check, which built the dependencies), unless
//! `--no-check`; skipped with a line saying so when cargo is absent. What still fails is printed
//! with the changelog entries that explain it: the "What you must do" of every release of
//! operator-rs between the project's and this one (this binary's CHANGELOG.md, embedded).

use std::path::Path;

use anyhow::Result;

/// This operator-rs's changelog, newest release first.
const CHANGELOG: &str = include_str!("../../../CHANGELOG.md");

/// Check the updated project at `root` (made by operator-rs `from`); `Ok(false)` when it does not
/// build, after printing its errors and what to read. Clippy's findings are printed the same
/// way, but leave the result `Ok(true)`: the update built, and what lints is the user's to fix
/// before `make lint` (their CI) passes.
pub fn cargo_check(root: &Path, from: &str) -> Result<bool> {
    use crate::cargo_command::cargo;
    if cargo().arg("--version").output().is_err() {
        crate::errln!(
            "SKIPPED `cargo check --all-targets`: cargo is not installed here; run it yourself before committing."
        );
        return Ok(true);
    }
    let check = ["check", "--all-targets", "--message-format=short"];
    if !run(root, &check, "error")? {
        advise(
            from,
            "the project does not build yet: fix what `cargo check --all-targets` reports above",
        );
        return Ok(false);
    }
    let has_clippy = cargo()
        .args(["clippy", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_clippy {
        crate::errln!(
            "SKIPPED `cargo clippy --all-targets -- -D warnings`: clippy is not installed here (`rustup component add clippy`); `make lint` runs it."
        );
        return Ok(true);
    }
    let clippy = [
        "clippy",
        "--all-targets",
        "--message-format=short",
        "--",
        "-D",
        "warnings",
    ];
    if !run(root, &clippy, "error")? {
        advise(
            from,
            "the project builds, but `cargo clippy --all-targets -- -D warnings` (your `make lint` and CI) fails: fix what it reports above (an import the merge left unused, a deprecated runtime item) before you commit",
        );
    }
    Ok(true)
}

/// `cargo <args>` in `root`; on failure, its lines holding `needle` (the diagnostics), at most
/// 30 of them, are printed.
fn run(root: &Path, args: &[&str], needle: &str) -> Result<bool> {
    let shown = args.join(" ");
    crate::errln!("\nRunning `cargo {shown}` in the updated project (skip it with --no-check)...");
    let out = crate::cargo_command::cargo()
        .args(args)
        .current_dir(root)
        .output()?;
    if out.status.success() {
        crate::errln!("cargo {shown}: passed.");
        return Ok(true);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = (stderr.lines())
        .filter(|l| l.contains(needle) && !l.trim_start().starts_with("Compiling"))
        .collect();
    for line in lines.iter().take(30) {
        crate::errln!("  {line}");
    }
    if lines.len() > 30 {
        crate::errln!("  ... and {} more lines", lines.len() - 30);
    }
    Ok(false)
}

/// The update is written, but `what` still fails: print the changelog's advice since `from`.
fn advise(from: &str, what: &str) {
    crate::errln!("\nThe update is written, but {what}.");
    let advice = must_do_since(CHANGELOG, from);
    if advice.is_empty() {
        crate::errln!(
            "What changed in the runtime and the scaffold: CHANGELOG.md of operator-rs between {from} and {}.",
            crate::release::VERSION
        );
    } else {
        crate::errln!(
            "What changed since operator-rs {from}, and what to do (CHANGELOG.md of operator-rs {}):\n{advice}",
            crate::release::VERSION
        );
    }
}

/// The "What you must do" sections of the changelog's releases newer than `from` (each headed by
/// its version), newest first; empty when `from` is no version or the changelog has none.
pub fn must_do_since(changelog: &str, from: &str) -> String {
    let Ok(from) = semver::Version::parse(from) else {
        return String::new();
    };
    let mut out = String::new();
    for entry in changelog.split("\n## [").skip(1) {
        let Some((version, body)) = entry.split_once(']') else {
            continue;
        };
        if semver::Version::parse(version).is_ok_and(|v| v <= from) {
            break;
        }
        let Some(start) = body.find("### What you must do\n") else {
            continue;
        };
        let section = &body[start + "### What you must do\n".len()..];
        let section = section.split("\n### ").next().unwrap_or_default().trim();
        out.push_str(&format!("\n  {version}:\n"));
        for line in section.lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_advice_is_every_newer_releases_must_do() {
        let log = "# Changelog\n\n## [0.3.0] - x\n\n### What you must do\n\n- rename A\n\n### Changed\n\n- other\n\n## [0.2.0] - y\n\n### What you must do\n\n- rename B\n\n## [0.1.0] - z\n\n### What you must do\n\n- never shown\n";
        let advice = must_do_since(log, "0.1.0");
        assert!(
            advice.contains("0.3.0:") && advice.contains("- rename A"),
            "{advice}"
        );
        assert!(
            advice.contains("0.2.0:") && advice.contains("- rename B"),
            "{advice}"
        );
        assert!(
            !advice.contains("other") && !advice.contains("never shown"),
            "{advice}"
        );
        assert_eq!(must_do_since(log, "0.3.0"), "");
        assert_eq!(must_do_since(log, "not a version"), "");
        // This binary's own changelog advises a 0.1.0 project.
        assert!(must_do_since(CHANGELOG, "0.1.0").contains("Defaulter"));
    }
}
