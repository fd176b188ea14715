//! Deriving: the CRD kube-derive 5 builds for each kind (schemars 1's derive over its real
//! generator, kube-core's structural rewrite and transforms, k8s-openapi's types, `#[kube]`),
//! statically (`--exact`, through the compiler, is [`crate::crdgen::exact`], a driver beside the
//! static one).

pub mod crd;
pub mod schema;
pub mod structural;
/// Public only for `tests/crdgen/transforms.rs`, which checks it against running every transform.
#[doc(hidden)]
pub mod transforms;
