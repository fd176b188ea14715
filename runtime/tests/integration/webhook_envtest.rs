//! Webhooks on the real control plane (envtest): the API server calls the manager's webhooks.
//! The manager runs with `--webhook-local-url`, so it points the cluster at itself: a defaulted
//! field appears on create, an invalid object is refused with the validator's message (or with
//! one cause per invalid field, as the API server's status carries them), an
//! object created as v1 reads back as v2 and round-trips, creates fail while the manager is
//! down (failurePolicy Fail), and a clean shutdown takes the configurations away. Self-managed
//! certificates: the Secret, the caBundle of the configurations calling the Service, renewal.

use crate::webhook_kinds;

use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use operator_rs_runtime::manager::{Manager, ManagerArgs, Shutdown};
use operator_rs_runtime::skip_unless_available;
use operator_rs_runtime::testing::envtest::Envtest;
use operator_rs_runtime::webhook::install::ServiceRef;
use operator_rs_runtime::webhook::self_managed::SelfManaged;
use operator_rs_runtime::webhook::tls::CertStore;
use operator_rs_runtime::webhook::{Webhook, Webhooks};
use serde_json::json;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore};
use webhook_kinds::{CronJobDefaulter, CronJobValidator, v1, v2};

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: cronjobs.batch.example.com
spec:
  group: batch.example.com
  names: {kind: CronJob, plural: cronjobs, singular: cronjob, listKind: CronJobList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: v2
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
";

/// What `operator-rs generate webhooks` writes for the two markers of CronJob v1.
const CONFIGURATIONS: &str = "---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /mutate-batch-example-com-v1-cronjob}
  failurePolicy: Fail
  name: mcronjob-v1.kb.io
  rules:
  - {apiGroups: [batch.example.com], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [cronjobs]}
  sideEffects: None
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /validate-batch-example-com-v1-cronjob}
  failurePolicy: Fail
  name: vcronjob-v1.kb.io
  rules:
  - {apiGroups: [batch.example.com], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [cronjobs]}
  sideEffects: None
";

const OPERATOR: &str = "webhook-test";

fn webhooks() -> Webhooks {
    Webhooks::new(CONFIGURATIONS).with([
        Webhook::defaulting::<v1::CronJob>(CronJobDefaulter),
        Webhook::validating::<v1::CronJob>(CronJobValidator),
        Webhook::conversion::<v2::CronJob, v1::CronJob>(),
    ])
}

fn cronjobs(version: &str, client: &kube::Client, namespace: &str) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("batch.example.com", version, "CronJob"),
        "cronjobs",
    );
    Api::namespaced_with(client.clone(), namespace, &resource)
}

fn cronjob(name: &str, schedule: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "batch.example.com/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {"schedule": schedule},
    }))
    .unwrap()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    manager: ManagerArgs,
}

/// Starts a manager serving the webhooks at `https://127.0.0.1:<port>`; returns its shutdown
/// and its task.
async fn start_manager(
    env: &Envtest,
    port: u16,
) -> (
    Shutdown,
    tokio::task::JoinHandle<Result<(), operator_rs_runtime::manager::Error>>,
) {
    let url = format!("--webhook-local-url=https://127.0.0.1:{port}");
    let args = Cli::parse_from([
        "manager",
        "--metrics-bind-address=0",
        "--health-probe-bind-address=0",
        url.as_str(),
    ])
    .manager;
    let manager = Manager::with_client(OPERATOR, args, env.client().unwrap())
        .await
        .unwrap()
        .webhooks(webhooks());
    let shutdown = manager.shutdown();
    (shutdown, tokio::spawn(manager.run(Vec::new())))
}

/// Creates `object`, retrying while the API server has not yet seen the configurations.
async fn create_defaulted(api: &Api<DynamicObject>, object: &DynamicObject) -> DynamicObject {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let created = api.create(&PostParams::default(), object).await;
        match created {
            // `suspend` survives the conversion to the stored v2 (concurrencyPolicy does not).
            Ok(created) if created.data["spec"].get("suspend").is_some() => return created,
            Ok(created) => {
                // Created before the webhook was in place: try again.
                let name = created.metadata.name.clone().unwrap();
                api.delete(&name, &Default::default()).await.unwrap();
            }
            Err(err) if tokio::time::Instant::now() > deadline => panic!("create failed: {err}"),
            Err(_) => {}
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the defaulting webhook was never called"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn the_api_server_calls_the_webhooks_of_a_local_manager() {
    skip_unless_available!();
    let env = Envtest::shared().unwrap();
    let crd: CustomResourceDefinition = serde_saphyr::from_str(CRD).unwrap();
    env.install_crd(&crd).await.unwrap();
    let client = env.client().unwrap();
    let namespace = env.create_namespace("webhooks").await.unwrap();
    let (v1_api, v2_api) = (
        cronjobs("v1", &client, &namespace),
        cronjobs("v2", &client, &namespace),
    );
    let port = free_port();
    let (shutdown, task) = start_manager(env, port).await;

    // Defaulting: the fields appear on create.
    let created = create_defaulted(&v1_api, &cronjob("nightly", "0 3 * * *")).await;
    assert_eq!(created.data["spec"]["suspend"], false);

    // Validation: refused, with the validator's message as kubectl shows it.
    let err = v1_api
        .create(&PostParams::default(), &cronjob("bad", "0 3"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("admission webhook \"vcronjob-v1.kb.io\" denied the request: spec.schedule: \"0 3\" must have 5 fields"),
        "{err}"
    );

    // Field errors: the API server's status names each field (details.causes, as kubectl lists
    // them) under a 422 Invalid, and its message names them too.
    let mut two_bad_fields = cronjob("fields", "");
    two_bad_fields.data["spec"]["concurrencyPolicy"] = json!("Sometimes");
    let err = v1_api
        .create(&PostParams::default(), &two_bad_fields)
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("not a refusal of the API server: {err}");
    };
    assert_eq!(
        (status.code, status.reason.as_str()),
        (422, "Invalid"),
        "{status:?}"
    );
    assert_eq!(
        status.message,
        "admission webhook \"vcronjob-v1.kb.io\" denied the request: \
         CronJob.batch.example.com \"fields\" is invalid: \
         [spec.schedule: Required value: a cron schedule, e.g. `0 3 * * *`, \
         spec.concurrencyPolicy: Unsupported value: \"Sometimes\": \
         supported values: \"Allow\", \"Forbid\", \"Replace\"]"
    );
    let details = status.details.expect("details");
    assert_eq!(
        (
            details.group.as_str(),
            details.kind.as_str(),
            details.name.as_str()
        ),
        ("batch.example.com", "CronJob", "fields")
    );
    let causes: Vec<(&str, &str, &str)> = (details.causes.iter())
        .map(|c| (c.field.as_str(), c.reason.as_str(), c.message.as_str()))
        .collect();
    assert_eq!(
        causes,
        [
            (
                "spec.schedule",
                "FieldValueRequired",
                "Required value: a cron schedule, e.g. `0 3 * * *`"
            ),
            (
                "spec.concurrencyPolicy",
                "FieldValueNotSupported",
                "Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\""
            ),
        ]
    );

    // Conversion: stored as v2 (the hub), read as v2 and back as v1 unchanged.
    let as_v2 = v2_api.get("nightly").await.unwrap();
    assert_eq!(
        as_v2.types.as_ref().unwrap().api_version,
        "batch.example.com/v2"
    );
    assert_eq!(
        as_v2.data["spec"],
        json!({"minute": "0", "rest": "3 * * *", "suspend": false})
    );
    let as_v1 = v1_api.get("nightly").await.unwrap();
    assert_eq!(as_v1.data["spec"]["schedule"], "0 3 * * *");
    assert_eq!(as_v1.metadata.uid, created.metadata.uid);
    assert_eq!(
        as_v1.data["spec"], created.data["spec"],
        "changed on a round trip"
    );
    // concurrencyPolicy has no place in v2: it is lost on the way, as the hub cannot hold it.
    assert_eq!(as_v1.data["spec"].get("concurrencyPolicy"), None);
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let conversion = crds
        .get("cronjobs.batch.example.com")
        .await
        .unwrap()
        .spec
        .conversion
        .unwrap();
    assert_eq!(conversion.strategy, "Webhook");

    // The manager dies without cleaning up: with failurePolicy Fail, creates fail.
    task.abort();
    let _ = task.await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let err = loop {
        match v1_api
            .create(&PostParams::default(), &cronjob("while-down", "0 4 * * *"))
            .await
        {
            Err(err) => break err.to_string(),
            Ok(_) => {
                v1_api
                    .delete("while-down", &Default::default())
                    .await
                    .unwrap();
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "creates still succeed with the manager down"
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };
    assert!(err.contains("failed calling webhook"), "{err}");
    drop(shutdown);

    // A new manager takes over the same configurations; a clean shutdown removes them.
    let (shutdown, task) = start_manager(env, port).await;
    create_defaulted(&v1_api, &cronjob("again", "0 5 * * *")).await;
    shutdown.trigger();
    task.await.unwrap().unwrap();
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let name = |kind: &str| format!("{OPERATOR}-local-{kind}-webhook-configuration");
    assert!(mutating.get_opt(&name("mutating")).await.unwrap().is_none());
    assert!(
        validating
            .get_opt(&name("validating"))
            .await
            .unwrap()
            .is_none()
    );
    let conversion = crds
        .get("cronjobs.batch.example.com")
        .await
        .unwrap()
        .spec
        .conversion
        .unwrap();
    assert_eq!(conversion.strategy, "None");
    // No webhook any more: an object is stored as sent (no defaults, no refusal).
    let plain = v1_api
        .create(&PostParams::default(), &cronjob("plain", "0 3"))
        .await
        .unwrap();
    assert_eq!(plain.data["spec"], json!({"schedule": "0 3"}));
}

/// Completes a TLS handshake with `store`'s certificate for `name`, trusting `ca_pem`.
async fn handshake(store: &CertStore, ca_pem: &str, name: &str) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(store.server_config());
    let server = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let _ = acceptor.accept(stream).await;
    });
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let result = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from(name.to_owned()).unwrap(), tcp)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string());
    server.abort();
    result
}

fn secret_text(secret: &Secret, key: &str) -> String {
    String::from_utf8(secret.data.as_ref().unwrap()[key].0.clone()).unwrap()
}

#[tokio::test]
async fn self_managed_certificates_are_issued_injected_and_renewed() {
    skip_unless_available!();
    let env = Envtest::shared().unwrap();
    let client = env.client().unwrap();
    let namespace = env.create_namespace("selfmanaged").await.unwrap();
    // Two configurations: one calls our Service, the other someone else's.
    let config = |name: &str, service: &str| -> ValidatingWebhookConfiguration {
        serde_json::from_value(json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": [{
                "name": "vcronjob-v1.kb.io",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Ignore",
                "clientConfig": {"service": {"name": service, "namespace": namespace, "path": "/validate"}},
                "rules": [{"apiGroups": ["batch.example.com"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["cronjobs"]}],
            }],
        }))
        .unwrap()
    };
    let configs: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let (ours, theirs) = (format!("{namespace}-ours"), format!("{namespace}-theirs"));
    configs
        .create(&PostParams::default(), &config(&ours, "webhook-service"))
        .await
        .unwrap();
    configs
        .create(&PostParams::default(), &config(&theirs, "other-service"))
        .await
        .unwrap();

    let manager = SelfManaged {
        client: client.clone(),
        secret: "webhook-server-cert".into(),
        service: ServiceRef {
            name: "webhook-service".into(),
            namespace: namespace.clone(),
        },
        operator: OPERATOR.into(),
    };
    let store = CertStore::new();
    let bundle = manager.reconcile(&store).await.unwrap();
    assert!(store.is_loaded());

    // The Secret holds what cert-manager would write, and the served certificate is valid for
    // the Service's name under the CA now in our configuration's caBundle (only ours).
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &namespace);
    let secret = secrets.get("webhook-server-cert").await.unwrap();
    assert_eq!(secret.type_.as_deref(), Some("kubernetes.io/tls"));
    assert_eq!(secret_text(&secret, "ca.crt"), bundle);
    let injected = configs.get(&ours).await.unwrap().webhooks.unwrap()[0]
        .client_config
        .ca_bundle
        .clone()
        .expect("caBundle injected");
    assert_eq!(String::from_utf8(injected.0).unwrap(), bundle);
    assert!(
        configs.get(&theirs).await.unwrap().webhooks.unwrap()[0]
            .client_config
            .ca_bundle
            .is_none()
    );
    let service_name = format!("webhook-service.{namespace}.svc");
    handshake(&store, &bundle, &service_name).await.unwrap();
    let err = handshake(&store, &bundle, "elsewhere.example.com")
        .await
        .unwrap_err();
    assert!(err.contains("certificate"), "{err}");

    // Nothing to do on the next round: the same certificate.
    manager.reconcile(&store).await.unwrap();
    let unchanged = secrets.get("webhook-server-cert").await.unwrap();
    assert_eq!(
        secret_text(&unchanged, "tls.crt"),
        secret_text(&secret, "tls.crt")
    );

    // A certificate close to expiry is reissued under the same CA.
    let soon = (operator_rs_runtime::webhook::certs::now() + 3600).to_string();
    let patch = json!({"metadata": {"annotations": {"operator-rs.io/cert-not-after": soon}}});
    secrets
        .patch(
            "webhook-server-cert",
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .unwrap();
    let same_bundle = manager.reconcile(&store).await.unwrap();
    let renewed = secrets.get("webhook-server-cert").await.unwrap();
    assert_ne!(
        secret_text(&renewed, "tls.crt"),
        secret_text(&secret, "tls.crt")
    );
    assert_eq!(same_bundle, bundle);
    handshake(&store, &bundle, &service_name).await.unwrap();

    // A CA close to expiry is replaced; the bundle trusts the new and the previous CA.
    let patch = json!({"metadata": {"annotations": {"operator-rs.io/ca-not-after": soon}}});
    secrets
        .patch(
            "webhook-server-cert",
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .unwrap();
    let new_bundle = manager.reconcile(&store).await.unwrap();
    assert!(
        new_bundle.ends_with(&bundle) && new_bundle.len() > bundle.len(),
        "{new_bundle}"
    );
    let injected = configs.get(&ours).await.unwrap().webhooks.unwrap()[0]
        .client_config
        .ca_bundle
        .clone()
        .unwrap();
    assert_eq!(String::from_utf8(injected.0).unwrap(), new_bundle);
    let new_ca = secret_text(&secrets.get("webhook-server-cert").await.unwrap(), "ca.crt");
    handshake(&store, &new_ca, &service_name).await.unwrap();
    assert!(
        handshake(&store, &bundle, &service_name).await.is_err(),
        "served by the old CA"
    );
}

/// This machine's address on its network, which Endpoints accept (loopback they refuse).
fn host_address() -> Option<std::net::IpAddr> {
    // A UDP "connect" sends nothing: it only asks the kernel which address would be used.
    ["8.8.8.8:9", "10.255.255.1:9", "[2001:db8::1]:9"]
        .into_iter()
        .find_map(|target| {
            let any = if target.starts_with('[') {
                "[::]:0"
            } else {
                "0.0.0.0:0"
            };
            let socket = std::net::UdpSocket::bind(any).ok()?;
            socket.connect(target).ok()?;
            let ip = socket.local_addr().ok()?.ip();
            (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
        })
}

/// The Service in front of the webhook server, as `config/webhook/service.yaml` makes it, with
/// the Endpoints and EndpointSlice a Deployment's pod would give it: this machine's address
/// and the port the manager serves on.
async fn webhook_service(client: &kube::Client, namespace: &str, ip: std::net::IpAddr, port: u16) {
    use k8s_openapi::api::core::v1::{Endpoints, Service};
    use k8s_openapi::api::discovery::v1::EndpointSlice;
    let service: Service = serde_json::from_value(json!({
        "metadata": {"name": "webhook-service"},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]},
    }))
    .unwrap();
    let endpoints: Endpoints = serde_json::from_value(json!({
        "metadata": {"name": "webhook-service"},
        "subsets": [{"addresses": [{"ip": ip.to_string()}], "ports": [{"name": "https", "port": port}]}],
    }))
    .unwrap();
    let slice: EndpointSlice = serde_json::from_value(json!({
        "metadata": {"name": "webhook-service-1", "labels": {
            "kubernetes.io/service-name": "webhook-service",
            "endpointslice.kubernetes.io/managed-by": "webhook-envtest",
        }},
        "addressType": if ip.is_ipv4() { "IPv4" } else { "IPv6" },
        "endpoints": [{"addresses": [ip.to_string()], "conditions": {"ready": true}}],
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
    }))
    .unwrap();
    let pp = PostParams::default();
    Api::<Service>::namespaced(client.clone(), namespace)
        .create(&pp, &service)
        .await
        .unwrap();
    Api::<Endpoints>::namespaced(client.clone(), namespace)
        .create(&pp, &endpoints)
        .await
        .unwrap();
    Api::<EndpointSlice>::namespaced(client.clone(), namespace)
        .create(&pp, &slice)
        .await
        .unwrap();
}

/// `--webhook-cert-mode self-managed` end to end, as in a cluster without cert-manager: the
/// configurations and the CRD's conversion are deployed calling the Service (as kustomize
/// renders them), the manager makes its certificates and injects their CA, and the API server
/// calls it through the Service: defaulting, validation and conversion.
#[tokio::test]
async fn the_api_server_calls_a_self_managed_manager_through_its_service() {
    skip_unless_available!();
    let Some(ip) = host_address() else {
        eprintln!(
            "SKIPPED the_api_server_calls_a_self_managed_manager_through_its_service: this machine has no non-loopback address for the webhook Service's Endpoints"
        );
        return;
    };
    // A control plane of its own: the other tests' configurations call the same kind.
    let env = tokio::task::spawn_blocking(|| Envtest::builder().controller_manager(false).start())
        .await
        .unwrap()
        .unwrap();
    let client = env.client().unwrap();
    let namespace = env.create_namespace("webhook-system").await.unwrap();

    // As deployed: the CRD converts through the Service, the configurations call it; no
    // caBundle anywhere yet.
    let mut crd: CustomResourceDefinition = serde_saphyr::from_str(CRD).unwrap();
    crd.spec.conversion = Some(
        serde_json::from_value(json!({
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {"service": {"name": "webhook-service", "namespace": namespace, "path": "/convert"}},
            },
        }))
        .unwrap(),
    );
    env.install_crd(&crd).await.unwrap();
    let deployed = CONFIGURATIONS.replace("namespace: system", &format!("namespace: {namespace}"));
    for doc in deployed.split("---\n").filter(|d| !d.trim().is_empty()) {
        let value: serde_json::Value = serde_saphyr::from_str(doc).unwrap();
        match value["kind"].as_str() {
            Some("MutatingWebhookConfiguration") => {
                let config: MutatingWebhookConfiguration = serde_json::from_value(value).unwrap();
                Api::<MutatingWebhookConfiguration>::all(client.clone())
                    .create(&PostParams::default(), &config)
                    .await
                    .unwrap();
            }
            _ => {
                let config: ValidatingWebhookConfiguration = serde_json::from_value(value).unwrap();
                Api::<ValidatingWebhookConfiguration>::all(client.clone())
                    .create(&PostParams::default(), &config)
                    .await
                    .unwrap();
            }
        }
    }
    let port = free_port();
    webhook_service(&client, &namespace, ip, port).await;

    let bind = format!("--webhook-bind-address=0.0.0.0:{port}");
    let service_namespace = format!("--webhook-service-namespace={namespace}");
    let args = Cli::parse_from([
        "manager",
        "--metrics-bind-address=0",
        "--health-probe-bind-address=0",
        "--webhook-cert-mode=self-managed",
        "--webhook-service-name=webhook-service",
        service_namespace.as_str(),
        bind.as_str(),
    ])
    .manager;
    let manager = Manager::with_client(OPERATOR, args, client.clone())
        .await
        .unwrap()
        .webhooks(webhooks());
    let shutdown = manager.shutdown();
    let task = tokio::spawn(manager.run(Vec::new()));

    let started = std::time::Instant::now();
    let (v1_api, v2_api) = (
        cronjobs("v1", &client, &namespace),
        cronjobs("v2", &client, &namespace),
    );
    // Defaulting through the Service (retried until the caBundle is injected and seen).
    let created = create_defaulted(&v1_api, &cronjob("nightly", "0 3 * * *")).await;
    assert_eq!(created.data["spec"]["suspend"], false);
    eprintln!(
        "self-managed: certificates made, CA injected and the first call through the Service after {:.1?}",
        started.elapsed()
    );
    // Validation.
    let err = v1_api
        .create(&PostParams::default(), &cronjob("bad", "0 3"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("must have 5 fields"), "{err}");
    // Conversion: stored as v2, read back as v1 unchanged.
    let as_v2 = v2_api.get("nightly").await.unwrap();
    assert_eq!(as_v2.data["spec"]["minute"], "0");
    let as_v1 = v1_api.get("nightly").await.unwrap();
    assert_eq!(as_v1.data["spec"], created.data["spec"]);
    // The caBundle the API server trusted is the Secret's CA.
    let secret = Api::<Secret>::namespaced(client.clone(), &namespace)
        .get(&format!("{OPERATOR}-webhook-server-cert"))
        .await
        .unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let injected = crds.get("cronjobs.batch.example.com").await.unwrap();
    let bundle = injected
        .spec
        .conversion
        .unwrap()
        .webhook
        .unwrap()
        .client_config
        .unwrap();
    assert_eq!(
        String::from_utf8(bundle.ca_bundle.unwrap().0).unwrap(),
        secret_text(&secret, "ca.crt")
    );

    shutdown.trigger();
    task.await.unwrap().unwrap();
}
