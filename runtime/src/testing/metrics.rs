//! Scraping a manager's metrics endpoint as Prometheus does: over HTTPS with a bearer token
//! (the certificate, self-signed unless `--metrics-cert-dir` is given, not verified, like
//! the generated ServiceMonitor's `insecureSkipVerify`), and a ServiceAccount allowed to.
//!
//! ```no_run
//! # async fn f(env: &operator_rs_runtime::testing::envtest::Envtest, addr: std::net::SocketAddr) -> anyhow::Result<()> {
//! use operator_rs_runtime::testing::metrics::{metrics_reader, scrape};
//!
//! let kubeconfig = env.dir().join("reader.kubeconfig");
//! let reader = metrics_reader(env.config(), "monitoring", &kubeconfig).await?;
//! let response = scrape(addr, "/metrics", Some(reader.token())).await?;
//! assert_eq!(response.status, 200);
//! # Ok(()) }
//! ```

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::client::danger::{
    HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier,
};
use tokio_rustls::rustls::crypto::{
    CryptoProvider, verify_tls12_signature, verify_tls13_signature,
};
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use tokio_rustls::rustls::{self, ClientConfig, DigitallySignedStruct, SignatureScheme};

use super::envtest::{Result, ServiceAccountAccess};

/// The ClusterRole [`metrics_reader`] binds: `get` on `/metrics`, as the generated
/// `config/rbac/metrics_reader_role.yaml` grants (named apart, so it never replaces a
/// project's own).
const READER_RBAC: &str = "\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: operator-rs-test-metrics-reader}
rules:
- nonResourceURLs: [/metrics]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: operator-rs-test-metrics-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: operator-rs-test-metrics-reader}
subjects: []
";

/// A response of the metrics endpoint.
#[derive(Clone, Debug)]
pub struct Scraped {
    /// The HTTP status.
    pub status: u16,
    /// The body (the metrics when `status` is 200, else why not).
    pub body: String,
    /// The certificate the server presented (DER, the leaf).
    pub certificate: Vec<u8>,
}

/// `GET path` from the HTTPS server at `addr` on a new connection, with `token` as the bearer
/// token if given; the server's certificate is not verified.
pub async fn scrape(addr: SocketAddr, path: &str, token: Option<&str>) -> std::io::Result<Scraped> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(std::io::Error::other)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
        .with_no_client_auth();
    let stream = tokio::net::TcpStream::connect(addr).await?;
    let name = ServerName::from(addr.ip());
    let mut tls = TlsConnector::from(Arc::new(config))
        .connect(name, stream)
        .await?;
    let certificate = (tls.get_ref().1.peer_certificates())
        .and_then(|chain| chain.first())
        .map(|leaf| leaf.as_ref().to_vec())
        .unwrap_or_default();
    // HTTP/1.0: the body comes whole (never chunked) and the server closes the connection.
    let authorization = token
        .map(|token| format!("Authorization: Bearer {token}\r\n"))
        .unwrap_or_default();
    let request = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n{authorization}\r\n");
    tls.write_all(request.as_bytes()).await?;
    let mut raw = Vec::new();
    match tls.read_to_end(&mut raw).await {
        // A server may close without TLS's close_notify; the response is whole anyway.
        Err(err) if err.kind() == std::io::ErrorKind::UnexpectedEof && !raw.is_empty() => {}
        other => drop(other?),
    }
    let raw = String::from_utf8_lossy(&raw);
    let invalid = || std::io::Error::other(format!("not an HTTP response: {raw:?}"));
    let (head, body) = raw.split_once("\r\n\r\n").ok_or_else(invalid)?;
    let status = (head.split(' ').nth(1))
        .and_then(|status| status.parse().ok())
        .ok_or_else(invalid)?;
    Ok(Scraped {
        status,
        body: body.to_owned(),
        certificate,
    })
}

/// On the cluster of the admin configuration `admin`, the ServiceAccount
/// `namespace/metrics-reader` bound to a ClusterRole allowing `get` on `/metrics` (what the
/// generated `metrics-reader` ClusterRole grants Prometheus), once the API server authorizes
/// by it; its kubeconfig is written to `kubeconfig`. Scrape with its
/// [`token`](ServiceAccountAccess::token).
pub async fn metrics_reader(
    admin: &kube::Config,
    namespace: &str,
    kubeconfig: &Path,
) -> Result<ServiceAccountAccess> {
    metrics_reader_named(admin, namespace, "metrics-reader", kubeconfig).await
}

/// [`metrics_reader`] as the ServiceAccount `namespace/name` (its ClusterRole is named after
/// it: `<name>-operator-rs-test-metrics-reader`), so that the readers of several projects on
/// one cluster are apart.
pub async fn metrics_reader_named(
    admin: &kube::Config,
    namespace: &str,
    name: &str,
    kubeconfig: &Path,
) -> Result<ServiceAccountAccess> {
    ServiceAccountAccess::create(admin, namespace, name, READER_RBAC, kubeconfig).await
}

/// Accepts any server certificate (signatures are still checked): a test scraping a
/// self-signed endpoint, like a ServiceMonitor with `insecureSkipVerify: true`.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
