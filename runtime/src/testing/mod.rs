//! Test support for operators (feature `testing`).
//!
//! - [`mock`]: a mock API server that checks the requests a reconcile makes, for fast unit
//!   tests of a [`Reconciler`](crate::controller::Reconciler) with no cluster.
//! - [`envtest`]: a real etcd and kube-apiserver (and kube-controller-manager when present)
//!   from `$KUBEBUILDER_ASSETS`, for integration tests, like controller-runtime's envtest.
//! - [`local_webhooks`]: webhooks of a manager under test running outside the cluster, set
//!   up by the test as the cluster's admin, so the manager needs no more than its RBAC.
//! - [`metrics`]: scraping a manager's secure metrics endpoint with a bearer token, and a
//!   ServiceAccount allowed to.
//! - [`refusal`]: RBAC refusals in a manager's log, told from an API server warming up.
//! - [`operator`]: an operator's controllers running on that control plane with exactly the
//!   RBAC of its `config/rbac`, for its integration tests.
//! - [`e2e`]: an operator's `manager` binary on a cluster with exactly that RBAC, for its
//!   end-to-end tests (at scale and under faults too), like kubebuilder's `test/utils`.
//! - [`samples`]: a project's `config/samples` as typed objects; whether one is reconciled.
//! - [`crd_drift`]: the committed CRDs checked against the Rust types.
//! - [`shard_audit`]: which replica of a sharded manager wrote which object in which ring
//!   generation, from the API server's audit log.
//! - [`scale`]: the scale lab's machinery (objects in parallel, time to `observedGeneration`,
//!   memory from `/proc`, figures and the budgets of a project's `scale-budgets.yaml`).

pub mod crd_drift;
pub mod e2e;
pub mod envtest;
pub mod local_webhooks;
pub mod metrics;
pub mod mock;
pub mod operator;
mod project;
pub mod refusal;
pub mod samples;
pub mod scale;
pub mod shard_audit;

pub use mock::{ApiServerVerifier, Received, mock_context};

/// Writes `line` (and a newline) to stderr past the test harness's capture, which shows what
/// `eprintln!` prints only for failing tests: for a SKIPPED line, visible when the test passes.
pub(crate) fn uncaptured(line: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(format!("{line}\n").as_bytes());
}

/// The running test's name (libtest names its thread after it), else `test`.
pub(crate) fn current_test() -> String {
    let thread = std::thread::current();
    let name = thread
        .name()
        .filter(|name| *name != "main")
        .unwrap_or("test");
    name.to_owned()
}
