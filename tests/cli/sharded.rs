//! Sharded managers in the scaffold: `init --sharded` deploys three replicas of a manager on
//! `Manager::sharded()` with a PodDisruptionBudget (as `kubectl kustomize config/default`
//! renders it, and as `generate chart` does), `edit --sharded[=false]` switches a project either
//! way to exactly what `init` would have made (PROJECT included: its digest is that of the
//! replayed commands, so `update` replays the switch), refusing to overwrite the user's edits
//! without `--force`. The sharded manager running under this RBAC is tests/generated_sharded.rs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::*;
use serde_json::Value;

const NAME: &str = "shard-op";

/// A project `NAME` made with `init` (plus `init_flags`) and `create api` for Memcached.
fn project(init_flags: &[&str]) -> tempfile::TempDir {
    let tmp = tempfile::Builder::new()
        .prefix("operator-rs-test-")
        .tempdir()
        .unwrap();
    let dir = tmp.path().join(NAME);
    std::fs::create_dir(&dir).unwrap();
    let mut init = vec!["init", "--domain", "example.com"];
    init.extend(init_flags);
    ok(&dir, &init);
    ok(
        &dir,
        &words("create api --group cache --version v1alpha1 --kind Memcached"),
    );
    tmp
}

/// The project's files, but the lock and transaction folder operator-rs keeps.
fn files(dir: &Path) -> BTreeMap<PathBuf, String> {
    (snapshot(dir).into_iter())
        .filter(|(p, _)| !p.starts_with(".operator-rs"))
        .map(|(p, t)| (p, String::from_utf8(t).unwrap()))
        .collect()
}

/// The files of `dir` equal those of `expected`, path by path (a diff names the first).
fn same_files(dir: &Path, expected: &Path) {
    let (got, want) = (files(dir), files(expected));
    for (path, text) in &want {
        assert_eq!(got.get(path), Some(text), "{}", path.display());
    }
    let extra: Vec<_> = got.keys().filter(|p| !want.contains_key(*p)).collect();
    assert!(extra.is_empty(), "files init did not make: {extra:?}");
}

#[test]
fn init_sharded_deploys_three_replicas_of_a_sharded_manager_and_a_disruption_budget() {
    let tmp = project(&["--sharded"]);
    let dir = project_dir(&tmp, NAME);
    assert!(read(&dir, "PROJECT").contains("\nsharded: true\n"));
    assert!(
        read(&dir, "PROJECT")
            .contains("- init --domain example.com --project-name shard-op --sharded\n")
    );
    assert!(
        read(&dir, "src/main.rs")
            .contains("let manager = Manager::new(NAME, cli.manager).await?.sharded();")
    );
    // The generated README says how it behaves.
    let readme = read(&dir, "README.md");
    assert!(
        readme.contains("- **Sharding**: this manager is sharded")
            && readme.contains("`shard-op-shard-<pod name>`"),
        "{readme}"
    );
    let docs = kustomize(&dir, "config/default");
    let deployment = of_kind(&docs, "Deployment")[0];
    assert_eq!(deployment["spec"]["replicas"], 3);
    // The leader election still runs: one replica does the singleton work.
    let args = deployment["spec"]["template"]["spec"]["containers"][0]["args"].to_string();
    assert!(args.contains("\"--leader-elect\""), "{args}");
    let budgets = of_kind(&docs, "PodDisruptionBudget");
    assert_eq!(budgets.len(), 1, "{docs:?}");
    let pdb = budgets[0];
    assert_eq!(pdb["apiVersion"], "policy/v1");
    assert_eq!(pdb["metadata"]["name"], "shard-op-controller-manager");
    assert_eq!(pdb["metadata"]["namespace"], "shard-op-system");
    assert_eq!(pdb["spec"]["maxUnavailable"], 1);
    // It selects exactly the manager's pods: the Deployment's own selector, which its pod
    // template's labels carry.
    let selector = &pdb["spec"]["selector"];
    assert_eq!(*selector, deployment["spec"]["selector"]);
    let labels = &deployment["spec"]["template"]["metadata"]["labels"];
    for (k, v) in selector["matchLabels"].as_object().unwrap() {
        assert_eq!(labels[k], *v, "{k}");
    }
    // The shard Leases: what the runtime calls on them, in the manager's namespace.
    let role = (of_kind(&docs, "Role").into_iter())
        .find(|r| r["metadata"]["name"] == "shard-op-leader-election-role")
        .unwrap();
    let leases = (role["rules"].as_array().unwrap().iter())
        .find(|r| r["resources"][0] == "leases")
        .unwrap();
    assert_eq!(leases["apiGroups"][0], "coordination.k8s.io");
    for verb in ["get", "list", "create", "patch", "delete"] {
        assert!(
            leases["verbs"]
                .as_array()
                .unwrap()
                .contains(&Value::from(verb)),
            "{leases}"
        );
    }
    // The Helm chart follows: three replicas by default, the same budget.
    ok(&dir, &["generate", "chart"]);
    let values = read(&dir, "dist/chart/values.yaml");
    assert!(values.contains("\n  replicas: 3\n"), "{values}");
    let pdb = read(&dir, "dist/chart/templates/manager/pdb.yaml");
    for line in [
        "kind: PodDisruptionBudget",
        "  name: shard-op-controller-manager",
        "  namespace: {{ .Release.Namespace }}",
        "  maxUnavailable: 1",
        "      control-plane: controller-manager",
    ] {
        assert!(pdb.contains(&format!("{line}\n")), "{line}\n{pdb}");
    }
}

#[test]
fn edit_sharded_switches_both_ways_to_what_init_makes() {
    let single = project(&[]);
    let sharded = project(&["--sharded"]);
    let (dir, expected) = (project_dir(&single, NAME), project_dir(&sharded, NAME));
    let original = files(&dir);
    assert!(!original[Path::new("PROJECT")].contains("sharded"));
    assert!(!original[Path::new("README.md")].contains("**Sharding**"));
    let r = ok(&dir, &["edit", "--sharded"]);
    assert!(r.stderr.contains("now sharded"), "{}", r.stderr);
    // PROJECT too, with the digest of its commands' replay: `update` replays `init --sharded`.
    same_files(&dir, &expected);
    let r = ok(&dir, &["edit", "--sharded=true"]);
    assert!(r.stderr.contains("already sharded"), "{}", r.stderr);
    ok(&dir, &["edit", "--sharded=false"]);
    assert_eq!(
        files(&dir),
        original,
        "not byte-identical to a never-sharded project"
    );

    // Both settings at once, and back one at a time.
    let both = project(&["--namespaced", "--sharded"]);
    ok(&dir, &["edit", "--namespaced", "--sharded"]);
    same_files(&dir, &project_dir(&both, NAME));
    ok(&dir, &["edit", "--sharded=false"]);
    ok(&dir, &["edit", "--namespaced=false"]);
    assert_eq!(files(&dir), original);
}

#[test]
fn edit_sharded_refuses_edits_where_it_writes() {
    let tmp = project(&[]);
    let dir = project_dir(&tmp, NAME);
    // The replicas line edited: refused, nothing written; --force rewrites it.
    let manager = dir.join("config/manager/manager.yaml");
    let edited = std::fs::read_to_string(&manager)
        .unwrap()
        .replace("  replicas: 1\n", "  replicas: 2\n");
    std::fs::write(&manager, &edited).unwrap();
    let before = files(&dir);
    let r = run(&dir, &["edit", "--sharded"]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("config/manager/manager.yaml") && r.stderr.contains("--force"),
        "{}",
        r.stderr
    );
    assert_eq!(files(&dir), before, "something was written");
    ok(&dir, &["edit", "--sharded", "--force"]);
    assert!(read(&dir, "config/manager/manager.yaml").contains("  replicas: 3\n"));

    // A budget of the user's own: not removed without --force.
    let pdb = dir.join("config/manager/pdb.yaml");
    let mine = std::fs::read_to_string(&pdb)
        .unwrap()
        .replace("maxUnavailable: 1", "maxUnavailable: 2");
    std::fs::write(&pdb, &mine).unwrap();
    let before = files(&dir);
    let r = run(&dir, &["edit", "--sharded=false"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("config/manager/pdb.yaml"), "{}", r.stderr);
    assert_eq!(files(&dir), before, "something was written");
    ok(&dir, &["edit", "--sharded=false", "--force"]);
    assert!(!pdb.exists());

    // src/main.rs no longer holding the scaffolded line: the change to make by hand.
    edit_refuses_rust_it_cannot_patch(&dir, "--sharded", ".sharded()");
    let r = run(&dir, &["edit", "--sharded=perhaps"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("perhaps"), "{}", r.stderr);
}
