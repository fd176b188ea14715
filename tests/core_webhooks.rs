//! Webhooks of kinds this project does not own, against the real kube-apiserver
//! (`KUBEBUILDER_ASSETS`; without it each test prints one `SKIPPED` line): the configurations
//! `create webhook` generates for built-in kinds (core/v1 and other groups, namespaced and
//! cluster-scoped) and for an external kind are accepted; and a generated project's defaulting
//! and validating webhooks on ConfigMap, served by its manager outside the cluster
//! (`--webhook-local-url`), default a ConfigMap the API server creates and refuse a bad one.

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

#[test]
fn a_local_manager_defaults_and_validates_config_maps() {
    if runs_elsewhere("core_webhooks") {
        return;
    }
    let Some(assets) = control_plane::assets("core_webhooks local manager") else {
        return;
    };
    let tmp = init_project("cm-hooks");
    let dir = project_dir(&tmp, "cm-hooks");
    ok(
        &dir,
        &words(
            "create webhook --group core --version v1 --kind ConfigMap --defaulting --programmatic-validation",
        ),
    );
    // The user's code: only ConfigMaps labelled `webhook-test: on` are touched (the cluster's
    // other ConfigMaps go through unchanged); they get `data.defaulted`, and a `forbidden` key
    // is refused.
    let file = "src/webhooks/v1/config_map.rs";
    edit(
        &dir,
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
        &dir,
        file,
        "async fn validate_create(&self, _obj: &Kind, _req: &Request) -> Result<Warnings, Rejection> {\n",
        "async fn validate_create(&self, obj: &Kind, _req: &Request) -> Result<Warnings, Rejection> {\n\
         if obj.data.as_ref().is_some_and(|d| d.contains_key(\"forbidden\")) {\n\
         let detail = \"the key `forbidden` is not allowed\";\n\
         return Err(Rejection::fields(vec![FieldError::invalid(\"data.forbidden\", \"\", detail)]));\n\
         }\n",
    );
    // The shared build directory holds the compiled crates; the binary is in the project's own
    // target/.
    cargo(&dir, &["build", "--bin", "manager"]);
    let manager_bin = dir.join("target/debug/manager");

    let cp = control_plane::start(&assets);
    let kubeconfig = cp.kubeconfig.to_str().unwrap().to_string();
    let port = free_port();
    let log = dir.join("manager.log");
    let child = Command::new(&manager_bin)
        .args(["--kubeconfig", &kubeconfig])
        .args(["--webhook-local-url", &format!("https://127.0.0.1:{port}")])
        .args([
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            "0",
        ])
        .current_dir(&dir)
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
            &cp,
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
    // Defaulted: the API server stores what the defaulter added. The first call may race the
    // webhook server's start: retried for a while.
    let deadline = Instant::now() + Duration::from_secs(60);
    let created = loop {
        match control_plane::kubectl_with(
            &cp,
            &["create", "-o", "json", "-f", "-"],
            &config_map("defaulted", json!({"a": "1"})),
        ) {
            Ok(out) => break out,
            Err(e) => {
                assert!(Instant::now() < deadline, "create: {e}\n{}", logs());
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    };
    let created: serde_json::Value = serde_json::from_str(&created).unwrap();
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
        control_plane::kubectl_with(&cp, &["create", "-o", "json", "-f", "-"], &plain).unwrap();
    let out: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(out["data"], json!({"a": "1"}));

    // Refused, with the field and the reason, and not stored.
    let err = control_plane::kubectl_with(
        &cp,
        &["create", "-f", "-"],
        &config_map("bad", json!({"forbidden": "x"})),
    )
    .unwrap_err();
    assert!(
        err.contains("The ConfigMap \"bad\" is invalid: data.forbidden: Invalid value")
            && err.contains("the key `forbidden` is not allowed"),
        "{err}"
    );
    assert!(control_plane::kubectl(&cp, &["get", "configmap", "bad", "-n", "default"]).is_err());

    // Ctrl-C: the manager takes its configurations back.
    drop(manager);
    let names = control_plane::kubectl(
        &cp,
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
