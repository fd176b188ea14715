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
//!   of an operator's deletion path.
//!
//! `cargo bench -p operator-rs-runtime --features testing --bench scale [-- N [ROUNDS]]`
//! (default 1,500 objects, 3 rounds; medians printed).

use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::ResourceExt;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use kube::core::GroupVersionKind;
use operator_rs_runtime::storage::{self, Options};
use operator_rs_runtime::testing::envtest::Envtest;
use operator_rs_runtime::testing::scale::{self, PARALLEL};
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
    let env = Envtest::builder().controller_manager(false).start()?;
    let client = env.client()?;
    let load = || std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "{n} objects, {rounds} rounds; load average at the start: {}",
        load().trim()
    );
    let (mut floor, mut migrate) = (Vec::new(), Vec::new());
    let (mut delete_floor, mut created) = (Vec::new(), Vec::new());
    let mut required = Vec::new();
    for round in 0..rounds {
        // The floors: every object written back as read by a bare client, while v1 is stored
        // (no-op writes: the server skips them), then once the storage moved to v2 (the writes
        // a migration needs: each object re-encoded).
        let (v1, _) = things_stored_as_v1(&env, n, &mut created).await?;
        let started = Instant::now();
        write_back_all(&v1).await?;
        floor.push(started.elapsed());
        env.install_crd(&crd(&["v1", "v2"], "v2")).await?;
        let started = Instant::now();
        write_back_all(&v1).await?;
        required.push(started.elapsed());
        remove_crd(&client).await?;

        // migrate-storage on the same objects: storage moved to v2, every object rewritten,
        // v1 narrowed away.
        let (_, namespace) = things_stored_as_v1(&env, n, &mut created).await?;
        env.install_crd(&crd(&["v1", "v2"], "v2")).await?;
        let started = Instant::now();
        storage::migrate(&client, &Options::new(GROUP, "Thing"), |_| {}).await?;
        migrate.push(started.elapsed());

        // Deletion's floor: held by a finalizer, deleted, each finalizer removed.
        let v2 = Api::<DynamicObject>::namespaced_with(client.clone(), &namespace, &things("v2"));
        hold_all(&v2).await?;
        let started = Instant::now();
        v2.delete_collection(&DeleteParams::default(), &ListParams::default())
            .await?;
        release_all(&v2).await?;
        while !v2
            .list(&ListParams::default().limit(1))
            .await?
            .items
            .is_empty()
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        delete_floor.push(started.elapsed());
        remove_crd(&client).await?;
        eprintln!("round {} of {rounds} done", round + 1);
    }
    let median = |d: &[Duration]| scale::percentile(d, 50.0);
    let (f, m) = (median(&floor), median(&migrate));
    println!(
        "created (server-side apply, {PARALLEL} in flight): median {:.2?}",
        median(&created)
    );
    let r = median(&required);
    println!("bare client's no-op writes (floor): median {f:.2?} (all: {floor:.2?})");
    println!(
        "bare client's writes once the storage moved (required writes): median {r:.2?} (all: {required:.2?})"
    );
    println!(
        "migrate-storage: median {m:.2?} (all: {migrate:.2?}): {:.2}x the no-op floor, {:.2}x the required writes",
        m.as_secs_f64() / f.as_secs_f64(),
        m.as_secs_f64() / r.as_secs_f64()
    );
    println!(
        "deletion, bare client removing finalizers (floor): median {:.2?} (all: {delete_floor:.2?})",
        median(&delete_floor)
    );
    println!("load average at the end: {}", load().trim());
    env.stop();
    Ok(())
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
