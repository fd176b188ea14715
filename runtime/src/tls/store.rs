//! The serving certificate: held in a [`CertStore`] the TLS server reads on every handshake,
//! so a new certificate (renewed by cert-manager, rotated by the manager) takes effect
//! without a restart. [`watch_files`] reloads it from a folder (`--webhook-cert-dir`,
//! `--metrics-cert-dir`) when the files change, as controller-runtime's certwatcher does (by
//! polling, which also sees the symlink swaps of a mounted Secret).

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio_rustls::rustls::crypto::ring::sign::any_supported_type;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_rustls::rustls::{self, ServerConfig};

use crate::shutdown::Shutdown;

/// The webhook server's certificate files, as [`watch_files`] logs them while unusable.
const WEBHOOK_PURPOSE: &str = "the webhook server's (cert-manager's Certificate mounted there, \
     --webhook-cert-mode self-managed, or --webhook-local-url for a manager outside the cluster)";

/// Why a certificate could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// A file could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The certificate PEM holds no certificate.
    #[error("{0}: no PEM certificate in it")]
    NoCertificate(String),
    /// The key PEM holds no usable private key.
    #[error("{what}: no usable PEM private key in it ({reason})")]
    BadKey {
        /// Where the key came from.
        what: String,
        /// Why it is unusable.
        reason: String,
    },
}

/// The certificate the server presents; clones share it.
#[derive(Clone, Debug, Default)]
pub struct CertStore {
    current: Arc<RwLock<Option<Arc<CertifiedKey>>>>,
}

impl CertStore {
    /// Empty: handshakes fail until a certificate is set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves `cert_pem` (the chain, leaf first) with `key_pem` from now on. `what` names
    /// their origin in errors.
    pub fn set_pem(&self, cert_pem: &[u8], key_pem: &[u8], what: &str) -> Result<(), CertError> {
        let certified = certified_key(cert_pem, key_pem, what)?;
        *self.current.write().expect("cert lock") = Some(Arc::new(certified));
        Ok(())
    }

    /// Whether a certificate is loaded.
    pub fn is_loaded(&self) -> bool {
        self.current.read().expect("cert lock").is_some()
    }

    /// A rustls server configuration presenting this store's certificate (HTTP/1.1).
    pub fn server_config(&self) -> Arc<ServerConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(self.clone()));
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Arc::new(config)
    }
}

impl ResolvesServerCert for CertStore {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.current.read().expect("cert lock").clone()
    }
}

fn certified_key(cert_pem: &[u8], key_pem: &[u8], what: &str) -> Result<CertifiedKey, CertError> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem)
        .filter_map(Result::ok)
        .collect();
    if chain.is_empty() {
        return Err(CertError::NoCertificate(what.to_owned()));
    }
    let bad_key = |reason: String| CertError::BadKey {
        what: what.to_owned(),
        reason,
    };
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| bad_key(e.to_string()))?;
    let key = any_supported_type(&key).map_err(|e| bad_key(e.to_string()))?;
    Ok(CertifiedKey::new(chain, key))
}

/// The certificate and key files of a certificate folder (`--webhook-cert-dir`, `--metrics-cert-dir`).
#[derive(Clone, Debug)]
pub struct CertFiles {
    /// The certificate (PEM).
    pub cert: PathBuf,
    /// The private key (PEM).
    pub key: PathBuf,
    /// What serves them and how they get there, for the log while they are unusable.
    pub purpose: &'static str,
}

impl CertFiles {
    /// `dir/cert_name` and `dir/key_name` of the webhook server.
    pub fn new(dir: &Path, cert_name: &str, key_name: &str) -> Self {
        Self {
            cert: dir.join(cert_name),
            key: dir.join(key_name),
            purpose: WEBHOOK_PURPOSE,
        }
    }

    /// The same files, logged as `purpose`'s while unusable (e.g. "metrics server
    /// certificate; cert-manager's Certificate mounted there").
    pub fn for_purpose(mut self, purpose: &'static str) -> Self {
        self.purpose = purpose;
        self
    }

    fn read(&self) -> Result<(Vec<u8>, Vec<u8>), CertError> {
        let read = |path: &PathBuf| {
            std::fs::read(path).map_err(|source| CertError::Read {
                path: path.clone(),
                source,
            })
        };
        Ok((read(&self.cert)?, read(&self.key)?))
    }
}

/// Loads `files` into `store` and reloads them whenever their contents change (checked every
/// `interval`), until `shutdown`. A bad new pair is logged and the previous one kept. Until
/// the first pair loads (cert-manager may not have issued it yet), it keeps trying and says
/// what it waits for.
pub async fn watch_files(
    store: CertStore,
    files: CertFiles,
    interval: Duration,
    shutdown: Shutdown,
) {
    let mut loaded: Option<(Vec<u8>, Vec<u8>)> = None;
    let mut last_error = String::new();
    let stop = shutdown.wait();
    tokio::pin!(stop);
    loop {
        match files.read() {
            Ok(pair) if Some(&pair) != loaded.as_ref() => {
                let what = files.cert.display().to_string();
                match store.set_pem(&pair.0, &pair.1, &what) {
                    Ok(()) => {
                        tracing::info!(cert = %files.cert.display(), "serving certificate loaded");
                        loaded = Some(pair);
                        last_error.clear();
                    }
                    Err(err) => report(&mut last_error, &err, &files),
                }
            }
            Ok(_) => {}
            Err(err) => report(&mut last_error, &err, &files),
        }
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(interval) => {}
        }
    }
}

/// Logs an error once (not at every poll).
fn report(last: &mut String, err: &CertError, files: &CertFiles) {
    let text = err.to_string();
    if *last != text {
        tracing::error!(
            error = %text,
            cert = %files.cert.display(),
            key = %files.key.display(),
            "serving certificate unusable; waiting for it: {}",
            files.purpose
        );
        *last = text;
    }
}
