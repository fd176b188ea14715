//! The runtime of operators scaffolded by [operator-rs](https://github.com/operator-rs/operator-rs):
//! what controller-runtime is to kubebuilder, on kube-rs.
//!
//! A generated operator keeps only its own logic (its types, what each reconcile does, its
//! tests); the plumbing lives here and improves with `operator-rs upgrade-runtime`:
//!
//! - [`manager`]: flags, the client, leader election on a Lease, `/healthz` and `/readyz`,
//!   Prometheus metrics with controller-runtime's names, graceful shutdown, logging.
//! - [`controller`]: a kind's controller from its reconcile functions: trimmed and paged
//!   caches, readiness after the first list, the finalizer, per-object backoff, bounded error
//!   labels, conditions, events that never block cleanup, status written only on change.
//! - [`webhook`]: admission (defaulting, validation) and conversion webhooks over HTTPS,
//!   with certificates from cert-manager, made and rotated by the manager itself, or made for
//!   a manager running outside the cluster (`--webhook-local-url`).
//! - [`auth`]: delegated authentication and authorization (TokenReview, SubjectAccessReview)
//!   of the secure metrics endpoint; [`tls`]: certificates and HTTPS for it and the webhooks.
//! - [`crd`]: the CRD options of `PROJECT` (`crd: {maxDescLen, knownFormatsOnly}`), applied
//!   as `operator-rs generate crds` applies them (the drift test `tests/crds.rs` uses them).
//! - [`storage`] (feature `client`, in `runtime`): storage version migration of a kind, and
//!   [`connect`], the client configuration from a kubeconfig and context.
//! - `testing` (feature `testing`): a mock API server for reconcile unit tests, and
//!   envtest, a real etcd and kube-apiserver for integration tests.
//!
//! Everything is behind the default feature `runtime`; without it the crate is empty (operator-rs
//! depends on it that way, only to embed its sources).

#![warn(missing_docs)]

#[cfg(feature = "runtime")]
pub mod address;
#[cfg(feature = "runtime")]
pub mod auth;
#[cfg(feature = "client")]
pub mod connect;
#[cfg(feature = "runtime")]
pub mod controller;
#[cfg(feature = "crd")]
pub mod crd;
#[cfg(feature = "runtime")]
pub mod duration;
#[cfg(feature = "runtime")]
pub mod manager;
#[cfg(feature = "runtime")]
pub mod shutdown;
#[cfg(feature = "client")]
pub mod storage;
#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "runtime")]
pub mod tls;
#[cfg(feature = "runtime")]
pub mod webhook;
