//! A controller of an owned kind: reconciles each Deployment when it changes and when one of
//! the ReplicaSets it controls does, reading those from the cache the runtime keeps of them.
//!
//! `cargo run -p operator-rs-runtime --example owns -- --leader-elect=false` runs it against
//! the cluster and context of your kubeconfig.

use std::sync::Arc;

use clap::Parser;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use kube::ResourceExt;
use operator_rs_runtime::controller::{
    Action, Context, Controller, Reconciler, Result, WatchConfig,
};
use operator_rs_runtime::manager::{Manager, ManagerArgs};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    manager: ManagerArgs,
}

/// Reports how many ReplicaSets each Deployment controls.
struct Rollouts;

impl Reconciler for Rollouts {
    type Kind = Deployment;

    async fn apply(&self, obj: Arc<Deployment>, ctx: &Context<Deployment>) -> Result<Action> {
        // The cache holds only the ReplicaSets a Deployment controls (an ownerReference with
        // `controller: true`); this one's are those whose controller is `obj`.
        let uid = obj.uid();
        let replica_sets = ctx
            .cache::<ReplicaSet>()?
            .state()
            .iter()
            .filter(|rs| {
                rs.owner_references()
                    .iter()
                    .any(|o| o.controller == Some(true) && Some(&o.uid) == uid.as_ref())
            })
            .count();
        tracing::info!(deployment = %obj.name_any(), replica_sets, "reconciled");
        // Nothing to come back for: a change to the Deployment or to one of its ReplicaSets
        // reconciles it again.
        Ok(Action::await_change())
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let manager = Manager::new("rollouts-operator", cli.manager).await?;
    let rollouts = Controller::new("rollouts", Rollouts)
        .owns::<ReplicaSet>(WatchConfig::default())
        .registration();
    Ok(manager.run(vec![rollouts]).await?)
}
