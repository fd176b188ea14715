//! What the caches keep: trimmed objects, and of an owned kind only those an owner controls;
//! and how a kind is watched in several namespaces at once, into one cache.

use std::collections::{HashMap, HashSet};

use futures::stream::{self, BoxStream};
use futures::{Stream, StreamExt};
use kube::api::Api;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, watcher as watch_stream};
use kube::{Resource, ResourceExt};

use super::Cached;

/// A watch of `K` through each of `apis` (one per namespace; see
/// [`super::ScopedApi::watched`]), as the events of one watch feeding `store`'s cache.
pub(crate) fn watch_all<K: Cached>(
    apis: Vec<Api<K>>,
    config: &watcher::Config,
    store: Store<K>,
) -> BoxStream<'static, Result<Event<K>, watcher::Error>> {
    let namespaces: Vec<Option<String>> = apis
        .iter()
        .map(|a| a.namespace().map(str::to_owned))
        .collect();
    let mut streams: Vec<_> = (apis.into_iter().enumerate())
        .map(|(i, api)| {
            watch_stream(api, config.clone())
                .default_backoff()
                .map(move |event| (i, event))
                .boxed()
        })
        .collect();
    if streams.len() == 1 {
        return streams.remove(0).map(|(_, event)| event).boxed();
    }
    merge_lists(stream::select_all(streams), namespaces, store).boxed()
}

/// The events of several watches (tagged with the index of their namespace in `namespaces`)
/// as those of one: one list (Init, the objects of every namespace, then InitDone once every
/// namespace is listed), then the changes.
///
/// Until every namespace is listed, nothing goes out: each namespace's list, and what its watch
/// saw since, are kept here and sent as that one list. A reflector applies a change at once to
/// its store and swaps the list in at InitDone, so a change sent before the last namespace is
/// listed would be lost (an object created in a namespace listed early is not in the store, and
/// the controller drops its request and never reconciles it) or undone (one deleted comes back).
/// A namespace whose watch restarts before then is listed anew (its earlier list dropped).
///
/// A reflector replaces its whole cache with each list, so a later relist of one namespace
/// (after its watch expired) becomes updates of what it lists and deletions of what `store`
/// holds in that namespace and it no longer lists: the other namespaces' objects stay cached.
pub(crate) fn merge_lists<K, E, S>(
    tagged: S,
    namespaces: Vec<Option<String>>,
    store: Store<K>,
) -> impl Stream<Item = Result<Event<K>, E>>
where
    K: Cached,
    S: Stream<Item = (usize, Result<Event<K>, E>)>,
{
    let mut first = Some(FirstList::<K>::new(namespaces.len()));
    let mut relisting: Vec<Option<HashSet<String>>> = vec![None; namespaces.len()];
    tagged.flat_map(move |(i, event)| {
        let out: Vec<Result<Event<K>, E>> = match (first.as_mut(), event) {
            (_, Err(error)) => vec![Err(error)],
            (Some(list), Ok(event)) => {
                list.record(i, event);
                if list.complete() {
                    first.take().map(FirstList::events).unwrap_or_default()
                } else {
                    Vec::new()
                }
            }
            (None, Ok(Event::Init)) => {
                relisting[i] = Some(HashSet::new());
                Vec::new()
            }
            (None, Ok(Event::InitApply(obj))) => {
                if let Some(seen) = relisting[i].as_mut() {
                    seen.insert(obj.name_any());
                }
                vec![Ok(Event::Apply(obj))]
            }
            (None, Ok(Event::InitDone)) => {
                let seen = relisting[i].take().unwrap_or_default();
                (store.state().into_iter())
                    .filter(|obj| {
                        obj.namespace() == namespaces[i] && !seen.contains(&obj.name_any())
                    })
                    .map(|obj| Ok(Event::Delete(K::clone(&obj))))
                    .collect()
            }
            (None, Ok(other)) => vec![Ok(other)],
        };
        stream::iter(out)
    })
}

/// The first list of several namespaces' watches as it comes in: each namespace's objects (by
/// name), as its list and then its watch leave them, and whether its list is complete.
struct FirstList<K> {
    objects: Vec<HashMap<String, K>>,
    listed: Vec<bool>,
}

impl<K: Cached> FirstList<K> {
    fn new(namespaces: usize) -> Self {
        Self {
            objects: (0..namespaces).map(|_| HashMap::new()).collect(),
            listed: vec![false; namespaces],
        }
    }

    /// Namespace `i`'s watch sent `event`.
    fn record(&mut self, i: usize, event: Event<K>) {
        match event {
            // Its list starts (again, if its watch restarted): what it listed before is stale.
            Event::Init => {
                self.objects[i].clear();
                self.listed[i] = false;
            }
            Event::InitApply(obj) | Event::Apply(obj) => {
                self.objects[i].insert(obj.name_any(), obj);
            }
            Event::Delete(obj) => {
                self.objects[i].remove(&obj.name_any());
            }
            Event::InitDone => self.listed[i] = true,
        }
    }

    fn complete(&self) -> bool {
        self.listed.iter().all(|listed| *listed)
    }

    /// The one list of every namespace.
    fn events<E>(self) -> Vec<Result<Event<K>, E>> {
        let objects = self.objects.into_iter().flat_map(HashMap::into_values);
        std::iter::once(Event::Init)
            .chain(objects.map(Event::InitApply))
            .chain(std::iter::once(Event::InitDone))
            .map(Ok)
            .collect()
    }
}

/// Drops what reconcile never reads from a cached copy (`managedFields`, and kubectl's
/// `last-applied-configuration` annotation), to keep the cache small.
pub fn strip<K: ResourceExt>(obj: &mut K) {
    obj.managed_fields_mut().clear();
    obj.annotations_mut()
        .remove("kubectl.kubernetes.io/last-applied-configuration");
}

/// The owners of kind `K` that `child` names in its ownerReferences.
pub(crate) fn owners<K, C>(child: &C) -> impl Iterator<Item = ObjectRef<K>> + '_
where
    K: Resource<DynamicType = ()>,
    C: Resource,
{
    let namespace = child.meta().namespace.as_deref();
    (child.meta().owner_references.iter().flatten())
        .filter_map(move |owner| ObjectRef::from_owner_ref(namespace, owner, ()))
}

/// The first owner of kind `K` of `child`, if any.
pub(crate) fn controller_of<K, C>(child: &C) -> Option<ObjectRef<K>>
where
    K: Resource<DynamicType = ()>,
    C: Resource,
{
    owners::<K, C>(child).next()
}

/// Keeps a watch event only if its object is owned by a `K`, so the cache of an owned kind
/// holds only what this controller owns. An object that loses its owner is removed from the
/// cache (its update becomes a deletion there).
pub(crate) fn controlled_by<K, C>(event: Event<C>) -> Option<Event<C>>
where
    K: Resource<DynamicType = ()>,
    C: Resource,
{
    let owned = |child: &C| controller_of::<K, C>(child).is_some();
    match event {
        Event::Apply(child) if !owned(&child) => Some(Event::Delete(child)),
        Event::InitApply(child) if !owned(&child) => None,
        event => Some(event),
    }
}

/// Why the first list of `K` failed, and what to do about it.
pub(crate) fn list_failure<K: Resource<DynamicType = ()>>(error: &kube::Error) -> String {
    let what = format!("{}.{}", K::plural(&()), K::group(&()));
    let what = what.trim_end_matches('.');
    match error {
        kube::Error::Api(status) if status.code == 404 => format!(
            "cannot list {what}: the API server does not serve {}; is its CRD installed (`make install`)?",
            K::api_version(&())
        ),
        kube::Error::Api(status) if status.code == 403 => format!(
            "cannot list {what}: forbidden; does the manager's role (config/rbac/role.yaml, from `operator-rs generate rbac`: a ClusterRole, or in a namespace-scoped project a Role in each watched namespace and a ClusterRole for cluster-scoped kinds) grant list on it? {error}"
        ),
        error => format!("cannot list {what}: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    fn owned_by(kind: &str, api_version: &str) -> ReplicaSet {
        let mut child = ReplicaSet::default();
        child.metadata.name = Some("child".into());
        child.metadata.namespace = Some("ns".into());
        child.metadata.owner_references = Some(vec![OwnerReference {
            api_version: api_version.into(),
            kind: kind.into(),
            name: "parent".into(),
            uid: "u".into(),
            controller: Some(true),
            ..OwnerReference::default()
        }]);
        child
    }

    #[test]
    fn finds_the_owner_of_the_reconciled_kind_only() {
        let child = owned_by("Deployment", "apps/v1");
        let owner = controller_of::<Deployment, _>(&child).unwrap();
        assert_eq!(owner, ObjectRef::new("parent").within("ns"));
        // Same kind name, another group: not ours.
        let child = owned_by("Deployment", "example.com/v1");
        assert_eq!(controller_of::<Deployment, _>(&child), None);
    }

    #[test]
    fn caches_only_owned_objects_and_drops_those_that_lose_their_owner() {
        let ours = owned_by("Deployment", "apps/v1");
        let theirs = owned_by("StatefulSet", "apps/v1");
        assert!(matches!(
            controlled_by::<Deployment, _>(Event::InitApply(ours.clone())),
            Some(Event::InitApply(_))
        ));
        assert!(controlled_by::<Deployment, _>(Event::InitApply(theirs.clone())).is_none());
        assert!(matches!(
            controlled_by::<Deployment, _>(Event::Apply(theirs)),
            Some(Event::Delete(_))
        ));
        assert!(matches!(
            controlled_by::<Deployment, _>(Event::Apply(ours)),
            Some(Event::Apply(_))
        ));
    }

    fn map_in(ns: &str, name: &str) -> ReplicaSet {
        let mut obj = ReplicaSet::default();
        obj.metadata.name = Some(name.into());
        obj.metadata.namespace = Some(ns.into());
        obj
    }

    /// Two namespaces' watches: one list of both, then a relist of `a` that drops `a/old`
    /// and keeps every object of `b`.
    #[tokio::test]
    async fn merged_watches_list_once_and_relist_one_namespace_without_losing_the_other() {
        use kube::runtime::{WatchStreamExt, reflector};
        let events: Vec<(usize, Result<Event<ReplicaSet>, ()>)> = vec![
            (0, Ok(Event::Init)),
            (1, Ok(Event::Init)),
            (0, Ok(Event::InitApply(map_in("a", "old")))),
            (1, Ok(Event::InitApply(map_in("b", "x")))),
            (0, Ok(Event::InitDone)),
            (1, Ok(Event::InitDone)),
            (0, Ok(Event::Init)),
            (0, Ok(Event::InitApply(map_in("a", "new")))),
            (0, Ok(Event::InitDone)),
            (1, Err(())),
        ];
        let (store, writer) = reflector::store();
        let namespaces = vec![Some("a".into()), Some("b".into())];
        let merged = merge_lists(stream::iter(events), namespaces, store.clone());
        let seen: Vec<String> = merged
            .map(|e| e.map_err(|()| kube::runtime::watcher::Error::NoResourceVersion))
            .reflect(writer)
            .map(|event| match event {
                Ok(Event::Init) => "init".to_string(),
                Ok(Event::InitApply(o)) => format!("list {}", o.name_any()),
                Ok(Event::InitDone) => "done".to_string(),
                Ok(Event::Apply(o)) => format!("apply {}", o.name_any()),
                Ok(Event::Delete(o)) => format!("delete {}", o.name_any()),
                Err(_) => "error".to_string(),
            })
            .collect()
            .await;
        assert_eq!(
            seen,
            [
                "init",
                "list old",
                "list x",
                "done",
                "apply new",
                "delete old",
                "error"
            ]
        );
        let mut cached: Vec<String> = store.state().iter().map(|o| o.name_any()).collect();
        cached.sort();
        assert_eq!(cached, ["new", "x"]);
    }

    /// Changes one namespace's watch sees while another is still listing (the manager just
    /// started; an object created in the first namespace at once) reach the cache and are
    /// reconciled, and a namespace whose watch restarts mid-list is listed anew: a reflector
    /// applies a change to its store at once and swaps the list in later, so a change sent
    /// before the merged list would be lost (the new object never reconciled) or undone.
    #[tokio::test]
    async fn changes_before_every_namespace_is_listed_reach_the_cache_and_are_reconciled() {
        use kube::runtime::{WatchStreamExt, reflector};
        let events: Vec<(usize, Result<Event<ReplicaSet>, watcher::Error>)> = vec![
            (0, Ok(Event::Init)),
            (1, Ok(Event::Init)),
            (0, Ok(Event::InitApply(map_in("a", "kept")))),
            (0, Ok(Event::InitApply(map_in("a", "gone")))),
            (1, Ok(Event::InitApply(map_in("b", "stale")))),
            (0, Ok(Event::InitDone)),
            (0, Ok(Event::Apply(map_in("a", "created")))),
            (0, Ok(Event::Delete(map_in("a", "gone")))),
            (1, Err(watcher::Error::NoResourceVersion)),
            (1, Ok(Event::Init)),
            (1, Ok(Event::InitApply(map_in("b", "listed")))),
            (1, Ok(Event::InitDone)),
        ];
        let (store, writer) = reflector::store();
        let namespaces = vec![Some("a".into()), Some("b".into())];
        let merged = merge_lists(stream::iter(events), namespaces, store.clone());
        let reflected = merged.reflect(writer);
        let mut triggers = Box::pin(super::super::triggers::stored_objects(
            reflected,
            store.clone(),
        ));
        let mut triggered = Vec::new();
        while let Some(obj) = triggers.next().await {
            triggered.push(ObjectRef::from_obj(obj.as_ref()));
        }
        // kube's controller holds every request until the store is ready (the merged list is
        // in), then looks its object up there and drops it if it is not: only what the cache
        // holds now is reconciled.
        let mut reconciled: Vec<String> = (triggered.iter())
            .filter(|key| store.get(key).is_some())
            .map(|key| format!("{}/{}", key.namespace.as_deref().unwrap(), key.name))
            .collect();
        reconciled.sort();
        reconciled.dedup();
        assert_eq!(reconciled, ["a/created", "a/kept", "b/listed"]);
        let mut cached: Vec<String> = store.state().iter().map(|o| o.name_any()).collect();
        cached.sort();
        assert_eq!(cached, ["created", "kept", "listed"]);
    }

    #[test]
    fn strip_drops_managed_fields_and_last_applied() {
        let mut obj = owned_by("Deployment", "apps/v1");
        obj.metadata.managed_fields = Some(vec![Default::default()]);
        obj.annotations_mut().insert(
            "kubectl.kubernetes.io/last-applied-configuration".into(),
            "{}".into(),
        );
        obj.annotations_mut().insert("keep".into(), "me".into());
        strip(&mut obj);
        assert!(obj.managed_fields().is_empty());
        assert_eq!(obj.annotations().len(), 1);
    }
}
