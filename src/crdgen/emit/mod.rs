//! Emitting: CRDs into YAML, and the files, kustomization and warnings `generate crds` writes.

pub mod output;
pub mod render;
