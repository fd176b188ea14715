//! The project's objects as the chart is built from them: read from what `config/` (the
//! kustomize configuration `make deploy` applies) is built from (the CRDs `generate crds` writes,
//! the RBAC of `config/rbac/kustomization.yaml`'s resources, the webhook configurations
//! `generate webhooks` writes, the manager's container of `config/manager/manager.yaml` and the
//! PodDisruptionBudget of `config/manager`'s kustomization), and
//! changed as `config/default`'s kustomize transformers change them (names prefixed with the
//! project's name, the `system` namespace made the release's), but on parsed objects.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::project::Project;
use crate::workspace::SourceTree;

/// One object and the config file it came from (for messages and template names).
#[derive(Debug, Clone)]
pub struct Object {
    pub file: PathBuf,
    pub value: Value,
}

impl Object {
    pub fn kind(&self) -> &str {
        self.value["kind"].as_str().unwrap_or_default()
    }

    pub fn name(&self) -> &str {
        self.value["metadata"]["name"].as_str().unwrap_or_default()
    }
}

/// What the chart is made of.
#[derive(Debug, Clone)]
pub struct Model {
    pub project_name: String,
    /// A namespace-scoped project (`init --namespaced`): its manager's RBAC is Roles already.
    pub namespaced: bool,
    /// The `(API group, plural)` of every cluster-scoped resource the project can name (rules a
    /// Role cannot hold).
    pub cluster_resources: BTreeSet<(String, String)>,
    /// The CRDs (config/crd/kustomization.yaml's resources), names of those converted by webhook.
    pub crds: Vec<Object>,
    pub conversion_crds: Vec<String>,
    /// config/rbac's objects but the per-kind helper roles.
    pub rbac: Vec<Object>,
    /// The per-kind admin/editor/viewer roles.
    pub rbac_helpers: Vec<Object>,
    /// config/webhook's objects (configurations and Service), when the project has webhooks.
    pub webhooks: Vec<Object>,
    /// config/webhook-self-managed's RBAC.
    pub webhook_self_managed_rbac: Vec<Object>,
    /// config/default/metrics_service.yaml's Service.
    pub metrics_service: Object,
    /// config/prometheus/monitor.yaml's ServiceMonitor.
    pub monitor: Option<Object>,
    /// config/network-policy's NetworkPolicies.
    pub network_policies: Vec<Object>,
    /// The manager's Deployment of config/manager/manager.yaml.
    pub deployment: Object,
    /// The manager's PodDisruptionBudget of config/manager's kustomization (a sharded
    /// project's `pdb.yaml`), if it has one.
    pub disruption_budget: Option<Object>,
}

impl Model {
    pub fn has_webhooks(&self) -> bool {
        !self.webhooks.is_empty()
    }
}

/// Every YAML document of `rel` (none when the file is missing).
fn documents(tree: &dyn SourceTree, rel: &Path) -> Result<Vec<Object>> {
    let Some(text) = tree.read(rel)? else {
        return Ok(Vec::new());
    };
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
        .with_context(|| format!("{}: not valid YAML", rel.display()))?;
    Ok(docs
        .into_iter()
        .filter(|d| d.is_object())
        .map(|value| Object {
            file: rel.to_path_buf(),
            value,
        })
        .collect())
}

/// The `resources:` of the kustomization in `dir` that are files (not folders).
fn kustomization_files(tree: &dyn SourceTree, dir: &str) -> Result<Vec<PathBuf>> {
    let rel = Path::new(dir).join("kustomization.yaml");
    let Some(text) = tree.read(&rel)? else {
        return Ok(Vec::new());
    };
    let k: Value = serde_saphyr::from_str(&text)
        .with_context(|| format!("{}: not valid YAML", rel.display()))?;
    Ok(k["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|r| r.ends_with(".yaml") || r.ends_with(".yml"))
        .map(|r| Path::new(dir).join(r))
        .collect())
}

/// Reads the model of `project` from `tree`.
pub fn read(tree: &dyn SourceTree, project: &Project) -> Result<Model> {
    let mut crds = Vec::new();
    for f in kustomization_files(tree, "config/crd")? {
        crds.extend(documents(tree, &f)?);
    }
    let conversion_crds = (project.resources.iter())
        .filter(|r| r.webhooks.as_ref().is_some_and(|w| w.conversion))
        .map(|r| format!("{}.{}", r.plural, r.qualified_group()))
        .collect();

    let (mut rbac, mut rbac_helpers) = (Vec::new(), Vec::new());
    for f in kustomization_files(tree, "config/rbac")? {
        for o in documents(tree, &f)? {
            let helper = ["-admin-role", "-editor-role", "-viewer-role"]
                .iter()
                .any(|s| o.name().ends_with(s));
            if helper {
                rbac_helpers.push(o)
            } else {
                rbac.push(o)
            }
        }
    }
    let has_webhooks = (project.resources.iter()).any(|r| r.webhooks.is_some());
    let mut webhooks = Vec::new();
    let mut webhook_self_managed_rbac = Vec::new();
    if has_webhooks {
        for f in kustomization_files(tree, "config/webhook")? {
            webhooks.extend(documents(tree, &f)?);
        }
        apply_webhook_patches(tree, &mut webhooks)?;
        for f in kustomization_files(tree, "config/webhook-self-managed")? {
            webhook_self_managed_rbac.extend(documents(tree, &f)?);
        }
    }
    let metrics_service = documents(tree, Path::new("config/default/metrics_service.yaml"))?
        .into_iter()
        .next()
        .context("config/default/metrics_service.yaml: no metrics Service (the chart's metrics Service is built from it)")?;
    let monitor = documents(tree, Path::new("config/prometheus/monitor.yaml"))?
        .into_iter()
        .next();
    let mut network_policies = Vec::new();
    for f in kustomization_files(tree, "config/network-policy")? {
        for o in documents(tree, &f)? {
            let webhook = o.name().contains("webhook");
            if !webhook || has_webhooks {
                network_policies.push(o);
            }
        }
    }
    let manager = Path::new("config/manager/manager.yaml");
    let Some(deployment) = documents(tree, manager)?
        .into_iter()
        .find(|o| o.kind() == "Deployment")
    else {
        bail!(
            "{}: no Deployment: the chart's manager Deployment is built from it (its container's env, resources and security contexts)",
            manager.display()
        );
    };
    let mut disruption_budget = None;
    for f in kustomization_files(tree, "config/manager")? {
        let mut found = documents(tree, &f)?.into_iter();
        disruption_budget =
            disruption_budget.or_else(|| found.find(|o| o.kind() == "PodDisruptionBudget"));
    }
    Ok(Model {
        project_name: project.project_name.clone(),
        namespaced: project.namespaced,
        cluster_resources: crate::rbac::cluster_scoped_resources(project),
        crds,
        conversion_crds,
        rbac,
        rbac_helpers,
        webhooks,
        webhook_self_managed_rbac,
        metrics_service,
        monitor,
        network_policies,
        deployment,
        disruption_budget,
    })
}

/// The strategic-merge patches of config/webhook/kustomization.yaml (inline `patch:` objects,
/// such as the `namespaceSelector` `create webhook` writes for a kind the project does not own)
/// applied to the webhook configurations they name, as kustomize applies them: each `webhooks`
/// entry merged into the one of its `name`, other fields merged key by key. JSON patches (a list,
/// like the cert-manager annotation) are the chart's own business and are left out.
fn apply_webhook_patches(tree: &dyn SourceTree, objects: &mut [Object]) -> Result<()> {
    let rel = Path::new("config/webhook/kustomization.yaml");
    let Some(text) = tree.read(rel)? else {
        return Ok(());
    };
    let k: Value = serde_saphyr::from_str(&text)
        .with_context(|| format!("{}: not valid YAML", rel.display()))?;
    for entry in k["patches"].as_array().into_iter().flatten() {
        let Some(patch) = entry["patch"].as_str() else {
            continue;
        };
        let Ok(Value::Object(patch)) = serde_saphyr::from_str::<Value>(patch) else {
            continue;
        };
        let patch = Value::Object(patch);
        for o in objects.iter_mut() {
            if o.value["kind"] == patch["kind"]
                && o.value["metadata"]["name"] == patch["metadata"]["name"]
            {
                strategic_merge(&mut o.value, &patch);
            }
        }
    }
    Ok(())
}

/// `patch` merged into `base`: mappings key by key, lists of named items (`webhooks`) by name,
/// anything else replaced.
fn strategic_merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                match b.get_mut(k) {
                    Some(existing) => strategic_merge(existing, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (Value::Array(b), Value::Array(p))
            if p.iter().all(|i| i["name"].is_string())
                && b.iter().all(|i| i["name"].is_string()) =>
        {
            for item in p {
                match b.iter_mut().find(|e| e["name"] == item["name"]) {
                    Some(existing) => strategic_merge(existing, item),
                    None => b.push(item.clone()),
                }
            }
        }
        (b, p) => *b = p.clone(),
    }
}

/// Kinds of object with no namespace.
pub fn cluster_scoped(kind: &str) -> bool {
    matches!(
        kind,
        "ClusterRole"
            | "ClusterRoleBinding"
            | "CustomResourceDefinition"
            | "MutatingWebhookConfiguration"
            | "ValidatingWebhookConfiguration"
            | "Namespace"
    )
}
