//! envtest itself, on the real control plane: CRDs installed and served, RBAC-limited
//! clients, restarts that keep the data, garbage collection and namespace deletion by
//! kube-controller-manager, teardown of a killed run, and the visible skip.

use crate::support;

use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, PostParams};
use kube::core::GroupVersionKind;
use operator_rs_runtime::skip_unless_available;
use operator_rs_runtime::testing::envtest::{Envtest, Error};

use support::{config_map, eventually_async, gone};

const WIDGETS: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.envtest.example.com
spec:
  group: envtest.example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
";

fn widgets() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("envtest.example.com", "v1", "Widget"),
        "widgets",
    )
}

fn widget(name: &str, size: i64) -> DynamicObject {
    DynamicObject::new(name, &widgets()).data(serde_json::json!({"spec": {"size": size}}))
}

#[tokio::test]
async fn crds_from_a_folder_are_established_and_served() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let dir = tempfile::tempdir()?;
    let gadgets = WIDGETS
        .replace("widget", "gadget")
        .replace("Widget", "Gadget");
    std::fs::write(
        dir.path().join("crds.yaml"),
        format!("{WIDGETS}---\n{gadgets}"),
    )?;
    std::fs::write(
        dir.path().join("kustomization.yaml"),
        "resources: [crds.yaml]\n",
    )?;

    let installed = env.install_crds(dir.path()).await?;
    let names: Vec<_> = installed
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(
        names,
        ["widgets.envtest.example.com", "gadgets.envtest.example.com"]
    );

    // Served at once: an object of the new kind is stored and read back.
    let namespace = env.create_namespace("crds").await?;
    let api = Api::<DynamicObject>::namespaced_with(env.client()?, &namespace, &widgets());
    api.create(&PostParams::default(), &widget("first", 3))
        .await?;
    let stored = api.get("first").await?;
    assert_eq!(stored.data["spec"]["size"], 3);

    // Installing again is a no-op apply.
    assert_eq!(
        env.install_crds(dir.path().join("crds.yaml")).await?.len(),
        2
    );
    Ok(())
}

#[tokio::test]
async fn a_refused_crd_is_named_with_the_api_servers_reason() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("bad.yaml");
    let bad = WIDGETS
        .replace("widget", "bad")
        .replace("Widget", "Bad")
        .replace("Namespaced", "Sideways");
    std::fs::write(&file, bad)?;
    let error = env.install_crds(&file).await.unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, Error::CrdRefused { .. }), "{error:?}");
    assert!(message.contains("bads.envtest.example.com"), "{message}");
    assert!(message.contains(&file.display().to_string()), "{message}");
    assert!(
        message.contains("spec.scope"),
        "the API server's reason is missing: {message}"
    );
    Ok(())
}

const RBAC: &str = "apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: leader-election-role, namespace: system}
rules:
- apiGroups: ['']
  resources: [configmaps]
  verbs: [get, list, create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: leader-election-rolebinding, namespace: system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: leader-election-role}
subjects:
- {kind: ServiceAccount, name: controller-manager, namespace: system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: manager-role}
rules:
- apiGroups: ['']
  resources: [namespaces]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: manager-rolebinding}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: manager-role}
subjects:
- {kind: ServiceAccount, name: controller-manager, namespace: system}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: controller-manager, namespace: system}
";

/// Whether `result` is a 403 from the API server.
fn forbidden<T: std::fmt::Debug>(result: kube::Result<T>) -> bool {
    matches!(result, Err(kube::Error::Api(status)) if status.code == 403)
}

#[tokio::test]
async fn a_service_account_client_has_exactly_its_rbac() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    // config/rbac as a project has it, rendered by `kubectl kustomize` with a name prefix.
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("rbac.yaml"), RBAC)?;
    std::fs::write(
        dir.path().join("kustomization.yaml"),
        "namePrefix: project-\nresources: [rbac.yaml]\n",
    )?;
    let namespace = env.create_namespace("rbac").await?;
    let access = env
        .service_account_from_kustomize(&namespace, "manager", dir.path())
        .await?;
    assert_eq!(
        access.username(),
        format!("system:serviceaccount:{namespace}:manager")
    );

    let client = access.client()?;
    let maps: Api<ConfigMap> = Api::default_namespaced(client.clone());
    maps.create(&PostParams::default(), &config_map("allowed", &[]))
        .await?;
    let listed = maps.list(&ListParams::default()).await?;
    assert!(
        listed
            .items
            .iter()
            .any(|m| m.metadata.name.as_deref() == Some("allowed"))
    );
    Api::<Namespace>::all(client.clone())
        .get(&namespace)
        .await?;

    // Not granted: another verb, another resource, another namespace.
    assert!(forbidden(
        maps.delete("allowed", &DeleteParams::default()).await
    ));
    assert!(forbidden(
        Api::<Secret>::default_namespaced(client.clone())
            .list(&ListParams::default())
            .await
    ));
    assert!(forbidden(
        Api::<ConfigMap>::namespaced(client, "default")
            .list(&ListParams::default())
            .await
    ));

    // The kubeconfig file authenticates as the same ServiceAccount.
    let kubeconfig = kube::config::Kubeconfig::read_from(access.kubeconfig())?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
    let from_file: Api<ConfigMap> = Api::default_namespaced(kube::Client::try_from(config)?);
    assert!(from_file.get_opt("allowed").await?.is_some());
    assert!(forbidden(
        from_file.delete("allowed", &DeleteParams::default()).await
    ));
    Ok(())
}

#[tokio::test]
async fn manifests_that_are_not_rbac_are_refused_with_the_document() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let manifests =
        format!("{RBAC}---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: x}}\n");
    let error = env
        .service_account("default", "refused", &manifests)
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("document 6 is a Deployment"), "{message}");
    Ok(())
}

/// The Role and RoleBinding `generate rbac` writes for a marker's `namespace=<other>`: same name
/// as the manager's own Role, a subject without a namespace.
const OTHER_NAMESPACE_RBAC: &str = "
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: manager-role}
rules:
- {apiGroups: [''], resources: [configmaps], verbs: [get, list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: manager-role, namespace: OTHER}
rules:
- {apiGroups: [''], resources: [secrets], verbs: [list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: manager-rolebinding, namespace: system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: manager-role}
subjects: [{kind: ServiceAccount, name: controller-manager, namespace: system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: manager-rolebinding, namespace: OTHER}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: manager-role}
subjects: [{kind: ServiceAccount, name: controller-manager}]
";

#[tokio::test]
async fn roles_of_other_namespaces_stay_there_and_bind_the_service_account() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let namespace = env.create_namespace("own").await?;
    // Not created: the RBAC of another namespace creates it.
    let other = format!("{namespace}-other");
    let rbac = OTHER_NAMESPACE_RBAC.replace("OTHER", &other);
    let client = env
        .service_account(&namespace, "manager", &rbac)
        .await?
        .client()?;

    // Each Role grants in its own namespace only; the one of `other` did not replace the
    // manager's own Role of the same name.
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    maps.list(&ListParams::default()).await?;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &other);
    secrets.list(&ListParams::default()).await?;
    let own_secrets: Api<Secret> = Api::namespaced(client.clone(), &namespace);
    assert!(forbidden(own_secrets.list(&ListParams::default()).await));
    let other_maps: Api<ConfigMap> = Api::namespaced(client, &other);
    assert!(forbidden(other_maps.list(&ListParams::default()).await));
    Ok(())
}

#[tokio::test]
async fn restarts_of_apiserver_and_etcd_keep_the_data_and_stop_tears_down() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    // A control plane of its own: the outages must not hit the other tests.
    let env = Envtest::builder().controller_manager(false).start()?;
    assert!(!env.has_controller_manager());
    let server = env.server();
    let maps: Api<ConfigMap> = Api::default_namespaced(env.client()?);
    maps.create(&PostParams::default(), &config_map("kept", &[("a", "1")]))
        .await?;

    env.restart_apiserver()?;
    assert_eq!(env.server(), server, "same port");
    // A fresh client: the old one's pooled connections went with the old process.
    let maps: Api<ConfigMap> = Api::default_namespaced(env.client()?);
    let kept = maps.get("kept").await?;
    assert_eq!(kept.data.unwrap()["a"], "1");

    env.restart_etcd()?;
    let maps: Api<ConfigMap> = Api::default_namespaced(env.client()?);
    assert!(maps.get_opt("kept").await?.is_some(), "etcd lost its data");
    maps.create(&PostParams::default(), &config_map("after", &[]))
        .await?;

    let dir = env.dir().to_owned();
    assert!(dir.join("etcd").is_dir());
    env.stop();
    env.stop(); // idempotent
    assert!(!dir.exists(), "the folder outlived stop()");
    assert!(matches!(env.restart_apiserver(), Err(Error::Stopped)));
    assert!(
        maps.get("kept").await.is_err(),
        "the API server still answers"
    );
    Ok(())
}

#[tokio::test]
async fn the_garbage_collector_deletes_what_a_deleted_owner_owned() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    assert!(
        env.has_controller_manager(),
        "kube-controller-manager is in KUBEBUILDER_ASSETS"
    );
    let namespace = env.create_namespace("gc").await?;
    let maps: Api<ConfigMap> = Api::namespaced(env.client()?, &namespace);
    let owner = maps
        .create(&PostParams::default(), &config_map("owner", &[]))
        .await?;
    let mut owned = config_map("owned", &[]);
    owned.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: "owner".into(),
        uid: owner.metadata.uid.clone().unwrap(),
        controller: Some(true),
        ..OwnerReference::default()
    }]);
    maps.create(&PostParams::default(), &owned).await?;
    let bystander = maps
        .create(&PostParams::default(), &config_map("bystander", &[]))
        .await?;

    maps.delete("owner", &DeleteParams::default()).await?;
    assert!(
        gone(&maps, "owned", Duration::from_secs(60)).await,
        "the owned ConfigMap outlived its owner by 60s"
    );
    let still = maps.get("bystander").await?;
    assert_eq!(
        still.metadata.uid, bystander.metadata.uid,
        "an unowned object was collected"
    );
    Ok(())
}

#[tokio::test]
async fn deleting_a_namespace_that_holds_objects_completes() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    env.install_crds(write_crd(WIDGETS)?.path()).await?;
    let namespace = env.create_namespace("doomed").await?;
    let client = env.client()?;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    maps.create(&PostParams::default(), &config_map("held", &[]))
        .await?;
    let widgets = Api::<DynamicObject>::namespaced_with(client.clone(), &namespace, &widgets());
    widgets
        .create(&PostParams::default(), &widget("held", 1))
        .await?;

    let namespaces: Api<Namespace> = Api::all(client);
    namespaces
        .delete(&namespace, &DeleteParams::default())
        .await?;
    assert!(
        gone(&namespaces, &namespace, Duration::from_secs(90)).await,
        "namespace {namespace} is still there 90s after its deletion"
    );
    Ok(())
}

fn write_crd(yaml: &str) -> std::io::Result<tempfile::NamedTempFile> {
    let mut file = tempfile::Builder::new().suffix(".yaml").tempfile()?;
    std::io::Write::write_all(&mut file, yaml.as_bytes())?;
    Ok(file)
}

/// The test binary itself, running only `test` with `env` changes.
fn run_self(test: &str, ignored: bool, env: &[(&str, Option<&Path>)]) -> std::process::Command {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    let test = crate::support::test_path(module_path!(), test);
    command.args([test.as_str(), "--exact", "--test-threads=1"]);
    if ignored {
        command.arg("--ignored");
    }
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    command
}

#[test]
fn without_assets_a_test_is_skipped_with_one_visible_line() {
    // Run a test of this binary with the variable unset, with the output captured as usual.
    let output = run_self(
        "a_service_account_client_has_exactly_its_rbac",
        false,
        &[("KUBEBUILDER_ASSETS", None)],
    )
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with("skipped envtest::a_service_account_client_has_exactly_its_rbac: KUBEBUILDER_ASSETS is not set; run `export KUBEBUILDER_ASSETS="),
        "{stderr}"
    );
}

/// Starts a control plane, prints its folder, and waits to be killed (for the test below).
#[tokio::test]
#[ignore = "run by killed_runs_leave_no_process_and_their_folder_goes_at_the_next_start"]
async fn helper_start_and_wait_to_be_killed() {
    let env = Envtest::builder()
        .controller_manager(false)
        .start()
        .unwrap();
    println!("DIR={}", env.dir().display());
    std::thread::sleep(Duration::from_secs(120));
}

#[tokio::test]
async fn killed_runs_leave_no_process_and_their_folder_goes_at_the_next_start() -> anyhow::Result<()>
{
    skip_unless_available!(Ok(()));
    use std::io::BufRead;
    let mut helper = run_self("helper_start_and_wait_to_be_killed", true, &[])
        .arg("--nocapture")
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    let stdout = std::io::BufReader::new(helper.stdout.take().unwrap());
    let dir = stdout
        .lines()
        .map_while(Result::ok)
        // With one test thread, libtest writes `test <name> ... ` before the test's output.
        .find_map(|line| {
            line.split_once("DIR=")
                .map(|(_, dir)| std::path::PathBuf::from(dir))
        })
        .expect("the helper started a control plane");
    let processes = support::processes_mentioning(&dir);
    assert_eq!(processes.len(), 2, "etcd and kube-apiserver: {processes:?}");

    helper.kill()?; // SIGKILL: no exit handler runs
    helper.wait()?;
    let stopped = eventually_async(Duration::from_secs(10), || async {
        support::processes_mentioning(&dir).is_empty()
    })
    .await;
    assert!(
        stopped,
        "left running: {:?}",
        support::processes_mentioning(&dir)
    );
    assert!(
        dir.exists(),
        "the folder of a killed run is removed by the next start"
    );

    let next = Envtest::builder().controller_manager(false).start()?;
    assert!(
        !dir.exists(),
        "the next start left the folder of the killed run"
    );
    next.stop();
    Ok(())
}
