//! Starting the webhook server: where its certificate comes from (files, self-managed, or
//! made for `--webhook-local-url`), its listener, and its readiness (reported once a
//! certificate is loaded; the manager's `/readyz` waits for it). The manager calls it; it
//! knows nothing of the manager.

use std::time::Duration;

use kube::Client;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use super::install::ServiceRef;
use super::local::{self, LocalError, LocalInstall, LocalUrl};
use super::metrics::WebhookMetrics;
use super::self_managed::SelfManaged;
use super::server::{self, ServerError};
use super::{CertMode, WebhookArgs, Webhooks};
use crate::address::{AddressError, parse_bind_address};
use crate::shutdown::Shutdown;
use crate::tls::{self, CertFiles, CertStore};

/// How often `--webhook-cert-dir` is checked for new files.
const CERT_POLL_INTERVAL: Duration = Duration::from_secs(10);

/// Why the webhook server did not start (the manager's [`Error::Webhook`](crate::manager::Error)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The webhooks cannot be served together (two at one path, say).
    #[error(transparent)]
    Routes(#[from] ServerError),
    /// `--webhook-local-url` does not parse.
    #[error("--webhook-local-url")]
    LocalUrl(#[source] LocalError),
    /// `--webhook-local-url` with `--webhook-cert-mode self-managed`.
    #[error("--webhook-local-url makes its own certificate: drop --webhook-cert-mode self-managed")]
    LocalUrlWithSelfManaged,
    /// `--webhook-bind-address` does not parse.
    #[error("--webhook-bind-address")]
    BindAddress(#[source] AddressError),
    /// The address cannot be bound (in use, say).
    #[error("binding the webhook address {address}")]
    Bind {
        /// The address.
        address: std::net::SocketAddr,
        /// The operating system's answer.
        source: std::io::Error,
    },
    /// `--webhook-local-url`: the configurations pointing at this process were not installed.
    #[error("--webhook-local-url: installing the webhook configurations")]
    LocalInstall(#[source] LocalError),
}

/// What the webhook server needs to start.
pub(crate) struct Setup<'a> {
    /// The operator's name: the prefix of what local and self-managed modes write.
    pub(crate) operator: &'a str,
    pub(crate) args: &'a WebhookArgs,
    pub(crate) client: &'a Client,
    pub(crate) metrics: WebhookMetrics,
    /// Called once the server has a certificate to serve.
    pub(crate) on_ready: Box<dyn FnOnce() + Send>,
    /// Whether local mode starts a guard process (a manager's own binary, not a test's).
    pub(crate) guarded: bool,
}

impl Setup<'_> {
    /// Starts serving `webhooks` in `servers`; in local mode, returns what it wrote to the
    /// cluster, for the manager to remove when it stops.
    pub(crate) async fn start(
        self,
        webhooks: Webhooks,
        servers: &mut JoinSet<()>,
    ) -> Result<Option<LocalInstall>, StartError> {
        let Self {
            operator,
            args,
            client,
            metrics,
            on_ready,
            guarded,
        } = self;
        if webhooks.is_empty() {
            on_ready();
            return Ok(None);
        }
        let router = server::router(&webhooks, &metrics)?;
        let store = CertStore::new();
        // The server outlives the controllers' graceful shutdown (their last writes may call
        // it); it stops when the manager returns.
        let forever = Shutdown::new();

        let local_url = (args.webhook_local_url.as_deref())
            .map(LocalUrl::parse)
            .transpose()
            .map_err(StartError::LocalUrl)?;
        if local_url.is_some() && args.webhook_cert_mode == CertMode::SelfManaged {
            return Err(StartError::LocalUrlWithSelfManaged);
        }
        let addr = match &local_url {
            Some(url) => url.bind_address(),
            None => match parse_bind_address(&args.webhook_bind_address)
                .await
                .map_err(StartError::BindAddress)?
            {
                Some(addr) => addr,
                None => {
                    tracing::warn!("--webhook-bind-address=0: the webhooks are not served");
                    on_ready();
                    return Ok(None);
                }
            },
        };
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| StartError::Bind {
                address: addr,
                source,
            })?;
        tracing::info!(%addr, webhooks = webhooks.iter().count(), "serving webhooks");
        servers.spawn(server::serve_tls(
            listener,
            router,
            store.server_config(),
            forever.clone(),
        ));

        let installed = match (&local_url, args.webhook_cert_mode) {
            (Some(url), _) => Some(
                local::install_guarded(client, operator, &webhooks, url, &store, guarded)
                    .await
                    .map_err(StartError::LocalInstall)?,
            ),
            (None, CertMode::Files) => {
                let files = CertFiles::new(
                    &args.webhook_cert_dir,
                    &args.webhook_cert_name,
                    &args.webhook_key_name,
                );
                servers.spawn(tls::watch_files(
                    store.clone(),
                    files,
                    CERT_POLL_INTERVAL,
                    forever.clone(),
                ));
                None
            }
            (None, CertMode::SelfManaged) => {
                let namespace = (args.webhook_service_namespace.clone())
                    .or_else(|| std::env::var("POD_NAMESPACE").ok())
                    .filter(|ns| !ns.is_empty())
                    .unwrap_or_else(|| client.default_namespace().to_owned());
                let manager = SelfManaged {
                    client: client.clone(),
                    secret: (args.webhook_secret_name.clone())
                        .unwrap_or_else(|| format!("{operator}-webhook-server-cert")),
                    service: ServiceRef {
                        name: (args.webhook_service_name.clone())
                            .unwrap_or_else(|| format!("{operator}-webhook-service")),
                        namespace,
                    },
                    operator: operator.to_owned(),
                };
                servers.spawn(manager.run(
                    store.clone(),
                    args.webhook_cert_check_interval,
                    forever.clone(),
                ));
                None
            }
        };
        servers.spawn(async move {
            while !store.is_loaded() {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            on_ready();
        });
        Ok(installed)
    }
}
