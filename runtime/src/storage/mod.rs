//! Storage versions of custom resources: [`migrate`] rewrites every object of a kind in its
//! CRD's storage version and then narrows the CRD's `status.storedVersions` to it, so that an
//! old version can be removed from the CRD (what `operator-rs migrate-storage` runs, and what
//! [`migration_task`] runs once in an operator's manager).
//!
//! Moving a CRD's storage version changes where new writes go, not the objects already in
//! etcd, and the CRD's `status.storedVersions` keeps every version objects may still be stored
//! in; kube-apiserver refuses to drop a version from the CRD while it is listed there. The
//! migration:
//!
//! 1. finds the CRD of the group and kind and its storage version (refused: no such CRD, no
//!    storage version, or missing rights, checked with SelfSubjectAccessReviews before any write);
//! 2. rewrites every object in the storage version ([`Method::Rewrite`], the default): a paged
//!    list (an expired continue token restarts the list), and for each object an update of the
//!    object as read, with its resourceVersion. The API server re-encodes it in the storage
//!    version (an update that changes nothing is not written at all: an object already stored
//!    in the storage version costs no write). A conflict (the object changed since the list)
//!    re-reads it and writes that; an object deleted meanwhile is skipped. Or
//!    [`Method::StorageVersionMigration`]: creates a `storagemigration.k8s.io`
//!    StorageVersionMigration and waits for kube-controller-manager to finish it (GA in
//!    Kubernetes 1.37; in 1.35/1.36 served only with kube-apiserver's `StorageVersionMigrator`
//!    feature gate and `--runtime-config=storagemigration.k8s.io/v1beta1=true`, and carried out
//!    only with kube-controller-manager's `StorageVersionMigrator` and `InformerResourceVersion`
//!    gates);
//! 3. sets `status.storedVersions` to the storage version alone (only if the storage version
//!    is still the one migrated to).
//!
//! Running it twice is safe (the second run finds `storedVersions` narrowed and does nothing),
//! and an interrupted run is completed by running it again: `storedVersions` is narrowed only
//! after every object was rewritten.
//!
//! ```no_run
//! # async fn f(client: kube::Client) -> Result<(), operator_rs_runtime::storage::MigrationError> {
//! use operator_rs_runtime::storage::{Options, migrate};
//!
//! let report = migrate(&client, &Options::new("cache.example.com", "Memcached"), |p| {
//!     eprintln!("{p}")
//! })
//! .await?;
//! println!("{} objects rewritten", report.counts.rewritten);
//! # Ok(()) }
//! ```

// The migration itself; its items are re-exported here (a private module since it came after 0.1.0).
mod migration;

pub use migration::{
    Counts, Method, MigrationError, Options, Progress, Report, crd_stored_versions, migrate,
    migration_api_version,
};

/// A one-shot task for the manager: on the leader, migrates `options.kind` once (progress and
/// failures in the log; a failed or interrupted migration is done again on the next start, as
/// it is safe to repeat), then waits for shutdown. Ready at once: serving does not wait for
/// the migration. The operator's ServiceAccount needs the rights the migration needs:
///
/// ```text
/// // +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds,verbs=list;update
/// // +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=list;get
/// // +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions/status,verbs=patch
/// // +kubebuilder:rbac:groups=authorization.k8s.io,resources=selfsubjectaccessreviews,verbs=create
/// ```
///
/// ```no_run
/// # async fn f(manager: operator_rs_runtime::manager::Manager) -> anyhow::Result<()> {
/// use operator_rs_runtime::storage::{Options, migration_task};
///
/// let migrate = migration_task("migrate-memcached", Options::new("cache.example.com", "Memcached"));
/// Ok(manager.run(vec![migrate /* , the controllers */]).await?)
/// # }
/// ```
#[cfg(feature = "runtime")]
pub fn migration_task(name: &'static str, options: Options) -> crate::manager::Registration {
    crate::manager::Registration::new(name, move |ctx| async move {
        ctx.ready.set_ready();
        let run = migrate(&ctx.client, &options, |p| {
            tracing::info!(task = name, "{p}")
        });
        tokio::select! {
            outcome = run => match outcome {
                Ok(report) => tracing::info!(task = name, crd = %report.crd, rewritten = report.counts.rewritten, "storage version migration done"),
                Err(e) => tracing::error!(task = name, "storage version migration failed (it runs again on the next start): {e}"),
            },
            () = ctx.shutdown.wait() => return Ok(()),
        }
        ctx.shutdown.wait().await;
        Ok(())
    })
}
