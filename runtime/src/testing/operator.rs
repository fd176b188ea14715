//! An operator under test: its controllers running on the shared envtest control plane, with
//! exactly the RBAC of its `config/rbac`, once per test binary.
//!
//! [`Operator::shared`] installs the project's CRDs (`config/crd/bases`), creates a
//! ServiceAccount bound by the project's rendered `config/rbac`, and runs the controllers on a
//! thread of their own as that ServiceAccount, so a rule missing from the generated RBAC shows
//! up as a 403 in the manager's log and as an object that never gets reconciled. Tests then
//! create objects with [`Operator::client`] (an admin) and wait for the controllers' work with
//! [`Operator::wait_for`], or with the steps most kinds' tests share: [`Operator::sample`],
//! [`Operator::create_reconciled`], [`Operator::delete_gone`], [`Operator::namespace_deletion`].

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use clap::Parser;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, PostParams};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;

use super::envtest::{Envtest, Error, Result};
use super::samples;
use crate::controller::{Object, ScopedApi};
use crate::manager::{Manager, ManagerArgs, Registration};

/// How long [`Operator::wait_for`] waits by default.
pub const WAIT: Duration = Duration::from_secs(60);

/// The namespace of the operator's ServiceAccount.
pub const NAMESPACE: &str = "operator-system";

/// An operator's controllers running on the shared control plane.
#[derive(Debug)]
pub struct Operator {
    env: &'static Envtest,
    project: PathBuf,
}

static OPERATOR: OnceLock<std::result::Result<Operator, String>> = OnceLock::new();

impl Operator {
    /// Starts (once per test binary) the controllers `controllers()` of the operator `name`
    /// whose project folder is `project` (`env!("CARGO_MANIFEST_DIR")`).
    ///
    /// ```no_run
    /// # fn controllers() -> Vec<operator_rs_runtime::manager::Registration> { vec![] }
    /// use operator_rs_runtime::testing::operator::Operator;
    ///
    /// #[tokio::test]
    /// async fn memcached_becomes_ready() -> anyhow::Result<()> {
    ///     operator_rs_runtime::skip_unless_available!(Ok(()));
    ///     let operator = Operator::shared("memcached-operator", controllers, env!("CARGO_MANIFEST_DIR"))?;
    ///     let namespace = operator.env().create_namespace("memcached").await?;
    ///     // create a Memcached, then operator.wait_for(...)
    ///     # Ok(())
    /// }
    /// ```
    pub fn shared(
        name: &'static str,
        controllers: fn() -> Vec<Registration>,
        project: impl AsRef<Path>,
    ) -> Result<&'static Operator> {
        let project = project.as_ref().to_path_buf();
        let operator = OPERATOR
            .get_or_init(|| Self::start(name, controllers, project).map_err(|e| e.to_string()));
        operator
            .as_ref()
            .map_err(|e| Error::Operator(format!("the operator under test did not start: {e}")))
    }

    fn start(
        name: &'static str,
        controllers: fn() -> Vec<Registration>,
        project: PathBuf,
    ) -> Result<Operator> {
        let env = Envtest::shared()?;
        let (started, ready) = std::sync::mpsc::channel();
        let dir = project.clone();
        // The manager lives on a thread and runtime of its own, as long as the test binary:
        // each #[tokio::test] has its own runtime, which ends with the test.
        std::thread::Builder::new()
            .name("operator-under-test".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("a tokio runtime");
                runtime.block_on(async move {
                    let manager = async {
                        env.install_crds(dir.join("config/crd/bases")).await?;
                        let access = env
                            .service_account_from_kustomize(
                                NAMESPACE,
                                "controller-manager",
                                dir.join("config/rbac"),
                            )
                            .await?;
                        let args = Args::try_parse_from([
                            "manager",
                            "--metrics-bind-address=0",
                            "--health-probe-bind-address=0",
                        ])
                        .expect("valid flags")
                        .manager;
                        let client = access.client()?;
                        Manager::with_client(name, args, client)
                            .await
                            .map_err(|e| Error::Operator(format!("{e:#}")))
                    };
                    match manager.await {
                        Ok(manager) => {
                            let _ = started.send(Ok(()));
                            if let Err(error) = manager.run(controllers()).await {
                                eprintln!("the operator under test stopped: {error:#}");
                            }
                        }
                        Err(error) => {
                            let _ = started.send(Err(error));
                        }
                    }
                });
            })
            .map_err(|e| Error::Operator(format!("starting its thread: {e}")))?;
        ready
            .recv()
            .map_err(|_| Error::Operator("its thread died while starting".into()))??;
        Ok(Operator { env, project })
    }

    /// The control plane it runs on.
    pub fn env(&self) -> &'static Envtest {
        self.env
    }

    /// An admin client, for the test's own requests.
    pub fn client(&self) -> Result<Client> {
        self.env.client()
    }

    /// The project folder.
    pub fn project(&self) -> &Path {
        &self.project
    }

    /// Polls `name` in `api` until `done` holds for it (`Some`), or it is gone (`None`, when
    /// `done(None)` holds), for at most [`WAIT`]; the error shows the object's last state.
    pub async fn wait_for<K>(
        &self,
        api: &Api<K>,
        name: &str,
        what: &str,
        done: impl Fn(Option<&K>) -> bool,
    ) -> Result<Option<K>>
    where
        K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
    {
        let deadline = Instant::now() + WAIT;
        loop {
            let current = api
                .get_opt(name)
                .await
                .map_err(|e| Error::api(format!("reading {name}"), e))?;
            if done(current.as_ref()) {
                return Ok(current);
            }
            if Instant::now() > deadline {
                return Err(Error::Operator(format!(
                    "{name} is not {what} after {WAIT:?}; last seen: {current:#?}"
                )));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The sample of `K` in the project's `config/samples` (see [`samples::sample`]).
    pub fn sample<K: Resource<DynamicType = ()> + DeserializeOwned>(&self) -> Result<K> {
        samples::sample(&self.project)
    }

    /// An admin's `Api` for `K` in `namespace` (cluster-wide for a cluster-scoped kind).
    pub fn api<K: Object>(&self, namespace: &str) -> Result<Api<K>> {
        Ok(<K::Scope as ScopedApi>::api(
            self.client()?,
            Some(namespace),
        ))
    }

    /// Creates `obj` in a new namespace of its own and waits until its status reports the
    /// generation it has ([`samples::reconciled`]); returns it as then stored.
    ///
    /// ```no_run
    /// # async fn f(operator: &operator_rs_runtime::testing::operator::Operator) -> anyhow::Result<()> {
    /// # type Memcached = k8s_openapi::api::core::v1::ConfigMap;
    /// let sample: Memcached = operator.sample()?;
    /// let reconciled = operator.create_reconciled(&sample).await?;
    /// operator.delete_gone(&reconciled).await?;
    /// # Ok(()) }
    /// ```
    pub async fn create_reconciled<K: Object>(&self, obj: &K) -> Result<K> {
        let namespace = self.env.create_namespace("it").await?;
        let api = self.api::<K>(&namespace)?;
        let created = api.create(&PostParams::default(), obj).await;
        let created = created.map_err(|e| Error::api(format!("creating {}", obj.name_any()), e))?;
        let reconciled = |obj: Option<&K>| {
            let obj = serde_json::to_value(obj).unwrap_or_default();
            samples::reconciled(&obj)
        };
        let name = created.name_any();
        let found = self.wait_for(&api, &name, "reconciled", reconciled);
        Ok(found.await?.expect("a reconciled object exists"))
    }

    /// Deletes `obj` and waits until it is gone (its cleanup ran and let it go).
    pub async fn delete_gone<K: Object>(&self, obj: &K) -> Result<()> {
        let api = self.api::<K>(&obj.namespace().unwrap_or_default())?;
        let name = obj.name_any();
        let deleted = api.delete(&name, &DeleteParams::default()).await;
        deleted.map_err(|e| Error::api(format!("deleting {name}"), e))?;
        self.wait_for(&api, &name, "deleted", |o| o.is_none())
            .await?;
        Ok(())
    }

    /// Creates `obj` in a namespace of its own, waits until it is reconciled, deletes the
    /// namespace and waits until it is gone (the controller's cleanup let it go). Without
    /// kube-controller-manager (which empties deleted namespaces) it says so and returns.
    pub async fn namespace_deletion<K: Object>(&self, obj: &K) -> Result<()> {
        if !self.env.has_controller_manager() {
            eprintln!("skipped: namespace deletion needs kube-controller-manager");
            return Ok(());
        }
        let found = self.create_reconciled(obj).await?;
        let namespace = found.namespace().unwrap_or_default();
        let namespaces = Api::<Namespace>::all(self.client()?);
        let deleted = namespaces
            .delete(&namespace, &DeleteParams::default())
            .await;
        deleted.map_err(|e| Error::api(format!("deleting the namespace {namespace}"), e))?;
        let gone = |namespace: Option<&Namespace>| namespace.is_none();
        self.wait_for(&namespaces, &namespace, "deleted", gone)
            .await?;
        Ok(())
    }
}

/// The manager's flags alone.
#[derive(Parser)]
struct Args {
    #[command(flatten)]
    manager: ManagerArgs,
}
