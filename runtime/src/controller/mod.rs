//! A kind's controller from its reconcile logic: everything around `apply` and `cleanup`.
//!
//! An operator implements [`Reconciler`] for its kind (what `apply` does to make the world
//! match the spec, what `cleanup` releases before the object goes) and registers it with a
//! [`Controller`]. The runtime does the rest, the same way for every controller:
//!
//! - **Caches.** The kind is watched into a reflector store, with `managedFields` and the
//!   `last-applied-configuration` annotation dropped (and what [`Controller::trim`] drops)
//!   and lists paged by [`PAGE_SIZE`]; owned kinds ([`Controller::owns`]) are cached the same
//!   way, as the projection type the operator chooses, keeping only the objects the kind
//!   controls. The manager reports ready once every cache holds its first complete list.
//! - **The finalizer** ([`Controller::finalizer`]): added before the first `apply`, removed
//!   after `cleanup` succeeds; a 404 while removing it means the object is gone, which is done.
//! - **Errors**: requeued with a per-object exponential backoff ([`backoff`]), reset by the
//!   next success, and counted under a bounded label ([`Error::metric_label`]).
//! - **A deadline** per reconcile (`--reconcile-timeout`, controller-runtime's
//!   `ReconciliationTimeout`): a reconcile still running then is cancelled, and fails with
//!   [`Error::Timeout`] (retried with the backoff), so a request that never gets an answer
//!   cannot hold a worker for ever.
//! - **Every object reconciled**, also after a relist: an object is handed to the reconcile
//!   only once the cache holds it (kube's controller drops one it cannot find there).
//! - **Status and events** through [`Context`]: status applied only when it changed, events
//!   that never fail a reconcile (or block a deletion).
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use operator_rs_runtime::controller::{Action, Context, Controller, Reconciler, Result};
//! use operator_rs_runtime::manager::Registration;
//!
//! /// Logs every ConfigMap, every five minutes.
//! struct Audit;
//!
//! impl Reconciler for Audit {
//!     type Kind = ConfigMap;
//!
//!     async fn apply(&self, obj: Arc<ConfigMap>, _ctx: &Context<ConfigMap>) -> Result<Action> {
//!         tracing::info!(name = ?obj.metadata.name, "seen");
//!         Ok(Action::requeue(Duration::from_secs(300)))
//!     }
//! }
//!
//! fn registration() -> Registration {
//!     Controller::new("audit", Audit).registration()
//! }
//! ```

mod conditions;
mod context;
mod error;
mod events;
mod relabel;
mod scope;
mod triggers;
mod watch;

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::api::ListParams;
use kube::runtime::controller::{self, Controller as KubeController};
use kube::runtime::finalizer::{self, finalizer};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tracing::{debug, info, warn};

pub use conditions::{ConditionStatus, Conditions};
pub use context::Context;
pub use error::{Error, Result, StartError};
pub use events::SERIES_TTL;
pub use kube::runtime::controller::Action;
pub use kube::runtime::events::EventType;
pub use kube::runtime::watcher::Config as WatchConfig;
pub use scope::ScopedApi;
// What every cache drops from an object; public in 0.1.0, hidden since: the controller applies
// it itself (`Controller::trim` adds to it).
#[doc(hidden)]
pub use watch::strip;

use crate::manager::{ReadyHandle, Registration, Runtime, ready_when_listed};

/// Objects per page of an initial list: smaller pages bound the memory of a relist.
pub const PAGE_SIZE: u32 = 100;
/// The first retry delay after an error; it doubles with each consecutive failure...
pub const BACKOFF_BASE: Duration = Duration::from_secs(1);
/// ... up to this.
pub const BACKOFF_CAP: Duration = Duration::from_secs(300);
/// How long a reconcile that finds an owned cache still listing waits to come back.
pub const CACHE_WAIT: Duration = Duration::from_millis(200);

/// What the runtime can watch and cache: a kind, a trimmed projection of one (see
/// [`Controller::owns`]), or `PartialObjectMeta` of one.
pub trait Cached:
    Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static
{
}

impl<K> Cached for K where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static
{
}

/// What a kind the runtime reconciles must be: cached, written back (the finalizer), and of a
/// known scope.
pub trait Object: Cached + Resource<Scope: ScopedApi> + Serialize {}

impl<K> Object for K where K: Cached + Resource<Scope: ScopedApi> + Serialize {}

/// The logic of one kind's controller: the part of a controller that is the operator's own.
///
/// Both functions must be idempotent: they run again after every change, restart and error.
pub trait Reconciler: Send + Sync + 'static {
    /// The kind this controller reconciles (or `PartialObjectMeta<K>` to watch only metadata).
    type Kind: Object;

    /// Makes the world match `obj`'s spec and reports it in its status; returns when to come
    /// back ([`Action::requeue`]) or to wait for the next change ([`Action::await_change`]).
    fn apply(
        &self,
        obj: Arc<Self::Kind>,
        ctx: &Context<Self::Kind>,
    ) -> impl Future<Output = Result<Action>> + Send;

    /// Releases what `apply` acquired outside Kubernetes' garbage collection, before the
    /// object goes away; the finalizer is removed once it returns `Ok`, so it must not depend
    /// on optional writes. Runs only for a controller with a [`Controller::finalizer`].
    ///
    /// By default it records a `Deleting` event, sent once the finalizer is removed, in the
    /// background (so a deletion waits only for the finalizer; the event may fail without
    /// blocking anything).
    fn cleanup(
        &self,
        obj: Arc<Self::Kind>,
        ctx: &Context<Self::Kind>,
    ) -> impl Future<Output = Result<Action>> + Send {
        async move {
            let note = format!("Deleting {}", obj.name_any());
            ctx.publish_later(&obj, EventType::Normal, "Deleting", note);
            Ok(Action::await_change())
        }
    }
}

/// An owned kind's watch, started with the controller (see [`Controller::owns`]).
type OwnedWatch<K> = Box<
    dyn FnOnce(
            &Runtime,
            &mut context::Caches,
            ReadyHandle,
        ) -> futures::stream::BoxStream<
            'static,
            std::result::Result<ObjectRef<K>, watcher::Error>,
        > + Send,
>;

/// A controller under construction: the kind, its [`Reconciler`], its finalizer and owned kinds.
pub struct Controller<R: Reconciler> {
    name: &'static str,
    reconciler: R,
    finalizer: Option<&'static str>,
    watch: watcher::Config,
    trim: fn(&mut R::Kind),
    owned: Vec<OwnedWatch<R::Kind>>,
}

impl<R: Reconciler> Controller<R> {
    /// A controller called `name` (its metrics label and logs) running `reconciler`.
    pub fn new(name: &'static str, reconciler: R) -> Self {
        Self {
            name,
            reconciler,
            finalizer: None,
            watch: watcher::Config::default(),
            trim: |_| {},
            owned: Vec::new(),
        }
    }

    /// Puts the finalizer `name` (`<group>/finalizer`) on every object, so
    /// [`Reconciler::cleanup`] runs before it goes away.
    pub fn finalizer(mut self, name: &'static str) -> Self {
        self.finalizer = Some(name);
        self
    }

    /// Watches only the objects `config` selects (labels, fields) instead of all of them.
    pub fn watching(mut self, config: watcher::Config) -> Self {
        self.watch = config;
        self
    }

    /// Trims each object before it is cached (kube's `WatchStreamExt::modify`), after the
    /// runtime's own trimming (`managedFields`, the last-applied annotation): `trim` drops
    /// what reconcile never reads, so the cache holds less. Reconcile gets the trimmed object.
    pub fn trim(mut self, trim: fn(&mut R::Kind)) -> Self {
        self.trim = trim;
        self
    }

    /// Owns objects of kind `C`: they are watched (as `config` selects), and a change to one
    /// that the reconciled kind controls (an ownerReference with `controller: true`)
    /// reconciles its owner. Only the objects some owner of this kind controls are cached;
    /// read them with [`Context::owned`].
    ///
    /// `C` may be the kind itself (`Deployment`) or a trimmed projection of it that keeps
    /// only what reconcile reads (a struct with `#[derive(Resource)]` and
    /// `#[resource(inherit = Deployment)]` whose serde skips the rest): the cache then
    /// holds only that. `PartialObjectMeta<C>` caches metadata only.
    ///
    /// Like the reconciled kind, `C` is watched only in the manager's namespaces (one watch per
    /// namespace, see [`Runtime::namespaces`]), or cluster-wide if it is cluster-scoped.
    pub fn owns<C: Cached + Resource<Scope: ScopedApi>>(mut self, config: watcher::Config) -> Self {
        self.owned.push(Box::new(move |ctx, caches, ready| {
            let (store, writer) = reflector::store::<C>();
            caches.insert(store.clone());
            let config = config.page_size(PAGE_SIZE);
            let events = match ctx.shard.clone() {
                None => {
                    let apis = C::Scope::watched(ctx.client.clone(), &ctx.namespaces);
                    watch::watch_all(apis, &config, store)
                }
                // Owned objects follow their controller owner's shard: selected on the server
                // by their owner's bucket label, filtered here by the owner's exact hash; those
                // without the label are labelled by the replica of their owner.
                Some(shard) => {
                    let (client, namespaces) = (ctx.client.clone(), ctx.namespaces.clone());
                    tokio::spawn(relabel::unlabelled::<R::Kind, C>(
                        client.clone(),
                        namespaces.clone(),
                        config.clone(),
                        shard.clone(),
                        ctx.shutdown.clone(),
                    ));
                    let hash_shard = shard.clone();
                    crate::shard::watch::restarting(
                        shard.watched(),
                        move |ranges| {
                            let Some(buckets) = ranges.bucket_selector() else {
                                return crate::shard::watch::nothing();
                            };
                            let own = config.label_selector.as_deref();
                            let selector = crate::shard::bucket::and(own, &buckets);
                            let config = config.clone().labels(&selector);
                            let apis = C::Scope::watched(client.clone(), &namespaces);
                            watch::watch_all(apis, &config, store.clone())
                        },
                        move |obj: &C| hash_shard.owner_hash_of(obj),
                    )
                    .boxed()
                }
            };
            let events = events
                .modify(strip)
                .filter_map(|event| {
                    futures::future::ready(
                        event.map(watch::controlled_by::<R::Kind, C>).transpose(),
                    )
                })
                .reflect(writer);
            ready_when_listed(events, ready)
                .touched_objects()
                .filter_map(|child| {
                    let owner = child.map(|child| watch::controller_of::<R::Kind, C>(&child));
                    futures::future::ready(owner.transpose())
                })
                .boxed()
        }));
        self
    }

    /// How the manager runs this controller (listed in `controllers::all()`).
    pub fn registration(self) -> Registration {
        let name = self.name;
        Registration::new(name, move |ctx| async move { Ok(self.run(ctx).await?) }).sharded()
    }

    /// Runs the controller until the manager shuts down.
    pub async fn run(self, manager: Runtime) -> std::result::Result<(), StartError> {
        let Self {
            name,
            reconciler,
            finalizer,
            watch,
            trim,
            owned,
        } = self;
        let apis =
            <R::Kind as Resource>::Scope::watched(manager.client.clone(), &manager.namespaces);
        for api in &apis {
            if let Err(error) = api.list_metadata(&ListParams::default().limit(1)).await {
                return Err(StartError::List {
                    namespace: api.namespace().map(str::to_owned),
                    message: watch::list_failure::<R::Kind>(&error),
                    error,
                });
            }
        }
        let mut ready = manager.ready.clone().split(1 + owned.len()).into_iter();
        let mut caches = context::Caches::default();
        let mut triggers = Vec::new();
        for owned in owned {
            let handle = ready.next().expect("one readiness handle per cache");
            triggers.push(owned(&manager, &mut caches, handle));
        }
        let (reader, writer) = reflector::store();
        let watch = watch.page_size(PAGE_SIZE);
        let objects = match manager.shard.clone() {
            None => watch::watch_all(apis, &watch, reader.clone()),
            Some(shard) => sharded_watch::<R::Kind>(&manager, shard, watch, reader.clone()),
        };
        let objects = objects
            .modify(move |obj| {
                strip(obj);
                trim(obj);
            })
            .reflect(writer);
        let handle = ready.next().expect("one readiness handle per cache");
        let objects = triggers::stored_objects(ready_when_listed(objects, handle), reader.clone());

        info!(controller = name, "starting");
        let config = manager.config.clone();
        let shutdown = manager.shutdown.wait();
        let shard = manager.shard.clone();
        if let Some(shard) = &shard {
            let (gauge, reader) = (shard.metrics().objects(name), reader.clone());
            let shutdown = manager.shutdown.clone();
            tokio::spawn(async move {
                while !shutdown.is_triggered() {
                    gauge.set(reader.len() as i64);
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            });
        }
        let context = Arc::new(Context::new(manager, reader.clone(), caches));
        let reconciler = Arc::new(ReconcileLoop {
            reconciler,
            finalizer,
        });
        let mut controller = KubeController::for_shared_stream(objects, reader);
        for trigger in triggers {
            controller = controller
                .reconcile_on(trigger.filter_map(|owner| futures::future::ready(owner.ok())));
        }
        controller
            .with_config(config)
            .graceful_shutdown_on(shutdown)
            .run(
                move |obj, ctx| {
                    let reconciler = reconciler.clone();
                    let shard = shard.clone();
                    async move {
                        let Some(shard) = shard else {
                            return reconciler.reconcile(obj, &ctx).await;
                        };
                        // Only while the object is this replica's, and the shard stays put
                        // until the reconcile ends.
                        let hash = shard.hash_of(obj.as_ref());
                        let guard = match hash {
                            Some(hash) => shard.admit(hash).await,
                            None => None,
                        };
                        let Some(_guard) = guard else {
                            return Ok(Action::requeue(shard.retry_after()));
                        };
                        reconciler.reconcile(obj, &ctx).await
                    }
                },
                |obj, error, ctx| error_policy(obj, error, &ctx),
                context,
            )
            .for_each(|result| async move {
                match result {
                    Ok((object, _)) => debug!(%object, "reconciled"),
                    // error_policy has logged it already.
                    Err(controller::Error::ReconcilerFailed(..)) => {}
                    // A watched object pointed at one that is gone (an owner, say).
                    Err(controller::Error::ObjectNotFound(object)) => {
                        debug!(%object, "object gone")
                    }
                    Err(error) => warn!(%error, "controller error"),
                }
            })
            .await;
        Ok(())
    }
}

/// The watch of a sharded controller's kind: restarted with each new shard, narrowed by the
/// API server when it serves `shardSelector`, always filtered here by the same hash.
fn sharded_watch<K: Object>(
    manager: &Runtime,
    shard: crate::shard::Shard,
    config: watcher::Config,
    store: reflector::Store<K>,
) -> futures::stream::BoxStream<'static, std::result::Result<watcher::Event<K>, watcher::Error>> {
    let (client, namespaces) = (manager.client.clone(), manager.namespaces.clone());
    let hash_shard = shard.clone();
    crate::shard::watch::restarting(
        shard.watched(),
        move |ranges| {
            if ranges.is_empty() {
                return crate::shard::watch::nothing();
            }
            let client = match shard.selector(ranges) {
                Some(selector) => crate::shard::watch::selecting(client.clone(), selector),
                None => client.clone(),
            };
            let apis = <K as Resource>::Scope::watched(client, &namespaces);
            watch::watch_all(apis, &config, store.clone())
        },
        move |obj: &K| hash_shard.hash_of(obj),
    )
    .boxed()
}

/// One turn of the reconcile loop: a [`Reconciler`] wrapped in the plumbing every reconcile
/// goes through (the finalizer, the deadline, metrics, the backoff reset). The controller runs
/// it for every object; a unit test calls [`ReconcileLoop::reconcile`] as the controller would.
pub struct ReconcileLoop<R> {
    reconciler: R,
    finalizer: Option<&'static str>,
}

/// 0.1.0's name of [`ReconcileLoop`], kept for code written against it.
#[doc(hidden)]
#[deprecated(
    since = "0.2.0",
    note = "use controller::ReconcileLoop (the same type, renamed)"
)]
pub type Reconcile<R> = ReconcileLoop<R>;

impl<R: Reconciler> ReconcileLoop<R> {
    /// Wraps `reconciler`, with the finalizer `finalizer` if given: for unit tests, which
    /// call [`ReconcileLoop::reconcile`] as the controller would.
    pub fn new(reconciler: R, finalizer: Option<&'static str>) -> Self {
        Self {
            reconciler,
            finalizer,
        }
    }

    /// The reconciler inside.
    pub fn inner(&self) -> &R {
        &self.reconciler
    }

    /// Reconciles `obj` as the controller does: the finalizer (when there is one) first, then
    /// `apply`, or `cleanup` once the object is being deleted; cancelled at the context's
    /// [`Context::reconcile_timeout`] ([`Error::Timeout`]); measured, and with the object's
    /// backoff reset on success.
    pub async fn reconcile(&self, obj: Arc<R::Kind>, ctx: &Context<R::Kind>) -> Result<Action> {
        let mut timer = ctx.metrics().reconcile_started();
        let busy = ctx.busy();
        let key = ObjectRef::from_obj(obj.as_ref());
        let work = self.finalized(obj, ctx);
        let result = match ctx.reconcile_timeout() {
            Some(limit) => tokio::time::timeout(limit, work)
                .await
                .unwrap_or(Err(Error::Timeout(limit))),
            None => work.await,
        };
        let result = match result {
            // An owned cache is still listing: come back once it has.
            Err(Error::CacheNotReady(_)) => Ok(Action::requeue(CACHE_WAIT)),
            result => result,
        };
        match &result {
            Ok(_) => ctx.reset_failures(&key),
            Err(_) => timer.set_error(),
        }
        // Events queued for after the reconcile (a finalizer removed, say).
        drop(busy);
        ctx.send_later();
        result
    }

    /// `apply` or `cleanup`, behind the finalizer when there is one.
    async fn finalized(&self, obj: Arc<R::Kind>, ctx: &Context<R::Kind>) -> Result<Action> {
        let Some(name) = self.finalizer else {
            return self.reconciler.apply(obj, ctx).await;
        };
        let namespace = obj.namespace();
        let api = <R::Kind as Resource>::Scope::api(ctx.client(), namespace.as_deref());
        let result = finalizer(&api, name, obj, |event| async {
            match event {
                finalizer::Event::Apply(obj) => self.reconciler.apply(obj, ctx).await,
                finalizer::Event::Cleanup(obj) => self.reconciler.cleanup(obj, ctx).await,
            }
        })
        .await;
        Error::from_finalizer(result)
    }
}

// What the controller does with a failed reconcile; public in 0.1.0, hidden since: an operator
// never calls it.
#[doc(hidden)]
/// Requeues a failed object with a per-object exponential backoff ([`backoff`]), reset by the
/// next successful reconcile, and counts the error under its bounded label.
pub fn error_policy<K: Object>(obj: Arc<K>, error: &Error, ctx: &Context<K>) -> Action {
    ctx.metrics().record_error(error.metric_label());
    let key = ObjectRef::from_obj(obj.as_ref());
    let failures = ctx.count_failure(&key);
    let delay = backoff(failures);
    warn!(%error, object = %key, failures, ?delay, "reconcile failed");
    Action::requeue(delay)
}

/// [`BACKOFF_BASE`] doubled for each failure after the first, at most [`BACKOFF_CAP`].
///
/// ```
/// use std::time::Duration;
/// use operator_rs_runtime::controller::{BACKOFF_CAP, backoff};
///
/// assert_eq!(backoff(1), Duration::from_secs(1));
/// assert_eq!(backoff(4), Duration::from_secs(8));
/// assert_eq!(backoff(40), BACKOFF_CAP);
/// ```
pub fn backoff(failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.saturating_sub(1));
    BACKOFF_BASE.saturating_mul(factor).min(BACKOFF_CAP)
}

#[cfg(all(test, feature = "testing"))]
mod tests;
