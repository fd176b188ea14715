//! operator-rs: scaffold Kubernetes operators written in Rust on kube-rs, and keep them correct as they grow.
//!
//! The binary (`src/main.rs`) is a thin shell over this library:
//! - [`cli`] parses the command line;
//! - [`chart`] builds `dist/chart`, a Helm chart of what `config/` deploys;
//! - [`commands`] carries out each command;
//! - [`cluster`] talks to the user's cluster (`migrate-storage`, the storedVersions check);
//! - [`scaffold`] renders the embedded templates and inserts fragments at markers;
//! - [`project`] reads and writes the `PROJECT` file, the record of what was scaffolded;
//! - [`install_source`] is how this binary was installed, for generated projects to pin it;
//! - [`output`] prints without panicking on a full disk or a closed pipe;
//! - [`names`] validates and derives names (groups, versions, kinds, plurals, Rust identifiers);
//! - [`workspace`] is the project's files as a command sees them: the disk overlaid with pending writes;
//! - [`envtest`] installs the control-plane binaries of the integration tests (setup-envtest's job);
//! - [`dashboards`] writes the Grafana dashboards of the manager's metrics;
//! - [`crdgen`] derives CRD YAML from the user's Spec/Status structs without compiling;
//! - [`import`] reads a kubebuilder Go project and translates its API, controllers and markers to Rust;
//! - [`fromcrd`] writes Rust types for a kind the project does not own, from its CRD file;
//! - [`markers`] finds `+kubebuilder:` markers in Rust comments (never in literals) and reads their arguments;
//! - [`release`] is this operator-rs's version and scaffold fingerprint, what PROJECT records;
//! - [`rbac`] collects `+kubebuilder:rbac` markers into `config/rbac/role.yaml`;
//! - [`syntax`] parses Rust files at item level, function bodies set aside;
//! - [`vendor`] is the runtime crate as generated projects get it;
//! - [`webhookgen`] collects `+kubebuilder:webhook` markers into `config/webhook/manifests.yaml`.

// This library is the CLI's insides, documented for its contributors: module docs name the
// private items that do the work (read with `cargo doc --document-private-items`).
#![allow(rustdoc::private_intra_doc_links)]
#![warn(missing_docs)]

pub(crate) mod builtin;
pub mod cargo_command;
pub(crate) mod chart;
pub mod cli;
pub(crate) mod cluster;
pub mod commands;
pub mod crdgen;
pub(crate) mod dashboards;
pub mod envtest;
pub mod fromcrd;
pub(crate) mod import;
pub(crate) mod install_source;
pub mod markers;
pub mod names;
pub mod ops;
pub mod output;
pub mod project;
pub(crate) mod rbac;
pub mod release;
pub mod scaffold;
pub(crate) mod suggest;
pub(crate) mod syntax;
pub(crate) mod vendor;
pub mod webhookgen;
pub mod workspace;

#[cfg(test)]
mod layering;
