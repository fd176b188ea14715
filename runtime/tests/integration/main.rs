//! The runtime's integration tests, one test binary sharing one control plane
//! (`Envtest::shared()`; a few tests start their own to restart or stop it): envtest itself,
//! leader election, the manager, storage migration, and webhooks (served alone, and on
//! envtest). SIGTERM (`manager_signal`) and the metrics endpoint's auth (`metrics_auth`) keep
//! binaries of their own: the signal goes to the whole process. So does the controller
//! (`controller`): beside this binary's tests, under CI's load, its namespace-scoped manager
//! twice never reconciled within a minute (alone, or with its own tests, it takes seconds; the
//! cause is not found yet).

#[path = "../support/mod.rs"]
mod support;
#[path = "../webhook_kinds/mod.rs"]
mod webhook_kinds;

mod e2e_harness;
mod envtest;
mod leader_election;
mod manager;
mod storage_migration;
mod webhook;
mod webhook_envtest;
