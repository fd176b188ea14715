//! The command line: every command, flag and help text, declared with clap's derive API.

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand};

/// The whole command line: `-C <dir>` and the command; what `src/main.rs` parses.
#[derive(Debug, Parser)]
#[command(
    name = "operator-rs",
    version,
    about = "Scaffold Kubernetes operators written in Rust on kube-rs, and keep them correct as they grow.",
    after_help = "Example:\n  operator-rs init --domain example.com --repo github.com/acme/memcached-operator\n  operator-rs create api --group cache --version v1alpha1 --kind Memcached\n  operator-rs generate manifests --check"
)]
pub struct Cli {
    /// Act on this folder instead of the current one (like cargo's -C).
    #[arg(short = 'C', global = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The top-level commands (`init`, `create`, `edit`, `generate`...).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Lay out a new operator project in the current folder.
    #[command(
        after_help = "Example:\n  mkdir memcached-operator && cd memcached-operator\n  operator-rs init --domain example.com --repo github.com/acme/memcached-operator"
    )]
    Init(InitArgs),
    /// Add to the project (`create api`).
    #[command(subcommand, after_help = CREATE_EXAMPLE)]
    Create(CreateCommand),
    /// Change the project: the manager's scope (`edit --namespaced`), sharding (`edit
    /// --sharded`), its layout (`edit --multigroup`), or what its types declare
    /// (`edit api`: storage, served, deprecated versions).
    #[command(after_help = EDIT_EXAMPLE, args_conflicts_with_subcommands = true)]
    Edit(EditArgs),
    /// Regenerate manifests from the source: CRDs from the types, RBAC from the controllers' markers.
    #[command(subcommand, after_help = GENERATE_EXAMPLE)]
    Generate(GenerateCommand),
    /// Replace the project's vendored runtime (vendor/operator-rs-runtime) with this operator-rs's copy.
    #[command(
        after_help = "Example:\n  operator-rs upgrade-runtime          # then cargo build && cargo test\n  operator-rs upgrade-runtime --check  # in CI: exit 1 when the copy is out of date"
    )]
    UpgradeRuntime {
        /// Only say whether the copy differs (exit 1 when it does); write nothing.
        #[arg(long)]
        check: bool,
    },
    /// Move every object of a kind on the cluster to its CRD's storage version, then narrow the
    /// CRD's status.storedVersions to it, so an old version can be removed. Safe to run again;
    /// run it again to complete an interrupted one.
    #[command(
        after_help = "Example:\n  operator-rs edit api --group cache --version v2 --kind Memcached --storage\n  make install   # apply the CRD: new writes go to v2\n  operator-rs migrate-storage --group cache.example.com --kind Memcached\n  # then remove v1 from the kind and run operator-rs generate crds"
    )]
    MigrateStorage(MigrateStorageArgs),
    /// Move the project to the scaffold of this operator-rs: a three-way merge of your files with
    /// the scaffold of the operator-rs that made the project and that of this one (your changes
    /// stay; overlapping ones get conflict markers), and the vendored runtime replaced.
    #[command(
        after_help = "Examples:\n  operator-rs update --dry-run   # list what would change\n  operator-rs update             # in a clean git tree; then cargo build && cargo test\n  operator-rs update --from-binary bin/operator-rs-0.1.0"
    )]
    Update(UpdateArgs),
    /// Install etcd, kube-apiserver and kubectl of a Kubernetes version for the integration
    /// tests (envtest), as kubebuilder's `setup-envtest use` does, without Go; print their folder,
    /// for KUBEBUILDER_ASSETS.
    #[command(after_help = ENVTEST_HELP)]
    Envtest(EnvtestArgs),
    /// Make an operator-rs project of a kubebuilder (go/v4) project: its PROJECT, API types with
    /// their markers, controllers (stubs with their RBAC markers), webhooks, samples; what is not
    /// translated is listed in IMPORT.md with its Go file:line.
    #[command(
        after_help = "Example:\n  mkdir memcached-operator-rs && cd memcached-operator-rs\n  operator-rs import ../memcached-operator\n  operator-rs generate manifests --check && cargo build"
    )]
    Import(ImportArgs),
    /// Print the version of operator-rs and of what it scaffolds.
    #[command(after_help = "Example:\n  operator-rs version")]
    Version,
    /// Print a shell completion script.
    #[command(
        after_help = "Example:\n  operator-rs completion bash > ~/.local/share/bash-completion/completions/operator-rs\n  operator-rs completion zsh > \"${fpath[1]}/_operator-rs\""
    )]
    Completion {
        /// The shell to write the script for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

const ENVTEST_HELP: &str = "Examples:
  operator-rs envtest 1.36.x               # then: export KUBEBUILDER_ASSETS=$(operator-rs envtest 1.36.x)
  operator-rs envtest -i                   # offline: the newest installed version, never the network
  operator-rs envtest --index ./envtest-releases.yaml 1.36.2
  operator-rs envtest --use-env -p env     # KUBEBUILDER_ASSETS when it is set already

The releases come from controller-tools' index (envtest-releases.yaml, what setup-envtest reads);
each archive is checked against the index's SHA-512 and installed whole or not at all into
<bin-dir>/k8s/<version>-<os>-<arch>. A version already installed is used without the network
(end the version with `!` to read the index for a newer patch release).";

const CREATE_EXAMPLE: &str =
    "Example:\n  operator-rs create api --group cache --version v1alpha1 --kind Memcached";
const EDIT_EXAMPLE: &str = "Examples:\n  operator-rs edit --namespaced          # Roles, and watches of the manager's own namespace\n  operator-rs edit --namespaced=false    # back to a cluster-scoped manager\n  operator-rs edit --sharded             # every replica reconciles its own shard of the objects\n  operator-rs edit --sharded=false       # back to one active replica\n  operator-rs edit --multigroup          # src/api/<group>/<version>/: one kind name in two groups\n  operator-rs edit api --group batch --version v2 --kind CronJob --storage";
const GENERATE_EXAMPLE: &str = "Examples:\n  operator-rs generate manifests\n  operator-rs generate crds --check   # in CI: exit 1 with a diff when stale";

/// A working command line for the command that `args` (the process's arguments) names, to show
/// under an error of the argument parser: always the subcommand's own (`migrate-storage`'s under
/// its errors, `create webhook`'s, not `create api`'s), found past global options (`-C <DIR>`)
/// by walking clap's command tree, and taken from that subcommand's `Example:` lines (so every
/// subcommand, present or future, shows its own). Of those, the first that uses a flag the user
/// gave is preferred (`generate crds --check-compat x` shows the `--check-compat` example).
pub fn example_for(args: &[String]) -> String {
    use clap::CommandFactory;
    let has = |flag: &str| {
        (args.iter()).any(|a| a == flag || a.strip_prefix(flag).is_some_and(|r| r.starts_with('=')))
    };
    let root = Cli::command();
    let mut command = &root;
    let mut path = vec!["operator-rs".to_string()];
    let mut rest = args.iter().skip(1);
    while let Some(a) = rest.next() {
        if a == "-C" {
            rest.next();
        } else if !a.starts_with('-') {
            match command.find_subcommand(a) {
                Some(sub) => {
                    command = sub;
                    path.push(sub.get_name().to_string());
                }
                None => break,
            }
        }
    }
    let path = path.join(" ");
    // Flags whose example needs more than the command's own lines show.
    match path.as_str() {
        "operator-rs create api"
            if has("--image-container-port")
                || has("--run-as-user")
                || has("--image-container-command") =>
        {
            return "operator-rs create api --group cache --version v1alpha1 --kind Memcached --image memcached:1.6 --image-container-port 11211 --run-as-user 1001 --image-container-command memcached,--memory-limit=64".into();
        }
        "operator-rs generate manifests" if has("--max-desc-len") => {
            return "operator-rs generate manifests --max-desc-len 0".into();
        }
        "operator-rs generate" | "operator-rs generate crds" if has("--max-desc-len") => {
            return "operator-rs generate crds --max-desc-len 0".into();
        }
        _ => {}
    }
    let help = command
        .get_after_help()
        .map(|h| h.to_string())
        .unwrap_or_default();
    let examples: Vec<&str> = (help.lines())
        .map(|l| l.split("  #").next().unwrap_or(l).trim())
        .filter(|l| {
            l.strip_prefix(path.as_str())
                .is_some_and(|r| r.is_empty() || r.starts_with(' '))
        })
        .collect();
    let used = |line: &&&str| {
        (line.split_whitespace())
            .filter(|w| w.starts_with("--"))
            .any(|w| has(w.split('=').next().unwrap_or(w)))
    };
    (examples.iter().find(used).or(examples.first()))
        .map(|l| l.to_string())
        .unwrap_or_else(|| {
            "operator-rs init --domain example.com --repo github.com/acme/memcached-operator".into()
        })
}

/// The refusal of an argument that is not UTF-8 (`args` as the OS gave them), naming it and the
/// flag it is the value of; `None` when every argument is UTF-8.
pub fn not_utf8(args: &[std::ffi::OsString]) -> Option<String> {
    let at = (1..args.len()).find(|&i| args[i].to_str().is_none())?;
    let lossy = args[at].to_string_lossy();
    let (what, value) = match lossy.split_once('=') {
        Some((flag, value)) if flag.starts_with("--") => (format!("the value of {flag}"), value),
        _ => match args[at - 1].to_str() {
            Some(flag) if at > 1 && flag.starts_with('-') && !flag.contains('=') => {
                (format!("the value of {flag}"), &*lossy)
            }
            _ => (format!("argument {at}"), &*lossy),
        },
    };
    Some(format!(
        "{what}, {value:?}, is not valid UTF-8 (the bytes that are not are shown as U+FFFD): \
         names, versions, images and commands are text; only the folder of -C may be any path"
    ))
}

/// A whole number from `min` to `max` for a flag whose rule and `example` clap's own message
/// would not give (it says only "invalid digit found in string").
fn whole_number(
    value: &str,
    min: i128,
    max: i128,
    rule: &str,
    example: &str,
) -> Result<i128, String> {
    match value.trim().parse::<i128>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        Ok(_) | Err(_) => Err(format!(
            "must be a whole number from {min} to {max} ({rule})\n  e.g. {example}"
        )),
    }
}

/// `--image-container-port`: a TCP port.
fn port(value: &str) -> Result<u16, String> {
    let n = whole_number(
        value,
        1,
        65_535,
        "a TCP port",
        "--image-container-port 11211",
    )?;
    Ok(u16::try_from(n).expect("within u16"))
}

/// `--run-as-user`: a non-root Linux user id, as Kubernetes takes `runAsUser`.
fn user_id(value: &str) -> Result<i64, String> {
    let n = whole_number(
        value,
        1,
        2_147_483_647,
        "a Linux user id other than root's 0",
        "--run-as-user 1001",
    )?;
    Ok(i64::try_from(n).expect("within i64"))
}

/// `--max-desc-len`: a length in bytes.
fn byte_count(value: &str) -> Result<usize, String> {
    let max = i128::from(u32::MAX);
    let n = whole_number(
        value,
        0,
        max,
        "bytes of each description kept; 0 drops them",
        "--max-desc-len 0",
    )?;
    Ok(usize::try_from(n).expect("within usize"))
}

/// `update`'s flags.
#[derive(Debug, Clone, Args)]
pub struct UpdateArgs {
    /// The operator-rs that made the project (default: found or built from PROJECT's cliVersion
    /// and cliSource, as `make operator-rs` does); refused unless proven to make the project's
    /// recorded scaffold.
    #[arg(long, value_name = "PATH")]
    pub from_binary: Option<PathBuf>,
    /// List what would change; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not run `cargo check --all-targets` in the project after the update.
    #[arg(long)]
    pub no_check: bool,
}

/// `import`'s source folder and flags.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The kubebuilder project's folder (the one with its PROJECT file).
    pub source: std::path::PathBuf,
    /// Overwrite files that already exist in the target folder.
    #[arg(long)]
    pub force: bool,
}

/// `init`'s flags: what PROJECT records about the new project.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The domain of the project's API groups (groups become `<group>.<domain>`).
    #[arg(long, default_value = "my.domain")]
    pub domain: String,
    /// The repository the project lives in (recorded in PROJECT and Cargo.toml).
    #[arg(long, default_value = "")]
    pub repo: String,
    /// The project's name (a DNS-1123 label); defaults to the folder's name.
    #[arg(long)]
    pub project_name: Option<String>,
    /// The copyright owner written in the license header.
    #[arg(long, default_value = "")]
    pub owner: String,
    /// The license of the generated project.
    #[arg(long, value_enum, default_value_t = License::Apache2)]
    pub license: License,
    /// A namespace-scoped manager: Roles and RoleBindings instead of ClusterRoles, and
    /// controllers that watch the manager's own namespace (or those `--watch-namespace` names).
    /// `--namespaced=false` (the default) is cluster-scoped, as `edit --namespaced=false` makes it.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_value = "false", default_missing_value = "true", value_name = "BOOL")]
    pub namespaced: bool,
    /// The multigroup layout (kubebuilder's `--multigroup`): a kind's modules under its group,
    /// `src/api/<group>/<version>/<kind>.rs` and `src/controllers/<group>/<kind>.rs`, so two
    /// groups may each have a kind of one name. `edit --multigroup` moves a project there later.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_value = "false", default_missing_value = "true", value_name = "BOOL")]
    pub multigroup: bool,
    /// A sharded manager: every replica runs the controllers, each on its own part of the
    /// objects (a Lease per replica, a consistent-hash ring of object uids, the API server's
    /// `shardSelector` where it serves it); 3 replicas and a PodDisruptionBudget. The leader
    /// Lease still elects one replica for singleton work. `--sharded=false` (the default): one
    /// active replica, as `edit --sharded=false` makes it.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_value = "false", default_missing_value = "true", value_name = "BOOL")]
    pub sharded: bool,
    /// Overwrite files that already exist.
    #[arg(long)]
    pub force: bool,
}

impl InitArgs {
    /// The command as PROJECT records it (see [`crate::project::history`]), with the project's
    /// name and normalized repo as they were taken.
    pub fn words(&self, domain: &str, repo: &str, project_name: &str) -> Vec<String> {
        let mut w = words(&["init", "--domain", domain]);
        if !repo.is_empty() {
            w.extend(words(&["--repo", repo]));
        }
        w.extend(words(&["--project-name", project_name]));
        if !self.owner.is_empty() {
            w.extend(words(&["--owner", &self.owner]));
        }
        if self.license == License::None {
            w.extend(words(&["--license", "none"]));
        }
        if self.namespaced {
            w.push("--namespaced".into());
        }
        if self.multigroup {
            w.push("--multigroup".into());
        }
        if self.sharded {
            w.push("--sharded".into());
        }
        w
    }
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

/// The license `init --license` writes into the project.
// The values' docs are for readers of this code: `#[value(help = None)]` keeps them out of
// `--help`, where the flag's own help says what each value does (as for every value enum here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum License {
    /// The Apache License 2.0: a `LICENSE` file and a header on each source file.
    #[value(help = None)]
    Apache2,
    /// No license file and no headers.
    #[value(help = None)]
    None,
}

/// `create`'s subcommands.
#[derive(Debug, Subcommand)]
pub enum CreateCommand {
    /// Add a kind: its Spec/Status types, its controller, RBAC, a sample, and the wiring.
    #[command(
        after_help = "Examples:\n  operator-rs create api --group cache --version v1alpha1 --kind Memcached\n  operator-rs create api --group cache --version v1alpha1 --kind Memcached --image memcached:1.6 --image-container-port 11211\n  operator-rs create api --group webapp --version v1 --kind Admiral --namespaced=false\n  operator-rs create api --group webapp --version v2 --kind Guestbook --controller=false\n  operator-rs create api --group apps --version v1 --kind Deployment --resource=false --controller\n  operator-rs create api --group cert-manager.io --version v1 --kind Certificate --from-crd certificates.yaml\n  operator-rs create api --group cert-manager --version v1 --kind Certificate --external-api-domain io --external-api-path kcr_cert_manager_io::v1::certificates::Certificate --external-api-crate kcr_cert_manager_io@3"
    )]
    Api(CreateApiArgs),
    /// Add webhooks to a kind: a defaulter, a validator, conversion to and from other versions.
    #[command(
        after_help = "Examples:\n  operator-rs create webhook --group batch --version v1 --kind CronJob --defaulting --programmatic-validation\n  operator-rs create webhook --group batch --version v2 --kind CronJob --conversion --spoke v1",
        mut_arg("version", |a| a.help("The API version, e.g. `v1alpha1`; with --conversion, the hub: the storage version the types declare")),
        mut_arg("kind", |a| a.help("The kind, e.g. `Memcached`; it must be in PROJECT (`operator-rs create api` first)"))
    )]
    Webhook(CreateWebhookArgs),
}

/// The kind a command acts on: `--group`, `--version`, `--kind`, as kubebuilder takes them. The
/// help texts are the same for every command; where a command reads one differently, it says
/// so with `mut_arg` (see `create webhook`'s `--version`, `edit api`'s `--group`).
#[derive(Debug, Clone, Args)]
pub struct KindArgs {
    /// The API group without the domain, e.g. `cache` (for `cache.<domain>`); a built-in kind's
    /// group, e.g. `apps`, or `core` for core/v1.
    #[arg(long, default_value = "")]
    pub group: String,
    /// The API version, e.g. `v1alpha1`.
    #[arg(long)]
    pub version: String,
    /// The kind, in UpperCamelCase, e.g. `Memcached`.
    #[arg(long)]
    pub kind: String,
}

impl KindArgs {
    /// `command` with `--group`, `--version` and `--kind`, as PROJECT records it.
    fn words(&self, command: &[&str]) -> Vec<String> {
        let mut w = words(command);
        w.extend(words(&[
            "--group",
            self.group.trim(),
            "--version",
            self.version.trim(),
            "--kind",
            self.kind.trim(),
        ]));
        w
    }

    /// `(group, version, kind)`, trimmed. A value that starts with `-` can only have been given
    /// with `=` (`--group=-cache`; clap takes `--group -cache` as another flag): it is the value
    /// the user wrote, refused as an invalid value with the flag's rule and `example(flag)`.
    pub fn values(&self, example: impl Fn(&str) -> String) -> anyhow::Result<(&str, &str, &str)> {
        let (group, version, kind) = (self.group.trim(), self.version.trim(), self.kind.trim());
        for (flag, value) in [("group", group), ("version", version), ("kind", kind)] {
            if value.starts_with('-') {
                let rule = match flag {
                    "group" => "a group starts and ends with a lowercase letter or digit",
                    "version" => "a version starts with a lowercase letter (v1, v1alpha1, v2beta3)",
                    _ => "a kind starts with an uppercase letter (UpperCamelCase)",
                };
                anyhow::bail!(
                    "invalid --{flag} {value:?} (given as --{flag}={value}): it starts with '-'; {rule}\n  e.g. {}",
                    example(flag)
                );
            }
        }
        Ok((group, version, kind))
    }
}

/// `create webhook`'s kind and the webhooks to add for it.
#[derive(Debug, Clone, Args)]
pub struct CreateWebhookArgs {
    /// The kind the webhooks are for.
    #[command(flatten)]
    pub gvk: KindArgs,
    /// A defaulting (mutating) webhook.
    #[arg(long)]
    pub defaulting: bool,
    /// A validating webhook.
    #[arg(long)]
    pub programmatic_validation: bool,
    /// A conversion webhook: --version is the hub, --spoke the versions converting to it.
    #[arg(long)]
    pub conversion: bool,
    /// With --conversion: the other versions of the kind, e.g. `v1` or `v1,v1beta1`.
    #[arg(long, value_delimiter = ',', value_name = "VERSION")]
    pub spoke: Vec<String>,
    /// Re-scaffold the webhook files (your changes to them are lost).
    #[arg(long)]
    pub force: bool,
}

impl CreateWebhookArgs {
    /// The command as PROJECT records it (`--force` too: a replay re-scaffolds as it did).
    pub fn words(&self) -> Vec<String> {
        let mut w = self.gvk.words(&["create", "webhook"]);
        for (on, flag) in [
            (self.defaulting, "--defaulting"),
            (self.programmatic_validation, "--programmatic-validation"),
            (self.conversion, "--conversion"),
        ] {
            if on {
                w.push(flag.to_string());
            }
        }
        if !self.spoke.is_empty() {
            w.extend(words(&["--spoke", &self.spoke.join(",")]));
        }
        if self.force {
            w.push("--force".to_string());
        }
        w
    }
}

/// `create api`'s kind and what to scaffold for it.
#[derive(Debug, Clone, Args)]
pub struct CreateApiArgs {
    /// The kind to add.
    #[command(flatten)]
    pub gvk: KindArgs,
    /// The resource's plural name (default: as kube-derive computes it from the kind).
    #[arg(long)]
    pub plural: Option<String>,
    /// Whether the kind is namespaced (false: cluster-scoped) [default: true]. For a kind of
    /// --external-api-path, its scope in the cluster (PROJECT records it: RBAC and webhooks
    /// follow it); with --from-crd, the CRD says it.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub namespaced: Option<bool>,
    /// Whether to create the kind's types and CRD.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_value = "true", default_missing_value = "true", value_name = "BOOL")]
    pub resource: bool,
    /// Whether to create a controller for the kind.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_value = "true", default_missing_value = "true", value_name = "BOOL")]
    pub controller: bool,
    /// Deploy-image flavour: the controller runs this image in a Deployment it owns.
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// Deploy-image flavour: the container port (adds probes and a port to the spec).
    #[arg(long, value_name = "PORT", requires = "image", value_parser = port)]
    pub image_container_port: Option<u16>,
    /// Deploy-image flavour: the container command, comma-separated (e.g. "memcached,--memory-limit=64").
    #[arg(long, value_name = "CMD", requires = "image")]
    pub image_container_command: Option<String>,
    /// Deploy-image flavour: the non-root user id the container runs as (1 to 2147483647).
    #[arg(long, value_name = "UID", requires = "image", value_parser = user_id)]
    pub run_as_user: Option<i64>,
    /// A kind this project does not own, whose Rust type is in a crate: its path, e.g.
    /// `kcr_cert_manager_io::v1::certificates::Certificate` (no types, CRD or
    /// sample are made; the CRD belongs to its owner).
    #[arg(long, value_name = "RUST_PATH", conflicts_with_all = ["resource", "image"])]
    pub external_api_path: Option<String>,
    /// With --external-api-path: the crate that holds the type, added to Cargo.toml's
    /// `[dependencies]`, as `name@version` (e.g. `kcr_cert_manager_io@3`).
    #[arg(long, value_name = "NAME@VERSION", requires = "external_api_path")]
    pub external_api_crate: Option<String>,
    /// With --external-api-path: the domain the group is qualified with, e.g. `io` for
    /// `--group cert-manager` (giving cert-manager.io); none: --group is the whole group.
    #[arg(long, value_name = "DOMAIN", requires = "external_api_path")]
    pub external_api_domain: Option<String>,
    /// Overwrite the kind's files if they exist.
    #[arg(long)]
    pub force: bool,
    /// A kind this project does not own: Rust types for it from its CRD file (the CRD of --group,
    /// the CRD's full group, and --kind in a file of one or more YAML documents), no CRD, no
    /// sample. Run again when the CRD changes to refresh the types.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["image", "plural"])]
    pub from_crd: Option<PathBuf>,
}

/// `edit`: the project's own settings, or a subcommand (`edit api`).
#[derive(Debug, Args)]
pub struct EditArgs {
    /// `edit api`, or none for the project's own settings.
    #[command(subcommand)]
    pub command: Option<EditCommand>,
    /// Make the manager namespace-scoped (`--namespaced`, `--namespaced=true`: Roles and
    /// RoleBindings, watches of its own namespace) or cluster-scoped (`--namespaced=false`).
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub namespaced: Option<bool>,
    /// Move the project to the multigroup layout (`--multigroup`, `--multigroup=true`:
    /// `src/api/<group>/<version>/`, `src/controllers/<group>/`) or back to the single-group
    /// one (`--multigroup=false`): the kinds' files move with your edits, and the module
    /// declarations and paths the scaffold wrote follow them.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", conflicts_with_all = ["namespaced", "sharded"])]
    pub multigroup: Option<bool>,
    /// Make the manager sharded (`--sharded`, `--sharded=true`: every replica reconciles its
    /// own part of the objects; 3 replicas and a PodDisruptionBudget) or one active replica
    /// (`--sharded=false`).
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub sharded: Option<bool>,
    /// Rewrite the scaffolded files the switch changes even where you edited them (your
    /// changes to them are lost; Rust files are never overwritten).
    #[arg(long)]
    pub force: bool,
}

/// `edit`'s subcommands.
#[derive(Debug, Subcommand)]
pub enum EditCommand {
    /// Change one version of a kind where the types declare it, its `#[kube(...)]` attribute:
    /// make it the storage version, serve it or not, deprecate it; then update PROJECT and
    /// regenerate the CRDs. The rest of the source stays as you wrote it.
    #[command(
        after_help = "Examples:\n  operator-rs edit api --group batch --version v2 --kind CronJob --storage\n  operator-rs edit api --group batch --version v1 --kind CronJob --deprecated=\"batch/v1 CronJob is deprecated; use batch/v2\"\n  operator-rs edit api --group batch --version v1 --kind CronJob --served=false\n  operator-rs edit api --group batch --version v1 --kind CronJob --served=true --no-deprecated",
        mut_arg("group", |a| a.help("The API group, as `create api` took it (`cache`) or in full (`cache.example.com`)")),
        mut_arg("version", |a| a.help("The version to change, e.g. `v2`"))
    )]
    Api(EditApiArgs),
}

/// `edit api`'s version of a kind and the changes to make to it.
#[derive(Debug, Clone, Args)]
pub struct EditApiArgs {
    /// The version of the kind to change.
    #[command(flatten)]
    pub gvk: KindArgs,
    /// Make this version the storage version: drop its `storage = false` and write
    /// `storage = false` into the version stored until now.
    #[arg(long)]
    pub storage: bool,
    /// Whether the API server serves this version (`served = false` in `#[kube(...)]`).
    #[arg(long, action = ArgAction::Set, value_name = "BOOL")]
    pub served: Option<bool>,
    /// Mark this version deprecated; with a value, the warning clients get instead of the default.
    #[arg(long, num_args = 0..=1, default_missing_value = "", value_name = "WARNING", conflicts_with = "no_deprecated")]
    pub deprecated: Option<String>,
    /// Mark this version no longer deprecated.
    #[arg(long)]
    pub no_deprecated: bool,
    /// Do it although a controller of the project watches the version, it is the conversion
    /// hub, or the cluster still stores objects in it; the steps that follow are printed.
    #[arg(long)]
    pub force: bool,
}

/// `migrate-storage`'s kind, cluster and method.
#[derive(Debug, Clone, Args)]
pub struct MigrateStorageArgs {
    /// The kind's API group in full (`cache.example.com`), or as `create api` took it (`cache`)
    /// inside a project.
    #[arg(long)]
    pub group: String,
    /// The kind, e.g. `Memcached`.
    #[arg(long)]
    pub kind: String,
    /// The kubeconfig to use [default: KUBECONFIG, else ~/.kube/config, else in-cluster].
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use [default: its current context].
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Objects per list request.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..), value_name = "N")]
    pub page_size: u32,
    /// `rewrite`: this command reads and writes back every object (works on every cluster).
    /// `storage-version-migration`: a StorageVersionMigration done by kube-controller-manager
    /// (served from Kubernetes 1.37; in 1.35/1.36 behind the StorageVersionMigrator feature gate).
    #[arg(long, value_enum, default_value = "rewrite")]
    pub method: MigrateMethod,
}

/// `envtest`'s version, index and where to install.
#[derive(Debug, Clone, Args)]
pub struct EnvtestArgs {
    /// The Kubernetes version: `1.36.x` (its newest patch release), `1.36.2`, `<1.37`, `latest`,
    /// optionally followed by `!` [default: in a project, its Kubernetes version (the
    /// k8s-openapi feature of Cargo.toml, `v1_37`: 1.37.x); elsewhere latest]
    #[arg(value_name = "VERSION")]
    pub version: Option<String>,
    /// The releases index: a URL (http, https, file) or a path
    /// [default: controller-tools' envtest-releases.yaml on GitHub]
    #[arg(long, value_name = "URL|FILE", env = "OPERATOR_RS_ENVTEST_INDEX")]
    pub index: Option<String>,
    /// Where versions are installed (in `k8s/<version>-<os>-<arch>`)
    /// [default: $XDG_CACHE_HOME/operator-rs/envtest, else ~/.cache/operator-rs/envtest]
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,
    /// Use only versions already installed: never the network.
    #[arg(short = 'i', long)]
    pub installed_only: bool,
    /// When KUBEBUILDER_ASSETS is set (and holds etcd and kube-apiserver), print it and install
    /// nothing, as setup-envtest's --use-env.
    #[arg(long)]
    pub use_env: bool,
    /// What to print: `path` (the folder) or `env` (`export KUBEBUILDER_ASSETS=<folder>`).
    #[arg(short = 'p', long = "print", value_enum, default_value = "path")]
    pub print: EnvtestPrint,
}

/// What `envtest` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EnvtestPrint {
    /// The folder of the binaries.
    #[value(help = None)]
    Path,
    /// `export KUBEBUILDER_ASSETS=<folder>`, for a shell to evaluate.
    #[value(help = None)]
    Env,
}

/// How `migrate-storage` rewrites the objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MigrateMethod {
    /// This command reads and writes back every object.
    #[value(help = None)]
    Rewrite,
    /// A StorageVersionMigration object, carried out by kube-controller-manager.
    #[value(help = None)]
    StorageVersionMigration,
}

impl EditApiArgs {
    /// The command as PROJECT records it.
    pub fn words(&self) -> Vec<String> {
        let mut w = self.gvk.words(&["edit", "api"]);
        if self.storage {
            w.push("--storage".to_string());
        }
        if let Some(served) = self.served {
            w.push(format!("--served={served}"));
        }
        match &self.deprecated {
            Some(warning) if warning.is_empty() => w.push("--deprecated".to_string()),
            Some(warning) => w.push(format!("--deprecated={warning}")),
            None => {}
        }
        if self.no_deprecated {
            w.push("--no-deprecated".to_string());
        }
        if self.force {
            w.push("--force".to_string());
        }
        w
    }
}

/// `generate`'s subcommands: one per kind of generated file.
#[derive(Debug, Subcommand)]
pub enum GenerateCommand {
    /// CRD YAML in config/crd/bases from the Spec/Status structs, without compiling.
    #[command(
        after_help = "Examples:\n  operator-rs generate crds\n  operator-rs generate crds --check   # in CI: exit 1 with a diff when stale\n  operator-rs generate crds --exact   # through the compiler, for constructs the static reader cannot evaluate\n  operator-rs generate crds --check-compat v0.1.0   # exit 1 on a breaking change\n\n--check-compat <REF> writes nothing: it derives the CRDs of the project as it was at the git\nrevision REF (read from git; the working tree is left alone) and of the project as it is, and\nreports every change that breaks stored objects or clients at the Rust type or field behind it\n(exit 1): a removed kind, version or field, a new required field without a default, a changed\ntype or format, an enum value removed, a changed scope, group, kind or plural, a changed list\ntype or map keys, preserve-unknown-fields removed. Validation that tightens (bounds, patterns,\nnew CEL rules, an enum value added, a changed default) is a warning: exit 0 unless\n--compat-warnings-as-errors. Rule ids and grading follow crdify (kubernetes-sigs/crdify)."
    )]
    Crds(GenerateCrdsCommand),
    /// config/rbac/role.yaml from the `+kubebuilder:rbac` markers of the controllers.
    #[command(after_help = "Example:\n  operator-rs generate rbac --check")]
    Rbac(CheckArgs),
    /// config/webhook/manifests.yaml from the `+kubebuilder:webhook` markers.
    #[command(after_help = "Example:\n  operator-rs generate webhooks --check")]
    Webhooks(CheckArgs),
    /// CRDs, RBAC and webhook configurations together.
    #[command(after_help = "Example:\n  operator-rs generate manifests")]
    Manifests(GenerateCrdsArgs),
    /// dist/chart: a Helm chart of what config/ deploys, with values and their schema.
    #[command(
        after_help = "Examples:\n  operator-rs generate manifests && operator-rs generate chart\n  operator-rs generate chart --check   # in CI: exit 1 with a diff when stale\n\nBuilt from config/ (run `generate manifests` first). Kept on regeneration: Chart.yaml's version\nand appVersion, your values in values.yaml, NOTES.txt, templates of your own. A generated\ntemplate you edited is listed and kept unless --force.\n\nWith --crds-chart, dist/chart-crds/ too: the CRDs alone, in a chart of their own, e.g.\n  helm install my-op-crds dist/chart-crds -n my-op-system --create-namespace\n  helm install my-op dist/chart -n my-op-system --set crd.enabled=false"
    )]
    Chart(GenerateChartArgs),
    /// grafana/: dashboards of the manager's metrics (runtime, resources, custom metrics).
    #[command(
        after_help = "Examples:\n  operator-rs generate dashboards\n  operator-rs generate dashboards --check\n\nCustom metrics: list them in grafana/custom-metrics/config.yaml (written once), e.g.\n  customMetrics:\n  - metric: memcached_deployments_created_total\n    type: counter   # counter | gauge | histogram"
    )]
    Dashboards(CheckArgs),
}

/// `generate chart`'s flags.
#[derive(Debug, Clone, Args)]
pub struct GenerateChartArgs {
    /// Write nothing; exit 1 and print a unified diff when a file is stale or missing.
    #[arg(long)]
    pub check: bool,
    /// Overwrite generated templates edited since they were generated.
    #[arg(long)]
    pub force: bool,
    /// Also write dist/chart-crds/, a chart of the CRDs alone, to install before dist/chart with
    /// `crd.enabled=false` (regenerated from then on).
    #[arg(long)]
    pub crds_chart: bool,
}

/// The flags of a generator that only writes or checks (`generate rbac`, `webhooks`,
/// `dashboards`).
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Write nothing; exit 1 and print a unified diff when a file is stale or missing.
    #[arg(long)]
    pub check: bool,
}

/// `generate crds`: the options it shares with `generate manifests`, and `--check-compat`.
#[derive(Debug, Clone, Args)]
pub struct GenerateCrdsCommand {
    /// The flags `generate manifests` takes too.
    #[command(flatten)]
    pub crds: GenerateCrdsArgs,
    /// Write nothing; compare the CRDs with those the project produced at this git revision
    /// (branch, tag or commit, e.g. `origin/main`) and exit 1 on a change that breaks stored
    /// objects or clients (with `--check`, the files are checked too).
    #[arg(long, value_name = "GIT_REF", conflicts_with = "exact")]
    pub check_compat: Option<String>,
    /// With `--check-compat`: fail on warnings too (validation tightened: bounds, patterns,
    /// CEL rules, enum values added, defaults changed).
    #[arg(long, requires = "check_compat")]
    pub compat_warnings_as_errors: bool,
}

/// The flags of `generate crds` that `generate manifests` takes too.
#[derive(Debug, Clone, Args)]
pub struct GenerateCrdsArgs {
    /// Write nothing; exit 1 and print a unified diff when a file is stale or missing.
    #[arg(long)]
    pub check: bool,
    /// Build a small harness crate and take the CRDs from kube-derive itself (slower; for
    /// constructs the static reader cannot evaluate).
    #[arg(long)]
    pub exact: bool,
    /// Cut field descriptions to this many bytes (0 drops them), like controller-gen's
    /// `crd:maxDescLen`, for CRDs too large to install; overrides `crd: {maxDescLen}` in PROJECT.
    #[arg(long, value_name = "BYTES", value_parser = byte_count)]
    pub max_desc_len: Option<usize>,
    /// Write the CRDs even where kube-apiserver would refuse them (non-structural schemas, CEL
    /// rules that do not compile...), as kube-derive's `crd()` does.
    #[arg(long)]
    pub skip_apiserver_checks: bool,
}
