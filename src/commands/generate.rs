//! `operator-rs generate`: run a generator and either write what it produced or, with `--check`,
//! compare it with what is on disk and print a unified diff of every stale or missing file.

use std::path::Path;

use anyhow::{Context, Result};

use crate::project::Project;
use std::collections::{BTreeMap, BTreeSet};

use crate::workspace::{DiskTree, GeneratorOutput, unified_diff, write_all};

/// What applying a generator's output did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Applied {
    /// Files whose contents differed from the disk (written, or reported by `--check`).
    pub changed: Vec<std::path::PathBuf>,
    /// Files no generator produces any more (removed, or reported by `--check`).
    pub stale: Vec<std::path::PathBuf>,
    /// Files already up to date.
    pub unchanged: usize,
}

/// Write `output` under `root` (and remove its stale files), all-or-nothing (refused when a CRD
/// loses a version the cluster still lists in its storedVersions), or with `check`
/// compare only: print a unified diff to stdout for every file that is stale or missing, and
/// name every file no kind produces. Warnings go to stderr either way. Returns what differed;
/// with `check`, a non-empty `changed` or `stale` means the caller exits 1.
pub fn apply(root: &Path, output: &GeneratorOutput, check: bool) -> Result<Applied> {
    for w in &output.warnings {
        crate::errln!("warning: {w}");
    }
    let mut applied = Applied::default();
    let mut writes = BTreeMap::new();
    let mut dropped = Vec::new();
    for file in &output.files {
        let full = root.join(&file.path);
        let current = match std::fs::read_to_string(&full) {
            Ok(s) => Some(s),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(crate::workspace::with_path(&full, e).into()),
        };
        if current.as_deref() == Some(file.contents.as_str()) {
            applied.unchanged += 1;
            continue;
        }
        if check {
            crate::out!(
                "{}",
                unified_diff(&file.path, current.as_deref(), &file.contents)
            );
        } else {
            // A CRD losing a version the cluster may still store objects in.
            dropped.extend(
                current.as_deref().and_then(|old| {
                    crate::cluster::dropped_versions(&file.path, old, &file.contents)
                }),
            );
            writes.insert(file.path.clone(), file.contents.clone());
        }
        applied.changed.push(file.path.clone());
    }
    applied.stale = output.stale.clone();
    if check {
        for s in &applied.stale {
            crate::outln!(
                "{}: no kind produces this file any more (a renamed plural or a removed kind?)",
                s.display()
            );
        }
    } else {
        crate::cluster::check_dropped(&dropped)?;
        let removals: BTreeSet<_> = applied.stale.iter().cloned().collect();
        write_all(root, &writes, &removals)?;
    }
    Ok(applied)
}

/// `generate crds`: the static reader by default, the compiler with `--exact`; with
/// `--check-compat`, the comparison with an earlier revision (after `--check`, when given too).
pub fn run_crds(root: &Path, command: &crate::cli::GenerateCrdsCommand) -> Result<i32> {
    let args = &command.crds;
    let Some(reference) = &command.check_compat else {
        let (_, output) = project_and_crds(root, args)?;
        return finish(root, ("CRDs", "crds"), &output, args.check);
    };
    let stale = if args.check {
        let (_, output) = project_and_crds(root, args)?;
        finish(root, ("CRDs", "crds"), &output, true)?
    } else {
        0
    };
    let compat = check_compat(root, args, reference, command.compat_warnings_as_errors)?;
    Ok(stale.max(compat))
}

/// `generate crds --check-compat <reference>`: the CRDs of the project at `reference` (read from
/// git) and as it is, compared; every finding printed as rustc prints a diagnostic. 1 when one is
/// an error (or a warning, with `warnings_fatal`).
fn check_compat(
    root: &Path,
    args: &crate::cli::GenerateCrdsArgs,
    reference: &str,
    warnings_fatal: bool,
) -> Result<i32> {
    use crate::crdgen::compat::{self, Severity, Side};
    use crate::workspace::SourceTree;

    let project = with_crd_flags(Project::load(root)?, args);
    let old_tree = crate::workspace::git::GitTree::at(root, reference)?;
    let missing = |what: String| crate::workspace::git::GitError::NoProject {
        reference: reference.to_string(),
        what,
    };
    let old_project = match old_tree.read(Path::new(crate::project::FILE))? {
        Some(text) => with_crd_flags(
            Project::parse(&text)
                .with_context(|| format!("PROJECT at {reference} is not a valid PROJECT file"))?,
            args,
        ),
        None => return Err(missing("it has no PROJECT file there".into()).into()),
    };
    // As it was written then: kube-apiserver's checks may have changed since.
    let (old_crds, old_places) = match crate::crdgen::crds_located(&old_tree, &old_project, false) {
        Ok(read) => read,
        Err(crate::crdgen::CrdgenError::NoCrateRoot(_)) => {
            return Err(missing("neither src/lib.rs nor src/main.rs was there".into()).into());
        }
        Err(e) => anyhow::bail!(
            "the CRDs of the project at {reference} cannot be derived statically: {e}\n  (the places named are those of the files at {reference})"
        ),
    };
    let (new_crds, new_places) =
        crate::crdgen::crds_located(&DiskTree::new(root), &project, !args.skip_apiserver_checks)?;
    let findings = compat::compare(
        &Side {
            crds: &old_crds,
            places: &old_places,
        },
        &Side {
            crds: &new_crds,
            places: &new_places,
        },
    );
    // The project's allowances (config/compat.yaml), checked against both revisions' CRDs.
    let allowances = compat::allow::load(root, &old_crds, &new_crds)?;
    let (mut errors, mut warnings, mut allowed_warnings, mut silenced) = (0, 0, 0, 0);
    for f in &findings {
        let (severity, allowance) = compat::allow::graded(&allowances, f);
        let Some(severity) = severity else {
            silenced += 1;
            continue;
        };
        match (severity, allowance) {
            (Severity::Error, _) => errors += 1,
            (Severity::Warning, Some(_)) => allowed_warnings += 1,
            (Severity::Warning, None) => warnings += 1,
        }
        let mut text = format!("{}[{}]: {}", severity, f.rule, f.message);
        match &f.span {
            Some(span) => text.push_str(&format!("\n  --> {span}")),
            None => text.push_str("\n  --> (no longer in the source)"),
        }
        let mut about = format!("CRD {}", f.crd);
        if let Some(v) = &f.version {
            about.push_str(&format!(", version {v}"));
        }
        if !f.path.is_empty() {
            about.push_str(&format!(", at {}", f.path));
        }
        text.push_str(&format!("\n   = note: {about}"));
        if let Some(was) = &f.was {
            text.push_str(&format!("\n   = note: it was at {was} in {reference}"));
        }
        if let Some(a) = allowance {
            text.push_str(&format!(
                "\n   = note: {} by {} (enforcement: {:?})",
                if severity == f.severity {
                    "graded"
                } else if severity == Severity::Error {
                    "made an error"
                } else {
                    "allowed"
                },
                a.at,
                a.enforcement
            ));
        }
        text.push_str(&format!("\n   = help: {}\n", f.fix));
        crate::errln!("{text}");
    }
    if silenced > 0 {
        crate::errln!(
            "note: {silenced} change{} not reported: enforcement None in {}",
            if silenced == 1 { "" } else { "s" },
            compat::allow::FILE
        );
    }
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    if allowed_warnings > 0 {
        crate::errln!(
            "note: {} allowed by {} (reported, never fatal)",
            plural(allowed_warnings, "change"),
            compat::allow::FILE
        );
    }
    if errors > 0 || (warnings_fatal && warnings > 0) {
        crate::errln!(
            "error: the CRDs are not compatible with {reference}: {}, {}{}",
            plural(errors, "breaking change"),
            plural(warnings, "warning"),
            if warnings_fatal && warnings > 0 {
                " (warnings are errors: --compat-warnings-as-errors)"
            } else {
                ""
            }
        );
        Ok(1)
    } else {
        crate::errln!(
            "The CRDs are compatible with {reference} ({} compared{}).",
            plural(old_crds.len(), "CRD"),
            if warnings + allowed_warnings > 0 {
                format!(", {}", plural(warnings + allowed_warnings, "warning"))
            } else {
                String::new()
            }
        );
        Ok(0)
    }
}

/// `generate rbac`: config/rbac/role.yaml from the controllers' markers.
pub fn run_rbac(root: &Path, check: bool) -> Result<i32> {
    let project = Project::load(root)?;
    let output = crate::rbac::generate(&DiskTree::new(root), &project)?;
    finish(root, ("RBAC", "rbac"), &output, check)
}

/// `generate webhooks`: config/webhook/manifests.yaml from the webhook markers.
pub fn run_webhooks(root: &Path, check: bool) -> Result<i32> {
    let project = Project::load(root)?;
    let output = crate::webhookgen::generate(&DiskTree::new(root), &project)?;
    finish(root, ("webhook configurations", "webhooks"), &output, check)
}

/// `generate chart`: dist/chart from what config/ deploys.
pub fn run_chart(root: &Path, args: &crate::cli::GenerateChartArgs) -> Result<i32> {
    let project = Project::load(root)?;
    let output = crate::chart::generate(
        &DiskTree::new(root),
        &project,
        args.force,
        args.check,
        args.crds_chart,
    )?;
    finish(root, ("chart files", "chart"), &output, args.check)
}

/// `generate dashboards`: grafana/ from the runtime's metrics and the custom metrics' config.
pub fn run_dashboards(root: &Path, check: bool) -> Result<i32> {
    let project = Project::load(root)?;
    let output = crate::dashboards::generate(&DiskTree::new(root), &project)?;
    finish(root, ("dashboards", "dashboards"), &output, check)
}

/// `generate manifests`: CRDs, RBAC and webhook configurations; all are checked before any
/// is written.
pub fn run_manifests(root: &Path, args: &crate::cli::GenerateCrdsArgs) -> Result<i32> {
    let (project, mut output) = project_and_crds(root, args)?;
    let tree = DiskTree::new(root);
    for more in [
        crate::rbac::generate(&tree, &project)?,
        crate::webhookgen::generate(&tree, &project)?,
    ] {
        output.files.extend(more.files);
        output.warnings.extend(more.warnings);
    }
    finish(root, ("manifests", "manifests"), &output, args.check)
}

/// The CRD options of the command line override PROJECT's `crd:` (for this run only).
fn with_crd_flags(mut project: Project, args: &crate::cli::GenerateCrdsArgs) -> Project {
    if let Some(n) = args.max_desc_len {
        project.crd.max_desc_len = Some(n);
    }
    project
}

/// PROJECT (with the command line's CRD options) and the CRDs: the static reader by default,
/// the compiler with `--exact`. The static reader reads the crate while PROJECT is parsed on
/// another thread; a PROJECT that does not load is reported first, as when it was read first.
fn project_and_crds(
    root: &Path,
    args: &crate::cli::GenerateCrdsArgs,
) -> Result<(Project, GeneratorOutput)> {
    let checks = !args.skip_apiserver_checks;
    if args.exact {
        let project = with_crd_flags(Project::load(root)?, args);
        let output = crate::crdgen::generate_exact(root, &project, checks)?;
        return Ok((project, output));
    }
    let tree = DiskTree::new(root);
    let (project, found) = std::thread::scope(|scope| {
        let project = scope.spawn(|| Project::load(root));
        let found = crate::crdgen::read(&tree);
        if let Ok(found) = &found {
            found.keep_until_exit();
        }
        let project = project
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (project, found)
    });
    let project = with_crd_flags(project?, args);
    let output = crate::crdgen::assemble(&tree, found?, &project, checks)?;
    Ok((project, output))
}

/// `what`: what the files are (for messages) and the `generate` subcommand that writes them.
fn finish(
    root: &Path,
    (what, command): (&str, &str),
    output: &GeneratorOutput,
    check: bool,
) -> Result<i32> {
    let applied = apply(root, output, check)?;
    if check {
        let mut stale_files = applied.changed.clone();
        stale_files.extend(applied.stale.iter().cloned());
        if stale_files.is_empty() {
            crate::errln!("{what} are up to date ({} files).", applied.unchanged);
            Ok(0)
        } else {
            crate::errln!(
                "error: {} file{} stale, missing or produced by no kind: {}\n  Run `operator-rs generate {}` and commit the result.",
                stale_files.len(),
                if stale_files.len() == 1 {
                    " is"
                } else {
                    "s are"
                },
                stale_files
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                command
            );
            Ok(1)
        }
    } else {
        for p in &applied.changed {
            crate::errln!("{:>10} {}", "write", p.display());
        }
        for p in &applied.stale {
            crate::errln!("{:>10} {}", "remove", p.display());
        }
        Ok(0)
    }
}
