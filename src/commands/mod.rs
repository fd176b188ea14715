//! The commands: each module carries out one command of the CLI on a project folder.

pub mod completion;
pub mod create_api;
pub mod create_webhook;
pub mod edit_api;
pub mod edit_scope;
pub mod envtest;
pub mod generate;
pub mod import;
pub mod init;
pub mod migrate_storage;
pub mod scaffold_record;
pub mod update;
pub mod upgrade_runtime;
pub mod version;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::cli::{Cli, Command, CreateCommand, EditArgs, EditCommand, GenerateCommand};
use crate::scaffold::Report;
use crate::workspace::{Overlay, SourceTree, Verb};

/// Every path a command takes is relative to `-C <DIR>` when given, as cargo's `-C` makes them
/// (it changes the working directory first): `--from-crd`, `--from-binary`, `--kubeconfig`.
fn paths_under(root: &Path, cli: &mut Cli) {
    if root == Path::new(".") {
        return;
    }
    let path = match &mut cli.command {
        Command::Create(CreateCommand::Api(a)) => a.from_crd.as_mut(),
        Command::Update(a) => a.from_binary.as_mut(),
        Command::MigrateStorage(a) => a.kubeconfig.as_mut(),
        Command::Envtest(a) => a.bin_dir.as_mut(),
        Command::Import(a) => Some(&mut a.source),
        _ => None,
    };
    if let Some(p) = path.filter(|p| p.is_relative()) {
        *p = root.join(&*p);
    }
}

/// The k8s-openapi version feature generated projects compile with; it is also the one this
/// binary's k8s-openapi uses, so the static CRD reader sees the same built-in schemas.
pub const K8S_OPENAPI_FEATURE: &str = "v1_37";

/// Run a parsed command line; the returned code is the process exit code.
pub fn run(mut cli: Cli) -> Result<i32> {
    let root = match &cli.dir {
        Some(d) => d.clone(),
        None => PathBuf::from("."),
    };
    paths_under(&root, &mut cli);
    // Every command that reads or writes the project holds its lock throughout (and finishes or
    // rolls back what a dead command left before reading anything).
    let _lock = match &cli.command {
        // `init` locks once its flags are checked (it may have to create the folder first).
        Command::Create(_)
        | Command::Edit(_)
        | Command::Generate(_)
        | Command::UpgradeRuntime { .. }
        | Command::Update(_)
            if root.is_dir() =>
        {
            Some(crate::workspace::lock::lock(&root)?)
        }
        _ => None,
    };
    // A scaffolding command on a project of another scaffold would mix two scaffolds in it.
    if matches!(cli.command, Command::Create(_) | Command::Edit(_)) && root.is_dir() {
        scaffold_record::refuse_other_scaffold(&root, &command_line())?;
    }
    match cli.command {
        Command::Init(args) => init::run(&root, &args).map(|_| 0),
        Command::Create(CreateCommand::Api(args)) => create_api::run(&root, &args).map(|_| 0),
        Command::Create(CreateCommand::Webhook(args)) => {
            create_webhook::run(&root, &args).map(|_| 0)
        }
        Command::Edit(EditArgs {
            command: Some(EditCommand::Api(args)),
            ..
        }) => edit_api::run(&root, &args).map(|_| 0),
        Command::Edit(EditArgs {
            command: None,
            namespaced: Some(namespaced),
            force,
        }) => edit_scope::run(&root, namespaced, force).map(|_| 0),
        Command::Edit(EditArgs { command: None, .. }) => anyhow::bail!(
            "`operator-rs edit` needs something to change: --namespaced or --namespaced=false (the manager's scope), or a subcommand (`edit api`)\n  e.g. operator-rs edit --namespaced"
        ),
        Command::Generate(GenerateCommand::Crds(args)) => generate::run_crds(&root, &args),
        Command::Generate(GenerateCommand::Rbac(args)) => generate::run_rbac(&root, args.check),
        Command::Generate(GenerateCommand::Webhooks(args)) => {
            generate::run_webhooks(&root, args.check)
        }
        Command::Generate(GenerateCommand::Chart(args)) => generate::run_chart(&root, &args),
        Command::Generate(GenerateCommand::Dashboards(args)) => {
            generate::run_dashboards(&root, args.check)
        }
        Command::Generate(GenerateCommand::Manifests(args)) => {
            generate::run_manifests(&root, &args)
        }
        Command::UpgradeRuntime { check } => upgrade_runtime::run(&root, check),
        Command::MigrateStorage(args) => migrate_storage::run(&root, &args).map(|_| 0),
        Command::Update(args) => update::run(&root, &args),
        Command::Import(args) => import::run(&root, &args).map(|_| 0),
        Command::Version => {
            crate::out!("{}", version::text());
            Ok(0)
        }
        Command::Completion { shell } => {
            completion::print(shell);
            Ok(0)
        }
        Command::Envtest(args) => envtest::run(&root, &args).map(|_| 0),
    }
}

/// This process's command line without the binary and `-C <dir>`, for a message that says to run
/// it again.
fn command_line() -> String {
    let mut words: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if let Some(at) = words.iter().position(|w| w == "-C") {
        words.drain(at..(at + 2).min(words.len()));
    }
    words.retain(|w| !w.starts_with("-C"));
    words.join(" ")
}

/// Print every file a command changed, one line a file, as `cargo new` does: the scaffold's own
/// word for a template it overwrote, else what the write did (create, update, remove).
pub fn print_changes(report: &Report, changes: &[(PathBuf, Verb)]) {
    for (path, verb) in changes {
        let scaffolded = report
            .actions
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, a)| *a);
        let word = match scaffolded {
            Some(crate::scaffold::Action::Overwrite) if *verb == Verb::Update => "overwrite",
            _ => verb.as_str(),
        };
        crate::errln!("{word:>10} {}", path.display());
    }
}

/// Refuse to replace or remove a file that was there before the command and that the command did
/// not create (in a folder that is not yet a project, every file is the user's): list them all.
pub fn refuse_replacing_user_files(
    root: &Path,
    writes: &std::collections::BTreeMap<PathBuf, String>,
    removals: &std::collections::BTreeSet<PathBuf>,
    known: &[PathBuf],
    force: bool,
) -> Result<()> {
    if force {
        return Ok(());
    }
    let mut conflicts = known.to_vec();
    for (rel, text) in writes {
        let full = root.join(rel);
        match std::fs::read(&full) {
            Ok(current) if current != text.as_bytes() => conflicts.push(rel.clone()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(crate::workspace::with_path(&full, e).into()),
        }
    }
    conflicts.extend(removals.iter().filter(|r| root.join(r).exists()).cloned());
    if conflicts.is_empty() {
        return Ok(());
    }
    conflicts.sort();
    conflicts.dedup();
    anyhow::bail!("{}", crate::scaffold::refusal(&conflicts))
}

/// Make sure every Rust file we are about to write parses, and that no file declares or imports
/// one name twice (a kind clashing with a generated name): refuse with the clash rather than
/// leave a project that does not compile (see [`crate::scaffold::check`]).
pub fn check_generated_rust(
    pending: &std::collections::BTreeMap<PathBuf, String>,
    parsed: &std::collections::HashMap<PathBuf, Option<String>>,
    kind: Option<&str>,
) -> Result<()> {
    crate::scaffold::check::check(pending, parsed, kind)
}

/// Ends an edit of PROJECT (`edit api`, `edit --namespaced`): `project` rendered over PROJECT's
/// text, the manifests regenerated as `generate manifests` writes them, the generated Rust
/// checked, then every change written at once and printed. Returns the changes.
pub(crate) fn write_project_edit(
    root: &Path,
    mut overlay: Overlay<'_>,
    project: &crate::project::Project,
    crds: generate::Crds,
) -> Result<Vec<(PathBuf, Verb)>> {
    let mut project = project.clone();
    scaffold_record::stamp(root, &mut project);
    let project = &project;
    let previous = overlay.read(Path::new(crate::project::FILE))?;
    overlay.put(
        crate::project::FILE,
        project.render_over(previous.as_deref())?,
    );
    generate::regenerate_into(&mut overlay, project, crds)?;
    let parsed = overlay.parsed().clone();
    let (pending, removals) = overlay.into_changes();
    check_generated_rust(&pending, &parsed, None)?;
    let changes = crate::workspace::write_all(root, &pending, &removals)?;
    print_changes(&Report::default(), &changes);
    Ok(changes)
}

/// The folder name of `root` (resolving `.`), for the default project name; `root` may not
/// exist yet.
pub fn folder_name(root: &Path) -> Result<String> {
    if !root.exists()
        && let Some(name) = root.file_name()
    {
        return Ok(name.to_string_lossy().into_owned());
    }
    let abs =
        std::fs::canonicalize(root).with_context(|| format!("resolving {}", root.display()))?;
    Ok(abs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default())
}
