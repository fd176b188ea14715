//! The webhooks of a manager under test that runs outside the cluster (an end-to-end suite's),
//! set up by the test as the cluster's admin, as kustomize and cert-manager do in a cluster.
//!
//! A manager started with `--webhook-local-url` points the cluster at itself, which takes
//! rights its `config/rbac` rightly lacks (webhook configurations, CRDs). A test that runs the
//! manager with exactly its RBAC does that part itself with [`LocalWebhooks`]: it
//! makes a CA and a serving certificate for `127.0.0.1` (written to a folder, as cert-manager's
//! Secret is mounted), applies copies of `config/webhook/manifests.yaml` (with the patches of
//! `config/webhook/kustomization.yaml`: selectors...) named
//! `<operator>-e2e-<name>` and the conversion of every CRD that `config/crd` converts by
//! webhook, all calling `https://127.0.0.1:<port>` ([`LocalWebhooks::prepare`], then
//! [`LocalWebhooks::point_at`] once the manager serves); the manager only serves them, from
//! files ([`LocalWebhooks::manager_args_at`]). While no manager runs, [`LocalWebhooks::uninstall`]
//! takes them back, so that objects can be created (as they could not in a cluster whose
//! operator is down: the configurations fail closed).

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::Client;
use serde_json::{Value, json};

use super::envtest::{Error, Result, kustomize};
use crate::tls::certs::CertificateAuthority;
use crate::webhook::CONVERSION_PATH;
use crate::webhook::install::{self, InstallError, ca_bundle};

/// How long the CA and the serving certificate are valid: longer than any test run.
const VALIDITY: Duration = Duration::from_secs(7 * 24 * 3600);

/// Webhook configurations and CRD conversions pointing at a manager on this machine.
#[derive(Debug)]
pub struct LocalWebhooks {
    /// `config/webhook/manifests.yaml`.
    manifests: String,
    /// The CRDs converted by webhook.
    crds: Vec<String>,
    ca_pem: String,
    operator: String,
    address: SocketAddr,
    cert_dir: PathBuf,
}

impl LocalWebhooks {
    /// Makes a CA and a certificate for `127.0.0.1`, written to `cert_dir` (`tls.crt`,
    /// `tls.key`), for webhooks served on a free port; returns `None` when the project in
    /// `project` has no webhooks (no `config/webhook/manifests.yaml`, or no configuration and
    /// no conversion in it). Nothing is written to the cluster yet.
    ///
    /// ```no_run
    /// # async fn f() -> anyhow::Result<()> {
    /// use operator_rs_runtime::testing::local_webhooks::LocalWebhooks;
    ///
    /// let admin = kube::Client::try_default().await?;
    /// let cert_dir = std::env::temp_dir().join("webhook-certs");
    /// let webhooks = LocalWebhooks::prepare("memcached-operator", ".".as_ref(), &cert_dir)?;
    /// if let Some(mut webhooks) = webhooks {
    ///     // start the manager with `webhooks.manager_args_at(webhooks.address())`; once it is ready:
    ///     webhooks.point_at(&admin, webhooks.address()).await?;
    ///     // ... when it has stopped:
    ///     webhooks.uninstall(&admin).await?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn prepare(operator: &str, project: &Path, cert_dir: &Path) -> Result<Option<Self>> {
        let manifests = project.join("config/webhook/manifests.yaml");
        let yaml = match std::fs::read_to_string(&manifests) {
            Ok(yaml) => yaml,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(format!("reading {}", manifests.display()), e)),
        };
        // As deployed: with config/webhook's patches (selectors...), as `make run` copies them.
        let kustomization = project.join(crate::webhook::local::WEBHOOK_KUSTOMIZATION);
        let yaml = match kustomization.join("kustomization.yaml").is_file() {
            true => kustomize(&kustomization)?,
            false => yaml,
        };
        let crds = converted_crds(&project.join("config/crd"))?;
        let address = free_address()?;
        let base = format!("https://{address}");

        let ca = CertificateAuthority::generate(&format!("{operator}-e2e-webhook-ca"), VALIDITY)
            .map_err(|e| Error::Operator(format!("making the webhooks' CA: {e}")))?;
        let serving = ca
            .issue(&[address.ip().to_string()], VALIDITY)
            .map_err(|e| Error::Operator(format!("making the webhooks' certificate: {e}")))?;
        std::fs::create_dir_all(cert_dir)
            .map_err(|e| Error::io(format!("creating {}", cert_dir.display()), e))?;
        for (file, pem) in [
            ("tls.crt", &serving.cert_pem),
            ("tls.key", &serving.key_pem),
        ] {
            super::envtest::write_private(&cert_dir.join(file), pem)?;
        }

        let configurations = install::local_configurations(&yaml, "", &base, &ca.cert_pem)
            .map_err(|e| install_error(&manifests, e))?;
        if configurations.is_empty() && crds.is_empty() {
            return Ok(None);
        }
        Ok(Some(Self {
            manifests: yaml,
            crds,
            ca_pem: ca.cert_pem,
            operator: operator.to_owned(),
            address,
            cert_dir: cert_dir.to_owned(),
        }))
    }

    /// Points the configurations and conversions at a manager serving on `address` (of
    /// `127.0.0.1`, with [`LocalWebhooks::manager_args_at`]): another replica, say.
    pub async fn point_at(&mut self, admin: &Client, address: SocketAddr) -> Result<()> {
        self.address = address;
        let base = format!("https://{address}");
        let origin = Path::new("config/webhook/manifests.yaml");
        let configurations = self.configurations(&base)?;
        install::apply(admin, &configurations, &self.field_manager())
            .await
            .map_err(|e| install_error(origin, e))?;
        let client_config = json!({
            "url": format!("{base}{CONVERSION_PATH}"),
            "caBundle": ca_bundle(&self.ca_pem),
        });
        for crd in &self.crds {
            install::set_conversion(admin, crd, client_config.clone(), &self.field_manager())
                .await
                .map_err(|e| install_error(origin, e))?;
        }
        Ok(())
    }

    /// The configurations as applied: named `<operator>-e2e-<name>`, calling `base`.
    fn configurations(&self, base: &str) -> Result<Vec<Value>> {
        let prefix = format!("{}-e2e-", self.operator);
        install::local_configurations(&self.manifests, &prefix, base, &self.ca_pem)
            .map_err(|e| install_error(Path::new("config/webhook/manifests.yaml"), e))
    }

    fn field_manager(&self) -> String {
        format!("{}-e2e-webhooks", self.operator)
    }

    /// The flags of a manager that serves them on `address` (another replica; see
    /// [`LocalWebhooks::point_at`]).
    pub fn manager_args_at(&self, address: SocketAddr) -> Vec<String> {
        vec![
            format!("--webhook-bind-address={address}"),
            format!("--webhook-cert-dir={}", self.cert_dir.display()),
        ]
    }

    /// Where they point.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Deletes the configurations and turns the CRDs' conversion webhook off.
    pub async fn uninstall(&self, admin: &Client) -> Result<()> {
        let origin = Path::new("config/webhook/manifests.yaml");
        let configurations = self.configurations("")?;
        install::remove_identities(admin, &install::identities(&configurations))
            .await
            .map_err(|e| install_error(origin, e))?;
        for crd in &self.crds {
            install::clear_conversion(admin, crd, &self.field_manager())
                .await
                .map_err(|e| install_error(origin, e))?;
        }
        Ok(())
    }
}

/// The CRDs that `kubectl kustomize <dir>` renders with `spec.conversion.strategy: Webhook`.
fn converted_crds(dir: &Path) -> Result<Vec<String>> {
    let rendered = kustomize(dir)?;
    let documents: Vec<Value> =
        serde_saphyr::from_multiple(&rendered).map_err(|e| Error::Manifest {
            path: dir.to_owned(),
            message: format!("`kubectl kustomize` rendered YAML that does not parse: {e}"),
        })?;
    Ok(documents
        .iter()
        .filter(|doc| doc["kind"] == "CustomResourceDefinition")
        .filter(|doc| doc["spec"]["conversion"]["strategy"] == "Webhook")
        .filter_map(|doc| doc["metadata"]["name"].as_str().map(str::to_owned))
        .collect())
}

fn install_error(origin: &Path, error: InstallError) -> Error {
    Error::Manifest {
        path: origin.to_owned(),
        message: error.to_string(),
    }
}

/// A loopback address with a port that is free now.
pub fn free_address() -> Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .map_err(|e| Error::io("finding a free port for the webhooks", e))?;
    listener
        .local_addr()
        .map_err(|e| Error::io("finding a free port for the webhooks", e))
}
