//! A sharded controller: run it three times and the replicas split the ConfigMaps labelled
//! `shard-example=true` between them, each stamping those it reconciles with its identity and
//! ring generation, and keeping for each an owned ConfigMap `<name>-owned` (labelled
//! `shard-example-owned=true` and with its owner's bucket, `Context::owned_labels`) stamped the
//! same; stop or kill one and the others take its share over.
//!
//! `POD_NAME=a cargo run -p operator-rs-runtime --example sharded -- --metrics-bind-address=0
//! --health-probe-bind-address=0` (then `b`, `c`, with `--health-probe-bind-address=0` each)
//! runs it against the cluster and context of your kubeconfig; each replica needs RBAC for
//! `leases` (get, list, create, patch, delete) in the leader election namespace. With
//! `--leader-elect`, one of them also runs the singleton work.

use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};
use operator_rs_runtime::controller::{
    Action, Context, Controller, Reconciler, Result, WatchConfig,
};
use operator_rs_runtime::manager::{Manager, ManagerArgs, Registration};
use operator_rs_runtime::shard::ShardConfig;

/// The manager's flags and the shard's timing.
#[derive(Parser)]
pub struct Cli {
    #[command(flatten)]
    manager: ManagerArgs,
    /// How long a replica's shard Lease stays valid after its last renewal (seconds).
    #[arg(long, default_value_t = 15)]
    shard_lease_seconds: u64,
    /// How often a replica renews its shard Lease and reads the others' (milliseconds).
    #[arg(long, default_value_t = 2000)]
    shard_renew_millis: u64,
}

/// Stamps each ConfigMap of its shard with who reconciled it, in which ring generation.
struct Stamp;

impl Reconciler for Stamp {
    type Kind = ConfigMap;

    async fn apply(&self, obj: Arc<ConfigMap>, ctx: &Context<ConfigMap>) -> Result<Action> {
        let (owner, generation) = match ctx.shard() {
            Some(shard) => (
                shard.identity().to_owned(),
                format!("{:016x}", shard.generation()),
            ),
            None => ("unsharded".to_owned(), String::new()),
        };
        let data = obj.data.clone().unwrap_or_default();
        let stamped = |key: &str, value: &str| data.get(key).map(String::as_str) == Some(value);
        if !(stamped("shard-owner", &owner) && stamped("shard-generation", &generation)) {
            let api: Api<ConfigMap> =
                Api::namespaced(ctx.client(), &obj.namespace().unwrap_or_default());
            let patch = serde_json::json!({
                "data": {"shard-owner": owner, "shard-generation": generation}
            });
            api.patch(
                &obj.name_any(),
                &PatchParams::default(),
                &Patch::Merge(patch),
            )
            .await?;
        }
        // Its owned ConfigMap, created (or updated) by this replica with the same stamp.
        let namespace = obj.namespace().unwrap_or_default();
        let name = format!("{}-owned", obj.name_any());
        let cached = ctx.owned(&ObjectRef::<ConfigMap>::new(&name).within(&namespace))?;
        let data = cached
            .and_then(|child| child.data.clone())
            .unwrap_or_default();
        let stamped = |key: &str, value: &str| data.get(key).map(String::as_str) == Some(value);
        if !(stamped("shard-owner", &owner) && stamped("shard-generation", &generation)) {
            let mut labels = ctx.owned_labels(&obj);
            labels.insert(OWNED_LABEL.into(), "true".into());
            let child = ConfigMap {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    namespace: Some(namespace.clone()),
                    labels: Some(labels),
                    owner_references: obj.controller_owner_ref(&()).map(|owner| vec![owner]),
                    ..ObjectMeta::default()
                },
                data: Some(
                    [("shard-owner", owner), ("shard-generation", generation)]
                        .map(|(k, v)| (k.to_owned(), v))
                        .into(),
                ),
                ..ConfigMap::default()
            };
            let api: Api<ConfigMap> = Api::namespaced(ctx.client(), &namespace);
            api.patch(&name, &ctx.apply_params(), &Patch::Apply(&child))
                .await?;
        }
        Ok(Action::requeue(Duration::from_secs(300)))
    }
}

/// The label of the owned ConfigMaps (the owned watch selects them by it).
pub const OWNED_LABEL: &str = "shard-example-owned";

/// The controllers of this operator.
pub fn controllers() -> Vec<Registration> {
    let labelled = WatchConfig::default().labels("shard-example=true");
    vec![
        Controller::new("stamp", Stamp)
            .watching(labelled)
            .owns::<ConfigMap>(WatchConfig::default().labels(&format!("{OWNED_LABEL}=true")))
            .registration(),
    ]
}

/// Runs a sharded manager with `cli`'s flags until SIGTERM.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let shard = ShardConfig {
        lease_duration: Duration::from_secs(cli.shard_lease_seconds),
        renew_every: Duration::from_millis(cli.shard_renew_millis),
        ..ShardConfig::default()
    };
    let manager = Manager::new("sharded-example", cli.manager).await?;
    Ok(manager.sharded_with(shard).run(controllers()).await?)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    run(Cli::parse()).await
}
