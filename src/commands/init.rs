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
    let repo = normalize_repo(&args.repo)?;
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
        repo,
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
    super::generate::regenerate_into(&mut overlay, &project, super::generate::Crds::Skip)?;
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
        eprintln!("note: --repo {given:?} is recorded as the repository path {path:?}");
    }
    Ok(path.to_string())
}
