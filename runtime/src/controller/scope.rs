//! An `Api` for an object of any scope, so one controller serves namespaced and cluster kinds.

use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube::api::Api;
use kube::core::DynamicResourceScope;
use kube::{Client, Resource};

/// The scope of a kind, which decides how an `Api` for one of its objects is made.
pub trait ScopedApi: Sized {
    /// An `Api` for objects of kind `K` in `namespace` (ignored for cluster-scoped kinds).
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
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
}

impl ScopedApi for ClusterResourceScope {
    fn api<K>(client: Client, _namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        Api::all(client)
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
}
