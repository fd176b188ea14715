//! The runtime of operators scaffolded by [operator-rs](https://github.com/operator-rs/operator-rs):
//! what controller-runtime is to kubebuilder, on kube-rs.
//!
//! A generated operator keeps only its own logic (its types, what each reconcile does, its
//! tests); the plumbing lives here and improves with `operator-rs upgrade-runtime`:
//!
//! - [`manager`]: flags, the client, leader election on a Lease, `/healthz` and `/readyz`,
//!   Prometheus metrics with controller-runtime's names, graceful shutdown, logging.
//! - [`controller`]: a kind's controller from its reconcile functions: trimmed and paged
//!   caches, readiness after the first list, the finalizer, per-object backoff, bounded error
//!   labels, conditions, events that never block cleanup, status written only on change.
//! - [`webhook`]: admission (defaulting, validation) and conversion webhooks over HTTPS,
//!   with certificates from cert-manager, made and rotated by the manager itself, or made for
//!   a manager running outside the cluster (`--webhook-local-url`).
//! - The secure metrics endpoint authenticates and authorizes its clients with TokenReview and
//!   SubjectAccessReview, and serves HTTPS as the webhooks do (`--metrics-secure`).
//! - [`crd`]: the CRD options of `PROJECT` (`crd: {maxDescLen, knownFormatsOnly}`), applied
//!   as `operator-rs generate crds` applies them (the drift test `tests/crds.rs` uses them).
//! - [`storage`] (feature `client`, in `runtime`): storage version migration of a kind, and
//!   [`connect`], the client configuration from a kubeconfig and context.
//!
//! The examples below are the crate's `examples/` (`cargo run -p operator-rs-runtime --example
//! controller`), which CI builds; a test keeps each here as it is there.
//!
//! ## A controller
//!
//! An operator implements [`Reconciler`](controller::Reconciler) for a kind and runs it in a
//! [`Manager`](manager::Manager) (`examples/controller.rs`):
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use clap::Parser;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use operator_rs_runtime::controller::{Action, Context, Controller, Reconciler, Result};
//! use operator_rs_runtime::manager::{Manager, ManagerArgs};
//!
//! /// The operator's command line: the manager's flags (and, in a real operator, its own).
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     manager: ManagerArgs,
//! }
//!
//! /// What this controller does with each ConfigMap: the operator's own logic.
//! struct Audit;
//!
//! impl Reconciler for Audit {
//!     type Kind = ConfigMap;
//!
//!     async fn apply(&self, obj: Arc<ConfigMap>, _ctx: &Context<ConfigMap>) -> Result<Action> {
//!         tracing::info!(name = ?obj.metadata.name, namespace = ?obj.metadata.namespace, "seen");
//!         Ok(Action::requeue(Duration::from_secs(300)))
//!     }
//! }
//!
//! #[tokio::main]
//! async fn main() -> anyhow::Result<()> {
//!     let cli = Cli::parse();
//!     let manager = Manager::new("audit-operator", cli.manager).await?;
//!     let controllers = vec![Controller::new("audit", Audit).registration()];
//!     Ok(manager.run(controllers).await?)
//! }
//! ```
//!
//! ## A controller of an owned kind
//!
//! [`Controller::owns`](controller::Controller::owns) watches the objects a kind controls,
//! reconciles their owner when one changes, and caches them for
//! [`Context::cache`](controller::Context::cache) (`examples/owns.rs`):
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use clap::Parser;
//! use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
//! use kube::ResourceExt;
//! use operator_rs_runtime::controller::{
//!     Action, Context, Controller, Reconciler, Result, WatchConfig,
//! };
//! use operator_rs_runtime::manager::{Manager, ManagerArgs};
//!
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     manager: ManagerArgs,
//! }
//!
//! /// Reports how many ReplicaSets each Deployment controls.
//! struct Rollouts;
//!
//! impl Reconciler for Rollouts {
//!     type Kind = Deployment;
//!
//!     async fn apply(&self, obj: Arc<Deployment>, ctx: &Context<Deployment>) -> Result<Action> {
//!         // The cache holds only the ReplicaSets a Deployment controls (an ownerReference with
//!         // `controller: true`); this one's are those whose controller is `obj`.
//!         let uid = obj.uid();
//!         let replica_sets = ctx
//!             .cache::<ReplicaSet>()?
//!             .state()
//!             .iter()
//!             .filter(|rs| {
//!                 rs.owner_references()
//!                     .iter()
//!                     .any(|o| o.controller == Some(true) && Some(&o.uid) == uid.as_ref())
//!             })
//!             .count();
//!         tracing::info!(deployment = %obj.name_any(), replica_sets, "reconciled");
//!         // Nothing to come back for: a change to the Deployment or to one of its ReplicaSets
//!         // reconciles it again.
//!         Ok(Action::await_change())
//!     }
//! }
//!
//! #[tokio::main]
//! async fn main() -> anyhow::Result<()> {
//!     let cli = Cli::parse();
//!     let manager = Manager::new("rollouts-operator", cli.manager).await?;
//!     let rollouts = Controller::new("rollouts", Rollouts)
//!         .owns::<ReplicaSet>(WatchConfig::default())
//!         .registration();
//!     Ok(manager.run(vec![rollouts]).await?)
//! }
//! ```
//!
//! ## A sharded manager
//!
//! [`Manager::sharded`](manager::Manager::sharded) runs the controllers on every replica, each
//! on its own share of the objects, handed over between replicas as they come and go
//! ([`shard`]; `examples/sharded.rs`):
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use clap::Parser;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, ObjectMeta, Patch, PatchParams};
//! use kube::runtime::reflector::ObjectRef;
//! use kube::{Resource, ResourceExt};
//! use operator_rs_runtime::controller::{
//!     Action, Context, Controller, Reconciler, Result, WatchConfig,
//! };
//! use operator_rs_runtime::manager::{Manager, ManagerArgs, Registration};
//! use operator_rs_runtime::shard::ShardConfig;
//!
//! /// The manager's flags and the shard's timing.
//! #[derive(Parser)]
//! pub struct Cli {
//!     #[command(flatten)]
//!     manager: ManagerArgs,
//!     /// How long a replica's shard Lease stays valid after its last renewal (seconds).
//!     #[arg(long, default_value_t = 15)]
//!     shard_lease_seconds: u64,
//!     /// How often a replica renews its shard Lease and reads the others' (milliseconds).
//!     #[arg(long, default_value_t = 2000)]
//!     shard_renew_millis: u64,
//! }
//!
//! /// Stamps each ConfigMap of its shard with who reconciled it, in which ring generation.
//! struct Stamp;
//!
//! impl Reconciler for Stamp {
//!     type Kind = ConfigMap;
//!
//!     async fn apply(&self, obj: Arc<ConfigMap>, ctx: &Context<ConfigMap>) -> Result<Action> {
//!         let (owner, generation) = match ctx.shard() {
//!             Some(shard) => (
//!                 shard.identity().to_owned(),
//!                 format!("{:016x}", shard.generation()),
//!             ),
//!             None => ("unsharded".to_owned(), String::new()),
//!         };
//!         let data = obj.data.clone().unwrap_or_default();
//!         let stamped = |key: &str, value: &str| data.get(key).map(String::as_str) == Some(value);
//!         if !(stamped("shard-owner", &owner) && stamped("shard-generation", &generation)) {
//!             let api: Api<ConfigMap> =
//!                 Api::namespaced(ctx.client(), &obj.namespace().unwrap_or_default());
//!             let patch = serde_json::json!({
//!                 "data": {"shard-owner": owner, "shard-generation": generation}
//!             });
//!             api.patch(
//!                 &obj.name_any(),
//!                 &PatchParams::default(),
//!                 &Patch::Merge(patch),
//!             )
//!             .await?;
//!         }
//!         // Its owned ConfigMap, created (or updated) by this replica with the same stamp.
//!         let namespace = obj.namespace().unwrap_or_default();
//!         let name = format!("{}-owned", obj.name_any());
//!         let cached = ctx.owned(&ObjectRef::<ConfigMap>::new(&name).within(&namespace))?;
//!         let data = cached
//!             .and_then(|child| child.data.clone())
//!             .unwrap_or_default();
//!         let stamped = |key: &str, value: &str| data.get(key).map(String::as_str) == Some(value);
//!         if !(stamped("shard-owner", &owner) && stamped("shard-generation", &generation)) {
//!             let mut labels = ctx.owned_labels(&obj);
//!             labels.insert(OWNED_LABEL.into(), "true".into());
//!             let child = ConfigMap {
//!                 metadata: ObjectMeta {
//!                     name: Some(name.clone()),
//!                     namespace: Some(namespace.clone()),
//!                     labels: Some(labels),
//!                     owner_references: obj.controller_owner_ref(&()).map(|owner| vec![owner]),
//!                     ..ObjectMeta::default()
//!                 },
//!                 data: Some(
//!                     [("shard-owner", owner), ("shard-generation", generation)]
//!                         .map(|(k, v)| (k.to_owned(), v))
//!                         .into(),
//!                 ),
//!                 ..ConfigMap::default()
//!             };
//!             let api: Api<ConfigMap> = Api::namespaced(ctx.client(), &namespace);
//!             api.patch(&name, &ctx.apply_params(), &Patch::Apply(&child))
//!                 .await?;
//!         }
//!         Ok(Action::requeue(Duration::from_secs(300)))
//!     }
//! }
//!
//! /// The label of the owned ConfigMaps (the owned watch selects them by it).
//! pub const OWNED_LABEL: &str = "shard-example-owned";
//!
//! /// The controllers of this operator.
//! pub fn controllers() -> Vec<Registration> {
//!     let labelled = WatchConfig::default().labels("shard-example=true");
//!     vec![
//!         Controller::new("stamp", Stamp)
//!             .watching(labelled)
//!             .owns::<ConfigMap>(WatchConfig::default().labels(&format!("{OWNED_LABEL}=true")))
//!             .registration(),
//!     ]
//! }
//!
//! /// Runs a sharded manager with `cli`'s flags until SIGTERM.
//! pub async fn run(cli: Cli) -> anyhow::Result<()> {
//!     let shard = ShardConfig {
//!         lease_duration: Duration::from_secs(cli.shard_lease_seconds),
//!         renew_every: Duration::from_millis(cli.shard_renew_millis),
//!         ..ShardConfig::default()
//!     };
//!     let manager = Manager::new("sharded-example", cli.manager).await?;
//!     Ok(manager.sharded_with(shard).run(controllers()).await?)
//! }
//!
//! #[tokio::main]
//! async fn main() -> anyhow::Result<()> {
//!     run(Cli::parse()).await
//! }
//! ```
//!
//! ## Webhooks
//!
//! A [`Defaulter`](webhook::Defaulter) and a [`Validator`](webhook::Validator) served by the
//! manager over HTTPS (`examples/webhook.rs`):
//!
//! ```no_run
//! use clap::Parser;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use operator_rs_runtime::manager::{Manager, ManagerArgs};
//! use operator_rs_runtime::webhook::{
//!     self, FieldError, Rejection, Request, Warnings, Webhook, Webhooks,
//! };
//!
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     manager: ManagerArgs,
//! }
//!
//! /// Labels every ConfigMap with who saw it.
//! struct Labeller;
//!
//! impl webhook::Defaulter<ConfigMap> for Labeller {
//!     async fn apply_defaults(&self, obj: &mut ConfigMap, _req: &Request) -> Result<(), Rejection> {
//!         let labels = obj.metadata.labels.get_or_insert_default();
//!         labels.insert("example.com/seen-by".into(), "webhook-example".into());
//!         Ok(())
//!     }
//! }
//!
//! /// Refuses a ConfigMap with a `password` key: that belongs in a Secret.
//! struct NoPasswords;
//!
//! impl NoPasswords {
//!     fn check(obj: &ConfigMap) -> Result<Warnings, Rejection> {
//!         if obj
//!             .data
//!             .as_ref()
//!             .is_some_and(|d| d.contains_key("password"))
//!         {
//!             return Err(Rejection::fields([FieldError::forbidden(
//!                 "data.password",
//!                 "a password belongs in a Secret",
//!             )]));
//!         }
//!         Ok(Vec::new())
//!     }
//! }
//!
//! impl webhook::Validator<ConfigMap> for NoPasswords {
//!     async fn validate_create(
//!         &self,
//!         obj: &ConfigMap,
//!         _req: &Request,
//!     ) -> Result<Warnings, Rejection> {
//!         Self::check(obj)
//!     }
//!
//!     async fn validate_update(
//!         &self,
//!         _old: &ConfigMap,
//!         new: &ConfigMap,
//!         _req: &Request,
//!     ) -> Result<Warnings, Rejection> {
//!         Self::check(new)
//!     }
//!
//!     async fn validate_delete(
//!         &self,
//!         _obj: &ConfigMap,
//!         _req: &Request,
//!     ) -> Result<Warnings, Rejection> {
//!         Ok(Vec::new())
//!     }
//! }
//!
//! #[tokio::main]
//! async fn main() -> anyhow::Result<()> {
//!     let cli = Cli::parse();
//!     // No configurations of the operator's own here (a project's `config/webhook/manifests.yaml`).
//!     let webhooks = Webhooks::new("").with(vec![
//!         Webhook::defaulting::<ConfigMap>(Labeller),
//!         Webhook::validating::<ConfigMap>(NoPasswords),
//!     ]);
//!     let manager = Manager::new("webhook-example", cli.manager)
//!         .await?
//!         .webhooks(webhooks);
//!     Ok(manager.run(Vec::new()).await?)
//! }
//! ```
//! - `testing` (feature `testing`): a mock API server for reconcile unit tests, and
//!   envtest, a real etcd and kube-apiserver for integration tests.
//!
//! Everything is behind the default feature `runtime`; without it the crate is empty (operator-rs
//! depends on it that way, only to embed its sources).

#![warn(missing_docs)]
// Without feature `runtime` the crate is empty (operator-rs depends on it so, only to embed its
// sources), and the links of the docs above have nothing to point at.
#![cfg_attr(not(feature = "runtime"), allow(rustdoc::broken_intra_doc_links))]

// The public surface is what an operator names: the modules below that are `pub` and not
// hidden, plus `testing`. The rest is plumbing, private; items of it that 0.1.0 made public
// stay reachable at their 0.1.0 paths, hidden from the docs (`manager::health`, `webhook::tls`...).

// `--*-bind-address` values: `manager::parse_bind_address` and `manager::AddressError`.
#[cfg(feature = "runtime")]
mod address;
// Delegated authentication of the secure metrics endpoint; plumbing of the manager. Hidden, not
// private: the runtime's own tests (runtime/tests/metrics_auth.rs) drive it directly.
#[cfg(feature = "runtime")]
#[doc(hidden)]
pub mod auth;
#[cfg(feature = "client")]
pub mod connect;
#[cfg(feature = "runtime")]
pub mod controller;
#[cfg(feature = "crd")]
pub mod crd;
// `--*-interval`/`--*-timeout` values: `manager::parse_duration`.
#[cfg(feature = "runtime")]
mod duration;
#[cfg(feature = "runtime")]
pub mod manager;
// Sharded managers: membership Leases, the ring, handover (`manager::Manager::sharded`).
#[cfg(feature = "runtime")]
pub mod shard;
// Signals and the shutdown they start: `manager::Shutdown`.
#[cfg(feature = "runtime")]
mod shutdown;
#[cfg(feature = "client")]
pub mod storage;
#[cfg(feature = "testing")]
pub mod testing;
// HTTPS of the webhook server and the metrics endpoint; plumbing (0.1.0's `webhook::tls` and
// `webhook::certs` keep its items reachable).
#[cfg(feature = "runtime")]
mod tls;
#[cfg(feature = "runtime")]
pub mod webhook;

/// The examples of the crate docs are the crate's `examples/`, as they are there.
#[cfg(all(test, feature = "runtime"))]
mod examples_are_the_docs {
    use std::path::Path;

    /// The code of an example: its file after its header comment.
    fn code(text: &str) -> String {
        let lines: Vec<&str> = text.lines().skip_while(|l| l.starts_with("//!")).collect();
        lines.join("\n").trim().to_string()
    }

    /// The code blocks of the crate docs (`//!` lines of lib.rs), in order.
    fn doc_blocks(lib: &str) -> Vec<String> {
        let mut blocks = Vec::new();
        let mut current: Option<Vec<&str>> = None;
        for line in lib.lines().map_while(|l| l.strip_prefix("//!")) {
            let line = line.strip_prefix(' ').unwrap_or(line);
            match (&mut current, line.starts_with("```")) {
                (None, true) => current = Some(Vec::new()),
                (Some(block), true) => {
                    blocks.push(block.join("\n").trim().to_string());
                    current = None;
                }
                (Some(block), false) => block.push(line),
                (None, false) => {}
            }
        }
        blocks
    }

    #[test]
    fn each_example_is_a_block_of_the_crate_docs() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
        let blocks = doc_blocks(&lib);
        let mut names: Vec<_> = std::fs::read_dir(root.join("examples"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        names.sort();
        assert!(names.len() >= 3, "examples/ has {names:?}");
        for path in names {
            let code = code(&std::fs::read_to_string(&path).unwrap());
            assert!(
                blocks.contains(&code),
                "{} is not a code block of the crate docs (src/lib.rs) as it is: copy it there \
                 (without its header comment), `//! ` before each line",
                path.display()
            );
        }
    }
}
