//! What [`Manager::run`](super::Manager::run) runs, in groups, as controller-runtime's
//! `runnable_group.go` has them: the HTTP servers (metrics, probes) and the webhook server,
//! which serve until the manager stops; the registrations, each with its own [`Runtime`],
//! those of every replica first and the leader's once this replica leads ([`Election`]); and
//! their supervision: the first to end, a shutdown or lost leadership stops them all.

use std::time::Duration;

use kube::Client;
use kube::runtime::controller::Config;
use kube::runtime::events::Reporter;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use super::{
    Error, LeaderConfig, LeaderElector, ManagerArgs, Metrics, Readiness, Registration, Runtime,
    SecureMetrics, Shutdown, WatchNamespaces, chain, health, metrics, serve,
};
use crate::shard::Shard;
use crate::webhook::Webhooks;
use crate::webhook::local::LocalInstall;
use crate::webhook::setup::Setup;

/// The servers (controller-runtime's `HTTPServers` and `Webhooks` groups): started first,
/// serving until the manager stops.
pub(super) struct Servers {
    tasks: JoinSet<()>,
    /// What `--webhook-local-url` wrote to the cluster, removed when the manager stops.
    local_webhooks: Option<LocalInstall>,
}

impl Servers {
    /// Serves the metrics endpoint and the probes, those of the two that are enabled.
    pub(super) fn http(
        metrics_listener: Option<TcpListener>,
        secure_metrics: Option<SecureMetrics>,
        probe_listener: Option<TcpListener>,
        metrics: &Metrics,
        readiness: &Readiness,
    ) -> Self {
        let mut tasks = JoinSet::new();
        if let Some(listener) = metrics_listener {
            let router = metrics::router(metrics.clone());
            match secure_metrics {
                Some(secure) => secure.serve(listener, router, &mut tasks),
                None => {
                    tasks.spawn(serve(listener, router));
                }
            }
        }
        if let Some(listener) = probe_listener {
            tasks.spawn(serve(listener, health::router(readiness.clone())));
        }
        Self {
            tasks,
            local_webhooks: None,
        }
    }

    /// Serves `webhooks` as `setup` says.
    pub(super) async fn webhooks(
        &mut self,
        setup: Setup<'_>,
        webhooks: Webhooks,
    ) -> Result<(), Error> {
        self.local_webhooks = setup.start(webhooks, &mut self.tasks).await?;
        Ok(())
    }

    /// Stops serving, and removes the local webhook configurations.
    pub(super) async fn stop(mut self, client: &Client) {
        self.tasks.abort_all();
        if let Some(local) = self.local_webhooks
            && let Err(err) = local.uninstall(client).await
        {
            tracing::warn!(error = %err, "removing the local webhook configurations failed");
        }
    }
}

/// What every registration's [`Runtime`] shares: one of them per registration.
pub(super) struct Runtimes {
    pub(super) client: Client,
    /// The operator's name: the events' controller and the field manager.
    pub(super) name: String,
    /// This replica's identity: the events' instance.
    pub(super) identity: String,
    pub(super) concurrency: u16,
    pub(super) reconcile_timeout: Option<Duration>,
    pub(super) metrics: Metrics,
    pub(super) shutdown: Shutdown,
    pub(super) readiness: Readiness,
    pub(super) namespaces: WatchNamespaces,
    pub(super) shard: Option<Shard>,
}

impl Runtimes {
    /// The runtime of the registration called `registration`.
    fn runtime(&self, registration: &'static str) -> Runtime {
        Runtime {
            client: self.client.clone(),
            reporter: Reporter {
                controller: self.name.clone(),
                instance: Some(self.identity.clone()),
            },
            field_manager: self.name.clone(),
            metrics: self.metrics.controller(registration, self.concurrency),
            config: Config::default().concurrency(self.concurrency),
            reconcile_timeout: self.reconcile_timeout,
            shutdown: self.shutdown.clone(),
            ready: self.readiness.handle(),
            namespaces: self.namespaces.clone(),
            shard: self.shard.clone(),
        }
    }
}

/// How a registration ended: its name and its result.
type Outcome = (&'static str, anyhow::Result<()>);

/// The registrations running (controller-runtime's `Others` and `LeaderElection` groups).
#[derive(Default)]
pub(super) struct Running(JoinSet<Outcome>);

impl Running {
    /// Starts each of `registrations` with its own runtime.
    pub(super) fn start(&mut self, runtimes: &Runtimes, registrations: Vec<Registration>) {
        for registration in registrations {
            let ctx = runtimes.runtime(registration.name);
            tracing::info!(controller = registration.name, "starting");
            let (controller, run) = (registration.name, registration.run);
            self.0.spawn(async move { (controller, run(ctx).await) });
        }
    }

    /// Runs until the shutdown signal, lost leadership or a registration ending, then stops
    /// them all: gracefully (bounded by `timeout`) on shutdown, at once on lost leadership.
    pub(super) async fn supervise(
        &mut self,
        shutdown: &Shutdown,
        elector: Option<&LeaderElector>,
        timeout: Duration,
    ) -> Result<(), Error> {
        supervise(&mut self.0, shutdown, elector, timeout).await
    }
}

/// The leader election of `--leader-elect`: the Lease, and the client that holds it.
pub(super) struct Election {
    config: LeaderConfig,
    client: Client,
}

impl Election {
    /// The election `args` configure, of the operator `name` (its Lease `<name>-leader` unless
    /// `--leader-election-id`), in `namespace`, as `identity`.
    pub(super) fn new(
        args: &ManagerArgs,
        name: &str,
        namespace: String,
        identity: String,
        client: Client,
    ) -> Self {
        let config = LeaderConfig {
            lease_name: (args.leader_election_id.clone())
                .unwrap_or_else(|| format!("{name}-leader")),
            namespace,
            identity,
            lease_duration: args.leader_election_lease_duration,
            renew_deadline: args.leader_election_renew_deadline,
        };
        Self { config, client }
    }

    /// Waits for leadership, on standby (not ready) meanwhile; `None` if the manager was shut
    /// down first (the Lease released).
    pub(super) async fn lead(
        self,
        readiness: &Readiness,
        metrics: &Metrics,
        shutdown: &Shutdown,
    ) -> Result<Option<LeaderElector>, Error> {
        let Self { config, client } = self;
        readiness.set_standby(true);
        tracing::info!(lease = %config.lease_name, namespace = %config.namespace, identity = %config.identity, "waiting for leadership");
        let status = metrics.leader_status(&config.lease_name);
        let elector = LeaderElector::new(client, config.clone(), status)
            .await
            .map_err(|source| Error::Lease {
                namespace: config.namespace.clone(),
                name: config.lease_name.clone(),
                source,
            })?;
        tokio::select! {
            biased;
            _ = shutdown.wait() => {
                tracing::info!("shut down while waiting for leadership");
                release(&elector).await;
                Ok(None)
            }
            _ = elector.acquire() => Ok(Some(elector)),
        }
    }
}

/// Waits for the shutdown signal, lost leadership or a controller ending, then stops the
/// controllers: gracefully (bounded by `timeout`) on shutdown, at once on lost leadership.
async fn supervise(
    running: &mut JoinSet<Outcome>,
    shutdown: &Shutdown,
    elector: Option<&LeaderElector>,
    timeout: Duration,
) -> Result<(), Error> {
    // Renewals happen inside `hold()`, so it is polled until the very end.
    let hold = async {
        match elector {
            Some(elector) => elector.hold().await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(hold);

    let mut result = tokio::select! {
        biased;
        _ = shutdown.wait() => Ok(()),
        lost = &mut hold => {
            shutdown.trigger();
            running.abort_all();
            return Err(Error::LeadershipLost(lost));
        }
        Some(joined) = running.join_next() => {
            if shutdown.is_triggered() {
                // It stopped because of the shutdown, before this task noticed it.
                stopped(joined);
                Ok(())
            } else {
                shutdown.trigger();
                Err(controller_exit(joined))
            }
        }
    };

    tracing::info!(in_flight = running.len(), "stopping controllers");
    let drain = async {
        while let Some(joined) = running.join_next().await {
            stopped(joined);
        }
    };
    tokio::select! {
        _ = drain => {}
        lost = &mut hold => {
            running.abort_all();
            return Err(Error::LeadershipLostWhileStopping(lost));
        }
        _ = tokio::time::sleep(timeout) => {
            tracing::warn!(abandoned = running.len(), "graceful shutdown timed out");
            running.abort_all();
            if result.is_ok() {
                result = Err(Error::ShutdownTimeout(timeout));
            }
        }
    }
    result
}

/// Releases the Lease, giving up after a few seconds: the process is about to exit anyway.
pub(super) async fn release(elector: &LeaderElector) {
    match tokio::time::timeout(Duration::from_secs(5), elector.release()).await {
        Ok(Ok(())) => {}
        Ok(Err(err)) => tracing::warn!(error = %err, "releasing the lease failed"),
        Err(_) => tracing::warn!("releasing the lease timed out"),
    }
}

/// Logs how a controller ended during a shutdown.
fn stopped(joined: Result<Outcome, tokio::task::JoinError>) {
    match joined {
        Ok((name, Ok(()))) => tracing::info!(controller = name, "controller stopped"),
        other => {
            let err = controller_exit(other);
            tracing::error!(error = chain(&err), "controller failed while stopping");
        }
    }
}

fn controller_exit(joined: Result<Outcome, tokio::task::JoinError>) -> Error {
    match joined {
        Ok((controller, Ok(()))) => Error::ControllerExited { controller },
        Ok((controller, Err(err))) => Error::ControllerFailed {
            controller,
            source: err.into(),
        },
        Err(err) => Error::ControllerPanicked(err),
    }
}
