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
//!
//! A namespace-scoped project (PROJECT's `namespaced: true`) runs as its README tells a user
//! to deploy one that watches other namespaces than its own: the manager is
//! [`Manager::namespaced`] with `--watch-namespace` naming a set of test namespaces made at
//! start (one per resource of PROJECT, and two more), and the manager's Role
//! (`config/rbac/role.yaml`'s) with its RoleBinding is in each of them. [`Operator::namespace`]
//! hands them out in turn; a cluster-scoped operator's tests get a new namespace each.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, PostParams};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::envtest::{Envtest, Error, Result, kustomize, parse_documents};
use super::{project, samples};
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
    namespaces: Namespaces,
}

/// Where the tests' objects go.
#[derive(Debug)]
enum Namespaces {
    /// A cluster-scoped operator watches every namespace: each test gets a new one.
    New,
    /// A namespace-scoped operator watches these alone (never empty), its Role in each;
    /// handed out in turn.
    Watched {
        names: Vec<String>,
        next: AtomicUsize,
    },
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
    ///     let namespace = operator.namespace().await?;
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
                        let watched = watched_namespaces(env, &dir).await?;
                        let rbac = kustomize(&dir.join("config/rbac"))?;
                        let rbac = match &watched {
                            Some(names) => with_manager_roles_in(&dir, &rbac, names)?,
                            None => rbac,
                        };
                        let access = env
                            .service_account(NAMESPACE, "controller-manager", &rbac)
                            .await?;
                        let mut flags = vec![
                            "manager".to_string(),
                            "--metrics-bind-address=0".into(),
                            "--health-probe-bind-address=0".into(),
                        ];
                        if let Some(names) = &watched {
                            flags.push(format!("--watch-namespace={}", names.join(",")));
                        }
                        let args = Args::try_parse_from(flags).expect("valid flags").manager;
                        let client = access.client()?;
                        let manager = Manager::with_client(name, args, client).await;
                        let manager = manager.map_err(|e| Error::Operator(format!("{e:#}")))?;
                        let manager = match watched {
                            Some(_) => manager.namespaced(),
                            None => manager,
                        };
                        Ok::<_, Error>((manager, watched))
                    };
                    match manager.await {
                        Ok((manager, watched)) => {
                            let _ = started.send(Ok(watched));
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
        let watched = ready
            .recv()
            .map_err(|_| Error::Operator("its thread died while starting".into()))??;
        let namespaces = match watched {
            Some(names) => Namespaces::Watched {
                names,
                next: AtomicUsize::new(0),
            },
            None => Namespaces::New,
        };
        Ok(Operator {
            env,
            project,
            namespaces,
        })
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

    /// A namespace for a test's objects, which the controllers watch: a new one for a
    /// cluster-scoped operator; for a namespace-scoped one (PROJECT's `namespaced: true`), the
    /// next of those it watches, in turn (shared once each was handed out: give objects
    /// distinct names).
    pub async fn namespace(&self) -> Result<String> {
        match &self.namespaces {
            Namespaces::New => self.env.create_namespace("it").await,
            Namespaces::Watched { names, next } => {
                Ok(names[next.fetch_add(1, Ordering::Relaxed) % names.len()].clone())
            }
        }
    }

    /// Creates `obj` in a namespace of its own ([`Operator::namespace`]) and waits until its
    /// status reports the generation it has ([`samples::reconciled`]); returns it as then
    /// stored.
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
        self.create_until(obj, "reconciled", reconciled).await
    }

    /// Creates `obj` in a namespace of its own ([`Operator::namespace`]) and waits until
    /// `done` holds for it (see [`Operator::wait_for`]; `what` names the state in the error);
    /// returns it as then stored.
    ///
    /// ```no_run
    /// # async fn f(operator: &operator_rs_runtime::testing::operator::Operator) -> anyhow::Result<()> {
    /// # type Memcached = k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::ResourceExt;
    /// let sample: Memcached = operator.sample()?;
    /// let finalized = |o: Option<&Memcached>| o.is_some_and(|o| !o.finalizers().is_empty());
    /// let taken_in = operator.create_until(&sample, "taken in", finalized).await?;
    /// # Ok(()) }
    /// ```
    pub async fn create_until<K: Object>(
        &self,
        obj: &K,
        what: &str,
        done: impl Fn(Option<&K>) -> bool,
    ) -> Result<K> {
        let namespace = self.namespace().await?;
        let api = self.api::<K>(&namespace)?;
        let created = api.create(&PostParams::default(), obj).await;
        let created = created.map_err(|e| Error::api(format!("creating {}", obj.name_any()), e))?;
        let name = created.name_any();
        let found = self.wait_for(&api, &name, what, |o| o.is_some() && done(o));
        Ok(found.await?.expect("a found object exists"))
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
    /// kube-controller-manager (which empties deleted namespaces) it says so and returns; so
    /// it does for a namespace-scoped operator, whose Role and RoleBinding in the namespace go
    /// with it: its manager could not take its finalizers off there (nor could it on a
    /// cluster, where its objects must be deleted before their namespace).
    pub async fn namespace_deletion<K: Object>(&self, obj: &K) -> Result<()> {
        self.namespace_deletion_until(obj, "reconciled", reconciled)
            .await
    }

    /// [`Operator::namespace_deletion`], the object created with [`Operator::create_until`].
    pub async fn namespace_deletion_until<K: Object>(
        &self,
        obj: &K,
        what: &str,
        done: impl Fn(Option<&K>) -> bool,
    ) -> Result<()> {
        let test = super::current_test();
        if !self.env.has_controller_manager() {
            super::uncaptured(&format!(
                "SKIPPED {test}: namespace deletion needs kube-controller-manager"
            ));
            return Ok(());
        }
        if let Namespaces::Watched { .. } = self.namespaces {
            super::uncaptured(&format!(
                "SKIPPED {test}: deleting a namespace of a namespace-scoped operator: its Role and RoleBinding there go with the namespace, so its manager could not take its finalizers off (delete the objects first)"
            ));
            return Ok(());
        }
        let found = self.create_until(obj, what, done).await?;
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

/// Whether `obj`'s status reports the generation it has ([`samples::reconciled`]).
fn reconciled<K: serde::Serialize>(obj: Option<&K>) -> bool {
    samples::reconciled(&serde_json::to_value(obj).unwrap_or_default())
}

/// For a namespace-scoped project in `dir` (PROJECT's `namespaced: true`), the namespaces
/// its manager under test watches, made now: one per resource of PROJECT (each kind's test
/// has its own), and two more for tests of the user's own;
/// `None` for a cluster-scoped project (or one without PROJECT).
async fn watched_namespaces(env: &Envtest, dir: &Path) -> Result<Option<Vec<String>>> {
    if !dir.join("PROJECT").is_file() {
        return Ok(None);
    }
    let project = project::read(dir).map_err(Error::Operator)?;
    if !project::namespaced(&project) {
        return Ok(None);
    }
    let mut names = Vec::new();
    for _ in 0..project::resources(&project) + 2 {
        names.push(env.create_namespace("it").await?);
    }
    Ok(Some(names))
}

/// `rbac` (`config/rbac` rendered) with a copy of the manager's Roles, those
/// `config/rbac/role.yaml` puts in the manager's namespace (`operator-rs generate rbac`'s),
/// and of the RoleBindings of them, in each of `namespaces`: what the README tells a user to
/// add for each namespace `--watch-namespace` names.
fn with_manager_roles_in(dir: &Path, rbac: &str, namespaces: &[String]) -> Result<String> {
    let in_managers = |doc: &Value| {
        matches!(
            doc["metadata"]["namespace"].as_str(),
            None | Some("" | "system")
        )
    };
    let role_file = dir.join("config/rbac/role.yaml");
    let text = std::fs::read_to_string(&role_file)
        .map_err(|e| Error::io(format!("reading {}", role_file.display()), e))?;
    let roles: BTreeSet<String> = parse_documents(&role_file, &text)?
        .iter()
        .filter(|doc| doc["kind"] == "Role" && in_managers(doc))
        .filter_map(|doc| doc["metadata"]["name"].as_str().map(String::from))
        .collect();
    let origin = PathBuf::from("kubectl kustomize config/rbac");
    let documents = parse_documents(&origin, rbac)?;
    let named = |doc: &Value, pointer: &str| {
        doc.pointer(pointer)
            .and_then(Value::as_str)
            .is_some_and(|name| roles.contains(name))
    };
    let managers = documents.iter().filter(|doc| {
        in_managers(doc)
            && match doc["kind"].as_str() {
                Some("Role") => named(doc, "/metadata/name"),
                Some("RoleBinding") => {
                    doc["roleRef"]["kind"] == "Role" && named(doc, "/roleRef/name")
                }
                _ => false,
            }
    });
    let mut out = documents.clone();
    for doc in managers {
        for namespace in namespaces {
            let mut copy = doc.clone();
            copy["metadata"]["namespace"] = Value::from(namespace.as_str());
            out.push(copy);
        }
    }
    // JSON is YAML: one document per object.
    let out: Vec<String> = out.iter().map(Value::to_string).collect();
    Ok(out.join("\n---\n"))
}

/// The manager's flags alone.
#[derive(Parser)]
struct Args {
    #[command(flatten)]
    manager: ManagerArgs,
}
