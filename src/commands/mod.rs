//! The commands: each module carries out one command of the CLI on a project folder.

pub mod completion;
pub mod create_api;
pub mod create_webhook;
pub mod edit_api;
pub mod edit_layout;
pub mod edit_scope;
pub mod envtest;
pub mod generate;
pub mod import;
pub mod init;
pub mod migrate_storage;
pub mod update;
pub mod upgrade_runtime;
pub mod version;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::cli::{Cli, Command, CreateCommand, EditArgs, EditCommand, GenerateCommand};

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
        crate::ops::scaffold_record::refuse_other_scaffold(&root, &command_line())?;
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
            namespaced,
            sharded,
            force,
            ..
        }) if namespaced.is_some() || sharded.is_some() => {
            let change = edit_scope::Change {
                namespaced,
                sharded,
            };
            edit_scope::run(&root, change, force).map(|_| 0)
        }
        Command::Edit(EditArgs {
            command: None,
            multigroup: Some(multigroup),
            ..
        }) => edit_layout::run(&root, multigroup).map(|_| 0),
        Command::Edit(EditArgs { command: None, .. }) => anyhow::bail!(
            "`operator-rs edit` needs something to change: --namespaced or --namespaced=false (the manager's scope), --sharded or --sharded=false (one shard per replica, or one active replica), --multigroup or --multigroup=false (the layout), or a subcommand (`edit api`)\n  e.g. operator-rs edit --namespaced"
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
        Command::Import(args) => import::run(&root, &args, &replay).map(|_| 0),
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

/// Runs one command line of this tool on `dir` (`import` lays a project out with it): parsed as
/// `operator-rs -C <dir> <words>`, then run as [`run`] runs it.
fn replay(dir: &Path, words: &[String]) -> Result<()> {
    use clap::Parser;
    let mut argv = vec![
        "operator-rs".to_string(),
        "-C".into(),
        dir.display().to_string(),
    ];
    argv.extend(words.iter().cloned());
    let cli = Cli::try_parse_from(&argv).map_err(|e| anyhow::anyhow!("{e}"))?;
    let code = run(cli).with_context(|| format!("operator-rs {}", words.join(" ")))?;
    if code != 0 {
        anyhow::bail!("operator-rs {} exited with {code}", words.join(" "));
    }
    Ok(())
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
