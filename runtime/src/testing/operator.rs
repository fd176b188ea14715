//! An operator under test: its controllers running on the shared envtest control plane, with
//! exactly the RBAC of its `config/rbac`, once per test binary.
//!
//! [`Operator::shared`] installs the project's CRDs (`config/crd/bases`), creates a
//! ServiceAccount bound by the project's rendered `config/rbac`, and runs the controllers on a
//! thread of their own as that ServiceAccount, so a rule missing from the generated RBAC shows
//! up as a 403 in the manager's log and as an object that never gets reconciled. Tests then
//! create objects with [`Operator::client`] (an admin) and wait for the controllers' work with
//! [`Operator::wait_for`].

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use clap::Parser;
use kube::api::Api;
use kube::{Client, Resource};
use serde::de::DeserializeOwned;

use super::envtest::{Envtest, Error, Result};
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
}

/// The manager's flags alone.
#[derive(Parser)]
struct Args {
    #[command(flatten)]
    manager: ManagerArgs,
}
