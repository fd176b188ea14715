//! `generate crds` and its parts, one test binary (one link of the crate and its fixtures):
//! the differential against kube-derive, exact output, errors and refusals, options, doc
//! comments, real-world types, the structural rewrite and transforms, k8s-openapi's recorded
//! schemas, and the markers reference. The API server's verdicts are in `tests/apiserver/`.

#[path = "../common/mod.rs"]
mod common;

#[path = "cases/mod.rs"]
mod crdgen_cases;
mod schema_gen;

mod differential;
// Fixtures name their own modules from the crate root (`crate::modular::..`), as in the crate
// `generate crds` reads them from.
use differential::{modular, serde_attrs};
mod doc_comments;
mod errors;
mod exact;
mod k8s_schemas;
mod markers_doc;
mod options;
mod realworld;
mod refusals;
mod structural;
mod transforms;
