//! Kinds this project does not own: `create api --external-api-path` (a controller for a kind
//! whose Rust type is in a crate: PROJECT `external: true`, the crate added to Cargo.toml, RBAC
//! for exactly what the controller does, no CRD, sample or editor/viewer role), and `create
//! webhook` for built-in kinds (PROJECT `core: true`, without `create api` first) and external
//! ones, conversion refused for both. Every refusal writes nothing.

mod common;

use std::path::Path;

use common::readme;
use common::*;
use operator_rs::project::Project;

const CERT: &str = "create api --group cert-manager --version v1 --kind Certificate --external-api-domain io --external-api-path kcr_cert_manager_io::v1::certificates::Certificate --external-api-crate kcr_cert_manager_io@3";

fn refused(dir: &Path, args: &[&str]) -> String {
    let before = snapshot(dir);
    let r = run(dir, args);
    assert_ne!(r.code, 0, "{args:?} should be refused");
    assert!(snapshot(dir) == before, "{args:?} was refused but wrote");
    r.stderr
}

fn project(dir: &Path) -> Project {
    Project::parse(&read(dir, "PROJECT")).unwrap()
}

/// The rules of config/rbac/role.yaml for `group`, as (resources, verbs).
fn rules_for(dir: &Path, group: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let role: serde_json::Value =
        serde_saphyr::from_str(&read(dir, "config/rbac/role.yaml")).unwrap();
    let strings = |v: &serde_json::Value| -> Vec<String> {
        (v.as_array().unwrap().iter())
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    (role["rules"].as_array().unwrap().iter())
        .filter(|r| strings(&r["apiGroups"]).iter().any(|g| g == group))
        .map(|r| (strings(&r["resources"]), strings(&r["verbs"])))
        .collect()
}

#[test]
fn an_external_kind_gets_a_controller_and_its_crate_but_no_crd() {
    let tmp = init_project("ext-op");
    let dir = project_dir(&tmp, "ext-op");
    let cargo_before = read(&dir, "Cargo.toml");
    // Our README's example, run as written (`bash -c`): the command this test checks.
    let block =
        readme::sh_blocks(&readme::our_readme(), "### Kinds this project does not own").concat();
    assert_eq!(block, [format!("operator-rs {CERT}")]);
    readme::UserShell::new(&dir, &[]).run(&block[0]);

    let p = project(&dir);
    let r = &p.resources[0];
    assert_eq!(
        (
            r.group.as_str(),
            r.domain.as_str(),
            r.version.as_str(),
            r.kind.as_str()
        ),
        ("cert-manager", "io", "v1", "Certificate")
    );
    assert!(r.external && !r.core && r.controller && r.api.is_none());
    assert_eq!(r.path, "kcr_cert_manager_io::v1::certificates::Certificate");
    assert_eq!(r.external_crate.as_deref(), Some("kcr_cert_manager_io@3"));
    let text = read(&dir, "PROJECT");
    assert!(
        text.contains("  external: true\n") && !text.contains("core:"),
        "{text}"
    );

    // Cargo.toml: the user's lines as they were, one dependency (and its comment) added to
    // [dependencies], before [dev-dependencies].
    let cargo = read(&dir, "Cargo.toml");
    let added: Vec<&str> = cargo
        .lines()
        .filter(|l| !cargo_before.lines().any(|b| b == *l))
        .collect();
    assert_eq!(added.len(), 2, "{added:?}");
    assert_eq!(added[1], "kcr_cert_manager_io = \"3\"");
    let at = cargo.find(added[1]).unwrap();
    assert!(at > cargo.find("[dependencies]").unwrap());
    assert!(at < cargo.find("[dev-dependencies]").unwrap());
    assert_eq!(
        cargo.replace(&format!("{}\n{}\n", added[0], added[1]), ""),
        cargo_before
    );

    // The controller watches its metadata: get, list, watch on it, nothing else.
    let controller = read(&dir, "src/controllers/certificate.rs");
    assert!(
        controller.contains("use kcr_cert_manager_io::v1::certificates::Certificate as Object;"),
        "{controller}"
    );
    assert_eq!(
        rules_for(&dir, "cert-manager.io"),
        [(
            vec!["certificates".to_string()],
            vec!["get".to_string(), "list".to_string(), "watch".to_string()]
        )]
    );
    // Nothing of a kind the project owns: no types, CRD, sample, editor/viewer roles.
    for absent in [
        "src/api/v1",
        "config/samples/cert-manager_v1_certificate.yaml",
        "config/rbac/certificate_editor_role.yaml",
        "config/rbac/certificate_viewer_role.yaml",
        "config/crd/bases",
    ] {
        assert!(!dir.join(absent).exists(), "{absent} was made");
    }
    for file in [
        "config/crd/kustomization.yaml",
        "config/samples/kustomization.yaml",
        "config/rbac/kustomization.yaml",
        "tests/crds.rs",
        "tests/integration.rs",
    ] {
        assert!(!read(&dir, file).contains("certificate"), "{file}");
    }
    ok(&dir, &words("generate crds"));
    assert!(!dir.join("config/crd/bases").exists());

    // Again with --force: the dependency is there already, so Cargo.toml stays as it is.
    ok(&dir, &words(&format!("{CERT} --force")));
    assert_eq!(read(&dir, "Cargo.toml"), cargo);
    assert_eq!(project(&dir).resources.len(), 1);
}

#[test]
fn an_external_kind_can_be_recorded_first_and_given_a_controller_later() {
    let tmp = init_project("ext-later");
    let dir = project_dir(&tmp, "ext-later");
    // A path in the project itself (`crate::`), or in a crate Cargo.toml has (kube): no
    // --external-api-crate needed.
    ok(
        &dir,
        &words(
            "create api --group widgets.acme.io --version v1beta1 --kind Widget --external-api-path crate::external::Widget --controller=false",
        ),
    );
    assert!(!dir.join("src/controllers/widget.rs").exists());
    let r = &project(&dir).resources[0];
    assert!(r.external && !r.controller && r.external_crate.is_none());
    assert_eq!(r.domain, "");
    ok(
        &dir,
        &words(
            "create api --group widgets.acme.io --version v1beta1 --kind Widget --external-api-path crate::external::Widget",
        ),
    );
    assert!(project(&dir).resources[0].controller);
    assert!(
        read(&dir, "src/controllers/widget.rs").contains("use crate::external::Widget as Object;")
    );
    let err = refused(
        &dir,
        &words(
            "create api --group widgets.acme.io --version v1beta1 --kind Widget --external-api-path crate::external::Widget",
        ),
    );
    assert!(err.contains("already has a controller"), "{err}");
}

#[test]
fn bad_external_flags_are_refused_with_the_rule_and_an_example() {
    let tmp = init_project("ext-bad");
    let dir = project_dir(&tmp, "ext-bad");
    ok(
        &dir,
        &words("create api --group cache --version v1alpha1 --kind Memcached"),
    );
    let base =
        "create api --group cert-manager --version v1 --kind Certificate --external-api-domain io";
    let cases: Vec<(String, &str)> = vec![
        // The Rust path.
        (format!("{base} --external-api-path Certificate"), "it has one segment"),
        (format!("{base} --external-api-path kube::Certificate<T>"), "generic arguments"),
        (format!("{base} --external-api-path kube::v1::"), "not a Rust path"),
        (format!("{base} --external-api-path kube-x::Certificate"), "not a Rust path"),
        (format!("{base} --external-api-path kube::v1::certificate"), "not a type name"),
        (format!("{base} --external-api-path super::Certificate"), "starts with `super`"),
        (
            format!("{base} --external-api-path kcr_cert_manager_io::v1::Certificate"),
            "`kcr_cert_manager_io`, which is not a dependency of this project",
        ),
        (
            format!("{base} --external-api-path other::Certificate --external-api-crate kcr_cert_manager_io@3"),
            "nor --external-api-crate kcr_cert_manager_io",
        ),
        // The crate.
        (format!("{base} --external-api-path kcr::Certificate --external-api-crate kcr"), "no `@version`"),
        (format!("{base} --external-api-path kcr::Certificate --external-api-crate kcr@latest"), "not a Cargo version requirement"),
        (format!("{base} --external-api-path kcr::Certificate --external-api-crate k.cr@1"), "has '.'"),
        (format!("{base} --external-api-path kcr::Certificate --external-api-crate @1"), "name before `@` is empty"),
        // The names.
        (
            "create api --group Cert_Manager --version v1 --kind Certificate --external-api-path kube::Certificate".into(),
            "DNS-1123 subdomain",
        ),
        (
            "create api --group cert-manager.io --version 1 --kind Certificate --external-api-path kube::Certificate".into(),
            "--version",
        ),
        (
            "create api --group cert-manager.io --version v1 --kind certificate --external-api-path kube::Certificate".into(),
            "--kind",
        ),
        (
            "create api --group cert-manager --version v1 --kind Certificate --external-api-domain bad_domain --external-api-path kube::Certificate".into(),
            "invalid --external-api-domain \"bad_domain\": must be a DNS-1123 subdomain",
        ),
        // Named as this flag, with this flag's example (not init's `--domain`).
        (
            "create api --group cert-manager --version v1 --kind Certificate --external-api-domain bad_domain --external-api-path kube::Certificate".into(),
            "e.g. --external-api-domain io",
        ),
        // A built-in kind, and a kind the project owns.
        (
            "create api --group apps --version v1 --kind Deployment --external-api-path k8s_openapi::api::apps::v1::Deployment".into(),
            "is a built-in Kubernetes kind",
        ),
        (
            "create api --group cache --version v1alpha1 --kind Memcached --external-api-path crate::api::v1alpha1::Memcached".into(),
            "already a kind of this project",
        ),
    ];
    for (line, expected) in &cases {
        let err = refused(&dir, &words(line));
        assert!(
            err.contains(expected),
            "`{line}`: expected {expected:?} in:\n{err}"
        );
        assert!(
            err.contains("e.g.") || err.contains("error: invalid value"),
            "`{line}`: no example in:\n{err}"
        );
    }
    // clap: the flags that need --external-api-path, and those it excludes.
    for line in [
        "create api --group g.io --version v1 --kind K --external-api-crate x@1",
        "create api --group g.io --version v1 --kind K --external-api-domain io",
        "create api --group g.io --version v1 --kind K --external-api-path kube::K --resource",
        "create api --group g.io --version v1 --kind K --external-api-path kube::K --image nginx",
    ] {
        refused(&dir, &words(line));
    }
}

#[test]
fn webhooks_for_a_built_in_kind_need_no_create_api() {
    let tmp = init_project("core-hooks");
    let dir = project_dir(&tmp, "core-hooks");
    let r = ok(
        &dir,
        &words(
            "create webhook --group core --version v1 --kind ConfigMap --defaulting --programmatic-validation",
        ),
    );
    assert!(
        r.stderr.contains("namespaceSelector or objectSelector"),
        "{}",
        r.stderr
    );
    let p = project(&dir);
    let cm = &p.resources[0];
    assert!(cm.core && !cm.controller && !cm.external && cm.api.is_none());
    assert_eq!(
        (cm.group.as_str(), cm.plural.as_str()),
        ("core", "configmaps")
    );
    assert_eq!(cm.path, "k8s_openapi::api::core::v1::ConfigMap");
    let hooks = cm.webhooks.as_ref().unwrap();
    assert!(hooks.defaulting && hooks.validation && !hooks.conversion);

    // kubebuilder's core-type paths and the core group `""`.
    let docs: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(&read(&dir, "config/webhook/manifests.yaml")).unwrap();
    let mut seen = Vec::new();
    for doc in &docs {
        let hook = &doc["webhooks"][0];
        seen.push(
            hook["clientConfig"]["service"]["path"]
                .as_str()
                .unwrap()
                .to_string(),
        );
        assert_eq!(hook["rules"][0]["apiGroups"], serde_json::json!([""]));
        assert_eq!(
            hook["rules"][0]["resources"],
            serde_json::json!(["configmaps"])
        );
        assert_eq!(hook["rules"][0]["apiVersions"], serde_json::json!(["v1"]));
    }
    assert_eq!(seen, ["/mutate--v1-configmap", "/validate--v1-configmap"]);
    let file = read(&dir, "src/webhooks/v1/config_map.rs");
    assert!(file.contains("use k8s_openapi::api::core::v1::ConfigMap as Kind;"));
    assert!(
        file.contains("objectSelector") && file.contains("namespaceSelector"),
        "{file}"
    );

    // `--group ""` and a later controller are the same entry.
    ok(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "",
            "--version",
            "v1",
            "--kind",
            "ConfigMap",
            "--defaulting",
        ],
    );
    ok(
        &dir,
        &words("create api --group core --version v1 --kind ConfigMap --resource=false"),
    );
    let p = project(&dir);
    assert_eq!(p.resources.len(), 1);
    assert!(p.resources[0].controller && p.resources[0].webhooks.as_ref().unwrap().validation);

    // Another group's built-in kind: networking.k8s.io, named as `networking`.
    ok(
        &dir,
        &words(
            "create webhook --group networking --version v1 --kind Ingress --programmatic-validation",
        ),
    );
    let ingress = project(&dir)
        .resources
        .into_iter()
        .find(|r| r.kind == "Ingress")
        .unwrap();
    assert_eq!(ingress.group, "networking.k8s.io");
    assert!(
        read(&dir, "config/webhook/manifests.yaml")
            .contains("path: /validate-networking-k8s-io-v1-ingress")
    );
}

#[test]
fn conversion_is_refused_for_kinds_the_project_does_not_own() {
    let tmp = init_project("no-conv");
    let dir = project_dir(&tmp, "no-conv");
    for line in [
        "create webhook --group core --version v1 --kind Pod --conversion",
        "create webhook --group core --version v1 --kind Pod --conversion --spoke v2",
        "create webhook --group apps --version v1 --kind Deployment --defaulting --conversion",
    ] {
        let err = refused(&dir, &words(line));
        assert!(
            err.contains("a built-in kind, which the API server itself converts")
                && err.contains("drop --conversion"),
            "{line}: {err}"
        );
    }
    ok(&dir, &words(CERT));
    let err = refused(
        &dir,
        &words(
            "create webhook --group cert-manager --version v1 --kind Certificate --conversion --spoke v1beta1",
        ),
    );
    assert!(
        err.contains("its conversion belongs to the owner of its CRD"),
        "{err}"
    );

    // Admission webhooks for the external kind: its real group, version and resource.
    ok(
        &dir,
        &words("create webhook --group cert-manager --version v1 --kind Certificate --defaulting"),
    );
    let manifests = read(&dir, "config/webhook/manifests.yaml");
    assert!(
        manifests.contains("path: /mutate-cert-manager-io-v1-certificate")
            && manifests.contains("    - cert-manager.io\n")
            && manifests.contains("    - certificates\n"),
        "{manifests}"
    );
    assert!(
        read(&dir, "src/webhooks/v1/certificate.rs")
            .contains("use kcr_cert_manager_io::v1::certificates::Certificate as Kind;")
    );

    // A kind neither built in nor recorded: how to record an external one.
    let err = refused(
        &dir,
        &words(
            "create webhook --group monitoring.coreos.com --version v1 --kind ServiceMonitor --defaulting",
        ),
    );
    assert!(
        err.contains("--external-api-path <crate>::<module>::ServiceMonitor --controller=false"),
        "{err}"
    );
}

/// Kinds whose types are in the project itself (`crate::external`): no crate to add.
const WIDGET: &str = "create api --group widgets.acme.io --version v1 --kind Widget --external-api-path crate::external::Widget";
const GADGET: &str = "create api --group widgets.acme.io --version v1 --kind Gadget --external-api-path crate::external::Gadget";

#[test]
fn an_external_kind_records_its_scope_which_its_rbac_and_webhooks_follow() {
    // A namespace-scoped manager: what a Role cannot grant goes to the ClusterRole, with a note.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("scoped-ext");
    std::fs::create_dir(&dir).unwrap();
    ok(&dir, &words("init --domain example.com --namespaced"));
    let made = ok(&dir, &words(&format!("{WIDGET} --namespaced=false")));
    ok(&dir, &words(GADGET));

    let p = project(&dir);
    let scope = |kind: &str| {
        let r = p.resources.iter().find(|r| r.kind == kind).unwrap();
        (r.namespaced, r.namespaced())
    };
    assert_eq!(scope("Widget"), (Some(false), false));
    assert_eq!(scope("Gadget"), (Some(true), true));
    assert!(read(&dir, "PROJECT").contains("  namespaced: false\n"));
    // The command `update` replays makes the same kind again.
    assert!(
        p.commands
            .iter()
            .any(|c| c.split_whitespace().collect::<Vec<_>>().join(" ")
                == format!("{WIDGET} --namespaced=false")),
        "{:?}",
        p.commands
    );

    // RBAC: the cluster-scoped kind in the ClusterRole (said so), the namespaced one in the Role.
    let roles: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(&read(&dir, "config/rbac/role.yaml")).unwrap();
    let granted = |kind: &str, plural: &str| {
        (roles.iter())
            .filter(|r| r["kind"] == kind)
            .any(|r| r["rules"].to_string().contains(&format!("\"{plural}\"")))
    };
    assert!(granted("ClusterRole", "widgets") && !granted("Role", "widgets"));
    assert!(granted("Role", "gadgets") && !granted("ClusterRole", "gadgets"));
    assert!(
        made.stderr.contains("`widgets` is cluster-wide") && made.stderr.contains("ClusterRole"),
        "{}",
        made.stderr
    );
    // The controllers' tests make objects of the kind's scope.
    let namespace_line = "obj.metadata.namespace = Some(\"default\".into());";
    assert!(!read(&dir, "src/controllers/widget.rs").contains(namespace_line));
    assert!(read(&dir, "src/controllers/gadget.rs").contains(namespace_line));

    // Webhooks: a namespaceSelector does not narrow a cluster-scoped kind's.
    let hooks = ok(
        &dir,
        &words("create webhook --group widgets.acme.io --version v1 --kind Widget --defaulting"),
    );
    assert!(
        hooks.stderr.contains("a cluster-scoped kind")
            && hooks
                .stderr
                .contains("an objectSelector (a namespaceSelector does not apply"),
        "{}",
        hooks.stderr
    );
    assert!(
        read(&dir, "src/webhooks/v1/widget.rs")
            .contains("Widget is cluster-scoped: a `namespaceSelector` does not narrow")
    );
    let hooks = ok(
        &dir,
        &words("create webhook --group widgets.acme.io --version v1 --kind Gadget --defaulting"),
    );
    assert!(
        hooks
            .stderr
            .contains("a namespaceSelector or objectSelector"),
        "{}",
        hooks.stderr
    );
    assert!(read(&dir, "src/webhooks/v1/gadget.rs").contains("skips the manager's namespace"));
    // The namespaced kind's webhook skips the manager's namespace; the cluster-scoped one's,
    // which a namespaceSelector would not narrow, gets no such patch.
    let patches = read(&dir, "config/webhook/kustomization.yaml");
    assert!(
        patches.contains("- name: mgadget-v1.kb.io\n      namespaceSelector:")
            && !patches.contains("widget-v1.kb.io"),
        "{patches}"
    );

    // A re-run keeps the recorded scope; another one is refused (it is the cluster's), unless
    // --force.
    ok(&dir, &words(&format!("{WIDGET} --controller=false")));
    assert_eq!(project(&dir).resources[0].namespaced, Some(false));
    let err = refused(
        &dir,
        &words(&format!("{WIDGET} --controller=false --namespaced")),
    );
    assert!(
        err.contains("--namespaced=true: widgets.acme.io/v1 Widget is cluster-scoped, as PROJECT")
            && err.contains("e.g. operator-rs create api --group widgets.acme.io --version v1 --kind Widget --external-api-path crate::external::Widget --namespaced=false"),
        "{err}"
    );
    ok(
        &dir,
        &words(&format!("{WIDGET} --controller=false --namespaced --force")),
    );
    let p = project(&dir);
    assert_eq!(p.resources[0].namespaced, Some(true));
    let roles = read(&dir, "config/rbac/role.yaml");
    let role = roles
        .split("---")
        .find(|d| d.contains("kind: Role\n"))
        .unwrap();
    assert!(role.contains("- widgets\n"), "{roles}");
}

#[test]
fn the_scope_of_a_kind_known_elsewhere_is_not_changed_by_a_flag() {
    let tmp = init_project("scope-known");
    let dir = project_dir(&tmp, "scope-known");
    ok(
        &dir,
        &words("create api --group cache --version v1 --kind Memcached"),
    );
    for (line, expected) in [
        (
            "create api --group apps --version v1 --kind Deployment --resource=false --namespaced=false",
            "--namespaced=false: apps/v1 Deployment is namespaced, as k8s-openapi says",
        ),
        (
            "create api --group core --version v1 --kind Namespace --resource=false --namespaced",
            "--namespaced=true: core/v1 Namespace is cluster-scoped, as k8s-openapi says",
        ),
        (
            "create api --group cache --version v1 --kind Memcached --resource=false --namespaced=false --force",
            "Memcached is namespaced, as its CRD in this project (PROJECT) says",
        ),
    ] {
        let err = refused(&dir, &words(line));
        assert!(err.contains(expected), "`{line}`: {err}");
        assert!(
            err.contains("e.g. operator-rs create api"),
            "`{line}`: {err}"
        );
    }
    // Agreeing with it is fine.
    ok(
        &dir,
        &words(
            "create api --group core --version v1 --kind Namespace --resource=false --namespaced=false",
        ),
    );
}

/// Whether cargo reaches the crates.io index (the check of `--external-api-crate` asks it).
fn registry_reachable() -> bool {
    std::process::Command::new(env!("CARGO"))
        .args(["info", "serde", "--quiet"])
        .current_dir(std::env::temp_dir())
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `--external-api-crate` is checked as kubebuilder's `go get` checks a module (issue 31, 17: the
/// README's `kcr_cert_manager_io@0.2` does not exist and the command exited 0): a version the
/// registry lacks, or a crate it lacks, is refused with cargo's reason and what to do, and
/// nothing is written; the README's example resolves.
#[test]
fn an_external_crate_that_does_not_resolve_is_refused() {
    if !registry_reachable() {
        eprintln!(
            "SKIPPED an_external_crate_that_does_not_resolve_is_refused: cargo cannot reach the crates.io index"
        );
        return;
    }
    let tmp = init_project("resolve-op");
    let dir = project_dir(&tmp, "resolve-op");
    for spec in [
        "kcr_cert_manager_io@0.2",
        "kcr_cert_manager_io@=3.1.0",
        "no_such_crate_of_operator_rs_tests@1",
    ] {
        let line = CERT.replace("kcr_cert_manager_io@3", spec).replace(
            "kcr_cert_manager_io::v1",
            &format!("{}::v1", spec.split('@').next().unwrap()),
        );
        let before = snapshot(&dir);
        let r = run(&dir, &words(&line));
        assert_eq!(r.code, 2, "{spec}: {}", r.stderr);
        for needle in [
            &format!("--external-api-crate {spec} does not resolve: cargo says") as &str,
            "Nothing was written",
            "e.g. --external-api-crate ",
        ] {
            assert!(
                r.stderr.contains(needle),
                "{spec}: {needle:?} not in\n{}",
                r.stderr
            );
        }
        assert_eq!(snapshot(&dir), before, "{spec}: the folder changed");
    }
    // The README's example, as written there.
    let readme = readme::our_readme();
    let at = readme
        .find("--external-api-crate kcr_cert_manager_io@")
        .unwrap();
    let spec = readme[at..].split_whitespace().nth(1).unwrap();
    let line = CERT.replace("kcr_cert_manager_io@3", spec);
    ok(&dir, &words(&line));
}
