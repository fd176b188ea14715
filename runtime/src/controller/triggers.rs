//! Which objects of a controller's own watch get reconciled, and when: each only once the
//! controller's cache holds it.
//!
//! kube's controller looks every object it is asked to reconcile up in its store and drops the
//! request (`ObjectNotFound`) when the object is not there. A reflector fills its store page by
//! page into a buffer and swaps it in only when the list is complete (`InitDone`), so an object
//! seen during a list is not in the store yet. On the first list the controller waits for the
//! store anyway; on a relist (a watch that expired while kube-apiserver restarted, say) the store
//! already holds the previous list, and an object created since would be dropped and never
//! reconciled. Here an object of a list is reconciled once its list is complete.

use std::sync::Arc;

use futures::{Stream, StreamExt, stream};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::{self, Event};
use tracing::warn;

use super::Cached;

/// The objects to reconcile from `events`, a watch of `K` already reflected into `store`: an
/// updated object at once, the objects of a list once it is complete (all of them, as the
/// store then holds exactly that list), a deleted one never (its finalizer keeps it until
/// cleanup, which is an update). Errors are logged; the watch retries with its backoff.
pub(crate) fn stored_objects<K, S>(events: S, store: Store<K>) -> impl Stream<Item = Arc<K>>
where
    K: Cached,
    S: Stream<Item = Result<Event<K>, watcher::Error>>,
{
    events.flat_map(move |event| {
        let objects = match event {
            Ok(Event::Apply(obj)) => {
                let stored = store.get(&ObjectRef::from_obj(&obj));
                vec![stored.unwrap_or_else(|| Arc::new(obj))]
            }
            Ok(Event::InitDone) => store.state(),
            Ok(Event::Init | Event::InitApply(_) | Event::Delete(_)) => Vec::new(),
            Err(error) => {
                warn!(%error, kind = %K::kind(&()), "watch failed; retrying");
                Vec::new()
            }
        };
        stream::iter(objects)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::runtime::WatchStreamExt;
    use kube::runtime::reflector;

    fn map(name: &str) -> ConfigMap {
        let mut map = ConfigMap::default();
        map.metadata.name = Some(name.into());
        map.metadata.namespace = Some("ns".into());
        map
    }

    /// Whether `store` holds the ConfigMap `name`.
    fn holds(store: &Store<ConfigMap>, name: &str) -> bool {
        store.get(&ObjectRef::new(name).within("ns")).is_some()
    }

    /// A first list, an update, then a relist (as after a watch expired) that brings an
    /// object created meanwhile and no longer holds one deleted meanwhile.
    #[tokio::test]
    async fn every_object_is_triggered_only_once_the_store_holds_it() {
        let events = vec![
            Event::Init,
            Event::InitApply(map("a")),
            Event::InitApply(map("b")),
            Event::InitDone,
            Event::Apply(map("c")),
            Event::Init,
            Event::InitApply(map("a")),
            Event::InitApply(map("new")),
            Event::InitDone,
        ];
        let (store, writer) = reflector::store();
        let reflected = stream::iter(events.into_iter().map(Ok)).reflect(writer);
        let mut triggers = Box::pin(stored_objects(reflected, store.clone()));
        let mut seen = Vec::new();
        while let Some(obj) = triggers.next().await {
            let key = ObjectRef::from_obj(obj.as_ref());
            assert!(
                store.get(&key).is_some(),
                "{key} triggered before the store held it"
            );
            seen.push(key.name);
        }
        seen[..2].sort();
        seen[3..].sort();
        assert_eq!(seen, ["a", "b", "c", "a", "new"]);
        assert!(holds(&store, "new"));
        assert!(!holds(&store, "c"), "the relist dropped c");
    }

    #[tokio::test]
    async fn a_watch_error_triggers_nothing_and_ends_nothing() {
        let (store, writer) = reflector::store::<ConfigMap>();
        let error = watcher::Error::NoResourceVersion;
        let events = vec![Ok(Event::Init), Err(error), Ok(Event::InitDone)];
        let reflected = stream::iter(events).reflect(writer);
        let triggered: Vec<_> = stored_objects(reflected, store).collect().await;
        assert!(triggered.is_empty());
    }
}
