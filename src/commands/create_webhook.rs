//! `operator-rs create webhook`: a kind's defaulting and validating webhooks, and conversion
//! between its versions (hub and spoke), served by the runtime's webhook server. Records them
//! in PROJECT (kubebuilder's `webhooks:`), scaffolds `src/webhooks/`, the kustomize config
//! (config/webhook, config/certmanager, the CRD conversion patch, config/default's wiring) and
//! regenerates config/webhook/manifests.yaml from the markers. Re-running is idempotent; adding
//! a webhook type later keeps the user's code (its registration is all that is added).
//! A built-in kind needs no `create api` first (its first run records it, `core: true`); built-in
//! and external kinds get admission webhooks only, conversion being their API's owner's.

use std::path::Path;

use anyhow::{Result, bail};

use crate::builtin;
use crate::cli::CreateWebhookArgs;
use crate::crdgen;
use crate::names;
use crate::ops;
use crate::project::{self, Project, Resource, ResourceWebhooks};
use crate::scaffold::context::{WebhookContext, WebhookTypes};
use crate::webhookgen::marker;
use crate::workspace::{DiskTree, Overlay, SourceTree};

const EXAMPLE: &str = "operator-rs create webhook --group batch --version v1 --kind CronJob --defaulting --programmatic-validation";

/// `operator-rs create webhook`: adds the webhooks `args` asks for to a kind of the project
/// under `root`.
pub fn run(root: &Path, args: &CreateWebhookArgs) -> Result<()> {
    let mut project = Project::load(root)?;
    let disk = DiskTree::new(root);
    let plan = plan(&project, &disk, args)?;
    let resource = plan.resource.clone();
    // What PROJECT records before this run: a run that adds nothing to it (webhooks the kind has
    // already, without --force) leaves its history as it is.
    let recorded = project.resources.clone();

    // A built-in kind gets its entry here when it has none yet (kubebuilder's `core: true`).
    if project
        .find(&resource.group, &resource.version, &resource.kind)
        .is_none()
    {
        project.resources.push(resource.clone());
    }
    let entry = project
        .resources
        .iter_mut()
        .find(|r| r.same_gvk(&resource.group, &resource.version, &resource.kind))
        .expect("planned from PROJECT");
    let webhooks = entry.webhooks.get_or_insert_with(|| ResourceWebhooks {
        webhook_version: "v1".into(),
        ..Default::default()
    });
    webhooks.defaulting |= args.defaulting;
    webhooks.validation |= args.programmatic_validation;
    webhooks.conversion |= args.conversion;
    for spoke in &plan.spokes {
        if !webhooks.spoke.contains(spoke) {
            webhooks.spoke.push(spoke.clone());
        }
    }

    let mut overlay = Overlay::new(&disk);
    let kind_snake = names::kind_snake(&resource.kind);
    let layout = project.layout();
    let kind_file = layout.webhook_file(&resource);
    // The kind's admission file holds the user's code: rendered once (or with --force), and
    // a later run only registers another webhook type.
    let types = WebhookTypes {
        defaulting: args.defaulting,
        validation: args.programmatic_validation,
        conversion: args.conversion,
    };
    let admission_file = (args.defaulting || args.programmatic_validation)
        && (args.force || !exists(&overlay, &kind_file)?);
    let ctx = WebhookContext::admission(&project, &resource, types, admission_file);
    check_made_paths(&ctx, &resource)?;
    let mut report = crate::scaffold::plan(&ctx, args.force, &mut overlay)?;

    for spoke in &plan.spokes {
        let spoke_resource = project
            .find(&resource.group, spoke, &resource.kind)
            .expect("checked in plan");
        let spoke_file = layout.conversion_file(&resource, spoke);
        let spoke_file = args.force || !exists(&overlay, &spoke_file)?;
        let ctx = WebhookContext::conversion(&project, &resource, spoke_resource, spoke_file);
        let more = crate::scaffold::plan(&ctx, args.force, &mut overlay)?;
        for (path, action) in more.actions {
            if !report.actions.iter().any(|(p, _)| *p == path) {
                report.actions.push((path, action));
            }
        }
    }

    if args.force || project.resources != recorded {
        project::history::record(&mut project, &args.words());
    }
    let namespace_selector = ctx.namespace_selector;
    let project_name = ctx.project.project_name.clone();
    ops::finish(
        root,
        ops::Plan {
            report,
            kind: Some(resource.kind.clone()),
            ..ops::Plan::new(overlay, project)
        },
    )?;
    if resource.owned_elsewhere() && (args.defaulting || args.programmatic_validation) {
        let (scope, narrow) = if namespace_selector {
            (
                " (kube-system's too)".to_owned(),
                format!(
                    "config/webhook/kustomization.yaml makes them skip the manager's own namespace ({}-system, so that they never block the manager's own Deployment or Pods); narrow them further with a namespaceSelector or objectSelector",
                    project_name
                ),
            )
        } else {
            (
                ", a cluster-scoped kind".to_owned(),
                "narrow them with an objectSelector (a namespaceSelector does not apply to cluster-scoped objects)".to_owned(),
            )
        };
        crate::errln!(
            "warning: the webhooks of {} see every {} of the cluster{scope}, and with failurePolicy=fail they block them all while the manager is unreachable: {narrow}, as src/webhooks/{}/{}.rs says.",
            resource.kind,
            resource.kind,
            resource.version,
            kind_snake
        );
    }
    crate::errln!(
        "\nWebhooks of {} {} are ready. Next: implement them in src/webhooks/, then run\n  operator-rs generate manifests\n\
         Deploy with cert-manager (config/certmanager), or run the manager with --webhook-cert-mode self-managed;\n\
         on your machine: make install run (it serves them at WEBHOOK_LOCAL_URL, default https://127.0.0.1:9443, \
         which the API server must reach), or cargo run -- --webhook-local-url https://<host>:9443",
        resource.api_version(),
        resource.kind
    );
    Ok(())
}

/// The markers `create webhook` writes take their Service paths from --group, --version and
/// --kind: a path the API server would refuse (a segment over 253 characters: a long group) is
/// refused here, naming what the user typed (`generate webhooks` would blame a line of
/// src/webhooks/mod.rs they never wrote). Their names, `m<kind>-<version>.kb.io`, are always
/// valid: kind and version are DNS labels.
fn check_made_paths(ctx: &WebhookContext, resource: &Resource) -> Result<()> {
    for (wanted, what, path) in [
        (ctx.defaulting, "defaulting", &ctx.mutate_path),
        (ctx.validation, "validating", &ctx.validate_path),
    ] {
        if let (true, Err(problem)) = (wanted, marker::check_path(path)) {
            bail!(
                "the {what} webhook of {} {} cannot be registered: its Service path is made of --group, --version and --kind, and the API server would refuse it:\n  {problem}\n  use a shorter group or kind, e.g. {EXAMPLE}",
                resource.api_version(),
                resource.kind
            );
        }
    }
    Ok(())
}

fn exists(overlay: &Overlay<'_>, path: &str) -> Result<bool> {
    Ok(overlay.read(Path::new(path))?.is_some())
}

/// What a run scaffolds, checked against PROJECT.
struct Plan {
    resource: Resource,
    spokes: Vec<String>,
}

fn plan(project: &Project, tree: &dyn SourceTree, args: &CreateWebhookArgs) -> Result<Plan> {
    let (group, version, kind) = args.gvk.values(|_| EXAMPLE.to_string())?;
    names::validate_version(version)?;
    names::validate_kind(kind)?;
    if !args.defaulting && !args.programmatic_validation && !args.conversion {
        bail!(
            "create webhook needs at least one of --defaulting, --programmatic-validation and --conversion\n  e.g. {}",
            example(project, project.find(group, version, kind))
        );
    }
    let Some(resource) = project
        .find(group, version, kind)
        .cloned()
        .or_else(|| builtin_kind(project, group, version, kind))
    else {
        let known: Vec<String> = project
            .resources
            .iter()
            .map(|r| {
                format!(
                    "--group {} --version {} --kind {}",
                    r.group, r.version, r.kind
                )
            })
            .collect();
        let hint = if known.is_empty() {
            format!(
                "this project has no kinds yet: create one first, e.g. operator-rs create api --group {} --version {version} --kind {kind}",
                if group.is_empty() { "batch" } else { group }
            )
        } else {
            format!("kinds of this project: {}", known.join("; "))
        };
        let example = match project.resources.first() {
            Some(first) => format!("\n  e.g. {}", example(project, Some(first))),
            None => String::new(),
        };
        // A group none of the project's kinds has may be another project's: say how to record it.
        let external = if project.resources.iter().any(|r| r.group == group) {
            String::new()
        } else {
            format!(
                "\n  for a kind another project owns, record it first, naming its Rust type: create api --group {group} --version {version} --kind {kind} --external-api-path <crate>::<module>::{kind} --controller=false"
            )
        };
        bail!(
            "{group}/{version} {kind} is not a kind of this project (see PROJECT) nor a built-in Kubernetes kind; webhooks are created for existing kinds\n  {hint}{example}{external}"
        );
    };
    // Conversion is the CRD's: refused before anything else is checked, with the reason.
    if args.conversion && resource.owned_elsewhere() {
        bail!(
            "--conversion converts between the versions of a CRD this project owns; {} {} is {}\n  \
             drop --conversion: e.g. {}",
            resource.api_version(),
            kind,
            if resource.core {
                "a built-in kind, which the API server itself converts (built-in kinds have no conversion webhooks)"
            } else {
                "an external kind: its conversion belongs to the owner of its CRD"
            },
            example(project, Some(&resource))
        );
    }
    let mut spokes: Vec<String> = Vec::new();
    for spoke in args.spoke.iter().map(|s| s.trim()) {
        if spoke.is_empty() {
            continue;
        }
        // The rule of a version, named and exemplified as this flag.
        names::validate_version(spoke).map_err(|e| names::NameError {
            what: "--spoke version",
            example: format!("--spoke v2 (another version of {kind}, as --version names one)"),
            ..e
        })?;
        if spokes.iter().any(|s| s == spoke) {
            let mut once: Vec<&str> = Vec::new();
            for s in args
                .spoke
                .iter()
                .map(|s| s.trim())
                .filter(|s| !s.is_empty())
            {
                if !once.contains(&s) {
                    once.push(s);
                }
            }
            bail!(
                "duplicate spoke version {spoke}: list each version once\n  e.g. --spoke {}",
                once.join(",")
            );
        }
        if spoke == version {
            bail!(
                "--spoke {spoke} is the hub (--version): a spoke is another version of {kind}\n  {}",
                spoke_example(project, &resource)
            );
        }
        if !project
            .find(group, spoke, kind)
            .is_some_and(Resource::has_api)
        {
            let versions: Vec<&str> = project
                .versions_of(&resource)
                .filter(|r| r.has_api() && r.version != version)
                .map(|r| r.version.as_str())
                .collect();
            bail!(
                "invalid spoke version {spoke}: {kind} has no version {spoke} in this project (other versions: {})\n  \
                 add it first: operator-rs create api --group {group} --version {spoke} --kind {kind}",
                if versions.is_empty() {
                    "none".to_string()
                } else {
                    versions.join(", ")
                }
            );
        }
        spokes.push(spoke.to_string());
    }
    if args.conversion {
        check_hub(project, tree, &resource, &spokes)?;
        if spokes.is_empty() {
            bail!(
                "--conversion needs the versions that convert to {version}: pass --spoke <version>[,<version>...]\n  {}",
                spoke_example(project, &resource)
            );
        }
    } else if !spokes.is_empty() {
        bail!(
            "--spoke is for conversion webhooks: add --conversion\n  e.g. operator-rs create webhook --group {} --version {version} --kind {kind} --conversion --spoke {}",
            args.gvk.group.trim(),
            spokes.join(",")
        );
    }
    Ok(Plan { resource, spokes })
}

/// The entry of the built-in kind `--group --version --kind` name (`core` or `""` for core/v1,
/// `networking` for networking.k8s.io...): the project's when it has one, else a new one
/// without a controller.
fn builtin_kind(project: &Project, group: &str, version: &str, kind: &str) -> Option<Resource> {
    let b = builtin::lookup(group, version, kind)?;
    let new = Resource::of_builtin(b, false);
    Some(
        project
            .find(&new.group, version, kind)
            .cloned()
            .unwrap_or(new),
    )
}

/// The hub of a conversion is the kind's storage version as its types declare it (the source
/// decides since `edit api` exists; PROJECT only mirrors it), as `generate crds` reads it: every
/// version is in the types, exactly one of them stored.
fn check_hub(
    project: &Project,
    tree: &dyn SourceTree,
    hub: &Resource,
    spokes: &[String],
) -> Result<()> {
    let (group, kind, version) = (hub.api_group(), &hub.kind, &hub.version);
    let found: Vec<crdgen::FoundVersion> = crdgen::kind_versions(tree)?
        .into_iter()
        .filter(|f| f.group == group && f.kind == *kind)
        .collect();
    for v in std::iter::once(version).chain(spokes) {
        if !found.iter().any(|f| f.version == *v) {
            let declared: Vec<String> = found
                .iter()
                .map(|f| format!("{} at {}", f.version, f.loc))
                .collect();
            bail!(
                "{kind}.{group} {v} is in PROJECT but no `#[derive(CustomResource)]` of the crate declares it (found: {}); conversion needs the types of every version it converts\n  \
                 restore src/api/{}{v}/ (e.g. from version control), or re-scaffold it: operator-rs create api --group {} --version {v} --kind {kind} --controller=false --force",
                if declared.is_empty() {
                    "none".to_string()
                } else {
                    declared.join(", ")
                },
                project.layout().group_dir(hub),
                hub.group
            );
        }
    }
    let declared: Vec<crdgen::DeclaredVersion<'_>> = found
        .iter()
        .map(|f| crdgen::DeclaredVersion {
            version: &f.version,
            loc: &f.loc,
            storage: f.storage,
        })
        .collect();
    // No storage version, or several PROJECT cannot settle: refused there, with each version's place.
    let (stored, legacy) = crdgen::storage_version(&group, kind, &declared, project)?;
    if found.iter().filter(|f| f.storage).count() > 1 {
        bail!(
            "the hub of a conversion is the storage version, and the types of {kind}.{group} do not say which it is: {}",
            legacy
                .unwrap_or_default()
                .trim_start_matches(&format!("{kind}.{group}: "))
        );
    }
    if stored != *version {
        let at = found
            .iter()
            .find(|f| f.version == stored)
            .map(|f| format!(" (at {})", f.loc))
            .unwrap_or_default();
        // Spokes the command takes: versions of the kind in PROJECT, other than the hub.
        let others: Vec<&str> = found
            .iter()
            .map(|f| f.version.as_str())
            .filter(|v| *v != stored && project.find(&hub.group, v, kind).is_some())
            .collect();
        bail!(
            "the hub of a conversion is the storage version, which the types declare is {stored}{at}, not {version}\n  \
             e.g. operator-rs create webhook --group {} --version {stored} --kind {kind} --conversion --spoke {}\n  \
             or make {version} the storage version first: operator-rs edit api --group {} --version {version} --kind {kind} --storage",
            hub.group,
            others.join(","),
            hub.group
        );
    }
    Ok(())
}

/// A `create webhook` command line this project takes: for `resource`, else for its first kind
/// (the generic example in a project without kinds).
fn example(project: &Project, resource: Option<&Resource>) -> String {
    let Some(r) = resource.or(project.resources.first()) else {
        return EXAMPLE.to_string();
    };
    format!(
        "operator-rs create webhook --group {} --version {} --kind {} --defaulting --programmatic-validation",
        r.group, r.version, r.kind
    )
}

/// How to name the spokes of a conversion to `hub`: the command with the kind's other versions
/// in PROJECT, or, when it has none, how to add one first (a version the command then takes).
fn spoke_example(project: &Project, hub: &Resource) -> String {
    let others: Vec<&str> = (project.versions_of(hub))
        .filter(|r| r.has_api() && r.version != hub.version)
        .map(|r| r.version.as_str())
        .collect();
    if others.is_empty() {
        let new = ["v1", "v2", "v1beta1", "v1alpha1"]
            .into_iter()
            .find(|v| *v != hub.version)
            .expect("one differs");
        // Every version of a kind shares its scope and plural: the new one must say them.
        let mut same = String::new();
        if hub.api.as_ref().is_some_and(|a| !a.namespaced) {
            same.push_str(" --namespaced=false");
        }
        if hub.plural != names::default_plural(&hub.kind) {
            same.push_str(&format!(" --plural {}", hub.plural));
        }
        return format!(
            "{} {} has no other version to convert from: add one first, e.g.\n    operator-rs create api --group {} --version {new} --kind {}{same} --controller=false\n  then: operator-rs create webhook --group {} --version {} --kind {} --conversion --spoke {new}",
            hub.api_version(),
            hub.kind,
            hub.group,
            hub.kind,
            hub.group,
            hub.version,
            hub.kind
        );
    }
    format!(
        "e.g. operator-rs create webhook --group {} --version {} --kind {} --conversion --spoke {}",
        hub.group,
        hub.version,
        hub.kind,
        others.join(",")
    )
}
