//! The secure metrics endpoint on a real API server (envtest), with real ServiceAccount tokens
//! from the TokenRequest API: who gets 401, 403 and the metrics, the review cache, the
//! manager's own need for review rights, plain HTTP refused, and certificate rotation.

mod support;

use std::time::{Duration, Instant};

use operator_rs_runtime::manager::Manager;
use operator_rs_runtime::skip_unless_available;
use operator_rs_runtime::testing::envtest::{Envtest, ServiceAccountAccess};
use operator_rs_runtime::testing::metrics::{Scraped, metrics_reader, scrape};
use operator_rs_runtime::webhook::certs::CertificateAuthority;
use tokio_rustls::rustls::pki_types::CertificateDer;
use tokio_rustls::rustls::pki_types::pem::PemObject;

use support::parse;
use support::testing::http_get;

/// The rights the manager's reviews need: the rules of the generated
/// `config/rbac/metrics_auth_role.yaml`, bound to the manager's ServiceAccount.
const METRICS_AUTH_RBAC: &str = "
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: metrics-auth-test-role}
rules:
- apiGroups: [authentication.k8s.io]
  resources: [tokenreviews]
  verbs: [create]
- apiGroups: [authorization.k8s.io]
  resources: [subjectaccessreviews]
  verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: metrics-auth-test-rolebinding}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: metrics-auth-test-role}
subjects: []
";

/// A manager serving only its metrics (`extra` flags added), as `client`; returns it started
/// and the address of its metrics.
async fn start_manager(
    client: kube::Client,
    extra: &[&str],
) -> anyhow::Result<(Manager, std::net::SocketAddr)> {
    let mut argv = vec![
        "manager",
        "--metrics-bind-address=127.0.0.1:0",
        "--health-probe-bind-address=0",
        "--webhook-bind-address=0",
    ];
    argv.extend_from_slice(extra);
    let manager = Manager::with_client("metrics-test", parse(argv)?, client).await?;
    let addr = manager.metrics_addr().expect("metrics enabled");
    Ok((manager, addr))
}

async fn get(addr: std::net::SocketAddr, token: Option<&str>) -> Scraped {
    scrape(addr, "/metrics", token)
        .await
        .expect("an HTTPS answer")
}

#[tokio::test]
async fn only_tokens_allowed_get_on_metrics_are_served_and_reviews_are_cached() -> anyhow::Result<()>
{
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let namespace = env.create_namespace("metrics-auth").await?;
    let account = env
        .service_account(&namespace, "manager", METRICS_AUTH_RBAC)
        .await?;
    let reader = metrics_reader(env.config(), &namespace, &env.dir().join("r.kubeconfig")).await?;
    let stranger = env.service_account(&namespace, "stranger", "").await?;

    let (manager, addr) = start_manager(account.client()?, &[]).await?;
    let auth = manager.metrics_auth().expect("secure by default").clone();
    let shutdown = manager.shutdown();
    let run = tokio::spawn(manager.run(vec![]));

    let no_token = get(addr, None).await;
    assert_eq!(no_token.status, 401, "{}", no_token.body);
    assert!(!no_token.body.contains("# EOF"), "{}", no_token.body);
    let invalid = get(addr, Some("not-a-token")).await;
    assert_eq!(invalid.status, 401, "{}", invalid.body);
    let forbidden = get(addr, Some(stranger.token())).await;
    assert_eq!(forbidden.status, 403, "{}", forbidden.body);
    assert!(
        forbidden.body.contains(&stranger.username()),
        "{}",
        forbidden.body
    );
    let allowed = get(addr, Some(reader.token())).await;
    assert_eq!(allowed.status, 200, "{}", allowed.body);
    assert!(
        allowed.body.ends_with("# EOF\n") && allowed.body.contains("# TYPE"),
        "{}",
        allowed.body
    );
    // A path the reader's rule does not name is reviewed, and refused.
    let other = scrape(addr, "/debug", Some(reader.token())).await?;
    assert_eq!(other.status, 403, "{}", other.body);

    // Within the cache's lifetimes, asking again costs no review: allowed, denied, invalid.
    let reviews = (auth.token_reviews(), auth.access_reviews());
    assert_eq!(reviews, (3, 3), "one review per distinct token and request");
    for _ in 0..3 {
        assert_eq!(get(addr, Some(reader.token())).await.status, 200);
        assert_eq!(get(addr, Some(stranger.token())).await.status, 403);
        assert_eq!(get(addr, Some("not-a-token")).await.status, 401);
    }
    assert_eq!((auth.token_reviews(), auth.access_reviews()), reviews);

    // Plain HTTP to the HTTPS port: told so, never served.
    let plain = http_get(addr, "/metrics").await;
    assert_eq!(plain.status, 400, "{}", plain.body);
    assert!(plain.body.contains("HTTPS"), "{}", plain.body);

    shutdown.trigger();
    run.await??;
    Ok(())
}

#[tokio::test]
async fn the_managers_client_needs_review_rights_and_insecure_mode_serves_anyone()
-> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let namespace = env.create_namespace("metrics-rights").await?;
    let reader = metrics_reader(env.config(), &namespace, &env.dir().join("r2.kubeconfig")).await?;
    let unbound: ServiceAccountAccess = env.service_account(&namespace, "manager", "").await?;

    // A manager without `create` on tokenreviews cannot tell who a token belongs to.
    let (manager, addr) = start_manager(unbound.client()?, &[]).await?;
    let shutdown = manager.shutdown();
    let run = tokio::spawn(manager.run(vec![]));
    let failed = get(addr, Some(reader.token())).await;
    assert_eq!(failed.status, 500, "{}", failed.body);
    assert!(
        failed.body.contains("TokenReview") && failed.body.contains("forbidden"),
        "{}",
        failed.body
    );
    shutdown.trigger();
    run.await??;

    // --metrics-secure=false: plain HTTP, no token, no review.
    let (manager, addr) = start_manager(unbound.client()?, &["--metrics-secure=false"]).await?;
    assert!(manager.metrics_auth().is_none());
    let shutdown = manager.shutdown();
    let run = tokio::spawn(manager.run(vec![]));
    let plain = http_get(addr, "/metrics").await;
    assert_eq!(plain.status, 200, "{}", plain.body);
    assert!(plain.body.ends_with("# EOF\n"), "{}", plain.body);
    shutdown.trigger();
    run.await??;
    Ok(())
}

/// A serving certificate for 127.0.0.1, PEM, and its DER.
fn certificate() -> (String, String, Vec<u8>) {
    let ca = CertificateAuthority::generate("test-metrics-ca", Duration::from_secs(3600)).unwrap();
    let cert = ca
        .issue(&["127.0.0.1".into()], Duration::from_secs(3600))
        .unwrap();
    let der = CertificateDer::from_pem_slice(cert.cert_pem.as_bytes()).unwrap();
    (cert.cert_pem, cert.key_pem, der.as_ref().to_vec())
}

#[tokio::test]
async fn certificates_of_the_cert_dir_are_served_and_reloaded_when_rewritten() -> anyhow::Result<()>
{
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let dir = tempfile::tempdir()?;
    let write = |(cert, key, _): &(String, String, Vec<u8>)| {
        std::fs::write(dir.path().join("tls.crt"), cert).unwrap();
        std::fs::write(dir.path().join("tls.key"), key).unwrap();
    };
    let first = certificate();
    write(&first);
    let cert_dir = format!("--metrics-cert-dir={}", dir.path().display());
    let (manager, addr) = start_manager(env.client()?, &[&cert_dir]).await?;
    let shutdown = manager.shutdown();
    let run = tokio::spawn(manager.run(vec![]));

    // The files are loaded as the server starts.
    let deadline = Instant::now() + Duration::from_secs(5);
    let served = loop {
        match scrape(addr, "/metrics", None).await {
            Ok(answer) => break answer,
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await
            }
            Err(err) => panic!("no certificate served: {err}"),
        }
    };
    assert_eq!(served.certificate, first.2, "the cert dir's certificate");
    assert_eq!(served.status, 401);

    // Rewritten (cert-manager renewing it): a new connection sees the new one.
    let second = certificate();
    write(&second);
    let deadline = Instant::now() + Duration::from_secs(25);
    loop {
        let served = get(addr, None).await.certificate;
        if served == second.2 {
            break;
        }
        assert_eq!(served, first.2, "neither the old nor the new certificate");
        assert!(
            Instant::now() < deadline,
            "the new certificate was not loaded"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    shutdown.trigger();
    run.await??;
    Ok(())
}

#[tokio::test]
async fn without_a_cert_dir_a_self_signed_certificate_is_served() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let (manager, addr) = start_manager(env.client()?, &[]).await?;
    let shutdown = manager.shutdown();
    let run = tokio::spawn(manager.run(vec![]));
    let served = get(addr, None).await;
    assert_eq!(served.status, 401);
    assert!(!served.certificate.is_empty());
    shutdown.trigger();
    run.await??;
    Ok(())
}

/// Forwards connections to `upstream` from `listener` (a stand-in for a path to the API server
/// that comes back).
async fn forward(listener: tokio::net::TcpListener, upstream: std::net::SocketAddr) {
    while let Ok((mut inbound, _)) = listener.accept().await {
        tokio::spawn(async move {
            if let Ok(mut outbound) = tokio::net::TcpStream::connect(upstream).await {
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            }
        });
    }
}

#[tokio::test]
async fn reviews_are_retried_while_the_api_server_is_unreachable_but_verdicts_are_not()
-> anyhow::Result<()> {
    use operator_rs_runtime::auth::{AuthError, DelegatedAuth, REVIEW_BACKOFF};
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let namespace = env.create_namespace("metrics-retry").await?;
    let account = env
        .service_account(&namespace, "manager", METRICS_AUTH_RBAC)
        .await?;
    let reader = metrics_reader(env.config(), &namespace, &env.dir().join("r3.kubeconfig")).await?;
    let unbound = env.service_account(&namespace, "unbound", "").await?;
    let mut headers = axum::http::HeaderMap::new();
    headers.insert(
        axum::http::header::AUTHORIZATION,
        format!("Bearer {}", reader.token()).parse()?,
    );

    // The manager's way to the API server: a port where nothing listens for a second, then a
    // path to the real one (as after an API server restart or a network blip).
    let url = &account.config().cluster_url;
    let upstream = format!(
        "{}:{}",
        url.host().unwrap_or("127.0.0.1"),
        url.port_u16().unwrap()
    );
    let upstream = tokio::net::lookup_host(upstream).await?.next().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut config = account.config().clone();
    config.cluster_url = format!("https://127.0.0.1:{port}").parse()?;
    let auth = DelegatedAuth::new(kube::Client::try_from(config)?);
    let comes_back = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await;
        forward(listener.expect("the port is free again"), upstream).await
    });
    let started = Instant::now();
    let user = auth.check(&headers, "get", "/metrics").await;
    let user = user.unwrap_or_else(|e| panic!("the reviews were not retried: {e}"));
    assert_eq!(user.name, reader.username());
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "answered before the path came back"
    );
    assert_eq!((auth.token_reviews(), auth.access_reviews()), (1, 1));
    comes_back.abort();

    // A refusal of the review itself (403: no `create` on tokenreviews) is a verdict: answered
    // at once, not after the ~4 s of retries.
    let auth = DelegatedAuth::new(unbound.client()?);
    let started = Instant::now();
    let refused = auth.check(&headers, "get", "/metrics").await.unwrap_err();
    let elapsed = started.elapsed();
    assert!(
        matches!(&refused, AuthError::Review { source: kube::Error::Api(s), .. } if s.code == 403),
        "{refused}"
    );
    assert!(
        elapsed < REVIEW_BACKOFF * 3,
        "a 403 was retried: {elapsed:?}"
    );
    Ok(())
}
