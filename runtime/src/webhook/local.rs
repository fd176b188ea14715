//! `--webhook-local-url https://<host>:<port>`: webhooks of a manager running outside the
//! cluster (on a laptop, in a test), which no Service can reach and cert-manager cannot serve.
//!
//! The manager makes a CA and a serving certificate for `<host>`, serves on `<port>`, and
//! server-side applies copies of its webhook configurations (named `<operator>-local-<name>`)
//! and the conversion of its CRDs with `url` and `caBundle` pointing at itself. While it runs,
//! it keeps them so: a `make install` meanwhile writes config/crd's conversion (the Service)
//! back, which the manager records as the installed one and points at itself again within
//! [`REASSERT_INTERVAL`]. A clean shutdown deletes those configurations and gives each CRD
//! back its installed conversion (`strategy: None` for a CRD that had none); so does a failed
//! start, and, when the manager dies without a word, its guard process.
//!
//! The configurations are those the cluster gets when the operator is deployed: run in its
//! project's folder (`make run`, `cargo run`), the manager renders `config/webhook` with
//! `kubectl kustomize` ([`WEBHOOK_KUSTOMIZATION`]), so each webhook carries the rules,
//! selectors, failure policy, side effects, timeout, match policy and match conditions of
//! `config/webhook/manifests.yaml` with the kustomization's patches; elsewhere, the
//! `manifests.yaml` the binary embeds.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::Client;
use serde_json::{Value, json};

use super::guard::{Guard, Plan};
use super::install::{self, InstallError, ca_bundle};
use super::{CONVERSION_PATH, Endpoint, Webhooks};
use crate::tls::certs::{CertificateAuthority, CertsError};
use crate::tls::{CertError, CertStore};

/// How long the local CA and certificate are valid: a development session.
const VALIDITY: Duration = Duration::from_secs(7 * 24 * 3600);

/// How often the manager checks that its CRDs still convert through it.
pub const REASSERT_INTERVAL: Duration = Duration::from_secs(1);

/// How many checks in a row a CRD must be seen without a conversion webhook before the
/// manager takes that as installed: `make install` turns it off for a moment before it applies
/// config/crd's (an API server keeps no `url` beside a `service`).
const NONE_SEEN_BEFORE_REASSERT: u32 = 3;

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
    /// `kubectl kustomize config/webhook` failed.
    #[error(
        "`kubectl kustomize {dir}` (the webhook configurations as deployed, which local mode \
         copies): {message}"
    )]
    Kustomize {
        /// The folder rendered.
        dir: String,
        /// kubectl's message.
        message: String,
    },
}

/// The kustomization whose webhook configurations local mode copies, relative to the folder
/// the manager runs in (its project's).
pub const WEBHOOK_KUSTOMIZATION: &str = "config/webhook";

/// The webhook configurations as deployed: `kubectl kustomize config/webhook` when the
/// manager runs in a folder that has one, else `embedded` (`config/webhook/manifests.yaml` as
/// the binary was built with).
fn deployed_configurations(embedded: &str) -> Result<String, LocalError> {
    let dir = Path::new(WEBHOOK_KUSTOMIZATION);
    if !dir.join("kustomization.yaml").is_file() {
        return Ok(embedded.to_owned());
    }
    kustomize(dir).map_err(|message| LocalError::Kustomize {
        dir: dir.display().to_string(),
        message,
    })
}

/// Renders the kustomize folder `dir` with `kubectl kustomize`: its output, or why not.
pub(crate) fn kustomize(dir: &Path) -> Result<String, String> {
    let output = std::process::Command::new("kubectl")
        .arg("kustomize")
        .arg(dir)
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                "kubectl is not on PATH; install it (`apt-get install kubectl`, or see \
                 https://kubernetes.io/docs/tasks/tools/)"
                    .to_owned()
            } else {
                e.to_string()
            }
        })?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_owned());
    }
    String::from_utf8(output.stdout).map_err(|e| format!("the output is not UTF-8: {e}"))
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
    state: Arc<Mutex<State>>,
    reasserting: Option<tokio::task::JoinHandle<()>>,
}

/// What to take back, and the guard told so.
#[derive(Debug)]
struct State {
    plan: Plan,
    guard: Option<Guard>,
}

/// `install_guarded` without a guard: 0.1.0's form, kept for code written against it.
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

impl State {
    /// Records `conversion` (or none: `strategy: None`) as what `crd` goes back to, and tells
    /// the guard.
    fn record(&mut self, crd: &str, conversion: Option<Value>) {
        let changed = match conversion {
            Some(conversion) => {
                self.plan.restore.insert(crd.to_owned(), conversion.clone()) != Some(conversion)
            }
            None => self.plan.restore.remove(crd).is_some(),
        };
        if let (true, Some(guard)) = (changed, self.guard.as_mut())
            && let Err(err) = guard.update(&self.plan)
        {
            tracing::warn!(error = %err, "telling the local webhook guard the installed conversion");
        }
    }
}

/// The conversion to give back when local mode ends, of a CRD's `spec.conversion` as read:
/// a webhook called through a Service (config/crd's, as `make install` writes it); none for
/// `strategy: None` or a `url` (a local manager's, which would dangle once it stops).
fn installed_conversion(conversion: &Value) -> Option<Value> {
    let service = &conversion["webhook"]["clientConfig"]["service"];
    (conversion["strategy"] == "Webhook" && service.is_object()).then(|| conversion.clone())
}

/// Whether `conversion` calls `client_config`, the local one, and nothing else.
fn points_at(conversion: &Value, client_config: &Value) -> bool {
    let live = &conversion["webhook"]["clientConfig"];
    conversion["strategy"] == "Webhook"
        && live["url"] == client_config["url"]
        && live["caBundle"] == client_config["caBundle"]
        && live["service"].is_null()
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
        &deployed_configurations(webhooks.configurations())?,
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
    // What each CRD converts through now (`make install`'s Service), to give it back.
    let mut restore = std::collections::BTreeMap::new();
    for crd in &crds {
        if let Some(conversion) = install::conversion(client, crd).await?
            && let Some(installed) = installed_conversion(&conversion)
        {
            restore.insert(crd.clone(), installed);
        }
    }
    let plan = Plan {
        configurations: install::identities(&configurations),
        crds,
        field_manager,
        restore,
    };
    let guard = match guarded {
        true => Some(Guard::spawn(&plan).map_err(LocalError::Guard)?),
        false => None,
    };
    let mut installed = LocalInstall {
        state: Arc::new(Mutex::new(State { plan, guard })),
        reasserting: None,
    };
    let plan = installed.plan();
    let client_config = json!({
        "url": format!("{}{CONVERSION_PATH}", url.base),
        "caBundle": ca_bundle(&ca.cert_pem),
    });
    let written = async {
        install::apply(client, &configurations, &plan.field_manager).await?;
        for crd in &plan.crds {
            install::set_conversion(client, crd, client_config.clone(), &plan.field_manager)
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
    if !plan.crds.is_empty() {
        installed.reasserting = Some(tokio::spawn(reassert(
            client.clone(),
            installed.state.clone(),
            client_config,
        )));
    }
    tracing::info!(
        url = %url.base,
        configurations = configurations.len(),
        crds = plan.crds.len(),
        "webhooks point at this manager"
    );
    Ok(installed)
}

/// Keeps the CRDs of the plan converting through `client_config` while local mode runs: a
/// conversion written by someone else (`make install`) is recorded as the one to give back,
/// and replaced by the local one again.
async fn reassert(client: Client, state: Arc<Mutex<State>>, client_config: Value) {
    let (crds, field_manager) = {
        let state = state.lock().unwrap_or_else(|e| e.into_inner());
        (state.plan.crds.clone(), state.plan.field_manager.clone())
    };
    let mut none_seen = vec![0u32; crds.len()];
    let mut tick = tokio::time::interval(REASSERT_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        for (crd, none_seen) in crds.iter().zip(&mut none_seen) {
            let live = match install::conversion(&client, crd).await {
                Ok(Some(live)) => live,
                // Uninstalled (`make uninstall`): nothing converts; a CRD installed again is
                // seen at a later check.
                Ok(None) => continue,
                Err(err) => {
                    tracing::warn!(error = %err, "checking the local conversion");
                    continue;
                }
            };
            if points_at(&live, &client_config) {
                *none_seen = 0;
                continue;
            }
            let installed = installed_conversion(&live);
            if installed.is_none() && live["webhook"]["clientConfig"]["url"].is_null() {
                *none_seen += 1;
                if *none_seen < NONE_SEEN_BEFORE_REASSERT {
                    continue;
                }
            }
            *none_seen = 0;
            let from_service = installed.is_some();
            if installed.is_some() || live["strategy"] != "Webhook" {
                let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
                state.record(crd, installed);
            }
            match install::set_conversion(&client, crd, client_config.clone(), &field_manager).await
            {
                Ok(()) => tracing::info!(
                    crd,
                    from_service,
                    "the CRD's conversion was written by another (make install?): it points at this manager again"
                ),
                Err(err) => {
                    tracing::warn!(error = %err, crd, "pointing the conversion at this manager again")
                }
            }
        }
    }
}

impl LocalInstall {
    /// What local mode wrote and gives back, as it stands.
    fn plan(&self) -> Plan {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.plan.clone()
    }

    /// Deletes the configurations and gives the CRDs back their installed conversion (or
    /// turns their conversion webhook off); then the guard, if any, exits without doing
    /// anything.
    pub async fn uninstall(mut self, client: &Client) -> Result<(), LocalError> {
        if let Some(task) = self.reasserting.take() {
            task.abort();
            let _ = task.await;
        }
        self.plan().remove(client).await?;
        let guard = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            state.guard.take()
        };
        if let Some(guard) = guard {
            guard.release();
        }
        tracing::info!("local webhook configurations removed");
        Ok(())
    }
}

impl Drop for LocalInstall {
    fn drop(&mut self) {
        if let Some(task) = self.reasserting.take() {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_service_conversion_is_given_back() {
        let service = json!({
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": {"service": {"name": "webhook-service", "namespace": "system", "path": "/convert"}},
                "conversionReviewVersions": ["v1"],
            },
        });
        assert_eq!(installed_conversion(&service), Some(service.clone()));
        let local = json!({
            "strategy": "Webhook",
            "webhook": {"clientConfig": {"url": "https://127.0.0.1:9443/convert", "caBundle": "Y2E="}},
        });
        assert_eq!(installed_conversion(&local), None);
        assert_eq!(installed_conversion(&json!({"strategy": "None"})), None);
        let ours = json!({"url": "https://127.0.0.1:9443/convert", "caBundle": "Y2E="});
        assert!(points_at(&local, &ours));
        assert!(!points_at(&service, &ours));
        let other_ca = json!({"url": "https://127.0.0.1:9443/convert", "caBundle": "b3RoZXI="});
        assert!(!points_at(&local, &other_ca));
    }

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
