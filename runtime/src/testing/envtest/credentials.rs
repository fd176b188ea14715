//! Who may talk to the control plane, and how: the service-account signing keys, bearer
//! tokens, and each identity as a `kube::Config` and a kubeconfig file.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use kube::config::AuthInfo;
use ring::rand::{SecureRandom, SystemRandom};
use serde_json::json;

use super::error::{Error, Result};

/// A service-account signing key pair: PKCS#8 private key and SPKI public key, in PEM.
pub(crate) struct SigningKeys {
    pub(crate) private_pem: String,
    pub(crate) public_pem: String,
}

/// Generates the key pair the API server signs service-account tokens with: ECDSA P-256
/// (ES256 tokens; kube-apiserver takes RSA or ECDSA keys), made by rcgen on ring, which the
/// webhook certificates already use. Unlike an RSA key (seconds in a debug build), it takes
/// microseconds, and it brings no crate of its own into the tests' build.
pub(crate) fn signing_keys() -> Result<SigningKeys> {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).map_err(|e| {
        Error::io(
            "generating the service-account signing key",
            std::io::Error::other(e),
        )
    })?;
    Ok(SigningKeys {
        private_pem: key.serialize_pem(),
        public_pem: key.public_key_pem(),
    })
}

/// A random bearer token (256 bits, hex).
pub(crate) fn random_token() -> String {
    let mut bytes = [0u8; 32];
    (SystemRandom::new().fill(&mut bytes)).expect("the system's random number generator");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The line of the API server's `--token-auth-file` that makes `token` an admin:
/// `token,user,uid,"groups"`, in group `system:masters`.
pub(crate) fn admin_token_line(token: &str) -> String {
    format!("{token},envtest-admin,envtest-admin,\"system:masters\"\n")
}

/// Writes `contents` to `path`, readable by the owner only, atomically (a temporary file in
/// the same folder, renamed).
pub(crate) fn write_private(path: &Path, contents: &str) -> Result<()> {
    let what = || format!("writing {}", path.display());
    let partial = path.with_extension("partial");
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(&partial)
        .map_err(|e| Error::io(what(), e))?;
    file.write_all(contents.as_bytes())
        .map_err(|e| Error::io(what(), e))?;
    std::fs::rename(&partial, path).map_err(|e| Error::io(what(), e))
}

/// A client configuration for `server` that trusts the certificates in `ca_pem` and sends
/// `token`.
pub(crate) fn client_config(server: &str, ca_pem: &[u8], token: &str) -> Result<kube::Config> {
    let url = server.parse().map_err(|e: http::uri::InvalidUri| {
        Error::io(
            format!("parsing the API server's URL {server}"),
            std::io::Error::other(e),
        )
    })?;
    let roots = pem::parse_many(ca_pem).map_err(|e| {
        Error::io(
            "reading the API server's serving certificate",
            std::io::Error::other(e),
        )
    })?;
    let mut config = kube::Config::new(url);
    config.root_cert = Some(roots.iter().map(|p| p.contents().to_vec()).collect());
    config.auth_info = bearer(token);
    Ok(config)
}

/// `config` authenticating with `token` instead.
pub(crate) fn with_token(config: &kube::Config, token: &str) -> kube::Config {
    let mut config = config.clone();
    config.auth_info = bearer(token);
    config
}

fn bearer(token: &str) -> AuthInfo {
    // `AuthInfo.token` is a `secrecy::SecretString`; deserializing avoids depending on secrecy.
    serde_json::from_value(json!({ "token": token })).expect("an AuthInfo with a token")
}

/// Writes a kubeconfig for `server` (its CA in the file `ca_file`) as `user` with `token`,
/// in namespace `namespace`, as kubectl and `kube::Config::infer` read it.
pub(crate) fn write_kubeconfig(
    path: &Path,
    server: &str,
    ca_file: &Path,
    user: &str,
    token: &str,
    namespace: &str,
) -> Result<()> {
    let cluster = json!({"server": server, "certificate-authority": ca_file});
    write_token_kubeconfig(path, cluster, user, token, namespace)
}

/// Writes a kubeconfig for the cluster of `config` (any cluster: its URL, CA, TLS server name,
/// proxy, and whether it skips TLS verification) as `user` with `token`, in `namespace`. The
/// CA goes to a file beside it, `path` with the extension `ca.crt`.
pub(crate) fn write_kubeconfig_like(
    path: &Path,
    config: &kube::Config,
    user: &str,
    token: &str,
    namespace: &str,
) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    }
    let server = config.cluster_url.to_string();
    let mut cluster = json!({"server": server.trim_end_matches('/')});
    if let Some(roots) = config.root_cert.as_ref().filter(|roots| !roots.is_empty()) {
        let pems: Vec<pem::Pem> = (roots.iter())
            .map(|der| pem::Pem::new("CERTIFICATE", der.clone()))
            .collect();
        let ca_file = path.with_extension("ca.crt");
        write_private(&ca_file, &pem::encode_many(&pems))?;
        cluster["certificate-authority"] = json!(ca_file);
    }
    if config.accept_invalid_certs {
        cluster["insecure-skip-tls-verify"] = json!(true);
    }
    if let Some(name) = &config.tls_server_name {
        cluster["tls-server-name"] = json!(name);
    }
    if let Some(proxy) = &config.proxy_url {
        cluster["proxy-url"] = json!(proxy.to_string());
    }
    write_token_kubeconfig(path, cluster, user, token, namespace)
}

fn write_token_kubeconfig(
    path: &Path,
    cluster: serde_json::Value,
    user: &str,
    token: &str,
    namespace: &str,
) -> Result<()> {
    let kubeconfig = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "cluster", "cluster": cluster}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": "context", "context": {
            "cluster": "cluster", "user": user, "namespace": namespace,
        }}],
        "current-context": "context",
    });
    let yaml = serde_saphyr::to_string(&kubeconfig).map_err(|e| {
        Error::io(
            format!("writing {}", path.display()),
            std::io::Error::other(e),
        )
    })?;
    write_private(path, &yaml)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_admin_lines_grant_system_masters() {
        let (a, b) = (random_token(), random_token());
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        assert_eq!(
            admin_token_line("t"),
            "t,envtest-admin,envtest-admin,\"system:masters\"\n"
        );
    }

    #[tokio::test]
    async fn a_written_kubeconfig_reads_back_as_kube_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("admin.kubeconfig");
        let ca = dir.path().join("ca.crt");
        write_kubeconfig(&path, "https://127.0.0.1:6443", &ca, "me", "sekret", "ns1").unwrap();
        let kubeconfig = kube::config::Kubeconfig::read_from(&path).unwrap();
        let cluster = kubeconfig.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.server.as_deref(), Some("https://127.0.0.1:6443"));
        assert_eq!(
            cluster.certificate_authority.as_deref(),
            ca.to_str(),
            "the CA file"
        );
        let context = kubeconfig.contexts[0].context.as_ref().unwrap();
        assert_eq!(context.namespace.as_deref(), Some("ns1"));
        let mode = std::fs::metadata(&path).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
    }

    #[tokio::test]
    async fn a_kubeconfig_like_another_keeps_its_cluster_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let ca = "-----BEGIN CERTIFICATE-----\nAAEC\n-----END CERTIFICATE-----\n";
        let mut admin = client_config("https://10.0.0.1:6443", ca.as_bytes(), "admin").unwrap();
        admin.tls_server_name = Some("kubernetes".into());
        let path = dir.path().join("sa.kubeconfig");
        write_kubeconfig_like(&path, &admin, "sa", "sekret", "ns1").unwrap();
        let kubeconfig = kube::config::Kubeconfig::read_from(&path).unwrap();
        let cluster = kubeconfig.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.server.as_deref(), Some("https://10.0.0.1:6443"));
        assert_eq!(cluster.tls_server_name.as_deref(), Some("kubernetes"));
        let ca_file = cluster.certificate_authority.as_deref().unwrap();
        assert_eq!(
            std::fs::read_to_string(ca_file).unwrap().replace("\r", ""),
            ca
        );
        let options = kube::config::KubeConfigOptions::default();
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .unwrap();
        assert_eq!(config.root_cert, admin.root_cert);
        assert_eq!(config.default_namespace, "ns1");
    }
}
