//! An `Api` for an object of any scope, so one controller serves namespaced and cluster kinds;
//! and the `Api`s a controller watches a kind through, within the manager's namespaces.

use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube::api::Api;
use kube::core::DynamicResourceScope;
use kube::{Client, Resource};

use crate::manager::WatchNamespaces;

/// The scope of a kind, which decides how an `Api` for one of its objects is made.
pub trait ScopedApi: Sized {
    /// An `Api` for objects of kind `K` in `namespace` (ignored for cluster-scoped kinds).
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>;

    /// The `Api`s to watch kind `K` through within `namespaces`: one per namespace, or one
    /// cluster-wide (every namespace, or a cluster-scoped kind, which no namespace holds).
    fn watched<K>(client: Client, namespaces: &WatchNamespaces) -> Vec<Api<K>>
    where
        K: Resource<DynamicType = (), Scope = Self>;
}

impl ScopedApi for NamespaceResourceScope {
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        match namespace {
            Some(namespace) => Api::namespaced(client, namespace),
            None => Api::default_namespaced(client),
        }
    }

    fn watched<K>(client: Client, namespaces: &WatchNamespaces) -> Vec<Api<K>>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        match namespaces {
            WatchNamespaces::All => vec![Api::all(client)],
            WatchNamespaces::Only(set) => (set.iter())
                .map(|ns| Api::namespaced(client.clone(), ns))
                .collect(),
        }
    }
}

impl ScopedApi for ClusterResourceScope {
    fn api<K>(client: Client, _namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        Api::all(client)
    }

    fn watched<K>(client: Client, _namespaces: &WatchNamespaces) -> Vec<Api<K>>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        vec![Api::all(client)]
    }
}

impl ScopedApi for DynamicResourceScope {
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        match namespace {
            Some(namespace) => Api::namespaced_with(client, namespace, &()),
            None => Api::all_with(client, &()),
        }
    }

    fn watched<K>(client: Client, namespaces: &WatchNamespaces) -> Vec<Api<K>>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        match namespaces {
            WatchNamespaces::All => vec![Api::all_with(client, &())],
            WatchNamespaces::Only(set) => (set.iter())
                .map(|ns| Api::namespaced_with(client.clone(), ns, &()))
                .collect(),
        }
    }
}
