//! The end-to-end harness of an operator: its `manager` binary run on this machine against a
//! cluster (the current kubeconfig's, or an [`Envtest`] of the test's own) with exactly the
//! rights of its `config/rbac`, like kubebuilder's `test/e2e` and `test/utils`.
//!
//! A project's `tests/e2e.rs` names itself once ([`Project`], implementing [`E2eProject`]) and
//! holds only its kinds' tests; the harness does the rest:
//!
//! - [`E2e`]: one test's session. It installs the CRDs the project names ([`crd_sources`]:
//!   `config/crd/bases`, `config/crd/external` and the CRD files its external kinds were made
//!   from, whichever there are), binds a ServiceAccount ([`MANAGER_NAMESPACE`]) by what
//!   `kubectl kustomize config/rbac` renders (its ClusterRoles named with the project's name as
//!   prefix, as kustomize's `namePrefix` does, and deleted when the session ends) and
//!   runs the manager with a kubeconfig holding its token ([`ManagerProcess`]), points the
//!   webhooks at it ([`LocalWebhooks`]), and waits for what the controllers do
//!   ([`E2e::eventually`], [`E2e::ready`], [`E2e::event`], [`E2e::gone`]). A request the API
//!   server refuses for want of a rule fails the test at once with the manager's log line.
//!   Tests run one at a time (each session holds a lock); a failed test leaves its namespace
//!   for inspection and prints the manager's log.
//! - A namespace-scoped project (PROJECT's `namespaced: true`) runs as it is deployed: each
//!   session's manager has a namespace of its own, where its ServiceAccount, Roles and Lease
//!   are and which it watches (`POD_NAMESPACE`); [`E2e::namespace`] is that one, and
//!   [`E2e::untouched_elsewhere`] checks that the same object in another namespace is left alone.
//! - [`scale_lab`]: the scale lab of a kind (`make scale-test`: `SCALE_TEST=1`, `SCALE_N`
//!   objects on envtest, held to the project's `scale-budgets.yaml`), and [`E2e::at_scale`],
//!   its figures with `E2E_OBJECTS` objects on the current cluster ([`objects`]).
//! - [`fault`]: a kind under the [`Fault`]s of a control plane of its own (restarts, a killed
//!   leader).
//! - [`ManagerProcess`], [`http_get`], [`scrape_metrics`], [`metric_sum`]: the manager
//!   process and its endpoints, usable alone.
//!
//! These helpers assert: they panic with the manager's log, as a test's assertions do.
//!
//! ```no_run
//! use kube::api::Api;
//! use operator_rs_runtime::testing::e2e::{self, E2eProject, Project};
//! # #[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
//! # struct Memcached { metadata: kube::api::ObjectMeta }
//! # impl kube::Resource for Memcached {
//! #     type DynamicType = (); type Scope = k8s_openapi::NamespaceResourceScope;
//! #     fn kind(_: &()) -> std::borrow::Cow<'_, str> { "Memcached".into() }
//! #     fn group(_: &()) -> std::borrow::Cow<'_, str> { "cache.example.com".into() }
//! #     fn version(_: &()) -> std::borrow::Cow<'_, str> { "v1alpha1".into() }
//! #     fn plural(_: &()) -> std::borrow::Cow<'_, str> { "memcacheds".into() }
//! #     fn meta(&self) -> &kube::api::ObjectMeta { &self.metadata }
//! #     fn meta_mut(&mut self) -> &mut kube::api::ObjectMeta { &mut self.metadata }
//! # }
//!
//! /// This operator, as the harness runs it.
//! struct This;
//!
//! impl E2eProject for This {
//!     const PROJECT: Project = Project {
//!         name: "memcached-operator",
//!         dir: env!("CARGO_MANIFEST_DIR"),
//!         // In tests/: env!("CARGO_BIN_EXE_manager") and env!("CARGO_TARGET_TMPDIR").
//!         manager: "target/debug/manager",
//!         scratch: "target/tmp",
//!         ready: e2e::reconciled,
//!     };
//! }
//!
//! type E2e = e2e::E2e<This>;
//!
//! #[tokio::test]
//! #[ignore = "needs a cluster"]
//! async fn memcached_is_reconciled() {
//!     let mut e2e = E2e::start().await;
//!     let namespace = e2e.namespace().await;
//!     let api = Api::<Memcached>::namespaced(e2e.client.clone(), &namespace);
//!     let sample: Memcached = E2e::sample();
//!     e2e.apply(&api, &sample).await;
//!     e2e.ready(&api, "memcached-sample").await;
//!     e2e.delete(&api, "memcached-sample").await;
//!     e2e.delete_namespace(&namespace).await;
//! }
//! ```

mod faults;
mod http;
mod manager;
mod scale;

use std::fmt::Debug;
use std::future::Future;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::{Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::{Mutex, MutexGuard};

pub use crate::testing::scale::AT_SCALE;
pub use faults::{FAULT_OBJECTS, Fault, fault};
pub use http::{http_get, metric_sum, scrape_metrics};
pub use manager::{ManagerProcess, ManagerProcessBuilder, READY_TIMEOUT, REFUSAL_SETTLE};
pub use scale::scale_lab;

use super::envtest::{Envtest, ServiceAccountAccess};
use super::local_webhooks::{LocalWebhooks, free_address};
use super::samples;
use crate::controller::ScopedApi;

/// The field manager of what the harness applies.
pub const FIELD_MANAGER: &str = "e2e";
/// How long a sample may take to be reconciled (pulling an image included).
pub const TIMEOUT: Duration = Duration::from_secs(180);
/// The namespace of the manager's ServiceAccount (and of its leader election Lease).
pub const MANAGER_NAMESPACE: &str = "operator-rs-e2e";

/// The operator under test, as its `tests/e2e.rs` names it (the `env!`s are the test
/// crate's own, so they are given there).
#[derive(Clone, Copy, Debug)]
pub struct Project {
    /// The operator's name: its ServiceAccount's, and the reporting controller of its events.
    pub name: &'static str,
    /// The project folder (`env!("CARGO_MANIFEST_DIR")`): its `config/` is read from there.
    pub dir: &'static str,
    /// The manager binary (`env!("CARGO_BIN_EXE_manager")`).
    pub manager: &'static str,
    /// A folder for logs, kubeconfigs and certificates (`env!("CARGO_TARGET_TMPDIR")`).
    pub scratch: &'static str,
    /// Whether an object (as JSON) is reconciled: [`reconciled`], or the project's own.
    pub ready: fn(&Value) -> bool,
}

/// The objects the harness creates and watches: any kind with a static type, namespaced or
/// cluster-scoped (its own, or a built-in one).
pub trait TestObject:
    Resource<DynamicType = (), Scope: ScopedApi> + Clone + Serialize + DeserializeOwned + Debug
{
}

impl<K> TestObject for K where
    K: Resource<DynamicType = (), Scope: ScopedApi> + Clone + Serialize + DeserializeOwned + Debug
{
}

/// A type naming the operator under test: `E2e<P>`'s `P` (see the [module docs](self)).
pub trait E2eProject: 'static {
    /// The operator under test.
    const PROJECT: Project;
}

/// Whether the operator reconciled `obj`'s current generation: its status reports it in
/// `observedGeneration` (whether that means `Ready` depends on the cluster: with no kubelet,
/// a Deployment's pods never run).
///
/// ```
/// use operator_rs_runtime::testing::e2e::reconciled;
/// use serde_json::json;
///
/// assert!(reconciled(&json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 2}})));
/// assert!(!reconciled(&json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 1}})));
/// assert!(!reconciled(&json!({"metadata": {}, "status": {}})));
/// ```
pub fn reconciled(obj: &Value) -> bool {
    samples::reconciled(obj)
}

/// One test at a time: each runs its own manager.
static SERIAL: Mutex<()> = Mutex::const_new(());

/// One test's session: a client of the cluster and the manager running against it as the
/// operator's ServiceAccount (stopped on drop). See the [module docs](self).
pub struct E2e<P: E2eProject> {
    /// The admin's client (the test's own requests).
    pub client: Client,
    /// The admin's configuration.
    admin: kube::Config,
    /// The manager's ServiceAccount, bound by config/rbac.
    account: ServiceAccountAccess,
    /// A ServiceAccount allowed `GET /metrics`, as Prometheus's is: the managers' metrics are
    /// scraped with its token, over HTTPS.
    reader: ServiceAccountAccess,
    /// The webhooks pointed at the manager, if the project has any.
    webhooks: Option<LocalWebhooks>,
    /// Whether kube-controller-manager runs (it writes the status of Deployments).
    controller_manager: bool,
    manager: Option<ManagerProcess>,
    /// How many managers this test started (each logs to its own file).
    runs: u32,
    /// A namespace-scoped project's manager namespace (its ServiceAccount's, which it watches);
    /// `None` for a cluster-scoped project, whose manager is in [`MANAGER_NAMESPACE`].
    own: Option<String>,
    _serial: MutexGuard<'static, ()>,
    _project: PhantomData<P>,
}

impl<P: E2eProject> E2e<P> {
    /// Installs the CRDs and starts the manager; returns once it is ready.
    pub async fn start() -> Self {
        let mut e2e = Self::connect().await;
        e2e.run_manager().await;
        e2e
    }

    /// Connects to the cluster of the current kubeconfig, as [`E2e::with_admin`] does.
    pub async fn connect() -> Self {
        let admin = kube::Config::infer().await;
        let admin =
            admin.expect("no cluster: set KUBECONFIG or create one (e.g. `kind create cluster`)");
        Self::with_admin(admin, true).await
    }

    /// Connects to a control plane of the test's own, as [`E2e::with_admin`] does.
    pub async fn on(env: &Envtest) -> Self {
        Self::with_admin(env.config().clone(), env.has_controller_manager()).await
    }

    /// Installs the CRDs, binds the manager's ServiceAccount by config/rbac and makes the
    /// webhooks' certificate; no manager runs yet. `controller_manager`: whether
    /// kube-controller-manager runs there.
    pub async fn with_admin(admin: kube::Config, controller_manager: bool) -> Self {
        let serial = SERIAL.lock().await;
        let client = Client::try_from(admin.clone()).expect("a client of the cluster");
        for crds in crd_sources(Path::new(P::PROJECT.dir)) {
            let installed = super::envtest::install_crds_with(&client, &crds).await;
            installed.unwrap_or_else(|e| panic!("installing the CRDs of {}: {e}", crds.display()));
        }
        let dir = Self::scratch().join(test_name());
        let kubeconfig = dir.join("manager.kubeconfig");
        let rbac = Path::new(P::PROJECT.dir).join("config/rbac");
        let project = read_project(Path::new(P::PROJECT.dir));
        let own = super::project::namespaced(&project).then(new_namespace_name);
        let (namespace, name) = (own.as_deref().unwrap_or(MANAGER_NAMESPACE), P::PROJECT.name);
        let account =
            ServiceAccountAccess::from_kustomize(&admin, namespace, name, &rbac, &kubeconfig).await;
        let account = account.unwrap_or_else(|e| panic!("binding the manager by config/rbac: {e}"));
        let reader_kubeconfig = dir.join("reader.kubeconfig");
        let reader_name = format!("{name}-metrics-reader");
        let reader = super::metrics::metrics_reader_named(
            &admin,
            namespace,
            &reader_name,
            &reader_kubeconfig,
        )
        .await;
        let reader = reader.unwrap_or_else(|e| panic!("a metrics reader: {e}"));
        let certs = dir.join("webhook-certs");
        let webhooks = LocalWebhooks::prepare(name, Path::new(P::PROJECT.dir), &certs);
        let webhooks = webhooks.unwrap_or_else(|e| panic!("preparing the webhooks: {e}"));
        Self {
            client,
            admin,
            account,
            reader,
            webhooks,
            controller_manager,
            manager: None,
            runs: 0,
            own,
            _serial: serial,
            _project: PhantomData,
        }
    }

    fn scratch() -> PathBuf {
        PathBuf::from(P::PROJECT.scratch)
    }

    /// The sample of `K` in the project's `config/samples`.
    ///
    /// # Panics
    ///
    /// When there is none, or it is not a `K`.
    pub fn sample<K: Resource<DynamicType = ()> + DeserializeOwned>() -> K {
        let sample = samples::sample(P::PROJECT.dir);
        sample.unwrap_or_else(|e| panic!("{e}"))
    }

    /// Whether kube-controller-manager runs on the cluster (it writes Deployments' status).
    pub fn controller_manager(&self) -> bool {
        self.controller_manager
    }

    /// Starts the manager binary; returns once it answers `/readyz` with 200.
    pub async fn run_manager(&mut self) {
        self.run_manager_with(&[]).await
    }

    /// Starts the manager with `args` besides the harness's own; returns once it is ready.
    pub async fn run_manager_with(&mut self, args: &[&str]) {
        assert!(self.manager.is_none(), "a manager is running already");
        let manager = self.replica("manager", args).await;
        self.manager = Some(manager);
        self.point_webhooks_at_manager().await;
    }

    /// Starts a replica of the manager named `name` (its `POD_NAME`) with `args`, serving
    /// webhooks on a port of its own (a port just left may still be held); returns once it
    /// is ready. The session does not hold it (see [`E2e::replace_manager`]).
    pub async fn replica(&mut self, name: &str, args: &[&str]) -> ManagerProcess {
        self.runs += 1;
        let log = format!("{}-{name}-{}.log", test_name(), self.runs);
        let address = free_address().expect("a free port");
        let webhooks = self.webhooks.as_ref();
        let webhook_args = webhooks.map(|w| w.manager_args_at(address));
        let webhook_args = webhook_args.unwrap_or_else(|| vec!["--webhook-bind-address=0".into()]);
        let mut manager = ManagerProcess::builder(P::PROJECT.manager).name(name);
        if let Some(own) = &self.own {
            // As the Deployment of config/manager tells it (the Downward API).
            manager = manager.env("POD_NAMESPACE", own);
        }
        let manager = manager
            .kubeconfig(self.account.kubeconfig())
            .metrics_token(self.reader.token())
            .args(args.iter().copied())
            .args(webhook_args)
            .log(Self::scratch().join(log));
        manager.start(self.client.clone()).await
    }

    /// Makes `manager` the session's manager and returns the one it held, pointing the
    /// webhooks at the new one.
    pub async fn replace_manager(&mut self, manager: ManagerProcess) -> Option<ManagerProcess> {
        let old = self.manager.replace(manager);
        self.point_webhooks_at_manager().await;
        old
    }

    /// Points the webhooks at the manager (a new one, or a replica that took over).
    async fn point_webhooks_at_manager(&mut self) {
        let address = self
            .manager
            .as_ref()
            .and_then(ManagerProcess::webhooks_address);
        let (Some(webhooks), Some(address)) = (self.webhooks.as_mut(), address) else {
            return;
        };
        let pointed = webhooks.point_at(&self.client, address).await;
        pointed.unwrap_or_else(|e| panic!("pointing the webhooks at the manager: {e}"));
    }

    /// The running manager, if any.
    pub fn manager(&self) -> Option<&ManagerProcess> {
        self.manager.as_ref()
    }

    /// Waits until the manager holds the leader election Lease.
    pub async fn until_leader(&mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while !self.leads().await {
            self.assert_running().await;
            let late = Instant::now() > deadline;
            let tail = self.tail();
            assert!(!late, "the manager does not lead after {timeout:?}: {tail}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Stops the manager like Kubernetes does: SIGTERM, then SIGKILL after 10 seconds, and
    /// takes the webhooks back (objects can be created with no manager running). Returns
    /// whether it exited by itself with status 0.
    pub async fn stop_manager(&mut self) -> bool {
        let stopped = self.manager.take().is_none_or(ManagerProcess::stop);
        if let Some(webhooks) = &self.webhooks {
            let removed = webhooks.uninstall(&self.client).await;
            removed.unwrap_or_else(|e| panic!("taking the webhooks back: {e}"));
        }
        stopped
    }

    /// Panics with the manager's log if it exited or its RBAC lacks a rule it needed.
    pub async fn assert_running(&mut self) {
        let manager = self.manager.as_mut().expect("no manager runs");
        manager.check().await
    }

    /// Whether the manager holds the leader election Lease.
    pub async fn leads(&self) -> bool {
        let manager = self.manager.as_ref().expect("no manager runs");
        manager.leads().await
    }

    /// The end of the manager's log.
    pub fn tail(&self) -> String {
        let manager = self.manager.as_ref();
        manager.map(ManagerProcess::tail).unwrap_or_default()
    }

    /// A memory figure of the running manager (see [`ManagerProcess::memory`]).
    pub fn memory(&self, field: &str) -> f64 {
        self.manager.as_ref().map_or(0.0, |m| m.memory(field))
    }

    /// How many reconciles the manager's controller `name` finished.
    pub async fn reconciles(&self, name: &str) -> u64 {
        match &self.manager {
            Some(manager) => manager.reconciles(name).await,
            None => 0,
        }
    }

    /// The namespace of one test: a new one named after it; in a namespace-scoped project,
    /// the manager's own (the one it watches, made for this session).
    pub async fn namespace(&self) -> String {
        if let Some(own) = &self.own {
            return own.clone();
        }
        self.create_namespace().await
    }

    /// A new namespace, named after the test.
    async fn create_namespace(&self) -> String {
        let name = new_namespace_name();
        let namespace: Namespace =
            serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
        let api = Api::<Namespace>::all(self.client.clone());
        api.create(&Default::default(), &namespace)
            .await
            .expect("creating the namespace");
        name
    }

    /// Deletes a namespace (at the end of a test that passed).
    pub async fn delete_namespace(&self, name: &str) {
        let api = Api::<Namespace>::all(self.client.clone());
        api.delete(name, &DeleteParams::default())
            .await
            .expect("deleting the namespace");
    }

    /// Deletes a namespace and waits until it is gone: every object in it must let go of its
    /// finalizers while the API server refuses new events there.
    ///
    /// Skipped (saying so) for a namespace-scoped manager's own namespace: its RoleBindings go
    /// with the namespace, so it could not take its finalizers off; the namespace is left.
    pub async fn delete_namespace_and_wait(&mut self, name: &str, timeout: Duration) {
        if self.own.as_deref() == Some(name) {
            return println!(
                "SKIPPED: deleting {name}, the namespace-scoped manager's own namespace: its \
                 rights go with it (the namespace is left for inspection)"
            );
        }
        self.delete_namespace(name).await;
        let api = Api::<Namespace>::all(self.client.clone());
        self.gone_within(&api, name, timeout).await
    }

    /// In a namespace-scoped project: applies `obj` (a kind's sample, reconciled in
    /// [`E2e::namespace`] already) in a namespace of its own, and checks that the manager
    /// leaves it untouched (its `resourceVersion` unchanged after [`REFUSAL_SETTLE`]: no
    /// status, no finalizer) and that its log holds no 403 (no line says `forbidden`). A cluster-scoped
    /// project's manager watches every namespace: nothing to check, and it says so.
    pub async fn untouched_elsewhere<K: TestObject>(&mut self, obj: &K) {
        if self.own.is_none() {
            return println!("skipped: a cluster-scoped manager watches every namespace");
        }
        let other = self.create_namespace().await;
        let api = K::Scope::api::<K>(self.client.clone(), Some(&other));
        let mut obj = obj.clone();
        obj.meta_mut().namespace = Some(other.clone());
        let applied = self.apply(&api, &obj).await;
        tokio::time::sleep(REFUSAL_SETTLE).await;
        self.assert_running().await;
        let now = api.get(&applied.name_any()).await.expect("reading it back");
        let (before, after) = (applied.resource_version(), now.resource_version());
        let tail = self.tail();
        assert_eq!(
            before, after,
            "the manager of namespace {:?} changed an object in {other}: {now:?}\n{tail}",
            self.own
        );
        let manager = self.manager.as_ref().expect("no manager runs");
        let log = std::fs::read_to_string(manager.log()).unwrap_or_default();
        // The API server's 403s all say `Forbidden` (reason) or `forbidden` (message).
        let refused = (log.lines()).find(|l| l.to_ascii_lowercase().contains("forbidden"));
        assert!(
            refused.is_none(),
            "the manager was refused: {refused:?}\n{tail}"
        );
        self.delete_namespace(&other).await;
    }

    /// Server-side applies `obj`.
    pub async fn apply<K>(&self, api: &Api<K>, obj: &K) -> K
    where
        K: Resource + Clone + Serialize + DeserializeOwned + Debug,
    {
        let params = PatchParams::apply(FIELD_MANAGER).force();
        let applied = api
            .patch(&obj.name_any(), &params, &Patch::Apply(obj))
            .await;
        applied.unwrap_or_else(|error| panic!("applying {}: {error}", obj.name_any()))
    }

    /// Waits until `check` returns `Some`, polling twice a second for at most `timeout`,
    /// and panics with the manager's log when it never does (or at once when the manager
    /// exits or is refused a request by RBAC).
    pub async fn eventually<T, F>(
        &mut self,
        what: &str,
        timeout: Duration,
        mut check: impl FnMut() -> F,
    ) -> T
    where
        F: Future<Output = Option<T>>,
    {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(value) = check().await {
                return value;
            }
            self.assert_running().await;
            if Instant::now() > deadline {
                panic!(
                    "timed out after {timeout:?} waiting for {what}\n{}",
                    self.tail()
                );
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Whether `obj` is reconciled, by the project's [`Project::ready`].
    pub fn is_ready<K: Serialize>(obj: &K) -> bool {
        let value = serde_json::to_value(obj).unwrap_or_default();
        (P::PROJECT.ready)(&value)
    }

    /// Waits until the object `name` is reconciled for its current generation.
    pub async fn ready<K>(&mut self, api: &Api<K>, name: &str) -> K
    where
        K: Resource + Clone + Serialize + DeserializeOwned + Debug,
    {
        let what = format!("{name} to be reconciled");
        let get = move || async move {
            let obj = api.get_opt(name).await.ok().flatten();
            obj.filter(|obj| Self::is_ready(obj))
        };
        self.eventually(&what, TIMEOUT, get).await
    }

    /// Waits until the operator has recorded an event `reason` on the object `name`.
    pub async fn event(&mut self, namespace: &str, name: &str, reason: &str) -> Event {
        let api = Api::<Event>::namespaced(self.client.clone(), namespace);
        let what = format!("an event {reason} on {name}");
        let api = &api;
        let find = move || async move {
            let events = api.list(&ListParams::default()).await.ok()?;
            events.items.into_iter().find(|event| {
                let regarding = event.regarding.as_ref().and_then(|r| r.name.as_deref());
                regarding == Some(name)
                    && event.reason.as_deref() == Some(reason)
                    && event.reporting_controller.as_deref() == Some(P::PROJECT.name)
            })
        };
        self.eventually(&what, TIMEOUT, find).await
    }

    /// Deletes the object `name` and waits until it is gone (its finalizer removed).
    pub async fn delete<K>(&mut self, api: &Api<K>, name: &str)
    where
        K: Resource + Clone + DeserializeOwned + Debug,
    {
        let deleted = api.delete(name, &DeleteParams::default()).await;
        deleted.unwrap_or_else(|error| panic!("deleting {name}: {error}"));
        self.gone(api, name).await;
    }

    /// Waits until the object `name` is gone.
    pub async fn gone<K>(&mut self, api: &Api<K>, name: &str)
    where
        K: Resource + Clone + DeserializeOwned + Debug,
    {
        self.gone_within(api, name, TIMEOUT).await
    }

    /// Waits at most `timeout` until the object `name` is gone.
    pub async fn gone_within<K>(&mut self, api: &Api<K>, name: &str, timeout: Duration)
    where
        K: Resource + Clone + DeserializeOwned + Debug,
    {
        let what = format!("{name} to be gone");
        let gone = move || async move { matches!(api.get_opt(name).await, Ok(None)).then_some(()) };
        self.eventually(&what, timeout, gone).await
    }
}

impl<P: E2eProject> Drop for E2e<P> {
    fn drop(&mut self) {
        let log = self.tail();
        let _ = self.manager.take().map(ManagerProcess::stop);
        if std::thread::panicking() {
            eprintln!("manager log: {log}");
        }
        // The webhook configurations would point at a manager that is gone, and the
        // cluster-wide RBAC would stay on a shared cluster: take them back, on a thread and
        // runtime of their own (this one is ending).
        let webhooks = self.webhooks.take();
        let rbac = [self.account.cluster_rbac(), self.reader.cluster_rbac()].map(Clone::clone);
        let admin = self.admin.clone();
        let cleanup = std::thread::spawn(move || {
            let mut runtime = tokio::runtime::Builder::new_current_thread();
            let runtime = runtime.enable_all().build().expect("a tokio runtime");
            runtime.block_on(async move {
                let client = Client::try_from(admin).expect("a client of the cluster");
                if let Some(webhooks) = webhooks
                    && let Err(error) = webhooks.uninstall(&client).await
                {
                    eprintln!("removing the e2e webhook configurations: {error}");
                }
                for rbac in rbac {
                    if let Err(error) = rbac.delete(&client).await {
                        eprintln!("removing the e2e cluster-wide RBAC: {error}");
                    }
                }
            })
        });
        let _ = cleanup.join();
    }
}

/// A name for a new namespace: `e2e-<test>-<millis>`.
fn new_namespace_name() -> String {
    let prefix: String = test_name().replace('_', "-").chars().take(48).collect();
    let millis = std::time::SystemTime::UNIX_EPOCH
        .elapsed()
        .unwrap()
        .as_millis();
    format!("e2e-{prefix}-{}", millis % 1_000_000)
}

/// The CRD files and folders the harness installs for the project in `dir`, those that are
/// there: `config/crd/bases` (the project's own kinds, `operator-rs generate crds`), then
/// `config/crd/external` (the CRDs of kinds other projects own, e.g. those of an
/// `--external-api-path` kind: put their files there; `generate` leaves that folder alone),
/// then the CRD file each external kind of PROJECT was made from (`fromCrd.file`, relative to
/// the project unless absolute). A project whose kinds are all external has no
/// `config/crd/bases`, and needs none.
///
/// # Panics
///
/// When PROJECT cannot be read or is not YAML, or names a CRD file that is not there.
pub fn crd_sources(dir: &Path) -> Vec<PathBuf> {
    let holds_yaml = |folder: &Path| {
        std::fs::read_dir(folder).is_ok_and(|entries| {
            entries.filter_map(|e| e.ok()).any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".json")
            })
        })
    };
    let mut out: Vec<PathBuf> = ["config/crd/bases", "config/crd/external"]
        .iter()
        .map(|f| dir.join(f))
        .filter(|f| holds_yaml(f))
        .collect();
    let project = read_project(dir);
    let files = (project["resources"].as_array().into_iter().flatten())
        .filter_map(|r| r["fromCrd"]["file"].as_str());
    for file in files {
        let path = dir.join(file);
        if !path.is_file() {
            panic!(
                "PROJECT names the CRD file {file} (an external kind's `fromCrd`), which is not there ({}): put it back, or run the `create api --from-crd` of the kind again with its new place",
                path.display()
            );
        }
        if !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// The project's PROJECT file, as JSON.
///
/// # Panics
///
/// When PROJECT cannot be read or is not YAML.
fn read_project(dir: &Path) -> Value {
    super::project::read(dir).unwrap_or_else(|e| panic!("{e}"))
}

/// The name of the running test (libtest names its thread after it; `e2e` elsewhere).
///
/// ```
/// let name = std::thread::Builder::new()
///     .name("memcached_v1alpha1_faults::etcd_restart".into())
///     .spawn(operator_rs_runtime::testing::e2e::test_name)
///     .unwrap()
///     .join()
///     .unwrap();
/// assert_eq!(name, "etcd_restart");
/// ```
pub fn test_name() -> String {
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("e2e");
    name.rsplit("::").next().unwrap_or("e2e").to_string()
}

/// `E2E_OBJECTS`: how many objects the `*_at_scale` tests create, if set (unset or empty, as
/// `make test-e2e` passes it by default: none).
///
/// # Panics
///
/// When it is set to something else than a number.
pub fn objects() -> Option<usize> {
    let n = std::env::var("E2E_OBJECTS").ok();
    let n = n.filter(|n| !n.is_empty())?;
    Some(n.parse().expect("E2E_OBJECTS must be a number"))
}
