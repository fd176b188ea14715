//! envtest: a real control plane for integration tests, like controller-runtime's envtest.
//!
//! [`Envtest`] runs etcd and kube-apiserver (and kube-controller-manager when its binary is
//! there, for garbage collection and namespace deletion) from `$KUBEBUILDER_ASSETS` on free
//! loopback ports, and hands out clients: an admin [`kube::Client`], and clients limited to
//! the RBAC an operator ships ([`Envtest::service_account`]; [`ServiceAccountAccess::create`]
//! does the same on any cluster). It installs CRDs from a
//! project's `config/crd/bases` ([`Envtest::install_crds`]), and can restart kube-apiserver
//! or etcd in place for fault tests.
//!
//! One control plane serves a whole test binary ([`Envtest::shared`]): it starts with the
//! first test that asks for it and stops when the binary exits, however it exits (the
//! processes die with it, the folder is removed then or by the next start). It belongs to no
//! tokio runtime: every `#[tokio::test]` makes its own clients with [`Envtest::client`].
//!
//! Without `$KUBEBUILDER_ASSETS` a test skips itself with one visible line
//! ([`skip_unless_available!`](crate::skip_unless_available)).
//!
//! ```no_run
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams};
//! use operator_rs_runtime::testing::envtest::Envtest;
//!
//! #[tokio::test]
//! async fn config_maps_are_stored() -> anyhow::Result<()> {
//!     operator_rs_runtime::skip_unless_available!(Ok(()));
//!     let env = Envtest::shared()?;
//!     let namespace = env.create_namespace("stored").await?;
//!     let maps: Api<ConfigMap> = Api::namespaced(env.client()?, &namespace);
//!     let mut map = ConfigMap::default();
//!     map.metadata.name = Some("settings".into());
//!     maps.create(&PostParams::default(), &map).await?;
//!     assert!(maps.get_opt("settings").await?.is_some());
//!     Ok(())
//! }
//! ```
//!
//! Each control plane signs ServiceAccount tokens with an ECDSA P-256 key it generates (ring,
//! microseconds even in a debug build).
//!
//! Submodules: `assets` (finding the binaries), `process` (spawning, PDEATHSIG, logs),
//! `control_plane` (the processes' lifecycle), `credentials` (keys, tokens, kubeconfigs),
//! `cleanup` (nothing outlives the binary), `crds`, `rbac`, [`error`].

mod assets;
mod cleanup;
mod control_plane;
mod crds;
mod credentials;
pub mod error;
mod process;
mod rbac;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};

pub use assets::ASSETS_VAR;
pub use crds::install_crds_with;
pub(crate) use crds::parse_documents;
pub use error::{Error, Result};
pub(crate) use rbac::service_account_review as rbac_review;
pub use rbac::{ClusterRbac, ServiceAccountAccess, kustomize};

use assets::Assets;
use control_plane::{ControlPlane, files};
pub(crate) use credentials::write_private;

/// The default of [`Builder::start_timeout`]: generous, for loaded CI machines.
///
/// ```
/// use operator_rs_runtime::testing::envtest::DEFAULT_START_TIMEOUT;
///
/// assert!(DEFAULT_START_TIMEOUT.as_secs() >= 60);
/// ```
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(90);

/// Returns from the calling test (with `$ret`, if given) unless `$KUBEBUILDER_ASSETS` is
/// set, after writing one line to stderr that says the test is skipped and how to run it.
///
/// ```no_run
/// #[tokio::test]
/// async fn needs_a_control_plane() {
///     operator_rs_runtime::skip_unless_available!();
///     // ... Envtest::shared() ...
/// }
///
/// #[tokio::test]
/// async fn returns_a_result() -> anyhow::Result<()> {
///     operator_rs_runtime::skip_unless_available!(Ok(()));
///     Ok(())
/// }
/// ```
#[macro_export]
macro_rules! skip_unless_available {
    () => {
        if !$crate::testing::envtest::Envtest::available() {
            return;
        }
    };
    ($ret:expr) => {
        if !$crate::testing::envtest::Envtest::available() {
            return $ret;
        }
    };
}

/// A running control plane: etcd, kube-apiserver and, when present,
/// kube-controller-manager. See the [module docs](self).
///
/// Dropping it stops it; the one from [`Envtest::shared`] lives until the binary exits.
#[derive(Debug)]
pub struct Envtest {
    plane: Mutex<ControlPlane>,
    /// The admin's client configuration (runtime-independent; clients are built from it).
    config: kube::Config,
    kubeconfig: PathBuf,
    dir: PathBuf,
    controller_manager: bool,
}

/// Options of a control plane, from [`Envtest::builder`].
///
/// ```no_run
/// use std::time::Duration;
/// use operator_rs_runtime::testing::envtest::Envtest;
///
/// let env = Envtest::builder()
///     .start_timeout(Duration::from_secs(120))
///     .controller_manager(false)
///     .start()?;
/// # Ok::<(), operator_rs_runtime::testing::envtest::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Builder {
    start_timeout: Duration,
    controller_manager: bool,
    extra: control_plane::ExtraArgs,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            start_timeout: DEFAULT_START_TIMEOUT,
            controller_manager: true,
            extra: control_plane::ExtraArgs::default(),
        }
    }
}

impl Builder {
    /// How long each process may take to become ready (default [`DEFAULT_START_TIMEOUT`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let patient = Envtest::builder().start_timeout(Duration::from_secs(300));
    /// ```
    pub fn start_timeout(mut self, timeout: Duration) -> Self {
        self.start_timeout = timeout;
        self
    }

    /// Whether to run kube-controller-manager when its binary is in `$KUBEBUILDER_ASSETS`
    /// (default: yes). Without it nothing collects garbage or finishes namespace deletions,
    /// and the control plane starts a little faster.
    ///
    /// ```
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let lean = Envtest::builder().controller_manager(false);
    /// ```
    pub fn controller_manager(mut self, run: bool) -> Self {
        self.controller_manager = run;
        self
    }

    /// A flag for kube-apiserver after envtest's own (given twice, a flag takes its last
    /// value): feature gates, `--runtime-config` for APIs not served by default.
    ///
    /// ```
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let gated = Envtest::builder()
    ///     .apiserver_arg("--feature-gates=StorageVersionMigrator=true")
    ///     .apiserver_arg("--runtime-config=storagemigration.k8s.io/v1beta1=true")
    ///     .controller_manager_arg("--feature-gates=StorageVersionMigrator=true");
    /// ```
    pub fn apiserver_arg(mut self, arg: impl Into<String>) -> Self {
        self.extra.apiserver.push(arg.into());
        self
    }

    /// A flag for kube-controller-manager after envtest's own, like
    /// [`Builder::apiserver_arg`].
    pub fn controller_manager_arg(mut self, arg: impl Into<String>) -> Self {
        self.extra.controller_manager.push(arg.into());
        self
    }

    /// Starts a control plane of this test's own, stopped when it is dropped. Blocks until
    /// it serves (a few seconds).
    ///
    /// ```no_run
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let env = Envtest::builder().controller_manager(false).start()?;
    /// println!("{}", env.server());
    /// # Ok::<(), operator_rs_runtime::testing::envtest::Error>(())
    /// ```
    pub fn start(self) -> Result<Envtest> {
        let assets = Assets::from_env()?;
        let plane = ControlPlane::start(
            &assets,
            self.controller_manager,
            self.start_timeout,
            &self.extra,
        )?;
        let dir = plane.dir.clone();
        let ca = std::fs::read(dir.join(files::SERVING_CERT)).map_err(|e| {
            Error::io(
                format!("reading {}", dir.join(files::SERVING_CERT).display()),
                e,
            )
        })?;
        let config = credentials::client_config(&plane.server(), &ca, &plane.admin_token)?;
        Ok(Envtest {
            kubeconfig: dir.join(files::ADMIN_KUBECONFIG),
            controller_manager: plane.has_controller_manager(),
            plane: Mutex::new(plane),
            config,
            dir,
        })
    }
}

impl Envtest {
    /// Whether `$KUBEBUILDER_ASSETS` is set; when it is not, writes one visible line to
    /// stderr saying the calling test is skipped and how to run it. See
    /// [`skip_unless_available!`](crate::skip_unless_available).
    ///
    /// ```
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// if !Envtest::available() {
    ///     return; // skipped, and the line says so
    /// }
    /// ```
    pub fn available() -> bool {
        assets::available()
    }

    /// The control plane of this test binary, started by the first caller (which blocks a
    /// few seconds) and stopped when the binary exits. A failed start is returned to every
    /// caller.
    ///
    /// Tests share it, so each should work in a namespace of its own
    /// ([`Envtest::create_namespace`]) and must not restart it: fault tests start their own
    /// with [`Envtest::start`].
    ///
    /// ```no_run
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let env = Envtest::shared()?;
    /// println!("API server at {}", env.server());
    /// # Ok::<(), operator_rs_runtime::testing::envtest::Error>(())
    /// ```
    pub fn shared() -> Result<&'static Envtest> {
        static SHARED: OnceLock<Result<Envtest>> = OnceLock::new();
        SHARED
            .get_or_init(Envtest::start)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Starts a control plane of this test's own (for fault tests, which restart or stop
    /// it), with the default options; see [`Envtest::builder`].
    ///
    /// ```no_run
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let env = Envtest::start()?;
    /// env.restart_apiserver()?;
    /// env.stop();
    /// # Ok::<(), operator_rs_runtime::testing::envtest::Error>(())
    /// ```
    pub fn start() -> Result<Envtest> {
        Builder::default().start()
    }

    /// Options for a control plane of a test's own.
    ///
    /// ```no_run
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let env = Envtest::builder().controller_manager(false).start()?;
    /// assert!(!env.has_controller_manager());
    /// # Ok::<(), operator_rs_runtime::testing::envtest::Error>(())
    /// ```
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// A new admin client (group `system:masters`). Call it inside the tokio runtime that
    /// will use the client (a client belongs to the runtime it was made in).
    ///
    /// ```no_run
    /// # async fn f() -> anyhow::Result<()> {
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let client = Envtest::shared()?.client()?;
    /// println!("{:?}", client.apiserver_version().await?);
    /// # Ok(()) }
    /// ```
    pub fn client(&self) -> Result<kube::Client> {
        kube::Client::try_from(self.config.clone())
            .map_err(|e| Error::api("building a client for the envtest API server", e))
    }

    /// The admin's client configuration, to build clients with other settings.
    ///
    /// ```no_run
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let mut config = Envtest::shared()?.config().clone();
    /// config.read_timeout = Some(std::time::Duration::from_secs(5));
    /// # Ok::<(), operator_rs_runtime::testing::envtest::Error>(())
    /// ```
    pub fn config(&self) -> &kube::Config {
        &self.config
    }

    /// The admin's kubeconfig file, for `kubectl` or a manager binary a test runs
    /// (`--kubeconfig` or `KUBECONFIG`).
    ///
    /// ```no_run
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let env = Envtest::shared()?;
    /// let status = std::process::Command::new("kubectl")
    ///     .arg("--kubeconfig").arg(env.kubeconfig())
    ///     .args(["get", "namespaces"])
    ///     .status();
    /// # Ok::<(), operator_rs_runtime::testing::envtest::Error>(())
    /// ```
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The API server's URL, `https://127.0.0.1:<port>`.
    ///
    /// ```no_run
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// assert!(Envtest::shared()?.server().starts_with("https://127.0.0.1:"));
    /// # Ok::<(), operator_rs_runtime::testing::envtest::Error>(())
    /// ```
    pub fn server(&self) -> String {
        self.config
            .cluster_url
            .to_string()
            .trim_end_matches('/')
            .to_owned()
    }

    /// The control plane's folder (logs, certificates, etcd's data), removed when it stops.
    ///
    /// ```no_run
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let log = Envtest::shared()?.dir().join("kube-apiserver.log");
    /// # Ok::<(), operator_rs_runtime::testing::envtest::Error>(())
    /// ```
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether kube-controller-manager runs (garbage collection, namespace deletion).
    ///
    /// ```no_run
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// if !Envtest::shared()?.has_controller_manager() {
    ///     eprintln!("no garbage collection: owned objects stay after their owner goes");
    /// }
    /// # Ok::<(), operator_rs_runtime::testing::envtest::Error>(())
    /// ```
    pub fn has_controller_manager(&self) -> bool {
        self.controller_manager
    }

    /// Creates a namespace named `<prefix>-<random>` and returns its name.
    ///
    /// ```no_run
    /// # async fn f() -> anyhow::Result<()> {
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let namespace = Envtest::shared()?.create_namespace("leases").await?;
    /// assert!(namespace.starts_with("leases-"));
    /// # Ok(()) }
    /// ```
    pub async fn create_namespace(&self, prefix: &str) -> Result<String> {
        let mut namespace = Namespace::default();
        namespace.metadata.generate_name = Some(format!("{prefix}-"));
        let created = Api::<Namespace>::all(self.client()?)
            .create(&PostParams::default(), &namespace)
            .await
            .map_err(|e| Error::api(format!("creating a namespace {prefix}-*"), e))?;
        Ok(created.metadata.name.unwrap_or_default())
    }

    /// Stops kube-apiserver and starts it again on the same port over the same etcd;
    /// returns once it serves again. Blocks (seconds).
    ///
    /// ```no_run
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let env = Envtest::start()?; // not the shared one: its other tests would see the outage
    /// env.restart_apiserver()?;
    /// # Ok::<(), operator_rs_runtime::testing::envtest::Error>(())
    /// ```
    pub fn restart_apiserver(&self) -> Result<()> {
        self.running()?.restart_apiserver()
    }

    /// Stops etcd and starts it again on the same port with the same data; returns once the
    /// API server serves again. Blocks (seconds).
    ///
    /// ```no_run
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let env = Envtest::start()?;
    /// env.restart_etcd()?;
    /// # Ok::<(), operator_rs_runtime::testing::envtest::Error>(())
    /// ```
    pub fn restart_etcd(&self) -> Result<()> {
        self.running()?.restart_etcd()
    }

    /// Stops every process and removes the folder. Idempotent; later calls that need the
    /// control plane fail with [`Error::Stopped`].
    ///
    /// ```no_run
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let env = Envtest::start()?;
    /// env.stop();
    /// assert!(env.restart_apiserver().is_err());
    /// # Ok::<(), operator_rs_runtime::testing::envtest::Error>(())
    /// ```
    pub fn stop(&self) {
        let mut plane = self.plane.lock().unwrap_or_else(|p| p.into_inner());
        plane.stop();
    }

    /// The control plane, unless it was stopped.
    fn running(&self) -> Result<MutexGuard<'_, ControlPlane>> {
        let plane = self.plane.lock().unwrap_or_else(|p| p.into_inner());
        if plane.is_stopped() {
            return Err(Error::Stopped);
        }
        Ok(plane)
    }

    /// The tail of the API server's log, for a test's failure message.
    ///
    /// ```no_run
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// eprintln!("{}", Envtest::shared()?.apiserver_log_tail());
    /// # Ok::<(), operator_rs_runtime::testing::envtest::Error>(())
    /// ```
    pub fn apiserver_log_tail(&self) -> String {
        let plane = self.plane.lock().unwrap_or_else(|p| p.into_inner());
        plane.apiserver_log_tail()
    }
}

impl Drop for Envtest {
    fn drop(&mut self) {
        self.stop();
    }
}
