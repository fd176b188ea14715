//! The storage-version workflow through the real binary on a real API server: `edit api
//! --storage` says what to run next, `generate crds` refuses to drop a version the cluster's
//! CRD still lists in `status.storedVersions` (and warns, saying what to check, with no
//! cluster), `migrate-storage` moves the objects and narrows storedVersions, and then the
//! old version goes (kube-apiserver accepts the CRD) with every object intact; and the same
//! through our README's block, run as written (`make install` included).

mod common;

use std::path::Path;

use common::readme;
use common::*;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, PostParams, ResourceExt};
use kube::core::GroupVersionKind;
use operator_rs_runtime::testing::envtest::Envtest;

const V1: &str = "src/api/v1/cron_job.rs";
const CRD: &str = "config/crd/bases/batch.example.com_cronjobs.yaml";
const MIGRATE: &str = "operator-rs migrate-storage --group batch.example.com --kind CronJob";

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

fn cron_jobs(version: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("batch.example.com", version, "CronJob"),
        "cronjobs",
    )
}

/// `operator-rs <line>` with KUBECONFIG set to `kubeconfig` and HOME to the project's folder
/// (so no ~/.kube/config of the machine's is read).
fn run_with(dir: &Path, line: &str, kubeconfig: &Path) -> Run {
    run_env(
        dir,
        &words(line),
        &[
            ("KUBECONFIG", kubeconfig.to_str().unwrap()),
            ("HOME", dir.to_str().unwrap()),
        ],
    )
}

/// The project after `edit api --storage` moved CronJob's storage to v2, checking what it
/// printed; then v1's types removed (the file emptied).
fn moved_to_v2_then_v1_removed(name: &str) -> tempfile::TempDir {
    let tmp = two_versions(name);
    let dir = project_dir(&tmp, name);
    let edited = ok(
        &dir,
        &words("edit api --group batch --version v2 --kind CronJob --storage"),
    );
    assert!(edited.stderr.contains(MIGRATE), "{}", edited.stderr);
    assert!(edited.stderr.contains("make install"), "{}", edited.stderr);
    // Run again it changes nothing, and has nothing to say about migrating.
    let again = ok(
        &dir,
        &words("edit api --group batch --version v2 --kind CronJob --storage"),
    );
    assert!(!again.stderr.contains(MIGRATE), "{}", again.stderr);
    tmp
}

#[test]
fn offline_removal_of_a_version_warns_what_to_check() {
    let tmp = moved_to_v2_then_v1_removed("offline-removal");
    let dir = project_dir(&tmp, "offline-removal");
    std::fs::write(dir.join(V1), "").unwrap();
    let out = run_with(&dir, "generate crds", &dir.join("no-such-kubeconfig"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("removes version v1 of CRD cronjobs.batch.example.com")
            && out.stderr.contains(
                "kubectl get crd cronjobs.batch.example.com -o jsonpath='{.status.storedVersions}'"
            )
            && out.stderr.contains(MIGRATE),
        "{}",
        out.stderr
    );
    assert!(!read(&dir, CRD).contains("name: v1"));
}

#[test]
fn migrate_storage_then_remove_the_old_version() {
    if !Envtest::available() {
        return;
    }
    let env = Envtest::shared().expect("the control plane starts");
    let kubeconfig = env.kubeconfig();
    let tmp = two_versions("migrate-workflow");
    let dir = project_dir(&tmp, "migrate-workflow");

    // Objects written while v1 is stored.
    block_on(async {
        env.install_crds(dir.join("config/crd/bases"))
            .await
            .unwrap();
        let namespace = env.create_namespace("workflow").await.unwrap();
        let v1 = Api::<DynamicObject>::namespaced_with(
            env.client().unwrap(),
            &namespace,
            &cron_jobs("v1"),
        );
        for i in 0..7 {
            let object = DynamicObject::new(&format!("job-{i}"), &cron_jobs("v1"))
                .data(serde_json::json!({"spec": {"foo": format!("value {i}")}}));
            v1.create(&PostParams::default(), &object).await.unwrap();
        }
    });

    // Refusals before anything is done: no such kind, a group with no domain outside a project.
    let absent = run_with(
        &dir,
        "migrate-storage --group batch.example.com --kind Nothing",
        kubeconfig,
    );
    assert_ne!(absent.code, 0);
    assert!(
        absent
            .stderr
            .contains("no CustomResourceDefinition for kind Nothing in group batch.example.com")
            && absent
                .stderr
                .contains("the kinds of group batch.example.com are CronJob"),
        "{}",
        absent.stderr
    );
    let outside = run_with(
        dir.parent().unwrap(),
        "migrate-storage --group batch --kind CronJob",
        kubeconfig,
    );
    assert_ne!(outside.code, 0);
    assert!(
        outside.stderr.contains("not a full API group"),
        "{}",
        outside.stderr
    );

    let edited = ok(
        &dir,
        &words("edit api --group batch --version v2 --kind CronJob --storage"),
    );
    assert!(edited.stderr.contains(MIGRATE), "{}", edited.stderr);
    block_on(async {
        env.install_crds(dir.join("config/crd/bases"))
            .await
            .unwrap()
    });

    // v1's types removed: refused while the cluster's CRD lists v1 in storedVersions.
    let v1_source = read(&dir, V1);
    std::fs::write(dir.join(V1), "").unwrap();
    let before = read(&dir, CRD);
    let refused = run_with(&dir, "generate crds", kubeconfig);
    assert_ne!(refused.code, 0, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("status.storedVersions [v1, v2]")
            && refused.stderr.contains(MIGRATE),
        "{}",
        refused.stderr
    );
    assert_eq!(read(&dir, CRD), before, "nothing written");

    // Migrate (small pages), twice: the second finds nothing to do.
    let migrated = run_with(
        &dir,
        "migrate-storage --group batch --kind CronJob --page-size 2",
        kubeconfig,
    );
    assert_eq!(migrated.code, 0, "{}", migrated.stderr);
    assert!(
        migrated.stderr.contains("page 4: 1 object\n")
            && migrated
                .stderr
                .contains("status.storedVersions [v1, v2] -> [v2]")
            && migrated.stderr.contains("7 objects in v2"),
        "{}",
        migrated.stderr
    );
    let again = run_with(&dir, &MIGRATE["operator-rs ".len()..], kubeconfig);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again.stderr.contains("nothing to migrate"),
        "{}",
        again.stderr
    );

    // Now v1 goes: generate crds writes the CRD, and kube-apiserver accepts it.
    let generated = run_with(&dir, "generate crds", kubeconfig);
    assert_eq!(generated.code, 0, "{}", generated.stderr);
    assert!(!read(&dir, CRD).contains("name: v1"));
    block_on(async {
        let installed = env
            .install_crds(dir.join("config/crd/bases"))
            .await
            .unwrap();
        let crd: &CustomResourceDefinition = &installed[0];
        assert_eq!(crd.spec.versions.len(), 1);
        let crds = Api::<CustomResourceDefinition>::all(env.client().unwrap());
        let now = crds.get("cronjobs.batch.example.com").await.unwrap();
        assert_eq!(now.status.unwrap().stored_versions.unwrap(), ["v2"]);
        let v2 = Api::<DynamicObject>::all_with(env.client().unwrap(), &cron_jobs("v2"));
        let mut objects = v2.list(&Default::default()).await.unwrap().items;
        objects.sort_by_key(|o| o.name_any());
        assert_eq!(objects.len(), 7);
        for (i, o) in objects.iter().enumerate() {
            assert_eq!(o.data["spec"]["foo"], format!("value {i}"));
        }
    });
    assert!(!v1_source.is_empty());
}

/// Our README's "Moving the storage version, then removing the old version" block, run as
/// written in a project with Memcached in cache/v1 and cache/v2, installed with `make install`
/// and holding objects written in v1; between its last two lines, what its comment says: v1's
/// types deleted (the folder, and its module line), the controller moved to v2.
#[test]
fn the_readme_moves_the_storage_version_then_removes_the_old_one() {
    if !Envtest::available() {
        eprintln!("SKIPPED: the README's storage-version block needs KUBEBUILDER_ASSETS");
        return;
    }
    let env = Envtest::shared().expect("the control plane starts");
    let tmp = init_project("memcached-operator");
    let dir = project_dir(&tmp, "memcached-operator");
    ok(
        &dir,
        &words("create api --group cache --version v1 --kind Memcached"),
    );
    ok(
        &dir,
        &words("create api --group cache --version v2 --kind Memcached --controller=false"),
    );
    let shell = readme::UserShell::new(&dir, &[("KUBECONFIG", env.kubeconfig())]);
    shell.run("make install");
    let memcacheds = |version: &str| {
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("cache.example.com", version, "Memcached"),
            "memcacheds",
        )
    };
    let (namespace, uids) = block_on(async {
        let namespace = env.create_namespace("readme").await.unwrap();
        let v1 = Api::<DynamicObject>::namespaced_with(
            env.client().unwrap(),
            &namespace,
            &memcacheds("v1"),
        );
        let mut uids = Vec::new();
        for i in 0..3 {
            let object = DynamicObject::new(&format!("cache-{i}"), &memcacheds("v1"))
                .data(serde_json::json!({"spec": {"foo": format!("value {i}")}}));
            let created = v1.create(&PostParams::default(), &object).await.unwrap();
            uids.push(created.uid().unwrap());
        }
        (namespace, uids)
    });

    let block = readme::sh_blocks(
        &readme::our_readme(),
        "### Moving the storage version, then removing the old version",
    )
    .concat();
    let (last, steps) = block.split_last().unwrap();
    assert_eq!(
        last, "operator-rs generate crds && make install",
        "{block:?}"
    );
    for line in steps {
        shell.run(line);
    }
    std::fs::remove_dir_all(dir.join("src/api/v1")).unwrap();
    let api = dir.join("src/api/mod.rs");
    let text = std::fs::read_to_string(&api).unwrap();
    let module = "// API version v1.\npub mod v1;\n";
    assert!(text.contains(module), "{text}");
    std::fs::write(&api, text.replace(module, "")).unwrap();
    let controller = dir.join("src/controllers/memcached.rs");
    let text = std::fs::read_to_string(&controller).unwrap();
    std::fs::write(
        &controller,
        text.replace("crate::api::v1::", "crate::api::v2::"),
    )
    .unwrap();
    shell.run(last);

    assert!(!read(&dir, "config/crd/bases/cache.example.com_memcacheds.yaml").contains("name: v1"));
    block_on(async {
        let crds = Api::<CustomResourceDefinition>::all(env.client().unwrap());
        let crd = crds.get("memcacheds.cache.example.com").await.unwrap();
        let versions: Vec<_> = crd.spec.versions.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(versions, ["v2"]);
        assert_eq!(crd.status.unwrap().stored_versions.unwrap(), ["v2"]);
        let v2 = Api::<DynamicObject>::namespaced_with(
            env.client().unwrap(),
            &namespace,
            &memcacheds("v2"),
        );
        let mut objects = v2.list(&Default::default()).await.unwrap().items;
        objects.sort_by_key(|o| o.name_any());
        let foos: Vec<_> = objects
            .iter()
            .map(|o| o.data["spec"]["foo"].clone())
            .collect();
        assert_eq!(foos, ["value 0", "value 1", "value 2"]);
        let same: Vec<_> = objects.iter().map(|o| o.uid().unwrap()).collect();
        assert_eq!(same, uids, "the objects were rewritten, not recreated");
    });
}

/// The kind of [`unserving_a_version_the_cluster_still_stores_is_refused`], of a group of its
/// own: the other tests of this binary change `cronjobs.batch.example.com` on the same control
/// plane, at the same time.
fn unserve_cron_jobs(version: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("unserve.example.com", version, "CronJob"),
        "cronjobs",
    )
}

const UNSERVE_MIGRATE: &str =
    "operator-rs migrate-storage --group unserve.example.com --kind CronJob";

/// `edit api --served=false` on a version the cluster's CRD still lists in
/// `status.storedVersions` is refused (nothing written) with the migration to run; once
/// `migrate-storage` narrowed storedVersions, the same command is accepted.
#[test]
fn unserving_a_version_the_cluster_still_stores_is_refused() {
    if !Envtest::available() {
        eprintln!(
            "SKIPPED unserving_a_version_the_cluster_still_stores_is_refused: needs KUBEBUILDER_ASSETS"
        );
        return;
    }
    let env = Envtest::shared().expect("the control plane starts");
    let kubeconfig = env.kubeconfig();
    let tmp = init_project("unserve-stored");
    let dir = project_dir(&tmp, "unserve-stored");
    for line in [
        "create api --group unserve --version v1 --kind CronJob --controller=false",
        "create api --group unserve --version v2 --kind CronJob --controller=false",
    ] {
        ok(&dir, &words(line));
    }
    block_on(async {
        env.install_crds(dir.join("config/crd/bases"))
            .await
            .unwrap();
        let namespace = env.create_namespace("unserve").await.unwrap();
        let v1 = Api::<DynamicObject>::namespaced_with(
            env.client().unwrap(),
            &namespace,
            &unserve_cron_jobs("v1"),
        );
        let object = DynamicObject::new("stored-in-v1", &unserve_cron_jobs("v1"))
            .data(serde_json::json!({"spec": {"foo": "v1"}}));
        v1.create(&PostParams::default(), &object).await.unwrap();
    });
    ok(
        &dir,
        &words("edit api --group unserve --version v2 --kind CronJob --storage"),
    );
    block_on(async {
        env.install_crds(dir.join("config/crd/bases"))
            .await
            .unwrap()
    });

    let line = "edit api --group unserve --version v1 --kind CronJob --served=false";
    let before = snapshot(&dir);
    let refused = run_with(&dir, line, kubeconfig);
    assert_ne!(refused.code, 0, "{}", refused.stderr);
    for e in [
        "the cluster's CRD cronjobs.unserve.example.com still lists v1 in status.storedVersions [v1, v2]",
        UNSERVE_MIGRATE,
        "Nothing was written",
        "--served=false --force",
    ] {
        assert!(
            refused.stderr.contains(e),
            "no {e:?} in\n{}",
            refused.stderr
        );
    }
    assert_eq!(snapshot(&dir), before, "something was written");

    let migrated = run_with(&dir, &UNSERVE_MIGRATE["operator-rs ".len()..], kubeconfig);
    assert_eq!(migrated.code, 0, "{}", migrated.stderr);
    let unserved = run_with(&dir, line, kubeconfig);
    assert_eq!(unserved.code, 0, "{}", unserved.stderr);
    assert!(read(&dir, V1).contains("served = false"));
}
