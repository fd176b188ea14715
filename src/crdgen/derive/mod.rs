//! Deriving: the CRD kube-derive 5 builds for each kind (schemars 1's derive over its real
//! generator, kube-core's structural rewrite and transforms, k8s-openapi's types, `#[kube]`),
//! statically or through the compiler (`--exact`).

pub mod crd;
pub mod exact;
/// Public only for `tests/crdgen/k8s_schemas.rs`, which records and checks it against k8s-openapi.
#[doc(hidden)]
pub mod k8s_table;
pub mod schema;
pub mod structural;
/// Public only for `tests/crdgen/transforms.rs`, which checks it against running every transform.
#[doc(hidden)]
pub mod transforms;
