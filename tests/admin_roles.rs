//! The per-kind admin, editor and viewer roles of `config/rbac` (`create api` writes them, as
//! kubebuilder does), held to the real API server's authorizer: bound to a user, the admin role
//! allows every verb on the kind (deletecollection included) and reading its status, the editor
//! every verb but deletecollection, the viewer only reading; none allows writing the status.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use operator_rs_runtime::testing::envtest::Envtest;

fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> (bool, String) {
    use std::io::Write;
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.unwrap_or("").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
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
fn admin_editor_and_viewer_roles_grant_what_they_say_on_a_real_api_server() {
    let tmp = init_project("roles-op");
    let dir = project_dir(&tmp, "roles-op");
    ok(
        &dir,
        &words("create api --group fleet --version v1 --kind Lighthouse"),
    );
    let admin = read(&dir, "config/rbac/lighthouse_admin_role.yaml");
    assert!(admin.contains("name: lighthouse-admin-role"), "{admin}");
    let kustomization = read(&dir, "config/rbac/kustomization.yaml");
    for file in [
        "lighthouse_admin_role.yaml",
        "lighthouse_editor_role.yaml",
        "lighthouse_viewer_role.yaml",
    ] {
        assert!(
            kustomization.contains(&format!("- {file}")),
            "{kustomization}"
        );
    }
    if !Envtest::available() {
        return;
    }
    let env = Envtest::shared().expect("the control plane starts");
    let kubeconfig = env.kubeconfig();
    // The roles as config/default renders them, each bound to a user of its own.
    let docs = kustomize(&dir, "config/default");
    let roles: Vec<_> = of_kind(&docs, "ClusterRole")
        .into_iter()
        .filter(|r| {
            let name = r["metadata"]["name"].as_str().unwrap();
            name.starts_with("roles-op-lighthouse-")
        })
        .cloned()
        .collect();
    assert_eq!(roles.len(), 3, "{roles:?}");
    // The kind's CRD, so that kubectl resolves the resource.
    let mut objects: Vec<serde_json::Value> = of_kind(&docs, "CustomResourceDefinition")
        .into_iter()
        .cloned()
        .collect();
    objects.extend(roles.iter().cloned());
    for role in &roles {
        let name = role["metadata"]["name"].as_str().unwrap();
        objects.push(serde_json::json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}],
        }));
    }
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": objects});
    let (applied, out) = kubectl(
        kubeconfig,
        &["apply", "--server-side", "-f", "-"],
        Some(&list.to_string()),
    );
    assert!(applied, "{out}");
    let (established, out) = kubectl(
        kubeconfig,
        &[
            "wait",
            "--for=condition=Established",
            "crd/lighthouses.fleet.example.com",
        ],
        None,
    );
    assert!(established, "{out}");
    let can = |user: &str, verb: &str, subresource: &str| {
        let as_user = format!("roles-op-lighthouse-{user}");
        let mut args = vec![
            "auth",
            "can-i",
            verb,
            "lighthouses.fleet.example.com",
            "--as",
            &as_user,
            "-n",
            "default",
        ];
        if !subresource.is_empty() {
            args.extend(["--subresource", subresource]);
        }
        let (_, out) = kubectl(kubeconfig, &args, None);
        eprintln!("{user} {verb} {subresource}: {}", out.trim());
        out.lines().last().unwrap_or("").trim() == "yes"
    };
    for (user, verbs_allowed) in [
        (
            "admin-role",
            &[
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ][..],
        ),
        (
            "editor-role",
            &[
                "create", "delete", "get", "list", "patch", "update", "watch",
            ][..],
        ),
        ("viewer-role", &["get", "list", "watch"][..]),
    ] {
        for verb in [
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ] {
            assert_eq!(
                can(user, verb, ""),
                verbs_allowed.contains(&verb),
                "{user} {verb} lighthouses"
            );
        }
        assert!(can(user, "get", "status"), "{user} reads status");
        assert!(!can(user, "update", "status"), "{user} cannot write status");
    }
}
