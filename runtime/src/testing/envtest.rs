//! envtest: a real control plane for integration tests (being built).
