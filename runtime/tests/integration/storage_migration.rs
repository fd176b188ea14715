//! Storage version migration on the real control plane: a kind stored as v1, its storage
//! moved to v2, every object rewritten across many list pages, `status.storedVersions`
//! narrowed, v1 removed; run twice, interrupted and resumed, objects deleted or changed
//! meanwhile, refusals (no CRD, no rights), the StorageVersionMigration API's path, and the
//! manager's one-shot task.

use crate::support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, PostParams, ResourceExt};
use kube::core::GroupVersionKind;
use operator_rs_runtime::skip_unless_available;
use operator_rs_runtime::storage::migration_api_version;
use operator_rs_runtime::storage::{Method, MigrationError, Options, Progress, migrate};
use operator_rs_runtime::testing::envtest::Envtest;
use serde_json::json;

/// The CRD `things.<group>` serving `versions` (the same schema in each, no conversion), the
/// one named `storage` stored.
fn crd(group: &str, versions: &[&str], storage: &str) -> CustomResourceDefinition {
    let versions: Vec<_> = versions
        .iter()
        .map(|v| {
            json!({
                "name": v, "served": true, "storage": *v == storage,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "integer"}, "note": {"type": "string"}}}}}},
            })
        })
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("things.{group}")},
        "spec": {
            "group": group,
            "names": {"kind": "Thing", "plural": "things", "singular": "thing", "listKind": "ThingList"},
            "scope": "Namespaced",
            "versions": versions,
        },
    }))
    .expect("a CRD")
}

fn things(group: &str, version: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, "Thing"), "things")
}

fn spec(i: usize) -> serde_json::Value {
    json!({"size": i, "note": format!("thing number {i}")})
}

/// A namespace with `count` Things written as v1 while v1 is stored, then the CRD's storage
/// moved to v2: returns the namespace.
async fn stored_as_v1_then_moved(
    env: &Envtest,
    group: &str,
    count: usize,
) -> anyhow::Result<String> {
    env.install_crd(&crd(group, &["v1"], "v1")).await?;
    let namespace = env.create_namespace("migrate").await?;
    let v1 = Api::<DynamicObject>::namespaced_with(env.client()?, &namespace, &things(group, "v1"));
    for i in 0..count {
        let object = DynamicObject::new(&format!("thing-{i:03}"), &things(group, "v1"))
            .data(json!({"spec": spec(i)}));
        v1.create(&PostParams::default(), &object).await?;
    }
    env.install_crd(&crd(group, &["v1", "v2"], "v2")).await?;
    assert_eq!(stored_versions(env, group).await?, ["v1", "v2"]);
    Ok(namespace)
}

async fn stored_versions(env: &Envtest, group: &str) -> anyhow::Result<Vec<String>> {
    let crd = Api::<CustomResourceDefinition>::all(env.client()?)
        .get(&format!("things.{group}"))
        .await?;
    Ok(crd
        .status
        .and_then(|s| s.stored_versions)
        .unwrap_or_default())
}

/// name -> (resourceVersion, spec) of every Thing, read as `version`.
async fn read_all(
    env: &Envtest,
    group: &str,
    version: &str,
    namespace: &str,
) -> anyhow::Result<BTreeMap<String, (String, serde_json::Value)>> {
    let api =
        Api::<DynamicObject>::namespaced_with(env.client()?, namespace, &things(group, version));
    Ok(api
        .list(&Default::default())
        .await?
        .items
        .into_iter()
        .map(|o| {
            let rv = o.resource_version().unwrap_or_default();
            (o.name_any(), (rv, o.data["spec"].clone()))
        })
        .collect())
}

/// Removing v1 from the CRD: what the migration exists for.
async fn remove_v1(
    env: &Envtest,
    group: &str,
) -> operator_rs_runtime::testing::envtest::Result<CustomResourceDefinition> {
    env.install_crd(&crd(group, &["v2"], "v2")).await
}

fn options(group: &str, page_size: u32) -> Options {
    Options {
        page_size,
        ..Options::new(group, "Thing")
    }
}

#[tokio::test]
async fn every_object_is_rewritten_across_pages_then_v1_can_be_removed() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let group = "pages.migrate.example.com";
    let namespace = stored_as_v1_then_moved(env, group, 25).await?;
    // The API server's own verdict: v1 cannot go while objects may be stored in it.
    let refused = remove_v1(env, group)
        .await
        .expect_err("v1 is still in storedVersions");
    assert!(refused.to_string().contains("storedVersions"), "{refused}");
    let before = read_all(env, group, "v2", &namespace).await?;

    let mut seen = Vec::new();
    let report = migrate(&env.client()?, &options(group, 4), |p| seen.push(p.clone())).await?;

    assert!(report.migrated);
    assert_eq!(report.storage_version, "v2");
    assert_eq!(report.stored_before, ["v1", "v2"]);
    assert_eq!(report.counts.rewritten, 25);
    assert_eq!((report.counts.gone, report.counts.conflicts), (0, 0));
    let pages = seen
        .iter()
        .filter(|p| matches!(p, Progress::Listed { .. }))
        .count();
    assert_eq!(pages, 7, "25 objects in pages of 4: {seen:?}");
    assert!(matches!(seen.last(), Some(Progress::Narrowed { to, .. }) if to == "v2"));
    assert_eq!(stored_versions(env, group).await?, ["v2"]);

    let after = read_all(env, group, "v2", &namespace).await?;
    assert_eq!(after.len(), 25);
    for (name, (rv, spec)) in &after {
        let (old_rv, old_spec) = &before[name];
        // Re-encoded in v2: the server wrote it (an update that changes nothing is not written).
        assert_ne!(rv, old_rv, "{name} was not written");
        assert_eq!(spec, old_spec, "{name}");
    }
    remove_v1(env, group).await?;
    let last = read_all(env, group, "v2", &namespace).await?;
    for i in 0..25 {
        assert_eq!(last[&format!("thing-{i:03}")].1, spec(i));
    }
    Ok(())
}

#[tokio::test]
async fn a_second_run_changes_nothing() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let group = "twice.migrate.example.com";
    let namespace = stored_as_v1_then_moved(env, group, 5).await?;
    let first = migrate(&env.client()?, &options(group, 2), |_| {}).await?;
    assert!(first.migrated);
    let after_first = read_all(env, group, "v2", &namespace).await?;

    let mut seen = Vec::new();
    let second = migrate(&env.client()?, &options(group, 2), |p| seen.push(p.clone())).await?;
    assert!(!second.migrated);
    assert_eq!(second.stored_before, ["v2"]);
    assert!(
        matches!(&seen[..], [Progress::AlreadyMigrated { .. }]),
        "{seen:?}"
    );
    assert_eq!(read_all(env, group, "v2", &namespace).await?, after_first);
    assert_eq!(stored_versions(env, group).await?, ["v2"]);
    Ok(())
}

#[tokio::test]
async fn an_interrupted_migration_is_completed_by_running_it_again() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let group = "resume.migrate.example.com";
    let namespace = stored_as_v1_then_moved(env, group, 12).await?;
    let before = read_all(env, group, "v2", &namespace).await?;

    // Dropped (as by Ctrl-C) once two pages of three are written.
    let stop = Arc::new(tokio::sync::Notify::new());
    let signal = stop.clone();
    let options = options(group, 3);
    let client = env.client()?;
    let run = migrate(&client, &options, move |p| {
        if matches!(p, Progress::Written { page: 2, .. }) {
            signal.notify_one();
        }
    });
    tokio::select! {
        done = run => panic!("the migration was to be interrupted, it ended: {done:?}"),
        _ = stop.notified() => {}
    }
    assert_eq!(
        stored_versions(env, group).await?,
        ["v1", "v2"],
        "narrowed before the end"
    );
    let midway = read_all(env, group, "v2", &namespace).await?;
    let written = midway
        .iter()
        .filter(|(n, (rv, _))| *rv != before[*n].0)
        .count();
    assert!(
        (6..12).contains(&written),
        "{written} of 12 written before the interruption"
    );
    assert!(remove_v1(env, group).await.is_err());

    let report = migrate(&env.client()?, &options, |_| {}).await?;
    assert!(report.migrated);
    assert_eq!(report.counts.rewritten, 12);
    assert_eq!(stored_versions(env, group).await?, ["v2"]);
    let after = read_all(env, group, "v2", &namespace).await?;
    for (name, (rv, spec)) in &after {
        assert_ne!(*rv, before[name].0, "{name} was never written");
        assert_eq!(*spec, before[name].1);
    }
    remove_v1(env, group).await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_deleted_or_changed_during_the_migration() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let group = "meanwhile.migrate.example.com";
    let namespace = stored_as_v1_then_moved(env, group, 6).await?;
    let v1 = Api::<DynamicObject>::namespaced_with(env.client()?, &namespace, &things(group, "v1"));

    // Once the first page is listed and before it is written: thing-000 changes (its write
    // as listed conflicts) and thing-001 is deleted (its write finds nothing).
    let handle = tokio::runtime::Handle::current();
    let meddled = Mutex::new(false);
    let report = migrate(&env.client()?, &options(group, 4), |p| {
        if matches!(p, Progress::Listed { page: 1, .. }) && !*meddled.lock().unwrap() {
            *meddled.lock().unwrap() = true;
            tokio::task::block_in_place(|| {
                handle.block_on(async {
                    let mut changed = v1.get("thing-000").await.unwrap();
                    changed.data["spec"]["size"] = json!(1000);
                    v1.replace("thing-000", &PostParams::default(), &changed)
                        .await
                        .unwrap();
                    v1.delete("thing-001", &DeleteParams::default())
                        .await
                        .unwrap();
                })
            });
        }
    })
    .await?;

    assert!(*meddled.lock().unwrap());
    assert_eq!(report.counts.gone, 1, "{report:?}");
    assert!(report.counts.conflicts >= 1, "{report:?}");
    assert_eq!(report.counts.rewritten, 5, "{report:?}");
    assert_eq!(stored_versions(env, group).await?, ["v2"]);
    remove_v1(env, group).await?;
    let after = read_all(env, group, "v2", &namespace).await?;
    assert!(!after.contains_key("thing-001"));
    // The retry wrote the object as changed, not the stale copy listed.
    assert_eq!(after["thing-000"].1["size"], 1000);
    assert_eq!(after["thing-005"].1, spec(5));
    Ok(())
}

#[tokio::test]
async fn refused_without_the_crd_or_without_rights() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let absent = migrate(
        &env.client()?,
        &Options::new("absent.example.com", "Thing"),
        |_| {},
    )
    .await;
    match absent {
        Err(e @ MigrationError::CrdNotFound { .. }) => {
            assert!(
                e.to_string()
                    .contains("kind Thing in group absent.example.com"),
                "{e}"
            )
        }
        other => panic!("expected CrdNotFound, got {other:?}"),
    }

    let group = "rights.migrate.example.com";
    let namespace = stored_as_v1_then_moved(env, group, 2).await?;
    // A reader: may list the objects and the CRDs, may not update them.
    let rbac = format!(
        "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {{name: migrate-reader}}
rules:
- apiGroups: [{group}]
  resources: [things]
  verbs: [get, list]
- apiGroups: [apiextensions.k8s.io]
  resources: [customresourcedefinitions]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {{name: migrate-reader}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: migrate-reader}}
subjects:
- {{kind: ServiceAccount, name: reader, namespace: {namespace}}}
"
    );
    let reader = env.service_account(&namespace, "reader", &rbac).await?;
    let before = read_all(env, group, "v2", &namespace).await?;
    match migrate(&reader.client()?, &options(group, 10), |_| {}).await {
        Err(e @ MigrationError::Forbidden { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("not allowed to update things.rights.migrate.example.com"),
                "{text}"
            );
        }
        other => panic!("expected Forbidden, got {other:?}"),
    }
    assert_eq!(
        read_all(env, group, "v2", &namespace).await?,
        before,
        "nothing written"
    );
    assert_eq!(stored_versions(env, group).await?, ["v1", "v2"]);
    Ok(())
}

#[tokio::test]
async fn the_storage_version_migration_api_when_served() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let group = "svm.migrate.example.com";
    let namespace = stored_as_v1_then_moved(env, group, 3).await?;
    let served = migration_api_version(&env.client()?).await?;
    let options = Options {
        method: Method::StorageVersionMigration,
        timeout: std::time::Duration::from_secs(60),
        ..Options::new(group, "Thing")
    };
    let outcome = migrate(&env.client()?, &options, |_| {}).await;
    match served {
        None => {
            // kube-apiserver 1.36 serves it only behind a feature gate: refused, nothing done.
            eprintln!(
                "storagemigration.k8s.io is not served by this kube-apiserver: checking the refusal"
            );
            assert!(
                matches!(outcome, Err(MigrationError::MigrationApiNotServed)),
                "{outcome:?}"
            );
            assert_eq!(stored_versions(env, group).await?, ["v1", "v2"]);
        }
        Some(version) => {
            eprintln!("storagemigration.k8s.io/{version} is served: migrating through it");
            assert!(outcome?.migrated);
            assert_eq!(stored_versions(env, group).await?, ["v2"]);
            remove_v1(env, group).await?;
            assert_eq!(read_all(env, group, "v2", &namespace).await?.len(), 3);
        }
    }
    Ok(())
}

#[tokio::test]
async fn a_manager_runs_the_migration_once() -> anyhow::Result<()> {
    use operator_rs_runtime::manager::{Manager, ManagerArgs};
    use operator_rs_runtime::storage::migration_task;
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let group = "manager.migrate.example.com";
    let namespace = stored_as_v1_then_moved(env, group, 4).await?;
    let before = read_all(env, group, "v2", &namespace).await?;
    let args: ManagerArgs = support::parse([
        "manager",
        "--metrics-bind-address=127.0.0.1:0",
        "--health-probe-bind-address=127.0.0.1:0",
    ])?;
    let manager = Manager::with_client("migrating-operator", args, env.client()?).await?;
    let shutdown = manager.shutdown();
    let run = tokio::spawn(manager.run(vec![migration_task("migrate-things", options(group, 3))]));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while stored_versions(env, group).await? != ["v2"] {
        assert!(
            std::time::Instant::now() < deadline,
            "the manager never migrated"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    for (name, (rv, spec)) in read_all(env, group, "v2", &namespace).await? {
        assert_ne!(rv, before[&name].0, "{name} was not written");
        assert_eq!(spec, before[&name].1);
    }
    shutdown.trigger();
    run.await??;
    Ok(())
}

/// kube-apiserver and kube-controller-manager 1.36 with the StorageVersionMigrator feature
/// gate on and storagemigration.k8s.io/v1beta1 served: the migration through a
/// StorageVersionMigration that kube-controller-manager carries out.
#[test]
fn a_storage_version_migration_on_a_server_with_the_gate() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::builder()
        .apiserver_arg("--feature-gates=StorageVersionMigrator=true")
        .apiserver_arg("--runtime-config=storagemigration.k8s.io/v1beta1=true")
        .controller_manager_arg(
            "--feature-gates=StorageVersionMigrator=true,InformerResourceVersion=true",
        )
        .controller_manager_arg("--controllers=*,storage-version-migrator-controller")
        .start()?;
    if !env.has_controller_manager() {
        eprintln!(
            "skipped the StorageVersionMigration path: no kube-controller-manager in KUBEBUILDER_ASSETS"
        );
        return Ok(());
    }
    let outcome = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(async {
            let group = "gated.migrate.example.com";
            let namespace = stored_as_v1_then_moved(&env, group, 5).await?;
            let before = read_all(&env, group, "v2", &namespace).await?;
            assert_eq!(
                migration_api_version(&env.client()?).await?.as_deref(),
                Some("v1beta1")
            );
            let options = Options {
                method: Method::StorageVersionMigration,
                timeout: std::time::Duration::from_secs(150),
                ..Options::new(group, "Thing")
            };
            let mut seen = Vec::new();
            let report = migrate(&env.client()?, &options, |p| seen.push(p.clone())).await?;
            assert!(report.migrated);
            assert!(
                seen.iter()
                    .any(|p| matches!(p, Progress::MigrationCreated { .. })),
                "{seen:?}"
            );
            assert_eq!(stored_versions(&env, group).await?, ["v2"]);
            for (name, (rv, spec)) in read_all(&env, group, "v2", &namespace).await? {
                assert_ne!(
                    rv, before[&name].0,
                    "{name} was not written by the migration"
                );
                assert_eq!(spec, before[&name].1);
            }
            remove_v1(&env, group).await?;
            anyhow::Ok(())
        });
    if outcome.is_err() {
        let log = std::fs::read_dir(env.dir())?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().contains("controller-manager"))
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect::<String>();
        let lines: Vec<&str> = log
            .lines()
            .filter(|l| l.to_lowercase().contains("migrat"))
            .collect();
        eprintln!(
            "kube-controller-manager on migration:\n{}",
            lines.join("\n")
        );
    }
    outcome
}

/// A list continue token outlived by etcd's compaction (kube-apiserver compacting every
/// second here, lists served by etcd): the list answers 410 Gone, and the migration lists
/// again from the start.
#[test]
fn an_expired_continue_token_restarts_the_list() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::builder()
        .controller_manager(false)
        .apiserver_arg("--etcd-compaction-interval=1s")
        // Lists from etcd, not from the watch cache, whose history outlives compaction.
        .apiserver_arg("--watch-cache=false")
        .start()?;
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(async {
            let group = "expired.migrate.example.com";
            let namespace = stored_as_v1_then_moved(&env, group, 6).await?;
            let before = read_all(&env, group, "v2", &namespace).await?;
            let v1 = Api::<DynamicObject>::namespaced_with(
                env.client()?,
                &namespace,
                &things(group, "v1"),
            );
            // After the first page: writes move etcd's revision on, then compaction passes
            // the revision the continue token reads at.
            let handle = tokio::runtime::Handle::current();
            let mut waited = false;
            let report = migrate(&env.client()?, &options(group, 4), |p| {
                if matches!(p, Progress::Written { page: 1, .. }) && !waited {
                    waited = true;
                    tokio::task::block_in_place(|| {
                        handle.block_on(async {
                            for i in 0..8 {
                                let mut object = v1.get("thing-005").await.unwrap();
                                object.data["spec"]["note"] = json!(format!("touched {i}"));
                                v1.replace("thing-005", &PostParams::default(), &object)
                                    .await
                                    .unwrap();
                                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                            }
                        })
                    });
                }
            })
            .await?;
            assert!(report.counts.restarts >= 1, "{report:?}");
            assert_eq!(stored_versions(&env, group).await?, ["v2"]);
            for (name, (rv, spec)) in read_all(&env, group, "v2", &namespace).await? {
                assert_ne!(rv, before[&name].0, "{name} was not written");
                if name != "thing-005" {
                    assert_eq!(spec, before[&name].1);
                }
            }
            remove_v1(&env, group).await?;
            anyhow::Ok(())
        })
}
