//! Why a reconcile failed, with a bounded label for the error metrics.

use kube::runtime::finalizer;

use super::Action;

/// A result of a reconcile.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why [`Controller::run`](super::Controller::run) could not start the controller.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// Listing the kind failed before any watch: its CRD is not installed, or the manager's
    /// RBAC does not grant `list` (the message says which, and what to do).
    #[error("{}{message}", namespace.as_deref().map(|ns| format!("in namespace {ns}: ")).unwrap_or_default())]
    List {
        /// The namespace listed; `None` for the whole cluster.
        namespace: Option<String>,
        /// What failed and what to do.
        message: String,
        /// The API server's answer (its status code tells 403 from 404).
        error: kube::Error,
    },
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A call to the API server failed.
    #[error("Kubernetes API call failed: {0}")]
    Kube(#[from] kube::Error),
    /// Adding the finalizer failed.
    #[error("adding the finalizer failed: {0}")]
    AddFinalizer(#[source] kube::Error),
    /// Removing the finalizer failed.
    #[error("removing the finalizer failed: {0}")]
    RemoveFinalizer(#[source] kube::Error),
    /// The object lacks a field the API server always sets.
    #[error("object has no {0}")]
    MissingField(&'static str),
    /// An owned cache has not listed yet: the reconcile comes back shortly, as no error.
    #[error("the {0} cache is still listing")]
    CacheNotReady(&'static str),
    /// The watch that fills an owned cache ended (the manager is shutting down).
    #[error("the {0} cache is gone")]
    CacheGone(&'static str),
    /// The reconcile was still running at its deadline (`--reconcile-timeout`) and was
    /// cancelled: a request that got no answer, or logic that takes too long.
    #[error("the reconcile did not finish within {0:?} (--reconcile-timeout) and was cancelled")]
    Timeout(std::time::Duration),
    /// The operator's own logic failed; `reason` labels it in the metrics.
    #[error("{reason}: {source}")]
    Reconcile {
        /// A bounded label: a fixed word, never text that varies with the object.
        reason: &'static str,
        /// What failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl Error {
    /// An error of the operator's own logic, counted under `reason` (a fixed word such as
    /// `"backup_failed"`, never text that varies with the object).
    ///
    /// ```
    /// use operator_rs_runtime::controller::Error;
    ///
    /// let error = Error::reconcile("bad_spec", "size must be positive");
    /// assert_eq!(error.metric_label(), "bad_spec");
    /// assert_eq!(error.to_string(), "bad_spec: size must be positive");
    /// ```
    pub fn reconcile(
        reason: &'static str,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self::Reconcile {
            reason,
            source: source.into(),
        }
    }

    /// A bounded label for the error metrics: the kind of error, never its text.
    pub fn metric_label(&self) -> &'static str {
        match self {
            Error::Kube(_) => "kube",
            Error::AddFinalizer(_) => "add_finalizer",
            Error::RemoveFinalizer(_) => "remove_finalizer",
            Error::MissingField(_) => "missing_field",
            Error::CacheNotReady(_) => "cache_not_ready",
            Error::CacheGone(_) => "cache_gone",
            Error::Timeout(_) => "timeout",
            Error::Reconcile { reason, .. } => reason,
        }
    }

    /// Flattens what `kube::runtime::finalizer` returns; a 404 while removing the finalizer
    /// means the object is already gone, which is done.
    pub(crate) fn from_finalizer(
        result: Result<Action, finalizer::Error<Error>>,
    ) -> Result<Action> {
        match result {
            Ok(action) => Ok(action),
            Err(finalizer::Error::RemoveFinalizer(kube::Error::Api(status)))
                if status.code == 404 =>
            {
                Ok(Action::await_change())
            }
            Err(finalizer::Error::ApplyFailed(error) | finalizer::Error::CleanupFailed(error)) => {
                Err(error)
            }
            Err(finalizer::Error::AddFinalizer(error)) => Err(Error::AddFinalizer(error)),
            Err(finalizer::Error::RemoveFinalizer(error)) => Err(Error::RemoveFinalizer(error)),
            Err(finalizer::Error::UnnamedObject) => Err(Error::MissingField("metadata.name")),
            Err(finalizer::Error::InvalidFinalizer) => Err(Error::reconcile(
                "finalizer",
                "the finalizer name is not a valid qualified name",
            )),
        }
    }
}
