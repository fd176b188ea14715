//! Storage versions of custom resources: [`migration`] rewrites every object of a kind in its
//! CRD's storage version and then narrows the CRD's `status.storedVersions` to it, so that an
//! old version can be removed from the CRD (what `operator-rs migrate-storage` runs, and what
//! [`migration_task`] runs once in an operator's manager).

pub mod migration;

pub use migration::{
    Counts, Method, MigrationError, Options, Progress, Report, crd_stored_versions, migrate,
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
