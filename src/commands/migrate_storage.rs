//! `operator-rs migrate-storage`: rewrite every object of a kind in its CRD's storage version
//! on the user's cluster, then narrow the CRD's `status.storedVersions` to it, so the old
//! version can be removed (the runtime's `storage::migration` does the work).

use std::path::Path;

use anyhow::{Context, Result, bail};
use operator_rs_runtime::connect;
use operator_rs_runtime::storage::{self, Method, Options};

use crate::cli::{MigrateMethod, MigrateStorageArgs};
use crate::project::Project;

/// `operator-rs migrate-storage`: moves every object of a kind to its CRD's storage version on
/// the cluster, then narrows the CRD's `status.storedVersions` to it.
pub fn run(root: &Path, args: &MigrateStorageArgs) -> Result<()> {
    let group = full_group(root, args.group.trim(), args.kind.trim())?;
    let kind = args.kind.trim();
    if kind.is_empty() || kind.starts_with('-') {
        bail!(
            "--kind needs the kind, e.g. operator-rs migrate-storage --group {group} --kind Memcached"
        );
    }
    let options = Options {
        method: match args.method {
            MigrateMethod::Rewrite => Method::Rewrite,
            MigrateMethod::StorageVersionMigration => Method::StorageVersionMigration,
        },
        page_size: args.page_size,
        ..Options::new(group.clone(), kind)
    };
    // Names the API server could not hold are refused before connecting.
    crate::names::validate_crd_group(&group, "--group cache.example.com")?;
    crate::names::validate_crd_kind(kind, "--kind Memcached")?;
    let report = crate::cluster::block_on(async {
        let client = connect::client(args.kubeconfig.as_deref(), args.context.as_deref(), None)
            .await
            .context(
                "no cluster to migrate on\n  e.g. operator-rs migrate-storage --group cache.example.com --kind Memcached --kubeconfig ~/.kube/config --context kind-kind",
            )?;
        let report = match storage::migrate(&client, &options, |p| crate::errln!("{p}")).await {
            Ok(report) => report,
            // A request failed (no answer, TLS, a timeout, an error status): where to look, and
            // that a second run completes the first.
            Err(e @ storage::MigrationError::Api { .. }) => {
                return Err(anyhow::Error::new(e).context(format!(
                    "a request to the cluster failed\n  check the cluster answers with the same kubeconfig (e.g. kubectl{} cluster-info), then run the command again: it completes an interrupted migration",
                    args.kubeconfig
                        .as_ref()
                        .map(|k| format!(" --kubeconfig {}", k.display()))
                        .unwrap_or_default()
                )));
            }
            Err(e) => return Err(e.into()),
        };
        anyhow::Ok(report)
    })??;
    if report.migrated {
        let old: Vec<&str> = (report.stored_before.iter())
            .filter(|v| **v != report.storage_version)
            .map(String::as_str)
            .collect();
        crate::errln!(
            "\n{}: {} objects in {} ({} deleted meanwhile, {} conflicts retried); status.storedVersions is [{}].",
            report.crd,
            report.counts.rewritten,
            report.storage_version,
            report.counts.gone,
            report.counts.conflicts,
            report.storage_version
        );
        if !old.is_empty() {
            crate::errln!(
                "{} can now be removed from {kind}: delete its types (or serve it no more first: operator-rs edit api --group {group} --version {} --kind {kind} --served=false), then operator-rs generate crds.",
                old.join(", "),
                old[0]
            );
        }
    }
    Ok(())
}

/// The group in full: as given when it has a dot (every CRD's group has one), else with the
/// domain of the project's PROJECT (`cache` -> `cache.example.com`), as `create api` takes it.
fn full_group(root: &Path, group: &str, kind: &str) -> Result<String> {
    if group.contains('.') {
        return Ok(group.to_owned());
    }
    let example = format!(
        "operator-rs migrate-storage --group cache.example.com --kind {}",
        if kind.is_empty() { "Memcached" } else { kind }
    );
    if group.is_empty() || group.starts_with('-') {
        bail!("--group needs the kind's API group, e.g. {example}");
    }
    match Project::load(root) {
        Ok(project) => Ok(format!("{group}.{}", project.domain)),
        Err(_) => bail!(
            "--group {group} is not a full API group (a CRD's group has a dot), and there is no PROJECT here to take the domain from: give it in full, e.g. {example}"
        ),
    }
}
