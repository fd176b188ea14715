//! Leader election on a `coordination.k8s.io/v1` Lease, through `kube-lease-manager`.
//!
//! Only the replica holding the Lease runs controllers. The holder renews the Lease
//! `renew_deadline` after each renewal, so a standby takes it over `lease_duration` after the
//! last renewal of a leader that died. A leader steps down as soon as a renewal shows
//! another holder or fails: the manager then stops its controllers at once and exits with an
//! error so the pod restarts as a standby (controller-runtime exits the same way). On a clean
//! shutdown the leader releases the Lease so a standby takes over without waiting for it
//! to expire.
//!
//! RBAC: `coordination.k8s.io` `leases`: get, create, patch (in the election namespace).

use std::time::Duration;

use kube::Client;
use kube_lease_manager::{LeaseManager, LeaseManagerBuilder, LeaseManagerError, LeaseParams};
use prometheus_client::metrics::gauge::Gauge;

/// Where and how to elect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderConfig {
    /// Name of the Lease (`--leader-election-id`).
    pub lease_name: String,
    /// Namespace of the Lease.
    pub namespace: String,
    /// Holder identity written to the Lease: unique per replica (the pod name).
    pub identity: String,
    /// How long a Lease stays valid after its last renewal.
    pub lease_duration: Duration,
    /// How long after a renewal the holder renews again; less than `lease_duration`.
    pub renew_deadline: Duration,
}

/// Why a leader stopped leading.
#[derive(Debug)]
pub enum LostLeadership {
    /// A renewal found another holder in the Lease.
    TakenOver,
    /// A renewal failed; the Lease may expire any moment, so the leader must stop.
    RenewFailed(LeaseManagerError),
}

impl std::fmt::Display for LostLeadership {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TakenOver => f.write_str("another replica holds the lease"),
            Self::RenewFailed(err) => write!(f, "renewing the lease failed: {err}"),
        }
    }
}

/// One replica's side of the election.
pub struct LeaderElector {
    lease: LeaseManager,
    config: LeaderConfig,
    status: Gauge,
}

impl std::fmt::Debug for LeaderElector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElector")
            .field("config", &self.config)
            .finish()
    }
}

/// Pause between attempts after an API error while not leading.
const RETRY_PERIOD: Duration = Duration::from_secs(2);

impl LeaderElector {
    /// Connects to the Lease, creating it if it does not exist. `status` is the
    /// `leader_election_master_status` gauge, kept at 1 while leading.
    pub async fn new(
        client: Client,
        config: LeaderConfig,
        status: Gauge,
    ) -> Result<Self, LeaseManagerError> {
        let duration = config.lease_duration.as_secs();
        let grace = duration.saturating_sub(config.renew_deadline.as_secs());
        assert!(
            duration > grace && grace > 0,
            "lease duration must exceed the renew deadline by at least 1s"
        );
        // The field manager of the Lease's server-side applies derives from the identity.
        let params = LeaseParams::new(&config.identity, duration, grace);
        let lease = LeaseManagerBuilder::new(client, &config.lease_name)
            .with_namespace(&config.namespace)
            .with_parameters(params)
            .build()
            .await?;
        status.set(0);
        Ok(Self {
            lease,
            config,
            status,
        })
    }

    /// The configuration this elector runs with.
    pub fn config(&self) -> &LeaderConfig {
        &self.config
    }

    /// Whether this replica leads right now.
    pub fn is_leader(&self) -> bool {
        self.status.get() == 1
    }

    /// Resolves once this replica holds the Lease. API errors are logged and retried.
    pub async fn acquire(&self) {
        loop {
            match self.lease.changed().await {
                Ok(true) => {
                    self.status.set(1);
                    tracing::info!(lease = %self.config.lease_name, identity = %self.config.identity, "became leader");
                    return;
                }
                Ok(false) => {}
                Err(err) => {
                    tracing::warn!(error = %err, lease = %self.config.lease_name, "leader election attempt failed");
                    tokio::time::sleep(RETRY_PERIOD).await;
                }
            }
        }
    }

    /// Keeps renewing the Lease; resolves when leadership is lost. Only call while leading.
    ///
    /// Must be polled for as long as the replica leads: renewals happen inside this future.
    pub async fn hold(&self) -> LostLeadership {
        let lost = loop {
            match self.lease.changed().await {
                Ok(true) => {}
                Ok(false) => break LostLeadership::TakenOver,
                Err(err) => break LostLeadership::RenewFailed(err),
            }
        };
        self.status.set(0);
        tracing::error!(lease = %self.config.lease_name, reason = %lost, "lost leadership");
        lost
    }

    /// Gives the Lease up (if this replica still holds it) so a standby can take over at once.
    pub async fn release(&self) -> Result<(), LeaseManagerError> {
        self.status.set(0);
        self.lease.release().await?;
        tracing::info!(lease = %self.config.lease_name, "released the lease");
        Ok(())
    }
}
