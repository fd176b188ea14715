//! The runtime at scale against the bare-client floor, side by side in one run on one control
//! plane (envtest, `KUBEBUILDER_ASSETS`), with the scale lab's machinery
//! (`operator_rs_runtime::testing::scale`):
//!
//! - `migrate-storage` ([`storage::migrate`]) of n objects stored as v1 after the CRD's storage
//!   moved to v2, against a bare client writing back n such objects as read (pages of 500, 16
//!   in flight): while v1 was still stored (no-op writes, which the server skips) and once the
//!   storage moved (the writes a migration needs);
//! - deletion of n objects held by a finalizer: a collection deletion, then a bare client
//!   removing each finalizer (one JSON patch each, 16 in flight), until none is left: the floor
//!   of an operator's deletion path; and, side by side in the same round, a manager
//!   ([`Controller::finalizer`], the default `cleanup`) deleting as many objects held by its
//!   finalizer: the same collection deletion, then the time until none is left.
//!
//! `cargo bench -p operator-rs-runtime --features testing --bench scale [-- N [ROUNDS]
//! [deletion|migration]]` (default 1,500 objects, 3 rounds, both parts; medians printed).

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResource;
use kube::ResourceExt;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use kube::core::GroupVersionKind;
use operator_rs_runtime::controller::{Action, Context, Controller, Reconciler, Result};
use operator_rs_runtime::manager::{Manager, ManagerArgs};
use operator_rs_runtime::storage::{self, Options};
use operator_rs_runtime::testing::envtest::Envtest;
use operator_rs_runtime::testing::scale::{self, PARALLEL};
use serde::{Deserialize, Serialize};
use serde_json::json;

const GROUP: &str = "bench.operator-rs.dev";
const HOLD: &str = "bench.operator-rs.dev/hold";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    if !Envtest::available() {
        return Ok(());
    }
    let mut args = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<usize>().ok());
    let n = args.next().unwrap_or(1500);
    let rounds = args.next().unwrap_or(3);
    let parts: Vec<String> = std::env::args()
        .filter(|a| a == "deletion" || a == "migration")
        .collect();
    let runs = |part: &str| parts.is_empty() || parts.iter().any(|p| p == part);
    let env = Envtest::builder().controller_manager(false).start()?;
    let client = env.client()?;
    let load = || std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "{n} objects, {rounds} rounds; load average at the start: {}",
        load().trim()
    );
    let (mut floor, mut migrate) = (Vec::new(), Vec::new());
    let (mut delete_floor, mut created) = (Vec::new(), Vec::new());
    let (mut required, mut delete_manager) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        if runs("migration") {
            // The floors: every object written back as read by a bare client, while v1 is
            // stored (no-op writes: the server skips them), then once the storage moved to v2
            // (the writes a migration needs: each object re-encoded).
            let (v1, _) = things_stored_as_v1(&env, n, &mut created).await?;
            let started = Instant::now();
            write_back_all(&v1).await?;
            floor.push(started.elapsed());
            env.install_crd(&crd(&["v1", "v2"], "v2")).await?;
            let started = Instant::now();
            write_back_all(&v1).await?;
            required.push(started.elapsed());
            remove_crd(&client).await?;

            // migrate-storage on the same objects: storage moved to v2, every object
            // rewritten, v1 narrowed away.
            things_stored_as_v1(&env, n, &mut created).await?;
            env.install_crd(&crd(&["v1", "v2"], "v2")).await?;
            let started = Instant::now();
            storage::migrate(&client, &Options::new(GROUP, "Thing"), |_| {}).await?;
            migrate.push(started.elapsed());
            remove_crd(&client).await?;
        }
        if runs("deletion") {
            // Deletion: the floor and the manager on as many objects, each first in every
            // other round (the machine's load drifts).
            for manager in [round % 2 == 1, round % 2 == 0] {
                let (v1, namespace) = things_stored_as_v1(&env, n, &mut created).await?;
                let before = cpu_seconds();
                let took = if manager {
                    manager_deletes_all(&client, &v1, &namespace, n).await?
                } else {
                    floor_deletes_all(&v1).await?
                };
                let used: Vec<String> = (cpu_seconds().into_iter().zip(before))
                    .map(|((name, after), (_, before))| format!("{name} {:.1}", after - before))
                    .collect();
                let who = if manager { "manager" } else { "floor" };
                eprintln!(
                    "deletion, {who}: {took:.2?}; CPU seconds: {}",
                    used.join(", ")
                );
                if manager {
                    delete_manager.push(took);
                } else {
                    delete_floor.push(took);
                }
                remove_crd(&client).await?;
            }
        }
        eprintln!("round {} of {rounds} done", round + 1);
    }
    let median = |d: &[Duration]| scale::percentile(d, 50.0);
    println!(
        "created (server-side apply, {PARALLEL} in flight): median {:.2?}",
        median(&created)
    );
    if runs("migration") {
        let (f, m, r) = (median(&floor), median(&migrate), median(&required));
        println!("bare client's no-op writes (floor): median {f:.2?} (all: {floor:.2?})");
        println!(
            "bare client's writes once the storage moved (required writes): median {r:.2?} (all: {required:.2?})"
        );
        println!(
            "migrate-storage: median {m:.2?} (all: {migrate:.2?}): {:.2}x the no-op floor, {:.2}x the required writes",
            m.as_secs_f64() / f.as_secs_f64(),
            m.as_secs_f64() / r.as_secs_f64()
        );
    }
    if runs("deletion") {
        let (f, m) = (median(&delete_floor), median(&delete_manager));
        println!(
            "deletion, bare client removing finalizers (floor): median {f:.2?} (all: {delete_floor:.2?})"
        );
        println!(
            "deletion, manager (its finalizer, the default cleanup): median {m:.2?} (all: {delete_manager:.2?}): {:.2}x the floor",
            m.as_secs_f64() / f.as_secs_f64()
        );
    }
    println!("load average at the end: {}", load().trim());
    env.stop();
    Ok(())
}

/// Deletion's floor: every object held by a finalizer, a collection deletion, each finalizer
/// removed by a bare client; the time from the deletion until none is left.
async fn floor_deletes_all(api: &Api<DynamicObject>) -> anyhow::Result<Duration> {
    hold_all(api).await?;
    let started = Instant::now();
    delete_collection(api).await;
    release_all(api).await?;
    until_none_left(api).await?;
    Ok(started.elapsed())
}

/// A manager of Things in `namespace` (its finalizer, the default `cleanup`): once it holds
/// all `n` by its finalizer, a collection deletion; the time until none is left.
async fn manager_deletes_all(
    client: &kube::Client,
    api: &Api<DynamicObject>,
    namespace: &str,
    n: usize,
) -> anyhow::Result<Duration> {
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        manager: ManagerArgs,
    }
    let argv = [
        "bench".to_owned(),
        "--metrics-bind-address=0".to_owned(),
        "--health-probe-bind-address=0".to_owned(),
        format!("--watch-namespace={namespace}"),
    ];
    let args = Cli::try_parse_from(argv)?.manager;
    let manager = Manager::with_client("bench", args, client.clone()).await?;
    let shutdown = manager.shutdown();
    let controller = Controller::new("things", Hold).finalizer(HOLD);
    let run = tokio::spawn(manager.run(vec![controller.registration()]));
    loop {
        let listed = api.list_metadata(&ListParams::default()).await;
        let held = (listed.iter().flat_map(|list| &list.items))
            .filter(|o| o.finalizers().iter().any(|f| f == HOLD))
            .count();
        if held == n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let started = Instant::now();
    delete_collection(api).await;
    until_none_left(api).await?;
    let took = started.elapsed();
    shutdown.trigger();
    run.await??;
    Ok(took)
}

/// Deletes every object of `api`, again until a collection deletion completes: kube-apiserver
/// cuts a request at a minute (`--request-timeout`), and 10,000 objects marked one at a time
/// (`--delete-collection-workers=1`) on a loaded machine can take longer.
async fn delete_collection(api: &Api<DynamicObject>) {
    while let Err(error) = api
        .delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
    {
        eprintln!("collection deletion: {error}; again");
    }
}

/// Polls until `api` lists no object.
async fn until_none_left(api: &Api<DynamicObject>) -> anyhow::Result<()> {
    while !api
        .list(&ListParams::default().limit(1))
        .await?
        .items
        .is_empty()
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// A Thing, as the manager's controller reads it (`things("v1")`).
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug)]
#[kube(
    group = "bench.operator-rs.dev",
    version = "v1",
    kind = "Thing",
    namespaced,
    schema = "disabled"
)]
struct ThingSpec {
    size: i64,
    note: String,
}

/// Holds every Thing by its finalizer; `cleanup` is the default.
struct Hold;

impl Reconciler for Hold {
    type Kind = Thing;

    async fn apply(&self, _obj: Arc<Thing>, _ctx: &Context<Thing>) -> Result<Action> {
        Ok(Action::await_change())
    }
}
/// The CRD with v1 alone, and `n` Things in a new namespace (the time it took into `created`).
async fn things_stored_as_v1(
    env: &Envtest,
    n: usize,
    created: &mut Vec<Duration>,
) -> anyhow::Result<(Api<DynamicObject>, String)> {
    env.install_crd(&crd(&["v1"], "v1")).await?;
    let namespace = env.create_namespace("scale").await?;
    let v1 = Api::<DynamicObject>::namespaced_with(env.client()?, &namespace, &things("v1"));
    let objects = (0..n).map(|i| {
        DynamicObject::new(&format!("thing-{i}"), &things("v1"))
            .data(json!({"spec": {"size": i, "note": format!("thing number {i}")}}))
    });
    created.push(scale::create_all(&v1, objects).await);
    Ok((v1, namespace))
}

/// Deletes the CRD (and so every Thing) and waits until it is gone.
async fn remove_crd(client: &kube::Client) -> anyhow::Result<()> {
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    let name = format!("things.{GROUP}");
    crds.delete(&name, &DeleteParams::default()).await?;
    while crds.get_opt(&name).await?.is_some() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

/// Lists pages of 500 and writes every object back as read, [`PARALLEL`] in flight.
async fn write_back_all(api: &Api<DynamicObject>) -> anyhow::Result<()> {
    let mut token: Option<String> = None;
    loop {
        let mut params = ListParams::default().limit(500);
        if let Some(t) = &token {
            params = params.continue_token(t);
        }
        let page = api.list(&params).await?;
        futures::stream::iter(page.items)
            .map(|obj| async move {
                api.replace(&obj.name_any(), &PostParams::default(), &obj)
                    .await
            })
            .buffer_unordered(PARALLEL)
            .try_collect::<Vec<_>>()
            .await?;
        token = page.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            return Ok(());
        }
    }
}

/// Adds the finalizer [`HOLD`] to every object, [`PARALLEL`] in flight.
async fn hold_all(api: &Api<DynamicObject>) -> anyhow::Result<()> {
    let patch = Patch::Merge(json!({"metadata": {"finalizers": [HOLD]}}));
    each(api, &patch).await
}

/// Removes the finalizers of every object, [`PARALLEL`] in flight: one write each.
async fn release_all(api: &Api<DynamicObject>) -> anyhow::Result<()> {
    let patch = Patch::Merge(json!({"metadata": {"finalizers": null}}));
    each(api, &patch).await
}

async fn each(api: &Api<DynamicObject>, patch: &Patch<serde_json::Value>) -> anyhow::Result<()> {
    let names: Vec<String> = api
        .list_metadata(&ListParams::default())
        .await?
        .items
        .iter()
        .map(|o| o.name_any())
        .collect();
    let params = PatchParams::default();
    futures::stream::iter(names)
        .map(|name| {
            let params = &params;
            async move { api.patch(&name, params, patch).await }
        })
        .buffer_unordered(PARALLEL)
        .try_collect::<Vec<_>>()
        .await?;
    Ok(())
}

fn things(version: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(GROUP, version, "Thing"), "things")
}

/// The CRD `things.<GROUP>` serving `versions` (one schema, no conversion), `storage` stored.
fn crd(versions: &[&str], storage: &str) -> CustomResourceDefinition {
    let versions: Vec<_> = versions
        .iter()
        .map(|v| {
            json!({
                "name": v, "served": true, "storage": *v == storage,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "integer"}, "note": {"type": "string"}}}}}},
            })
        })
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("things.{GROUP}")},
        "spec": {
            "group": GROUP,
            "names": {"kind": "Thing", "plural": "things", "singular": "thing", "listKind": "ThingList"},
            "scope": "Namespaced",
            "versions": versions,
        },
    }))
    .expect("a CRD")
}

/// CPU seconds used so far by this process (the bare client or the manager) and its children
/// (etcd, kube-apiserver), by name: where a deletion's time goes.
fn cpu_seconds() -> Vec<(String, f64)> {
    let me = std::process::id();
    let mut used = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        // Processes only (not `self`, `thread-self`).
        if entry.file_name().to_string_lossy().parse::<u32>().is_err() {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ... utime stime: fields 14 and 15, counted from 1.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let pid: u32 = stat[..open].trim().parse().unwrap_or(0);
        let ppid: u32 = fields.get(1).and_then(|f| f.parse().ok()).unwrap_or(0);
        let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
        if (pid == me || ppid == me)
            && let (Some(user), Some(system)) = (ticks(11), ticks(12))
        {
            let name = if pid == me {
                "bench"
            } else {
                &stat[open + 1..close]
            };
            used.push((name.to_owned(), (user + system) / 100.0));
        }
    }
    used.sort_by(|a, b| a.0.cmp(&b.0));
    used
}
