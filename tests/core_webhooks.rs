//! Kinds this project does not own, against the real kube-apiserver (`KUBEBUILDER_ASSETS`;
//! without it each test prints one `SKIPPED` line): the webhook configurations `create webhook`
//! generates for built-in kinds (core/v1 and other groups, namespaced and cluster-scoped) and for
//! an external kind are accepted; and one generated project with webhooks on ConfigMap and on
//! cert-manager's Certificate (`create api --from-crd`), and controllers of four external kinds
//! (cert-manager's Certificate and Issuer, Gateway API's HTTPRoute, prometheus-operator's
//! ServiceMonitor), built once: it is fmt-, clippy- and test-clean; its manager outside the
//! cluster (`--webhook-local-url`) defaults a ConfigMap and a Certificate the API server creates
//! and refuses bad ones; and, run with exactly the RBAC of its config/rbac on a cluster with the
//! upstream CRDs installed (none is in its config/crd), it reconciles an object of each kind
//! (its reconcile metrics, scraped with a metrics-reader token) and is refused nothing.

mod common;
mod control_plane;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;

/// The configurations in config/webhook/manifests.yaml.
fn configurations(dir: &Path) -> Vec<serde_json::Value> {
    serde_saphyr::from_multiple(&read(dir, "config/webhook/manifests.yaml")).unwrap()
}

#[test]
fn configurations_for_built_in_and_external_kinds_are_accepted_by_the_api_server() {
    if runs_elsewhere("core_webhooks") {
        return;
    }
    let tmp = init_project("core-hooks");
    let dir = project_dir(&tmp, "core-hooks");
    let kinds = [
        "--group core --version v1 --kind ConfigMap",
        "--group core --version v1 --kind Pod",
        "--group core --version v1 --kind Namespace",
        "--group apps --version v1 --kind Deployment",
        "--group networking --version v1 --kind Ingress",
        "--group rbac --version v1 --kind ClusterRole",
        "--group batch --version v1 --kind CronJob",
    ];
    for kind in kinds {
        ok(
            &dir,
            &words(&format!(
                "create webhook {kind} --defaulting --programmatic-validation"
            )),
        );
    }
    ok(
        &dir,
        &words(
            "create api --group cert-manager --version v1 --kind Certificate --external-api-domain io --external-api-path crate::external::Certificate --controller=false",
        ),
    );
    ok(
        &dir,
        &words(
            "create webhook --group cert-manager --version v1 --kind Certificate --defaulting --programmatic-validation",
        ),
    );
    let docs = configurations(&dir);
    assert_eq!(docs.len(), 2);
    let hooks: Vec<&serde_json::Value> = docs
        .iter()
        .flat_map(|d| d["webhooks"].as_array().unwrap())
        .collect();
    assert_eq!(hooks.len(), 2 * (kinds.len() + 1));
    // Each webhook targets its kind's real group, version and resource.
    let targets: Vec<String> = hooks
        .iter()
        .map(|h| {
            let rule = &h["rules"][0];
            format!(
                "{} {}/{} {}",
                h["clientConfig"]["service"]["path"].as_str().unwrap(),
                rule["apiGroups"][0].as_str().unwrap(),
                rule["apiVersions"][0].as_str().unwrap(),
                rule["resources"][0].as_str().unwrap()
            )
        })
        .collect();
    for expected in [
        "/mutate--v1-configmap /v1 configmaps",
        "/validate--v1-pod /v1 pods",
        "/mutate--v1-namespace /v1 namespaces",
        "/validate-apps-v1-deployment apps/v1 deployments",
        "/mutate-networking-k8s-io-v1-ingress networking.k8s.io/v1 ingresses",
        "/validate-rbac-authorization-k8s-io-v1-clusterrole rbac.authorization.k8s.io/v1 clusterroles",
        "/mutate-batch-v1-cronjob batch/v1 cronjobs",
        "/validate-cert-manager-io-v1-certificate cert-manager.io/v1 certificates",
    ] {
        assert!(
            targets.iter().any(|t| t == expected),
            "{expected} not in {targets:#?}"
        );
    }

    let Some(assets) = control_plane::assets("core_webhooks configurations") else {
        return;
    };
    let cp = control_plane::start(&assets);
    for doc in &docs {
        // As kustomize deploys them: the Service in a namespace that exists.
        let mut doc = doc.clone();
        for hook in doc["webhooks"].as_array_mut().unwrap() {
            hook["clientConfig"]["service"]["namespace"] = json!("default");
        }
        control_plane::dry_run(&cp, &doc)
            .unwrap_or_else(|e| panic!("the API server refuses {}: {e}", doc["kind"]));
    }
}

/// The manager, killed (with its process group) when dropped.
struct Manager(Child, std::path::PathBuf);

impl Drop for Manager {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-s", "INT", &self.0.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Replace `from` (present once) with `to` in the project's file `rel`.
fn edit(dir: &Path, rel: &str, from: &str, to: &str) {
    let text = read(dir, rel);
    assert_eq!(text.matches(from).count(), 1, "{rel}: {from:?}");
    std::fs::write(dir.join(rel), text.replacen(from, to, 1)).unwrap();
}

/// The project's external kinds: (CRD file in fixtures/external_crds, group, kind, controller).
const EXTERNAL: &[(&str, &str, &str, &str)] = &[
    (
        "cert-manager.io_certificates.yaml",
        "cert-manager.io",
        "Certificate",
        "certificate",
    ),
    (
        "cert-manager.io_issuers.yaml",
        "cert-manager.io",
        "Issuer",
        "issuer",
    ),
    (
        "gateway.networking.k8s.io_httproutes.yaml",
        "gateway.networking.k8s.io",
        "HTTPRoute",
        "http_route",
    ),
    (
        "monitoring.coreos.com_servicemonitors.yaml",
        "monitoring.coreos.com",
        "ServiceMonitor",
        "service_monitor",
    ),
];

/// Where the project keeps its copies of the upstream CRDs (PROJECT records these paths).
const CRD_COPIES: &str = "config/external";

fn fixture(file: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/external_crds")
        .join(file)
}

/// The project: webhooks on ConfigMap, the four external kinds with controllers, webhooks on
/// Certificate, and the user's code in both webhook files.
fn scaffold(dir: &Path) {
    ok(
        dir,
        &words(
            "create webhook --group core --version v1 --kind ConfigMap --defaulting --programmatic-validation",
        ),
    );
    std::fs::create_dir_all(dir.join(CRD_COPIES)).unwrap();
    for (file, group, kind, controller) in EXTERNAL {
        std::fs::copy(fixture(file), dir.join(CRD_COPIES).join(file)).unwrap();
        let crd = format!("{CRD_COPIES}/{file}");
        let args = ["create", "api", "--group", group, "--version", "v1"];
        let args = [
            &args[..],
            &["--kind", kind, "--from-crd", &crd, "--controller"],
        ]
        .concat();
        ok(dir, &args);
        assert!(
            dir.join(format!("src/controllers/{controller}.rs"))
                .exists(),
            "{kind}: no controller {controller}"
        );
    }
    ok(
        dir,
        &words(
            "create webhook --group cert-manager.io --version v1 --kind Certificate --defaulting --programmatic-validation",
        ),
    );
    // Conversion stays with the owner of the CRD: refused with that reason, nothing written.
    let before = snapshot(dir);
    let refused = run(
        dir,
        &words(
            "create webhook --group cert-manager.io --version v1 --kind Certificate --conversion",
        ),
    );
    assert_ne!(refused.code, 0, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("is an external kind")
            && refused
                .stderr
                .contains("its conversion belongs to the owner of its CRD"),
        "{}",
        refused.stderr
    );
    assert!(snapshot(dir) == before, "a refused create webhook wrote");

    // No CRD of the external kinds in config/crd (nor anywhere in config/default).
    for folder in ["config/crd", "config/default"] {
        let docs = kustomize(dir, folder);
        let crds = of_kind(&docs, "CustomResourceDefinition");
        assert!(crds.is_empty(), "{folder} renders CRDs: {crds:?}");
    }
    let bases = dir.join("config/crd/bases");
    assert!(
        !bases.exists() || std::fs::read_dir(&bases).unwrap().next().is_none(),
        "config/crd/bases has files"
    );
}

/// The user's code: only objects labelled `webhook-test: on` are touched (the cluster's other
/// ConfigMaps and Certificates go through unchanged); a ConfigMap gets `data.defaulted` and a
/// `forbidden` key is refused; a Certificate gets `revisionHistoryLimit: 3`, and DNS names
/// under `.invalid` are refused.
fn implement_webhooks(dir: &Path) {
    let file = "src/webhooks/v1/config_map.rs";
    edit(
        dir,
        file,
        "async fn apply_defaults(&self, _obj: &mut Kind, _req: &Request) -> Result<(), Rejection> {\n",
        "async fn apply_defaults(&self, obj: &mut Kind, _req: &Request) -> Result<(), Rejection> {\n\
         let ours = obj.metadata.labels.as_ref().and_then(|l| l.get(\"webhook-test\"));\n\
         if ours.map(String::as_str) == Some(\"on\") {\n\
         let data = obj.data.get_or_insert_with(Default::default);\n\
         data.entry(\"defaulted\".into()).or_insert_with(|| \"true\".into());\n\
         }\n",
    );
    edit(
        dir,
        file,
        "async fn validate_create(&self, _obj: &Kind, _req: &Request) -> Result<Warnings, Rejection> {\n",
        "async fn validate_create(&self, obj: &Kind, _req: &Request) -> Result<Warnings, Rejection> {\n\
         if obj.data.as_ref().is_some_and(|d| d.contains_key(\"forbidden\")) {\n\
         let detail = \"the key `forbidden` is not allowed\";\n\
         return Err(Rejection::fields(vec![FieldError::invalid(\"data.forbidden\", \"\", detail)]));\n\
         }\n",
    );
    let file = "src/webhooks/v1/certificate.rs";
    edit(
        dir,
        file,
        "async fn apply_defaults(&self, _obj: &mut Kind, _req: &Request) -> Result<(), Rejection> {\n",
        "async fn apply_defaults(&self, obj: &mut Kind, _req: &Request) -> Result<(), Rejection> {\n\
         let ours = obj.metadata.labels.as_ref().and_then(|l| l.get(\"webhook-test\"));\n\
         if ours.map(String::as_str) == Some(\"on\") {\n\
         obj.spec.revision_history_limit = obj.spec.revision_history_limit.or(Some(3));\n\
         }\n",
    );
    edit(
        dir,
        file,
        "async fn validate_create(&self, _obj: &Kind, _req: &Request) -> Result<Warnings, Rejection> {\n",
        "async fn validate_create(&self, obj: &Kind, _req: &Request) -> Result<Warnings, Rejection> {\n\
         if obj.spec.dns_names.iter().flatten().any(|n| n.ends_with(\".invalid\")) {\n\
         let detail = \"names under .invalid are refused\";\n\
         return Err(Rejection::fields(vec![FieldError::invalid(\"spec.dnsNames\", \"\", detail)]));\n\
         }\n",
    );
}

/// `kubectl create -o json -f -` of `object`, retried for a while (the first calls may race the
/// webhook server's start).
fn create_eventually(
    cp: &control_plane::ControlPlane,
    object: &serde_json::Value,
    logs: &dyn Fn() -> String,
) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match control_plane::kubectl_with(cp, &["create", "-o", "json", "-f", "-"], object) {
            Ok(out) => break serde_json::from_str(&out).unwrap(),
            Err(e) => {
                assert!(Instant::now() < deadline, "create: {e}\n{}", logs());
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    }
}

#[test]
fn a_project_with_external_kinds_serves_their_webhooks_and_reconciles_them_under_its_rbac() {
    if runs_elsewhere("core_webhooks") {
        return;
    }
    let Some(assets) = control_plane::assets("core_webhooks local manager") else {
        return;
    };
    let tmp = init_project("cm-hooks");
    let dir = project_dir(&tmp, "cm-hooks");
    timed(
        "scaffold: 4 external kinds, webhooks on ConfigMap and Certificate",
        || scaffold(&dir),
    );

    // The project as the user gets it, then with their code: formatted, lint- and test-clean.
    cargo(&dir, &["fmt", "--check"]);
    implement_webhooks(&dir);
    cargo(&dir, &["fmt"]);
    cargo(&dir, &["clippy", "--all-targets", "--", "-D", "warnings"]);
    cargo(&dir, &["test"]);
    // `cargo test` built the manager (as its own e2e suite runs it) in the project's target/
    // (the compiled crates are in the shared build directory).
    let manager_bin = dir.join("target/debug/manager");

    let cp = timed("control plane", || control_plane::start(&assets));
    // The upstream CRDs, as their owners install them (the project has none of its own).
    let copies = dir.join(CRD_COPIES);
    control_plane::kubectl(&cp, &["create", "-f", copies.to_str().unwrap()])
        .unwrap_or_else(|e| panic!("installing the upstream CRDs: {e}"));
    let established = ["wait", "--for=condition=Established", "--timeout=60s"];
    control_plane::kubectl(&cp, &[&established[..], &["crd", "--all"]].concat())
        .expect("the CRDs are established");
    timed("webhooks of a local manager", || {
        webhooks_of_a_local_manager(&cp, &dir, &manager_bin)
    });
    // The next manager starts with no object of the external kinds in the cluster.
    control_plane::kubectl(&cp, &["delete", "certificates", "--all", "-n", "default"]).unwrap();
    timed("external kinds reconciled under config/rbac", || {
        reconciled_under_its_rbac(&cp, &dir, &manager_bin)
    });
}

/// The manager run as its developer does (`--webhook-local-url`, the admin's kubeconfig):
/// it points the cluster's webhooks at itself, which default and refuse ConfigMaps and
/// Certificates, and takes them back on Ctrl-C.
fn webhooks_of_a_local_manager(cp: &control_plane::ControlPlane, dir: &Path, manager_bin: &Path) {
    let kubeconfig = cp.kubeconfig.to_str().unwrap().to_string();
    let port = free_port();
    let log = dir.join("manager.log");
    let child = Command::new(manager_bin)
        .args(["--kubeconfig", &kubeconfig])
        .args(["--webhook-local-url", &format!("https://127.0.0.1:{port}")])
        .args([
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            "0",
        ])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::fs::File::create(dir.join("manager.err")).unwrap())
        .spawn()
        .unwrap();
    let manager = Manager(child, log);
    let logs = || {
        format!(
            "{}{}",
            std::fs::read_to_string(&manager.1).unwrap_or_default(),
            std::fs::read_to_string(dir.join("manager.err")).unwrap_or_default()
        )
    };

    // The manager points the cluster's webhooks at itself.
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let names = control_plane::kubectl(
            cp,
            &[
                "get",
                "mutatingwebhookconfigurations,validatingwebhookconfigurations",
                "-o",
                "name",
            ],
        )
        .unwrap_or_default();
        if names.matches("cm-hooks-local-").count() == 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no local webhooks: {names}\n{}",
            logs()
        );
        std::thread::sleep(Duration::from_millis(500));
    }

    let config_map = |name: &str, data: serde_json::Value| {
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "labels": {"webhook-test": "on"}},
            "data": data,
        })
    };
    // Defaulted: the API server stores what the defaulter added.
    let created = create_eventually(cp, &config_map("defaulted", json!({"a": "1"})), &logs);
    assert_eq!(
        created["data"],
        json!({"a": "1", "defaulted": "true"}),
        "{}",
        logs()
    );
    // Another ConfigMap (no label) is untouched.
    let mut plain = config_map("plain", json!({"a": "1"}));
    plain["metadata"]["labels"] = json!({});
    let out =
        control_plane::kubectl_with(cp, &["create", "-o", "json", "-f", "-"], &plain).unwrap();
    let out: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(out["data"], json!({"a": "1"}));

    // Refused, with the field and the reason, and not stored.
    let err = control_plane::kubectl_with(
        cp,
        &["create", "-f", "-"],
        &config_map("bad", json!({"forbidden": "x"})),
    )
    .unwrap_err();
    assert!(
        err.contains("The ConfigMap \"bad\" is invalid: data.forbidden: Invalid value")
            && err.contains("the key `forbidden` is not allowed"),
        "{err}"
    );
    assert!(control_plane::kubectl(cp, &["get", "configmap", "bad", "-n", "default"]).is_err());

    // The same for the external kind: a Certificate is defaulted, a bad one refused.
    let certificate = |name: &str, dns_name: &str, labels: serde_json::Value| {
        json!({
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": {"secretName": format!("{name}-tls"), "dnsNames": [dns_name],
                "issuerRef": {"name": "ca"}},
        })
    };
    let ours = json!({"webhook-test": "on"});
    let created = create_eventually(
        cp,
        &certificate("defaulted", "web.example.com", ours.clone()),
        &logs,
    );
    assert_eq!(created["spec"]["revisionHistoryLimit"], 3, "{created}");
    let plain = certificate("plain", "web.example.com", json!({}));
    let out =
        control_plane::kubectl_with(cp, &["create", "-o", "json", "-f", "-"], &plain).unwrap();
    let out: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(out["spec"].get("revisionHistoryLimit"), None, "{out}");
    let err = control_plane::kubectl_with(
        cp,
        &["create", "-f", "-"],
        &certificate("bad", "web.invalid", ours),
    )
    .unwrap_err();
    assert!(
        err.contains("The Certificate \"bad\" is invalid: spec.dnsNames: Invalid value")
            && err.contains("names under .invalid are refused"),
        "{err}"
    );
    assert!(control_plane::kubectl(cp, &["get", "certificate", "bad", "-n", "default"]).is_err());

    // Ctrl-C: the manager takes its configurations back.
    drop(manager);
    let names = control_plane::kubectl(
        cp,
        &[
            "get",
            "mutatingwebhookconfigurations,validatingwebhookconfigurations",
            "-o",
            "name",
        ],
    )
    .unwrap_or_default();
    assert!(!names.contains("-local-"), "{names}");
}

/// The manager as the e2e harness runs it: a ServiceAccount bound by what `kubectl kustomize
/// config/rbac` renders, its webhooks served (pointed at it by the admin), leader election on.
/// An object of each external kind (fixtures/external_crds/samples.json) is created: each
/// controller reconciles its kind (its `controller_runtime_reconcile_total`, scraped with a
/// metrics-reader token, goes from 0 up), and no request of the manager is refused.
fn reconciled_under_its_rbac(cp: &control_plane::ControlPlane, dir: &Path, manager_bin: &Path) {
    use operator_rs_runtime::testing::e2e::{MANAGER_NAMESPACE, ManagerProcess};
    use operator_rs_runtime::testing::envtest::ServiceAccountAccess;
    use operator_rs_runtime::testing::local_webhooks::{LocalWebhooks, free_address};
    use operator_rs_runtime::testing::metrics::metrics_reader;

    let samples: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(fixture("samples.json")).unwrap()).unwrap();
    let scratch = dir.join("e2e");
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let kubeconfig = kube::config::Kubeconfig::read_from(&cp.kubeconfig).unwrap();
            let admin = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
                .await
                .unwrap();
            let client = kube::Client::try_from(admin.clone()).unwrap();
            let rbac = dir.join("config/rbac");
            let account = ServiceAccountAccess::from_kustomize(
                &admin,
                MANAGER_NAMESPACE,
                "cm-hooks",
                &rbac,
                &scratch.join("manager.kubeconfig"),
            )
            .await
            .unwrap_or_else(|e| panic!("binding the manager by config/rbac: {e}"));
            let reader = metrics_reader(
                &admin,
                MANAGER_NAMESPACE,
                &scratch.join("reader.kubeconfig"),
            )
            .await
            .unwrap_or_else(|e| panic!("a metrics reader: {e}"));
            let mut webhooks = LocalWebhooks::prepare("cm-hooks", dir, &scratch.join("certs"))
                .unwrap()
                .expect("the project has webhooks");
            let address = free_address().unwrap();
            let log = scratch.join("manager-under-rbac.log");
            let mut manager = ManagerProcess::builder(manager_bin)
                .name("cm-hooks")
                .kubeconfig(account.kubeconfig())
                .metrics_token(reader.token())
                .arg("--leader-elect")
                .args(webhooks.manager_args_at(address))
                .log(&log)
                .start(client.clone())
                .await;
            webhooks.point_at(&client, address).await.unwrap();

            // No object of the external kinds yet: nothing reconciled.
            for (.., controller) in EXTERNAL {
                assert_eq!(manager.reconciles(controller).await, 0, "{controller}");
            }
            for sample in &samples {
                let object = &sample["object"];
                control_plane::kubectl_with(cp, &["create", "-f", "-"], object)
                    .unwrap_or_else(|e| panic!("creating {}: {e}", object["kind"]));
            }
            let deadline = Instant::now() + Duration::from_secs(120);
            let mut waiting: Vec<&str> = EXTERNAL.iter().map(|e| e.3).collect();
            while !waiting.is_empty() {
                manager.check().await;
                let mut still = Vec::new();
                for controller in waiting {
                    if manager.reconciles(controller).await == 0 {
                        still.push(controller);
                    }
                }
                waiting = still;
                assert!(
                    Instant::now() < deadline || waiting.is_empty(),
                    "not reconciled: {waiting:?}\n{}",
                    manager.tail()
                );
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            manager.check().await;
            let text = std::fs::read_to_string(&log).unwrap();
            let lower = text.to_lowercase();
            assert!(
                !lower.contains("forbidden") && !lower.contains("code: 403"),
                "the manager was refused a request:\n{text}"
            );
            webhooks.uninstall(&client).await.unwrap();
            assert!(manager.stop(), "the manager exits 0 on SIGTERM");
        });
}
