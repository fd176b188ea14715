//! `operator-rs update`: move a project to the scaffold of this operator-rs. It exits 0 at once
//! when PROJECT records this scaffold (fingerprint and digest). Otherwise the operator-rs that made
//! the project (the ancestor) is found among candidates ([`binary`]) and used only when proven to
//! make the recorded scaffold ([`ancestor`]); it and this one replay the project's commands
//! ([`crate::project::history`]) in the repository's git directory ([`gitstate`], which also
//! refuses a state git is in the middle of), and each file as git holds it is merged three ways
//! ([`merge`]; `Cargo.toml` by its structure, [`cargo_toml`]): a file the user never touched
//! becomes the new scaffold, the user's changes stay, overlapping changes get conflict markers
//! and a non-zero exit. The vendored runtime is replaced as `upgrade-runtime` does, and the
//! generated manifests are regenerated from the merged sources. Everything is computed before
//! anything is written; then `cargo check` says what still fails ([`check`]).

mod ancestor;
mod binary;
mod cargo_toml;
mod check;
mod gitstate;
mod merge;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::cli::{Cli, Command as CliCommand, UpdateArgs};
use crate::project::history::{self, InitExtras};
use crate::project::{self, Project, ScaffoldRecord};
use crate::vendor;
use crate::workspace::{DiskTree, Overlay, SourceTree};

use crate::ops;
use crate::ops::regenerate::{Crds, regenerate_into};
use crate::ops::scaffold_record::{self, Conditions, Files};
use merge::Outcome;

/// Runs the command; the exit code is 1 when a file has conflicts to resolve, or when the
/// updated project fails `cargo check`.
pub fn run(root: &Path, args: &UpdateArgs) -> Result<i32> {
    let project = Project::load(root)?;
    check_record(&project, args.from_binary.is_none())?;
    let new = std::env::current_exe().context("finding this operator-rs binary")?;
    let commands = history::replay(&project, &init_extras(root));
    let given = (args.from_binary.as_ref())
        .map(|path| binary::given(path, &project.cli_version).map(|b| (path.clone(), b)))
        .transpose()?;
    if !args.dry_run {
        gitstate::check(root)?;
    }
    let makefile = std::fs::read_to_string(root.join("Makefile")).unwrap_or_default();
    let old_source = if project.cli_source.is_empty() {
        binary::source_in_makefile(&makefile).unwrap_or_default()
    } else {
        project.cli_source.clone()
    };
    let scratch = gitstate::Scratch::new(root)?;
    // The replays' conditions: the project's install source (its Makefile's, for a PROJECT
    // without cliSource), license year and folder name.
    let mut pinned = project.clone();
    pinned.cli_source = old_source.clone();
    let conditions = Conditions::of(root, &pinned, scratch.path())?;
    let runtime = scaffold_record::runtime_on_disk(root)?;
    let proof = ancestor::Proof {
        root,
        project: &project,
        commands: &commands,
        conditions: &conditions,
        scratch: scratch.path(),
        this: &new,
        runtime: &runtime,
    };
    // A binary the user names is proven, or refused, whatever else holds.
    let given = match given {
        Some((path, binary)) => Some(proof.prove(&binary, 0).map_err(|why| {
            let tried = [(format!("--from-binary {}", path.display()), why)];
            anyhow::anyhow!("{}", ancestor::refusal(&project, &old_source, &tried))
        })?),
        None => None,
    };
    if up_to_date(root, &project, &new, &scratch.path().join("current"))? {
        crate::errln!(
            "The project is already up to date: it is on the scaffold of this operator-rs {} ({}).",
            crate::release::VERSION,
            crate::release::scaffold_fingerprint()
        );
        return Ok(0);
    }
    let ancestor = match given {
        Some(proven) => proven,
        None => find_ancestor(root, &project, &old_source, &proof)?,
    };
    crate::errln!(
        "Replaying {} command{} with {} (the ancestor, proven to make the project's scaffold) and with this operator-rs (the new scaffold)...",
        commands.len(),
        if commands.len() == 1 { "" } else { "s" },
        ancestor.binary.display()
    );
    for line in &ancestor.fell_back {
        crate::errln!(
            "note: `operator-rs {line}` is a command {} does not know (a newer scaffold's): replayed with this operator-rs in both trees",
            ancestor.binary.display()
        );
    }
    let new_tree = scaffold_record::replay(
        &new,
        None,
        root,
        &scratch.path().join("new"),
        &project,
        &commands,
        &conditions,
    )
    .map_err(|e| {
        anyhow::anyhow!(
            "{e}\nso the new scaffold to merge with could not be made. Nothing was written."
        )
    })?;
    let record = ScaffoldRecord {
        fingerprint: crate::release::scaffold_fingerprint().to_string(),
        digest: scaffold_record::digest(&new_tree.files),
        license_year: Some(conditions.year),
    };
    let merge_dir = scratch.path().join("merge");
    std::fs::create_dir_all(&merge_dir)
        .with_context(|| format!("creating {}", merge_dir.display()))?;
    let trees = Trees {
        ancestor: scaffold_texts(&ancestor.files)?,
        new: scaffold_texts(&new_tree.files)?,
    };
    let mut plan = plan(root, &project, &trees, &commands, record, &merge_dir)?;
    drop(scratch);
    report(root, &plan, args.dry_run);
    if args.dry_run {
        crate::errln!("\n--dry-run: nothing was written.");
        return Ok(0);
    }
    // The merge is the whole plan: written as it is (its conflict markers are the user's to
    // resolve, so its Rust is not checked), reported above.
    let disk = DiskTree::new(root);
    let changes = ops::finish(
        root,
        ops::Plan {
            check_rust: false,
            print: false,
            ..ops::Plan::tree(
                &disk,
                std::mem::take(&mut plan.writes),
                std::mem::take(&mut plan.removals),
            )
        },
    )?;
    if changes.is_empty() {
        crate::errln!(
            "\nThe project is up to date with operator-rs {}.",
            crate::release::VERSION
        );
    }
    if plan.conflicts.is_empty() {
        crate::errln!(
            "\nThe project is now on the scaffold of operator-rs {}. Review with `git status` (new files) and `git diff`, then `cargo build`, `cargo test` and `make check-manifests`, and commit it all (`git add -A`).",
            crate::release::VERSION
        );
        if !args.no_check && !check::cargo_check(root, &project.cli_version)? {
            return Ok(1);
        }
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

/// Whether PROJECT records this operator-rs's scaffold and the digest this binary's replay of
/// its commands makes: then there is nothing to update, and no other binary is looked for.
fn up_to_date(root: &Path, project: &Project, this: &Path, scratch: &Path) -> Result<bool> {
    let Some(record) = &project.scaffold else {
        return Ok(false);
    };
    if record.fingerprint != crate::release::scaffold_fingerprint() || record.digest.is_empty() {
        return Ok(false);
    }
    let digest = scaffold_record::digest_with(this, root, project, scratch)?;
    Ok(digest == record.digest)
}

/// The first candidate proven (`bin/operator-rs-<version>`, the cache folder, a build from
/// cliSource), or the refusal that lists each one and why.
fn find_ancestor(
    root: &Path,
    project: &Project,
    source: &str,
    proof: &ancestor::Proof<'_>,
) -> Result<ancestor::Proven> {
    let mut tried = Vec::new();
    for (index, candidate) in binary::candidates(root, &project.cli_version, source)?
        .into_iter()
        .enumerate()
    {
        let binary = match candidate.binary(&project.cli_version) {
            Ok(b) => b,
            Err(e) => {
                tried.push((candidate.describe(), format!("{e:#}")));
                continue;
            }
        };
        match proof.prove(&binary, index + 1) {
            Ok(proven) => return Ok(proven),
            Err(why) => tried.push((candidate.describe(), why)),
        }
    }
    anyhow::bail!("{}", ancestor::refusal(project, source, &tried))
}

/// The scaffold files of a replay as text: all but the vendored runtime (replaced whole, as
/// `upgrade-runtime` does, never merged).
fn scaffold_texts(files: &Files) -> Result<BTreeMap<PathBuf, String>> {
    (files.iter())
        .filter(|(path, _)| !path.starts_with(vendor::DIR))
        .map(|(path, bytes)| {
            let text = String::from_utf8(bytes.clone())
                .with_context(|| format!("the scaffold's {} is not UTF-8", path.display()))?;
            Ok((path.clone(), text))
        })
        .collect()
}

/// The two scaffolds a project is merged between.
struct Trees {
    ancestor: BTreeMap<PathBuf, String>,
    new: BTreeMap<PathBuf, String>,
}

/// What in PROJECT `update` cannot replay or build the old operator-rs from.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// An entry of `commands:` that is not a scaffolding command.
    #[error(
        "PROJECT commands[{index}] `{line}` {problem}. Nothing was run or written.\n  \
         Each entry is a scaffolding command as operator-rs recorded it, without `operator-rs` and without -C, the first one `init`, e.g. `create api --group cache --version v1alpha1 --kind Memcached`; \
         or remove `commands:` from PROJECT and update reconstructs them from `resources:`"
    )]
    Command {
        /// Its index in `commands:`.
        index: usize,
        /// The entry as written.
        line: String,
        /// What is wrong with it.
        problem: String,
    },
    /// `cliVersion:` is not a version.
    #[error(
        "PROJECT cliVersion {0:?} is not a version (`<major>.<minor>.<patch>`, as `operator-rs --version` prints it), so the operator-rs that made the project cannot be found. Nothing was written.\n  \
         e.g. cliVersion: \"0.1.0\", or pass the binary that made the project: operator-rs update --from-binary bin/operator-rs-0.1.0"
    )]
    Version(String),
    /// `cliSource:` is not an install source operator-rs records.
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
    trees: &Trees,
    commands: &[Vec<String>],
    record: ScaffoldRecord,
    merge_dir: &Path,
) -> Result<Plan> {
    let (ancestor, new) = (&trees.ancestor, &trees.new);
    let disk = DiskTree::new(root);
    let mut overlay = Overlay::new(&disk);
    let mut plan = Plan::default();
    let paths: BTreeSet<&PathBuf> = ancestor.keys().chain(new.keys()).collect();
    let mut merged_texts = BTreeMap::new();
    // The user's side as git holds it (line endings as git stores them).
    let committed = gitstate::Committed::new(root);
    for path in paths {
        let user = committed.read(path)?;
        let outcome = merge::file(
            merge_dir,
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
    let (runtime, stale) = vendor::replacing(root)?;
    for path in stale {
        overlay.remove(path);
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
                p.scaffold = Some(record);
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
        regenerate_into(&mut overlay, &merged_project, Crds::Report)?;
        let pending = overlay.pending();
        plan.conflicts.retain(|p| {
            pending
                .get(p)
                .is_some_and(|t| Some(t) == merged_texts.get(p))
        });
    }
    let (writes, removals) = overlay.into_changes();
    // Written back in the working tree's line endings; only what differs from the disk is a
    // change.
    plan.writes = writes
        .into_iter()
        .map(|(path, text)| {
            let text = gitstate::in_working_tree_endings(root, &path, text);
            (path, text)
        })
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
