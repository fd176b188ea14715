//! `operator-rs generate chart` held to Helm itself, with no helm binary: the Helm 4 SDK of the
//! PyPI package helm-python-sdk (pinned in .ci/run) through tests/chart/helm_driver.py. A project
//! with two kinds and webhooks gets a chart that lints (strict), renders in every combination of
//! its toggles, refuses a wrong type or an unknown key by its schema, grants exactly the RBAC
//! rules `config/default` grants, and keeps the user's edits when regenerated after `create
//! api`; on the real control plane it installs (server-side apply), upgrades, rolls back and
//! uninstalls with the CRDs kept (`crd.keep`) in a pairwise covering set of the toggle
//! combinations (all 256 with `OPERATOR_RS_CHART_SWEEP=1`), grants the manager what the
//! authorizer says it should with and without `rbac.namespaced`, installs the CRD-only chart
//! before the main one, and upgrades in place from the chart of before `create api`. Without
//! the package the tests print SKIPPED and pass.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;
use operator_rs_runtime::testing::envtest::Envtest;
use serde_json::{Value, json};

const NAME: &str = "chart-op";

/// The driver's answer to `request`; `None` (with a SKIPPED line) when the SDK is missing.
fn helm(request: Value) -> Option<Value> {
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chart/helm_driver.py");
    let mut child = Command::new("python3")
        .arg(&driver)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(request.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    if out.status.code() == Some(3) {
        eprintln!(
            "SKIPPED: the Helm SDK is not installed: {}",
            String::from_utf8_lossy(&out.stdout).trim()
        );
        return None;
    }
    assert!(
        out.status.success(),
        "helm_driver.py failed on {request}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("the driver prints JSON"))
}

/// Whether the SDK is there (a SKIPPED line when not).
fn sdk() -> bool {
    helm(json!({"op": "validate", "chart": "/nonexistent"})).is_some()
}

/// The shared control plane, for a test that installs the chart; `None` (the test returns) when
/// another CI job runs these tests, or Helm's SDK or the control plane is absent (each says so).
fn control_plane() -> Option<&'static Envtest> {
    if runs_elsewhere("chart") || !sdk() || !Envtest::available() {
        return None;
    }
    Some(Envtest::shared().expect("the control plane starts"))
}

/// A project with two kinds (one with an image, for an environment variable) and webhooks on one.
fn project(name: &str) -> (tempfile::TempDir, PathBuf) {
    project_in(name, "cache")
}

/// [`project`] with its kinds in the API group `<group>.example.com` (a release owns its CRDs:
/// tests installing on the shared control plane each use a group of their own).
fn project_in(name: &str, group: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = init_project(name);
    let dir = project_dir(&tmp, name);
    ok(
        &dir,
        &words(&format!(
            "create api --group {group} --version v1alpha1 --kind Memcached --image memcached:1.6 --image-container-port 11211"
        )),
    );
    ok(
        &dir,
        &words(&format!(
            "create api --group {group} --version v1 --kind Redis"
        )),
    );
    ok(
        &dir,
        &words(&format!(
            "create webhook --group {group} --version v1alpha1 --kind Memcached --defaulting --programmatic-validation"
        )),
    );
    ok(&dir, &words("generate chart"));
    (tmp, dir)
}

fn chart(dir: &Path) -> String {
    dir.join("dist/chart").to_str().unwrap().to_string()
}

/// Every document the chart renders, parsed.
fn documents(manifests: &Value) -> Vec<Value> {
    let mut docs = Vec::new();
    for (path, text) in manifests.as_object().unwrap() {
        if path.ends_with("NOTES.txt") {
            continue;
        }
        let parsed: Vec<Value> = serde_saphyr::from_multiple(text.as_str().unwrap())
            .unwrap_or_else(|e| panic!("{path} does not render to YAML: {e}\n{text}"));
        docs.extend(parsed.into_iter().filter(|d| d.is_object()));
    }
    docs
}

/// The toggles, each combination of them as values.
const TOGGLES: &[&str] = &[
    "crd.enabled",
    "rbacHelpers.enabled",
    "metrics.enabled",
    "metrics.secure",
    "webhook.enabled",
    "certManager.enabled",
    "prometheus.enabled",
    "networkPolicy.enabled",
];

fn toggled(bits: usize) -> Value {
    let mut values = json!({});
    for (i, t) in TOGGLES.iter().enumerate() {
        let (a, b) = t.split_once('.').unwrap();
        values
            .as_object_mut()
            .unwrap()
            .entry(a)
            .or_insert(json!({}))[b] = json!(bits & (1 << i) != 0);
    }
    values
}

fn is_on(values: &Value, toggle: &str) -> bool {
    let (a, b) = toggle.split_once('.').unwrap();
    values[a][b] == true
}

fn manager(docs: &[Value]) -> &Value {
    let d = docs
        .iter()
        .find(|d| d["kind"] == "Deployment")
        .expect("a Deployment");
    &d["spec"]["template"]["spec"]["containers"][0]
}

#[test]
fn the_chart_lints_renders_every_toggle_combination_and_its_schema_refuses_typos() {
    if runs_elsewhere("chart") {
        return;
    }
    if !sdk() {
        return;
    }
    let (_tmp, dir) = project("chart-render");
    let lint = helm(json!({"op": "lint", "chart": chart(&dir)})).unwrap();
    assert_eq!(lint["errors"], json!([]), "{lint}");
    for m in lint["messages"].as_array().unwrap() {
        assert!(m["severity"].as_i64().unwrap() <= 1, "lint: {m}");
    }

    let values_list: Vec<Value> = (0..1 << TOGGLES.len()).map(toggled).collect();
    let rendered = helm(json!({"op": "render_many", "chart": chart(&dir), "values_list": values_list, "namespace": "ops"})).unwrap();
    for (values, result) in values_list
        .iter()
        .zip(rendered["results"].as_array().unwrap())
    {
        let docs = documents(
            result
                .get("manifests")
                .unwrap_or_else(|| panic!("{values}: {result}")),
        );
        let count = |kind: &str| docs.iter().filter(|d| d["kind"] == kind).count();
        assert_eq!(
            count("CustomResourceDefinition"),
            if is_on(values, "crd.enabled") { 2 } else { 0 },
            "{values}"
        );
        let helpers = docs
            .iter()
            .filter(|d| {
                d["metadata"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .ends_with("-editor-role")
            })
            .count();
        assert_eq!(
            helpers,
            if is_on(values, "rbacHelpers.enabled") {
                2
            } else {
                0
            },
            "{values}"
        );
        let webhooks = is_on(values, "webhook.enabled");
        let cert_manager = webhooks && is_on(values, "certManager.enabled");
        assert_eq!(
            count("ValidatingWebhookConfiguration"),
            webhooks as usize,
            "{values}"
        );
        assert_eq!(count("Certificate"), cert_manager as usize, "{values}");
        let metrics = is_on(values, "metrics.enabled");
        assert_eq!(
            count("ServiceMonitor"),
            (metrics && is_on(values, "prometheus.enabled")) as usize,
            "{values}"
        );
        assert_eq!(
            count("NetworkPolicy"),
            if is_on(values, "networkPolicy.enabled") {
                metrics as usize + webhooks as usize
            } else {
                0
            },
            "{values}"
        );
        // Every namespaced object in the release's namespace.
        for d in &docs {
            if d["metadata"]["namespace"].is_string() {
                assert_eq!(d["metadata"]["namespace"], "ops", "{d}");
            }
        }
        // The manager's flags follow the values; its env has no name twice.
        let c = manager(&docs);
        let args: Vec<&str> = c["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(
            args.contains(&"--metrics-bind-address=:8443"),
            metrics,
            "{values} {args:?}"
        );
        assert_eq!(
            args.contains(&"--metrics-bind-address=0"),
            !metrics,
            "{values} {args:?}"
        );
        assert_eq!(
            args.contains(&"--metrics-secure=false"),
            metrics && !is_on(values, "metrics.secure"),
            "{args:?}"
        );
        assert_eq!(
            args.contains(&"--webhook-cert-mode=self-managed"),
            webhooks && !cert_manager,
            "{args:?}"
        );
        assert_eq!(
            args.contains(&"--webhook-bind-address=0"),
            !webhooks,
            "{args:?}"
        );
        let mut names: Vec<&str> = c["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate env: {names:?}");
    }

    // Values: image repository and tag apart, env merged by name, flags from values.
    let custom = json!({"manager": {
        "image": {"repository": "registry.example.com/chart-op", "tag": "1.2.3"},
        "env": {"MEMCACHED_IMAGE": "memcached:1.7", "EXTRA": "x"},
        "watchNamespaces": ["a", "b"],
        "args": ["--concurrency=4"],
        "leaderElect": false,
    }});
    let r = helm(json!({"op": "render", "chart": chart(&dir), "values": custom})).unwrap();
    let docs = documents(&r["manifests"]);
    let c = manager(&docs);
    assert_eq!(c["image"], "registry.example.com/chart-op:1.2.3");
    let env: Vec<(&str, &str)> = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| Some((e["name"].as_str()?, e["value"].as_str()?)))
        .collect();
    assert_eq!(env, [("EXTRA", "x"), ("MEMCACHED_IMAGE", "memcached:1.7")]);
    let args: Vec<&str> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        args.contains(&"--watch-namespace=a,b") && args.contains(&"--concurrency=4"),
        "{args:?}"
    );
    assert!(!args.contains(&"--leader-elect"), "{args:?}");
    let digest = json!({"manager": {"image": {"repository": "r/op", "tag": "sha256:0123"}}});
    let r = helm(json!({"op": "render", "chart": chart(&dir), "values": digest})).unwrap();
    assert_eq!(
        manager(&documents(&r["manifests"]))["image"],
        "r/op@sha256:0123"
    );

    // The schema refuses a wrong type, an unknown key (at any depth), a reserved env name.
    for (bad, says) in [
        (json!({"manager": {"replicas": "two"}}), "replicas"),
        (json!({"manger": {"replicas": 2}}), "manger"),
        (json!({"metrics": {"enabled": "yes"}}), "enabled"),
        (json!({"webhook": {"enable": true}}), "enable"),
        (
            json!({"manager": {"image": {"pullPolicy": "Sometimes"}}}),
            "pullPolicy",
        ),
        (
            json!({"manager": {"env": {"POD_NAMESPACE": "x"}}}),
            "POD_NAMESPACE",
        ),
        (json!({"metrics": {"port": 70000}}), "port"),
    ] {
        let r = helm(json!({"op": "validate", "chart": chart(&dir), "values": bad})).unwrap();
        let error = r["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{bad} was accepted"));
        assert!(error.contains(says), "{bad}: {error}");
    }
}

/// (kind, name) -> the object's RBAC content (rules, roleRef, subjects), namespaces as given.
fn rbac(docs: &[Value]) -> std::collections::BTreeMap<(String, String, String), Value> {
    docs.iter()
        .filter(|d| {
            [
                "Role",
                "ClusterRole",
                "RoleBinding",
                "ClusterRoleBinding",
                "ServiceAccount",
            ]
            .contains(&d["kind"].as_str().unwrap_or(""))
        })
        .map(|d| {
            (
                (
                    d["kind"].as_str().unwrap().to_string(),
                    d["metadata"]["name"].as_str().unwrap().to_string(),
                    d["metadata"]["namespace"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                ),
                json!({"rules": d["rules"], "roleRef": d["roleRef"], "subjects": d["subjects"]}),
            )
        })
        .collect()
}

#[test]
fn the_chart_grants_exactly_the_rbac_of_config_default() {
    if runs_elsewhere("chart") {
        return;
    }
    if !sdk() {
        return;
    }
    let (_tmp, dir) = project(NAME);
    // A Role in another namespace, from a marker, stays there in both.
    let controller = dir.join("src/controllers/redis.rs");
    let text = std::fs::read_to_string(&controller).unwrap();
    let marker = "// +kubebuilder:rbac:groups=\"\",namespace=team-a,resources=configmaps,verbs=get;list;watch\n";
    std::fs::write(&controller, format!("{marker}{text}")).unwrap();
    ok(&dir, &words("generate manifests"));
    ok(&dir, &words("generate chart"));

    let kustomized = kustomize(&dir, "config/default");
    let r = helm(
        json!({"op": "render", "chart": chart(&dir), "namespace": format!("{NAME}-system"),
        "values": {"rbacHelpers": {"enabled": true}}}),
    )
    .unwrap();
    let charted = documents(&r["manifests"]);
    let (want, got) = (rbac(&kustomized), rbac(&charted));
    assert!(
        want.keys().any(|(_, _, ns)| ns == "team-a"),
        "{:?}",
        want.keys()
    );
    assert_eq!(got, want, "chart RBAC vs config/default RBAC");
}

#[test]
fn regenerating_after_create_api_keeps_the_users_chart_edits() {
    if runs_elsewhere("chart") {
        return;
    }
    let (_tmp, dir) = project("chart-regen");
    let chart_dir = dir.join("dist/chart");
    let edit = |rel: &str, f: &dyn Fn(String) -> String| {
        let p = chart_dir.join(rel);
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, f(text)).unwrap();
    };
    edit("Chart.yaml", &|t| {
        t.replace("version: \"0.1.0\"", "version: 1.2.3")
            .replace("appVersion: \"0.1.0\"", "appVersion: 9.9.9")
    });
    edit("values.yaml", &|t| {
        t.replace("replicas: 1", "replicas: 3") + "# mine\nmyExtra:\n  enabled: true\n"
    });
    edit("templates/NOTES.txt", &|_| "my notes\n".into());
    std::fs::write(
        chart_dir.join("templates/extra.yaml"),
        "{{- if .Values.myExtra.enabled }}\n# mine\n{{- end }}\n",
    )
    .unwrap();
    // A value of the user's own goes into the schema; the user's values.yaml stays as written.
    let check = run(&dir, &words("generate chart --check"));
    assert_eq!(check.code, 1, "{}{}", check.stdout, check.stderr);
    assert!(check.stdout.contains("myExtra"), "{}", check.stdout);
    ok(&dir, &words("generate chart"));
    let values_text = std::fs::read_to_string(chart_dir.join("values.yaml")).unwrap();
    assert!(values_text.contains("# mine"), "{values_text}");
    let check = run(&dir, &words("generate chart --check"));
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);

    ok(
        &dir,
        &words("create api --group cache --version v1 --kind Valkey"),
    );
    let check = run(&dir, &words("generate chart --check"));
    assert_eq!(
        check.code, 1,
        "a new kind makes the chart stale: {}",
        check.stderr
    );
    assert!(
        check.stdout.contains("cache.example.com_valkeys.yaml"),
        "{}",
        check.stdout
    );
    ok(&dir, &words("generate chart"));

    let read = |rel: &str| std::fs::read_to_string(chart_dir.join(rel)).unwrap();
    let chart_yaml: Value = serde_saphyr::from_str(&read("Chart.yaml")).unwrap();
    assert_eq!(
        (&chart_yaml["version"], &chart_yaml["appVersion"]),
        (&json!("1.2.3"), &json!("9.9.9")),
        "{chart_yaml}"
    );
    let values: Value = serde_saphyr::from_str(&read("values.yaml")).unwrap();
    assert_eq!(values["manager"]["replicas"], 3);
    assert_eq!(values["myExtra"], json!({"enabled": true}));
    assert_eq!(read("templates/NOTES.txt"), "my notes\n");
    assert!(read("templates/extra.yaml").contains("# mine"));
    assert!(
        chart_dir
            .join("templates/crd/cache.example.com_valkeys.yaml")
            .exists()
    );
    let schema: Value = serde_json::from_str(&read("values.schema.json")).unwrap();
    assert_eq!(schema["properties"]["myExtra"]["type"], "object");

    // An edited generated template is refused (listed, nothing written) unless --force.
    edit("templates/manager/manager.yaml", &|t| {
        t.replace(
            "terminationGracePeriodSeconds: 10",
            "terminationGracePeriodSeconds: 30",
        )
    });
    ok(
        &dir,
        &words("create api --group cache --version v1 --kind Dragonfly"),
    );
    let before = snapshot(&chart_dir);
    let refused = run(&dir, &words("generate chart"));
    assert_ne!(refused.code, 0);
    assert!(
        refused
            .stderr
            .contains("dist/chart/templates/manager/manager.yaml")
            && refused.stderr.contains("--force"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        snapshot(&chart_dir),
        before,
        "a refused generate chart wrote nothing"
    );
    ok(&dir, &words("generate chart --force"));
    assert!(read("templates/manager/manager.yaml").contains("terminationGracePeriodSeconds: 10"));
    assert!(
        chart_dir
            .join("templates/crd/cache.example.com_dragonflies.yaml")
            .exists()
    );

    // A values.yaml value of the wrong type is refused, naming the file.
    edit("values.yaml", &|t| {
        t.replace("replicas: 3", "replicas: three")
    });
    let refused = run(&dir, &words("generate chart"));
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("dist/chart/values.yaml"),
        "{}",
        refused.stderr
    );
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// A CRD of another project's kind (cert-manager's, prometheus-operator's), any content allowed.
fn foreign_crd(group: &str, kind: &str, plural: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(), "listKind": format!("{kind}List")},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
        }
    })
}

#[test]
fn the_chart_installs_upgrades_rolls_back_and_uninstalls_on_a_real_api_server() {
    let Some(env) = control_plane() else {
        return;
    };
    let kubeconfig = env.kubeconfig().to_path_buf();
    let (_tmp, dir) = project("chart-install");
    let crds = dir.join("foreign-crds.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": [
        foreign_crd("cert-manager.io", "Certificate", "certificates"),
        foreign_crd("cert-manager.io", "Issuer", "issuers"),
        foreign_crd("monitoring.coreos.com", "ServiceMonitor", "servicemonitors"),
    ]});
    std::fs::write(&crds, list.to_string()).unwrap();
    let (applied, out) = kubectl(
        &kubeconfig,
        &["apply", "--server-side", "-f", crds.to_str().unwrap()],
    );
    assert!(applied, "{out}");
    kubectl(
        &kubeconfig,
        &[
            "wait",
            "--for=condition=Established",
            "crd/servicemonitors.monitoring.coreos.com",
            "crd/certificates.cert-manager.io",
            "crd/issuers.cert-manager.io",
        ],
    );

    let ns = "chart-install-system";
    let release = |op: &str, values: Value| {
        let r = helm(
            json!({"op": op, "chart": chart(&dir), "name": "chart-install", "namespace": ns,
            "kubeconfig": kubeconfig, "values": values}),
        )
        .unwrap();
        assert!(r.get("error").is_none(), "{op} {values}: {r}");
        r
    };
    let get = |what: &str| kubectl(&kubeconfig, &["-n", ns, "get", what, "-o", "json"]);
    let deployment = || -> Value {
        serde_json::from_str(&get("deployment/chart-install-controller-manager").1).unwrap()
    };

    // Install (server-side apply), then upgrades through the toggle combinations.
    let installed = release(
        "install",
        json!({"prometheus": {"enabled": true}, "networkPolicy": {"enabled": true}, "rbacHelpers": {"enabled": true}}),
    );
    assert_eq!(installed["release"]["revision"], 1, "{installed}");
    for what in [
        "certificate/chart-install-serving-cert",
        "servicemonitor/chart-install-controller-manager-metrics-monitor",
        "networkpolicy/chart-install-allow-metrics-traffic",
    ] {
        assert!(get(what).0, "{what} installed");
    }
    assert!(kubectl(&kubeconfig, &["get", "crd/memcacheds.cache.example.com"]).0);
    assert!(
        kubectl(
            &kubeconfig,
            &["get", "clusterrole/chart-install-memcached-editor-role"]
        )
        .0
    );
    // Each upgrade's values over the chart's defaults (no reuse): what each turns off is gone,
    // what the one before turned off is back.
    let args = |d: &Value| d["spec"]["template"]["spec"]["containers"][0]["args"].to_string();
    let exists = |what: &str| get(what).0;
    let upgrade = |revision: i64, values: Value| {
        let upgraded = release("upgrade", values);
        assert_eq!(upgraded["release"]["revision"], revision, "{upgraded}");
    };
    upgrade(
        2,
        json!({"certManager": {"enabled": false}, "manager": {"replicas": 2}}),
    );
    let d = deployment();
    assert_eq!(d["spec"]["replicas"], 2);
    assert!(
        args(&d).contains("--webhook-cert-mode=self-managed"),
        "{}",
        args(&d)
    );
    assert!(
        !exists("certificate/chart-install-serving-cert"),
        "certManager off: no Certificate"
    );
    assert!(
        exists("role/chart-install-webhook-cert-role"),
        "self-managed: its Role"
    );

    upgrade(
        3,
        json!({"webhook": {"enabled": false}, "metrics": {"enabled": false}}),
    );
    let d = deployment();
    assert!(
        args(&d).contains("--webhook-bind-address=0")
            && args(&d).contains("--metrics-bind-address=0"),
        "{}",
        args(&d)
    );
    assert!(
        !kubectl(
            &kubeconfig,
            &[
                "get",
                "validatingwebhookconfiguration/chart-install-validating-webhook-configuration"
            ]
        )
        .0
    );
    assert!(!exists(
        "service/chart-install-controller-manager-metrics-service"
    ));
    assert!(!exists(
        "servicemonitor/chart-install-controller-manager-metrics-monitor"
    ));

    upgrade(
        4,
        json!({"metrics": {"secure": false}, "crd": {"enabled": true, "keep": false}}),
    );
    let d = deployment();
    assert!(args(&d).contains("--metrics-secure=false"), "{}", args(&d));
    assert!(
        exists("certificate/chart-install-serving-cert"),
        "certManager back on"
    );
    assert!(
        kubectl(
            &kubeconfig,
            &[
                "get",
                "validatingwebhookconfiguration/chart-install-validating-webhook-configuration"
            ]
        )
        .0
    );

    // Rollback to revision 2 (self-managed certificates, two replicas).
    let r = helm(json!({"op": "rollback", "name": "chart-install", "namespace": ns, "version": 2, "kubeconfig": kubeconfig})).unwrap();
    assert!(r.get("error").is_none(), "{r}");
    let d = deployment();
    assert_eq!(d["spec"]["replicas"], 2, "{d}");
    assert!(
        args(&d).contains("--webhook-cert-mode=self-managed"),
        "{}",
        args(&d)
    );

    // Uninstall: everything goes but the CRDs (crd.keep, as revision 2 has it).
    let r = helm(json!({"op": "uninstall", "name": "chart-install", "namespace": ns, "kubeconfig": kubeconfig})).unwrap();
    assert!(r.get("error").is_none(), "{r}");
    assert!(
        !get("deployment/chart-install-controller-manager").0,
        "the Deployment is gone"
    );
    assert!(
        !kubectl(
            &kubeconfig,
            &["get", "clusterrole/chart-install-manager-role"]
        )
        .0,
        "the ClusterRole is gone"
    );
    assert!(
        kubectl(&kubeconfig, &["get", "crd/memcacheds.cache.example.com"]).0,
        "the CRD is kept"
    );
    assert!(
        kubectl(&kubeconfig, &["get", "crd/redises.cache.example.com"]).0,
        "the CRD is kept"
    );
}

/// `make <target>` in `dir` with operator-rs (this build) on PATH, helm as the Helm SDK's
/// tests/chart/helm_cli.py, and the control plane's kubeconfig.
fn make(dir: &Path, target_and_vars: &[&str], kubeconfig: &Path) -> (bool, String) {
    let bin = dir.join("../path-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("operator-rs");
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_operator-rs"), &link).unwrap();
    }
    let cli = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chart/helm_cli.py");
    let out = common::as_user(&mut Command::new("make"))
        .args(target_and_vars)
        .arg(format!("HELM=python3 {}", cli.display()))
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("KUBECONFIG", kubeconfig)
        .current_dir(dir)
        .output()
        .expect("make runs");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn make_helm_deploy_installs_exactly_the_image_img_names() {
    let Some(env) = control_plane() else {
        return;
    };
    let kubeconfig = env.kubeconfig().to_path_buf();
    let (_tmp, dir) = project("chart-make");
    let ns = "chart-make-system";
    let image = || -> Option<String> {
        let (found, out) = kubectl(
            &kubeconfig,
            &[
                "-n",
                ns,
                "get",
                "deployment/chart-make-controller-manager",
                "-o",
                "json",
            ],
        );
        found.then(|| {
            let d: Value = serde_json::from_str(&out).unwrap();
            d["spec"]["template"]["spec"]["containers"][0]["image"]
                .as_str()
                .unwrap()
                .to_string()
        })
    };

    // No IMG (or an empty one): refused before anything is generated or installed.
    for vars in [vec!["helm-deploy"], vec!["helm-deploy", "IMG="]] {
        let (done, out) = make(&dir, &vars, &kubeconfig);
        assert!(!done && out.contains("IMG is not set"), "{vars:?}: {out}");
        assert_eq!(image(), None, "nothing installed");
    }
    let (linted, out) = make(&dir, &["helm-lint"], &kubeconfig);
    assert!(linted, "{out}");
    // The CRDs are another test's release's on the shared control plane (kept by crd.keep).
    let no_cert_manager = "HELM_ARGS=--set certManager.enabled=false --set crd.enabled=false";
    for img in [
        "registry.example.com/chart-make:1.2.3",
        "registry.example.com:5000/team/chart-make:0.1.0-rc.1",
        "registry.example.com/chart-make@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    ] {
        let (done, out) = make(
            &dir,
            &["helm-deploy", &format!("IMG={img}"), no_cert_manager],
            &kubeconfig,
        );
        assert!(done, "{img}: {out}");
        assert_eq!(image().as_deref(), Some(img), "{out}");
    }
    let (done, out) = make(&dir, &["helm-uninstall"], &kubeconfig);
    assert!(done, "{out}");
    assert_eq!(image(), None, "uninstalled");
}

#[test]
fn the_generated_readmes_helm_chart_block_runs_as_written() {
    let Some(env) = control_plane() else {
        return;
    };
    let tmp = init_project("chart-readme");
    let dir = project_dir(&tmp, "chart-readme");
    // A kind of its own: the other tests' CRDs belong to their releases on this control plane.
    ok(
        &dir,
        &words("create api --group ship --version v1 --kind Harbor"),
    );
    let mut shell = common::readme::UserShell::new(&dir, &[("KUBECONFIG", env.kubeconfig())]);
    let cli = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chart/helm_cli.py");
    shell.set("HELM", &format!("python3 {}", cli.display()));
    let generated = read(&dir, "README.md");
    // The first block (the CRD-only chart's is run by the_crds_chart_installs_before_the_chart_as_the_generated_readme_says).
    let lines = common::readme::sh_blocks(&generated, "## Helm chart")[0].clone();
    assert_eq!(lines.len(), 4, "{lines:?}");
    let image = "registry.example.com/chart-readme:0.3.0";
    for line in &lines {
        shell.run(&line.replace("<some-registry>/chart-readme:tag", image));
        if line.starts_with("make helm-deploy") {
            let (_, out) = kubectl(
                env.kubeconfig(),
                &[
                    "-n",
                    "chart-readme-system",
                    "get",
                    "deployment/chart-readme-controller-manager",
                    "-o",
                    "jsonpath={.spec.template.spec.containers[0].image}",
                ],
            );
            assert_eq!(out, image);
        }
    }
    assert!(dir.join("dist/chart/values.schema.json").exists());
    let (gone, _) = kubectl(
        env.kubeconfig(),
        &[
            "-n",
            "chart-readme-system",
            "get",
            "deployment/chart-readme-controller-manager",
        ],
    );
    assert!(!gone, "helm-uninstall removed the manager");
    assert!(
        kubectl(env.kubeconfig(), &["get", "crd/harbors.ship.example.com"]).0,
        "crd.keep kept the CRD"
    );
}

/// The webhook configurations, by kind and name, without labels.
fn webhook_configurations(docs: &[Value]) -> std::collections::BTreeMap<(String, String), Value> {
    docs.iter()
        .filter(|d| {
            d["kind"]
                .as_str()
                .unwrap_or("")
                .ends_with("WebhookConfiguration")
        })
        .map(|d| {
            let mut d = d.clone();
            if let Some(meta) = d["metadata"].as_object_mut() {
                meta.remove("labels");
            }
            // Their order in the list means nothing to the API server.
            if let Some(hooks) = d["webhooks"].as_array_mut() {
                hooks.sort_by_key(|h| h["name"].as_str().unwrap_or("").to_string());
            }
            (
                (
                    d["kind"].as_str().unwrap().to_string(),
                    d["metadata"]["name"].as_str().unwrap().to_string(),
                ),
                d,
            )
        })
        .collect()
}

#[test]
fn the_chart_has_exactly_the_webhook_configurations_of_config_default() {
    if runs_elsewhere("chart") {
        return;
    }
    if !sdk() {
        return;
    }
    // Webhooks on a kind of the project and on a built-in kind (whose configurations
    // config/webhook/kustomization.yaml patches with a namespaceSelector sparing the manager's
    // namespace).
    let (_tmp, dir) = project("chart-hooks");
    ok(
        &dir,
        &words(
            "create webhook --group core --version v1 --kind ConfigMap --defaulting --programmatic-validation",
        ),
    );
    ok(&dir, &words("generate chart"));
    let kustomized = kustomize(&dir, "config/default");
    let want = webhook_configurations(&kustomized);
    assert!(
        want.values().any(|w| w.to_string().contains("NotIn")),
        "{want:?}"
    );
    let r = helm(json!({"op": "render", "chart": chart(&dir), "namespace": "chart-hooks-system"}))
        .unwrap();
    assert_eq!(webhook_configurations(&documents(&r["manifests"])), want);
    // In another namespace, the selector spares that one.
    let r = helm(json!({"op": "render", "chart": chart(&dir), "namespace": "elsewhere"})).unwrap();
    let got = webhook_configurations(&documents(&r["manifests"]));
    assert!(
        got.values()
            .any(|w| w.to_string().contains("\"elsewhere\""))
            && !got
                .values()
                .any(|w| w.to_string().contains("chart-hooks-system\"")),
        "{got:?}"
    );
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn the_manager_installed_from_the_chart_reconciles_under_the_charts_service_account() {
    use operator_rs_runtime::testing::e2e::{ManagerProcess, reconciled};
    let Some(env) = control_plane() else {
        return;
    };
    let admin = env.kubeconfig().to_path_buf();
    let tmp = init_project("chart-run");
    let dir = project_dir(&tmp, "chart-run");
    ok(
        &dir,
        &words("create api --group fleet --version v1 --kind Beacon"),
    );
    ok(&dir, &words("generate chart"));
    ok(&dir, &words("generate dashboards"));
    cargo(&dir, &["build", "--bin", "manager"]);

    // The chart installed (its Deployment never runs here: no kubelet) ...
    let ns = "chart-run-system";
    let installed = helm(
        json!({"op": "install", "chart": chart(&dir), "name": "chart-run",
        "namespace": ns, "kubeconfig": admin}),
    )
    .unwrap();
    assert!(installed.get("error").is_none(), "{installed}");
    // ... and its manager run here as a process with the token of the chart's ServiceAccount.
    let (made, token) = kubectl(
        &admin,
        &["-n", ns, "create", "token", "chart-run-controller-manager"],
    );
    assert!(made, "{token}");
    let account = tmp.path().join("chart-sa.kubeconfig");
    std::fs::copy(&admin, &account).unwrap();
    for args in [
        vec![
            "config",
            "set-credentials",
            "chart-sa",
            &format!("--token={}", token.trim()),
        ],
        vec!["config", "set-context", "--current", "--user=chart-sa"],
    ] {
        let (done, out) = kubectl(
            &account,
            &args.iter().map(|s| s.as_ref()).collect::<Vec<&str>>(),
        );
        assert!(done, "{out}");
    }
    let (who, out) = kubectl(
        &account,
        &[
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
        ],
    );
    assert!(
        who && out == format!("system:serviceaccount:{ns}:chart-run-controller-manager"),
        "{out}"
    );

    block_on(async {
        let log = tmp.path().join("manager.log");
        let manager = ManagerProcess::builder(dir.join("target/debug/manager"))
            .name("chart-run")
            .kubeconfig(&account)
            .arg("--leader-elect")
            .arg("--metrics-secure=false")
            .env("POD_NAMESPACE", ns)
            .log(&log)
            .start(env.client().unwrap())
            .await;
        let sample = dir.join("config/samples/fleet_v1_beacon.yaml");
        let (created, out) = kubectl(
            &admin,
            &[
                "-n",
                "default",
                "apply",
                "--server-side",
                "-f",
                sample.to_str().unwrap(),
            ],
        );
        assert!(created, "{out}");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        loop {
            let (_, out) = kubectl(
                &admin,
                &["-n", "default", "get", "beacon/beacon-sample", "-o", "json"],
            );
            if serde_json::from_str::<Value>(&out).is_ok_and(|o| reconciled(&o)) {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the sample was not reconciled: {out}\n{}",
                manager.tail()
            );
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        }
        let text = std::fs::read_to_string(&log).unwrap().to_lowercase();
        assert!(
            !text.contains("forbidden"),
            "the manager was refused a request:\n{text}"
        );

        // Every metric a dashboard queries is in this manager's scrape.
        let scrape = operator_rs_runtime::testing::e2e::scrape_metrics(manager.metrics_address())
            .await
            .expect("the manager serves /metrics");
        let served: std::collections::BTreeSet<&str> = (scrape.lines())
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split(['{', ' ']).next())
            .collect();
        let queried = dashboard_metrics(&dir);
        assert!(queried.len() >= 6, "{queried:?}");
        for metric in &queried {
            assert!(
                served.contains(metric.as_str()),
                "{metric} is not served:\n{scrape}"
            );
        }
        let (deleted, out) = kubectl(
            &admin,
            &[
                "-n",
                "default",
                "delete",
                "beacon/beacon-sample",
                "--wait=true",
                "--timeout=60s",
            ],
        );
        assert!(deleted, "{out}");
        assert!(manager.stop(), "the manager exits 0 on SIGTERM");
    });

    // rbac.namespaced: the same manager, with the chart's --watch-namespace, under its Roles.
    let upgraded = helm(
        json!({"op": "upgrade", "chart": chart(&dir), "name": "chart-run",
        "namespace": ns, "kubeconfig": admin, "values": {"rbac": {"namespaced": true}}}),
    )
    .unwrap();
    assert!(upgraded.get("error").is_none(), "{upgraded}");
    let (_, args) = kubectl(
        &admin,
        &[
            "-n",
            ns,
            "get",
            "deployment/chart-run-controller-manager",
            "-o",
            "json",
        ],
    );
    let args: Value = serde_json::from_str(&args).unwrap();
    let watch = (args["spec"]["template"]["spec"]["containers"][0]["args"].as_array())
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|a| a.starts_with("--watch-namespace="))
        .expect("the chart's manager watches its namespace")
        .to_string();
    assert_eq!(watch, format!("--watch-namespace={ns}"));
    block_on(async {
        let log = tmp.path().join("manager-namespaced.log");
        let manager = ManagerProcess::builder(dir.join("target/debug/manager"))
            .name("chart-run-namespaced")
            .kubeconfig(&account)
            .arg("--leader-elect")
            .arg("--metrics-secure=false")
            .arg(&watch)
            .env("POD_NAMESPACE", ns)
            .log(&log)
            .start(env.client().unwrap())
            .await;
        let sample = dir.join("config/samples/fleet_v1_beacon.yaml");
        let (created, out) = kubectl(
            &admin,
            &[
                "-n",
                ns,
                "apply",
                "--server-side",
                "-f",
                sample.to_str().unwrap(),
            ],
        );
        assert!(created, "{out}");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        loop {
            let (_, out) = kubectl(
                &admin,
                &["-n", ns, "get", "beacon/beacon-sample", "-o", "json"],
            );
            if serde_json::from_str::<Value>(&out).is_ok_and(|o| reconciled(&o)) {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the sample was not reconciled under rbac.namespaced: {out}\n{}",
                manager.tail()
            );
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        }
        let text = std::fs::read_to_string(&log).unwrap().to_lowercase();
        assert!(
            !text.contains("forbidden"),
            "the manager was refused a request under rbac.namespaced:\n{text}"
        );
        let (deleted, out) = kubectl(
            &admin,
            &[
                "-n",
                ns,
                "delete",
                "beacon/beacon-sample",
                "--wait=true",
                "--timeout=60s",
            ],
        );
        assert!(deleted, "{out}");
        assert!(manager.stop(), "the manager exits 0 on SIGTERM");
    });
    let r =
        helm(json!({"op": "uninstall", "name": "chart-run", "namespace": ns, "kubeconfig": admin}))
            .unwrap();
    assert!(r.get("error").is_none(), "{r}");
}

/// The metrics the dashboards of `dir`'s grafana/ query (each query names them as
/// `metric{job=~"$job"}`), after checking each dashboard has what Grafana's schema requires.
fn dashboard_metrics(dir: &Path) -> std::collections::BTreeSet<String> {
    let mut metrics = std::collections::BTreeSet::new();
    let mut files = vec![
        dir.join("grafana/controller-runtime-metrics.json"),
        dir.join("grafana/controller-resources-metrics.json"),
    ];
    let custom = dir.join("grafana/custom-metrics/custom-metrics-dashboard.json");
    if custom.exists() {
        files.push(custom);
    }
    for file in files {
        let d: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let uid = d["uid"].as_str().unwrap();
        assert!(!uid.is_empty() && uid.len() <= 40, "{uid}");
        assert!(d["title"].is_string() && d["schemaVersion"].is_u64(), "{d}");
        let mut exprs = Vec::new();
        for p in d["panels"].as_array().unwrap() {
            assert!(p["id"].is_u64() && p["type"] == "timeseries", "{p}");
            for k in ["h", "w", "x", "y"] {
                assert!(p["gridPos"][k].is_u64(), "{p}");
            }
            for t in p["targets"].as_array().unwrap() {
                assert!(t["refId"].is_string(), "{t}");
                exprs.push(t["expr"].as_str().unwrap().to_string());
            }
        }
        for v in d["templating"]["list"].as_array().unwrap() {
            exprs.push(v["query"].as_str().unwrap().to_string());
        }
        for e in exprs {
            let mut rest = e.as_str();
            while let Some(at) = rest.find('{') {
                let head = &rest[..at];
                let start = head
                    .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                    .map_or(0, |i| i + 1);
                if start < head.len() {
                    metrics.insert(head[start..].to_string());
                }
                rest = &rest[at + 1..];
            }
        }
    }
    metrics
}

#[test]
fn dashboards_chart_the_runtimes_metrics_and_the_custom_ones_configured() {
    if runs_elsewhere("chart") {
        return;
    }
    let tmp = init_project("dash-op");
    let dir = project_dir(&tmp, "dash-op");
    // The generated README's commands, as written (make dashboards, make check-dashboards).
    let shell = common::readme::UserShell::new(&dir, &[]);
    let lines = common::readme::sh_blocks(&read(&dir, "README.md"), "## Dashboards").concat();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with("make dashboards") && lines[1].starts_with("make check-dashboards"),
        "{lines:?}"
    );
    for line in &lines {
        shell.run(line);
    }
    let config = read(&dir, "grafana/custom-metrics/config.yaml");
    assert!(config.contains("customMetrics: []"), "{config}");
    assert!(
        !dir.join("grafana/custom-metrics/custom-metrics-dashboard.json")
            .exists()
    );
    assert_eq!(run(&dir, &words("generate dashboards --check")).code, 0);
    let builtin = dashboard_metrics(&dir);
    for m in [
        "controller_runtime_reconcile_total",
        "controller_runtime_reconcile_time_seconds_bucket",
        "controller_runtime_active_workers",
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
    ] {
        assert!(builtin.contains(m), "{m} not charted: {builtin:?}");
    }

    // The user's metrics: one panel each.
    std::fs::write(
        dir.join("grafana/custom-metrics/config.yaml"),
        "customMetrics:\n- metric: dash_items_total\n  type: counter\n- metric: dash_queue\n  type: gauge\n- metric: dash_latency_seconds\n  type: histogram\n",
    )
    .unwrap();
    assert_eq!(run(&dir, &words("generate dashboards --check")).code, 1);
    let (fresh, out) = shell.try_run("make check-dashboards");
    assert!(
        !fresh && out.contains("dash_items_total"),
        "make check-dashboards passed a stale grafana/: {out}"
    );
    ok(&dir, &words("generate dashboards"));
    let all = dashboard_metrics(&dir);
    for m in [
        "dash_items_total",
        "dash_queue",
        "dash_latency_seconds_bucket",
    ] {
        assert!(all.contains(m), "{m} not charted: {all:?}");
    }

    // A bad entry is refused, naming the file and the entry, and nothing is written.
    for (config, says) in [
        (
            "customMetrics:\n- metric: dash-items\n  type: counter\n",
            "customMetrics[0].metric",
        ),
        (
            "customMetrics:\n- metric: dash_items\n  type: summary\n",
            "grafana/custom-metrics/config.yaml",
        ),
    ] {
        std::fs::write(dir.join("grafana/custom-metrics/config.yaml"), config).unwrap();
        let before = snapshot(&dir);
        let r = run(&dir, &words("generate dashboards"));
        assert_ne!(r.code, 0);
        assert!(r.stderr.contains(says), "{config}: {}", r.stderr);
        assert_eq!(snapshot(&dir), before);
    }
}

/// The Helm SDK as one process for many operations (`helm_driver.py --serve`: the SDK is loaded
/// once, not once an operation).
struct HelmSession {
    child: std::process::Child,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl HelmSession {
    /// The session; call [`sdk`] first (a missing SDK is a SKIPPED line there).
    fn start() -> Self {
        let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chart/helm_driver.py");
        let mut child = Command::new("python3")
            .arg(&driver)
            .arg("--serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        Self { child, stdout }
    }

    fn call(&mut self, request: Value) -> Value {
        use std::io::BufRead;
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("helm_driver.py on {request}: {e}: {line:?}"))
    }

    /// `call`, which must succeed.
    fn ok(&mut self, request: Value) -> Value {
        let r = self.call(request.clone());
        assert!(r.get("error").is_none(), "{request}: {r}");
        r
    }
}

impl Drop for HelmSession {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// A pairwise covering array of `n` on/off factors (each row a bit set): every pair of factors
/// takes each of its four value pairs in some row, in the fewest rows Kleitman and Spencer's
/// construction gives (6 for up to 10 factors). With `N` rows, each factor's column is a set of
/// `ceil(N/2)` rows among rows 1..N (row 0 is all off: every pair's off/off), distinct per
/// factor: two such sets meet (on/on) and neither holds the other (on/off, off/on).
fn pairwise(n: usize) -> Vec<usize> {
    let subsets = |rows: usize, size: usize| -> Vec<usize> {
        (0..1usize << rows)
            .filter(|s| s.count_ones() as usize == size)
            .collect()
    };
    let rows = (2..)
        .find(|&rows: &usize| subsets(rows - 1, rows.div_ceil(2)).len() >= n)
        .unwrap();
    let columns = subsets(rows - 1, rows.div_ceil(2));
    (0..rows)
        .map(|row| {
            (0..n)
                .filter(|&factor| row > 0 && columns[factor] >> (row - 1) & 1 == 1)
                .fold(0, |bits, factor| bits | 1 << factor)
        })
        .collect()
}

#[test]
fn the_pairwise_combinations_cover_every_pair_of_toggle_values() {
    let rows = pairwise(TOGGLES.len());
    for (i, first) in TOGGLES.iter().enumerate() {
        for (j, second) in TOGGLES.iter().enumerate().skip(i + 1) {
            for (a, b) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                assert!(
                    rows.iter().any(|r| r >> i & 1 == a && r >> j & 1 == b),
                    "{first} = {a}, {second} = {b} in none of {rows:?}"
                );
            }
        }
    }
    // 2^8 = 256 combinations; no 5 rows cover every pair of 8 factors.
    assert_eq!(rows.len(), 6, "{rows:?}");
}

/// The objects of release `release` in `ns` the toggles decide, counted by type (`kubectl get -o
/// name`'s prefix); cluster roles only the per-kind editor roles.
fn toggled_objects(
    kubeconfig: &Path,
    ns: &str,
    release: &str,
) -> std::collections::BTreeMap<String, usize> {
    let (done, out) = kubectl(
        kubeconfig,
        &[
            "-n",
            ns,
            "get",
            "deployments,services,certificates.cert-manager.io,servicemonitors.monitoring.coreos.com,networkpolicies,validatingwebhookconfigurations,clusterroles",
            "-o",
            "name",
        ],
    );
    assert!(done, "{out}");
    let mut counts = std::collections::BTreeMap::new();
    for line in out.lines() {
        let Some((kind, name)) = line.split_once('/') else {
            continue;
        };
        let ours = name.starts_with(&format!("{release}-"));
        let counted = !kind.starts_with("clusterrole") || name.ends_with("-editor-role");
        if ours && counted {
            *counts.entry(kind.to_string()).or_insert(0) += 1;
        }
    }
    counts
}

/// What [`toggled_objects`] finds when `values` (toggles over the defaults) are installed; empty
/// for `None` (uninstalled).
fn expected_objects(values: Option<&Value>) -> std::collections::BTreeMap<String, usize> {
    let Some(values) = values else {
        return Default::default();
    };
    let webhook = is_on(values, "webhook.enabled");
    let metrics = is_on(values, "metrics.enabled");
    let policies = if is_on(values, "networkPolicy.enabled") {
        metrics as usize + webhook as usize
    } else {
        0
    };
    [
        ("deployment.apps", 1),
        ("service", metrics as usize + webhook as usize),
        (
            "certificate.cert-manager.io",
            (webhook && is_on(values, "certManager.enabled")) as usize,
        ),
        (
            "servicemonitor.monitoring.coreos.com",
            (metrics && is_on(values, "prometheus.enabled")) as usize,
        ),
        ("networkpolicy.networking.k8s.io", policies),
        (
            "validatingwebhookconfiguration.admissionregistration.k8s.io",
            webhook as usize,
        ),
        (
            "clusterrole.rbac.authorization.k8s.io",
            2 * is_on(values, "rbacHelpers.enabled") as usize,
        ),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .map(|(k, n)| (k.to_string(), n))
    .collect()
}

/// cert-manager's and prometheus-operator's CRDs on the control plane (the chart's Certificate,
/// Issuer and ServiceMonitor need them), applied server-side (idempotent across tests).
fn foreign_crds(kubeconfig: &Path, dir: &Path) {
    let crds = dir.join("foreign-crds.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": [
        foreign_crd("cert-manager.io", "Certificate", "certificates"),
        foreign_crd("cert-manager.io", "Issuer", "issuers"),
        foreign_crd("monitoring.coreos.com", "ServiceMonitor", "servicemonitors"),
    ]});
    std::fs::write(&crds, list.to_string()).unwrap();
    let (applied, out) = kubectl(
        kubeconfig,
        &["apply", "--server-side", "-f", crds.to_str().unwrap()],
    );
    assert!(applied, "{out}");
    let (ready, out) = kubectl(
        kubeconfig,
        &[
            "wait",
            "--for=condition=Established",
            "crd/servicemonitors.monitoring.coreos.com",
            "crd/certificates.cert-manager.io",
            "crd/issuers.cert-manager.io",
        ],
    );
    assert!(ready, "{out}");
}

/// Install, upgrade (to every toggle flipped), rollback and uninstall on the real control plane,
/// for each toggle combination of a pairwise covering array (CI), or all 256 with
/// `OPERATOR_RS_CHART_SWEEP=1`: one project, one control plane, one release reused (uninstalled
/// between combinations; the CRDs kept by crd.keep and adopted again), no waiting on pods.
#[test]
fn every_toggle_combination_installs_upgrades_rolls_back_and_uninstalls() {
    if runs_elsewhere("chart") {
        return;
    }
    if !sdk() || !Envtest::available() {
        return;
    }
    let full = std::env::var("OPERATOR_RS_CHART_SWEEP").is_ok_and(|v| v == "1");
    let combinations: Vec<usize> = if full {
        (0..1 << TOGGLES.len()).collect()
    } else {
        eprintln!(
            "SKIPPED: the full sweep of all {} toggle combinations (OPERATOR_RS_CHART_SWEEP=1 runs it); running the pairwise covering subset",
            1 << TOGGLES.len()
        );
        pairwise(TOGGLES.len())
    };
    let env = Envtest::shared().expect("the control plane starts");
    let kubeconfig = env.kubeconfig().to_path_buf();
    let (_tmp, dir) = project_in("chart-sweep", "sweep");
    foreign_crds(&kubeconfig, &dir);
    let (release, ns) = ("chart-sweep", "chart-sweep-system");
    let mut helm = HelmSession::start();
    let request = |op: &str, values: &Value| {
        json!({"op": op, "chart": chart(&dir), "name": release, "namespace": ns,
            "kubeconfig": kubeconfig, "values": values})
    };
    let mask = (1 << TOGGLES.len()) - 1;
    let started = std::time::Instant::now();
    for &bits in &combinations {
        let at = std::time::Instant::now();
        let (values, flipped) = (toggled(bits), toggled(!bits & mask));
        let state = |what: &str, values: Option<&Value>| {
            assert_eq!(
                toggled_objects(&kubeconfig, ns, release),
                expected_objects(values),
                "{what} {}",
                toggled(bits)
            );
        };
        let r = helm.ok(request("install", &values));
        assert_eq!(r["release"]["revision"], 1, "{r}");
        state("installed", Some(&values));
        let r = helm.ok(request("upgrade", &flipped));
        assert_eq!(r["release"]["revision"], 2, "{r}");
        state("upgraded to every toggle flipped", Some(&flipped));
        helm.ok(json!({"op": "rollback", "name": release, "namespace": ns, "version": 1, "kubeconfig": kubeconfig}));
        state("rolled back", Some(&values));
        let history = helm.ok(
            json!({"op": "history", "name": release, "namespace": ns, "kubeconfig": kubeconfig}),
        );
        assert_eq!(history["history"].as_array().unwrap().len(), 3, "{history}");
        helm.ok(
            json!({"op": "uninstall", "name": release, "namespace": ns, "kubeconfig": kubeconfig}),
        );
        state("uninstalled", None);
        eprintln!(
            "chart sweep: {bits:#010b} installed, upgraded, rolled back, uninstalled in {:.1?}",
            at.elapsed()
        );
    }
    // The CRDs, once installed, are kept (crd.keep) through every uninstall.
    for crd in [
        "crd/memcacheds.sweep.example.com",
        "crd/redises.sweep.example.com",
    ] {
        assert!(kubectl(&kubeconfig, &["get", crd]).0, "{crd} kept");
    }
    eprintln!(
        "chart sweep: {} combinations in {:.1?}",
        combinations.len(),
        started.elapsed()
    );
}

/// Whether the manager's ServiceAccount `sa` of namespace `ns` may `verb` `resource` in
/// `namespace` (`None`: in every namespace), as the API server's authorizer answers
/// (`kubectl auth can-i --as`, a SubjectAccessReview).
fn can(
    kubeconfig: &Path,
    ns: &str,
    sa: &str,
    verb: &str,
    resource: &str,
    namespace: Option<&str>,
) -> bool {
    let who = format!("--as=system:serviceaccount:{ns}:{sa}");
    let mut args = vec!["auth", "can-i", verb, resource, who.as_str()];
    match namespace {
        Some(n) => args.extend(["-n", n]),
        None => args.push("--all-namespaces"),
    }
    let (_, out) = kubectl(kubeconfig, &args);
    match out.trim() {
        "yes" => true,
        "no" => false,
        other => panic!("kubectl {args:?}: {other}"),
    }
}

#[test]
fn rbac_namespaced_grants_the_manager_roles_only_in_the_namespaces_it_watches() {
    let Some(env) = control_plane() else {
        return;
    };
    let kubeconfig = env.kubeconfig().to_path_buf();
    let (_tmp, dir) = project_in("chart-scoped", "scoped");
    // A rule a Role cannot hold (a cluster-scoped resource) stays cluster-wide in both modes.
    let controller = dir.join("src/controllers/redis.rs");
    let text = std::fs::read_to_string(&controller).unwrap();
    let marker = "// +kubebuilder:rbac:groups=\"\",resources=nodes,verbs=get;list;watch\n";
    std::fs::write(&controller, format!("{marker}{text}")).unwrap();
    ok(&dir, &words("generate manifests"));
    ok(&dir, &words("generate chart"));
    let (ns, sa) = ("chart-scoped-system", "chart-scoped-controller-manager");
    for other in ["scoped-a", "scoped-b", "scoped-c"] {
        kubectl(&kubeconfig, &["create", "namespace", other]);
    }
    let mut helm = HelmSession::start();
    let release = |op: &str, values: Value| {
        json!({"op": op, "chart": chart(&dir), "name": "chart-scoped", "namespace": ns,
            "kubeconfig": kubeconfig, "values": values})
    };
    let args = || -> String {
        let (_, out) = kubectl(
            &kubeconfig,
            &[
                "-n",
                ns,
                "get",
                &format!("deployment/{sa}"),
                "-o",
                "jsonpath={.spec.template.spec.containers[0].args}",
            ],
        );
        out
    };
    let kinds = "memcacheds.scoped.example.com";
    // The manager's own rules, each as the markers grant them.
    let grants = |namespace: Option<&str>| -> Vec<bool> {
        [
            ("watch", kinds),
            ("update", "memcacheds.scoped.example.com/status"),
            ("update", "memcacheds.scoped.example.com/finalizers"),
            ("list", "redises.scoped.example.com"),
            ("create", "events.events.k8s.io"),
            ("create", "deployments.apps"),
        ]
        .iter()
        .map(|(verb, resource)| can(&kubeconfig, ns, sa, verb, resource, namespace))
        .collect()
    };
    let all = vec![true; 6];
    let none = vec![false; 6];

    // Cluster-wide (the default): everywhere.
    let certs = json!({"certManager": {"enabled": false}});
    helm.ok(release("install", certs.clone()));
    assert_eq!(grants(Some(ns)), all);
    assert_eq!(grants(Some("scoped-a")), all);
    assert_eq!(grants(None), all, "cluster-wide");
    assert!(!args().contains("--watch-namespace"), "{}", args());

    // rbac.namespaced: Roles in the release's namespace only, and the manager watches only it.
    helm.ok(release(
        "upgrade",
        json!({"certManager": {"enabled": false}, "rbac": {"namespaced": true}}),
    ));
    assert_eq!(grants(Some(ns)), all);
    assert_eq!(grants(Some("scoped-a")), none);
    assert_eq!(grants(None), none, "no longer cluster-wide");
    assert!(
        args().contains(&format!("--watch-namespace={ns}")),
        "{}",
        args()
    );
    // The rules a Role cannot hold, and the leader election's Role, are still granted.
    assert!(can(&kubeconfig, ns, sa, "list", "nodes", None));
    assert!(can(
        &kubeconfig,
        ns,
        sa,
        "update",
        "leases.coordination.k8s.io",
        Some(ns)
    ));

    // With manager.watchNamespaces: Roles there (each once), not in the release's namespace.
    helm.ok(release(
        "upgrade",
        json!({"certManager": {"enabled": false}, "rbac": {"namespaced": true},
            "manager": {"watchNamespaces": ["scoped-a", "scoped-b", "scoped-a"]}}),
    ));
    assert_eq!(grants(Some("scoped-a")), all);
    assert_eq!(grants(Some("scoped-b")), all);
    assert_eq!(grants(Some("scoped-c")), none);
    assert_eq!(grants(None), none);
    assert!(
        args().contains("--watch-namespace=scoped-a,scoped-b"),
        "{}",
        args()
    );

    // Back to cluster-wide, then gone.
    helm.ok(release("upgrade", certs));
    assert_eq!(grants(Some("scoped-c")), all);
    helm.ok(json!({"op": "uninstall", "name": "chart-scoped", "namespace": ns, "kubeconfig": kubeconfig}));
    assert_eq!(grants(Some(ns)), none);
    assert!(!can(&kubeconfig, ns, sa, "list", "nodes", None));
}

#[test]
fn a_namespace_scoped_projects_chart_refuses_rbac_namespaced_false() {
    if runs_elsewhere("chart") {
        return;
    }
    if !sdk() {
        return;
    }
    let tmp = init_project("chart-ns-only");
    let dir = project_dir(&tmp, "chart-ns-only");
    ok(&dir, &words("edit --namespaced"));
    ok(
        &dir,
        &words("create api --group ns --version v1 --kind Widget"),
    );
    ok(&dir, &words("generate chart"));
    let r = helm(
        json!({"op": "validate", "chart": chart(&dir), "values": {"rbac": {"namespaced": false}}}),
    )
    .unwrap();
    let error = r["error"]
        .as_str()
        .unwrap_or_else(|| panic!("rbac.namespaced=false accepted: {r}"));
    assert!(error.contains("namespaced"), "{error}");
    let r = helm(json!({"op": "render", "chart": chart(&dir), "namespace": "ops"})).unwrap();
    let docs = documents(&r["manifests"]);
    assert!(
        docs.iter()
            .any(|d| d["kind"] == "Role" && d["metadata"]["name"] == "chart-ns-only-manager-role"),
        "a Role for the manager"
    );
    assert!(!docs.iter().any(
        |d| d["kind"] == "ClusterRole" && d["metadata"]["name"] == "chart-ns-only-manager-role"
    ));
}

/// A `helm` for a user's shell: tests/chart/helm_cli.py (the Helm SDK), beside this operator-rs.
fn helm_on_path(shell: &mut common::readme::UserShell, dir: &Path) {
    let bin = dir.join("../helm-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let cli = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chart/helm_cli.py");
    let script = bin.join("helm");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nexec python3 {} \"$@\"\n", cli.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_operator-rs"), bin.join("operator-rs")).unwrap();
    shell.set(
        "PATH",
        &format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    );
}

#[test]
fn the_crds_chart_installs_before_the_chart_as_the_generated_readme_says() {
    let Some(env) = control_plane() else {
        return;
    };
    let kubeconfig = env.kubeconfig().to_path_buf();
    let (_tmp, dir) = project_in("chart-split", "split");
    foreign_crds(&kubeconfig, &dir);
    ok(&dir, &words("generate chart --crds-chart"));
    let crds_dir = dir.join("dist/chart-crds");
    for c in [chart(&dir), crds_dir.display().to_string()] {
        let lint = helm(json!({"op": "lint", "chart": c})).unwrap();
        assert_eq!(lint["errors"], json!([]), "{lint}");
        for m in lint["messages"].as_array().unwrap() {
            assert!(m["severity"].as_i64().unwrap() <= 1, "lint {c}: {m}");
        }
    }
    // The CRD chart has the CRDs and nothing else; a typo in its values is refused.
    let r = helm(json!({"op": "render", "chart": crds_dir, "namespace": "x"})).unwrap();
    let kinds: Vec<Value> = documents(&r["manifests"])
        .iter()
        .map(|d| d["kind"].clone())
        .collect();
    assert_eq!(
        kinds,
        vec![json!("CustomResourceDefinition"); 2],
        "{kinds:?}"
    );
    let r = helm(json!({"op": "validate", "chart": crds_dir, "values": {"crd": {"kep": true}}}))
        .unwrap();
    assert!(
        r["error"].as_str().is_some_and(|e| e.contains("kep")),
        "{r}"
    );
    assert!(
        read(&crds_dir, "values.yaml").contains("yours from then on"),
        "{}",
        read(&crds_dir, "values.yaml")
    );
    // Regenerated (and checked) with the main chart from then on.
    assert_eq!(run(&dir, &words("generate chart --check")).code, 0);
    std::fs::remove_file(crds_dir.join("templates/crd/split.example.com_redises.yaml")).unwrap();
    let check = run(&dir, &words("generate chart --check"));
    assert_eq!(check.code, 1, "{}{}", check.stdout, check.stderr);
    ok(&dir, &words("generate chart"));

    // The generated README's commands, as written.
    let mut shell = common::readme::UserShell::new(&dir, &[("KUBECONFIG", env.kubeconfig())]);
    helm_on_path(&mut shell, &dir);
    let blocks = common::readme::sh_blocks(&read(&dir, "README.md"), "## Helm chart");
    let lines = blocks
        .iter()
        .find(|b| b.iter().any(|l| l.contains("dist/chart-crds")))
        .expect("the README's CRD chart block");
    assert_eq!(lines.len(), 2, "{lines:?}");
    for line in lines {
        shell.run(line);
    }
    let owner = |crd: &str| {
        let (found, out) = kubectl(
            &kubeconfig,
            &[
                "get",
                crd,
                "-o",
                "jsonpath={.metadata.annotations.meta\\.helm\\.sh/release-name}",
            ],
        );
        assert!(found, "{out}");
        out
    };
    assert_eq!(
        owner("crd/memcacheds.split.example.com"),
        "chart-split-crds"
    );
    assert_eq!(owner("crd/redises.split.example.com"), "chart-split-crds");
    let ns = "chart-split-system";
    assert!(
        kubectl(
            &kubeconfig,
            &["-n", ns, "get", "deployment/chart-split-controller-manager"]
        )
        .0
    );
    // The main release holds no CRD: uninstalling it leaves them; the CRD chart's keeps them too.
    for release in ["chart-split", "chart-split-crds"] {
        let r = helm(
            json!({"op": "uninstall", "name": release, "namespace": ns, "kubeconfig": kubeconfig}),
        )
        .unwrap();
        assert!(r.get("error").is_none(), "{r}");
        assert!(
            kubectl(&kubeconfig, &["get", "crd/memcacheds.split.example.com"]).0,
            "kept after {release}"
        );
    }
}

#[test]
fn the_chart_before_create_api_upgrades_in_place_to_the_chart_after() {
    let Some(env) = control_plane() else {
        return;
    };
    let kubeconfig = env.kubeconfig().to_path_buf();
    let tmp = init_project("chart-prev");
    let dir = project_dir(&tmp, "chart-prev");
    ok(
        &dir,
        &words("create api --group prev --version v1 --kind Beacon"),
    );
    ok(&dir, &words("generate chart"));
    // The chart as it was: installed, with an object of its kind.
    let before = tmp.path().join("chart-before");
    copy_dir(&dir.join("dist/chart"), &before);
    let ns = "chart-prev-system";
    let mut helm = HelmSession::start();
    let release = |op: &str, chart_dir: &Path| {
        json!({"op": op, "chart": chart_dir, "name": "chart-prev", "namespace": ns,
            "kubeconfig": kubeconfig, "values": {}})
    };
    helm.ok(release("install", &before));
    let sample = dir.join("config/samples/prev_v1_beacon.yaml");
    let (made, out) = kubectl(
        &kubeconfig,
        &[
            "-n",
            "default",
            "apply",
            "--server-side",
            "-f",
            sample.to_str().unwrap(),
        ],
    );
    assert!(made, "{out}");

    // The project grows a kind; the chart regenerated from it upgrades the release in place.
    ok(
        &dir,
        &words("create api --group prev --version v1 --kind Lighthouse"),
    );
    ok(&dir, &words("generate chart"));
    assert_ne!(
        snapshot(&before),
        snapshot(&dir.join("dist/chart")),
        "the chart changed"
    );
    let r = helm.ok(release("upgrade", &dir.join("dist/chart")));
    assert_eq!(r["release"]["revision"], 2, "{r}");
    for crd in [
        "crd/beacons.prev.example.com",
        "crd/lighthouses.prev.example.com",
    ] {
        let (found, out) = kubectl(
            &kubeconfig,
            &[
                "get",
                crd,
                "-o",
                "jsonpath={.metadata.annotations.meta\\.helm\\.sh/release-name}",
            ],
        );
        assert!(found && out == "chart-prev", "{crd}: {out}");
    }
    let (kept, out) = kubectl(
        &kubeconfig,
        &["-n", "default", "get", "beacon/beacon-sample"],
    );
    assert!(
        kept,
        "the object of the first kind survived the upgrade: {out}"
    );
    // The manager may now work on the new kind.
    assert!(can(
        &kubeconfig,
        ns,
        "chart-prev-controller-manager",
        "watch",
        "lighthouses.prev.example.com",
        None
    ));
    // And back: a rollback to the chart before keeps both CRDs (crd.keep) and the object.
    helm.ok(json!({"op": "rollback", "name": "chart-prev", "namespace": ns, "version": 1, "kubeconfig": kubeconfig}));
    assert!(kubectl(&kubeconfig, &["get", "crd/lighthouses.prev.example.com"]).0);
    assert!(
        kubectl(
            &kubeconfig,
            &["-n", "default", "get", "beacon/beacon-sample"]
        )
        .0
    );
    assert!(!can(
        &kubeconfig,
        ns,
        "chart-prev-controller-manager",
        "watch",
        "lighthouses.prev.example.com",
        None
    ));
    helm.ok(
        json!({"op": "uninstall", "name": "chart-prev", "namespace": ns, "kubeconfig": kubeconfig}),
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
