//! `operator-rs init`: lay out a new operator project (manager, config/, Makefile, Dockerfile,
//! CI, PROJECT) in a folder.

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::cli::{InitArgs, License};
use crate::names;
use crate::project::{self, Project};
use crate::scaffold::context::InitContext;
use crate::workspace::{DiskTree, Overlay, write_all};

pub fn run(root: &Path, args: &InitArgs) -> Result<()> {
    let domain = args.domain.trim();
    names::validate_domain(domain)?;
    validate_repo(&args.repo)?;
    let project_name = match &args.project_name {
        Some(n) => {
            names::validate_project_name(n)?;
            n.clone()
        }
        None => {
            let folder = super::folder_name(root)?;
            let derived = names::default_project_name(&folder);
            if let Err(e) = names::validate_project_name(&derived) {
                bail!(
                    "{e}\n  (derived from the folder name {folder:?}; pass --project-name to choose one)"
                );
            }
            derived
        }
    };
    std::fs::create_dir_all(root)
        .with_context(|| format!("creating the project folder {}", root.display()))?;
    let _lock = crate::workspace::lock::lock(root)?;
    if root.join(project::FILE).exists() && !args.force {
        bail!(
            "{} is already an operator-rs project (it has a PROJECT file). Nothing was written.\n  \
             Add kinds with `operator-rs create api`, or pass --force to re-scaffold the project files (your changes to them are lost).",
            root.display()
        );
    }

    let project = Project {
        version: "3".into(),
        domain: domain.to_string(),
        repo: args.repo.trim().to_string(),
        crate_name: names::crate_name(&project_name),
        project_name,
        layout: vec![project::LAYOUT.into()],
        cli_version: env!("CARGO_PKG_VERSION").into(),
        k8s_openapi_feature: super::K8S_OPENAPI_FEATURE.into(),
        resources: Vec::new(),
        crd: Default::default(),
    };
    let license = match args.license {
        License::Apache2 => "apache2",
        License::None => "none",
    };
    let ctx = InitContext::new(
        &project,
        &args.owner,
        license,
        crate::install_source::git_install_args().unwrap_or_default(),
    );

    let disk = DiskTree::new(root);
    let mut overlay = Overlay::new(&disk);
    let report = crate::scaffold::plan(&ctx, args.force, &mut overlay)?;
    for (path, text) in crate::vendor::files() {
        overlay.put(path, text.to_string());
    }
    overlay.put(project::FILE, project.render()?);
    super::generate::regenerate_into(&mut overlay, &project, false)?;
    let (pending, removals) = overlay.into_changes();
    // The folder is not a project yet: every file in it is the user's.
    super::refuse_replacing_user_files(root, &pending, &removals, &report.conflicts, args.force)?;
    super::check_generated_rust(&pending, None)?;
    let changes = write_all(root, &pending, &removals)?;

    super::print_changes(&report, &changes);
    eprintln!(
        "\nProject {} is ready. Next: add a kind with\n  operator-rs create api --group <group> --version v1alpha1 --kind <Kind>",
        project.project_name
    );
    Ok(())
}

/// `--repo` ends up in Cargo.toml and README links: a path like `github.com/acme/memcached-operator`.
fn validate_repo(repo: &str) -> Result<()> {
    let repo = repo.trim();
    let ok = repo
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '-' | '_' | '~' | ':'));
    if !ok || repo.starts_with('/') || repo.ends_with('/') {
        bail!(
            "invalid repo {repo:?}: must be a repository path of ASCII letters, digits, '.', '-', '_' and '/' (no scheme, spaces or quotes)\n  e.g. --repo github.com/acme/memcached-operator"
        );
    }
    Ok(())
}
