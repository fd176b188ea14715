//! What every reconcile of one controller shares: the client, the caches of owned kinds,
//! events, metrics, and the failure counts behind the backoff.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Mutex;

use futures::FutureExt;
use kube::api::{Patch, PatchParams};
use kube::core::object::HasStatus;
use kube::runtime::events::{Event, EventType};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::{Client, ResourceExt};
use serde::Serialize;
use serde_json::json;
use tracing::warn;

use super::error::{Error, Result};
use super::events::Events;
use super::{Cached, Object, ScopedApi};
use crate::manager::{ControllerMetrics, Runtime};

/// The caches of owned kinds, by type.
#[derive(Default)]
pub(crate) struct Caches(HashMap<TypeId, Box<dyn Any + Send + Sync>>);

impl Caches {
    pub(crate) fn insert<C: Cached>(&mut self, store: Store<C>) {
        self.0.insert(TypeId::of::<C>(), Box::new(store));
    }

    fn get<C: Cached>(&self) -> Option<&Store<C>> {
        self.0.get(&TypeId::of::<C>())?.downcast_ref()
    }
}

/// What every reconcile of a controller of `K` shares.
pub struct Context<K: Object> {
    runtime: Runtime,
    store: Store<K>,
    events: Events,
    caches: Caches,
    /// Consecutive failures per object, for the backoff of `error_policy`.
    failures: Mutex<HashMap<ObjectRef<K>, u32>>,
}

impl<K: Object> Context<K> {
    pub(crate) fn new(runtime: Runtime, store: Store<K>, caches: Caches) -> Self {
        let events = Events::new(runtime.client.clone(), runtime.reporter.clone());
        Self {
            runtime,
            store,
            events,
            caches,
            failures: Mutex::default(),
        }
    }

    /// A context over `runtime` (e.g. from `testing::mock_context`) for unit tests of a
    /// reconciler, with empty caches; give it the caches it reads with
    /// [`Context::with_store`] and [`Context::with_cache`].
    pub fn for_tests(runtime: Runtime) -> Self {
        Self::new(runtime, reflector::store().0, Caches::default())
    }

    /// This context with `store` as the cache of the reconciled kind.
    pub fn with_store(mut self, store: Store<K>) -> Self {
        self.store = store;
        self
    }

    /// This context with `store` as the cache of owned kind `C`.
    pub fn with_cache<C: Cached>(mut self, store: Store<C>) -> Self {
        self.caches.insert(store);
        self
    }

    /// The cache of the reconciled kind (every object this controller watches).
    pub fn store(&self) -> &Store<K> {
        &self.store
    }

    /// The client.
    pub fn client(&self) -> Client {
        self.runtime.client.clone()
    }

    /// This controller's metrics.
    pub fn metrics(&self) -> &ControllerMetrics {
        &self.runtime.metrics
    }

    /// How long one reconcile may run before it is cancelled (`--reconcile-timeout`); `None`:
    /// no limit.
    pub fn reconcile_timeout(&self) -> Option<std::time::Duration> {
        self.runtime.reconcile_timeout
    }

    /// This replica's shard in a sharded manager (`None`: it reconciles every object).
    pub fn shard(&self) -> Option<&crate::shard::Shard> {
        self.runtime.shard.as_ref()
    }

    /// The labels to give an object this controller creates for `owner` (with `owner` as its
    /// controller owner): in a sharded manager, `owner`'s bucket
    /// ([`crate::shard::BUCKET_LABEL`]), so the replica reconciling `owner` watches it by a
    /// label selector, not the whole stream; none otherwise.
    ///
    /// An owned object without it (made before, or by another client) is labelled by that
    /// replica once it sees it: one write (it needs `patch` on the owned kind).
    pub fn owned_labels(&self, owner: &K) -> std::collections::BTreeMap<String, String> {
        (self.shard())
            .map(|shard| shard.owned_labels(owner))
            .unwrap_or_default()
    }

    /// The field manager of this operator's server-side applies.
    pub fn field_manager(&self) -> &str {
        &self.runtime.field_manager
    }

    /// Parameters of a server-side apply as this operator: its field manager, with `force`
    /// (the operator owns the fields it applies).
    pub fn apply_params(&self) -> PatchParams {
        PatchParams::apply(self.field_manager()).force()
    }

    /// The cached object of owned kind `C` at `key`, or `None` if there is none.
    ///
    /// Until the cache holds its first complete list this is [`Error::CacheNotReady`], which
    /// the controller turns into a short requeue (a missing object may only be unlisted yet).
    pub fn owned<C: Cached>(&self, key: &ObjectRef<C>) -> Result<Option<std::sync::Arc<C>>> {
        let store = self.cache::<C>()?;
        // Not `wait_until_ready().await`: kube 5's DelayedInit wakes only one of several
        // waiters, so concurrent reconciles would hang. Polling once never blocks.
        match store.wait_until_ready().now_or_never() {
            Some(Ok(())) => Ok(store.get(key)),
            Some(Err(_)) => Err(Error::CacheGone(type_name::<C>())),
            None => Err(Error::CacheNotReady(type_name::<C>())),
        }
    }

    /// The whole cache of owned kind `C` (to list what an owner controls, say).
    pub fn cache<C: Cached>(&self) -> Result<&Store<C>> {
        self.caches.get::<C>().ok_or_else(|| {
            Error::reconcile(
                "no_cache",
                format!(
                    "no cache of {}: register it with Controller::owns::<{}>()",
                    C::kind(&()),
                    type_name::<C>()
                ),
            )
        })
    }

    /// Server-side applies `status` to `obj`'s status subresource if it differs from the
    /// current one; returns whether it wrote. A settled object costs no request.
    pub async fn apply_status(&self, obj: &K, status: &K::Status) -> Result<bool>
    where
        K: HasStatus,
        K::Status: Serialize + PartialEq,
    {
        if obj.status() == Some(status) {
            return Ok(false);
        }
        let patch = json!({
            "apiVersion": K::api_version(&()),
            "kind": K::kind(&()),
            "status": status,
        });
        let api = K::Scope::api::<K>(self.client(), obj.namespace().as_deref());
        api.patch_status(&obj.name_any(), &self.apply_params(), &Patch::Apply(&patch))
            .await?;
        Ok(true)
    }

    /// Records an event on `obj`. A failure (for example 403 in a namespace being
    /// terminated) is logged and ignored: events are informative and must never block a
    /// reconcile or a deletion. Use [`Context::try_publish`] when the event is what the
    /// reconcile is for.
    pub async fn publish(&self, obj: &K, type_: EventType, reason: &str, note: String) {
        if let Err(error) = self.try_publish(obj, type_, reason, note).await {
            warn!(%error, object = %ObjectRef::from_obj(obj), reason, "cannot publish event");
        }
    }

    /// Records an event on `obj` once this reconcile is done, in the background (at most a few
    /// at a time), for events nothing waits for, like the default `cleanup`'s `Deleting`: a
    /// deletion of many objects then waits only for their finalizers. A failure is logged.
    pub(crate) fn publish_later(&self, obj: &K, type_: EventType, reason: &str, note: String) {
        let event = reconcile_event(type_, reason, note);
        self.events.publish_later(event, obj.object_ref(&()));
    }

    /// Starts sending what [`Context::publish_later`] queued.
    pub(crate) fn send_later(&self) {
        self.events.send_later();
    }

    /// Marks a reconcile in flight until the guard drops (queued events wait for none).
    pub(crate) fn busy(&self) -> super::events::Busy {
        self.events.busy()
    }

    /// Records an event on `obj`, and fails if it cannot.
    pub async fn try_publish(
        &self,
        obj: &K,
        type_: EventType,
        reason: &str,
        note: String,
    ) -> Result<()> {
        let event = reconcile_event(type_, reason, note);
        self.events.publish(&event, &obj.object_ref(&())).await?;
        Ok(())
    }

    pub(crate) fn reset_failures(&self, key: &ObjectRef<K>) {
        self.failures.lock().expect("failures lock").remove(key);
    }

    pub(crate) fn count_failure(&self, key: &ObjectRef<K>) -> u32 {
        let mut failures = self.failures.lock().expect("failures lock");
        let count = failures.entry(key.clone()).or_default();
        *count = count.saturating_add(1);
        *count
    }
}

/// The last segment of `C`'s type name, for messages and labels.
fn type_name<C>() -> &'static str {
    let name = std::any::type_name::<C>();
    let name = name.split('<').next().unwrap_or(name);
    name.rsplit("::").next().unwrap_or(name)
}

/// An event of a reconcile (its action `Reconcile`).
fn reconcile_event(type_: EventType, reason: &str, note: String) -> Event {
    Event {
        type_,
        reason: reason.into(),
        note: Some(note),
        action: "Reconcile".into(),
        secondary: None,
    }
}
