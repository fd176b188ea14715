//! `--webhook-cert-mode self-managed`: certificates for clusters without cert-manager.
//!
//! The manager keeps a CA and a serving certificate for its Service
//! (`<service>.<namespace>.svc` and `<service>.<namespace>.svc.cluster.local`) in a Secret
//! (`tls.crt`, `tls.key`, `ca.crt` as cert-manager writes them, plus `ca.key`), serves that
//! certificate, and keeps the `caBundle` of every webhook configuration and CRD conversion
//! calling the Service equal to the CA. Every `--webhook-cert-check-interval` it checks them
//! again: a certificate with less than a third of its lifetime left, or made for other
//! names, is reissued; a CA likewise, and the previous CA stays in the `caBundle` until the
//! next renewal so that replicas still serving the old certificate are trusted meanwhile.
//!
//! Every replica runs this: they share the Secret, and a write carries the resourceVersion
//! read, so when two replicas renew at once one wins and the other reads its result.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};

use super::install::{InstallError, ServiceRef, inject_ca_bundle};
use crate::shutdown::Shutdown;
use crate::tls::certs::{CertificateAuthority, CertsError, ServingCert, needs_renewal};
use crate::tls::{CertError, CertStore};

/// How long a CA is valid.
pub const CA_VALIDITY: Duration = Duration::from_secs(10 * 365 * 24 * 3600);
/// How long a serving certificate is valid.
pub const CERT_VALIDITY: Duration = Duration::from_secs(365 * 24 * 3600);

const CA_NOT_AFTER: &str = "operator-rs.io/ca-not-after";
const CERT_NOT_AFTER: &str = "operator-rs.io/cert-not-after";
const CERT_NAMES: &str = "operator-rs.io/cert-names";
const PREVIOUS_CA: &str = "ca-previous.crt";

/// Why a round of certificate management failed (it is retried).
#[derive(Debug, thiserror::Error)]
pub enum SelfManagedError {
    /// Making a certificate failed.
    #[error(transparent)]
    Certs(#[from] CertsError),
    /// The Secret's certificate does not load.
    #[error(transparent)]
    Cert(#[from] CertError),
    /// Reading or writing the Secret failed.
    #[error("Secret {secret}: {source}")]
    Secret {
        /// `namespace/name`.
        secret: String,
        /// The API server's answer.
        source: kube::Error,
    },
    /// Writing a `caBundle` failed.
    #[error(transparent)]
    Install(#[from] InstallError),
}

/// What self-managed mode manages.
#[derive(Clone)]
pub struct SelfManaged {
    /// The client.
    pub client: Client,
    /// The Secret's name, in the Service's namespace.
    pub secret: String,
    /// The Service the API server calls.
    pub service: ServiceRef,
    /// The operator's name (the CA's common name starts with it).
    pub operator: String,
}

/// The Secret's contents, as read.
#[derive(Debug, Default)]
struct Stored {
    ca: Option<CertificateAuthority>,
    previous_ca: Option<String>,
    serving: Option<ServingCert>,
    names: String,
}

impl SelfManaged {
    /// The names the serving certificate is for.
    pub fn dns_names(&self) -> Vec<String> {
        let ServiceRef { name, namespace } = &self.service;
        vec![
            format!("{name}.{namespace}.svc"),
            format!("{name}.{namespace}.svc.cluster.local"),
        ]
    }

    fn secrets(&self) -> Api<Secret> {
        Api::namespaced(self.client.clone(), &self.service.namespace)
    }

    fn secret_error(&self) -> impl FnOnce(kube::Error) -> SelfManagedError {
        let secret = format!("{}/{}", self.service.namespace, self.secret);
        move |source| SelfManagedError::Secret { secret, source }
    }

    /// One round: makes or renews what needs it, serves the Secret's certificate from
    /// `store`, and writes the `caBundle`s. Returns the `caBundle` (PEM).
    pub async fn reconcile(&self, store: &CertStore) -> Result<String, SelfManagedError> {
        let existing = self
            .secrets()
            .get_opt(&self.secret)
            .await
            .map_err(self.secret_error())?;
        let stored = existing.as_ref().map(|s| self.read(s)).unwrap_or_default();
        let names = self.dns_names();
        let mut changed = false;

        let (ca, previous_ca) = match stored.ca {
            Some(ca) if !needs_renewal(ca.not_after, CA_VALIDITY) => (ca, stored.previous_ca),
            old => {
                changed = true;
                let common_name = format!("{}-webhook-ca", self.operator);
                let ca = CertificateAuthority::generate(&common_name, CA_VALIDITY)?;
                tracing::info!(secret = %self.secret, "made a new webhook CA");
                (ca, old.map(|old| old.cert_pem))
            }
        };
        let serving = match stored.serving {
            Some(serving)
                if !changed
                    && stored.names == names.join(",")
                    && !needs_renewal(serving.not_after, CERT_VALIDITY) =>
            {
                serving
            }
            _ => {
                changed = true;
                tracing::info!(secret = %self.secret, names = ?names, "issued a webhook serving certificate");
                ca.issue(&names, CERT_VALIDITY)?
            }
        };
        if changed {
            self.write(existing, &ca, previous_ca.as_deref(), &serving, &names)
                .await?;
        }
        store.set_pem(
            serving.cert_pem.as_bytes(),
            serving.key_pem.as_bytes(),
            &format!("Secret {}/{}", self.service.namespace, self.secret),
        )?;
        let bundle = match &previous_ca {
            Some(previous) => format!("{}{previous}", ca.cert_pem),
            None => ca.cert_pem.clone(),
        };
        let injected = inject_ca_bundle(&self.client, &self.service, &bundle).await?;
        if injected > 0 {
            tracing::info!(objects = injected, "caBundle updated");
        }
        Ok(bundle)
    }

    fn read(&self, secret: &Secret) -> Stored {
        let data = secret.data.clone().unwrap_or_default();
        let text = |key: &str| {
            data.get(key)
                .and_then(|b| String::from_utf8(b.0.clone()).ok())
        };
        let annotations = secret.metadata.annotations.clone().unwrap_or_default();
        let number = |key: &str| annotations.get(key).and_then(|v| v.parse::<u64>().ok());
        let ca = match (text("ca.crt"), text("ca.key"), number(CA_NOT_AFTER)) {
            (Some(cert_pem), Some(key_pem), Some(not_after)) => Some(CertificateAuthority {
                cert_pem,
                key_pem,
                common_name: format!("{}-webhook-ca", self.operator),
                not_after,
            }),
            _ => None,
        };
        let serving = match (text("tls.crt"), text("tls.key"), number(CERT_NOT_AFTER)) {
            (Some(cert_pem), Some(key_pem), Some(not_after)) => Some(ServingCert {
                cert_pem,
                key_pem,
                not_after,
            }),
            _ => None,
        };
        Stored {
            ca,
            previous_ca: text(PREVIOUS_CA),
            serving,
            names: annotations.get(CERT_NAMES).cloned().unwrap_or_default(),
        }
    }

    async fn write(
        &self,
        existing: Option<Secret>,
        ca: &CertificateAuthority,
        previous_ca: Option<&str>,
        serving: &ServingCert,
        names: &[String],
    ) -> Result<(), SelfManagedError> {
        let bytes = |s: &str| ByteString(s.as_bytes().to_vec());
        let mut data = BTreeMap::from([
            ("tls.crt".to_owned(), bytes(&serving.cert_pem)),
            ("tls.key".to_owned(), bytes(&serving.key_pem)),
            ("ca.crt".to_owned(), bytes(&ca.cert_pem)),
            ("ca.key".to_owned(), bytes(&ca.key_pem)),
        ]);
        if let Some(previous) = previous_ca {
            data.insert(PREVIOUS_CA.to_owned(), bytes(previous));
        }
        let annotations = BTreeMap::from([
            (CA_NOT_AFTER.to_owned(), ca.not_after.to_string()),
            (CERT_NOT_AFTER.to_owned(), serving.not_after.to_string()),
            (CERT_NAMES.to_owned(), names.join(",")),
        ]);
        let secrets = self.secrets();
        match existing {
            Some(mut secret) => {
                // Keeps the resourceVersion read: a replica that renewed first wins (409).
                secret.data = Some(data);
                secret
                    .metadata
                    .annotations
                    .get_or_insert_with(BTreeMap::new)
                    .extend(annotations);
                secrets
                    .replace(&self.secret, &PostParams::default(), &secret)
                    .await
                    .map_err(self.secret_error())?;
            }
            None => {
                let secret = Secret {
                    metadata: ObjectMeta {
                        name: Some(self.secret.clone()),
                        namespace: Some(self.service.namespace.clone()),
                        annotations: Some(annotations),
                        ..Default::default()
                    },
                    type_: Some("kubernetes.io/tls".into()),
                    data: Some(data),
                    ..Default::default()
                };
                secrets
                    .create(&PostParams::default(), &secret)
                    .await
                    .map_err(self.secret_error())?;
            }
        }
        Ok(())
    }

    /// Reconciles every `interval` until `shutdown`; a failed round is retried after a few
    /// seconds (another replica may have just written the Secret).
    pub async fn run(self, store: CertStore, interval: Duration, shutdown: Shutdown) {
        let stop = shutdown.wait();
        tokio::pin!(stop);
        loop {
            let wait = match self.reconcile(&store).await {
                Ok(_) => interval,
                Err(err) => {
                    tracing::warn!(error = %err, "self-managed webhook certificates: retrying");
                    Duration::from_secs(2).min(interval)
                }
            };
            tokio::select! {
                _ = &mut stop => return,
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }
}
