//! Our rules against the real kube-apiserver's verdicts, one test binary with one control
//! plane for all (the runtime's envtest, `Envtest::shared()`, through `control_plane`): CRD
//! schemas and CEL costs (`crds`), `--check-compat` (`compat`), names (`names`) and webhook
//! configurations (`webhooks`). Each test prints a `SKIPPED` line without `KUBEBUILDER_ASSETS`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../control_plane/mod.rs"]
mod control_plane;
#[path = "../crdgen/cases/mod.rs"]
mod crdgen_cases;

mod compat;
mod crds;
mod names;
mod webhooks;
