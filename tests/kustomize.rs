//! The scaffolded `config/` rendered for real with `kubectl kustomize`: CRDs, the hardened manager
//! Deployment, probes, and RBAC in which every rule is named (no `*`).

mod common;

use common::*;
use serde_json::Value;

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[test]
fn a_project_with_no_api_renders() {
    let tmp = init_project("empty-op");
    let dir = project_dir(&tmp, "empty-op");
    let docs = kustomize(&dir, "config/default");
    assert!(of_kind(&docs, "CustomResourceDefinition").is_empty());
    assert_eq!(of_kind(&docs, "Deployment").len(), 1);
}

#[test]
fn config_default_renders_crds_a_hardened_manager_and_named_rbac() {
    let tmp = reference_project("memcached-operator");
    let dir = project_dir(&tmp, "memcached-operator");
    let docs = kustomize(&dir, "config/default");

    // The CRDs: one per kind, every version in it, exactly one storage version.
    let crds = of_kind(&docs, "CustomResourceDefinition");
    let mut names: Vec<&str> = crds
        .iter()
        .map(|c| c["metadata"]["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "admirals.webapp.example.com",
            "cronjobs.batch.example.com",
            "guestbooks.webapp.example.com",
            "memcacheds.cache.example.com"
        ]
    );
    let guestbook = crds
        .iter()
        .find(|c| c["spec"]["names"]["kind"] == "Guestbook")
        .unwrap();
    let versions: Vec<(&str, bool)> = guestbook["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["name"].as_str().unwrap(), v["storage"].as_bool().unwrap()))
        .collect();
    assert_eq!(versions, [("v1", true), ("v2", false)]);
    let admiral = crds
        .iter()
        .find(|c| c["spec"]["names"]["kind"] == "Admiral")
        .unwrap();
    assert_eq!(admiral["spec"]["scope"], "Cluster");
    let memcached = crds
        .iter()
        .find(|c| c["spec"]["names"]["kind"] == "Memcached")
        .unwrap();
    assert_eq!(memcached["spec"]["scope"], "Namespaced");
    assert!(memcached["spec"]["versions"][0]["subresources"]["status"].is_object());

    // The manager: namespaced and prefixed, hardened, probed, told who it is.
    let deployments = of_kind(&docs, "Deployment");
    assert_eq!(deployments.len(), 1);
    let d = deployments[0];
    assert_eq!(d["metadata"]["namespace"], "memcached-operator-system");
    assert!(
        d["metadata"]["name"]
            .as_str()
            .unwrap()
            .starts_with("memcached-operator-")
    );
    let pod = &d["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    let c = &pod["containers"][0];
    let sc = &c["securityContext"];
    assert_eq!(sc["readOnlyRootFilesystem"], true);
    assert_eq!(sc["allowPrivilegeEscalation"], false);
    assert_eq!(strings(&sc["capabilities"]["drop"]), ["ALL"]);
    for res in ["requests", "limits"] {
        assert!(
            c["resources"][res]["cpu"].is_string() && c["resources"][res]["memory"].is_string(),
            "{res}"
        );
    }
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");
    let env: Vec<&str> = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(
        env.contains(&"POD_NAME") && env.contains(&"POD_NAMESPACE"),
        "{env:?}"
    );
    assert!(
        env.contains(&"MEMCACHED_IMAGE"),
        "the deploy-image kind's image is configurable: {env:?}"
    );
    assert!(
        strings(&c["args"])
            .iter()
            .any(|a| a.starts_with("--leader-elect")),
        "{}",
        c["args"]
    );

    // RBAC: every rule names its groups, resources and verbs; the manager may do what its
    // controllers need and no more.
    let roles: Vec<&Value> = of_kind(&docs, "ClusterRole")
        .into_iter()
        .chain(of_kind(&docs, "Role"))
        .collect();
    assert!(!roles.is_empty());
    for role in &roles {
        for rule in role["rules"].as_array().into_iter().flatten() {
            for field in [
                "apiGroups",
                "resources",
                "verbs",
                "resourceNames",
                "nonResourceURLs",
            ] {
                assert!(
                    !strings(&rule[field]).contains(&"*"),
                    "wildcard in {}: {rule}",
                    role["metadata"]["name"]
                );
            }
        }
    }
    let manager = roles
        .iter()
        .find(|r| r["metadata"]["name"] == "memcached-operator-manager-role")
        .expect("the manager ClusterRole");
    let allows = |group: &str, resource: &str, verb: &str| {
        manager["rules"].as_array().unwrap().iter().any(|r| {
            strings(&r["apiGroups"]).contains(&group)
                && strings(&r["resources"]).contains(&resource)
                && strings(&r["verbs"]).contains(&verb)
        })
    };
    assert!(allows("cache.example.com", "memcacheds", "watch"));
    assert!(allows("cache.example.com", "memcacheds/status", "patch"));
    assert!(allows(
        "cache.example.com",
        "memcacheds/finalizers",
        "update"
    ));
    assert!(allows("webapp.example.com", "guestbooks", "list"));
    assert!(allows("webapp.example.com", "admirals", "list"));
    assert!(allows("apps", "deployments", "create"));
    assert!(allows("events.k8s.io", "events", "create"));
    assert!(
        !allows("", "secrets", "get"),
        "the manager must not read secrets"
    );
    let leader = roles
        .iter()
        .find(|r| r["metadata"]["name"] == "memcached-operator-leader-election-role")
        .expect("leader election Role");
    assert!(
        leader["rules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| strings(&r["resources"]).contains(&"leases"))
    );
    let editors: Vec<&str> = roles
        .iter()
        .filter_map(|r| r["metadata"]["name"].as_str())
        .filter(|n| n.ends_with("editor-role"))
        .collect();
    assert_eq!(editors.len(), 4, "an editor role per kind: {editors:?}");
}

#[test]
fn samples_render_one_object_per_kind_version() {
    let tmp = reference_project("samples-op");
    let dir = project_dir(&tmp, "samples-op");
    let docs = kustomize(&dir, "config/samples");
    let mut kinds: Vec<String> = docs
        .iter()
        .map(|d| {
            format!(
                "{} {}",
                d["apiVersion"].as_str().unwrap(),
                d["kind"].as_str().unwrap()
            )
        })
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "batch.example.com/v1 CronJob",
            "batch.example.com/v2 CronJob",
            "cache.example.com/v1alpha1 Memcached",
            "webapp.example.com/v1 Admiral",
            "webapp.example.com/v1 Guestbook",
            "webapp.example.com/v2 Guestbook"
        ]
    );
    let memcached = docs.iter().find(|d| d["kind"] == "Memcached").unwrap();
    assert!(memcached["spec"]["size"].is_number(), "{memcached}");
}

/// `config/webhook-self-managed`, swapped in for cert-manager as its header says: no
/// Certificate, the manager run with `--webhook-cert-mode=self-managed` and its webhook port, and
/// RBAC that is enough for the runtime's certificate manager on a real API server, with the
/// Secret rights confined to the manager's namespace.
#[test]
fn self_managed_webhook_certificates_render_and_their_rbac_suffices() {
    let tmp = reference_project("memcached-operator");
    let dir = project_dir(&tmp, "memcached-operator");
    let path = dir.join("config/default/kustomization.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("- ../certmanager\n")
            && text.contains("- path: manager_webhook_patch.yaml\n")
    );
    let text = text
        .replace("- ../certmanager\n", "- ../webhook-self-managed\n")
        .replace(
            "- path: manager_webhook_patch.yaml\n",
            "- path: manager_webhook_self_managed_patch.yaml\n  target: {kind: Deployment, name: controller-manager}\n",
        );
    std::fs::write(&path, text).unwrap();
    let docs = kustomize(&dir, "config/default");
    assert!(of_kind(&docs, "Certificate").is_empty() && of_kind(&docs, "Issuer").is_empty());
    let deployment = of_kind(&docs, "Deployment")[0];
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert!(strings(&container["args"]).contains(&"--webhook-cert-mode=self-managed"));
    assert!(
        strings(&container["args"]).contains(&"--leader-elect"),
        "{container}"
    );
    let ports: Vec<i64> = (container["ports"].as_array().unwrap().iter())
        .filter_map(|p| p["containerPort"].as_i64())
        .collect();
    assert!(ports.contains(&9443) && ports.contains(&8443), "{ports:?}");
    let volumes = &deployment["spec"]["template"]["spec"]["volumes"];
    assert!(volumes.as_array().is_some_and(Vec::is_empty), "{volumes}");
    let role = of_kind(&docs, "Role")
        .into_iter()
        .find(|r| r["metadata"]["name"] == "memcached-operator-webhook-cert-role")
        .expect("the Secret role");
    assert_eq!(role["metadata"]["namespace"], "memcached-operator-system");
    let binding = of_kind(&docs, "ClusterRoleBinding")
        .into_iter()
        .find(|r| r["metadata"]["name"] == "memcached-operator-webhook-cabundle-rolebinding")
        .expect("the caBundle binding");
    assert_eq!(
        binding["subjects"][0]["name"],
        "memcached-operator-controller-manager"
    );

    // The rights, on a real API server: the certificate manager of the runtime, as that
    // ServiceAccount, makes its Secret and injects the CA into a configuration calling it.
    use operator_rs_runtime::testing::envtest::Envtest;
    if !Envtest::available() {
        eprintln!("SKIPPED the RBAC half of this test: KUBEBUILDER_ASSETS is not set");
        return;
    }
    let env = Envtest::shared().expect("the control plane starts");
    let rbac_dir = dir.join("config/webhook-self-managed");
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
            use kube::api::{Api, PostParams};
            use operator_rs_runtime::webhook::install::ServiceRef;
            use operator_rs_runtime::webhook::self_managed::SelfManaged;
            use operator_rs_runtime::webhook::tls::CertStore;
            let namespace = env.create_namespace("self-managed").await.unwrap();
            let access = env
                .service_account_from_kustomize(&namespace, "controller-manager", &rbac_dir)
                .await
                .unwrap();
            let config: ValidatingWebhookConfiguration = serde_json::from_value(serde_json::json!({
                "metadata": {"name": format!("{namespace}-validating")},
                "webhooks": [{
                    "name": "vcronjob-v1.kb.io",
                    "admissionReviewVersions": ["v1"],
                    "sideEffects": "None",
                    "failurePolicy": "Ignore",
                    "clientConfig": {"service": {"name": "webhook-service", "namespace": namespace, "path": "/validate"}},
                    "rules": [{"apiGroups": ["batch.example.com"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["cronjobs"]}],
                }],
            }))
            .unwrap();
            let admin = env.client().unwrap();
            let configs: Api<ValidatingWebhookConfiguration> = Api::all(admin);
            configs.create(&PostParams::default(), &config).await.unwrap();
            let manager = SelfManaged {
                client: access.client().unwrap(),
                secret: "memcached-operator-webhook-server-cert".into(),
                service: ServiceRef {
                    name: "webhook-service".into(),
                    namespace: namespace.clone(),
                },
                operator: "memcached-operator".into(),
            };
            let bundle = manager
                .reconcile(&CertStore::new())
                .await
                .expect("the generated RBAC lets the manager make its certificates");
            let injected = configs.get(&format!("{namespace}-validating")).await.unwrap();
            let injected = injected.webhooks.unwrap()[0].client_config.ca_bundle.clone();
            assert_eq!(String::from_utf8(injected.unwrap().0).unwrap(), bundle);
        });
}

/// Controllers of core kinds (`--group core`, kubebuilder's spelling of the group `""`): no
/// warning that the manager cannot watch them, and `config/` grants them in `apiGroups: [""]`
/// (as controller-gen writes `groups=core`), which a real API server honours.
#[test]
fn core_kind_controllers_are_granted_the_core_group() {
    const CORE: &[(&str, &str)] = &[
        ("ConfigMap", "configmaps"),
        ("Secret", "secrets"),
        ("Pod", "pods"),
        ("Service", "services"),
        ("PersistentVolumeClaim", "persistentvolumeclaims"),
        ("Namespace", "namespaces"),
    ];
    let tmp = init_project("core-op");
    let dir = project_dir(&tmp, "core-op");
    for (kind, _) in CORE {
        let run = ok(
            &dir,
            &words(&format!(
                "create api --group core --version v1 --kind {kind} --resource=false --controller"
            )),
        );
        assert!(
            !run.stderr.contains("warning"),
            "create api {kind}:\n{}",
            run.stderr
        );
    }
    // `generate rbac` reads the markers again, with the same verdict.
    let run = ok(&dir, &["generate", "rbac", "--check"]);
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);

    let docs = kustomize(&dir, "config/default");
    let manager = of_kind(&docs, "ClusterRole")
        .into_iter()
        .find(|r| r["metadata"]["name"] == "core-op-manager-role")
        .expect("the manager ClusterRole");
    let rules = manager["rules"].as_array().unwrap();
    for rule in rules {
        assert!(
            !strings(&rule["apiGroups"]).contains(&"core"),
            "`core` is not an API group Kubernetes knows: {rule}"
        );
    }
    for (_, plural) in CORE {
        assert!(
            rules.iter().any(|r| strings(&r["apiGroups"]) == [""]
                && strings(&r["resources"]).contains(plural)
                && ["get", "list", "watch"]
                    .iter()
                    .all(|v| strings(&r["verbs"]).contains(v))),
            "no rule of apiGroups [\"\"] lets the manager get, list and watch {plural}: {manager}"
        );
    }

    // On a real API server: the manager's ServiceAccount, bound by config/rbac, may list and
    // watch each kind cluster-wide.
    use operator_rs_runtime::testing::envtest::Envtest;
    if !Envtest::available() {
        eprintln!("SKIPPED the API server half of this test: KUBEBUILDER_ASSETS is not set");
        return;
    }
    let env = Envtest::shared().expect("the control plane starts");
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            use k8s_openapi::api::authorization::v1::{
                ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
            };
            use kube::api::{Api, PostParams};
            let namespace = env.create_namespace("core-op").await.unwrap();
            let access = env
                .service_account_from_kustomize(
                    &namespace,
                    "controller-manager",
                    dir.join("config/rbac"),
                )
                .await
                .unwrap();
            let reviews: Api<SelfSubjectAccessReview> = Api::all(access.client().unwrap());
            for (_, plural) in CORE {
                for verb in ["list", "watch"] {
                    let review = SelfSubjectAccessReview {
                        spec: SelfSubjectAccessReviewSpec {
                            resource_attributes: Some(ResourceAttributes {
                                group: Some(String::new()),
                                resource: Some(plural.to_string()),
                                verb: Some(verb.to_string()),
                                ..Default::default()
                            }),
                            ..Default::default()
                        },
                        ..Default::default()
                    };
                    let answer = reviews
                        .create(&PostParams::default(), &review)
                        .await
                        .unwrap();
                    assert!(
                        answer.status.is_some_and(|s| s.allowed),
                        "the manager may not {verb} {plural} cluster-wide"
                    );
                }
            }
        });
}

/// Uncomments `lines` (each `#`-prefixed in the file, as written) in `dir/rel`.
fn uncomment(dir: &std::path::Path, rel: &str, lines: &[&str]) {
    let path = dir.join(rel);
    let mut text = std::fs::read_to_string(&path).unwrap();
    for line in lines {
        let commented = format!("#{line}\n");
        assert!(text.contains(&commented), "{rel} has no {commented:?}");
        text = text.replace(&commented, &format!("{line}\n"));
    }
    std::fs::write(&path, text).unwrap();
}

/// The [METRICS-WITH-CERTS] patch and the [PROMETHEUS-WITH-CERTS] one.
fn enable_metrics_certificates(dir: &std::path::Path) {
    uncomment(
        dir,
        "config/default/kustomization.yaml",
        &[
            "- path: cert_metrics_manager_patch.yaml",
            "  target:",
            "    kind: Deployment",
        ],
    );
    uncomment(
        dir,
        "config/prometheus/kustomization.yaml",
        &[
            "patches:",
            "- path: monitor_tls_patch.yaml",
            "  target:",
            "    kind: ServiceMonitor",
        ],
    );
}

/// The metrics endpoint as config/default deploys it: HTTPS on 8443 behind the metrics Service,
/// the rights its reviews need bound to the manager, and with every overlay on, a cert-manager
/// certificate for the very name the ServiceMonitor verifies, mounted where the manager reads it.
#[test]
fn metrics_are_served_over_https_with_consistent_names_across_overlays() {
    let tmp = init_project("metrics-op");
    let dir = project_dir(&tmp, "metrics-op");
    let docs = kustomize(&dir, "config/default");
    let deployment = of_kind(&docs, "Deployment")[0];
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    let args = strings(&container["args"]);
    assert!(args.contains(&"--metrics-bind-address=:8443"), "{args:?}");
    assert!(
        !args.iter().any(|a| a.starts_with("--metrics-secure")),
        "{args:?}"
    );
    let port = (container["ports"].as_array().unwrap().iter())
        .find(|p| p["name"] == "metrics")
        .expect("the metrics container port");
    assert_eq!(port["containerPort"], 8443);
    let service = of_kind(&docs, "Service")[0];
    assert_eq!(
        service["spec"]["ports"][0],
        serde_json::json!({"name": "https", "port": 8443, "protocol": "TCP", "targetPort": "metrics"})
    );
    let auth_role = of_kind(&docs, "ClusterRole")
        .into_iter()
        .find(|r| r["metadata"]["name"] == "metrics-op-metrics-auth-role")
        .expect("the metrics auth role");
    let granted: Vec<(&str, &str)> = (auth_role["rules"].as_array().unwrap().iter())
        .flat_map(|rule| {
            let resources = strings(&rule["resources"]);
            let verbs = strings(&rule["verbs"]);
            resources
                .into_iter()
                .flat_map(move |r| verbs.clone().into_iter().map(move |v| (r, v)))
        })
        .collect();
    assert_eq!(
        granted,
        [
            ("tokenreviews", "create"),
            ("subjectaccessreviews", "create")
        ]
    );
    let binding = of_kind(&docs, "ClusterRoleBinding")
        .into_iter()
        .find(|b| b["roleRef"]["name"] == "metrics-op-metrics-auth-role")
        .expect("the metrics auth role's binding");
    assert_eq!(
        binding["subjects"][0],
        serde_json::json!({"kind": "ServiceAccount", "name": "metrics-op-controller-manager", "namespace": "metrics-op-system"})
    );
    assert!(
        of_kind(&docs, "Certificate").is_empty(),
        "cert-manager is optional"
    );

    // Every overlay on (a project without webhooks: ../certmanager too).
    uncomment(
        &dir,
        "config/default/kustomization.yaml",
        &["- ../prometheus", "- ../network-policy", "- ../certmanager"],
    );
    enable_metrics_certificates(&dir);
    let docs = kustomize(&dir, "config/default");
    check_metrics_overlays(&docs, "metrics-op");
    assert_eq!(
        of_kind(&docs, "NetworkPolicy").len(),
        1,
        "no webhooks, no webhook policy"
    );
    apiserver_accepts(&docs, "metrics-op");
    manager_under_generated_rbac_serves_metrics_readers(&dir);
}

/// On a real API server: a manager with exactly the RBAC of the generated config/rbac reviews
/// tokens, serving a ServiceAccount allowed GET /metrics and refusing one that is not.
fn manager_under_generated_rbac_serves_metrics_readers(dir: &std::path::Path) {
    use clap::Parser;
    use operator_rs_runtime::manager::{Manager, ManagerArgs};
    use operator_rs_runtime::testing::envtest::Envtest;
    use operator_rs_runtime::testing::metrics::{metrics_reader, scrape};
    if !Envtest::available() {
        return;
    }
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        manager: ManagerArgs,
    }
    let env = Envtest::shared().expect("the control plane starts");
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let namespace = env.create_namespace("metrics-rbac").await.unwrap();
            let manager_account = env
                .service_account_from_kustomize(
                    &namespace,
                    "controller-manager",
                    dir.join("config/rbac"),
                )
                .await
                .unwrap();
            let kubeconfig = env.dir().join(format!("{namespace}-reader.kubeconfig"));
            let reader = metrics_reader(env.config(), &namespace, &kubeconfig)
                .await
                .unwrap();
            let stranger = env
                .service_account(&namespace, "stranger", "")
                .await
                .unwrap();
            let argv = [
                "manager",
                "--metrics-bind-address=127.0.0.1:0",
                "--health-probe-bind-address=0",
                "--webhook-bind-address=0",
            ];
            let args = Cli::parse_from(argv).manager;
            let client = manager_account.client().unwrap();
            let manager = Manager::with_client("metrics-op", args, client)
                .await
                .unwrap();
            let addr = manager.metrics_addr().unwrap();
            let shutdown = manager.shutdown();
            let run = tokio::spawn(manager.run(vec![]));
            let served = scrape(addr, "/metrics", Some(reader.token()))
                .await
                .unwrap();
            assert_eq!(served.status, 200, "{}", served.body);
            assert!(served.body.ends_with("# EOF\n"), "{}", served.body);
            let refused = scrape(addr, "/metrics", Some(stranger.token()))
                .await
                .unwrap();
            assert_eq!(refused.status, 403, "{}", refused.body);
            shutdown.trigger();
            run.await.unwrap().unwrap();
        });
}

/// The same in a project with webhooks: `create webhook` added its certificate and network
/// policy beside the metrics' ones, and turning everything on renders each object once.
#[test]
fn metrics_overlays_and_webhook_overlays_render_together() {
    let tmp = reference_project("memcached-operator");
    let dir = project_dir(&tmp, "memcached-operator");
    let certmanager = read(&dir, "config/certmanager/kustomization.yaml");
    for file in [
        "issuer.yaml",
        "certificate-metrics.yaml",
        "certificate-webhook.yaml",
    ] {
        assert_eq!(
            certmanager.matches(&format!("- {file}\n")).count(),
            1,
            "{certmanager}"
        );
    }
    let policies = read(&dir, "config/network-policy/kustomization.yaml");
    for file in ["allow-metrics-traffic.yaml", "allow-webhook-traffic.yaml"] {
        assert_eq!(
            policies.matches(&format!("- {file}\n")).count(),
            1,
            "{policies}"
        );
    }
    uncomment(
        &dir,
        "config/default/kustomization.yaml",
        &["- ../prometheus", "- ../network-policy"],
    );
    enable_metrics_certificates(&dir);
    let docs = kustomize(&dir, "config/default");
    check_metrics_overlays(&docs, "memcached-operator");
    let names: Vec<&str> = of_kind(&docs, "Certificate")
        .iter()
        .map(|c| c["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    let webhook_policy = of_kind(&docs, "NetworkPolicy")
        .into_iter()
        .find(|p| p["metadata"]["name"] == "memcached-operator-allow-webhook-traffic")
        .expect("the webhook traffic policy");
    let deployment = of_kind(&docs, "Deployment")[0];
    let ports = &deployment["spec"]["template"]["spec"]["containers"][0]["ports"];
    let webhook_port = (ports.as_array().unwrap().iter())
        .find(|p| p["name"] == "webhook-server")
        .unwrap();
    assert_eq!(
        webhook_policy["spec"]["ingress"][0]["ports"][0]["port"],
        webhook_port["containerPort"]
    );
    let volumes = &deployment["spec"]["template"]["spec"]["volumes"];
    let volumes: Vec<&str> = (volumes.as_array().unwrap().iter())
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        volumes.len(),
        2,
        "webhook and metrics certificates: {volumes:?}"
    );
}

/// With the metrics overlays on: the certificate names the metrics Service, the ServiceMonitor
/// scrapes its `https` port with a token and verifies that name with the certificate's CA, the
/// manager reads the certificate's Secret from --metrics-cert-dir, the policy opens its port.
fn check_metrics_overlays(docs: &[Value], project: &str) {
    let service = of_kind(docs, "Service")
        .into_iter()
        .find(|s| s["metadata"]["name"] == format!("{project}-controller-manager-metrics-service"))
        .expect("the metrics Service");
    let (name, namespace) = (
        &service["metadata"]["name"],
        &service["metadata"]["namespace"],
    );
    let dns_name = format!(
        "{}.{}.svc",
        name.as_str().unwrap(),
        namespace.as_str().unwrap()
    );
    let certificate = of_kind(docs, "Certificate")
        .into_iter()
        .find(|c| c["metadata"]["name"] == format!("{project}-metrics-certs"))
        .expect("the metrics Certificate");
    assert_eq!(certificate["spec"]["dnsNames"][0], dns_name.as_str());
    assert_eq!(
        certificate["spec"]["dnsNames"][1],
        format!("{dns_name}.cluster.local").as_str()
    );
    let issuer = of_kind(docs, "Issuer")[0];
    assert_eq!(
        certificate["spec"]["issuerRef"]["name"],
        issuer["metadata"]["name"]
    );
    let secret = &certificate["spec"]["secretName"];

    let monitor = of_kind(docs, "ServiceMonitor")[0];
    let endpoint = &monitor["spec"]["endpoints"][0];
    assert_eq!(endpoint["port"], service["spec"]["ports"][0]["name"]);
    assert_eq!(endpoint["scheme"], "https");
    assert_eq!(
        endpoint["bearerTokenFile"],
        "/var/run/secrets/kubernetes.io/serviceaccount/token"
    );
    let tls = &endpoint["tlsConfig"];
    assert_eq!(tls["insecureSkipVerify"], false);
    assert_eq!(tls["serverName"], dns_name.as_str());
    assert_eq!(&tls["ca"]["secret"]["name"], secret);
    assert_eq!(
        monitor["metadata"]["namespace"], *namespace,
        "the CA Secret is beside it"
    );

    let deployment = of_kind(docs, "Deployment")[0];
    let pod = &deployment["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let dir = strings(&container["args"])
        .into_iter()
        .find_map(|a| a.strip_prefix("--metrics-cert-dir="))
        .expect("--metrics-cert-dir");
    let mount = (container["volumeMounts"].as_array().unwrap().iter())
        .find(|m| m["mountPath"] == dir)
        .expect("a volume mounted at --metrics-cert-dir");
    let volume = (pod["volumes"].as_array().unwrap().iter())
        .find(|v| v["name"] == mount["name"])
        .unwrap();
    assert_eq!(&volume["secret"]["secretName"], secret);
    let metrics_port = (container["ports"].as_array().unwrap().iter())
        .find(|p| p["name"] == "metrics")
        .unwrap();
    let policy = of_kind(docs, "NetworkPolicy")
        .into_iter()
        .find(|p| p["metadata"]["name"] == format!("{project}-allow-metrics-traffic"))
        .expect("the metrics traffic policy");
    assert_eq!(
        policy["spec"]["ingress"][0]["ports"][0]["port"],
        metrics_port["containerPort"]
    );
}

/// A real API server accepts every rendered object of a built-in kind (a server-side dry run;
/// the Namespace is created for real first). cert-manager's and the Prometheus Operator's kinds
/// are not installed there.
fn apiserver_accepts(docs: &[Value], project: &str) {
    use operator_rs_runtime::testing::envtest::Envtest;
    if !Envtest::available() {
        eprintln!("SKIPPED the API server half of this test: KUBEBUILDER_ASSETS is not set");
        return;
    }
    let env = Envtest::shared().expect("the control plane starts");
    let kubectl = |args: &[&str], input: &Value| {
        let mut child = std::process::Command::new("kubectl")
            .arg(format!("--kubeconfig={}", env.kubeconfig().display()))
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        let text = serde_json::to_string(input).unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "the API server refused {} {}: {}",
            input["kind"],
            input["metadata"]["name"],
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let apply = ["apply", "--server-side", "-f", "-"];
    kubectl(&apply, of_kind(docs, "Namespace")[0]);
    let foreign = ["Certificate", "Issuer", "ServiceMonitor", "Namespace"];
    let mut checked = 0;
    for doc in docs
        .iter()
        .filter(|d| !foreign.iter().any(|k| d["kind"] == *k))
    {
        kubectl(&["create", "--dry-run=server", "-f", "-"], doc);
        checked += 1;
    }
    assert!(checked > 8, "{checked} objects of {project} checked");
}
