//! `operator-rs create api`: add a kind — its Spec/Status types and CRD, its controller, RBAC, a
//! sample — and wire it in. Also a controller for a built-in kind (`--resource=false`), or a second
//! version of an existing kind, or a controller for an external kind (`--external-api-path`:
//! [`external`]). Everything is validated and computed before anything is written.

mod external;

use std::path::Path;

use anyhow::{Result, bail};

use crate::builtin;
use crate::cli::CreateApiArgs;
use crate::names;
use crate::ops::{self, Crds, Plan};
use crate::project::{self, Api, DeployImage, Project, Resource};
use crate::scaffold::context::{ApiContext, ApiParts};
use crate::workspace::{DiskTree, Overlay, SourceTree};

mod from_crd;

/// `operator-rs create api`: adds a kind (or a controller for a kind of another API) to the
/// project under `root`.
pub fn run(root: &Path, args: &CreateApiArgs) -> Result<()> {
    if let Some(file) = &args.from_crd {
        return from_crd::run(root, args, file);
    }
    let mut project = Project::load(root)?;
    let disk = DiskTree::new(root);
    let resource = match args.external_api_path {
        Some(_) => external::plan(&project, &disk, args)?,
        None => plan_resource(&project, &disk, args)?,
    };

    // Record the resource: merge into the same GVK (a re-run), else append. The templates see the
    // kind as PROJECT now records it, and render the parts this run asks for.
    let kind = match project
        .resources
        .iter_mut()
        .find(|r| r.same_gvk(&resource.group, &resource.version, &resource.kind))
    {
        Some(existing) => {
            merge_into(existing, &resource, args.controller);
            existing.clone()
        }
        None => {
            project.resources.push(resource.clone());
            resource.clone()
        }
    };
    project::history::record_create_api(&mut project, &kind);
    let parts = ApiParts {
        types: args.resource,
        controller: args.controller,
    };
    let ctx = ApiContext::new(&project, &kind, parts);
    let mut overlay = Overlay::new(&disk);
    if let Some(cargo) = overlay.read(Path::new("Cargo.toml"))?
        && let Some(edited) = external::with_dependency(&cargo, &resource)?
    {
        // As kubebuilder runs `go get`: a crate or version that does not resolve is refused
        // before anything is written.
        external::check_resolves(root, &resource)?;
        overlay.put("Cargo.toml", edited);
    }
    let report = crate::scaffold::plan(&ctx, args.force, &mut overlay)?;
    ops::finish(
        root,
        Plan {
            report,
            crds: if kind.has_api() {
                Crds::Report
            } else {
                Crds::Skip
            },
            kind: Some(kind.kind.clone()),
            ..Plan::new(overlay, project)
        },
    )?;
    crate::errln!(
        "\n{} {} is ready. Next: implement it, then regenerate the manifests with\n  operator-rs generate manifests",
        kind.api_version(),
        kind.kind
    );
    Ok(())
}

/// A second run for the same GVK adds to it, as kubebuilder's `Resource.Update`: a controller
/// stays once made (`--controller` after `--controller=false` adds one; `--force
/// --controller=false` re-scaffolds the types and keeps it). A run that scaffolds the controller
/// sets what it runs: `--force` without `--image` makes a deploy-image kind plain again.
fn merge_into(existing: &mut Resource, new: &Resource, scaffolds_controller: bool) {
    existing.controller |= new.controller;
    if new.api.is_some() {
        existing.api = new.api.clone();
        existing.plural = new.plural.clone();
    }
    if scaffolds_controller {
        existing.deploy_image = new.deploy_image.clone();
    }
    if new.external {
        existing.path = new.path.clone();
        existing.plural = new.plural.clone();
        existing.namespaced = new.namespaced;
        existing.from_crd = new.from_crd.clone();
        if new.external_crate.is_some() {
            existing.external_crate = new.external_crate.clone();
        }
    }
}

/// Validate the flags against the names' rules and the project, and work out the resource.
fn plan_resource(
    project: &Project,
    tree: &dyn SourceTree,
    args: &CreateApiArgs,
) -> Result<Resource> {
    let (group, version, kind) = args
        .gvk
        .values(|flag| format!("--{flag} {}", example(flag)))?;
    names::validate_version(version)?;
    names::validate_kind(kind)?;
    if !args.resource && !args.controller {
        bail!(
            "nothing to create: both --resource=false and --controller=false\n  e.g. drop --controller=false to get a controller for an existing kind"
        );
    }
    let kind_snake = names::kind_snake(kind);
    let own = project.find(group, version, kind).cloned();

    let mut resource = if args.resource {
        names::validate_group(group, &project.domain)?;
        let plural = args
            .plural
            .clone()
            .unwrap_or_else(|| names::default_plural(kind));
        let plural_named = match &args.plural {
            Some(_) => format!("--plural {plural}"),
            None => format!(
                "the plural {plural:?} (not given: derived from --kind {kind}, as kube-derive derives it; set one with --plural)"
            ),
        };
        if let Err(e) = names::validate_plural(&plural) {
            if args.plural.is_some() {
                return Err(e.into());
            }
            bail!(
                "{plural_named} is not a valid plural: {}. Nothing was written.\n  e.g. --plural {}",
                e.rule,
                valid_plural(&plural)
            );
        }
        names::validate_crd_name(
            &plural,
            &names::qualified_group(group, &project.domain),
            &format!(
                "--group cache --version {version} --kind {kind} (the CRD {plural}.cache.{})",
                project.domain
            ),
        )?;
        if let Some(existing) = own.as_ref().filter(|r| r.has_api())
            && !args.force
        {
            bail!(
                "API {} {} already exists in this project (see PROJECT). Nothing was written.\n  \
                 Pass --force to re-scaffold its files (your changes to them are lost), or choose another --version or --kind.",
                existing.api_version(),
                kind
            );
        }
        let candidate = Resource {
            api: Some(Api {
                crd_version: "v1".into(),
                namespaced: args.namespaced.unwrap_or(true),
                storage: false,
            }),
            controller: args.controller,
            ..Resource::new(group, &project.domain, version, kind, plural)
        };
        let candidate = Resource {
            path: project.layout().api_type(&candidate),
            ..candidate
        };
        if project.layout().group_module(&candidate) == project::layout::EXTERNAL_MODULE {
            bail!(
                "--group {group}: in the multigroup layout the group's module would be src/api/{}/, which holds the types of kinds from other projects' CRDs (create api --from-crd). Nothing was written.\n  e.g. --group fleet",
                project::layout::EXTERNAL_MODULE
            );
        }
        check_other_versions(project, &candidate)?;
        check_crd_names(project, &candidate, &plural_named)?;
        check_file_names(&candidate, &kind_snake)?;
        check_rust_names(project, &candidate)?;
        let storage = !project
            .versions_of(&candidate)
            .any(|r| r.version != version && r.api.as_ref().is_some_and(|a| a.storage));
        Resource {
            api: Some(Api {
                storage,
                ..candidate.api.clone().unwrap()
            }),
            ..candidate
        }
    } else if let Some(existing) = own.clone().filter(|r| r.has_api()) {
        // A controller for a kind this project already owns.
        Resource {
            controller: true,
            ..existing
        }
    } else if let Some(b) = builtin::lookup(group, version, kind) {
        Resource::of_builtin(b, true)
    } else {
        let hint = if builtin::is_builtin_group(group) {
            format!(
                "k8s-openapi has no kind {kind} in {group}/{version}; check the spelling and version (e.g. --group apps --version v1 --kind Deployment)"
            )
        } else {
            format!(
                "{group}/{version} {kind} is not a kind of this project (see PROJECT) nor a built-in Kubernetes kind\n  e.g. --group apps --version v1 --kind Deployment --resource=false, or drop --resource=false to create the kind"
            )
        };
        bail!("--resource=false needs an existing kind: {hint}");
    };

    if !args.resource {
        // A controller for a kind that exists: its scope is its CRD's or k8s-openapi's.
        let decided_by = if resource.has_api() {
            "its CRD in this project (PROJECT)"
        } else {
            "k8s-openapi"
        };
        let example = format!(
            "operator-rs create api --group {group} --version {version} --kind {kind} --resource=false"
        );
        check_scope_flag(args.namespaced, &resource, decided_by, example)?;
    }
    if args.controller {
        check_controller_slot(project, tree, &resource, args.force)?;
    }
    resource.deploy_image = deploy_image(args, &resource)?;
    Ok(resource)
}

/// `--namespaced` given for a kind whose scope is already decided elsewhere.
#[derive(Debug, thiserror::Error)]
#[error(
    "--namespaced={given}: {api_version} {kind} is {scope}, as {decided_by} says; a kind has one scope in the cluster, which this flag cannot change. Nothing was written.\n  e.g. {example}"
)]
pub struct ScopeConflict {
    /// The `--namespaced` value given.
    pub given: bool,
    /// The kind's group and version, e.g. `cert-manager.io/v1`.
    pub api_version: String,
    /// The kind, e.g. `Certificate`.
    pub kind: String,
    /// `namespaced` or `cluster-scoped`.
    pub scope: &'static str,
    /// What decides it: `its CRD (certificates.yaml)`, `k8s-openapi`, `PROJECT`.
    pub decided_by: String,
    /// The command without the contradicting flag (or with the right one).
    pub example: String,
}

/// `--namespaced` (when given) against the scope `resource` has, which `decided_by` decides:
/// refused when they differ, with `example` (the command that works).
fn check_scope_flag(
    given: Option<bool>,
    resource: &Resource,
    decided_by: &str,
    example: String,
) -> Result<(), ScopeConflict> {
    match given {
        Some(given) if given != resource.namespaced() => Err(ScopeConflict {
            given,
            api_version: resource.api_version(),
            kind: resource.kind.clone(),
            scope: scope_name(resource.namespaced()),
            decided_by: decided_by.to_string(),
            example,
        }),
        _ => Ok(()),
    }
}

/// `namespaced` or `cluster-scoped`.
fn scope_name(namespaced: bool) -> &'static str {
    if namespaced {
        "namespaced"
    } else {
        "cluster-scoped"
    }
}

fn example(flag: &str) -> &'static str {
    match flag {
        "group" => "cache",
        "version" => "v1alpha1",
        _ => "Memcached",
    }
}

/// Every version of one kind shares its plural and scope (one CRD).
fn check_other_versions(project: &Project, new: &Resource) -> Result<()> {
    for other in project
        .versions_of(new)
        .filter(|r| r.version != new.version)
    {
        let (Some(a), Some(b)) = (&other.api, &new.api) else {
            continue;
        };
        if a.namespaced != b.namespaced {
            bail!(
                "{} {} is {}, so every version of it must be: pass --namespaced={} (one CRD has one scope)",
                other.api_version(),
                other.kind,
                if a.namespaced {
                    "namespaced"
                } else {
                    "cluster-scoped"
                },
                a.namespaced
            );
        }
        if other.plural != new.plural {
            bail!(
                "{} {} has the plural {:?}, so every version of it must: pass --plural {} (one CRD has one plural)",
                other.api_version(),
                other.kind,
                other.plural,
                other.plural
            );
        }
    }
    Ok(())
}

/// A valid plural close to `derived` (one the user can pass instead): cut to the 63 characters
/// of a DNS label and to what it allows.
fn valid_plural(derived: &str) -> String {
    let kept: String = (derived.chars())
        .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
        .skip_while(|c| !c.is_ascii_lowercase())
        .take(62)
        .collect();
    let candidate = format!("{}s", kept.trim_end_matches('-'));
    match names::validate_plural(&candidate) {
        Ok(()) => candidate,
        Err(_) => "memcacheds".to_string(),
    }
}

/// Two kinds of one group may not share a plural or singular: their CRDs (and CRD files) would be
/// one, and one kind would be lost. `plural_named` says where the plural came from (the flag,
/// or derived from the kind).
fn check_crd_names(project: &Project, new: &Resource, plural_named: &str) -> Result<()> {
    let group = new.qualified_group();
    let singular = new.kind.to_ascii_lowercase();
    for other in project
        .resources
        .iter()
        .filter(|r| r.has_api() && r.qualified_group() == group && r.kind != new.kind)
    {
        let other_singular = other.kind.to_ascii_lowercase();
        let clash = if other.plural == new.plural {
            Some(format!(
                "{plural_named}: {} {} already has that plural",
                other.api_version(),
                other.kind
            ))
        } else if other_singular == new.plural {
            Some(format!(
                "{plural_named}: it is the singular of {} {}",
                other.api_version(),
                other.kind
            ))
        } else if other.plural == singular {
            Some(format!(
                "kind {}: its singular `{singular}` is the plural of {} {}",
                new.kind,
                other.api_version(),
                other.kind
            ))
        } else {
            None
        };
        if let Some(clash) = clash {
            bail!(
                "{clash}, and in one group ({group}) the names of two kinds must differ: both would be the CRD {}.{group} (file {}), and one would be lost. Nothing was written.\n  \
                 e.g. --plural {}",
                other.plural,
                crate::crdgen::crd_path(&group, &other.plural).display(),
                if names::default_plural(&new.kind) != other.plural {
                    names::default_plural(&new.kind)
                } else {
                    format!("{singular}items")
                }
            );
        }
    }
    Ok(())
}

/// The sample's file name, built from the names, must fit the file system (255 bytes a name):
/// refuse before anything is written. (The CRD's file name is shortened to fit:
/// [`crate::crdgen::crd_path`].)
fn check_file_names(new: &Resource, kind_snake: &str) -> Result<()> {
    let file = format!("{}_{}_{kind_snake}.yaml", new.group, new.version);
    if file.len() > crate::workspace::transaction::NAME_MAX {
        bail!(
            "the sample's file name {file:?} built from --group and --kind is {} bytes, over the {}-byte limit of file systems. Nothing was written.\n  \
             Choose shorter names, e.g. --group cache",
            file.len(),
            crate::workspace::transaction::NAME_MAX
        );
    }
    Ok(())
}

/// Kinds of one version share a Rust module (`src/api/<version>/`; in the multigroup layout,
/// kinds of one group and version: `src/api/<group>/<version>/`): their files and their
/// `<Kind>`, `<Kind>Spec`, `<Kind>Status` names must not collide. In the single-group layout
/// the refusal says how to get the multigroup one.
fn check_rust_names(project: &Project, new: &Resource) -> Result<()> {
    let layout = project.layout();
    let names_of = |k: &str| [k.to_string(), format!("{k}Spec"), format!("{k}Status")];
    let new_names = names_of(&new.kind);
    let snake = names::kind_snake(&new.kind);
    let module = format!("src/api/{}{}/", layout.group_dir(new), new.version);
    let multigroup_hint = if layout.multigroup {
        String::new()
    } else {
        ", or move the project to the multigroup layout, where each group has its own modules (src/api/<group>/<version>/): operator-rs edit --multigroup".to_string()
    };
    for other in project.resources.iter().filter(|r| {
        r.has_api()
            && r.version == new.version
            && !r.same_gk(new)
            && layout.group_module(r) == layout.group_module(new)
    }) {
        if names::kind_snake(&other.kind) == snake {
            bail!(
                "{module}{snake}.rs already holds {} {}; kinds of one version{} share a module, so {} {} would collide with it. Nothing was written.\n  \
                 e.g. choose another --kind, or another --version{multigroup_hint}",
                other.api_version(),
                other.kind,
                if layout.multigroup { " and group" } else { "" },
                new.api_version(),
                new.kind
            );
        }
        if let Some(clash) = names_of(&other.kind).iter().find(|n| new_names.contains(n)) {
            bail!(
                "kind {} would declare `{clash}`, which {} {} already declares in {module}. Nothing was written.\n  e.g. --kind {}Resource{multigroup_hint}",
                new.kind,
                other.api_version(),
                other.kind,
                new.kind
            );
        }
    }
    Ok(())
}

/// One controller per kind: `src/controllers/<kind_snake>.rs` (`src/controllers/<group>/` in the
/// multigroup layout), the file no other kind's controller has and no module of the project's
/// holds already (`tree`: the project as it is).
fn check_controller_slot(
    project: &Project,
    tree: &dyn SourceTree,
    new: &Resource,
    force: bool,
) -> Result<()> {
    let layout = project.layout();
    let snake = names::kind_snake(&new.kind);
    let file = layout.controller_file(new);
    for other in (project.resources.iter())
        .filter(|r| r.controller && layout.group_module(r) == layout.group_module(new))
    {
        if other.same_gvk(&new.group, &new.version, &new.kind) {
            if force {
                continue;
            }
            bail!(
                "{} {} already has a controller ({file}). Nothing was written.\n  \
                 Pass --force to re-scaffold it, or --controller=false.",
                other.api_version(),
                other.kind
            );
        }
        if names::kind_snake(&other.kind) == snake {
            let why = if other.same_gk(new) {
                format!(
                    "{} {} already has one ({file}); one controller serves every version",
                    other.api_version(),
                    other.kind
                )
            } else {
                format!(
                    "{file} already belongs to {} {}",
                    other.api_version(),
                    other.kind
                )
            };
            bail!(
                "cannot create a controller for {} {}: {why}. Nothing was written.\n  e.g. pass --controller=false{}",
                new.api_version(),
                new.kind,
                if layout.multigroup {
                    ""
                } else {
                    ", or move the project to the multigroup layout, where each group has its own controllers (src/controllers/<group>/): operator-rs edit --multigroup"
                }
            );
        }
    }
    // A module at that path that is no kind's scaffolded controller (a second controller of
    // another kind, as `import` places them, or code of the user's): --force re-scaffolds this
    // kind's files, never that one.
    let scaffolded =
        (project.resources.iter()).any(|r| r.controller && layout.controller_file(r) == file);
    if !scaffolded && tree.read(Path::new(&file))?.is_some() {
        bail!(
            "cannot create a controller for {} {}: {file} is there already, a controller module that is no kind's scaffolded controller (PROJECT records none there: a second controller of another kind, or code of yours); the scaffold would replace it{}. Nothing was written.\n  \
             Rename that module (the file, its `pub mod {}` line in {} and its registration), then re-run; or pass --controller=false",
            new.api_version(),
            new.kind,
            if force { ", even with --force" } else { "" },
            snake,
            layout.controllers_mod_file(new)
        );
    }
    Ok(())
}

fn deploy_image(args: &CreateApiArgs, resource: &Resource) -> Result<Option<DeployImage>> {
    let Some(image) = args.image.as_deref().map(str::trim) else {
        return Ok(None);
    };
    if !resource.has_api() || !args.controller || resource.core {
        bail!(
            "--image needs a kind of this project with a controller (it scaffolds a controller that runs the image)\n  e.g. --group cache --version v1alpha1 --kind Memcached --image memcached:1.6"
        );
    }
    if !args.resource && resource.deploy_image.is_none() {
        bail!(
            "--image with --resource=false: {} {} was not made with --image, and a deploy-image controller needs the fields its types get (size, and the container's settings)\n  \
             re-scaffold the types too (your changes to them are lost): operator-rs create api --group {} --version {} --kind {} --image {image} --force",
            resource.api_version(),
            resource.kind,
            resource.group,
            resource.version,
            resource.kind
        );
    }
    names::validate_image(image)?;
    let command: Vec<String> = args
        .image_container_command
        .as_deref()
        .map(|c| c.split(',').map(|s| s.trim().to_string()).collect())
        .unwrap_or_default();
    // Nothing of the flag is dropped: an empty command or argument is refused, not left out.
    const COMMAND_EXAMPLE: &str = "--image-container-command \"memcached,--memory-limit=64\"";
    if let Some(at) = command.iter().position(String::is_empty) {
        bail!(
            "invalid --image-container-command {:?}: {}; the command and its arguments are separated by commas, none empty\n  e.g. {COMMAND_EXAMPLE}",
            args.image_container_command.as_deref().unwrap_or_default(),
            if command.len() == 1 {
                "it is empty (drop the flag to run the image's own entrypoint)".to_string()
            } else {
                format!("part {} of its comma-separated list is empty", at + 1)
            }
        );
    }
    if let Some(program) = command.first()
        && program.contains(char::is_whitespace)
    {
        bail!(
            "invalid --image-container-command {program:?}: the program to run has a space, and the container would look for an executable of that whole name; the command and its arguments are separated by commas\n  e.g. --image-container-command \"{}\"",
            program.split_whitespace().collect::<Vec<_>>().join(",")
        );
    }
    if let Some(bad) = command.iter().find(|c| {
        c.chars()
            .any(|ch| ch == '"' || ch == '\\' || ch.is_control())
    }) {
        bail!(
            "invalid --image-container-command {bad:?}: no quotes, backslashes or control characters in an argument\n  e.g. --image-container-command \"memcached,--memory-limit=64\""
        );
    }
    Ok(Some(DeployImage {
        image: image.to_string(),
        container_port: args.image_container_port,
        container_command: command,
        run_as_user: args.run_as_user,
    }))
}
