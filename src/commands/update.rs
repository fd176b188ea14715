//! `operator-rs update`: move a project to the scaffold of this operator-rs. The scaffold of the
//! operator-rs that made the project (the ancestor) and this one's (new) are both made in a
//! temporary folder by replaying the project's commands ([`crate::project::history`]); each file
//! is then merged three ways ([`merge`]): a file the user never touched becomes the new scaffold,
//! the user's changes stay, overlapping changes get conflict markers and a non-zero exit. The
//! vendored runtime is replaced as `upgrade-runtime` does, and the generated manifests are
//! regenerated from the merged sources. Everything is computed before anything is written.

mod binary;
mod merge;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::cli::{Cli, Command as CliCommand, UpdateArgs};
use crate::project::history::{self, InitExtras};
use crate::project::{self, Project};
use crate::vendor;
use crate::workspace::{DiskTree, Overlay, SourceTree, write_all};

use merge::Outcome;

/// Runs the command; the exit code is 1 when a file has conflicts to resolve.
pub fn run(root: &Path, args: &UpdateArgs) -> Result<i32> {
    let project = Project::load(root)?;
    check_record(&project, args.from_binary.is_none())?;
    if !args.dry_run {
        check_git(root)?;
    }
    let makefile = std::fs::read_to_string(root.join("Makefile")).unwrap_or_default();
    let old_source = if project.cli_source.is_empty() {
        binary::source_in_makefile(&makefile).unwrap_or_default()
    } else {
        project.cli_source.clone()
    };
    let old = match &args.from_binary {
        Some(path) => binary::given(path, &project.cli_version)?,
        None => binary::find(root, &project.cli_version, &old_source)?,
    };
    let new = std::env::current_exe().context("finding this operator-rs binary")?;
    let commands = history::replay(&project, &init_extras(root));

    let tmp = tempfile::Builder::new()
        .prefix("operator-rs-update-")
        .tempdir()
        .context("making a temporary folder")?;
    crate::errln!(
        "Replaying {} command{} with {} (the ancestor) and with this operator-rs (the new scaffold)...",
        commands.len(),
        if commands.len() == 1 { "" } else { "s" },
        old.display()
    );
    let ancestor_home = binary::cargo_home_for(tmp.path(), &project.cli_version, &old_source)?;
    let ancestor = replay(
        &old,
        root,
        &tmp.path().join("ancestor"),
        &project,
        &commands,
        Some(&ancestor_home),
    )?;
    let new_tree = replay(
        &new,
        root,
        &tmp.path().join("new"),
        &project,
        &commands,
        None,
    )?;

    let plan = plan(root, &project, &ancestor, &new_tree, &commands)?;
    report(root, &plan, args.dry_run);
    if args.dry_run {
        crate::errln!("\n--dry-run: nothing was written.");
        return Ok(0);
    }
    let changes = write_all(root, &plan.writes, &plan.removals)?;
    if changes.is_empty() {
        crate::errln!(
            "\nThe project is up to date with operator-rs {}.",
            env!("CARGO_PKG_VERSION")
        );
    }
    if plan.conflicts.is_empty() {
        crate::errln!(
            "\nThe project is now on the scaffold of operator-rs {}. Review with `git status` (new files) and `git diff`, then `cargo build`, `cargo test` and `make check-manifests`, and commit it all (`git add -A`).",
            env!("CARGO_PKG_VERSION")
        );
        Ok(0)
    } else {
        crate::errln!(
            "\n{} file{} ha{} conflicts (between <<<<<<< and >>>>>>>): resolve them, then run `operator-rs generate manifests`, `cargo build` and `cargo test`:",
            plan.conflicts.len(),
            if plan.conflicts.len() == 1 { "" } else { "s" },
            if plan.conflicts.len() == 1 { "s" } else { "ve" },
        );
        for path in &plan.conflicts {
            crate::errln!("  {}", path.display());
        }
        Ok(1)
    }
}

/// What in PROJECT `update` cannot replay or build the old operator-rs from.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error(
        "PROJECT commands[{index}] `{line}` {problem}. Nothing was run or written.\n  \
         Each entry is a scaffolding command as operator-rs recorded it, without `operator-rs` and without -C, the first one `init`, e.g. `create api --group cache --version v1alpha1 --kind Memcached`; \
         or remove `commands:` from PROJECT and update reconstructs them from `resources:`"
    )]
    Command {
        index: usize,
        line: String,
        problem: String,
    },
    #[error(
        "PROJECT cliVersion {0:?} is not a version (`<major>.<minor>.<patch>`, as `operator-rs --version` prints it), so the operator-rs that made the project cannot be found. Nothing was written.\n  \
         e.g. cliVersion: \"0.1.0\", or pass the binary that made the project: operator-rs update --from-binary bin/operator-rs-0.1.0"
    )]
    Version(String),
    #[error(
        "PROJECT cliSource {0:?} is not an install source operator-rs records (`--git <url> --rev <commit> operator-rs`; no cliSource: crates.io), so the operator-rs that made the project cannot be built. Nothing was written.\n  \
         e.g. cliSource: --git https://github.com/acme/operator-rs --rev 4b825dc operator-rs, or pass the binary that made the project: operator-rs update --from-binary bin/operator-rs-0.1.0"
    )]
    Source(String),
}

/// PROJECT's record, checked before anything runs: every recorded command is one scaffolding
/// command of this operator-rs's command line (a replay runs it in a folder of its own, so no
/// `-C`, and never `update`, `generate` or a cluster command); with `find_binary`, `cliVersion`
/// and `cliSource` name an operator-rs that `cargo install` can build.
fn check_record(project: &Project, find_binary: bool) -> Result<(), RecordError> {
    for (index, line) in project.commands.iter().enumerate() {
        let problem = match shlex::split(line) {
            None => Some("is not a command line (an unclosed quote or a trailing `\\`)".into()),
            Some(words) if words.is_empty() => Some("is empty".into()),
            Some(words) => command_problem(&words, index),
        };
        if let Some(problem) = problem {
            return Err(RecordError::Command {
                index,
                line: line.clone(),
                problem,
            });
        }
    }
    if find_binary {
        if semver::Version::parse(&project.cli_version).is_err() {
            return Err(RecordError::Version(project.cli_version.clone()));
        }
        if !project.cli_source.is_empty() && binary::git_source(&project.cli_source).is_none() {
            return Err(RecordError::Source(project.cli_source.clone()));
        }
    }
    Ok(())
}

/// Why `words`, the `index`th recorded command, cannot be replayed.
fn command_problem(words: &[String], index: usize) -> Option<String> {
    let args = std::iter::once("operator-rs").chain(words.iter().map(String::as_str));
    let cli = match <Cli as clap::Parser>::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            return Some("prints help or a version: it scaffolds nothing".into());
        }
        Err(e) => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            return Some(format!(
                "is not a command line of this operator-rs ({})",
                first.trim_start_matches("error: ")
            ));
        }
    };
    if cli.dir.is_some() {
        return Some("names a folder (-C): a replay runs in a folder of its own".into());
    }
    match (&cli.command, index) {
        (CliCommand::Init(_), 0) => None,
        (_, 0) => Some("is not `init`: the record starts with the command that made the project".into()),
        (CliCommand::Init(_), _) => Some("is a second `init`: only the first command is `init`".into()),
        (CliCommand::Create(_) | CliCommand::Edit(_), _) => None,
        _ => Some(
            "is not a scaffolding command (init, create api, create webhook, edit api, edit --namespaced)".into(),
        ),
    }
}

/// `update` changes files in place: it needs git to show and undo what it did, so it works on a
/// clean git tree only.
fn check_git(root: &Path) -> Result<()> {
    let status = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["status", "--porcelain", "--untracked-files=all", "."])
        .output()
        .context("running git (update needs it: is git installed?)")?;
    if !status.status.success() {
        bail!(
            "{} is not in a git repository: update merges the new scaffold into your files in place, and needs git to show and undo what it changes. Nothing was written.\n  \
             Commit the project first, e.g. `git init && git add -A && git commit -m 'before operator-rs update'`.",
            root.display()
        );
    }
    let dirty: Vec<&str> = std::str::from_utf8(&status.stdout)
        .unwrap_or_default()
        .lines()
        .collect();
    if !dirty.is_empty() {
        let shown: Vec<_> = dirty.iter().take(10).map(|l| format!("  {l}")).collect();
        bail!(
            "the git tree of {} has uncommitted changes: update merges into your files in place, so it starts from a clean tree (to be undone with `git checkout .`). Nothing was written.\n{}{}\n  \
             Commit or stash them first (`git stash -u`), or preview with `operator-rs update --dry-run`.",
            root.display(),
            shown.join("\n"),
            if dirty.len() > 10 {
                format!("\n  ... and {} more", dirty.len() - 10)
            } else {
                String::new()
            }
        );
    }
    Ok(())
}

/// What `init` took that PROJECT made before commands were recorded does not say: the license
/// header's owner (the README's `Copyright <year> <owner>.`) and whether there is a license.
fn init_extras(root: &Path) -> InitExtras {
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap_or_default();
    let cargo = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    let owner = (readme.lines())
        .find_map(|l| l.strip_prefix("Copyright "))
        .and_then(|rest| rest.strip_suffix('.'))
        .and_then(|rest| rest.split_once(' '))
        .map(|(_year, owner)| owner.to_string())
        .unwrap_or_default();
    InitExtras {
        owner,
        no_license: !cargo.lines().any(|l| l.starts_with("license = ")),
    }
}

/// Run `commands` with `binary` in a new project folder under `base` (named as the project, so
/// that names derived from the folder match), and read back every file it wrote. A command's
/// input file inside the project (`create api --from-crd config/external/x.yaml`) is copied from
/// the project at `root` first, to where the command finds it.
fn replay(
    binary: &Path,
    root: &Path,
    base: &Path,
    project: &Project,
    commands: &[Vec<String>],
    cargo_home: Option<&Path>,
) -> Result<BTreeMap<PathBuf, String>> {
    let dir = base.join(&project.project_name);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for words in commands {
        let inputs = (words.windows(2))
            .filter(|w| w[0] == "--from-crd")
            .map(|w| Path::new(&w[1]))
            .filter(|p| p.is_relative());
        for input in inputs {
            let (from, to) = (root.join(input), dir.join(input));
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("creating {}", parent.display()))?;
            }
            std::fs::copy(&from, &to).with_context(|| {
                format!(
                    "copying {} (the CRD file `operator-rs {}` reads) for the replay",
                    from.display(),
                    history::lines(std::slice::from_ref(words)).join("")
                )
            })?;
        }
        let mut cmd = Command::new(binary);
        cmd.arg("-C").arg(&dir).args(words);
        if let Some(home) = cargo_home {
            cmd.env("CARGO_HOME", home);
        }
        let out = cmd
            .output()
            .with_context(|| format!("running {}", binary.display()))?;
        if !out.status.success() {
            bail!(
                "replaying `operator-rs {}` with {} failed, so the scaffold to merge with could not be made. Nothing was written.\n{}",
                history::lines(std::slice::from_ref(words)).join(""),
                binary.display(),
                String::from_utf8_lossy(&out.stderr).trim_end()
            );
        }
    }
    // A binary that says it is operator-rs but scaffolds nothing (another tool, a stub).
    if !dir.join(project::FILE).is_file() {
        bail!(
            "replaying the project's commands with {} made no PROJECT file: it is not an operator-rs that scaffolds, so the scaffold to merge with could not be made. Nothing was written.\n  \
             Pass the operator-rs binary that made the project, e.g. --from-binary bin/operator-rs-{}",
            binary.display(),
            project.cli_version
        );
    }
    let mut files = BTreeMap::new();
    read_tree(&dir, Path::new(""), &mut files)?;
    Ok(files)
}

fn read_tree(root: &Path, rel: &Path, out: &mut BTreeMap<PathBuf, String>) -> Result<()> {
    let dir = root.join(rel);
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let path = rel.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            read_tree(root, &path, out)?;
        } else if !ignored(&path) {
            let text = std::fs::read_to_string(root.join(&path))
                .with_context(|| format!("reading {}", root.join(&path).display()))?;
            out.insert(path, text);
        }
    }
    Ok(())
}

/// Files of a replayed project that are not scaffold: the project's lock, and the vendored
/// runtime (replaced whole, as `upgrade-runtime` does, never merged).
fn ignored(path: &Path) -> bool {
    path.starts_with(vendor::DIR) || path == Path::new(".operator-rs.lock")
}

/// What update writes, removes, and reports.
#[derive(Debug, Default)]
struct Plan {
    writes: BTreeMap<PathBuf, String>,
    removals: BTreeSet<PathBuf>,
    /// Files left with conflict markers.
    conflicts: Vec<PathBuf>,
    /// Files merged with the user's changes kept.
    merged: Vec<PathBuf>,
    /// Notes on files the scaffold and the user disagree about without a conflict.
    notes: Vec<String>,
}

fn plan(
    root: &Path,
    project: &Project,
    ancestor: &BTreeMap<PathBuf, String>,
    new: &BTreeMap<PathBuf, String>,
    commands: &[Vec<String>],
) -> Result<Plan> {
    let disk = DiskTree::new(root);
    let mut overlay = Overlay::new(&disk);
    let mut plan = Plan::default();
    let paths: BTreeSet<&PathBuf> = ancestor.keys().chain(new.keys()).collect();
    let mut merged_texts = BTreeMap::new();
    for path in paths {
        let user = overlay.read(path)?;
        let outcome = merge::file(
            path,
            ancestor.get(path).map(String::as_str),
            user.as_deref(),
            new.get(path).map(String::as_str),
        )?;
        match outcome {
            Outcome::Keep => {}
            Outcome::Write(text) => {
                merged_texts.insert(path.clone(), text.clone());
                overlay.put(path.clone(), text);
            }
            Outcome::Merged(text) => {
                plan.merged.push(path.clone());
                merged_texts.insert(path.clone(), text.clone());
                overlay.put(path.clone(), text);
            }
            Outcome::Conflict(text) => {
                plan.conflicts.push(path.clone());
                merged_texts.insert(path.clone(), text.clone());
                overlay.put(path.clone(), text);
            }
            Outcome::Remove => overlay.remove(path.clone()),
            Outcome::Note(note) => plan.notes.push(format!("{}: {note}", path.display())),
        }
    }
    // The vendored runtime: this binary's copy, files it no longer has removed.
    let runtime: BTreeMap<PathBuf, String> = (vendor::files().into_iter())
        .map(|(path, text)| (path, text.to_string()))
        .collect();
    for stale in super::upgrade_runtime::existing_files(root, Path::new(vendor::DIR))? {
        if !runtime.contains_key(&stale) {
            overlay.remove(stale);
        }
    }
    for (path, text) in runtime {
        overlay.put(path, text);
    }

    // PROJECT: the merge keeps the user's settings; what records the scaffold is this version's.
    let file = PathBuf::from(project::FILE);
    let mut merged_project = project.clone();
    if !plan.conflicts.contains(&file) {
        let text = overlay.read(&file)?.unwrap_or_default();
        match Project::parse(&text) {
            Ok(mut p) => {
                let new_project = new.get(&file).map(|t| Project::parse(t)).transpose()?;
                if let Some(n) = new_project {
                    p.cli_version = n.cli_version;
                    p.cli_source = n.cli_source;
                    p.layout = n.layout;
                }
                p.commands = history::lines(commands);
                overlay.put(file.clone(), p.render_over(Some(&text))?);
                merged_project = p;
            }
            Err(e) => {
                plan.conflicts.push(file.clone());
                plan.notes.push(format!(
                    "PROJECT: the merged file does not parse ({e:#}); fix it by hand"
                ));
            }
        }
    }
    // The generated manifests follow the merged sources (a conflict in one is then resolved by
    // regenerating it); with a conflict in a source file, they wait for `generate manifests`.
    if plan.conflicts.is_empty() || plan.conflicts.iter().all(|p| is_generated(p)) {
        super::generate::regenerate_into(
            &mut overlay,
            &merged_project,
            super::generate::Crds::Report,
        )?;
        let pending = overlay.pending();
        plan.conflicts.retain(|p| {
            pending
                .get(p)
                .is_some_and(|t| Some(t) == merged_texts.get(p))
        });
    }
    let (writes, removals) = overlay.into_changes();
    // Only what differs from the disk is a change.
    plan.writes = writes
        .into_iter()
        .filter(|(path, text)| {
            std::fs::read(root.join(path)).ok().as_deref() != Some(text.as_bytes())
        })
        .collect();
    plan.removals = removals
        .into_iter()
        .filter(|path| root.join(path).exists())
        .collect();
    plan.conflicts.sort();
    Ok(plan)
}

/// A manifest `generate manifests` writes, which follows the sources rather than being merged.
fn is_generated(path: &Path) -> bool {
    path.starts_with("config/crd/bases")
        || path == Path::new("config/rbac/role.yaml")
        || path == Path::new("config/webhook/manifests.yaml")
}

fn report(root: &Path, plan: &Plan, dry_run: bool) {
    let (create, update, remove) = if dry_run {
        ("would create", "would update", "would remove")
    } else {
        ("create", "update", "remove")
    };
    for path in plan.writes.keys() {
        let word = if plan.conflicts.contains(path) {
            if dry_run {
                "would conflict"
            } else {
                "conflict"
            }
        } else if plan.merged.contains(path) {
            if dry_run { "would merge" } else { "merge" }
        } else if root.join(path).exists() {
            update
        } else {
            create
        };
        crate::errln!("{word:>14} {}", path.display());
    }
    for path in &plan.removals {
        crate::errln!("{remove:>14} {}", path.display());
    }
    for note in &plan.notes {
        crate::errln!("{:>14} {note}", "note");
    }
}
