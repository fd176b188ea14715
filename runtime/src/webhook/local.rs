//! `--webhook-local-url https://<host>:<port>`: webhooks of a manager running outside the
//! cluster (on a laptop, in a test), which no Service can reach and cert-manager cannot serve.
//!
//! The manager makes a CA and a serving certificate for `<host>`, serves on `<port>`, and
//! server-side applies copies of its webhook configurations (named `<operator>-local-<name>`)
//! and the conversion of its CRDs with `url` and `caBundle` pointing at itself. A clean
//! shutdown deletes those configurations and puts the CRDs back to `strategy: None`; so does
//! a failed start, and, when the manager dies without a word, its guard process.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use kube::Client;
use serde_json::json;

use super::certs::{CertificateAuthority, CertsError};
use super::guard::{Guard, Plan};
use super::install::{self, InstallError, ca_bundle};
use super::tls::{CertError, CertStore};
use super::{CONVERSION_PATH, Endpoint, Webhooks};

/// How long the local CA and certificate are valid: a development session.
const VALIDITY: Duration = Duration::from_secs(7 * 24 * 3600);

/// Why local mode could not start.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// The URL is not `https://<host>:<port>`.
    #[error(
        "--webhook-local-url {url:?}: {reason}; e.g. --webhook-local-url https://127.0.0.1:9443 \
         (a kind cluster reaches the host as https://host.docker.internal:9443)"
    )]
    Url {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Making the certificates failed.
    #[error(transparent)]
    Certs(#[from] CertsError),
    /// Loading them failed.
    #[error(transparent)]
    Cert(#[from] CertError),
    /// Writing to the cluster failed.
    #[error(transparent)]
    Install(#[from] InstallError),
    /// The guard process could not be started.
    #[error("starting the local webhook guard (this binary, again): {0}")]
    Guard(#[source] std::io::Error),
}

/// A parsed `--webhook-local-url`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalUrl {
    /// `https://<host>:<port>`, without a trailing slash.
    pub base: String,
    /// The host the API server calls (the certificate's name).
    pub host: String,
    /// The port served.
    pub port: u16,
}

impl LocalUrl {
    /// Parses `https://<host>:<port>` (an IPv6 host in brackets).
    pub fn parse(url: &str) -> Result<Self, LocalError> {
        let fail = |reason| LocalError::Url {
            url: url.to_owned(),
            reason,
        };
        let rest = url
            .strip_prefix("https://")
            .ok_or_else(|| fail("the API server calls webhooks over https only"))?;
        let authority = rest.trim_end_matches('/');
        if authority.contains('/') {
            return Err(fail("give no path: the webhooks' paths are added to it"));
        }
        let (host, port) = authority
            .rsplit_once(':')
            .ok_or_else(|| fail("the port is missing"))?;
        let port: u16 = port
            .parse()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| fail("the port is not a number from 1 to 65535"))?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(fail("the host is missing"));
        }
        Ok(Self {
            base: format!("https://{authority}"),
            host: host.to_owned(),
            port,
        })
    }

    /// Where to listen: every interface, on the URL's port (the API server may reach this
    /// machine by any of its addresses).
    pub fn bind_address(&self) -> SocketAddr {
        let any = match self.host.parse::<IpAddr>() {
            Ok(IpAddr::V6(_)) => IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED),
            _ => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        };
        SocketAddr::new(any, self.port)
    }
}

/// What local mode wrote to the cluster, to take it back, and the guard that takes it back
/// if this process dies first.
#[derive(Debug)]
pub struct LocalInstall {
    plan: Plan,
    guard: Option<Guard>,
}

/// [`install_guarded`] without a guard: 0.1.0's form, kept for code written against it.
#[deprecated(
    since = "0.2.0",
    note = "the manager installs local webhooks itself (`--webhook-local-url`); this goes in 0.3.0"
)]
pub async fn install(
    client: &Client,
    operator: &str,
    webhooks: &Webhooks,
    url: &LocalUrl,
    store: &CertStore,
) -> Result<LocalInstall, LocalError> {
    install_guarded(client, operator, webhooks, url, store, false).await
}

/// Makes a CA and a certificate for `url`'s host, loads them into `store`, and points the
/// cluster's webhook configurations and CRD conversions of `webhooks` at `url`.
///
/// With `guarded`, a [`guard`](super::guard) process is started first, which removes it all
/// if this process ends without [`LocalInstall::uninstall`]. A failure part-way takes back
/// what was written before the error is returned: a manager that fails at start never leaves
/// the cluster's webhooks pointing at it.
pub(crate) async fn install_guarded(
    client: &Client,
    operator: &str,
    webhooks: &Webhooks,
    url: &LocalUrl,
    store: &CertStore,
    guarded: bool,
) -> Result<LocalInstall, LocalError> {
    let ca = CertificateAuthority::generate(&format!("{operator}-local-webhook-ca"), VALIDITY)?;
    let serving = ca.issue(std::slice::from_ref(&url.host), VALIDITY)?;
    store.set_pem(
        serving.cert_pem.as_bytes(),
        serving.key_pem.as_bytes(),
        "the local serving certificate",
    )?;
    let field_manager = format!("{operator}-local-webhooks");
    let configurations = install::local_configurations(
        webhooks.configurations(),
        &format!("{operator}-local-"),
        &url.base,
        &ca.cert_pem,
    )?;
    let crds: Vec<String> = (webhooks.iter())
        .filter_map(|w| match &w.endpoint {
            Endpoint::Conversion(spoke) => Some(spoke.crd_name()),
            Endpoint::Admission { .. } => None,
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let plan = Plan {
        configurations: install::identities(&configurations),
        crds,
        field_manager,
    };
    let guard = match guarded {
        true => Some(Guard::spawn(&plan).map_err(LocalError::Guard)?),
        false => None,
    };
    let installed = LocalInstall { plan, guard };
    let client_config = json!({
        "url": format!("{}{CONVERSION_PATH}", url.base),
        "caBundle": ca_bundle(&ca.cert_pem),
    });
    let written = async {
        install::apply(client, &configurations, &installed.plan.field_manager).await?;
        for crd in &installed.plan.crds {
            install::set_conversion(
                client,
                crd,
                client_config.clone(),
                &installed.plan.field_manager,
            )
            .await?;
        }
        Ok::<_, InstallError>(())
    }
    .await;
    if let Err(err) = written {
        if let Err(undo) = installed.uninstall(client).await {
            tracing::warn!(error = %undo, "taking back the local webhook configurations failed");
        }
        return Err(err.into());
    }
    tracing::info!(
        url = %url.base,
        configurations = configurations.len(),
        crds = installed.plan.crds.len(),
        "webhooks point at this manager"
    );
    Ok(installed)
}

impl LocalInstall {
    /// Deletes the configurations and turns the CRDs' conversion webhook off; then the guard,
    /// if any, exits without doing anything.
    pub async fn uninstall(mut self, client: &Client) -> Result<(), LocalError> {
        self.plan.remove(client).await?;
        if let Some(guard) = self.guard.take() {
            guard.release();
        }
        tracing::info!("local webhook configurations removed");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_and_explain_their_faults() {
        let url = LocalUrl::parse("https://127.0.0.1:9443/").unwrap();
        assert_eq!(
            (url.base.as_str(), url.host.as_str(), url.port),
            ("https://127.0.0.1:9443", "127.0.0.1", 9443)
        );
        assert_eq!(url.bind_address().to_string(), "0.0.0.0:9443");
        let url = LocalUrl::parse("https://[::1]:8443").unwrap();
        assert_eq!(
            (url.host.as_str(), url.bind_address().to_string().as_str()),
            ("::1", "[::]:8443")
        );
        let url = LocalUrl::parse("https://host.docker.internal:9443").unwrap();
        assert_eq!(url.host, "host.docker.internal");
        for (bad, why) in [
            ("http://127.0.0.1:9443", "https only"),
            ("https://127.0.0.1", "port is missing"),
            ("https://127.0.0.1:0", "1 to 65535"),
            ("https://127.0.0.1:x", "1 to 65535"),
            ("https://:9443", "host is missing"),
            ("https://127.0.0.1:9443/mutate", "no path"),
        ] {
            let err = LocalUrl::parse(bad).unwrap_err().to_string();
            assert!(
                err.contains(why) && err.contains("e.g. --webhook-local-url"),
                "{bad}: {err}"
            );
        }
    }
}
