//! Namespace-scoped managers: `init --namespaced` and `create api` give Roles and RoleBindings
//! (rendered with `kubectl kustomize`, and honoured by a real API server), and `edit
//! --namespaced[=false]` switches a project either way to exactly what `init` would have made,
//! refusing to overwrite the user's edits without `--force`. In any project, the Roles of RBAC
//! markers with `namespace=` stay in their namespaces in `make deploy`'s manifests, bound to the
//! manager's ServiceAccount.

mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

const NAME: &str = "scoped-op";

/// A project `NAME` made with `init` (plus `init_flags`), `create api` for Memcached and a
/// defaulting webhook for it (which adds to src/main.rs next to what the scope changes).
fn project(init_flags: &[&str]) -> tempfile::TempDir {
    project_named(NAME, init_flags)
}

/// [`project`] named `name`.
fn project_named(name: &str, init_flags: &[&str]) -> tempfile::TempDir {
    let tmp = tempfile::Builder::new()
        .prefix("operator-rs-test-")
        .tempdir()
        .unwrap();
    let dir = tmp.path().join(name);
    std::fs::create_dir(&dir).unwrap();
    let mut init = vec!["init", "--domain", "example.com"];
    init.extend(init_flags);
    ok(&dir, &init);
    ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
        ],
    );
    ok(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--defaulting",
        ],
    );
    tmp
}

fn names(docs: &[&Value]) -> Vec<String> {
    let mut names: Vec<String> = (docs.iter())
        .map(|d| d["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn init_namespaced_and_create_api_give_roles_not_cluster_roles() {
    let tmp = project(&["--namespaced"]);
    let dir = project_dir(&tmp, NAME);
    assert!(read(&dir, "PROJECT").contains("\nnamespaced: true\n"));
    assert!(read(&dir, "src/main.rs").contains(".await?.namespaced();"));
    let docs = kustomize(&dir, "config/default");
    // Only the metrics endpoint's reader, which guards a URL, stays cluster-wide (as
    // kubebuilder's metrics roles do).
    let cluster_roles = of_kind(&docs, "ClusterRole");
    assert!(
        names(&cluster_roles).iter().all(|n| n.contains("metrics")),
        "{:?}",
        names(&cluster_roles)
    );
    assert!(
        (of_kind(&docs, "ClusterRoleBinding").iter())
            .all(|b| b["roleRef"]["name"].as_str().unwrap().contains("metrics")),
        "{docs:?}"
    );
    let roles = of_kind(&docs, "Role");
    assert_eq!(
        names(&roles),
        [
            "scoped-op-leader-election-role",
            "scoped-op-manager-role",
            "scoped-op-memcached-admin-role",
            "scoped-op-memcached-editor-role",
            "scoped-op-memcached-viewer-role",
        ]
    );
    assert!(
        (roles.iter()).all(|r| r["metadata"]["namespace"] == "scoped-op-system"),
        "{roles:?}"
    );
    let manager = (roles.iter())
        .find(|r| r["metadata"]["name"] == "scoped-op-manager-role")
        .unwrap();
    assert!(
        manager["rules"].to_string().contains("\"memcacheds\""),
        "{manager}"
    );
    let binding = (of_kind(&docs, "RoleBinding").into_iter())
        .find(|b| b["metadata"]["name"] == "scoped-op-manager-rolebinding")
        .expect("the manager's RoleBinding");
    assert_eq!(binding["metadata"]["namespace"], "scoped-op-system");
    assert_eq!(binding["roleRef"]["kind"], "Role");
    assert_eq!(binding["roleRef"]["name"], "scoped-op-manager-role");
    assert_eq!(
        binding["subjects"][0]["name"],
        "scoped-op-controller-manager"
    );
    assert_eq!(binding["subjects"][0]["namespace"], "scoped-op-system");

    // On a real API server: the ServiceAccount may watch memcacheds in its namespace only.
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
            use k8s_openapi::api::authorization::v1::SelfSubjectAccessReview;
            use kube::api::{Api, PostParams};
            let namespace = env.create_namespace("scoped").await.unwrap();
            let access = env
                .service_account_from_kustomize(
                    &namespace,
                    "controller-manager",
                    dir.join("config/rbac"),
                )
                .await
                .unwrap();
            let reviews: Api<SelfSubjectAccessReview> = Api::all(access.client().unwrap());
            let allowed = |ns: Option<&str>, verb: &str| {
                let review: SelfSubjectAccessReview = serde_json::from_value(serde_json::json!({
                    "spec": {"resourceAttributes": {
                        "group": "cache.example.com", "resource": "memcacheds",
                        "verb": verb, "namespace": ns,
                    }}
                }))
                .unwrap();
                let reviews = reviews.clone();
                async move {
                    let answer = reviews
                        .create(&PostParams::default(), &review)
                        .await
                        .unwrap();
                    answer.status.unwrap().allowed
                }
            };
            assert!(allowed(Some(&namespace), "watch").await);
            assert!(allowed(Some(&namespace), "update").await);
            assert!(!allowed(Some("default"), "watch").await);
            assert!(
                !allowed(None, "watch").await,
                "a cluster-wide watch is granted"
            );
        });
}

/// The project's files, but the lock and transaction folder operator-rs keeps.
fn files(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut files = snapshot(dir);
    files.retain(|p, _| !p.starts_with(".operator-rs"));
    files
}

#[test]
fn edit_namespaced_switches_both_ways_to_what_init_makes() {
    let cluster = project(&[]);
    let namespaced = project(&["--namespaced"]);
    let (dir, expected) = (project_dir(&cluster, NAME), project_dir(&namespaced, NAME));
    let original = files(&dir);
    let r = ok(&dir, &["edit", "--namespaced"]);
    assert!(r.stderr.contains("now namespace-scoped"), "{}", r.stderr);
    let switched = files(&dir);
    for (path, text) in files(&expected) {
        assert_eq!(
            switched
                .get(&path)
                .map(|t| String::from_utf8_lossy(t).into_owned()),
            Some(String::from_utf8_lossy(&text).into_owned()),
            "{}",
            path.display()
        );
    }
    assert_eq!(switched.len(), files(&expected).len());
    // Again: nothing to do.
    let r = ok(&dir, &["edit", "--namespaced=true"]);
    assert!(
        r.stderr.contains("already namespace-scoped"),
        "{}",
        r.stderr
    );
    assert_eq!(files(&dir), switched);
    ok(&dir, &["edit", "--namespaced=false"]);
    assert_eq!(files(&dir), original);
}

#[test]
fn edit_namespaced_keeps_edits_elsewhere_and_refuses_edits_where_it_writes() {
    let tmp = project(&[]);
    let dir = project_dir(&tmp, NAME);
    // An edit outside what the scope changes stays.
    let viewer = dir.join("config/rbac/memcached_viewer_role.yaml");
    let mut text = std::fs::read_to_string(&viewer).unwrap();
    text.push_str("# reviewed by the platform team\n");
    std::fs::write(&viewer, &text).unwrap();
    // An edit inside it is refused, every such file listed, nothing written.
    let binding = dir.join("config/rbac/role_binding.yaml");
    let edited = std::fs::read_to_string(&binding)
        .unwrap()
        .replace("  name: manager-rolebinding\n", "  name: my-binding\n");
    std::fs::write(&binding, &edited).unwrap();
    let before = files(&dir);
    let r = run(&dir, &["edit", "--namespaced"]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("config/rbac/role_binding.yaml")
            && r.stderr.contains("--force")
            && !r.stderr.contains("viewer"),
        "{}",
        r.stderr
    );
    assert_eq!(files(&dir), before, "something was written");

    let r = ok(&dir, &["edit", "--namespaced", "--force"]);
    assert!(r.stderr.contains("role_binding.yaml"), "{}", r.stderr);
    let binding = read(&dir, "config/rbac/role_binding.yaml");
    assert!(
        binding.contains("kind: RoleBinding\n")
            && binding.contains("  name: manager-rolebinding\n")
    );
    let viewer = read(&dir, "config/rbac/memcached_viewer_role.yaml");
    assert!(
        viewer.contains("kind: Role\n") && viewer.ends_with("# reviewed by the platform team\n")
    );
    assert!(read(&dir, "PROJECT").contains("\nnamespaced: true\n"));
}

#[test]
fn edit_namespaced_never_overwrites_rust_it_cannot_patch() {
    let tmp = project(&[]);
    let dir = project_dir(&tmp, NAME);
    edit_refuses_rust_it_cannot_patch(&dir, "--namespaced", ".namespaced()");
}

#[test]
fn edit_without_a_change_says_what_it_takes() {
    let tmp = project(&[]);
    let dir = project_dir(&tmp, NAME);
    let r = run(&dir, &["edit"]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("--namespaced")
            && r.stderr.contains("e.g. operator-rs edit --namespaced"),
        "{}",
        r.stderr
    );
    let r = run(&dir, &["edit", "--namespaced=maybe"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("maybe"), "{}", r.stderr);
}

/// Markers granting in two other namespaces (one with two roles, one of them named).
const OTHER_NAMESPACE_MARKERS: &str = "\
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get,namespace=team-a
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=list,namespace=team-b
// +kubebuilder:rbac:groups=core,resources=configmaps,verbs=get,namespace=team-b,roleName=config-reader
";

#[test]
fn rbac_markers_of_other_namespaces_keep_their_namespace_and_bind_the_manager() {
    for (name, flags) in [("teams-ns-op", &["--namespaced"][..]), ("teams-cl-op", &[])] {
        let tmp = project_named(name, flags);
        let dir = project_dir(&tmp, name);
        let controller = read(&dir, "src/controllers/memcached.rs");
        let at = controller
            .find("// +kubebuilder:rbac:")
            .expect("the controller's markers");
        let controller = format!(
            "{}{OTHER_NAMESPACE_MARKERS}{}",
            &controller[..at],
            &controller[at..]
        );
        std::fs::write(dir.join("src/controllers/memcached.rs"), controller).unwrap();
        ok(&dir, &["generate", "rbac"]);
        let docs = kustomize(&dir, "config/default");

        let system = format!("{name}-system");
        let placed = |kind: &str| -> Vec<String> {
            let mut placed: Vec<String> = (of_kind(&docs, kind).iter())
                .filter(|d| d["metadata"]["namespace"] != system.as_str())
                .map(|d| {
                    format!(
                        "{} {}",
                        d["metadata"]["namespace"].as_str().unwrap(),
                        d["metadata"]["name"].as_str().unwrap()
                    )
                })
                .collect();
            placed.sort();
            placed
        };
        let prefixed = |s: &str| s.replace("$", name);
        assert_eq!(
            placed("Role"),
            [
                "team-a $-manager-role",
                "team-b $-config-reader",
                "team-b $-manager-role"
            ]
            .map(prefixed),
            "{name}"
        );
        assert_eq!(
            placed("RoleBinding"),
            [
                "team-a $-manager-rolebinding",
                "team-b $-config-reader-binding",
                "team-b $-manager-rolebinding"
            ]
            .map(prefixed),
            "{name}"
        );
        for binding in of_kind(&docs, "RoleBinding")
            .iter()
            .chain(&of_kind(&docs, "ClusterRoleBinding"))
        {
            let subject = &binding["subjects"][0];
            assert_eq!(
                subject["name"],
                format!("{name}-controller-manager"),
                "{binding}"
            );
            assert_eq!(subject["namespace"], system.as_str(), "{binding}");
        }
        allowed_exactly_in_their_namespaces(&docs, name);
    }
}

/// On a real API server, with the RBAC of `docs` (config/default) applied: the manager's
/// ServiceAccount may do what the markers grant in their namespaces, and nowhere else.
fn allowed_exactly_in_their_namespaces(docs: &[Value], name: &str) {
    use operator_rs_runtime::testing::envtest::Envtest;
    if !Envtest::available() {
        eprintln!("SKIPPED the API server half of this test: KUBEBUILDER_ASSETS is not set");
        return;
    }
    let env = Envtest::shared().expect("the control plane starts");
    let rbac = [
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
    ];
    let namespaces = ["team-a", "team-b"].map(
        |n| serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}),
    );
    let items: Vec<&Value> = (of_kind(docs, "Namespace").into_iter())
        .chain(&namespaces)
        .chain(docs.iter().filter(|d| rbac.iter().any(|k| d["kind"] == *k)))
        .collect();
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    let mut child = std::process::Command::new("kubectl")
        .arg(format!("--kubeconfig={}", env.kubeconfig().display()))
        .args(["apply", "--server-side", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(list.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let user = format!("system:serviceaccount:{name}-system:{name}-controller-manager");
    let groups = [
        "system:serviceaccounts".to_string(),
        format!("system:serviceaccounts:{name}-system"),
        "system:authenticated".into(),
    ];
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        use k8s_openapi::api::authorization::v1::SubjectAccessReview;
        use kube::api::{Api, PostParams};
        let reviews: Api<SubjectAccessReview> = Api::all(env.client().unwrap());
        let allowed = |verb: &str, group: &str, resource: &str, namespace: Option<&str>| {
            let review: SubjectAccessReview = serde_json::from_value(serde_json::json!({
                "spec": {"user": user, "groups": groups, "resourceAttributes": {
                    "verb": verb, "group": group, "resource": resource, "namespace": namespace,
                }}
            }))
            .unwrap();
            let reviews = reviews.clone();
            async move {
                let answer = reviews
                    .create(&PostParams::default(), &review)
                    .await
                    .unwrap();
                answer.status.unwrap().allowed
            }
        };
        // What the markers grant (new bindings may take a moment to reach the authorizer).
        let granted = [
            ("get", "apps", "deployments", "team-a"),
            ("list", "", "secrets", "team-b"),
            ("get", "", "configmaps", "team-b"),
        ];
        for (verb, group, resource, namespace) in granted {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
            while !allowed(verb, group, resource, Some(namespace)).await {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{name}: {verb} {resource} in {namespace} is not granted"
                );
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
        // Nowhere else: not in the other team's namespace, the manager's, or cluster-wide.
        let system = format!("{name}-system");
        for (verb, group, resource, namespace) in [
            ("get", "apps", "deployments", Some("team-b")),
            ("get", "apps", "deployments", Some(system.as_str())),
            ("get", "apps", "deployments", None),
            ("list", "", "secrets", Some("team-a")),
            ("list", "", "secrets", None),
            ("get", "", "configmaps", Some("team-a")),
        ] {
            assert!(
                !allowed(verb, group, resource, namespace).await,
                "{name}: {verb} {resource} in {namespace:?}"
            );
        }
    });
}

/// In a namespace-scoped project, a cluster-scoped kind's editor and viewer roles are
/// ClusterRoles (issue 31, 18: they were Roles, which cannot grant a cluster-scoped resource);
/// a namespaced kind's stay Roles. On a real API server, a user bound to each rendered editor role
/// as its kind allows (a ClusterRoleBinding, a RoleBinding in a namespace) may create objects of
/// its kind where the kind lives: cluster-wide for the cluster-scoped one.
#[test]
fn a_cluster_scoped_kind_gets_cluster_roles_in_a_namespaced_project() {
    let tmp = project_named("scope-kinds-op", &["--namespaced"]);
    let dir = project_dir(&tmp, "scope-kinds-op");
    ok(
        &dir,
        &words(
            "create api --group cache --version v1alpha1 --kind Admiral --namespaced=false --controller=false",
        ),
    );
    let docs = kustomize(&dir, "config/rbac");
    let named = |kind: &str, name: &str| {
        (of_kind(&docs, kind).into_iter())
            .find(|d| d["metadata"]["name"] == name)
            .cloned()
    };
    for role in ["admiral-editor-role", "admiral-viewer-role"] {
        assert!(
            named("ClusterRole", role).is_some(),
            "{role} is not a ClusterRole: {docs:?}"
        );
        assert!(named("Role", role).is_none(), "{role} is a Role");
    }
    for role in ["memcached-editor-role", "memcached-viewer-role"] {
        assert!(
            named("Role", role).is_some(),
            "{role} is not a Role: {docs:?}"
        );
    }

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
            use k8s_openapi::api::authorization::v1::SubjectAccessReview;
            use kube::api::{Api, DynamicObject, PostParams};
            use kube::discovery::ApiResource;
            let client = env.client().unwrap();
            let namespace = env.create_namespace("scope-kinds").await.unwrap();
            let user = format!("editor-of-{namespace}");
            for (plural, role_name) in [("admirals", "admiral-editor-role"), ("memcacheds", "memcached-editor-role")] {
                // The role as rendered (a unique name), in the namespace if it is a Role.
                let (kind, mut role) = match named("ClusterRole", role_name) {
                    Some(r) => ("ClusterRole", r),
                    None => ("Role", named("Role", role_name).unwrap()),
                };
                let unique = format!("{namespace}-{role_name}");
                role["metadata"] = serde_json::json!({"name": unique});
                let binding_kind = if kind == "Role" { "RoleBinding" } else { "ClusterRoleBinding" };
                let binding = serde_json::json!({
                    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": binding_kind,
                    "metadata": {"name": unique},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": unique},
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
                });
                for obj in [role, binding] {
                    let k = obj["kind"].as_str().unwrap().to_string();
                    let ar = ApiResource {
                        group: "rbac.authorization.k8s.io".into(),
                        version: "v1".into(),
                        api_version: "rbac.authorization.k8s.io/v1".into(),
                        kind: k.clone(),
                        plural: format!("{}s", k.to_lowercase()),
                    };
                    let api: Api<DynamicObject> = if k.starts_with("Cluster") {
                        Api::all_with(client.clone(), &ar)
                    } else {
                        Api::namespaced_with(client.clone(), &namespace, &ar)
                    };
                    let obj: DynamicObject = serde_json::from_value(obj).unwrap();
                    api.create(&PostParams::default(), &obj).await.unwrap();
                }
                // Where the kind lives: cluster-wide for admirals, the namespace for memcacheds.
                let ns = (plural == "memcacheds").then_some(namespace.as_str());
                let review: SubjectAccessReview = serde_json::from_value(serde_json::json!({
                    "spec": {"user": user, "resourceAttributes": {
                        "group": "cache.example.com", "resource": plural,
                        "verb": "create", "namespace": ns,
                    }}
                }))
                .unwrap();
                let reviews: Api<SubjectAccessReview> = Api::all(client.clone());
                // The authorizer sees new bindings once its informers have them: up to 20 s.
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
                loop {
                    let answer = reviews.create(&PostParams::default(), &review).await.unwrap();
                    if answer.status.is_some_and(|s| s.allowed) {
                        break;
                    }
                    assert!(
                        std::time::Instant::now() < deadline,
                        "{plural}: the rendered {kind} {role_name} does not let its user create them"
                    );
                    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                }
            }
        });
}
