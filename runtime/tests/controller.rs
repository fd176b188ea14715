//! The controller plumbing (`operator_rs_runtime::controller`) end to end on a real control
//! plane: status with conditions and observedGeneration, the finalizer and cleanup, an owned
//! ConfigMap that is cached and recreated, namespace deletion, a settled restart that writes
//! nothing, a reconcile past its deadline that is cancelled and retried, a namespace-scoped
//! manager under exactly its Roles, and a manager of several namespaces, one of them listed late.

mod support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{CustomResource, CustomResourceExt, Resource, ResourceExt};
use operator_rs_runtime::controller::{
    Action, Conditions, Context, Controller, Error, EventType, PAGE_SIZE, Reconciler, Result,
};
use operator_rs_runtime::manager::{Manager, Metrics, Shutdown};
use operator_rs_runtime::skip_unless_available;
use operator_rs_runtime::testing::envtest::Envtest;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use support::gate::Gate;
use support::proxy::Proxy;
use support::{eventually, eventually_async, gone, parse};

/// A test kind: its controller keeps a ConfigMap `<name>-data` holding `spec.data`.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "controller.envtest.example.com",
    version = "v1",
    kind = "Gizmo",
    namespaced,
    status = "GizmoStatus"
)]
struct GizmoSpec {
    data: String,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct GizmoStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    observed_generation: Option<i64>,
    #[serde(default)]
    conditions: Vec<Condition>,
}

const FINALIZER: &str = "controller.envtest.example.com/cleanup";

/// What a controller did, for the assertions.
#[derive(Default)]
struct Counters {
    reconciles: AtomicUsize,
    /// Requests that changed something: ConfigMap applies and status writes.
    writes: AtomicUsize,
    /// Reconciles that found the ConfigMap up to date in the cache.
    cached: AtomicUsize,
    /// Reconciles that got a Gizmo still holding the annotation [`TRIMMED`].
    untrimmed: AtomicUsize,
    cleaned_up: Mutex<Vec<String>>,
    /// Applies that waited on a server that never answers ([`Stalls`]), and those of them
    /// that were cancelled.
    stalled: AtomicUsize,
    cancelled: AtomicUsize,
}

struct Gizmos(Arc<Counters>);

/// The annotation the harness's controller trims from the objects it caches.
const TRIMMED: &str = "example.com/trimmed";

fn trim(gizmo: &mut Gizmo) {
    gizmo.annotations_mut().remove(TRIMMED);
}

fn data_name(gizmo: &Gizmo) -> String {
    format!("{}-data", gizmo.name_any())
}

impl Reconciler for Gizmos {
    type Kind = Gizmo;

    async fn apply(&self, gizmo: Arc<Gizmo>, ctx: &Context<Gizmo>) -> Result<Action> {
        self.0.reconciles.fetch_add(1, Ordering::SeqCst);
        if gizmo.annotations().contains_key(TRIMMED) {
            self.0.untrimmed.fetch_add(1, Ordering::SeqCst);
        }
        let namespace = gizmo.namespace().unwrap_or_default();
        let name = data_name(&gizmo);
        let wanted = BTreeMap::from([("data".to_owned(), gizmo.spec.data.clone())]);
        let cached = ctx.owned::<ConfigMap>(&ObjectRef::new(&name).within(&namespace))?;
        if cached.and_then(|map| map.data.clone()).as_ref() == Some(&wanted) {
            self.0.cached.fetch_add(1, Ordering::SeqCst);
        } else {
            let map = ConfigMap {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    namespace: Some(namespace.clone()),
                    labels: Some(gizmo.labels().clone()),
                    owner_references: gizmo.controller_owner_ref(&()).map(|owner| vec![owner]),
                    ..ObjectMeta::default()
                },
                data: Some(wanted),
                ..ConfigMap::default()
            };
            Api::<ConfigMap>::namespaced(ctx.client(), &namespace)
                .patch(&name, &ctx.apply_params(), &Patch::Apply(&map))
                .await?;
            self.0.writes.fetch_add(1, Ordering::SeqCst);
        }
        let generation = gizmo.meta().generation;
        let current = gizmo.status.as_ref().map(|s| s.conditions.as_slice());
        let status = GizmoStatus {
            observed_generation: generation,
            conditions: vec![Conditions::new(current, generation).set(
                "Ready",
                true,
                "Reconciled",
                "the ConfigMap holds the data",
            )],
        };
        if ctx.apply_status(&gizmo, &status).await? {
            self.0.writes.fetch_add(1, Ordering::SeqCst);
            let note = format!("{name} holds generation {generation:?}");
            ctx.publish(&gizmo, EventType::Normal, "Ready", note).await;
        }
        Ok(Action::await_change())
    }

    async fn cleanup(&self, gizmo: Arc<Gizmo>, _ctx: &Context<Gizmo>) -> Result<Action> {
        self.0.cleaned_up.lock().unwrap().push(gizmo.name_any());
        Ok(Action::await_change())
    }
}

/// Reconciles like [`Gizmos`], except that its first apply sends a request to a server that
/// accepted the connection and never answers (as one that died without closing it).
struct Stalls {
    gizmos: Gizmos,
    silent: kube::Client,
}

impl Reconciler for Stalls {
    type Kind = Gizmo;

    async fn apply(&self, gizmo: Arc<Gizmo>, ctx: &Context<Gizmo>) -> Result<Action> {
        let counters = &self.gizmos.0;
        if counters.stalled.fetch_add(1, Ordering::SeqCst) > 0 {
            return self.gizmos.apply(gizmo, ctx).await;
        }
        /// Counts the stalled apply as cancelled when it is dropped unfinished.
        struct Cancelled<'a>(&'a Counters);
        impl Drop for Cancelled<'_> {
            fn drop(&mut self) {
                self.0.cancelled.fetch_add(1, Ordering::SeqCst);
            }
        }
        let cancelled = Cancelled(counters);
        let maps = Api::<ConfigMap>::namespaced(self.silent.clone(), "default");
        let answer = maps.get("anything").await.map(drop);
        std::mem::forget(cancelled);
        answer?;
        Err(Error::reconcile("answered", "the silent server answered"))
    }
}

/// A manager running the Gizmo controller over the objects labelled `test=<label>`.
struct Running {
    counters: Arc<Counters>,
    metrics: Metrics,
    shutdown: Shutdown,
    run: tokio::task::JoinHandle<Result<(), operator_rs_runtime::manager::Error>>,
}

impl Running {
    async fn start(env: &Envtest, label: &str) -> anyhow::Result<Self> {
        Self::start_with(env.client()?, label, &[], Gizmos).await
    }

    /// With the manager flags `flags` besides the harness's, and the reconciler `reconciler`
    /// makes from the counters.
    async fn start_with<R: Reconciler<Kind = Gizmo>>(
        client: kube::Client,
        label: &str,
        flags: &[&str],
        reconciler: impl FnOnce(Arc<Counters>) -> R,
    ) -> anyhow::Result<Self> {
        Self::start_scoped(client, label, flags, false, reconciler).await
    }

    /// [`Running::start_with`], the manager namespace-scoped ([`Manager::namespaced`]) if
    /// `namespaced`.
    async fn start_scoped<R: Reconciler<Kind = Gizmo>>(
        client: kube::Client,
        label: &str,
        flags: &[&str],
        namespaced: bool,
        reconciler: impl FnOnce(Arc<Counters>) -> R,
    ) -> anyhow::Result<Self> {
        let harness = [
            "manager",
            "--metrics-bind-address=0",
            "--health-probe-bind-address=0",
        ];
        let args = parse(harness.iter().chain(flags))?;
        let mut manager = Manager::with_client("gizmo-operator", args, client).await?;
        if namespaced {
            manager = manager.namespaced();
        }
        let counters = Arc::new(Counters::default());
        let selector = format!("test={label}");
        let controller = Controller::new("gizmo", reconciler(counters.clone()))
            .finalizer(FINALIZER)
            .watching(watcher::Config::default().labels(&selector))
            .trim(trim)
            .owns::<ConfigMap>(watcher::Config::default().labels(&selector));
        let shutdown = manager.shutdown();
        let metrics = manager.metrics();
        let run = tokio::spawn(manager.run(vec![controller.registration()]));
        Ok(Self {
            counters,
            metrics,
            shutdown,
            run,
        })
    }

    async fn stop(self) -> anyhow::Result<Arc<Counters>> {
        self.shutdown.trigger();
        tokio::time::timeout(Duration::from_secs(30), self.run).await???;
        Ok(self.counters)
    }

    /// The value of the metric `series` (its name and labels, as `/metrics` shows them).
    fn metric(&self, series: &str) -> Option<f64> {
        let text = self.metrics.encode();
        let line = text.lines().find(|line| line.starts_with(series))?;
        line.rsplit(' ').next()?.parse().ok()
    }
}

/// The shared control plane with the Gizmo CRD, a namespace of the test's own, and the
/// Gizmo API there.
async fn setup(prefix: &str) -> anyhow::Result<(&'static Envtest, String, Api<Gizmo>)> {
    let env = Envtest::shared()?;
    env.install_crd(&Gizmo::crd()).await?;
    let namespace = env.create_namespace(prefix).await?;
    let gizmos = Api::namespaced(env.client()?, &namespace);
    Ok((env, namespace, gizmos))
}

fn gizmo(name: &str, label: &str, data: &str) -> Gizmo {
    let mut gizmo = Gizmo::new(name, GizmoSpec { data: data.into() });
    gizmo.metadata.labels = Some(BTreeMap::from([("test".into(), label.into())]));
    gizmo
}

/// Whether `gizmo` is Ready for its current generation.
fn ready(gizmo: &Gizmo) -> bool {
    let Some(status) = &gizmo.status else {
        return false;
    };
    let generation = gizmo.metadata.generation;
    status.observed_generation == generation
        && status.conditions.iter().any(|c| {
            c.type_ == "Ready" && c.status == "True" && c.observed_generation == generation
        })
}

/// Waits up to a minute for `name` to be Ready (seconds when all is well).
async fn wait_ready(gizmos: &Api<Gizmo>, name: &str) -> bool {
    eventually_async(Duration::from_secs(60), || async {
        gizmos
            .get_opt(name)
            .await
            .ok()
            .flatten()
            .is_some_and(|g| ready(&g))
    })
    .await
}

async fn data_of(maps: &Api<ConfigMap>, name: &str) -> Option<String> {
    let map = maps.get_opt(name).await.ok().flatten()?;
    map.data?.get("data").cloned()
}

#[tokio::test]
async fn an_object_becomes_ready_for_each_generation() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, namespace, gizmos) = setup("ready").await?;
    let running = Running::start(env, "ready").await?;
    gizmos
        .create(&PostParams::default(), &gizmo("one", "ready", "v1"))
        .await?;
    assert!(
        wait_ready(&gizmos, "one").await,
        "not Ready: {:?}",
        gizmos.get("one").await?.status
    );
    let maps: Api<ConfigMap> = Api::namespaced(env.client()?, &namespace);
    assert_eq!(data_of(&maps, "one-data").await.as_deref(), Some("v1"));
    let first = gizmos.get("one").await?;
    let ready_since = first.status.as_ref().unwrap().conditions[0]
        .last_transition_time
        .clone();

    let patch = serde_json::json!({"spec": {"data": "v2"}});
    gizmos
        .patch("one", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    let updated = eventually_async(Duration::from_secs(30), || async {
        let gizmo = gizmos.get("one").await.unwrap();
        gizmo.metadata.generation == Some(2) && ready(&gizmo)
    })
    .await;
    assert!(
        updated,
        "generation 2 not observed: {:?}",
        gizmos.get("one").await?.status
    );
    assert_eq!(data_of(&maps, "one-data").await.as_deref(), Some("v2"));
    let second = gizmos.get("one").await?;
    let condition = &second.status.as_ref().unwrap().conditions[0];
    assert_eq!(
        condition.last_transition_time, ready_since,
        "Ready stayed True: no transition"
    );

    // Both status writes published a `Ready` event: the second is the series of the first.
    let events: Api<Event> = Api::namespaced(env.client()?, &namespace);
    let ready_events = events.list(&Default::default()).await?.items;
    let ready_events: Vec<_> = (ready_events.into_iter())
        .filter(|e| e.reason.as_deref() == Some("Ready"))
        .collect();
    assert_eq!(ready_events.len(), 1, "{ready_events:?}");
    let event = &ready_events[0];
    assert_eq!(
        event.reporting_controller.as_deref(),
        Some("gizmo-operator")
    );
    let regarding = event.regarding.as_ref().and_then(|r| r.name.as_deref());
    assert_eq!(regarding, Some("one"));
    assert_eq!(event.series.as_ref().map(|s| s.count), Some(2), "{event:?}");
    running.stop().await?;
    Ok(())
}

#[tokio::test]
async fn reconcile_gets_objects_as_trimmed_for_the_cache() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, _namespace, gizmos) = setup("trim").await?;
    let running = Running::start(env, "trim").await?;
    let mut annotated = gizmo("one", "trim", "v1");
    annotated
        .annotations_mut()
        .insert(TRIMMED.into(), "x".into());
    gizmos.create(&PostParams::default(), &annotated).await?;
    assert!(wait_ready(&gizmos, "one").await, "not Ready");
    let kept = gizmos.get("one").await?.annotations().get(TRIMMED).cloned();
    assert_eq!(kept.as_deref(), Some("x"), "the object itself keeps it");
    let counters = running.stop().await?;
    assert!(counters.reconciles.load(Ordering::SeqCst) > 0);
    assert_eq!(counters.untrimmed.load(Ordering::SeqCst), 0);
    Ok(())
}

#[tokio::test]
async fn the_finalizer_is_added_and_cleanup_runs_before_the_object_goes() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, _namespace, gizmos) = setup("finalizer").await?;
    let running = Running::start(env, "finalizer").await?;
    gizmos
        .create(&PostParams::default(), &gizmo("doomed", "finalizer", "x"))
        .await?;
    assert!(wait_ready(&gizmos, "doomed").await);
    let stored = gizmos.get("doomed").await?;
    assert_eq!(stored.finalizers(), [FINALIZER]);
    assert!(running.counters.cleaned_up.lock().unwrap().is_empty());

    gizmos.delete("doomed", &DeleteParams::default()).await?;
    assert!(
        gone(&gizmos, "doomed", Duration::from_secs(30)).await,
        "the finalizer was not removed"
    );
    assert_eq!(*running.counters.cleaned_up.lock().unwrap(), ["doomed"]);
    running.stop().await?;
    Ok(())
}

#[tokio::test]
async fn a_deleted_owned_config_map_is_recreated_and_an_unchanged_one_is_read_from_the_cache()
-> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, namespace, gizmos) = setup("owned").await?;
    let running = Running::start(env, "owned").await?;
    gizmos
        .create(&PostParams::default(), &gizmo("keeper", "owned", "kept"))
        .await?;
    assert!(wait_ready(&gizmos, "keeper").await);
    let maps: Api<ConfigMap> = Api::namespaced(env.client()?, &namespace);
    let first = maps.get("keeper-data").await?;
    let owner = &first.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.controller),
        ("Gizmo", Some(true))
    );

    // Touching the owner without changing its spec: the reconcile finds the ConfigMap in the
    // cache and writes nothing.
    let writes = running.counters.writes.load(Ordering::SeqCst);
    let touch = serde_json::json!({"metadata": {"annotations": {"touched": "yes"}}});
    gizmos
        .patch("keeper", &PatchParams::default(), &Patch::Merge(&touch))
        .await?;
    let counters = running.counters.clone();
    assert!(
        eventually_async(Duration::from_secs(10), || async {
            counters.cached.load(Ordering::SeqCst) >= 1
        })
        .await
    );
    assert_eq!(
        running.counters.writes.load(Ordering::SeqCst),
        writes,
        "an unchanged ConfigMap was written"
    );

    // Deleting the owned ConfigMap reconciles its owner, which recreates it.
    maps.delete("keeper-data", &DeleteParams::default()).await?;
    let recreated = eventually_async(Duration::from_secs(30), || async {
        maps.get_opt("keeper-data")
            .await
            .ok()
            .flatten()
            .is_some_and(|m| m.metadata.uid != first.metadata.uid)
    })
    .await;
    assert!(recreated, "the deleted ConfigMap was not recreated");
    assert_eq!(data_of(&maps, "keeper-data").await.as_deref(), Some("kept"));
    running.stop().await?;
    Ok(())
}

#[tokio::test]
async fn a_namespace_holding_objects_under_a_finalizer_is_deleted() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, namespace, gizmos) = setup("nsdelete").await?;
    let running = Running::start(env, "nsdelete").await?;
    for name in ["a", "b"] {
        gizmos
            .create(&PostParams::default(), &gizmo(name, "nsdelete", name))
            .await?;
    }
    for name in ["a", "b"] {
        assert!(wait_ready(&gizmos, name).await);
    }
    let namespaces: Api<Namespace> = Api::all(env.client()?);
    namespaces
        .delete(&namespace, &DeleteParams::default())
        .await?;
    assert!(
        gone(&namespaces, &namespace, Duration::from_secs(90)).await,
        "namespace {namespace} still there: {:?}",
        namespaces.get(&namespace).await?.status
    );
    let mut cleaned = running.counters.cleaned_up.lock().unwrap().clone();
    cleaned.sort();
    assert_eq!(cleaned, ["a", "b"], "cleanup did not run for every object");
    running.stop().await?;
    Ok(())
}

#[tokio::test]
async fn a_settled_restart_of_the_controller_writes_nothing() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, namespace, gizmos) = setup("settled").await?;
    let names = ["s1", "s2", "s3"];
    let first = Running::start(env, "settled").await?;
    for name in names {
        gizmos
            .create(&PostParams::default(), &gizmo(name, "settled", name))
            .await?;
    }
    for name in names {
        assert!(wait_ready(&gizmos, name).await);
    }
    first.stop().await?;

    let maps: Api<ConfigMap> = Api::namespaced(env.client()?, &namespace);
    let versions = || async {
        let mut versions = Vec::new();
        for name in names {
            versions.push(gizmos.get(name).await.unwrap().resource_version());
            versions.push(
                maps.get(&format!("{name}-data"))
                    .await
                    .unwrap()
                    .resource_version(),
            );
        }
        versions
    };
    let before = versions().await;

    let second = Running::start(env, "settled").await?;
    let counters = second.counters.clone();
    let reconciled = eventually_async(Duration::from_secs(30), || async {
        counters.cached.load(Ordering::SeqCst) >= names.len()
    })
    .await;
    assert!(
        reconciled,
        "the restarted controller did not reconcile every object"
    );
    // Give a stray write time to land before comparing.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let counters = second.stop().await?;
    assert_eq!(
        counters.writes.load(Ordering::SeqCst),
        0,
        "the restart wrote"
    );
    assert_eq!(
        versions().await,
        before,
        "resourceVersions changed across a settled restart"
    );
    Ok(())
}

#[tokio::test]
async fn a_reconcile_past_its_deadline_is_cancelled_and_retried() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, _namespace, gizmos) = setup("deadline").await?;
    // Accepts connections (the kernel does, from its backlog) and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}", silent.local_addr()?).parse()?;
    let silent_client = kube::Client::try_from(kube::Config::new(url))?;
    let flags = ["--reconcile-timeout=1s"];
    let stalls = |counters| Stalls {
        gizmos: Gizmos(counters),
        silent: silent_client,
    };
    let running = Running::start_with(env.client()?, "deadline", &flags, stalls).await?;
    gizmos
        .create(&PostParams::default(), &gizmo("slow", "deadline", "x"))
        .await?;

    assert!(
        wait_ready(&gizmos, "slow").await,
        "not retried after its deadline"
    );
    let counters = &running.counters;
    assert_eq!(
        counters.cancelled.load(Ordering::SeqCst),
        1,
        "not cancelled"
    );
    assert!(counters.stalled.load(Ordering::SeqCst) >= 2, "not retried");
    silent.set_nonblocking(true)?;
    assert!(
        silent.accept().is_ok(),
        "the stalled request never reached the silent server"
    );
    let errors =
        r#"controller_runtime_reconcile_errors_total{controller="gizmo",reason="timeout"}"#;
    assert_eq!(running.metric(errors), Some(1.0));
    // The reconcile that made it ready still holds its worker until its status patch returns,
    // and that patch's watch event starts another: the gauge must settle to 0, not be 0 now.
    let active = r#"controller_runtime_active_workers{controller="gizmo"}"#;
    let idle = eventually(Duration::from_secs(10), || {
        running.metric(active) == Some(0.0)
    })
    .await;
    assert!(
        idle,
        "the active workers gauge stayed at {:?}",
        running.metric(active)
    );
    running.stop().await?;
    Ok(())
}

/// Objects created while a manager is off the control plane, and kube-apiserver restarts
/// meanwhile, come back to it in a relist (its watch expired with the old server), not as watch
/// events: each must still be reconciled (kube's controller drops a request for an object its
/// store does not hold yet, and a relist reaches the store only once its last page is in).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_created_while_the_watch_expired_are_all_reconciled() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    // A control plane of its own: the outage must not hit the other tests.
    let env = Envtest::builder().controller_manager(false).start()?;
    env.install_crd(&Gizmo::crd()).await?;
    let namespace = env.create_namespace("relist").await?;
    let mut config = env.config().clone();
    let upstream = env.server().trim_start_matches("https://").parse()?;
    let proxy = Proxy::start(upstream).await?;
    config.cluster_url = format!("https://{}", proxy.address()).parse()?;
    let running = Running::start_with(config.try_into()?, "relist", &[], Gizmos).await?;
    let gizmos: Api<Gizmo> = Api::namespaced(env.client()?, &namespace);
    let params = PostParams::default();
    gizmos
        .create(&params, &gizmo("before", "relist", "x"))
        .await?;
    assert!(wait_ready(&gizmos, "before").await);

    proxy.cut();
    // A write the manager does not see, so the restarted server's watch cache starts past the
    // manager's last resourceVersion: its watch cannot resume and it relists.
    let maps: Api<ConfigMap> = Api::namespaced(env.client()?, &namespace);
    maps.create(&params, &support::config_map("unseen", &[]))
        .await?;
    tokio::task::block_in_place(|| env.restart_apiserver())?;
    let gizmos: Api<Gizmo> = Api::namespaced(env.client()?, &namespace);
    // More than a page, so that the relist spans several requests.
    let after = 2 * PAGE_SIZE as usize + 50;
    let create = |i| {
        let (gizmos, params) = (&gizmos, &params);
        async move {
            let name = format!("after-{i}");
            gizmos.create(params, &gizmo(&name, "relist", &name)).await
        }
    };
    let creates = futures::stream::iter(0..after)
        .map(create)
        .buffer_unordered(16);
    creates.try_collect::<Vec<_>>().await?;
    proxy.restore();
    // The watch retries with a backoff that grew during the outage.
    let all_ready = eventually_async(Duration::from_secs(90), || async {
        let listed = gizmos.list(&Default::default()).await;
        listed.is_ok_and(|list| list.items.iter().filter(|g| ready(g)).count() == after + 1)
    })
    .await;
    let list = gizmos.list(&Default::default()).await?;
    let never: Vec<_> = list
        .iter()
        .filter(|g| !ready(g))
        .map(|g| g.name_any())
        .collect();
    assert!(all_ready, "never reconciled: {never:?}");
    running.stop().await?;
    Ok(())
}

/// The manager's Role for the Gizmo controller, as `operator-rs generate rbac` writes it in a
/// namespace-scoped project from the markers of its controller (no `namespace=`: the manager's
/// own namespace), with the RoleBinding `config/rbac/role_binding.yaml` scaffolds.
const GIZMO_ROLE: &str = "
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: manager-role
rules:
- apiGroups:
  - ''
  resources:
  - configmaps
  verbs:
  - create
  - delete
  - get
  - list
  - patch
  - update
  - watch
- apiGroups:
  - ''
  - events.k8s.io
  resources:
  - events
  verbs:
  - create
  - patch
- apiGroups:
  - controller.envtest.example.com
  resources:
  - gizmos
  verbs:
  - get
  - list
  - patch
  - update
  - watch
- apiGroups:
  - controller.envtest.example.com
  resources:
  - gizmos/finalizers
  verbs:
  - update
- apiGroups:
  - controller.envtest.example.com
  resources:
  - gizmos/status
  verbs:
  - get
  - patch
  - update
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: manager-rolebinding
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: manager-role
subjects: []
";

/// The logs of everything this thread runs (a current-thread test's spawned tasks included)
/// while the guard lives.
fn capture_logs() -> (Arc<Mutex<Vec<u8>>>, tracing::subscriber::DefaultGuard) {
    #[derive(Clone)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let logs = Arc::new(Mutex::new(Vec::new()));
    let sink = Sink(logs.clone());
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .with_writer(move || sink.clone())
        .finish();
    (logs, tracing::subscriber::set_default(subscriber))
}

/// Grants the Role [`GIZMO_ROLE`] in `namespace` to `access`'s ServiceAccount (which lives
/// in another namespace), as `generate rbac` does for a marker's `namespace=`.
async fn grant_gizmo_role(
    env: &Envtest,
    namespace: &str,
    access: &operator_rs_runtime::testing::envtest::ServiceAccountAccess,
) -> anyhow::Result<()> {
    let subject = serde_json::json!([{
        "kind": "ServiceAccount", "name": access.name(), "namespace": access.namespace()
    }]);
    let params = PatchParams::apply("namespaced-test").force();
    for doc in GIZMO_ROLE.split("---") {
        let mut object: serde_json::Value = serde_saphyr::from_str(doc)?;
        object["metadata"]["namespace"] = namespace.into();
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if object["kind"] == "Role" {
            let roles: Api<k8s_openapi::api::rbac::v1::Role> =
                Api::namespaced(env.client()?, namespace);
            roles.patch(&name, &params, &Patch::Apply(&object)).await?;
        } else {
            object["subjects"] = subject.clone();
            let bindings: Api<k8s_openapi::api::rbac::v1::RoleBinding> =
                Api::namespaced(env.client()?, namespace);
            bindings
                .patch(&name, &params, &Patch::Apply(&object))
                .await?;
        }
    }
    // The authorizer sees new bindings a moment later.
    let client = access.client()?;
    let gizmos: Api<Gizmo> = Api::namespaced(client, namespace);
    let allowed = eventually_async(Duration::from_secs(15), || async {
        gizmos.list_metadata(&Default::default()).await.is_ok()
    })
    .await;
    anyhow::ensure!(allowed, "the Role in {namespace} never took effect");
    Ok(())
}

/// Whether the controller has touched `name` in `gizmos`: a status, its finalizer, or its
/// ConfigMap in `maps`.
async fn touched(gizmos: &Api<Gizmo>, maps: &Api<ConfigMap>, name: &str) -> anyhow::Result<bool> {
    let gizmo = gizmos.get(name).await?;
    Ok(gizmo.status.is_some()
        || !gizmo.finalizers().is_empty()
        || maps.get_opt(&format!("{name}-data")).await?.is_some())
}

/// No line of `logs` reports a 403 (a watch, list or write the manager's RBAC does not allow).
fn assert_no_forbidden(logs: &Mutex<Vec<u8>>) {
    let text = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    assert!(
        text.contains("watching"),
        "the logs were not captured:\n{text}"
    );
    let forbidden: Vec<&str> = (text.lines())
        .filter(|l| l.contains("code: 403") || l.to_lowercase().contains("forbidden"))
        .collect();
    assert!(
        forbidden.is_empty(),
        "403s in the manager's logs:\n{}",
        forbidden.join("\n")
    );
}

#[tokio::test]
async fn a_namespaced_manager_under_its_roles_reconciles_only_its_own_namespace()
-> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, own, own_gizmos) = setup("scoped").await?;
    let other = env.create_namespace("elsewhere").await?;
    let access = env.service_account(&own, "manager", GIZMO_ROLE).await?;
    // Its RBAC allows no cluster-wide watch: a manager that tried one would fail with a 403.
    let everywhere: Api<Gizmo> = Api::all(access.client()?);
    let refused = everywhere.list_metadata(&Default::default()).await;
    assert!(matches!(refused, Err(kube::Error::Api(s)) if s.code == 403));
    let (logs, _guard) = capture_logs();
    // No --watch-namespace: its own namespace, which is its client's (no POD_NAMESPACE here).
    let running = Running::start_scoped(access.client()?, "scoped", &[], true, Gizmos).await?;

    let other_gizmos: Api<Gizmo> = Api::namespaced(env.client()?, &other);
    let params = PostParams::default();
    other_gizmos
        .create(&params, &gizmo("theirs", "scoped", "x"))
        .await?;
    own_gizmos
        .create(&params, &gizmo("ours", "scoped", "x"))
        .await?;
    assert!(
        wait_ready(&own_gizmos, "ours").await,
        "the own namespace's object was not reconciled"
    );
    let own_maps: Api<ConfigMap> = Api::namespaced(env.client()?, &own);
    assert_eq!(data_of(&own_maps, "ours-data").await.as_deref(), Some("x"));
    // A second object, once the first is done: the other namespace's had as long.
    own_gizmos
        .create(&params, &gizmo("ours-too", "scoped", "y"))
        .await?;
    assert!(wait_ready(&own_gizmos, "ours-too").await);
    let other_maps: Api<ConfigMap> = Api::namespaced(env.client()?, &other);
    assert!(
        !touched(&other_gizmos, &other_maps, "theirs").await?,
        "the other namespace's object was reconciled"
    );
    assert!(!running.run.is_finished(), "the manager stopped");
    running.stop().await?;
    assert_no_forbidden(&logs);
    Ok(())
}

#[tokio::test]
async fn watch_namespace_covers_each_namespace_it_names_and_no_other() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, a, a_gizmos) = setup("watch-a").await?;
    let b = env.create_namespace("watch-b").await?;
    let c = env.create_namespace("watch-c").await?;
    let access = env.service_account(&a, "manager", GIZMO_ROLE).await?;
    grant_gizmo_role(env, &b, &access).await?;
    let (logs, _guard) = capture_logs();
    // A cluster-scoped manager restricted by the flag (a namespaced one takes it the same way).
    let flag = format!("--watch-namespace={a},{b}");
    let running = Running::start_scoped(access.client()?, "watch", &[&flag], false, Gizmos).await?;

    let params = PostParams::default();
    let b_gizmos: Api<Gizmo> = Api::namespaced(env.client()?, &b);
    let c_gizmos: Api<Gizmo> = Api::namespaced(env.client()?, &c);
    c_gizmos
        .create(&params, &gizmo("in-c", "watch", "x"))
        .await?;
    a_gizmos
        .create(&params, &gizmo("in-a", "watch", "x"))
        .await?;
    b_gizmos
        .create(&params, &gizmo("in-b", "watch", "x"))
        .await?;
    let log = || String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    assert!(
        wait_ready(&a_gizmos, "in-a").await,
        "a was not reconciled:\n{}",
        log()
    );
    assert!(
        wait_ready(&b_gizmos, "in-b").await,
        "b was not reconciled:\n{}",
        log()
    );
    // An owned ConfigMap deleted in b is seen through b's watch and recreated.
    let b_maps: Api<ConfigMap> = Api::namespaced(env.client()?, &b);
    b_maps.delete("in-b-data", &DeleteParams::default()).await?;
    assert!(
        eventually_async(Duration::from_secs(30), || async {
            data_of(&b_maps, "in-b-data").await.as_deref() == Some("x")
        })
        .await,
        "the ConfigMap deleted in b was not recreated"
    );
    let c_maps: Api<ConfigMap> = Api::namespaced(env.client()?, &c);
    assert!(
        !touched(&c_gizmos, &c_maps, "in-c").await?,
        "c was reconciled"
    );
    running.stop().await?;
    assert_no_forbidden(&logs);
    Ok(())
}

/// An object created in one watched namespace while another is still being listed (the
/// manager just started, that list answered late) is reconciled: the namespaces' watches feed
/// one cache, which must keep what the first namespace's watch saw before the last list came
/// in (before, it was lost: the controller dropped the object and never reconciled it).
#[tokio::test]
async fn an_object_created_while_another_namespace_is_still_listed_is_reconciled()
-> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, a, a_gizmos) = setup("late-a").await?;
    let b = env.create_namespace("late-b").await?;
    let gizmos_in =
        |ns: &str| format!("/apis/controller.envtest.example.com/v1/namespaces/{ns}/gizmos?");
    let (a_gizmos_path, b_gizmos_path) = (gizmos_in(&a), gizmos_in(&b));
    // The controller's list in b (it selects by label; the manager's startup check does not).
    let gate = Gate::new(move |request| {
        request.starts_with(&b_gizmos_path)
            && request.contains("labelSelector=")
            && !request.contains("watch=true")
    });
    let (logs, _guard) = capture_logs();
    let flag = format!("--watch-namespace={a},{b}");
    let client = gate.client(env.config().clone())?;
    let running = Running::start_with(client, "late", &[&flag], Gizmos).await?;
    // a's watch starts once its list is in.
    let a_listed = eventually(Duration::from_secs(30), || {
        gate.sent(|request| request.starts_with(&a_gizmos_path) && request.contains("watch=true"))
    })
    .await;
    assert!(a_listed, "a was never watched");
    let params = PostParams::default();
    a_gizmos
        .create(&params, &gizmo("early", "late", "x"))
        .await?;
    let b_gizmos: Api<Gizmo> = Api::namespaced(env.client()?, &b);
    b_gizmos
        .create(&params, &gizmo("in-b", "late", "x"))
        .await?;
    // Time for a's watch to see it while b's list is held.
    tokio::time::sleep(Duration::from_secs(1)).await;
    gate.open();
    let log = || String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    assert!(
        wait_ready(&a_gizmos, "early").await,
        "the object created while b was listed was not reconciled:\n{}",
        log()
    );
    assert!(wait_ready(&b_gizmos, "in-b").await, "b was not reconciled");
    running.stop().await?;
    Ok(())
}
