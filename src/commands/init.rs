//! `operator-rs init`: lay out a new operator project (manager, config/, Makefile, Dockerfile,
//! CI, PROJECT) in a folder.

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::cli::{InitArgs, License};
use crate::names;
use crate::ops::{self, Existing, Plan};
use crate::project::{self, Project};
use crate::scaffold::context::InitContext;
use crate::workspace::{DiskTree, Overlay};

/// `operator-rs init`: lays out a new project in `root`.
pub fn run(root: &Path, args: &InitArgs) -> Result<()> {
    let domain = args.domain.trim();
    names::validate_domain(domain)?;
    names::validate_owner(&args.owner)?;
    let repo = normalize_repo(&args.repo)?;
    let project_name = match &args.project_name {
        Some(n) => {
            names::validate_project_name(n)?;
            n.clone()
        }
        None => {
            let folder = folder_name(root)?;
            let derived = names::default_project_name(&folder);
            if let Err(e) = names::validate_project_name(&derived) {
                bail!(
                    "{e}\n  (derived from the folder name {folder:?}; pass --project-name to choose one)"
                );
            }
            derived
        }
    };
    // A folder made here goes again when the command fails: nothing is left behind.
    let made = missing_folders(root);
    let result = std::fs::create_dir_all(root)
        .with_context(|| format!("creating the project folder {}", root.display()))
        .and_then(|()| scaffold(root, args, domain, repo, project_name));
    if result.is_err() {
        for dir in made.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }
    result
}

/// The folder name of `root` (resolving `.`), for the default project name; `root` may not
/// exist yet.
fn folder_name(root: &Path) -> Result<String> {
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

/// `root` and those of its parents that do not exist yet, outermost first.
fn missing_folders(root: &Path) -> Vec<std::path::PathBuf> {
    let mut made: Vec<_> = (root.ancestors())
        .filter(|a| !a.as_os_str().is_empty() && !a.exists())
        .map(Path::to_path_buf)
        .collect();
    made.reverse();
    made
}

fn scaffold(
    root: &Path,
    args: &InitArgs,
    domain: &str,
    repo: String,
    project_name: String,
) -> Result<()> {
    let _lock = crate::workspace::lock::lock(root)?;
    let existing = existing_project(root, args.force)?;
    let source = crate::install_source::git_install_args().unwrap_or_default();
    let mut project = Project {
        version: crate::project::FORMAT_VERSION.into(),
        domain: domain.to_string(),
        repo,
        crate_name: names::crate_name(&project_name),
        project_name,
        layout: vec![project::LAYOUT.into()],
        cli_version: env!("CARGO_PKG_VERSION").into(),
        cli_source: source.clone(),
        scaffold: None,
        commands: Vec::new(),
        k8s_openapi_feature: crate::project::K8S_OPENAPI_FEATURE.into(),
        namespaced: args.namespaced,
        multigroup: args.multigroup,
        sharded: args.sharded,
        resources: Vec::new(),
        // The options a user set stay (they are settings, not scaffolding).
        crd: existing.map(|p| p.crd).unwrap_or_default(),
    };
    let words = args.words(&project.domain, &project.repo, &project.project_name);
    project::history::record(&mut project, &words);
    let license = match args.license {
        License::Apache2 => "apache2",
        License::None => "none",
    };
    let ctx = InitContext::new(&project, &args.owner, license, source);

    let disk = DiskTree::new(root);
    let mut overlay = Overlay::new(&disk);
    let report = crate::scaffold::plan(&ctx, args.force, &mut overlay)?;
    for (path, text) in crate::vendor::files() {
        overlay.put(path, text.to_string());
    }
    let name = project.project_name.clone();
    ops::finish(
        root,
        Plan {
            report,
            // The folder is not a project yet: every file in it is the user's.
            existing: Existing::User,
            force: args.force,
            ..Plan::new(overlay, project)
        },
    )?;
    crate::errln!(
        "\nProject {name} is ready. Next: add a kind with\n  operator-rs create api --group <group> --version v1alpha1 --kind <Kind>"
    );
    Ok(())
}

/// The project `init --force` re-scaffolds, if the folder is one. Refused: `init` without
/// `--force` in a project, and `init --force` in a project with kinds, whose wiring
/// (`src/api/mod.rs`, the controllers' registration, the manifests' lists) it would reset while
/// their sources stay.
fn existing_project(root: &Path, force: bool) -> Result<Option<Project>> {
    if !root.join(project::FILE).exists() {
        return Ok(None);
    }
    if !force {
        bail!(
            "{} is already an operator-rs project (it has a PROJECT file). Nothing was written.\n  \
             Add kinds with `operator-rs create api`, or pass --force to re-scaffold the project files (your changes to them are lost).",
            root.display()
        );
    }
    // An unreadable PROJECT is what --force replaces.
    let Ok(existing) = Project::load(root) else {
        return Ok(None);
    };
    if !existing.resources.is_empty() {
        let mut kinds: Vec<String> = (existing.resources.iter())
            .map(|r| format!("{} {}", r.api_version(), r.kind))
            .collect();
        kinds.dedup();
        bail!(
            "refusing to re-scaffold {}: its PROJECT records {} kind version{} ({}). `init --force` would reset PROJECT's resources, src/api/mod.rs, src/controllers/mod.rs and the manifests' lists to an empty project while the kinds' sources stay, leaving a project that does not build. Nothing was written.\n  \
             To refresh the vendored runtime: operator-rs upgrade-runtime\n  \
             To regenerate the manifests: operator-rs generate manifests\n  \
             To start over: run `operator-rs init` in a new folder and `operator-rs create api` for each kind.",
            root.display(),
            kinds.len(),
            if kinds.len() == 1 { "" } else { "s" },
            kinds.join(", ")
        );
    }
    Ok(Some(existing))
}

/// `--repo` is a repository path like `github.com/acme/memcached-operator` (kubebuilder's Go module
/// path): PROJECT records it as it is and Cargo.toml and the README make `https://<repo>` of it.
/// A URL (`https://github.com/acme/x`, `http://...`, with `.git` or a trailing `/`) is taken as
/// the path it names; anything else that is not such a path is refused with an example. Empty:
/// no repository.
fn normalize_repo(repo: &str) -> Result<String> {
    let given = repo.trim();
    if given.is_empty() {
        return Ok(String::new());
    }
    let mut path = given;
    for scheme in ["https://", "http://"] {
        if path.len() >= scheme.len() && path[..scheme.len()].eq_ignore_ascii_case(scheme) {
            path = &path[scheme.len()..];
        }
    }
    let path = path.trim_end_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    let chars_ok = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '-' | '_' | '~'));
    let elements_ok = path
        .split('/')
        .all(|e| !e.is_empty() && !e.starts_with('.') && !e.ends_with('.'));
    if path.is_empty() || !chars_ok || !elements_ok {
        let example = path
            .rsplit(['/', ':', '@'])
            .next()
            .filter(|n| {
                !n.is_empty()
                    && n.chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            })
            .unwrap_or("memcached-operator");
        bail!(
            "invalid repo {given:?}: must be a repository path, <host>/<owner>/<name>, of ASCII letters, digits, '.', '-', '_' and '~' between single '/' (no scheme other than https://, no port, user, spaces or quotes; an element neither empty nor starting or ending with '.')\n  e.g. --repo github.com/acme/{example}"
        );
    }
    if path != given {
        crate::errln!("note: --repo {given:?} is recorded as the repository path {path:?}");
    }
    Ok(path.to_string())
}
