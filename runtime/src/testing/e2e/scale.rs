//! A kind at scale: the scale lab's run of a kind under the manager ([`E2e::scale_run`],
//! [`scale_lab`], what `make scale-test` runs), and what "settled" means for its objects
//! (neither they nor the Deployments they own written for a while). The kind-agnostic parts
//! (creation in parallel, changes observed, memory, figures, budgets) are
//! [`testing::scale`](crate::testing::scale)'s.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::path::Path;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DeleteParams, ListParams};
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{E2e, E2eProject, TIMEOUT, TestObject, objects};
use crate::controller::ScopedApi;
use crate::testing::envtest::Envtest;
use crate::testing::scale::{self, Budgets, Figures, Request};

pub(super) use crate::testing::scale::{AT_SCALE, create_all};

/// How long objects must go unwritten to count as settled.
const QUIET: Duration = Duration::from_secs(3);
/// How long kube-controller-manager may take over each Deployment the objects own before they
/// count as settled: with its default `--kube-api-qps` of 20 it took about a second for each
/// new Deployment (its ReplicaSet, their statuses, its events).
const CONTROLLER_MANAGER_PER_DEPLOYMENT: Duration = Duration::from_secs(1);

/// An object that changed: `(name, before, after)`, as JSON.
pub(super) type Changed = (String, Value, Value);

/// The scale lab of one kind `K`, as a project's `tests/e2e.rs` runs it (`make scale-test`):
///
/// - `SCALE_TEST=1` (see [`scale::requested`]): on the control plane of this test binary
///   (envtest, `KUBEBUILDER_ASSETS`; every kind's run shares it), `SCALE_N` objects made by
///   `make` (which names them), `SCALE_MANAGERS` manager processes; the figures
///   ([`E2e::scale_run`]) are printed and held to the project's `scale-budgets.yaml`
///   ([`Budgets`]): a figure over its budget fails the test, naming each.
/// - else `E2E_OBJECTS=<n>` ([`objects`]): the same run on the cluster of the current
///   kubeconfig, printed, with no budget but a settled restart that must write nothing;
/// - else it prints a SKIPPED line.
///
/// `change(i)` is a JSON merge patch of object `i`'s spec (for the time until its status
/// reports it); `None` when the test has none. `controller` is `K`'s controller's name.
///
/// # Panics
///
/// When `SCALE_TEST=1` but no control plane can start, on a wrong `SCALE_N`, a wrong
/// `scale-budgets.yaml`, a failure of the run, or a figure over its budget.
pub async fn scale_lab<P, K>(
    namespaced: bool,
    controller: &str,
    make: impl Fn(usize) -> K,
    change: Option<&dyn Fn(usize) -> Value>,
) where
    P: E2eProject,
    K: TestObject + Send + 'static,
{
    let request = scale::requested().unwrap_or_else(|e| panic!("{e}"));
    let (mut e2e, request, budgets) = match request {
        Some(request) => {
            let budgets = Budgets::load(Path::new(P::PROJECT.dir));
            let budgets = budgets.unwrap_or_else(|e| panic!("{e}"));
            assert!(
                Envtest::available(),
                "SCALE_TEST=1 runs on envtest: set KUBEBUILDER_ASSETS (`make scale-test` does)"
            );
            let env = Envtest::shared().expect("starting a control plane from KUBEBUILDER_ASSETS");
            (E2e::<P>::on(env).await, request, Some(budgets))
        }
        None => match objects() {
            Some(n) => (E2e::<P>::connect().await, Request { n, managers: 1 }, None),
            None => {
                return eprintln!(
                    "SKIPPED: the scale lab of {}: set SCALE_TEST=1 (`make scale-test`) or \
                     E2E_OBJECTS=<n> (on the current kubeconfig's cluster) to run it",
                    K::kind(&())
                );
            }
        },
    };
    let namespace = match namespaced {
        true => Some(e2e.namespace().await),
        false => None,
    };
    let api = K::Scope::api::<K>(e2e.client.clone(), namespace.as_deref());
    let figures = e2e.scale_run(&api, controller, request, make, change).await;
    println!("{figures}");
    if let Some(namespace) = &namespace {
        e2e.delete_namespace_and_wait(namespace, TIMEOUT).await;
    }
    match budgets {
        Some(budgets) => {
            let over = figures.exceeded(&budgets);
            assert!(
                over.is_empty(),
                "{} x {}: over the budgets of {}:\n- {}\n(a change made the operator slower or \
                 bigger; or raise the budget there, if that is intended)",
                figures.kind,
                figures.n,
                scale::BUDGETS_FILE,
                over.join("\n- ")
            );
        }
        None => assert!(
            figures.restart_writes == 0,
            "a settled restart wrote objects"
        ),
    }
}

impl<P: E2eProject> E2e<P> {
    /// The figures of a kind at scale, with `n` objects made by `make` (which names them),
    /// printed; a settled restart must write nothing. `namespace`: where they are (deleted
    /// with its objects at the end). See [`E2e::scale_run`].
    pub async fn at_scale<K>(
        &mut self,
        api: &Api<K>,
        namespace: Option<&str>,
        controller: &str,
        n: usize,
        make: impl Fn(usize) -> K,
    ) where
        K: Resource<DynamicType = ()>
            + Clone
            + Serialize
            + DeserializeOwned
            + Debug
            + Send
            + 'static,
    {
        let request = Request { n, managers: 1 };
        let figures = self.scale_run(api, controller, request, make, None).await;
        println!("{figures}");
        if let Some(namespace) = namespace {
            self.delete_namespace_and_wait(namespace, TIMEOUT).await;
        }
        assert_eq!(figures.restart_writes, 0, "a settled restart wrote objects");
    }

    /// The scale lab's run of one kind, its figures returned ([`Figures`]):
    /// 1. idle: the managers start with no object of the kind (their memory then);
    /// 2. settle: `request.n` objects are created while no manager runs, then
    ///    `request.managers` start (with `--leader-elect` when more than one: today one leads
    ///    and the others stand by): the time until every object is reconciled (the project's
    ///    [`Project::ready`](super::Project::ready)), and their highest peak memory;
    /// 3. with `change`, each object's spec is changed: the time until its status reports
    ///    the new generation (p50, p99);
    /// 4. settled restart: a restarted manager reconciles them all; the objects it wrote;
    /// 5. deletion: all deleted as a collection, until none is left (finalizers run).
    ///
    /// `controller` is the name of `K`'s controller (its metrics' `controller` label).
    pub async fn scale_run<K>(
        &mut self,
        api: &Api<K>,
        controller: &str,
        request: Request,
        make: impl Fn(usize) -> K,
        change: Option<&dyn Fn(usize) -> Value>,
    ) -> Figures
    where
        K: Resource<DynamicType = ()>
            + Clone
            + Serialize
            + DeserializeOwned
            + Debug
            + Send
            + 'static,
    {
        let Request { n, managers } = request;
        let kind = K::kind(&()).to_string();
        let timeout = TIMEOUT + Duration::from_millis(50 * n as u64);
        let list = &scale::at_scale();
        let args: &[&str] = if managers > 1 {
            &["--leader-elect"]
        } else {
            &[]
        };

        let _ = self.stop_manager().await;
        let mut replicas = self.run_managers(args, managers).await;
        let idle_memory = self.peak_memory(&replicas);
        let stopped = self.stop_managers(replicas).await;
        assert!(stopped, "the manager did not stop cleanly");

        let created = create_all(api, (0..n).map(&make)).await;
        let started = Instant::now();
        replicas = self.run_managers(args, managers).await;
        self.all_ready(api, list, n, timeout).await;
        let settle = started.elapsed();
        let peak_memory = self.peak_memory(&replicas);

        let (mut observed_p50, mut observed_p99) = (None, None);
        if let Some(change) = change {
            let names: Vec<String> = (0..n).map(|i| make(i).name_any()).collect();
            let took = scale::observed_after_change(api, &names, change, timeout).await;
            observed_p50 = Some(scale::percentile(&took, 50.0));
            observed_p99 = Some(scale::percentile(&took, 99.0));
        }

        for replica in replicas {
            replica.stop();
        }
        let (restart, changed) = self.resync(api, list, controller, n, timeout).await;

        let started = Instant::now();
        let deleted = api.delete_collection(&DeleteParams::default(), list).await;
        deleted.expect("deleting the objects");
        let what = format!("{n} {kind} objects to be gone");
        let all_gone =
            move || async move { api.list(list).await.ok()?.items.is_empty().then_some(()) };
        self.eventually(&what, timeout, all_gone).await;
        let deletion = started.elapsed();

        Figures {
            kind,
            n,
            managers,
            created,
            settle,
            observed_p50,
            observed_p99,
            idle_memory,
            peak_memory,
            restart_writes: changed.len(),
            restart,
            deletion,
        }
    }

    /// Starts the session's manager and `managers - 1` replicas with `args`; returns the
    /// replicas (the session holds the first).
    async fn run_managers(&mut self, args: &[&str], managers: usize) -> Vec<super::ManagerProcess> {
        self.run_manager_with(args).await;
        let mut replicas = Vec::new();
        for i in 1..managers {
            replicas.push(self.replica(&format!("manager-{i}"), args).await);
        }
        replicas
    }

    /// Stops the session's manager and `replicas`: whether all exited cleanly.
    async fn stop_managers(&mut self, replicas: Vec<super::ManagerProcess>) -> bool {
        let mut clean = self.stop_manager().await;
        for replica in replicas {
            clean &= replica.stop();
        }
        clean
    }

    /// The highest peak resident memory (`VmHWM`, bytes) of the session's manager and
    /// `replicas`.
    fn peak_memory(&self, replicas: &[super::ManagerProcess]) -> u64 {
        let all = self.manager().into_iter().chain(replicas);
        all.map(|m| scale::memory(m.pid(), "VmHWM"))
            .max()
            .unwrap_or(0)
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
