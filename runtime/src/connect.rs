//! Connecting to a cluster: the client configuration from a kubeconfig file and context, or
//! inferred (in-cluster, `KUBECONFIG`, `~/.kube/config`), as kubectl finds it. The manager
//! and operator-rs's cluster commands (`migrate-storage`) connect through it.

use std::path::{Path, PathBuf};

use kube::config::{KubeConfigOptions, Kubeconfig};

/// Why no client configuration could be made.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The kubeconfig file named could not be read or parsed.
    #[error("reading kubeconfig {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// The kubeconfig has no such context, or its context is unusable.
    #[error("kubeconfig {path}{context}: {source}")]
    Load {
        /// The file (`KUBECONFIG or ~/.kube/config` when inferred).
        path: String,
        /// `, context <name>` when one was asked for.
        context: String,
        /// What failed.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// Neither in-cluster configuration nor a kubeconfig was found.
    #[error(
        "no Kubernetes configuration (in-cluster, KUBECONFIG or ~/.kube/config): {0}\n  pass --kubeconfig <file>, or set KUBECONFIG"
    )]
    Infer(#[source] kube::config::InferConfigError),
}

/// The client configuration: from `kubeconfig` when given (at `context`, else its current
/// context), else from the kubeconfig `KUBECONFIG` or `~/.kube/config` names at `context`, else
/// (no context asked for) in-cluster or the default kubeconfig, as [`kube::Config::infer`].
pub async fn config(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> Result<kube::Config, ConnectError> {
    let options = KubeConfigOptions {
        context: context.map(str::to_owned),
        ..KubeConfigOptions::default()
    };
    let in_context = || context.map_or(String::new(), |c| format!(", context {c}"));
    match (kubeconfig, context) {
        (Some(path), _) => {
            let file = Kubeconfig::read_from(path).map_err(|source| ConnectError::Read {
                path: path.to_owned(),
                source,
            })?;
            kube::Config::from_custom_kubeconfig(file, &options)
                .await
                .map_err(|source| ConnectError::Load {
                    path: path.display().to_string(),
                    context: in_context(),
                    source,
                })
        }
        (None, Some(_)) => kube::Config::from_kubeconfig(&options)
            .await
            .map_err(|source| ConnectError::Load {
                path: "(KUBECONFIG or ~/.kube/config)".into(),
                context: in_context(),
                source,
            }),
        (None, None) => kube::Config::infer().await.map_err(ConnectError::Infer),
    }
}

/// Why no client could be made.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No configuration.
    #[error(transparent)]
    Config(#[from] ConnectError),
    /// A configuration the client cannot use (a bad certificate, say).
    #[error("building a Kubernetes client: {0}")]
    Build(#[source] kube::Error),
}

/// A client of the cluster [`config`] finds, whose connection attempts give up after
/// `connect_timeout` when given (a command that only checks something on the cluster, if one is
/// reachable, should not hang on one that is not).
pub async fn client(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
    connect_timeout: Option<std::time::Duration>,
) -> Result<kube::Client, ClientError> {
    let mut config = config(kubeconfig, context).await?;
    if let Some(timeout) = connect_timeout {
        config.connect_timeout = Some(timeout);
        config.read_timeout = Some(timeout);
    }
    kube::Client::try_from(config).map_err(ClientError::Build)
}
