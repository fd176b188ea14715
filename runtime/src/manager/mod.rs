//! The manager: flags, the Kubernetes client, and the lifecycle of every controller.
//!
//! [`Manager::run`] serves the probes and metrics, waits for the leader election Lease when
//! `--leader-elect` is set, starts each [`Registration`] with its own [`Runtime`],
//! and stops them all on SIGTERM/SIGINT (in-flight reconciles finish, then the Lease is
//! released and the process exits 0) or at once when leadership is lost (exit 1).
//!
//! Around the controllers it serves the probes ([`Readiness`]), Prometheus metrics
//! ([`Metrics`]; over HTTPS to authorized clients unless `--metrics-secure=false`), holds the
//! leader election Lease (`--leader-elect`), sets up logging ([`LogFormat`]) and turns
//! SIGTERM/SIGINT into a [`Shutdown`].
//!
//! ```no_run
//! use clap::Parser;
//! use operator_rs_runtime::manager::{Manager, ManagerArgs, Registration};
//!
//! /// The operator's command line: the manager's flags plus the operator's own.
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     manager: ManagerArgs,
//!     /// A flag of this operator.
//!     #[arg(long, default_value = "info")]
//!     greeting: String,
//! }
//!
//! # async fn controllers() -> Vec<Registration> { vec![] }
//! #[tokio::main]
//! async fn main() -> anyhow::Result<()> {
//!     let cli = Cli::parse();
//!     let manager = Manager::new("memcached-operator", cli.manager).await?;
//!     manager.run(controllers().await).await?;
//!     Ok(())
//! }
//! ```

// Plumbing of `Manager::run`. 0.1.0 made `health`, `leader`, `metrics` and `telemetry` public
// modules: they stay reachable at those paths for code written against it, hidden from the
// docs; what an operator needs of them is re-exported below. `namespaces` came later: private.
#[doc(hidden)]
pub mod health;
#[doc(hidden)]
pub mod leader;
#[doc(hidden)]
pub mod metrics;
mod namespaces;
mod runnables;
#[doc(hidden)]
pub mod telemetry;
#[cfg(test)]
pub(crate) mod testing;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use futures::future::BoxFuture;
use kube::Client;
use kube::runtime::controller::Config;
use kube::runtime::events::Reporter;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use crate::auth::DelegatedAuth;
use crate::connect::ConnectError;
use crate::shard::{Shard, ShardConfig};
use crate::tls::certs::{CertificateAuthority, CertsError};
use crate::tls::{self, CertError, CertFiles, CertStore};
use crate::webhook::{StartError as WebhookStartError, WebhookArgs, Webhooks};
use runnables::{Election, Running, Runtimes, Servers, release};

pub use crate::address::{AddressError, parse_bind_address};
pub use crate::duration::parse_duration;
pub use crate::shutdown::Shutdown;

/// 0.1.0's path of [`Shutdown`] and the signal listener, now the crate's (shared with the
/// webhook server): kept for code written against 0.1.0.
#[doc(hidden)]
pub mod shutdown {
    pub use crate::shutdown::{Shutdown, listen_for_signals};
}
pub use health::{Readiness, ReadyHandle, ready_when_listed};
// The Lease election `--leader-elect` runs: plumbing, hidden (the runtime's tests drive it).
pub use leader::LostLeadership;
#[doc(hidden)]
pub use leader::{LeaderConfig, LeaderElector};
pub use metrics::{ControllerMetrics, Metrics, ReconcileTimer};
pub use namespaces::{WatchNamespaceError, WatchNamespaces};
pub use telemetry::LogFormat;

/// Default of `--concurrency`: reconciles one controller runs at once.
///
/// A reconcile spends nearly all its time waiting on the API server, so the rate of a catch-up
/// (every object reconciled after a start) grows with it: on a real kube-apiserver, 4 left the
/// server idle between requests. Bounded, unlike kube's default (unbounded), because every
/// request in flight holds an HTTP/1.1 connection of its own (BENCHMARKS.md, "At scale").
pub const DEFAULT_CONCURRENCY: u16 = 32;

/// Default of `--reconcile-timeout`: how long one reconcile may run before it is cancelled and
/// retried with backoff.
///
/// A reconcile is a few requests, each of which kube-apiserver answers or times out within a
/// minute (its `--request-timeout`); kube's client has no read timeout of its own, so a request
/// on a connection that died without a word would otherwise hold a worker for ever.
pub const DEFAULT_RECONCILE_TIMEOUT: Duration = Duration::from_secs(60);

/// Why [`Manager::new`] refused to start, or [`Manager::run`] stopped with an error (what a
/// SIGTERM/SIGINT stop never returns).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No client configuration: the kubeconfig, its context, or the in-cluster environment.
    #[error("connecting to the cluster")]
    Connect(#[from] ConnectError),
    /// The client configuration does not make a client (its TLS settings, say).
    #[error("making the API client")]
    Client(#[source] kube::Error),
    /// Flags that contradict each other.
    #[error("{flag} {reason}")]
    Flag {
        /// The flag refused, as typed on the command line.
        flag: &'static str,
        /// What it must be.
        reason: &'static str,
    },
    /// A bind address flag does not parse.
    #[error("{flag}")]
    BindAddress {
        /// The flag (`--metrics-bind-address`, `--health-probe-bind-address`).
        flag: &'static str,
        /// What is wrong with its value.
        source: AddressError,
    },
    /// A server's address cannot be bound (in use, say).
    #[error("binding the {server} address {address}")]
    Bind {
        /// Which server (`metrics`, `health probe`).
        server: &'static str,
        /// The address.
        address: SocketAddr,
        /// The operating system's answer.
        source: std::io::Error,
    },
    /// The metrics endpoint's self-signed certificate could not be made.
    #[error("making the self-signed metrics certificate")]
    MetricsCertificate(#[from] CertsError),
    /// The metrics endpoint's self-signed certificate could not be loaded.
    #[error("loading the self-signed metrics certificate")]
    MetricsCertificateLoad(#[from] CertError),
    /// `--watch-namespace` names something that is not a namespace.
    #[error(transparent)]
    WatchNamespace(#[from] WatchNamespaceError),
    /// SIGTERM/SIGINT handlers could not be installed.
    #[error("installing signal handlers")]
    Signals(#[source] std::io::Error),
    /// The webhook server did not start.
    #[error("starting the webhook server")]
    Webhook(#[from] WebhookStartError),
    /// The leader election Lease could not be read or created.
    #[error("leader election Lease {namespace}/{name}")]
    Lease {
        /// The Lease's namespace.
        namespace: String,
        /// The Lease's name.
        name: String,
        /// The API server's answer.
        source: kube_lease_manager::LeaseManagerError,
    },
    /// This replica lost leadership: it stopped its controllers at once (exit non-zero, so a
    /// new pod starts as a follower).
    #[error("leader election lost: {0}")]
    LeadershipLost(LostLeadership),
    /// Leadership was lost while the controllers were stopping after a signal.
    #[error("leader election lost while stopping: {0}")]
    LeadershipLostWhileStopping(LostLeadership),
    /// A [`Registration`] returned before the shutdown (it must wait for `ctx.shutdown`).
    #[error("controller {controller} exited before shutdown")]
    ControllerExited {
        /// Its name.
        controller: &'static str,
    },
    /// A [`Registration`] returned an error.
    #[error("controller {controller} failed")]
    ControllerFailed {
        /// Its name.
        controller: &'static str,
        /// Its error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A [`Registration`]'s task panicked.
    #[error("a controller task panicked")]
    ControllerPanicked(#[source] tokio::task::JoinError),
    /// Reconciles still ran when `--graceful-shutdown-timeout` ran out; they were abandoned.
    #[error("reconciles did not finish within {0:?} (--graceful-shutdown-timeout)")]
    ShutdownTimeout(Duration),
}

/// `err` and its causes, `: `-separated (for logs, where `{:#}` of anyhow is not at hand).
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(next) = cause {
        text.push_str(": ");
        text.push_str(&next.to_string());
        cause = next.source();
    }
    text
}

/// The manager's flags, named like controller-runtime's. Flatten them into the operator's own
/// command line (`#[command(flatten)]`) to add flags of its own (see the module docs).
#[derive(Clone, Debug, clap::Args)]
pub struct ManagerArgs {
    /// Address of the metrics endpoint: `:8443`, `127.0.0.1:8443`, `[::]:8443`; `0` disables it.
    #[arg(long, default_value = ":8443")]
    pub metrics_bind_address: String,

    /// Serve metrics over HTTPS, to clients whose bearer token the API server accepts and
    /// allows `get` on the path (the `metrics-reader` ClusterRole); `--metrics-secure=false`
    /// serves plain HTTP to anyone, for local runs.
    #[arg(
        long,
        env = "METRICS_SECURE",
        default_value_t = true,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = clap::ArgAction::Set
    )]
    pub metrics_secure: bool,

    /// Folder holding the metrics server's `tls.crt` and `tls.key` (cert-manager's Secret,
    /// mounted), reloaded when they change [default: a self-signed certificate made at start].
    #[arg(long, alias = "metrics-cert-path")]
    pub metrics_cert_dir: Option<PathBuf>,

    /// Address of the `/healthz` and `/readyz` probes; `0` disables them.
    #[arg(long, default_value = ":8081")]
    pub health_probe_bind_address: String,

    /// Run controllers only while holding the leader election Lease.
    #[arg(long)]
    pub leader_elect: bool,

    /// Name of the leader election Lease (default: `<operator name>-leader`).
    #[arg(long)]
    pub leader_election_id: Option<String>,

    /// Namespace of the leader election Lease [default: the pod's namespace, else the
    /// kubeconfig's namespace].
    #[arg(long, env = "POD_NAMESPACE")]
    pub leader_election_namespace: Option<String>,

    /// How long a Lease stays valid after its last renewal (seconds; `15`, `15s` or `1m`).
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    pub leader_election_lease_duration: Duration,

    /// How long the leader waits between renewals; less than the lease duration.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub leader_election_renew_deadline: Duration,

    /// How long a shutdown waits for reconciles in flight before abandoning them.
    #[arg(long, default_value = "20s", value_parser = parse_duration)]
    pub graceful_shutdown_timeout: Duration,

    /// Log format; levels come from `RUST_LOG` (default `info`).
    #[arg(long, value_enum, default_value_t = LogFormat::Text, env = "LOG_FORMAT")]
    pub log_format: LogFormat,

    /// Maximum reconciles each controller runs at once.
    #[arg(long, default_value_t = DEFAULT_CONCURRENCY, value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: u16,

    /// How long one reconcile may run before it is cancelled and retried with backoff, like
    /// controller-runtime's `ReconciliationTimeout` (`0`: no limit).
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub reconcile_timeout: Duration,

    /// Watch only these namespaces (comma-separated), like controller-runtime's
    /// `DefaultNamespaces` [default: a namespace-scoped manager's own namespace (`POD_NAMESPACE`,
    /// else the kubeconfig's), else every namespace].
    #[arg(
        long,
        env = "WATCH_NAMESPACE",
        value_delimiter = ',',
        value_name = "NAMESPACE"
    )]
    pub watch_namespace: Vec<String>,

    /// Path to a kubeconfig [default: in-cluster config, else `KUBECONFIG`, else `~/.kube/config`].
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,

    /// The webhook server's flags (used when the operator has webhooks).
    #[command(flatten)]
    pub webhook: WebhookArgs,
}

/// What a [`Registration`] runs: called once this replica may run it, with its own context.
pub type RunFn = Box<dyn FnOnce(Runtime) -> BoxFuture<'static, anyhow::Result<()>> + Send>;

/// Something the manager runs: a controller, or any task of the operator's own (a server, a
/// periodic job). Like controller-runtime's `Runnable`, it runs only on the leader unless
/// [`Registration::on_every_replica`] says otherwise.
///
/// `run` must return only after `ctx.shutdown` fired: returning earlier stops the manager
/// with an error.
///
/// ```
/// use operator_rs_runtime::manager::Registration;
///
/// let report = Registration::new("report", |ctx| async move {
///     ctx.shutdown.wait().await;
///     Ok(())
/// });
/// assert_eq!(report.name(), "report");
/// ```
pub struct Registration {
    name: &'static str,
    leader_only: bool,
    sharded: bool,
    run: RunFn,
}

impl Registration {
    /// Runs `run` under `name` (the `controller` label of its metrics, and its logs).
    pub fn new<F, Fut>(name: &'static str, run: F) -> Self
    where
        F: FnOnce(Runtime) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = anyhow::Result<()>> + Send + 'static,
    {
        Self {
            name,
            leader_only: true,
            sharded: false,
            run: Box::new(move |ctx| Box::pin(run(ctx))),
        }
    }

    /// Runs it on every replica of a sharded manager ([`Manager::sharded`]), each on its own
    /// shard ([`Runtime::shard`]); elsewhere as before. A [`Controller`]'s registration is so.
    ///
    /// [`Controller`]: crate::controller::Controller
    pub fn sharded(mut self) -> Self {
        self.sharded = true;
        self
    }

    /// Runs it on every replica, leader or not (a server every replica must offer, say).
    pub fn on_every_replica(mut self) -> Self {
        self.leader_only = false;
        self
    }

    /// The name it runs under.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("name", &self.name)
            .field("leader_only", &self.leader_only)
            .field("sharded", &self.sharded)
            .finish_non_exhaustive()
    }
}

/// 0.1.0's name of [`Runtime`], kept for code written against it.
#[doc(hidden)]
#[deprecated(
    since = "0.2.0",
    note = "use manager::Runtime (the same type, renamed)"
)]
pub type ControllerContext = Runtime;

/// What the manager runs each [`Registration`] with (a controller, or a task of the
/// operator's): the shared client, this runnable's metrics and settings, the shutdown signal,
/// its readiness handle and the namespaces it watches. A controller's [`Context`] wraps it.
///
/// [`Context`]: crate::controller::Context
#[derive(Clone)]
pub struct Runtime {
    /// The shared client (one connection pool for every controller).
    pub client: Client,
    /// Reporter of the events this controller publishes: controller = operator name,
    /// instance = pod name.
    pub reporter: Reporter,
    /// The field manager of the operator's server-side applies (the operator's name).
    pub field_manager: String,
    /// This controller's metrics.
    pub metrics: ControllerMetrics,
    /// Controller settings; `concurrency` from `--concurrency`.
    pub config: Config,
    /// How long one reconcile may run (`--reconcile-timeout`); `None`: no limit.
    pub reconcile_timeout: Option<Duration>,
    /// Resolves on SIGTERM/SIGINT or lost leadership: `graceful_shutdown_on(ctx.shutdown.wait())`.
    pub shutdown: Shutdown,
    /// Call `ready.set_ready()` once this controller's stores have synced; [`ready_when_listed`]
    /// does it from the watch stream (and [`ReadyHandle::split`] for several streams).
    pub ready: ReadyHandle,
    /// The namespaces this controller watches (and caches) its kinds in; cluster-scoped kinds
    /// are watched cluster-wide whatever it says.
    pub namespaces: WatchNamespaces,
    /// This replica's shard in a sharded manager ([`Manager::sharded`]): a controller caches
    /// and reconciles only its objects. `None`: every object.
    pub shard: Option<Shard>,
}

impl Runtime {
    /// A context over `client` (e.g. the mock of `testing::mock_context`) for unit tests of a controller:
    /// the operator is called `test`, and so is its field manager.
    pub fn for_tests(client: Client) -> Self {
        Self {
            client,
            reporter: Reporter {
                controller: "test".into(),
                instance: Some("test".into()),
            },
            field_manager: "test".into(),
            metrics: Metrics::new().controller("test", DEFAULT_CONCURRENCY),
            config: Config::default().concurrency(DEFAULT_CONCURRENCY),
            reconcile_timeout: Some(DEFAULT_RECONCILE_TIMEOUT),
            shutdown: Shutdown::new(),
            ready: ReadyHandle::detached(),
            namespaces: WatchNamespaces::All,
            shard: None,
        }
    }
}

/// Runs the controllers; see the module docs.
pub struct Manager {
    name: String,
    args: ManagerArgs,
    client: Client,
    lease_client: Client,
    identity: String,
    namespace: String,
    metrics: Metrics,
    readiness: Readiness,
    shutdown: Shutdown,
    metrics_listener: Option<TcpListener>,
    /// Authentication and TLS of the metrics endpoint, unless `--metrics-secure=false`.
    secure_metrics: Option<SecureMetrics>,
    probe_listener: Option<TcpListener>,
    webhooks: Option<Webhooks>,
    /// A namespace-scoped manager ([`Manager::namespaced`]).
    namespaced: bool,
    /// A sharded manager's settings ([`Manager::sharded`]).
    sharding: Option<ShardConfig>,
    /// Whether `--webhook-local-url` starts a guard process: only in an operator's own
    /// binary ([`Manager::new`]), whose `main` runs the guard, not in a test's.
    guarded: bool,
}

impl Manager {
    /// Sets up logging, connects to the cluster (in-cluster config, else kubeconfig) and
    /// binds the metrics and probe addresses.
    /// `name` is the operator's: the reporting controller of its events, its field manager,
    /// and the prefix of the default Lease name (`<name>-leader`).
    pub async fn new(name: impl Into<String>, args: ManagerArgs) -> Result<Self, Error> {
        telemetry::init(args.log_format);
        let config = crate::connect::config(args.kubeconfig.as_deref(), None).await?;
        let client = Client::try_from(config.clone()).map_err(Error::Client)?;
        if std::env::var_os(crate::webhook::guard::GUARD_ENV).is_some() {
            // This is the guard of a manager in `--webhook-local-url` mode: it never returns.
            crate::webhook::guard::run(client).await;
        }
        // The Lease gets its own client whose requests time out well before the Lease
        // expires, so a hung renewal is noticed while this replica still holds the Lease.
        let mut lease_config = config;
        let timeout = lease_request_timeout(&args);
        lease_config.connect_timeout = Some(timeout);
        lease_config.read_timeout = Some(timeout);
        lease_config.write_timeout = Some(timeout);
        let lease_client = Client::try_from(lease_config).map_err(Error::Client)?;
        let mut manager = Self::build(name.into(), args, client, lease_client).await?;
        manager.guarded = true;
        Ok(manager)
    }

    /// Like [`Manager::new`] over an existing client, without touching logging (tests).
    pub async fn with_client(
        name: impl Into<String>,
        args: ManagerArgs,
        client: Client,
    ) -> Result<Self, Error> {
        Self::build(name.into(), args, client.clone(), client).await
    }

    async fn build(
        name: String,
        args: ManagerArgs,
        client: Client,
        lease_client: Client,
    ) -> Result<Self, Error> {
        if args.leader_elect
            && args.leader_election_renew_deadline >= args.leader_election_lease_duration
        {
            return Err(Error::Flag {
                flag: "--leader-election-renew-deadline",
                reason: "must be shorter than --leader-election-lease-duration",
            });
        }
        if args.leader_elect && args.leader_election_renew_deadline.is_zero() {
            return Err(Error::Flag {
                flag: "--leader-election-renew-deadline",
                reason: "must be at least 1s",
            });
        }
        let namespace = args
            .leader_election_namespace
            .clone()
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| client.default_namespace().to_owned());
        let metrics_listener = bind(
            &args.metrics_bind_address,
            "--metrics-bind-address",
            "metrics",
        )
        .await?;
        let probe_listener = bind(
            &args.health_probe_bind_address,
            "--health-probe-bind-address",
            "health probe",
        )
        .await?;
        let secure_metrics = match &metrics_listener {
            Some(_) if args.metrics_secure => Some(SecureMetrics::new(&args, &client)?),
            _ => None,
        };
        Ok(Self {
            identity: identity(&name),
            name,
            namespace,
            client,
            lease_client,
            metrics: Metrics::new(),
            readiness: Readiness::new(),
            shutdown: Shutdown::new(),
            metrics_listener,
            secure_metrics,
            probe_listener,
            webhooks: None,
            namespaced: false,
            sharding: None,
            guarded: false,
            args,
        })
    }

    /// Serves `webhooks` on every replica, from the start of [`Manager::run`] until it
    /// returns (see [`crate::webhook`]).
    pub fn webhooks(mut self, webhooks: Webhooks) -> Self {
        self.webhooks = Some(webhooks);
        self
    }

    /// Makes this a namespace-scoped manager (a project made with `operator-rs init
    /// --namespaced`): its controllers watch its own namespace (`POD_NAMESPACE`, else the
    /// kubeconfig's) unless `--watch-namespace` names others, and its RBAC is Roles in them.
    /// Cluster-scoped kinds are still watched cluster-wide: the manager needs a ClusterRole for
    /// them (`operator-rs generate rbac` keeps their rules in one), else their controller stops
    /// the manager at start with the 403 and what to grant.
    pub fn namespaced(mut self) -> Self {
        self.namespaced = true;
        self
    }

    /// Makes this a sharded manager (a project made with `operator-rs init --sharded`): every
    /// replica runs the controllers, each on its own shard of the objects. Each replica holds
    /// a Lease of its own (`<name>-shard-<identity>`, in the leader election namespace); the
    /// live ones share the objects on a consistent-hash ring of `metadata.uid` (the API
    /// server's hash; see [`crate::shard`]), the API server sends each replica only its part
    /// where it serves KEP-5866's `shardSelector` (else the client filters), and a replica
    /// takes ranges over only once the one losing them stopped. `--leader-elect` still elects
    /// one replica for the registrations that are not [`Registration::sharded`].
    ///
    /// RBAC: `coordination.k8s.io` `leases`: get, list, create, patch, delete.
    pub fn sharded(self) -> Self {
        self.sharded_with(ShardConfig::default())
    }

    /// [`Manager::sharded`] with settings of its own.
    pub fn sharded_with(mut self, config: ShardConfig) -> Self {
        if self.metrics.shard().is_none() {
            self.metrics = Metrics::sharded();
        }
        self.sharding = Some(config);
        self
    }

    /// The namespaces the controllers watch, from `--watch-namespace` and
    /// [`Manager::namespaced`]; refused when a name is not a namespace name.
    pub fn watch_namespaces(&self) -> Result<WatchNamespaces, WatchNamespaceError> {
        WatchNamespaces::resolve(&self.args.watch_namespace, self.namespaced, || {
            std::env::var("POD_NAMESPACE")
                .ok()
                .filter(|ns| !ns.is_empty())
                .unwrap_or_else(|| self.client.default_namespace().to_owned())
        })
    }

    /// The shutdown every controller watches; triggering it stops [`Manager::run`] gracefully.
    pub fn shutdown(&self) -> Shutdown {
        self.shutdown.clone()
    }

    /// The metrics registry.
    pub fn metrics(&self) -> Metrics {
        self.metrics.clone()
    }

    /// What authenticates and authorizes `/metrics` requests, unless `--metrics-secure=false`
    /// (its review counters tell how many requests the API server reviewed).
    pub fn metrics_auth(&self) -> Option<&DelegatedAuth> {
        self.secure_metrics.as_ref().map(|secure| &secure.auth)
    }

    /// Where `/metrics` is served, if enabled.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
    }

    /// Where `/healthz` and `/readyz` are served, if enabled.
    pub fn health_probe_addr(&self) -> Option<SocketAddr> {
        self.probe_listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
    }

    /// This replica's holder identity in the Lease (the pod name).
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// Runs `controllers` until SIGTERM/SIGINT (`Ok`), lost leadership or a controller
    /// failing (`Err`).
    ///
    /// Its runnables start in groups, as controller-runtime's do (`runnable_group.go`): the
    /// HTTP servers (metrics, probes), the webhook server, the registrations every replica
    /// runs, and, once this replica leads (`--leader-elect`), the leader's; they stop in the
    /// reverse order.
    pub async fn run(self, controllers: Vec<Registration>) -> Result<(), Error> {
        let namespaces = self.watch_namespaces()?;
        tracing::info!(namespaces = %namespaces, "watching");
        let Self {
            name,
            args,
            client,
            lease_client,
            identity,
            namespace,
            metrics,
            readiness,
            shutdown,
            metrics_listener,
            secure_metrics,
            probe_listener,
            webhooks,
            namespaced: _,
            sharding,
            guarded,
        } = self;

        let signals = shutdown::listen_for_signals(shutdown.clone()).map_err(Error::Signals)?;
        let mut servers = Servers::http(
            metrics_listener,
            secure_metrics,
            probe_listener,
            &metrics,
            &readiness,
        );
        if let Some(webhooks) = webhooks {
            let ready = readiness.handle();
            let setup = crate::webhook::setup::Setup {
                operator: &name,
                args: &args.webhook,
                client: &client,
                metrics: metrics.webhooks(),
                on_ready: Box::new(move || ready.set_ready()),
                guarded,
            };
            servers.webhooks(setup, webhooks).await?;
        }

        // A sharded manager's membership runs until the controllers stopped, then leaves.
        let shard = (sharding.zip(metrics.shard()))
            .map(|(config, shard_metrics)| Shard::new(&identity, config, shard_metrics));
        let leave = Shutdown::new();
        let membership = shard.clone().map(|shard| {
            // Its requests are bounded by the shard Lease's own timeout (a quarter of its
            // duration), not the leader Lease's.
            let (client, namespace, name) = (client.clone(), namespace.clone(), name.clone());
            let leave = leave.clone();
            tokio::spawn(async move { shard.run(client, &namespace, &name, leave).await })
        });

        let runtimes = Runtimes {
            client: client.clone(),
            name: name.clone(),
            identity: identity.clone(),
            concurrency: args.concurrency,
            reconcile_timeout: Some(args.reconcile_timeout).filter(|limit| !limit.is_zero()),
            metrics: metrics.clone(),
            shutdown: shutdown.clone(),
            readiness: readiness.clone(),
            namespaces,
            shard: shard.clone(),
        };
        let sharded = shard.is_some();
        let (leader_only, everywhere): (Vec<_>, Vec<_>) =
            (controllers.into_iter()).partition(|r| r.leader_only && !(sharded && r.sharded));
        let mut running = Running::default();
        running.start(&runtimes, everywhere);

        let result = async {
            let elector = if args.leader_elect {
                let election = Election::new(&args, &name, namespace, identity, lease_client);
                match election.lead(&readiness, &metrics, &shutdown).await? {
                    Some(elector) => Some(elector),
                    // Shut down while waiting for leadership: those of every replica stop.
                    None => {
                        let timeout = args.graceful_shutdown_timeout;
                        return running.supervise(&shutdown, None, timeout).await;
                    }
                }
            } else {
                None
            };

            running.start(&runtimes, leader_only);
            readiness.set_standby(false);

            let outcome = running
                .supervise(&shutdown, elector.as_ref(), args.graceful_shutdown_timeout)
                .await;
            if let Some(elector) = &elector {
                release(elector).await;
            }
            outcome
        }
        .await;

        if let Some(membership) = membership {
            leave.trigger();
            if let Err(err) = membership.await {
                tracing::warn!(error = %err, "the shard membership task failed");
            }
        }
        signals.abort();
        servers.stop(&client).await;
        match &result {
            Ok(()) => tracing::info!("manager stopped"),
            Err(err) => tracing::error!(error = chain(err), "manager stopped"),
        }
        result
    }
}

/// The secure metrics endpoint's authentication and certificate (`--metrics-secure`).
struct SecureMetrics {
    auth: DelegatedAuth,
    store: CertStore,
    /// `--metrics-cert-dir`'s files, watched; `None`: the self-signed certificate in `store`.
    files: Option<CertFiles>,
}

/// How long the self-signed metrics certificate is valid (controller-runtime's: a year).
const SELF_SIGNED_VALIDITY: Duration = Duration::from_secs(365 * 24 * 3600);

/// How often `--metrics-cert-dir` is checked for new files.
const METRICS_CERT_POLL_INTERVAL: Duration = Duration::from_secs(10);

impl SecureMetrics {
    fn new(args: &ManagerArgs, client: &Client) -> Result<Self, Error> {
        let store = CertStore::new();
        let files = match &args.metrics_cert_dir {
            Some(dir) => Some(CertFiles::new(dir, "tls.crt", "tls.key").for_purpose(
                "the metrics server's (--metrics-cert-dir: cert-manager's Certificate mounted there)",
            )),
            None => {
                let ca = CertificateAuthority::generate("metrics-ca", SELF_SIGNED_VALIDITY)?;
                let names = ["localhost", "127.0.0.1", "::1"].map(String::from);
                let cert = ca.issue(&names, SELF_SIGNED_VALIDITY)?;
                let what = "the self-signed metrics certificate";
                store.set_pem(cert.cert_pem.as_bytes(), cert.key_pem.as_bytes(), what)?;
                None
            }
        };
        Ok(Self {
            auth: DelegatedAuth::new(client.clone()),
            store,
            files,
        })
    }

    /// Serves `router` on `listener` over HTTPS, each request authenticated and authorized,
    /// until the manager aborts `servers`.
    fn serve(self, listener: TcpListener, router: axum::Router, servers: &mut JoinSet<()>) {
        let forever = Shutdown::new();
        if let Some(files) = self.files {
            let store = self.store.clone();
            let interval = METRICS_CERT_POLL_INTERVAL;
            servers.spawn(tls::watch_files(store, files, interval, forever.clone()));
        }
        let router = self.auth.protect(router);
        servers.spawn(tls::serve_tls(
            listener,
            router,
            self.store.server_config(),
            forever,
        ));
    }
}

async fn serve(listener: TcpListener, router: axum::Router) {
    if let Err(err) = axum::serve(listener, router).await {
        tracing::error!(error = %err, "HTTP server failed");
    }
}

async fn bind(
    address: &str,
    flag: &'static str,
    server: &'static str,
) -> Result<Option<TcpListener>, Error> {
    let Some(address) = parse_bind_address(address)
        .await
        .map_err(|source| Error::BindAddress { flag, source })?
    else {
        return Ok(None);
    };
    let listener = TcpListener::bind(address)
        .await
        .map_err(|source| Error::Bind {
            server,
            address,
            source,
        })?;
    tracing::info!(addr = %address, "serving {server} endpoint");
    Ok(Some(listener))
}

/// Timeout of each Lease request: a third of the margin between a renewal and the Lease's
/// expiry, at least one second.
fn lease_request_timeout(args: &ManagerArgs) -> Duration {
    let margin = args
        .leader_election_lease_duration
        .saturating_sub(args.leader_election_renew_deadline);
    (margin / 3).max(Duration::from_secs(1))
}

/// This replica's identity: `POD_NAME` (downward API), else `<hostname>_<pid>` so that two
/// processes on one machine never share an identity.
fn identity(operator: &str) -> String {
    if let Ok(pod) = std::env::var("POD_NAME")
        && !pod.is_empty()
    {
        return pod;
    }
    let host = (hostname::get().ok())
        .and_then(|h| h.into_string().ok())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| operator.to_owned());
    format!("{host}_{}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// The manager's flags alone, as an operator's command line flattens them.
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        manager: ManagerArgs,
    }

    fn parse(args: &[&str]) -> Result<ManagerArgs, clap::Error> {
        Cli::try_parse_from(args).map(|cli| cli.manager)
    }

    #[test]
    fn flags_default_like_controller_runtime() {
        let args = parse(&["manager"]).unwrap();
        assert_eq!(args.metrics_bind_address, ":8443");
        assert!(args.metrics_secure);
        assert_eq!(args.metrics_cert_dir, None);
        assert_eq!(args.health_probe_bind_address, ":8081");
        assert!(!args.leader_elect);
        assert_eq!(args.leader_election_id, None);
        assert_eq!(args.leader_election_lease_duration, Duration::from_secs(15));
        assert_eq!(args.leader_election_renew_deadline, Duration::from_secs(10));
        assert_eq!(args.concurrency, DEFAULT_CONCURRENCY);
        assert_eq!(args.reconcile_timeout, DEFAULT_RECONCILE_TIMEOUT);

        let args = parse(&[
            "manager",
            "--leader-elect",
            "--leader-election-id=x",
            "--leader-election-namespace=ops",
            "--log-format=json",
            "--concurrency=9",
            "--leader-election-lease-duration=1m",
            "--reconcile-timeout=2m",
        ])
        .unwrap();
        assert!(args.leader_elect);
        assert_eq!(args.leader_election_namespace.as_deref(), Some("ops"));
        assert_eq!(args.log_format, LogFormat::Json);
        assert_eq!(args.concurrency, 9);
        assert_eq!(args.leader_election_lease_duration, Duration::from_secs(60));
        assert_eq!(args.reconcile_timeout, Duration::from_secs(120));

        assert!(
            parse(&["manager", "--concurrency=0"]).is_err(),
            "unbounded concurrency"
        );
        assert!(parse(&["manager", "--log-format=xml"]).is_err());
    }

    #[test]
    fn metrics_security_is_on_unless_turned_off_like_a_go_bool_flag() {
        let secure = |argv: &[&str]| parse(argv).map(|args| args.metrics_secure);
        assert!(secure(&["manager", "--metrics-secure"]).unwrap());
        assert!(secure(&["manager", "--metrics-secure=true"]).unwrap());
        assert!(!secure(&["manager", "--metrics-secure=false"]).unwrap());
        assert!(secure(&["manager", "--metrics-secure=no"]).is_err());
        // As a Go bool flag: the value only after `=`, never the next argument.
        assert!(parse(&["manager", "--metrics-secure", "false"]).is_err());
        let args = parse(&["manager", "--metrics-cert-path=/certs"]).unwrap();
        assert_eq!(args.metrics_cert_dir, Some(PathBuf::from("/certs")));
    }

    #[test]
    fn lease_requests_time_out_before_the_lease_expires() {
        let args = parse(&["manager"]).unwrap();
        let timeout = lease_request_timeout(&args);
        // Renewals start 5s before expiry (15s lease, 10s renew deadline): a hung request
        // must fail well within that margin, with time left to retry.
        assert!(timeout >= Duration::from_secs(1), "{timeout:?}");
        assert!(timeout * 3 <= Duration::from_secs(5), "{timeout:?}");
    }
}
