//! What can go wrong while running a control plane for tests, each case saying how to fix it.
//!
//! ```
//! use operator_rs_runtime::testing::envtest::error::Error;
//!
//! let error = Error::Stopped;
//! assert!(error.to_string().contains("Envtest::start()"));
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Why envtest could not start, reach or configure its control plane.
///
/// Every message says what failed and what to do about it; cloning is cheap (sources are
/// shared), so [`Envtest::shared`](super::Envtest::shared) can hand the same error to every
/// test of a binary.
///
/// ```
/// use operator_rs_runtime::testing::envtest::Error;
///
/// let error = Error::AssetsUnset;
/// assert!(error.to_string().contains("export KUBEBUILDER_ASSETS="));
/// ```
#[derive(Clone, Debug, thiserror::Error)]
pub enum Error {
    /// `KUBEBUILDER_ASSETS` is not set (or empty).
    #[error(
        "KUBEBUILDER_ASSETS is not set: point it at a folder holding etcd and kube-apiserver, e.g. \
         `export KUBEBUILDER_ASSETS=$(operator-rs envtest)` (or setup-envtest's `use -p path`)"
    )]
    AssetsUnset,

    /// A binary of the control plane is not where `KUBEBUILDER_ASSETS` says.
    #[error(
        "{binary} is missing: {} does not exist or is not executable; KUBEBUILDER_ASSETS must \
         name a folder holding etcd and kube-apiserver (run `operator-rs envtest`, or setup-envtest's \
         `use -p path`)",
        path.display()
    )]
    BinaryMissing {
        /// `etcd` or `kube-apiserver`.
        binary: &'static str,
        /// Where it was looked for.
        path: PathBuf,
    },

    /// A file or process operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, with the path.
        what: String,
        /// The operating system's error.
        #[source]
        source: Arc<std::io::Error>,
    },

    /// A process could not listen on its port: something else took it.
    #[error(
        "{process} could not listen on 127.0.0.1:{port}: the port is in use (another process \
         took it after envtest picked it; retried with other ports and gave up). Its log ({}) \
         ends with:\n{tail}",
        log.display()
    )]
    PortInUse {
        /// `etcd`, `kube-apiserver` or `kube-controller-manager`.
        process: &'static str,
        /// The port it tried.
        port: u16,
        /// Its log file.
        log: PathBuf,
        /// The last lines of its log.
        tail: String,
    },

    /// A process of the control plane exited while envtest waited for it.
    #[error(
        "{process} exited ({status}) before it was ready; its log ({}) ends with:\n{tail}",
        log.display()
    )]
    Exited {
        /// `etcd`, `kube-apiserver` or `kube-controller-manager`.
        process: &'static str,
        /// How it exited.
        status: String,
        /// Its log file.
        log: PathBuf,
        /// The last lines of its log.
        tail: String,
    },

    /// A process of the control plane did not become ready in time.
    #[error(
        "{process} was not ready within {}s (is the machine overloaded? raise it with \
         Envtest::builder().start_timeout(..)); its log ({}) ends with:\n{tail}",
        timeout.as_secs(), log.display()
    )]
    NotReady {
        /// `etcd`, `kube-apiserver` or `kube-controller-manager`.
        process: &'static str,
        /// How long envtest waited.
        timeout: Duration,
        /// Its log file.
        log: PathBuf,
        /// The last lines of its log.
        tail: String,
    },

    /// A request to the API server failed.
    #[error("{what}: {source}")]
    Api {
        /// What was being done.
        what: String,
        /// The client's error (for a refusal, the API server's status with its reason).
        #[source]
        source: Arc<kube::Error>,
    },

    /// A manifest could not be read: bad YAML, or a document of a kind that does not belong.
    #[error("{}: {message}", path.display())]
    Manifest {
        /// The file (or the directory rendered by `kubectl kustomize`).
        path: PathBuf,
        /// What is wrong, where (line and column for YAML), and what is expected.
        message: String,
    },

    /// The API server refused a CustomResourceDefinition.
    #[error(
        "the API server refused CustomResourceDefinition {name} (from {}): {reason}; fix the \
         CRD (regenerate it with `operator-rs generate crds`) and run again",
        path.display()
    )]
    CrdRefused {
        /// The CRD's name (`<plural>.<group>`).
        name: String,
        /// The file it came from.
        path: PathBuf,
        /// The API server's reason.
        reason: String,
    },

    /// A CustomResourceDefinition was accepted but not established or served in time.
    #[error(
        "CustomResourceDefinition {name} was not established and served within {}s: {reason}",
        timeout.as_secs()
    )]
    CrdNotEstablished {
        /// The CRD's name.
        name: String,
        /// Its last conditions, or what discovery answered.
        reason: String,
        /// How long envtest waited.
        timeout: Duration,
    },

    /// Bindings were applied but the API server still denies what they grant.
    #[error(
        "{user} is still denied {request} {}s after its bindings were applied; check that each \
         binding's roleRef names a role of the manifests",
        timeout.as_secs()
    )]
    RbacNotEffective {
        /// The ServiceAccount's user name.
        user: String,
        /// The request that stays denied.
        request: String,
        /// How long envtest waited.
        timeout: Duration,
    },

    /// A command envtest runs (`kubectl kustomize`) failed.
    #[error("`{command}` failed: {message}")]
    Command {
        /// The command line.
        command: String,
        /// Its error output, or why it could not run.
        message: String,
    },

    /// The control plane was stopped with [`Envtest::stop`](super::Envtest::stop).
    #[error("the control plane was stopped (Envtest::stop); start another with Envtest::start()")]
    Stopped,

    /// The operator under test (`testing::operator`) failed to start or do its work.
    #[error("{0}")]
    Operator(String),
}

impl Error {
    /// An [`Error::Io`] saying what was being done.
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            what: what.into(),
            source: Arc::new(source),
        }
    }

    /// An [`Error::Api`] saying what was being done.
    pub(crate) fn api(what: impl Into<String>, source: kube::Error) -> Self {
        Self::Api {
            what: what.into(),
            source: Arc::new(source),
        }
    }
}

/// A result of envtest.
///
/// ```
/// use operator_rs_runtime::testing::envtest::{Envtest, Result};
///
/// fn start() -> Result<Envtest> {
///     Envtest::builder().start()
/// }
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;
