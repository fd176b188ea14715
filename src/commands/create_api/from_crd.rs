//! `create api --from-crd FILE`: a kind this project does not own (its CRD comes from elsewhere,
//! e.g. cert-manager's Certificate). Its Rust types are generated from the CRD ([`crate::fromcrd`])
//! into `src/api/external/<group>/<version>/<kind>.rs` — one module per group and version, as the
//! API names them, so two groups' kinds of one name and two versions of a kind never collide, and
//! apart from `src/api/<version>/`, the kinds the project owns. PROJECT records it `external`
//! with its source (file, sha256); no CRD, sample or editor/viewer role is written for it, and its
//! controller (`--controller`) is the one of a built-in kind: it reads, it writes no status.
//! A re-run regenerates the types (they are not to be edited), which is how a changed CRD is
//! taken in; an existing controller is kept unless `--force`.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::cli::CreateApiArgs;
use crate::fromcrd::{self, Selected};
use crate::names;
use crate::ops::{self, Crds, Plan};
use crate::project::{self, FromCrd, Project, Resource};
use crate::scaffold::context::{ApiContext, ApiParts};
use crate::scaffold::insertion_points;
use crate::workspace::{DiskTree, Overlay, SourceTree};

/// The folder of external kinds' types, under the project root.
const EXTERNAL_DIR: &str = "src/api/external";

pub fn run(root: &Path, args: &CreateApiArgs, file: &Path) -> Result<()> {
    let mut project = Project::load(root)?;
    let (group, version, kind) = args.gvk.values(|flag| {
        format!(
            "--{flag} {}",
            match flag {
                "group" => "cert-manager.io",
                "version" => "v1",
                _ => "Certificate",
            }
        )
    })?;
    names::validate_version(version)?;
    // The kind is the CRD's: one that clashes with a Rust name gets its type renamed instead.
    names::validate_kind_but_type_name(kind)?;
    if !args.resource {
        bail!(
            "--from-crd writes the kind's types: it cannot go with --resource=false\n  e.g. operator-rs create api --group {group} --version {version} --kind {kind} --from-crd {}",
            file.display()
        );
    }
    let (bytes, selected) = fromcrd::select_file(file, group, version, kind)?;
    let existing = project.find(group, version, kind).cloned();
    if let Some(owned) = existing.as_ref().filter(|r| !r.external) {
        bail!(
            "{} {kind} is already in PROJECT as a kind {} (path {}), not an external one: --from-crd cannot replace it. Nothing was written.",
            owned.api_version(),
            if owned.has_api() {
                "this project owns"
            } else {
                "built into Kubernetes"
            },
            owned.path
        );
    }
    let sha256 = fromcrd::sha256_hex(&bytes);
    let recorded = recorded_path(root, file);
    let types = selected.rust(&fromcrd::Source {
        file: &recorded,
        sha256: &sha256,
    });
    let types_path = types_path(&selected);

    // A controller is scaffolded once (a re-run refreshes the types only), or again with --force.
    let had_controller = existing.as_ref().is_some_and(|r| r.controller);
    let scaffold_controller = args.controller && (!had_controller || args.force);
    let resource = Resource {
        controller: args.controller || had_controller,
        external: true,
        from_crd: Some(FromCrd {
            file: recorded,
            sha256,
            crd_version: "v1".into(),
            namespaced: selected.namespaced,
        }),
        path: format!(
            "crate::api::external::{}::{}::{}::{}",
            selected.group_module(),
            fromcrd::module_name(version),
            names::kind_snake(kind),
            selected.root_type()
        ),
        webhooks: existing.as_ref().and_then(|r| r.webhooks.clone()),
        ..Resource::new(group, "", version, kind, selected.plural.clone())
    };
    super::check_scope_flag(
        args.namespaced,
        &resource,
        &format!("its CRD's spec.scope in {}", file.display()),
        format!(
            "operator-rs create api --group {group} --version {version} --kind {kind} --from-crd {}",
            file.display()
        ),
    )?;
    if scaffold_controller {
        super::check_controller_slot(&project, &DiskTree::new(root), &resource, args.force)?;
    }
    match project
        .resources
        .iter_mut()
        .find(|r| r.same_gvk(group, version, kind))
    {
        Some(r) => *r = resource.clone(),
        None => project.resources.push(resource.clone()),
    }
    project::history::record_create_api(&mut project, &resource);

    let disk = DiskTree::new(root);
    let mut overlay = Overlay::new(&disk);
    // The types file is ours (generated, marked): replaced on every run; a file of the user's
    // at that path only with --force.
    if let Some(current) = overlay.read(&types_path)?
        && !fromcrd::is_external_file(&current)
        && !args.force
    {
        bail!("{}", crate::scaffold::refusal(&[types_path]));
    }
    overlay.put(types_path.clone(), types);
    add_modules(&mut overlay, &selected)?;
    let parts = ApiParts {
        types: false,
        controller: scaffold_controller,
    };
    let mut ctx = ApiContext::new(&project, &resource, parts);
    ctx.e2e_spec = (selected.minimal_spec()).map_or_else(String::new, |spec| spec.to_string());
    let report = crate::scaffold::plan(&ctx, args.force, &mut overlay)?;
    let crds = if project.resources.iter().any(Resource::has_api) {
        Crds::Report
    } else {
        Crds::Skip
    };
    ops::finish(
        root,
        Plan {
            report,
            crds,
            kind: Some(kind.to_string()),
            ..Plan::new(overlay, project)
        },
    )?;
    crate::errln!(
        "\n{} {kind} (external: its CRD is not this project's) is ready as {}.\n  When its CRD changes, run this command again with the new file to refresh the types.",
        resource.api_version(),
        resource.path
    );
    Ok(())
}

/// What PROJECT records of the CRD file: its path relative to the project root when it is inside
/// the project, else the path as given.
fn recorded_path(root: &Path, file: &Path) -> String {
    let canonical = |p: &Path| std::fs::canonicalize(p).ok();
    if let (Some(root), Some(file_abs)) = (canonical(root), canonical(file))
        && let Ok(rel) = file_abs.strip_prefix(&root)
    {
        return rel.to_string_lossy().replace('\\', "/");
    }
    file.to_string_lossy().into_owned()
}

/// `src/api/external/<group>/<version>/<kind_snake>.rs`.
fn types_path(sel: &Selected) -> PathBuf {
    Path::new(EXTERNAL_DIR)
        .join(sel.group_module())
        .join(fromcrd::module_name(&sel.version))
        .join(format!("{}.rs", names::kind_snake(&sel.kind)))
}

/// `pub mod` lines from `src/api/mod.rs` down to the kind's module, each added where missing.
fn add_modules(overlay: &mut Overlay<'_>, sel: &Selected) -> Result<()> {
    let api_mod = PathBuf::from("src/api/mod.rs");
    let Some(current) = overlay.read(&api_mod)? else {
        bail!(
            "cannot add to {}: the file is missing. Nothing was written.\n  Restore it (e.g. from version control).",
            api_mod.display()
        );
    };
    let fragment = "// Types of kinds this operator does not own, generated from their CRDs.\npub mod external;\n";
    let insertion = insertion_points::Fragment {
        marker: "versions",
        text: fragment,
        owns: &[],
    };
    match insertion_points::insert(&current, &api_mod, &insertion) {
        insertion_points::Inserted::Added(new) => overlay.put(api_mod, new),
        insertion_points::Inserted::AlreadyPresent => {}
        insertion_points::Inserted::Ambiguous(refusal) => bail!("{refusal}"),
        insertion_points::Inserted::NoMarker => {
            if !current.lines().any(|l| l.trim() == "pub mod external;") {
                bail!(
                    "{} has no `// {}versions` line: operator-rs inserts code before it. Nothing was written.\n  Put that line back, or add `pub mod external;` to it and re-run.",
                    api_mod.display(),
                    insertion_points::PREFIX
                );
            }
        }
    }
    let group = sel.group_module();
    let version = fromcrd::module_name(&sel.version);
    let levels = [
        (
            format!("{EXTERNAL_DIR}/mod.rs"),
            "//! Types of kinds this operator does not own, one module per API group, generated from\n//! their CRDs by `operator-rs create api --from-crd`.\n".to_string(),
            group.clone(),
        ),
        (
            format!("{EXTERNAL_DIR}/{group}/mod.rs"),
            format!("//! The API group {}: one module per version.\n", sel.group),
            version.clone(),
        ),
        (
            format!("{EXTERNAL_DIR}/{group}/{version}/mod.rs"),
            format!(
                "//! {}/{}: one module per kind.\n",
                sel.group, sel.version
            ),
            names::kind_snake(&sel.kind),
        ),
    ];
    for (path, doc, child) in levels {
        let line = format!("pub mod {child};");
        let text = match overlay.read(Path::new(&path))? {
            None => format!("{doc}\n{line}\n"),
            Some(t) if t.lines().any(|l| l.trim() == line) => continue,
            Some(t) => with_module(&t, &child),
        };
        overlay.put(path, text);
    }
    Ok(())
}

/// `text` with `pub mod child;` among its `pub mod` lines, in the order rustfmt keeps them
/// (sorted), or at the end.
fn with_module(text: &str, child: &str) -> String {
    let mut lines: Vec<String> = text.trim_end().lines().map(String::from).collect();
    let is_mod = |l: &str| l.starts_with("pub mod ") && l.ends_with(';');
    let at = lines
        .iter()
        .position(|l| is_mod(l) && l["pub mod ".len()..l.len() - 1] > *child)
        .unwrap_or(lines.len());
    lines.insert(at, format!("pub mod {child};"));
    lines.join("\n") + "\n"
}
