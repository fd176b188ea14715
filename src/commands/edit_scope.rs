//! `operator-rs edit --namespaced[=BOOL] --sharded[=BOOL]`: switch the manager between
//! cluster-scoped and namespace-scoped (kubebuilder's `edit --namespaced`), and between one
//! active replica and a sharded manager, as `init --namespaced` / `init --sharded` would have
//! scaffolded it. The switch itself is planned in [`crate::ops::settings`].

use std::path::Path;

use anyhow::Result;

use crate::ops;
use crate::project::Project;
use crate::workspace::DiskTree;

/// The settings `edit` changes (`None`: kept as they are).
#[derive(Debug, Clone, Copy, Default)]
pub struct Change {
    /// `--namespaced[=BOOL]`: the manager's scope.
    pub namespaced: Option<bool>,
    /// `--sharded[=BOOL]`: a sharded manager, or one active replica.
    pub sharded: Option<bool>,
}

fn scope(namespaced: bool) -> &'static str {
    if namespaced {
        "namespace-scoped"
    } else {
        "cluster-scoped"
    }
}

fn sharding(sharded: bool) -> &'static str {
    if sharded {
        "sharded (every replica reconciles its own shard of the objects)"
    } else {
        "not sharded (one active replica; the others wait on the leader election)"
    }
}

/// `operator-rs edit --namespaced[=BOOL] --sharded[=BOOL]`: switches the manager of the project
/// under `root` as `change` says (`force`: even over scaffolded files you edited).
pub fn run(root: &Path, change: Change, force: bool) -> Result<()> {
    let before = Project::load(root)?;
    let mut after = before.clone();
    after.namespaced = change.namespaced.unwrap_or(before.namespaced);
    after.sharded = change.sharded.unwrap_or(before.sharded);
    // What the command changes, as the lines it ends with.
    let mut said = Vec::new();
    if let Some(namespaced) = change.namespaced {
        let line = format!(
            "The manager of {} is {}",
            before.project_name,
            scope(namespaced)
        );
        said.push((before.namespaced != namespaced, line));
    }
    if let Some(sharded) = change.sharded {
        let line = format!(
            "The manager of {} is {}",
            before.project_name,
            sharding(sharded)
        );
        said.push((before.sharded != sharded, line));
    }
    if after == before {
        for (_, line) in &said {
            crate::errln!(
                "{}; nothing to change.",
                line.replacen(" is ", " is already ", 1)
            );
        }
        return Ok(());
    }

    let target: Vec<&str> = (change.namespaced.map(scope).into_iter())
        .chain(change.sharded.map(sharding))
        .collect();
    let disk = DiskTree::new(root);
    let plan = ops::settings::plan(&disk, &before, after.clone(), &target.join(" and "), force)?;
    ops::finish(root, plan)?;
    for (_, line) in said.iter().filter(|(changed, _)| *changed) {
        crate::errln!("\n{}.", line.replacen(" is ", " is now ", 1));
    }
    if change.namespaced.is_some_and(|n| n != before.namespaced) {
        crate::errln!(
            "{}",
            if after.namespaced {
                "It watches its own namespace (POD_NAMESPACE), or those --watch-namespace (WATCH_NAMESPACE) names; \
                 each of those needs the manager's Role and RoleBinding (`namespace=` in the RBAC markers)."
            } else {
                "It watches every namespace unless --watch-namespace (WATCH_NAMESPACE) names some."
            }
        );
    }
    if change.sharded.is_some_and(|s| s != before.sharded) {
        crate::errln!(
            "{}",
            if after.sharded {
                "config/manager deploys 3 replicas and a PodDisruptionBudget; each holds a Lease of its own \
                 (config/rbac/leader_election_role.yaml grants it). Regenerate a Helm chart with `make chart`."
            } else {
                "config/manager deploys 1 replica, without the PodDisruptionBudget. Regenerate a Helm chart with `make chart`."
            }
        );
    }
    Ok(())
}
