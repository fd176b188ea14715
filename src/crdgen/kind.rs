//! The kind data the stages share, below them all: a kind's CRD as the driver hands it to
//! `emit` ([`KindCrd`], with its YAML when it was rendered while the kinds were built), whether
//! kube-apiserver's checks run ([`Checks`]), and where a CRD is written ([`crd_path`]).

use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// One kind's CRD, merged over its versions.
#[derive(Debug, Clone)]
pub struct KindCrd {
    /// The full group, e.g. `batch.example.com`.
    pub group: String,
    /// The kind, e.g. `CronJob`.
    pub kind: String,
    /// The resource's plural name, e.g. `cronjobs`.
    pub plural: String,
    /// The CRD, every version merged in.
    pub crd: CustomResourceDefinition,
    /// Its text, when it was rendered while the kinds were built (it is the built CRD).
    pub(crate) rendered: Option<Rendered>,
}

/// A CRD's YAML and the length of its JSON (as Go writes it: see `json_len`).
#[derive(Debug, Clone)]
pub(crate) struct Rendered {
    pub yaml: String,
    pub json_len: usize,
}

/// Whether CRDs are checked as kube-apiserver checks them before they are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checks {
    ApiServer,
    None,
}

/// The folder `generate crds` owns.
pub const CRD_BASES: &str = "config/crd/bases";

/// Where the CRD of `group`/`plural` is written: `<group>_<plural>.yaml`, as controller-gen names
/// it, shortened with a hash when a valid CRD name (up to 253 bytes) makes it too long for a file
/// name.
pub fn crd_path(group: &str, plural: &str) -> PathBuf {
    Path::new(CRD_BASES).join(crate::names::fit_file_name(
        &format!("{group}_{plural}"),
        ".yaml",
    ))
}
