//! Owned objects without their owner's bucket label ([`crate::shard::BUCKET_LABEL`]), made
//! before the manager was sharded or by another client (kube-controller-manager's ReplicaSets
//! of a Deployment, say): the replica reconciling their owner labels them, once each, so its
//! label-selected watch of the owned kind brings them.
//!
//! Every replica watches the owned kind's objects without the label (their metadata only,
//! cached nowhere; none once all are labelled) within its watched ranges, and labels those whose
//! controller owner is of the reconciled kind and in its shard, holding the shard's guard as a
//! reconcile does: one writer per object per ring generation.

use futures::{StreamExt, stream};
use kube::api::{Patch, PatchParams};
use kube::core::PartialObjectMeta;
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, watcher as watch_stream};
use kube::{Client, Resource, ResourceExt};
use serde_json::json;
use tracing::{debug, warn};

use super::{Cached, Object, ScopedApi, watch};
use crate::manager::WatchNamespaces;
use crate::shard::{BUCKET_LABEL, Shard, bucket, watch as shard_watch};
use crate::shutdown::Shutdown;

/// Labels in flight at once.
const IN_FLIGHT: usize = 4;

/// Labels, until `shutdown`, the objects of `C` that `config` selects, lack the label, and
/// have a controller owner of kind `K` in `shard`.
pub(crate) async fn unlabelled<K, C>(
    client: Client,
    namespaces: WatchNamespaces,
    config: watcher::Config,
    shard: Shard,
    shutdown: Shutdown,
) where
    K: Object,
    C: Cached + Resource<Scope: ScopedApi>,
{
    let own = config.label_selector.as_deref();
    let selector = crate::shard::bucket::and(own, &format!("!{BUCKET_LABEL}"));
    let config = config.clone().labels(&selector);
    let (watch_client, hash_shard) = (client.clone(), shard.clone());
    let events = shard_watch::restarting(
        shard.watched(),
        move |ranges| {
            if ranges.is_empty() {
                return shard_watch::nothing();
            }
            // `PartialObjectMeta`: metadata-only requests.
            let apis = C::Scope::watched::<PartialObjectMeta<C>>(watch_client.clone(), &namespaces);
            let watches = (apis.into_iter())
                .map(|api| watch_stream(api, config.clone()).default_backoff().boxed());
            stream::select_all(watches).boxed()
        },
        move |obj: &PartialObjectMeta<C>| hash_shard.owner_hash_of(obj),
    );
    let work = events.for_each_concurrent(IN_FLIGHT, |event| {
        let (client, shard) = (client.clone(), shard.clone());
        async move {
            if let Ok(Event::Apply(obj) | Event::InitApply(obj)) = event {
                label::<K, C>(&client, &shard, &obj).await;
            }
        }
    });
    tokio::select! {
        () = work => {}
        () = shutdown.wait() => {}
    }
}

/// Labels `obj` with its owner's bucket if its owner is of kind `K` and this replica's (waiting
/// while a handover gives it to this replica).
async fn label<K, C>(client: &Client, shard: &Shard, obj: &PartialObjectMeta<C>)
where
    K: Object,
    C: Cached + Resource<Scope: ScopedApi>,
{
    if watch::controller_of::<K, _>(obj).is_none() {
        return;
    }
    let Some(hash) = shard.owner_hash_of(obj) else {
        return;
    };
    let _guard = loop {
        if let Some(guard) = shard.admit(hash).await {
            break guard;
        }
        if !shard.watched().borrow().contains(hash) {
            return;
        }
        tokio::time::sleep(shard.retry_after()).await;
    };
    let api = C::Scope::api::<C>(client.clone(), obj.namespace().as_deref());
    let patch = json!({"metadata": {"labels": {BUCKET_LABEL: bucket(hash)}}});
    let name = obj.name_any();
    match (api.patch_metadata(&name, &PatchParams::default(), &Patch::Merge(&patch))).await {
        Ok(_) => debug!(object = name, "labelled with its owner's bucket"),
        Err(kube::Error::Api(status)) if status.code == 404 => {}
        Err(error) => warn!(
            %error,
            object = name,
            kind = %C::kind(&()),
            "cannot label an owned object with its owner's bucket ({BUCKET_LABEL}): the replica \
             of its owner does not see it; grant patch on its kind, or create it with \
             Context::owned_labels"
        ),
    }
}
