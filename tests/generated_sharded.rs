//! A generated sharded manager on a real control plane: a project made with `init --sharded`
//! (one kind, Guestbook), its `manager` built, and three replicas of it run as local processes,
//! each with its own identity (`POD_NAME`) under a ServiceAccount of its own holding exactly the
//! project's `config/rbac` (the shard Leases included: least privilege, shown by running under
//! it, with no `forbidden` in any log). Every object is reconciled, the three split them, and a
//! rolling restart (each replica in turn stopped gracefully and replaced by a new one, as a
//! Deployment's rolling update does) keeps every object reconciled, spec changes included; the
//! API server's audit log shows no object written by two replicas in one ring generation
//! (`operator_rs_runtime::testing::shard_audit`).
//!
//! Slow (a generated project's build, then minutes on 2 cores): CI runs it in a lane of its own
//! (`OPERATOR_RS_TESTS_ELSEWHERE=generated_sharded` skips it elsewhere).

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use operator_rs_runtime::shard::{DEFAULT_VNODES, Ring};
use operator_rs_runtime::testing::envtest::Envtest;
use operator_rs_runtime::testing::shard_audit::{self, ShardWrites};

const NAME: &str = "sharded-op";
/// Guestbooks created.
const OBJECTS: usize = 60;

/// One replica of the generated manager.
struct Replica {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

impl Replica {
    fn start(
        manager: &Path,
        env: &Envtest,
        namespace: &str,
        name: &'static str,
        kubeconfig: &Path,
    ) -> Self {
        let log = env.dir().join(format!("{name}.log"));
        let file = std::fs::File::create(&log).unwrap();
        let child = Command::new(manager)
            .args([
                &format!("--kubeconfig={}", kubeconfig.display()),
                "--metrics-bind-address=0",
                "--health-probe-bind-address=0",
                "--leader-elect",
                &format!("--leader-election-namespace={namespace}"),
                // A leader whose renewals fail exits: long enough for a loaded machine.
                "--leader-election-lease-duration=30s",
                "--leader-election-renew-deadline=15s",
            ])
            .env("POD_NAME", name)
            .env("POD_NAMESPACE", namespace)
            .env("RUST_LOG", "info")
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        Self { name, child, log }
    }

    /// SIGTERM (a pod's graceful stop), and waits for it to exit; whether it exited 0.
    fn stop(mut self) -> bool {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-s", "TERM", &pid]).status();
        assert!(sent.unwrap().success(), "kill -s TERM {pid}");
        let status = self.child.wait().unwrap();
        self.check_log();
        status.success()
    }

    /// No request of it was refused: the project's RBAC grants all it does.
    fn check_log(&self) {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        assert!(
            !log.contains("forbidden"),
            "{} was refused a request under config/rbac:\n{log}",
            self.name
        );
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether every Guestbook is reconciled at its current generation (its status says Ready for
/// it); polls until `timeout`.
async fn all_reconciled(api: &Api<DynamicObject>, what: &str, timeout: Duration) {
    let start = Instant::now();
    loop {
        let list = api.list(&ListParams::default()).await.unwrap();
        let pending: Vec<String> = (list.items.iter())
            .filter(|o| {
                let status = &o.data["status"];
                let ready = (status["conditions"].as_array().into_iter().flatten())
                    .any(|c| c["type"] == "Ready" && c["status"] == "True");
                !(ready && status["observedGeneration"].as_i64() == o.metadata.generation)
            })
            .filter_map(|o| o.metadata.name.clone())
            .collect();
        if list.items.len() == OBJECTS && pending.is_empty() {
            eprintln!(
                "{what}: every object reconciled after {:?}",
                start.elapsed()
            );
            return;
        }
        assert!(
            start.elapsed() < timeout,
            "{what}: not reconciled after {timeout:?}: {pending:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits until the replicas `members` all work in their ring.
async fn ring(leases: &Api<Lease>, members: &[&str]) {
    let start = Instant::now();
    while !shard_audit::ring_published(leases, members).await {
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "the ring of {members:?} was never published"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!("ring {members:?} published after {:?}", start.elapsed());
}

fn generation(members: &[&str]) -> String {
    format!("{:016x}", Ring::new(members, DEFAULT_VNODES).generation())
}

#[test]
fn three_generated_replicas_split_the_objects_and_survive_a_rolling_restart() {
    if runs_elsewhere("generated_sharded") {
        return;
    }
    if !Envtest::available() {
        eprintln!(
            "SKIPPED: a generated sharded manager needs a control plane (KUBEBUILDER_ASSETS)"
        );
        return;
    }
    let tmp = tempfile::Builder::new()
        .prefix("operator-rs-test-")
        .tempdir()
        .unwrap();
    let dir = tmp.path().join(NAME);
    std::fs::create_dir(&dir).unwrap();
    ok(&dir, &words("init --domain example.com --sharded"));
    ok(
        &dir,
        &words("create api --group webapp --version v1 --kind Guestbook"),
    );
    cargo(&dir, &["build", "--bin", "manager"]);
    let manager = dir.join("target/debug/manager");

    let scratch = tempfile::tempdir().unwrap();
    let policy = scratch.path().join("audit-policy.yaml");
    std::fs::write(
        &policy,
        shard_audit::audit_policy("webapp.example.com", "guestbooks"),
    )
    .unwrap();
    let audit_log = scratch.path().join("audit.log");
    let env = Envtest::builder()
        .controller_manager(false)
        .apiserver_arg(format!("--audit-policy-file={}", policy.display()))
        .apiserver_arg(format!("--audit-log-path={}", audit_log.display()))
        .start()
        .expect("the control plane starts");
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(scenario(&dir, &manager, &env, &audit_log));
}

async fn scenario(dir: &Path, manager: &Path, env: &Envtest, audit_log: &Path) {
    let admin = env.client().unwrap();
    env.install_crds(dir.join("config/crd/bases"))
        .await
        .unwrap();
    let namespace = env.create_namespace("sharded").await.unwrap();
    let first = ["pod-a", "pod-b", "pod-c"];
    let successors = ["pod-d", "pod-e", "pod-f"];
    let mut kubeconfigs = std::collections::BTreeMap::new();
    for name in first.into_iter().chain(successors) {
        let access = env
            .service_account_from_kustomize(&namespace, name, dir.join("config/rbac"))
            .await
            .unwrap();
        kubeconfigs.insert(name, access.kubeconfig().to_owned());
    }
    let start =
        |name: &'static str| Replica::start(manager, env, &namespace, name, &kubeconfigs[name]);
    let leases: Api<Lease> = Api::namespaced(admin.clone(), &namespace);
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("webapp.example.com", "v1", "Guestbook"),
        "guestbooks",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(admin.clone(), &namespace, &resource);

    // Three replicas form their ring; then the objects come, and the three split them.
    let mut running: Vec<Replica> = first.into_iter().map(&start).collect();
    ring(&leases, &first).await;
    for i in 0..OBJECTS {
        let object: DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "webapp.example.com/v1", "kind": "Guestbook",
            "metadata": {"name": format!("guestbook-{i}")},
            "spec": {"foo": "0"},
        }))
        .unwrap();
        api.create(&PostParams::default(), &object).await.unwrap();
    }
    all_reconciled(&api, "3 replicas", Duration::from_secs(120)).await;
    let replicas = format!("system:serviceaccount:{namespace}:");
    let writes = ShardWrites::read(audit_log, "guestbooks", &replicas).unwrap();
    let split = writes.objects_by_replica(&generation(&first));
    let counts: Vec<(&str, usize)> = split.iter().map(|(r, o)| (*r, o.len())).collect();
    eprintln!("objects written per replica in the ring of 3: {counts:?}");
    assert_eq!(split.len(), 3, "{counts:?}");
    assert!(
        counts.iter().all(|(_, n)| *n >= OBJECTS / 10),
        "a replica reconciled next to nothing: {counts:?}"
    );
    let covered: BTreeSet<&str> = split.values().flatten().copied().collect();
    assert_eq!(covered.len(), OBJECTS, "objects nobody reconciled");

    // The rolling restart: each replica in turn stopped gracefully, a new one started in its
    // place; then every object's spec changes, and the new ring reconciles every one.
    let restart = Instant::now();
    let mut members = first.to_vec();
    for (step, new) in successors.into_iter().enumerate() {
        let old = running.remove(0);
        let name = old.name;
        assert!(old.stop(), "{name} exited non-zero after SIGTERM");
        members.retain(|m| *m != name);
        running.push(start(new));
        members.push(new);
        ring(&leases, &members).await;
        let change = Patch::Merge(serde_json::json!({"spec": {"foo": format!("{}", step + 1)}}));
        for i in 0..OBJECTS {
            let name = format!("guestbook-{i}");
            api.patch(&name, &PatchParams::default(), &change)
                .await
                .unwrap();
        }
        all_reconciled(
            &api,
            &format!("{name} replaced by {new}"),
            Duration::from_secs(120),
        )
        .await;
    }
    eprintln!("rolling restart of 3 replicas: {:?}", restart.elapsed());
    for replica in running {
        let name = replica.name;
        assert!(replica.stop(), "{name} exited non-zero after SIGTERM");
    }

    let writes = ShardWrites::read(audit_log, "guestbooks", &replicas).unwrap();
    let overlaps = writes.overlaps();
    assert!(overlaps.is_empty(), "{}", overlaps.join("\n"));
    let last = writes.objects_by_replica(&generation(&successors));
    let covered: BTreeSet<&str> = last.values().flatten().copied().collect();
    assert_eq!(
        covered.len(),
        OBJECTS,
        "objects the new ring did not reconcile"
    );
    let generations = writes.generations();
    assert!(
        generations.len() >= 4,
        "ring generations written in: {generations:?}"
    );
    eprintln!(
        "audit: {} writes of guestbooks, {} (object, generation) pairs, one writer each, in {} generations",
        writes.writes.len(),
        writes.writers().len(),
        generations.len()
    );
}
