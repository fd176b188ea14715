//! What the caches keep: trimmed objects, and of an owned kind only those an owner controls.

use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher::Event;
use kube::{Resource, ResourceExt};

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
            "cannot list {what}: forbidden; does the manager's ClusterRole (config/rbac/role.yaml, from `operator-rs generate rbac`) grant list on it? {error}"
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
