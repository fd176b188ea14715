//! The envtest binaries (etcd, kube-apiserver, kubectl) for the integration tests, installed
//! without Go, as kubebuilder's `setup-envtest use` installs them: [`index`] reads
//! controller-tools' releases index and the version selectors, [`fetch`] downloads what it
//! names, [`store`] keeps each version in a per-user cache, checked against the index's
//! SHA-512 and installed whole or not at all.

pub(crate) mod fetch;
pub mod index;
pub(crate) mod store;
