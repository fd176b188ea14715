//! The user's cluster, for the commands that talk to one: a client from the kubeconfig (the
//! runtime's `connect`), requests run on a one-thread tokio runtime, and the check that a CRD
//! about to lose a version stores no object in it on the cluster (`status.storedVersions`).

use std::future::Future;
use std::path::{Path, PathBuf};

use std::time::Duration;

use anyhow::{Context, Result};
use operator_rs_runtime::connect;
use operator_rs_runtime::storage::crd_stored_versions;

/// How long the stored-versions check waits for a cluster before it takes it as unreachable.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// Runs `future` to completion on a one-thread tokio runtime (the cluster commands' requests).
pub fn block_on<F: Future>(future: F) -> Result<F::Output> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime for requests to the cluster")?;
    Ok(runtime.block_on(future))
}

/// A CRD file about to lose versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// The file, relative to the project.
    pub file: PathBuf,
    /// The CRD's name (`memcacheds.cache.example.com`).
    pub crd: String,
    /// Its group and kind.
    pub group: String,
    pub kind: String,
    /// The versions the file had and will not have.
    pub versions: Vec<String>,
}

/// The versions `old` (a CRD's YAML) has and `new` does not; `None` when neither is a CRD or
/// no version goes.
pub fn dropped_versions(file: &Path, old: &str, new: &str) -> Option<Dropped> {
    let read = |text: &str| -> Option<(String, String, String, Vec<String>)> {
        let crd: serde_json::Value = serde_saphyr::from_str(text).ok()?;
        if crd["kind"] != "CustomResourceDefinition" {
            return None;
        }
        let versions = (crd["spec"]["versions"].as_array()?.iter())
            .filter_map(|v| v["name"].as_str().map(str::to_owned))
            .collect();
        Some((
            crd["metadata"]["name"].as_str()?.to_owned(),
            crd["spec"]["group"].as_str()?.to_owned(),
            crd["spec"]["names"]["kind"].as_str()?.to_owned(),
            versions,
        ))
    };
    let (crd, group, kind, before) = read(old)?;
    let (_, _, _, after) = read(new)?;
    let versions: Vec<String> = before.into_iter().filter(|v| !after.contains(v)).collect();
    (!versions.is_empty()).then(|| Dropped {
        file: file.to_owned(),
        crd,
        group,
        kind,
        versions,
    })
}

/// The command that migrates a kind's objects to its storage version.
pub fn migrate_command(group: &str, kind: &str) -> String {
    format!("operator-rs migrate-storage --group {group} --kind {kind}")
}

/// The `status.storedVersions` of each CRD named, on the cluster of the kubeconfig's current
/// context (`None`: the cluster has no such CRD); `Err(why)` when no cluster can be reached.
pub fn stored_versions(crds: &[&str]) -> Result<Result<Vec<Option<Vec<String>>>, String>> {
    let stored = block_on(async {
        let client = connect::client(None, None, Some(CHECK_TIMEOUT)).await?;
        let mut out = Vec::new();
        for crd in crds {
            out.push(crd_stored_versions(&client, crd).await?);
        }
        anyhow::Ok(out)
    })?;
    Ok(stored.map_err(|e| format!("{e:#}").replace('\n', " ")))
}

/// Refuses when the cluster (the kubeconfig's current context) still lists a version about to
/// be dropped in its CRD's `status.storedVersions`; warns, saying what to check, when no
/// cluster can be reached. A CRD the cluster does not have is no concern.
pub fn check_dropped(dropped: &[Dropped]) -> Result<()> {
    if dropped.is_empty() {
        return Ok(());
    }
    let offline = |why: &str| {
        for d in dropped {
            crate::errln!(
                "warning: {} removes version {} of CRD {}, and no cluster could be reached to check that no object is still stored in it ({why}).\n  Before applying it, check that `kubectl get crd {} -o jsonpath='{{.status.storedVersions}}'` lists none of {}; if it does, apply the CRD as it was (with the new storage version) and run `{}` first.",
                d.file.display(),
                d.versions.join(", "),
                d.crd,
                d.crd,
                d.versions.join(", "),
                migrate_command(&d.group, &d.kind)
            );
        }
    };
    let names: Vec<&str> = dropped.iter().map(|d| d.crd.as_str()).collect();
    let stored = match stored_versions(&names)? {
        Ok(stored) => stored,
        Err(why) => {
            offline(&why);
            return Ok(());
        }
    };
    let mut refusals = Vec::new();
    for (d, stored) in dropped.iter().zip(stored) {
        let Some(stored) = stored else { continue };
        let still: Vec<&str> = (d.versions.iter())
            .filter(|v| stored.contains(v))
            .map(String::as_str)
            .collect();
        if !still.is_empty() {
            refusals.push(format!(
                "{} removes version {} of CRD {}, but the cluster's CRD still lists it in status.storedVersions [{}]: objects may be stored in it, and kube-apiserver refuses to remove such a version.\n  Migrate them to the storage version first (the cluster's CRD must have the new storage version: if it does not, apply the CRD as it was before this removal, e.g. `make install`):\n    {}\n  then run this again.",
                d.file.display(),
                still.join(", "),
                d.crd,
                stored.join(", "),
                migrate_command(&d.group, &d.kind)
            ));
        }
    }
    if !refusals.is_empty() {
        anyhow::bail!("{}\n  Nothing was written.", refusals.join("\n"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(versions: &[&str]) -> String {
        let versions: String = versions
            .iter()
            .map(|v| format!("  - name: {v}\n    served: true\n    storage: false\n"))
            .collect();
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: memcacheds.cache.example.com\nspec:\n  group: cache.example.com\n  names:\n    kind: Memcached\n    plural: memcacheds\n  scope: Namespaced\n  versions:\n{versions}"
        )
    }

    #[test]
    fn only_versions_the_new_crd_lacks_are_dropped() {
        let file = Path::new("config/crd/bases/cache.example.com_memcacheds.yaml");
        let dropped = dropped_versions(file, &crd(&["v1", "v2", "v3"]), &crd(&["v2"])).unwrap();
        assert_eq!(dropped.versions, ["v1", "v3"]);
        assert_eq!(
            (
                dropped.crd.as_str(),
                dropped.group.as_str(),
                dropped.kind.as_str()
            ),
            (
                "memcacheds.cache.example.com",
                "cache.example.com",
                "Memcached"
            )
        );
        // Added, reordered or unchanged versions drop nothing.
        assert_eq!(
            dropped_versions(file, &crd(&["v1"]), &crd(&["v2", "v1"])),
            None
        );
        // Not a CRD (a role, text that is no YAML): nothing to check.
        let role =
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n";
        assert_eq!(dropped_versions(file, role, role), None);
        assert_eq!(dropped_versions(file, "{ not yaml", &crd(&["v1"])), None);
    }
}
