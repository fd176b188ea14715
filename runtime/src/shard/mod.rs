//! Sharded managers on Kubernetes itself: every replica reconciles its own part of the
//! objects, with no extra component.
//!
//! - `membership`: each replica holds its own Lease; the members are the live ones.
//! - [`ring`]: every replica computes the same consistent-hash ring of the members, with
//!   virtual nodes, over the API server's 64-bit FNV-1a of `metadata.uid` (`hash`); a
//!   replica's shard is a set of hash ranges.
//! - `handover`: a replica starts on ranges it gains only once every replica losing them has
//!   published the new ring in its Lease (it stopped on them) or its Lease expired.
//! - `watch`: the controllers' watches narrowed on the server (`shardSelector`) where it
//!   serves it (found out with a canary: this replica's own Lease), always filtered on the
//!   client with the same hash; owned objects follow their controller owner's uid.
//! - [`bucket`]: objects a controller creates carry their owner's bucket as a label
//!   ([`BUCKET_LABEL`]), so each replica watches its owned kinds by a label selector of its
//!   buckets.
//!
//! [`Shard`] is the handle the controllers use; the manager runs the replica's membership loop
//! ([`crate::manager::Manager::sharded`]).

pub(crate) mod bucket;
mod handover;
mod hash;
mod membership;
pub mod ring;
pub(crate) mod watch;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, ListParams};
use kube::{Client, Resource};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use tokio::sync::{RwLock, RwLockReadGuard, watch as channel};

use crate::shutdown::Shutdown;

pub use bucket::{BUCKET_LABEL, bucket};
pub use hash::{fnv1a64, mixed};
pub use membership::{GENERATION_ANNOTATION, OPERATOR_LABEL, RING_ANNOTATION};
pub use ring::{DEFAULT_VNODES, Ranges, Ring};

use membership::MemberLease;

/// What places an object on the ring.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ShardKey {
    /// `metadata.uid` (the default): the API server can filter on it.
    #[default]
    Uid,
    /// The namespace (mixed, [`mixed`]; a cluster-scoped object by its uid): every object of a
    /// namespace on one replica; filtered on the client only.
    Namespace,
}

/// How a sharded manager shards.
#[derive(Clone, Debug)]
pub struct ShardConfig {
    /// What places an object on the ring.
    pub key: ShardKey,
    /// Virtual nodes per replica.
    pub vnodes: u16,
    /// How long a member Lease stays valid after its last renewal.
    pub lease_duration: Duration,
    /// How often a member renews its Lease and reads the others' (a departed replica's
    /// ranges are taken over within `lease_duration` + this; a gracefully stopped one's
    /// within this).
    pub renew_every: Duration,
    /// Whether to use the API server's `shardSelector` when it serves it (else the client
    /// filters the whole stream).
    pub server_side: bool,
}

impl Default for ShardConfig {
    fn default() -> Self {
        Self {
            key: ShardKey::Uid,
            vnodes: DEFAULT_VNODES,
            lease_duration: Duration::from_secs(15),
            renew_every: Duration::from_secs(2),
            server_side: true,
        }
    }
}

/// The shard's metrics: ranges, objects, handovers and how long they took.
#[derive(Clone, Debug, Default)]
pub struct ShardMetrics {
    ranges: Gauge,
    members: Gauge,
    share: Gauge,
    objects: Family<Vec<(String, String)>, Gauge>,
    handovers: Counter,
    handover_seconds: HandoverHistogram,
}

#[derive(Clone, Debug)]
struct HandoverHistogram(Histogram);

impl Default for HandoverHistogram {
    fn default() -> Self {
        let buckets = [0.01, 0.05, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0];
        Self(Histogram::new(buckets))
    }
}

impl ShardMetrics {
    /// Registers them in `registry` (`operator_rs_shard_*`).
    pub(crate) fn register(registry: &mut Registry) -> Self {
        let metrics = Self::default();
        registry.register(
            "operator_rs_shard_ranges",
            "Hash ranges this replica works on",
            metrics.ranges.clone(),
        );
        registry.register(
            "operator_rs_shard_members",
            "Live replicas in the ring",
            metrics.members.clone(),
        );
        registry.register(
            "operator_rs_shard_share_permille",
            "Share of the hash space this replica works on, in thousandths",
            metrics.share.clone(),
        );
        registry.register(
            "operator_rs_shard_objects",
            "Objects in this replica's cache of each controller's kind",
            metrics.objects.clone(),
        );
        registry.register(
            "operator_rs_shard_handovers",
            "Ring changes this replica completed",
            metrics.handovers.clone(),
        );
        registry.register(
            "operator_rs_shard_handover_duration_seconds",
            "Time from a ring change to working on every range this replica owns",
            metrics.handover_seconds.0.clone(),
        );
        metrics
    }

    /// The gauge of the objects cached for `controller`.
    pub(crate) fn objects(&self, controller: &str) -> Gauge {
        let labels = vec![("controller".to_owned(), controller.to_owned())];
        self.objects.get_or_create(&labels).clone()
    }
}

struct Inner {
    identity: String,
    config: ShardConfig,
    /// The ranges this replica reconciles; a reconcile holds a read guard throughout.
    active: RwLock<Ranges>,
    /// The ranges its caches hold (those it owns in the ring it works in).
    watched: channel::Sender<Ranges>,
    /// The generation of the ring it works in (0 before the first).
    generation: std::sync::atomic::AtomicU64,
    server_side: AtomicBool,
    metrics: ShardMetrics,
}

/// One replica's shard: which objects it reconciles. Cheap to clone.
#[derive(Clone)]
pub struct Shard(Arc<Inner>);

impl std::fmt::Debug for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shard")
            .field("identity", &self.0.identity)
            .field("config", &self.0.config)
            .finish_non_exhaustive()
    }
}

/// Held while reconciling an object of this replica's shard: the shard does not move away
/// from under it.
pub(crate) type ShardGuard<'a> = RwLockReadGuard<'a, Ranges>;

impl Shard {
    /// The shard of replica `identity`, working on nothing until [`Shard::run`] joins it.
    pub(crate) fn new(identity: &str, config: ShardConfig, metrics: ShardMetrics) -> Self {
        let (watched, _) = channel::channel(Ranges::none());
        Self(Arc::new(Inner {
            identity: identity.to_owned(),
            config,
            active: RwLock::new(Ranges::none()),
            watched,
            generation: Default::default(),
            server_side: AtomicBool::new(false),
            metrics,
        }))
    }

    /// This replica's identity in the ring.
    pub fn identity(&self) -> &str {
        &self.0.identity
    }

    /// The generation of the ring this replica works in (0 before it joined).
    pub fn generation(&self) -> u64 {
        self.0.generation.load(Ordering::SeqCst)
    }

    /// The metrics.
    pub fn metrics(&self) -> &ShardMetrics {
        &self.0.metrics
    }

    /// Where `obj` is on the ring, as the configured key says (`None`: no uid yet).
    pub fn hash_of<K: Resource>(&self, obj: &K) -> Option<u64> {
        let meta = obj.meta();
        match (self.0.config.key, &meta.namespace) {
            (ShardKey::Namespace, Some(namespace)) => Some(mixed(namespace)),
            _ => meta.uid.as_deref().map(fnv1a64),
        }
    }

    /// The labels of an object a controller creates for `owner` (its controller owner), so
    /// that the replica reconciling `owner` watches it: [`BUCKET_LABEL`], `owner`'s bucket.
    pub fn owned_labels<K: Resource>(
        &self,
        owner: &K,
    ) -> std::collections::BTreeMap<String, String> {
        (self.hash_of(owner).into_iter())
            .map(|hash| (BUCKET_LABEL.to_owned(), bucket(hash)))
            .collect()
    }

    /// Where an owned object is: its controller owner's uid (a namespace key: its namespace).
    pub(crate) fn owner_hash_of<K: Resource>(&self, obj: &K) -> Option<u64> {
        let meta = obj.meta();
        match (self.0.config.key, &meta.namespace) {
            (ShardKey::Namespace, Some(namespace)) => Some(mixed(namespace)),
            _ => (meta.owner_references.iter().flatten())
                .find(|owner| owner.controller == Some(true))
                .map(|owner| fnv1a64(&owner.uid)),
        }
    }

    /// The ranges the caches should hold, changing with the ring.
    pub(crate) fn watched(&self) -> channel::Receiver<Ranges> {
        self.0.watched.subscribe()
    }

    /// The `shardSelector` for `ranges` if the server filters and the key allows it.
    pub(crate) fn selector(&self, ranges: &Ranges) -> Option<String> {
        let usable = self.0.config.server_side
            && self.0.config.key == ShardKey::Uid
            && self.0.server_side.load(Ordering::SeqCst);
        usable
            .then(|| ranges.selector("object.metadata.uid"))
            .flatten()
    }

    /// Whether the API server filters by `shardSelector` (known once the manager runs).
    pub fn server_filters(&self) -> bool {
        self.0.server_side.load(Ordering::SeqCst)
    }

    /// A guard to hold while reconciling the object at `hash`, if it is this replica's now;
    /// `None`: it is not (yet) — its owner reconciles it.
    pub(crate) async fn admit(&self, hash: u64) -> Option<ShardGuard<'_>> {
        let guard = self.0.active.read().await;
        guard.contains(hash).then_some(guard)
    }

    /// How long a reconcile refused by [`Shard::admit`] waits to ask again (a handover may be
    /// about to give it to this replica).
    pub(crate) fn retry_after(&self) -> Duration {
        self.0.config.renew_every
    }

    /// Sets the ranges worked on; shrinking waits for every reconcile in flight to finish.
    async fn set_active(&self, ranges: Ranges) {
        let mut active = self.0.active.write().await;
        if *active != ranges {
            tracing::info!(identity = %self.0.identity, shard = %ranges, "shard changed");
            self.0.metrics.ranges.set(ranges.pairs().len() as i64);
            self.0
                .metrics
                .share
                .set((ranges.share() * 1000.0).round() as i64);
            *active = ranges;
        }
    }

    fn set_watched(&self, ranges: Ranges) {
        self.0.watched.send_if_modified(|current| {
            let changed = *current != ranges;
            *current = ranges;
            changed
        });
    }

    /// The membership loop of this replica until `stop`: holds its Lease in `namespace` (of
    /// the operator `operator`), follows the ring and hands ranges over; then stops working
    /// and deletes the Lease. A renewal failing for longer than the lease's margin stops all
    /// work until the Lease is held again.
    pub(crate) async fn run(self, client: Client, namespace: &str, operator: &str, stop: Shutdown) {
        let config = self.0.config.clone();
        let api: Api<Lease> = Api::namespaced(client.clone(), namespace);
        let lease = MemberLease::new(
            api.clone(),
            operator,
            &self.0.identity,
            config.lease_duration,
            config.vnodes,
        );
        // Work stops once no renewal succeeded for this long: a request that hangs is cut at
        // the request timeout, so it stops before the Lease can expire.
        let margin = (config.lease_duration)
            .saturating_sub(lease.request_timeout() * 2)
            .saturating_sub(config.renew_every);
        let mut published: Option<Ring> = None;
        let mut last_renewal = Instant::now();
        let mut changed_at: Option<Instant> = None;
        let mut detected = false;
        loop {
            match lease.renew(published.as_ref()).await {
                Ok(held) => {
                    last_renewal = Instant::now();
                    if !detected {
                        detected = true;
                        let filters = server_filters(&client, namespace, &held).await;
                        tracing::info!(server_side = filters, "shardSelector served");
                        self.0.server_side.store(filters, Ordering::SeqCst);
                    }
                }
                Err(err) => {
                    tracing::warn!(error = %err, lease = %lease.name, "renewing the shard lease failed");
                    if last_renewal.elapsed() >= margin {
                        // The Lease may expire any moment: stop before others take over.
                        self.set_active(Ranges::none()).await;
                        published = None;
                    }
                }
            }
            if published.is_some() || last_renewal.elapsed() < margin {
                match lease.members().await {
                    Ok(peers) => {
                        let mut members: Vec<&str> =
                            peers.iter().map(|p| p.identity.as_str()).collect();
                        members.push(&self.0.identity);
                        let target = Ring::new(&members, config.vnodes);
                        self.0.metrics.members.set(target.members().len() as i64);
                        let owned = target.owned(&self.0.identity);
                        if published.as_ref() != Some(&target) {
                            changed_at.get_or_insert_with(Instant::now);
                            // 1. Stop on what is lost (waits for reconciles in flight).
                            let active = self.0.active.read().await.clone();
                            let kept = active.intersect(&owned);
                            self.set_active(kept).await;
                            // 2. Publish the ring.
                            match lease.renew(Some(&target)).await {
                                Ok(_) => {
                                    last_renewal = Instant::now();
                                    self.0
                                        .generation
                                        .store(target.generation(), Ordering::SeqCst);
                                    published = Some(target.clone());
                                    self.set_watched(owned.clone());
                                }
                                Err(err) => {
                                    tracing::warn!(error = %err, "publishing the ring failed");
                                }
                            }
                        }
                        if published.as_ref() == Some(&target) {
                            // 3. Start on what no laggard still claims (a fresh read).
                            match lease.members().await {
                                Ok(peers) => {
                                    let active =
                                        handover::active(&self.0.identity, &target, &peers);
                                    let done = active == owned;
                                    self.set_active(active).await;
                                    if done && let Some(start) = changed_at.take() {
                                        self.0.metrics.handovers.inc();
                                        self.0
                                            .metrics
                                            .handover_seconds
                                            .0
                                            .observe(start.elapsed().as_secs_f64());
                                        tracing::info!(generation = %format!("{:016x}", target.generation()), took = ?start.elapsed(), "handover done");
                                    }
                                }
                                Err(err) => {
                                    tracing::warn!(error = %err, "reading the shard leases failed")
                                }
                            }
                        }
                    }
                    Err(err) => tracing::warn!(error = %err, "reading the shard leases failed"),
                }
            }
            tokio::select! {
                _ = stop.wait() => break,
                _ = tokio::time::sleep(config.renew_every) => {}
            }
        }
        // A graceful stop: work on nothing (waits for reconciles in flight), then leave.
        self.set_active(Ranges::none()).await;
        self.set_watched(Ranges::none());
        match lease.release().await {
            Ok(()) => tracing::info!(lease = %lease.name, "left the ring"),
            Err(err) => tracing::warn!(error = %err, "deleting the shard lease failed"),
        }
    }
}

/// Whether the API server filters lists by `shardSelector` (KEP-5866's `ShardedListAndWatch`),
/// found by what it does: this replica's own Lease, listed with a selector of every hash but
/// its uid's, comes back only from a server that ignores the selector. (Lists of custom
/// resources do not echo `shardInfo`, so the answer's metadata cannot tell.)
async fn server_filters(client: &Client, namespace: &str, canary: &Lease) -> bool {
    let (Some(uid), Some(name)) = (&canary.metadata.uid, &canary.metadata.name) else {
        return false;
    };
    let hash = fnv1a64(uid);
    let mut pairs = vec![(hash.wrapping_add(1), ring::SPACE_END)];
    if hash > 0 {
        pairs.push((0, u128::from(hash)));
    }
    if hash == u64::MAX {
        pairs = vec![(0, u128::from(hash))];
    }
    let Some(selector) = Ranges::from_pairs(pairs).selector("object.metadata.uid") else {
        return false;
    };
    let api: Api<Lease> = Api::namespaced(watch::selecting(client.clone(), selector), namespace);
    let params = ListParams::default()
        .fields(&format!("metadata.name={name}"))
        .limit(1);
    match api.list(&params).await {
        Ok(list) => list.items.is_empty(),
        Err(err) => {
            tracing::info!(error = %err, "the API server refused a shardSelector: filtering on the client");
            false
        }
    }
}
