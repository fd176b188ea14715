//! A kind at scale: many objects created, reconciled, resynced and deleted under a manager
//! ([`E2e::at_scale`]), and what "settled" means for them (neither they nor the Deployments
//! they own written for a while).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{E2e, E2eProject, FIELD_MANAGER, TIMEOUT};

/// The label of the objects of the at-scale and fault tests.
pub const AT_SCALE: &str = "e2e.operator-rs.dev/at-scale";
/// How long objects must go unwritten to count as settled.
const QUIET: Duration = Duration::from_secs(3);
/// How long kube-controller-manager may take over each Deployment the objects own before they
/// count as settled: with its default `--kube-api-qps` of 20 it took about a second for each
/// new Deployment (its ReplicaSet, their statuses, its events).
const CONTROLLER_MANAGER_PER_DEPLOYMENT: Duration = Duration::from_secs(1);

/// An object that changed: `(name, before, after)`, as JSON.
pub(super) type Changed = (String, Value, Value);

impl<P: E2eProject> E2e<P> {
    /// The figures of a kind at scale, with `n` objects made by `make` (which names them),
    /// printed:
    /// 1. catch-up: `n` objects are created while no manager runs, then one starts: the time
    ///    until all are `Ready`, and its peak memory;
    /// 2. settled resync: a restarted manager reconciles them all and must write nothing (every
    ///    `resourceVersion` stays as it was);
    /// 3. live: `n` more objects are created while it runs: the time until all are `Ready`;
    /// 4. deletion: with their namespace when they have one (the API server then refuses the
    ///    operator's events there, which must not hold up cleanup), else as a collection.
    ///
    /// `controller` is the name of `K`'s controller (its metrics' `controller` label).
    pub async fn at_scale<K>(
        &mut self,
        api: &Api<K>,
        namespace: Option<&str>,
        controller: &str,
        n: usize,
        make: impl Fn(usize) -> K,
    ) where
        K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + Debug,
    {
        let kind = K::kind(&()).to_string();
        let timeout = TIMEOUT + Duration::from_millis(50 * n as u64);
        let selector = format!("{AT_SCALE}=true");
        let list = &ListParams::default().labels(&selector);
        let stopped = self.stop_manager().await;
        assert!(stopped, "the manager did not stop cleanly");

        let started = Instant::now();
        create_all(api, (0..n).map(&make)).await;
        let created = started.elapsed();
        let started = Instant::now();
        self.run_manager().await;
        self.all_ready(api, list, n, timeout).await;
        let caught_up = started.elapsed();
        let catch_up_peak = self.memory("VmHWM");

        let (resync, changed) = self.resync(api, list, controller, n, timeout).await;
        let written = changed.len();

        let started = Instant::now();
        create_all(api, (n..2 * n).map(&make)).await;
        let created_live = started.elapsed();
        self.all_ready(api, list, 2 * n, timeout).await;
        let live = started.elapsed();
        let (peak, now) = (self.memory("VmHWM"), self.memory("VmRSS"));

        let started = Instant::now();
        match namespace {
            Some(namespace) => self.delete_namespace_and_wait(namespace, timeout).await,
            None => {
                let deleted = api.delete_collection(&DeleteParams::default(), list).await;
                deleted.expect("deleting the objects");
                let what = format!("{} {kind} objects to be gone", 2 * n);
                let all_gone = move || async move {
                    api.list(list).await.ok()?.items.is_empty().then_some(())
                };
                self.eventually(&what, timeout, all_gone).await;
            }
        }
        let deleted = started.elapsed();

        let rate = |d: Duration| n as f64 / d.as_secs_f64();
        println!(
            "{kind} x {n}, figures of this run:\n\
             - catch-up: {n} created in {created:.1?} with no manager running; a manager \
             started then had them all Ready after {caught_up:.1?} ({:.0}/s), peak memory \
             {catch_up_peak:.1} MiB\n\
             - settled resync: a restarted manager reconciled all {n} in {resync:.1?} and \
             changed {written} of them\n\
             - live: {n} more created in {created_live:.1?} while it ran, all Ready after \
             {live:.1?} ({:.0}/s); memory peak {peak:.1} MiB, now {now:.1} MiB\n\
             - deletion of all {} ({}): {deleted:.1?}",
            rate(caught_up),
            rate(live),
            2 * n,
            if namespace.is_some() {
                "with their namespace"
            } else {
                "as a collection"
            },
        );
        assert_unchanged(&changed);
    }

    /// Once the `n` objects of `list` are settled, restarts the manager, waits until its
    /// controller `controller` reconciled them all, and returns how long that took from the
    /// restart, and the objects whose `resourceVersion` changed (a settled resync must write
    /// nothing).
    pub(super) async fn resync<K>(
        &mut self,
        api: &Api<K>,
        list: &ListParams,
        controller: &str,
        n: usize,
        timeout: Duration,
    ) -> (Duration, Vec<Changed>)
    where
        K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + Debug,
    {
        let before = settled(api, list, self.controller_manager, timeout).await;
        let started = Instant::now();
        let stopped = self.stop_manager().await;
        assert!(stopped, "the manager did not stop cleanly");
        self.run_manager().await;
        self.reconciled(controller, n, timeout).await;
        let took = started.elapsed();
        // Let writes of the last reconciles land before comparing.
        tokio::time::sleep(Duration::from_secs(2)).await;
        (took, changed(before, versions(api, list).await))
    }

    /// Waits until the manager's controller `controller` finished `n` reconciles.
    pub async fn reconciled(&mut self, controller: &str, n: usize, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while self.reconciles(controller).await < n as u64 {
            self.assert_running().await;
            let late = Instant::now() > deadline;
            let tail = self.tail();
            assert!(!late, "{n} reconciles by {controller}: {tail}");
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Waits until the `n` objects of `list` are all `Ready`.
    pub async fn all_ready<K>(
        &mut self,
        api: &Api<K>,
        list: &ListParams,
        n: usize,
        timeout: Duration,
    ) where
        K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + Debug,
    {
        let what = format!("{n} {} objects to be reconciled", K::kind(&()));
        let all_ready = move || async move {
            let items = api.list(list).await.ok()?.items;
            (items.iter().filter(|obj| Self::is_ready(*obj)).count() == n).then_some(())
        };
        self.eventually(&what, timeout, all_ready).await;
    }
}

/// Server-side applies `objects`, 16 at a time, labelled [`AT_SCALE`].
pub(super) async fn create_all<K>(api: &Api<K>, objects: impl Iterator<Item = K>)
where
    K: Resource + Clone + Serialize + DeserializeOwned + Debug,
{
    let params = &PatchParams::apply(FIELD_MANAGER).force();
    futures::stream::iter(objects)
        .map(|mut obj| async move {
            obj.labels_mut().insert(AT_SCALE.into(), "true".into());
            api.patch(&obj.name_any(), params, &Patch::Apply(&obj))
                .await
        })
        .buffer_unordered(16)
        .try_collect::<Vec<_>>()
        .await
        .expect("creating the objects");
}

/// Every object of `list` as JSON, by name (see [`version`]).
pub(super) async fn versions<K>(api: &Api<K>, list: &ListParams) -> BTreeMap<String, Value>
where
    K: Resource + Clone + Serialize + DeserializeOwned + Debug,
{
    let items = api.list(list).await.expect("listing the objects").items;
    let json = |obj: &K| serde_json::to_value(obj).expect("an object serializes");
    items
        .iter()
        .map(|obj| (obj.name_any(), json(obj)))
        .collect()
}

/// The objects of `before` whose `resourceVersion` is not the same in `after`.
pub(super) fn changed(
    before: BTreeMap<String, Value>,
    after: BTreeMap<String, Value>,
) -> Vec<Changed> {
    let changed = before.into_iter().filter_map(|(name, obj)| {
        let now = after.get(&name).cloned().unwrap_or_default();
        (version(&now) != version(&obj)).then_some((name, obj, now))
    });
    changed.collect()
}

/// Panics with the first of `changed` (a resync of settled objects), if any.
pub(super) fn assert_unchanged(changed: &[Changed]) {
    if let Some((name, before, after)) = changed.first() {
        let n = changed.len();
        panic!(
            "a resync of settled objects must write nothing; {n} changed, {name} was {before}, \
             is {after}"
        );
    }
}

/// Every object of `list` (see [`versions`]) once neither they nor the Deployments they own
/// were written for [`QUIET`] and, when kube-controller-manager runs (`observed`), it has
/// observed each of those Deployments: Ready objects may still change (a Memcached's
/// conditions follow its Deployment's status, which kube-controller-manager writes).
pub(super) async fn settled<K>(
    api: &Api<K>,
    list: &ListParams,
    observed: bool,
    timeout: Duration,
) -> BTreeMap<String, Value>
where
    K: Resource + Clone + Serialize + DeserializeOwned + Debug,
{
    let deployments = Api::<Deployment>::all(api.clone().into_client());
    let mut last = versions(api, list).await;
    let mut last_owned = owned_deployments(&deployments, &last).await;
    let owned = last_owned.len() as u32;
    let deadline = Instant::now() + timeout + CONTROLLER_MANAGER_PER_DEPLOYMENT * owned;
    loop {
        tokio::time::sleep(QUIET).await;
        let now = versions(api, list).await;
        let owned = owned_deployments(&deployments, &now).await;
        let mut written = changed(last, now.clone());
        written.extend(changed(last_owned, owned.clone()));
        let unobserved = owned.iter().find(|(_, d)| observed && !observed_status(d));
        let pending = written.first().map(|(name, ..)| name);
        let Some(pending) = pending.or(unobserved.map(|(name, _)| name)) else {
            return now;
        };
        assert!(Instant::now() < deadline, "never settled: {pending}");
        (last, last_owned) = (now, owned);
    }
}

/// The Deployments owned by `objects` (see [`versions`]), as JSON by namespace and name.
async fn owned_deployments(
    api: &Api<Deployment>,
    objects: &BTreeMap<String, Value>,
) -> BTreeMap<String, Value> {
    let uid = |obj: &Value| obj["metadata"]["uid"].as_str().map(str::to_owned);
    let uids: BTreeSet<String> = objects.values().filter_map(uid).collect();
    let owned = |deployment: &Value| {
        let owners = deployment["metadata"]["ownerReferences"].as_array();
        let mut owners = owners.into_iter().flatten();
        owners.any(|owner| owner["uid"].as_str().is_some_and(|u| uids.contains(u)))
    };
    let items = api.list(&ListParams::default()).await;
    let items = items.expect("listing the Deployments").items;
    let json = |d: &Deployment| serde_json::to_value(d).expect("a Deployment serializes");
    let json = items.iter().map(json);
    let key = |d: &Value| format!("{}/{}", d["metadata"]["namespace"], d["metadata"]["name"]);
    json.filter(owned).map(|d| (key(&d), d)).collect()
}

/// Whether the status of `deployment` reports its current generation.
fn observed_status(deployment: &Value) -> bool {
    let generation = &deployment["metadata"]["generation"];
    deployment["status"]["observedGeneration"] == *generation
}

/// The `resourceVersion` of an object: any write changes it.
fn version(obj: &Value) -> &Value {
    &obj["metadata"]["resourceVersion"]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(version: &str) -> Value {
        json!({"metadata": {"resourceVersion": version}})
    }

    #[test]
    fn changed_lists_rewritten_and_deleted_objects_only() {
        let before = BTreeMap::from([
            ("a".into(), at("1")),
            ("b".into(), at("2")),
            ("c".into(), at("3")),
        ]);
        let after = BTreeMap::from([("a".into(), at("1")), ("b".into(), at("5"))]);
        let changed = changed(before, after);
        let names: Vec<_> = changed.iter().map(|(name, ..)| name.as_str()).collect();
        assert_eq!(names, ["b", "c"]);
        assert_eq!(changed[0].2, at("5"));
        assert_eq!(changed[1].2, Value::Null);
    }

    #[test]
    #[should_panic(expected = "1 changed, b was")]
    fn a_written_settled_object_fails() {
        assert_unchanged(&[("b".into(), at("2"), at("5"))]);
    }

    #[test]
    fn a_deployment_is_observed_at_its_generation() {
        let at = |generation, observed| json!({"metadata": {"generation": generation}, "status": {"observedGeneration": observed}});
        assert!(observed_status(&at(2, 2)));
        assert!(!observed_status(&at(2, 1)));
    }
}
