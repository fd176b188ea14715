//! A controller: logs every ConfigMap of the cluster, and comes back to each every five minutes.
//!
//! `cargo run -p operator-rs-runtime --example controller -- --leader-elect=false` runs it
//! against the cluster and context of your kubeconfig (`--help` lists the manager's flags).

use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use k8s_openapi::api::core::v1::ConfigMap;
use operator_rs_runtime::controller::{Action, Context, Controller, Reconciler, Result};
use operator_rs_runtime::manager::{Manager, ManagerArgs};

/// The operator's command line: the manager's flags (and, in a real operator, its own).
#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    manager: ManagerArgs,
}

/// What this controller does with each ConfigMap: the operator's own logic.
struct Audit;

impl Reconciler for Audit {
    type Kind = ConfigMap;

    async fn apply(&self, obj: Arc<ConfigMap>, _ctx: &Context<ConfigMap>) -> Result<Action> {
        tracing::info!(name = ?obj.metadata.name, namespace = ?obj.metadata.namespace, "seen");
        Ok(Action::requeue(Duration::from_secs(300)))
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let manager = Manager::new("audit-operator", cli.manager).await?;
    let controllers = vec![Controller::new("audit", Audit).registration()];
    Ok(manager.run(controllers).await?)
}
