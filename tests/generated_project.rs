//! End to end: scaffold real projects and hold them to our own bar with cargo itself — build,
//! `clippy --all-targets -D warnings`, `fmt --check`, and their own tests — then render their
//! `config/default` with kubectl. Every generated build shares one build directory so kube and
//! k8s-openapi compile once per run (`common::shared_build_dir`).
//!
//! The generated projects' integration tests (`tests/integration.rs`) run in their `cargo test`
//! on envtest, and the reference project's end-to-end suite (`tests/e2e.rs`, manager binary
//! included) runs against the same real control plane (etcd, kube-apiserver and
//! kube-controller-manager from $KUBEBUILDER_ASSETS). Without it, both say so and are skipped.

mod common;

use std::path::Path;
use std::sync::Mutex;

use common::readme::*;
use common::*;
use operator_rs_runtime::testing::envtest::Envtest;

/// Cargo builds of generated projects run one at a time: they share a build directory.
static CARGO: Mutex<()> = Mutex::new(());

/// The bar every generated project is held to. With a control plane, the user's path runs the
/// lint and the tests later, as the generated README writes them (`make lint test`, ...): here
/// only the build they need, so nothing runs twice.
fn build_lint_test(dir: &Path, the_readme_runs_the_tests: bool) {
    let _guard = CARGO.lock().unwrap_or_else(|e| e.into_inner());
    cargo(dir, &["fmt", "--check"]);
    cargo(dir, &["build", "--all-targets"]);
    if !the_readme_runs_the_tests {
        cargo(dir, &["clippy", "--all-targets", "--", "-D", "warnings"]);
        cargo(dir, &["test"]);
    }
}

#[test]
fn the_reference_project_builds_lints_passes_its_tests_and_renders() {
    if runs_elsewhere("generated_project") {
        return;
    }
    let tmp = reference_project("memcached-operator");
    let dir = project_dir(&tmp, "memcached-operator");
    // What create api wrote is what the generators produce.
    ok(&dir, &["generate", "manifests", "--check"]);
    // A user adds printcolumns of a type already used (clippy's duplicated_attributes must
    // not fire on them), then regenerates the CRD.
    let types = dir.join("src/api/v1/guestbook.rs");
    let text = std::fs::read_to_string(&types).unwrap();
    let more = r#"printcolumn(name = "Started", type_ = "date", json_path = ".status.startTime"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "Age","#;
    assert!(
        text.contains("printcolumn(\n        name = \"Age\","),
        "{text}"
    );
    let text = text.replacen("printcolumn(\n        name = \"Age\",", more, 1);
    std::fs::write(&types, text).unwrap();
    ok(&dir, &["generate", "manifests"]);
    build_lint_test(&dir, Envtest::available());
    // `--exact` derives the same CRDs through the compiler: its harness crate names each kind
    // from outside the project (create api keeps kinds in private modules and re-exports them),
    // building in the shared build directory.
    {
        let _guard = CARGO.lock().unwrap_or_else(|e| e.into_inner());
        let build = shared_build_dir();
        let build = [("CARGO_BUILD_BUILD_DIR", build.to_str().unwrap())];
        let exact = run_env(&dir, &["generate", "crds", "--exact", "--check"], &build);
        assert_eq!(exact.code, 0, "--exact --check:\n{}", exact.stderr);
    }
    let docs = kustomize(&dir, "config/default");
    assert_eq!(of_kind(&docs, "CustomResourceDefinition").len(), 4);
    assert_eq!(of_kind(&docs, "Deployment").len(), 1);
    assert!(!of_kind(&docs, "ClusterRole").is_empty());

    if !Envtest::available() {
        eprintln!("SKIPPED: the e2e suite and the READMEs' commands need KUBEBUILDER_ASSETS");
        return;
    }
    let env = Envtest::shared().expect("the control plane starts");
    let kubeconfig = env.kubeconfig().to_str().unwrap();
    let envs = [("KUBECONFIG", kubeconfig), ("E2E_OBJECTS", "10")];

    // A rule missing from config/rbac fails the suite with the 403 it caused (first: nothing else
    // reads config/rbac while it lacks the rule).
    let role = dir.join("config/rbac/role.yaml");
    let granted = std::fs::read_to_string(&role).unwrap();
    let status_rule = "- apiGroups:\n  - cache.example.com\n  resources:\n  - memcacheds/status\n";
    let at = granted
        .find(status_rule)
        .expect("role.yaml grants memcacheds/status");
    let end = granted[at + 1..]
        .find("\n- ")
        .map_or(granted.len(), |i| at + 2 + i);
    let stripped = format!("{}{}", &granted[..at], &granted[end..]);
    std::fs::write(&role, &stripped).unwrap();
    let out = {
        let _guard = CARGO.lock().unwrap_or_else(|e| e.into_inner());
        cargo_output(&dir, &e2e(&["--exact", "memcached_v1alpha1"]), &envs)
    };
    std::fs::write(&role, &granted).unwrap();
    let output = format!("{}{}", out.stdout, out.stderr);
    assert!(
        !out.success,
        "the e2e suite passed without memcacheds/status:\n{output}"
    );
    assert!(
        output.contains("config/rbac lacks a rule")
            && output.contains("cannot patch resource")
            && output.contains("memcacheds/status"),
        "the failure does not name the 403 of the missing rule:\n{output}"
    );

    // The faults, each on a control plane of its own, for one kind (the others run the same
    // code): a deploy-image kind, with owned Deployments. They share no cluster, file or port
    // with what follows (cargo holds no lock while a test runs), so they run beside it: their
    // waits on restarts and failovers overlap the at-scale tests and the READMEs' commands.
    let faults = {
        let (dir, kubeconfig) = (dir.clone(), kubeconfig.to_owned());
        std::thread::spawn(move || {
            let envs = [("KUBECONFIG", kubeconfig.as_str()), ("E2E_OBJECTS", "10")];
            cargo_output(
                &dir,
                &e2e(&["--nocapture", "memcached_v1alpha1_faults::"]),
                &envs,
            )
        })
    };

    // The generated README's scale lab, with few objects (this checks the lab and the
    // manager's behaviour, not figures), and a budget it misses; the rest of the e2e suite runs
    // as the generated README says (`make test-e2e`, in the user's path below).
    {
        let _guard = CARGO.lock().unwrap_or_else(|e| e.into_inner());
        walk_the_scale_lab(&dir, env.kubeconfig());
    }

    // Then the READMEs' commands, as a user runs them.
    walk_the_user_path(&dir, env.kubeconfig());

    let faults = faults.join().expect("the faults' thread");
    assert!(
        faults.success,
        "the faults failed:\nstdout:\n{}\nstderr:\n{}",
        faults.stdout, faults.stderr
    );
}

/// The generated README's "Scale lab", as written, with `SCALE_N=20` (the user's variable):
/// every kind's figures printed and within the scaffolded `scale-budgets.yaml`; then one kind
/// against a budget it cannot meet, which `make scale-test` must fail on, naming it.
fn walk_the_scale_lab(dir: &Path, kubeconfig: &Path) {
    let mut shell = UserShell::new(dir, &[("KUBECONFIG", kubeconfig)]);
    let generated = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let lab = sh_blocks(&generated, "### Scale lab").concat();
    assert_eq!(
        lab,
        ["make scale-test", "make scale-test SCALE_N=3000 RELEASE=1"],
        "the generated README's scale lab"
    );
    shell.set("SCALE_N", "20");
    let out = shell.run(&lab[0]);
    for kind in [
        "Memcached x 20",
        "Guestbook x 20",
        "Admiral x 20",
        "CronJob x 20",
    ] {
        let report = out.split(&format!("scale-test {kind}")).nth(1);
        let report = report.unwrap_or_else(|| panic!("no figures of {kind}:\n{out}"));
        for figure in [
            "- settle: ",
            "p99 ",
            "bytes per cached object",
            "settled restart: 0 writes",
            "- deletion of all 20: ",
        ] {
            assert!(report.contains(figure), "{kind}: no `{figure}`:\n{out}");
        }
    }
    let budgets = dir.join("scale-budgets.yaml");
    let kept = std::fs::read_to_string(&budgets).unwrap();
    std::fs::write(
        &budgets,
        format!("{kept}kinds:\n  Guestbook:\n    settle: {{seconds: 0}}\n"),
    )
    .unwrap();
    shell.set("SCALE_N", "5");
    shell.set("SCALE_ONLY", "guestbook_v1");
    let (passed, out) = shell.try_run(&lab[0]);
    std::fs::write(&budgets, kept).unwrap();
    assert!(!passed, "make scale-test passed over a budget:\n{out}");
    assert!(
        out.contains("Guestbook x 5: over the budgets of scale-budgets.yaml:\n- settle: ")
            && out.contains("(0 s + 0 ms x 5 objects)"),
        "the failure does not name the budget:\n{out}"
    );
}

/// `cargo test --test e2e -- --ignored --test-threads=1 <more>`.
fn e2e<'a>(more: &[&'a str]) -> Vec<&'a str> {
    let mut args = [
        "test",
        "--test",
        "e2e",
        "--",
        "--ignored",
        "--test-threads=1",
    ]
    .to_vec();
    args.extend(more);
    args
}

/// What the walk waits for after a local manager starts, and after it stops.
trait LocalWebhooks {
    fn wait_for_local_webhooks(&self, secs: u64);
    fn wait_for_no_local_webhooks(&self, what: &str, secs: u64);
}

impl LocalWebhooks for UserShell {
    /// Waits until a local manager has pointed the webhooks and the conversion at itself (`secs`
    /// once its build is done).
    fn wait_for_local_webhooks(&self, secs: u64) {
        self.wait_for_build(1200);
        self.wait_for(
            "the manager points the webhooks at itself",
            secs,
            LOCAL_CONFIGURATIONS,
            |o| o.contains("memcached-operator-local-"),
        );
        self.wait_for(
            "the manager points the conversion at itself",
            30,
            CRONJOB_CONVERSION,
            |o| o.contains("https://127.0.0.1:9443/convert"),
        );
    }

    /// Asserts that no webhook points at a local manager any more (waiting up to `secs` for a
    /// guard to finish), and that the CRD converts as `make install` left it: through
    /// config/crd's Service.
    fn wait_for_no_local_webhooks(&self, what: &str, secs: u64) {
        self.wait_for(what, secs, LOCAL_CONFIGURATIONS, |o| !o.contains("-local-"));
        self.wait_for(what, 30, CRONJOB_CONVERSION, |o| {
            o.contains(r#""strategy":"Webhook""#)
                && o.contains("webhook-service")
                && !o.contains("127.0.0.1")
        });
    }
}

/// The webhook configurations in the cluster, by name.
const LOCAL_CONFIGURATIONS: &str =
    "kubectl get mutatingwebhookconfigurations,validatingwebhookconfigurations -o name";
/// The conversion of the reference project's converted CRD.
const CRONJOB_CONVERSION: &str =
    "kubectl get crd cronjobs.batch.example.com -o jsonpath='{.spec.conversion}'";

/// The user's path, literally: the quickstart of our README and the command blocks of the
/// generated README, run as written in the reference project (whose first commands are the
/// quickstart's) against the real control plane; and the ways a local manager ends (Ctrl-C,
/// SIGKILL, a failure at start), none of which may leave a webhook pointing at it.
fn walk_the_user_path(dir: &Path, kubeconfig: &Path) {
    let shell = UserShell::new(dir, &[("KUBECONFIG", kubeconfig)]);
    let image = "registry.example.com/memcached-operator:0.1.0";

    // Our README's quickstart: the scaffolding lines are what `reference_project` ran, and
    // `cargo test` runs in the generated README's "Run the tests" (`make lint test`) below.
    let readme = our_readme();
    let quickstart = sh_blocks(
        &readme,
        "## Quickstart: from an empty folder to a running operator",
    );
    assert_eq!(quickstart.len(), 2, "{quickstart:?}");
    let mut rest = Vec::new();
    for line in quickstart[0].clone() {
        if line.starts_with("cargo install ")
            || line.starts_with("mkdir ")
            || line.starts_with("cd ")
        {
            continue;
        } else if let Some(init) = line.strip_prefix("operator-rs init ") {
            assert!(
                init.contains("--repo github.com/acme/memcached-operator"),
                "{line}"
            );
        } else if let Some(api) = line.strip_prefix("operator-rs create api ") {
            assert!(
                REFERENCE_APIS.contains(&words(api).join(" ").as_str()),
                "the quickstart's `{line}` is not one the reference project runs"
            );
        } else {
            rest.push(line);
        }
    }
    let steps: Vec<String> = (rest.iter())
        .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        steps,
        [
            "cargo test",
            "make install",
            "make run",
            "kubectl apply",
            "make deploy"
        ],
        "the quickstart changed: walk its new steps here"
    );
    shell.run(&rest[1]);
    let mut manager = shell.start(&rest[2]);
    // With webhooks, `make run` serves them locally and points the cluster at itself. It
    // first builds the manager, recompiling some of what the `--all-targets` build compiled
    // (ring, kube-core, ...: minutes on a loaded machine, where 300 s once ran out).
    shell.wait_for_local_webhooks(900);
    // The samples: CronJob's spoke through the conversion webhook, its hub through the
    // defaulter and the validator.
    shell.run(&rest[3]);
    shell.run("kubectl get cronjobs.v2.batch.example.com -A -o name | grep -q .");
    shell.wait_for(
        "the Memcached sample is reconciled",
        120,
        "kubectl get memcacheds -A -o jsonpath='{..status.conditions[*].type}'",
        |o| !o.trim().is_empty(),
    );
    // The generated README's "Metrics" by hand under this `make run`, which serves them on
    // 127.0.0.1:8443 over HTTPS, checking tokens with the kubeconfig's credentials: without a
    // token 401; its lines (but the port-forward to a deployed manager's Pod) get the metrics.
    let generated = read(dir, "README.md");
    let metrics = sh_blocks(&generated, "### Metrics").concat();
    let status = "curl -k -s -o /dev/null -w '%{http_code}' https://127.0.0.1:8443/metrics";
    shell.wait_for("401 without a token", 60, status, |o| o == "401");
    assert!(
        metrics.last().is_some_and(|l| l.starts_with("curl ")),
        "{metrics:?}"
    );
    let mut scraped = String::new();
    for line in &metrics {
        if line.contains(" port-forward ") {
            eprintln!("SKIPPED: `{line}` (no node runs the deployed manager's Pod here)");
            continue;
        }
        scraped = shell.run(line);
    }
    let series = r#"controller_runtime_reconcile_total{controller="memcached""#;
    assert!(scraped.contains(series), "{series} not scraped:\n{scraped}");

    // The objects go while the manager runs (it removes its finalizers), then Ctrl-C: the
    // manager takes its webhooks back itself.
    // Two versions' samples of one kind name one object: the second delete may find it gone.
    shell.run("kubectl delete -k config/samples/ --ignore-not-found");
    signal_job(&mut manager, "INT");
    shell.wait_for_no_local_webhooks("Ctrl-C leaves no local webhook", 1);

    // `create webhook`'s advice, failing at start: a CRD it converts is missing, so the
    // manager exits non-zero and takes back the configurations it had already pointed.
    shell.run("kubectl delete crd cronjobs.batch.example.com");
    let advice = "cargo run -- --webhook-local-url https://127.0.0.1:9443";
    let status = shell.start(advice).wait().unwrap();
    let output = shell.manager_log();
    assert!(
        !status.success(),
        "the manager started without its CRD:\n{output}"
    );
    assert!(output.contains("cronjobs.batch.example.com"), "{output}");
    let (_, configurations) = shell.try_run(LOCAL_CONFIGURATIONS);
    assert!(
        !configurations.contains("-local-"),
        "left by a failed start:\n{configurations}\n{output}"
    );

    // The generated README. "Run it on your machine", as written (`make install` applies
    // config/crd over the CRD deleted above; tests/local_webhooks.rs runs it beside `make run`).
    let on_machine = sh_blocks(&generated, "### Run it on your machine").concat();
    assert_eq!(
        on_machine,
        [
            "make install",
            "make run",
            "kubectl apply -k config/samples/"
        ]
    );
    shell.run(&on_machine[0]);
    let mut manager = shell.start(&on_machine[1]);
    shell.wait_for_local_webhooks(120);
    shell.run(&on_machine[2]);
    // SIGKILL to the whole job (make, cargo, the manager): its guard takes it all back, and
    // no admission webhook refuses the kind (its hub needs no conversion; the spoke converts
    // through config/crd's Service again, as `make install` left it, served by no Pod here).
    signal_job(&mut manager, "KILL");
    shell.wait_for_no_local_webhooks("the guard cleans up after a killed manager", 60);
    shell.run("kubectl apply -f config/samples/batch_v1_cron_job.yaml");

    // "Uninstall", after `make install`, while `make run` runs: run as "Metrics" says for
    // local runs without security, whose metrics are then plain HTTP for anyone.
    let uninstall = sh_blocks(&generated, "### Uninstall");
    assert_eq!(uninstall.len(), 2, "{uninstall:?}");
    let (insecure_run, plain_curl) = (
        "METRICS_SECURE=false make run",
        "curl http://127.0.0.1:8443/metrics",
    );
    for line in [insecure_run, plain_curl] {
        assert!(generated.contains(&format!("`{line}`")), "{line}");
    }
    let mut manager = shell.start(insecure_run);
    shell.wait_for_local_webhooks(120);
    shell.wait_for("plain HTTP metrics", 60, plain_curl, |o| o.contains(series));
    for line in &uninstall[1] {
        shell.run(line);
    }
    signal_job(&mut manager, "INT");
    let (_, configurations) = shell.try_run(LOCAL_CONFIGURATIONS);
    assert!(
        !configurations.contains("-local-"),
        "left after the uninstall and Ctrl-C:\n{configurations}\n{}",
        shell.manager_log()
    );
    let (_, crds) = shell.try_run("kubectl get crd -o name");
    assert!(
        !crds.contains("example.com"),
        "CRDs left by `make uninstall`:\n{crds}"
    );

    // "Run the tests", as written: lint and unit tests, the integration tests on envtest
    // (KUBEBUILDER_ASSETS, inherited), the e2e suite against the kubeconfig's cluster.
    let tests = sh_blocks(&generated, "### Run the tests").concat();
    assert_eq!(
        tests,
        ["make lint test", "make test-integration", "make test-e2e"]
    );
    for line in &tests {
        shell.run(line);
    }

    // "Deploy it to the cluster": the image steps need a container runtime and a registry;
    // `make deploy` runs as written (the API server validates every object; no node runs its
    // Pods here), after cert-manager's CRDs, which config/certmanager needs.
    let deploy = sh_blocks(&generated, "### Deploy it to the cluster").concat();
    assert!(
        deploy[0].starts_with("make docker-build docker-push"),
        "{deploy:?}"
    );
    eprintln!(
        "SKIPPED: `{}` (no container runtime or registry here)",
        deploy[0]
    );
    let cert_manager =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/user_path/cert-manager-crds.yaml");
    shell.run(&format!(
        "kubectl apply --server-side -f {}",
        cert_manager.display()
    ));
    shell.run(&deploy[1].replace("<some-registry>/memcached-operator:tag", image));
    shell.run(
        "kubectl -n memcached-operator-system get deployment memcached-operator-controller-manager",
    );
    // The quickstart's deploy line (the same target, its placeholder filled) applies again.
    shell.run(&rest[4].replace("<registry>/memcached-operator:0.1.0", image));
    for line in &uninstall[0] {
        shell.run(line);
    }
    let (_, crds) = shell.try_run("kubectl get crd -o name");
    assert!(
        !crds.contains("example.com"),
        "CRDs left by `make undeploy`:\n{crds}"
    );

    // "Distribution", its placeholder filled: the installer names the image.
    let distribution = sh_blocks(&generated, "## Distribution").concat();
    assert_eq!(distribution.len(), 1, "{distribution:?}");
    shell.run(&distribution[0].replace("<some-registry>/memcached-operator:tag", image));
    let installer = read(dir, "dist/install.yaml");
    assert!(
        installer.contains(&format!("image: {image}")),
        "{installer}"
    );

    // The quickstart's second block: the generators, then their CI check, as written.
    assert_eq!(
        quickstart[1],
        [
            "operator-rs generate manifests",
            "operator-rs generate manifests --check"
        ]
    );
    for line in &quickstart[1] {
        shell.run(line);
    }
}
