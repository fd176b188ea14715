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
