//! Storage versions of custom resources: [`migration`] rewrites every object of a kind in its
//! CRD's storage version and then narrows the CRD's `status.storedVersions` to it, so that an
//! old version can be removed from the CRD (what `operator-rs migrate-storage` runs).

pub mod migration;

pub use migration::{
    Counts, Method, MigrationError, Options, Progress, Report, crd_stored_versions, migrate,
};
