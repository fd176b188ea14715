//! The generated project's CI workflow (`.github/workflows/ci.yml`), run here step by step as
//! GitHub would: every `run:` step in the project folder with bash, in job order. `uses:` steps
//! (checkout, toolchain, caches) are GitHub's own and say so when skipped; the step that installs
//! the envtest binaries (`make -s envtest`, operator-rs's installer: no Go anywhere) runs too, and
//! takes them from this test's $KUBEBUILDER_ASSETS (`--use-env`) instead of downloading them.
//!
//! The project is a fresh `init` (a project with no API yet must pass its own CI; the reference
//! project's kinds are held to the same bar in tests/generated_project.rs), extended as its
//! README says a user extends the manager.
//!
//! Also the Makefile's `make operator-rs`, which pins the operator-rs a project was made with:
//! it links an operator-rs of that version found on PATH, and otherwise installs one with
//! `cargo install`, failing with what to set when it cannot.
//!
//! Also the scaffolded drift test (`tests/crds.rs`) under PROJECT's `crd:` options.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use common::*;

/// A folder holding `operator-rs`: this build of the CLI, as `cargo install` would put it on PATH.
fn path_with_cli(tmp: &Path) -> String {
    let bin = tmp.join("path-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("operator-rs");
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_operator-rs"), &link).unwrap();
    }
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Runs `script` with bash in `dir`, as an Actions `run:` step (`bash -e -o pipefail`).
fn bash(dir: &Path, script: &str, env: &BTreeMap<String, String>) -> std::process::Output {
    seed_lock(dir);
    common::as_user(&mut Command::new("bash"))
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
        .current_dir(dir)
        .envs(env)
        .env("CARGO_BUILD_BUILD_DIR", shared_build_dir())
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS")
        .output()
        .expect("bash runs")
}

/// `${{ vars.NAME }}` is a repository variable: unset here, so empty, as on a fresh repository.
/// Any other expression is one this runner does not know, and fails the test.
fn expand(value: &str) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find("${{") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find("}}").expect("an unterminated ${{") + at;
        let expr = rest[at + 3..end].trim();
        assert!(
            expr.starts_with("vars.") || expr.starts_with("github."),
            "the workflow uses `${{{{ {expr} }}}}`, which this runner cannot evaluate"
        );
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// The tests that build a generated project run one at a time: they share a target directory,
/// where each one's `debug/manager` would replace the other's.
static SHARED_TARGET: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn every_step_of_the_generated_ci_workflow_passes() {
    if runs_elsewhere("generated_workflow") {
        return;
    }
    let _one_at_a_time = SHARED_TARGET.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = init_project("workflow-operator");
    let dir = project_dir(&tmp, "workflow-operator");
    extend_the_manager(&dir);
    let text = read(&dir, ".github/workflows/ci.yml");
    let workflow: serde_json::Value = serde_saphyr::from_str(&text).expect("ci.yml is YAML");
    let jobs = workflow["jobs"].as_object().expect("ci.yml has jobs");
    assert!(!jobs.is_empty());

    let path = path_with_cli(tmp.path());
    let github_env = tmp.path().join("github-env");
    // Run as on a pull request into `main`: the project committed there, `origin` fetched.
    as_pull_request(&dir);
    let mut ran = Vec::new();
    for (job, spec) in jobs {
        // What earlier steps of this job exported through $GITHUB_ENV.
        let mut job_env = BTreeMap::new();
        std::fs::write(&github_env, "").unwrap();
        for step in spec["steps"].as_array().expect("a job has steps") {
            if let Some(action) = step["uses"].as_str() {
                eprintln!("[{job}] skipped `uses: {action}`: a GitHub action, not a command");
                continue;
            }
            let script = step["run"].as_str().expect("a step uses or runs");
            if let Some(condition) = step["if"].as_str() {
                assert_eq!(
                    condition, PULL_REQUEST,
                    "[{job}] a step's condition this runner cannot evaluate"
                );
            }
            let mut env = job_env.clone();
            env.extend(PULL_REQUEST_ENV.map(|(k, v)| (k.to_string(), v.to_string())));
            env.insert("PATH".to_string(), path.clone());
            env.insert("CI".to_string(), "true".to_string());
            env.insert("GITHUB_ENV".to_string(), github_env.display().to_string());
            if let Some(vars) = step["env"].as_object() {
                for (k, v) in vars {
                    env.insert(
                        k.clone(),
                        expand(v.as_str().expect("env values are strings")),
                    );
                }
            }
            // The envtest step runs as written: `make envtest` is `operator-rs envtest --use-env`,
            // which takes the control plane of KUBEBUILDER_ASSETS (this test's) as it is; it
            // would download one from GitHub, which this machine does not reach.
            let envtest_step = script.contains("make -s envtest");
            assert!(
                !script.contains("setup-envtest") && !script.contains("go run"),
                "[{job}] the workflow needs Go: `{script}`"
            );
            let assets = std::env::var("KUBEBUILDER_ASSETS")
                .ok()
                .filter(|a| !a.is_empty());
            if envtest_step && assets.is_none() {
                eprintln!(
                    "[{job}] SKIPPED the envtest step: KUBEBUILDER_ASSETS unset (it would download from GitHub); the tests that need it say so"
                );
                continue;
            }
            let out = bash(&dir, script, &env);
            assert!(
                out.status.success(),
                "[{job}] step `{script}` failed:\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            ran.push(format!("[{job}] {}", script.lines().next().unwrap_or("")));
            for line in std::fs::read_to_string(&github_env).unwrap().lines() {
                if let Some((k, v)) = line.split_once('=') {
                    job_env.insert(k.to_string(), v.to_string());
                }
            }
            if envtest_step {
                assert_eq!(
                    job_env.get("KUBEBUILDER_ASSETS"),
                    assets.as_ref(),
                    "[{job}] `{script}` exported another KUBEBUILDER_ASSETS than the one set"
                );
            }
        }
    }
    eprintln!("ran:\n  {}", ran.join("\n  "));
    if std::env::var("KUBEBUILDER_ASSETS").is_ok_and(|a| !a.is_empty()) {
        assert!(
            ran.iter().any(|r| r.contains("make -s envtest")),
            "the workflow installs no envtest binaries: {ran:?}"
        );
    }
    for needed in [
        "cargo test",
        "cargo clippy",
        "make operator-rs",
        "make check-manifests",
        "make check-crd-compat",
        "make check-dashboards",
    ] {
        assert!(
            ran.iter().any(|r| r.contains(needed)),
            "the workflow has no `{needed}` step: {ran:?}"
        );
    }
    // `make operator-rs` pinned the version the project was made with, and linked the
    // operator-rs of that version it found on PATH.
    let version = env!("CARGO_PKG_VERSION");
    let pinned = dir.join(format!("bin/operator-rs-{version}"));
    assert_eq!(
        std::fs::canonicalize(&pinned).expect("make operator-rs made bin/operator-rs-<version>"),
        std::fs::canonicalize(env!("CARGO_BIN_EXE_operator-rs")).unwrap()
    );
    assert!(
        read(&dir, ".gitignore").lines().any(|l| l == "/bin/"),
        "bin/ is not committed"
    );

    // The user's flag is the manager's.
    let help = Command::new(dir.join("target/debug/manager"))
        .arg("--help")
        .output()
        .expect("the manager was built by the workflow");
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--greeting") && help.contains("--leader-elect"),
        "{help}"
    );

    // A flag that clashes with one of the runtime's fails the generated test, naming it.
    let main = read(&dir, "src/main.rs").replace(
        "    greeting: String,",
        "    greeting: String,\n    #[arg(long)]\n    leader_elect: bool,",
    );
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
    let mut env = BTreeMap::new();
    env.insert("PATH".to_string(), path);
    let out = bash(&dir, "cargo test --bin manager", &env);
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "a clashing flag passed: {output}");
    assert!(
        output.contains("the_command_line_is_consistent")
            && (output.contains("leader_elect") || output.contains("leader-elect")),
        "{output}"
    );
}

/// What the generated README's "Extending the manager" shows: a flag of the operator's own and a
/// task on every replica, added to `src/main.rs` without touching the runtime.
fn extend_the_manager(dir: &Path) {
    let main = read(dir, "src/main.rs");
    let flag = "    manager: ManagerArgs,\n";
    assert!(main.contains(flag), "{main}");
    let main = main.replacen(
        flag,
        "    manager: ManagerArgs,\n    /// Greeting logged by the greeter task.\n    #[arg(long, default_value = \"hello\")]\n    greeting: String,\n",
        1,
    );
    let run = "    let tasks = controllers::all();\n";
    assert!(main.contains(run), "{main}");
    let main = main.replacen(
        run,
        r#"    let mut tasks = controllers::all();
    let greeting = cli.greeting;
    let greeter = Registration::new("greeter", move |ctx| async move {
        tracing::info!(%greeting, "greeter started");
        ctx.shutdown.wait().await;
        Ok(())
    });
    tasks.push(greeter.on_every_replica());
"#,
        1,
    );
    let main = main.replacen(
        "use operator_rs_runtime::manager::{Manager, ManagerArgs};",
        "use operator_rs_runtime::manager::{Manager, ManagerArgs, Registration};",
        1,
    );
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
}

#[test]
fn make_operator_rs_says_what_to_set_when_it_cannot_install() {
    if runs_elsewhere("generated_workflow") {
        return;
    }
    let tmp = init_project("pin-operator");
    let dir = project_dir(&tmp, "pin-operator");
    let mut env = BTreeMap::new();
    // The operator-rs on PATH is another version than the one asked for, so it is not used.
    env.insert("PATH".to_string(), path_with_cli(tmp.path()));
    let missing = tmp.path().join("no-such-checkout");
    let script = format!(
        "make operator-rs OPERATOR_RS_VERSION=9.9.9 OPERATOR_RS_SOURCE='--path {}'",
        missing.display()
    );
    let out = bash(&dir, &script, &env);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "installing from nowhere succeeded");
    assert!(
        stderr.contains("could not install operator-rs 9.9.9")
            && stderr.contains(&format!("cargo install --path {}", missing.display()))
            && stderr.contains("set OPERATOR_RS_SOURCE"),
        "{stderr}"
    );
    assert!(!dir.join("bin/operator-rs-9.9.9").exists());

    // Without OPERATOR_RS_SOURCE, the default names crates.io and the pinned version.
    let out = bash(&dir, "make -n operator-rs OPERATOR_RS_VERSION=9.9.9", &env);
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(plan.contains("src='operator-rs --version 9.9.9'"), "{plan}");
}

/// The CRD-size advice (`crd: {maxDescLen: 0}` in PROJECT) and the other `crd:` options keep
/// the scaffolded drift test (`tests/crds.rs`) passing once `generate crds` has applied them: it
/// tailors `Kind::crd()` as `generate crds` does. It still catches drift: options changed in
/// PROJECT without `generate crds` fail it, with the advice that then fixes it.
#[test]
fn the_drift_test_honours_the_crd_options_of_project() {
    if runs_elsewhere("generated_workflow") {
        return;
    }
    let _one_at_a_time = SHARED_TARGET.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = init_project("crd-options");
    let dir = project_dir(&tmp, "crd-options");
    ok(
        &dir,
        &words("create api --group batch --version v1 --kind CronJob --controller=false"),
    );
    // A field whose format only `knownFormatsOnly` changes (schemars writes `uint32`).
    let types = dir.join("src/api/v1/cron_job.rs");
    let source = std::fs::read_to_string(&types).unwrap();
    let field = "    pub foo: Option<String>,\n";
    assert!(source.contains(field), "{source}");
    let source = source.replacen(
        field,
        &format!(
            "{field}    /// How many finished runs are kept. Older ones are deleted.\n    \
             pub keep: Option<u32>,\n"
        ),
        1,
    );
    std::fs::write(&types, source).unwrap();
    let crd = "config/crd/bases/batch.example.com_cronjobs.yaml";
    let project = read(&dir, "PROJECT");
    let cases = [
        // The size advice, as the tool prints it.
        "crd: {maxDescLen: 0}\n",
        // Cut, not dropped, and the formats kube-apiserver knows.
        "crd:\n  maxDescLen: 20\n  knownFormatsOnly: true\n",
    ];
    for (i, options) in cases.iter().enumerate() {
        std::fs::write(dir.join("PROJECT"), format!("{project}{options}")).unwrap();
        ok(&dir, &["generate", "crds"]);
        let text = read(&dir, crd);
        match i {
            0 => assert!(!text.contains("description:"), "{text}"),
            _ => {
                assert!(text.contains("How many finished"), "{text}");
                assert!(!text.contains("Older ones"), "{text}");
                assert!(
                    text.contains("format: int64") && !text.contains("uint32"),
                    "{text}"
                );
            }
        }
        // One build: the second case only runs the test again.
        cargo(&dir, &["test", "--test", "crds"]);
    }

    // Back to no options in PROJECT without `generate crds`: the committed CRD is stale.
    std::fs::write(dir.join("PROJECT"), &project).unwrap();
    let out = cargo_output(&dir, &["test", "--test", "crds"], &[]);
    assert!(!out.success, "the drift test passed on a stale CRD");
    assert!(
        out.stdout.contains(crd) && out.stdout.contains("run `operator-rs generate crds`"),
        "{}",
        out.stdout
    );
    // And following its advice fixes it.
    ok(&dir, &["generate", "crds"]);
    cargo(&dir, &["test", "--test", "crds"]);
}

/// The features cargo enables on `krate` when it builds the tests of the package at `dir`
/// (`cargo tree -e features`, every target platform), sorted. Build-dependency edges are left
/// out: the resolver builds a build script's dependencies apart, with features of their own
/// (tree-sitter's build script takes serde_json with `preserve_order`; the serde_json the
/// workspace's code and tests link has none).
fn test_build_features(dir: &Path, krate: &str, workspace: bool) -> Vec<String> {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args([
        "tree",
        "--offline",
        "-e",
        "features,normal,dev",
        "--target",
        "all",
        "-i",
        krate,
    ])
    .current_dir(dir)
    .env_remove("CARGO_MANIFEST_DIR");
    if workspace {
        cmd.args(["--workspace", "--all-features"]);
    }
    let out = cmd.output().expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree -i {krate} in {}:\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let prefix = format!("{krate} feature \"");
    let mut features: Vec<String> = (text.lines())
        .filter_map(|l| {
            l.split_once(&prefix)
                .map(|(_, f)| f.trim_end_matches(['"', ' ', '(', '*', ')']).to_owned())
        })
        .collect();
    features.sort();
    features.dedup();
    features
}

/// The tests build generated projects in this workspace's target directory (their build-dir), with its Cargo.lock
/// (`common::shared_build_dir`, `common::seed_lock`): a dependency compiles once for both only
/// if cargo enables the same features on it in both. These are the ones that cost the most
/// (tokio and all that builds on it; k8s-openapi, the largest crate of the tree, and kube-core).
/// kube's client and runtime still compile twice: the workspace's tests use tempfile, whose
/// rustix and fastrand turn on features of bitflags and fastrand under them.
#[test]
fn a_generated_project_builds_its_dependencies_as_the_workspace_does() {
    if runs_elsewhere("generated_workflow") {
        return;
    }
    let tmp = init_project("shared-deps");
    let dir = project_dir(&tmp, "shared-deps");
    ok(
        &dir,
        &words(
            "create api --group cache --version v1alpha1 --kind Memcached --image memcached:1.6",
        ),
    );
    seed_lock(&dir);
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    for krate in [
        "tokio",
        "hyper",
        "hyper-util",
        "tower",
        "rustls",
        "serde_json",
        "axum",
        "schemars",
        "jiff",
        "k8s-openapi",
        "kube-core",
    ] {
        assert_eq!(
            test_build_features(&dir, krate, false),
            test_build_features(workspace, krate, true),
            "{krate}: the generated project's test build enables other features than the \
             workspace's, so the tests compile it (and what builds on it) twice"
        );
    }
}

/// Every crate and its features, as `cargo tree` resolves them at `dir` for `edges`
/// (`normal,build`: `cargo build`/`cargo run`; all: `cargo test`), one `name version [features]`
/// line each.
fn resolved(dir: &Path, edges: Option<&str>) -> BTreeSet<String> {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["tree", "--offline", "--prefix", "none", "-f", "{p} [{f}]"])
        .current_dir(dir)
        .env_remove("CARGO_MANIFEST_DIR");
    if let Some(edges) = edges {
        cmd.args(["-e", edges]);
    }
    let out = cmd.output().expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree in {}:\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    (String::from_utf8_lossy(&out.stdout).lines())
        .map(|l| l.trim_end_matches(" (*)").to_owned())
        .collect()
}

/// A user alternates `make run` and `make test`: the manager's dependencies must be the same
/// crates with the same features in both, or each switch finds a second build of tokio, rustls
/// and kube's client to make (a minute or more, cold). Only the runtime itself (its `testing`
/// feature) and the project's crates differ.
#[test]
fn cargo_run_and_cargo_test_build_the_managers_dependencies_once() {
    if runs_elsewhere("generated_workflow") {
        return;
    }
    let tmp = init_project("one-build");
    let dir = project_dir(&tmp, "one-build");
    ok(
        &dir,
        &words(
            "create api --group cache --version v1alpha1 --kind Memcached --image memcached:1.6",
        ),
    );
    ok(
        &dir,
        &words(
            "create webhook --group cache --version v1alpha1 --kind Memcached --defaulting --programmatic-validation",
        ),
    );
    seed_lock(&dir);
    let run = resolved(&dir, Some("normal,build"));
    let test = resolved(&dir, None);
    let name = |line: &str| line.split(" [").next().unwrap_or(line).to_owned();
    let tested: BTreeSet<String> = test.iter().map(|l| name(l)).collect();
    assert!(
        tested.iter().any(|l| l.starts_with("kube-client ")),
        "{tested:?}"
    );
    let differ: Vec<&String> = (run.iter())
        .filter(|l| !test.contains(*l))
        .filter(|l| !l.starts_with("operator-rs-runtime ") && !l.starts_with("one-build "))
        .collect();
    assert!(
        differ.is_empty(),
        "`cargo test` builds these crates of the manager with other features than `cargo run` \
         (a dev-dependency or the runtime's `testing` feature turns features on): {differ:#?}\n\
         what cargo test has of them: {:#?}",
        (test.iter())
            .filter(|l| differ.iter().any(|d| name(d) == name(l)))
            .collect::<Vec<_>>()
    );
}

/// A namespace-scoped project's own e2e suite, run as its README says (`make test-e2e`, against
/// the cluster of the current kubeconfig: here a real control plane): a project made with `init`
/// and `create api`, then switched with `edit --namespaced`. Its manager runs in a namespace of
/// its own under exactly the Roles of its config/rbac, reconciles the kind's sample there, and
/// leaves the same object in another namespace untouched, with no 403 in its log. Its
/// integration tests (`make test-integration`) pass too: their controllers watch only the
/// namespaces the tests use, under config/rbac's Roles there.
#[test]
fn a_namespaced_projects_e2e_shows_its_manager_stays_in_its_namespace() {
    use operator_rs_runtime::testing::envtest::Envtest;
    if runs_elsewhere("generated_workflow") {
        return;
    }
    if !Envtest::available() {
        eprintln!("SKIPPED: the namespace-scoped e2e suite needs KUBEBUILDER_ASSETS");
        return;
    }
    let _one_at_a_time = SHARED_TARGET.lock().unwrap_or_else(|e| e.into_inner());
    let name = "scoped-e2e-op";
    let tmp = timed("init, create api, edit --namespaced", || {
        let tmp = init_project(name);
        let dir = project_dir(&tmp, name);
        let api = "create api --group cache --version v1alpha1 --kind Memcached";
        ok(&dir, &words(api));
        ok(&dir, &["edit", "--namespaced"]);
        tmp
    });
    let dir = project_dir(&tmp, name);
    assert!(read(&dir, "PROJECT").contains("\nnamespaced: true\n"));
    let env = timed("a control plane", || Envtest::shared().expect("it starts"));

    let mut vars = BTreeMap::new();
    vars.insert("PATH".to_string(), path_with_cli(tmp.path()));
    vars.insert(
        "KUBECONFIG".to_string(),
        env.kubeconfig().display().to_string(),
    );
    let out = timed("make test-e2e", || bash(&dir, "make test-e2e", &vars));
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "make test-e2e failed:\n{output}");
    let summary = (output.lines())
        .filter(|l| l.starts_with("test ") || l.contains("SKIPPED") || l.contains("finished in"));
    eprintln!("{}", summary.collect::<Vec<_>>().join("\n"));
    // The kind's test ran its scope check (a cluster-scoped project's would say it skipped it)
    // and passed; the namespace-deletion test says why it leaves the manager's namespace.
    assert!(
        output.contains("test memcached_v1alpha1 ... ok"),
        "{output}"
    );
    assert!(
        !output.contains("a cluster-scoped manager watches every namespace"),
        "{output}"
    );
    assert!(
        output.contains("SKIPPED: deleting e2e-memcached-v1alpha1-ns-deletion-"),
        "{output}"
    );

    // Its integration tests, as its README says (`make test-integration`): the controllers
    // run namespace-scoped under exactly config/rbac's Roles, in the namespaces they watch.
    let out = timed("make test-integration", || {
        bash(&dir, "make test-integration", &vars)
    });
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "make test-integration failed:\n{output}"
    );
    assert!(
        output.contains("test memcached_v1alpha1 ... ok"),
        "{output}"
    );
    assert!(
        output.contains(
            "SKIPPED memcached_v1alpha1_ns_deletion: deleting a namespace of a namespace-scoped operator"
        ),
        "{output}"
    );
}

/// A project whose only kind is external (cert-manager's Certificate, `create api --from-crd`):
/// no `config/crd/bases`. Its own `cargo test` passes, and so does its e2e suite run as its
/// README says (`make test-e2e`, on a real control plane): the harness installs the CRD file
/// PROJECT names instead of reading `config/crd/bases`, which stays absent (so `generate
/// manifests --check` stays clean), and leaves no ClusterRole or ClusterRoleBinding of the
/// project behind, those it made being named with the project's prefix.
#[test]
fn an_all_external_projects_e2e_installs_the_crds_it_names() {
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
    use operator_rs_runtime::testing::envtest::Envtest;
    if runs_elsewhere("generated_workflow") {
        return;
    }
    if !Envtest::available() {
        eprintln!("SKIPPED: the all-external e2e suite needs KUBEBUILDER_ASSETS");
        return;
    }
    let _one_at_a_time = SHARED_TARGET.lock().unwrap_or_else(|e| e.into_inner());
    let name = "external-e2e-op";
    let tmp = init_project(name);
    let dir = project_dir(&tmp, name);
    std::fs::create_dir_all(dir.join("config/external")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/external_crds/cert-manager.io_certificates.yaml"),
        dir.join("config/external/cert-manager.io_certificates.yaml"),
    )
    .unwrap();
    ok(
        &dir,
        &words(
            "create api --group cert-manager.io --version v1 --kind Certificate --from-crd config/external/cert-manager.io_certificates.yaml",
        ),
    );
    assert!(
        !dir.join("config/crd/bases")
            .join("cert-manager.io_certificates.yaml")
            .exists()
    );
    let env = timed("a control plane", || Envtest::shared().expect("it starts"));

    let mut vars = BTreeMap::new();
    vars.insert("PATH".to_string(), path_with_cli(tmp.path()));
    vars.insert(
        "KUBECONFIG".to_string(),
        env.kubeconfig().display().to_string(),
    );
    for script in ["cargo test", "make test-e2e"] {
        let out = timed(script, || bash(&dir, script, &vars));
        let output = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{script} failed:\n{output}");
        assert!(!output.contains("panicked"), "{script}:\n{output}");
    }
    let check = run(&dir, &words("generate manifests --check"));
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);

    let left = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let client = env.client().unwrap();
            let crd = kube::Api::<
                k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
            >::all(client.clone())
            .get_opt("certificates.cert-manager.io")
            .await
            .unwrap();
            assert!(crd.is_some(), "the e2e suite installed no Certificate CRD");
            let roles = kube::Api::<ClusterRole>::all(client.clone())
                .list(&Default::default())
                .await
                .unwrap();
            let bindings = kube::Api::<ClusterRoleBinding>::all(client)
                .list(&Default::default())
                .await
                .unwrap();
            (roles.items.into_iter().filter_map(|r| r.metadata.name))
                .chain(bindings.items.into_iter().filter_map(|b| b.metadata.name))
                .filter(|n| n.contains(name) || n == "manager-role" || n == "metrics-auth-role")
                .collect::<Vec<_>>()
        });
    assert!(left.is_empty(), "left on the cluster: {left:?}");
}

/// A project moved to the multigroup layout (`edit --multigroup`, after ship's Frigate of v1
/// with a conversion spoke v2) that then gets one kind name in a second group of that version
/// (sea's Frigate of v1, with webhooks): it passes `cargo clippy --all-targets -- -D warnings`
/// and `generate manifests --check`; on a real API server its two Frigate CRDs are installed
/// side by side (server-side apply), each serving its own group, and each kind's sample is
/// accepted (a server-side dry run).
#[test]
fn a_multigroup_project_with_one_kind_name_in_two_groups_builds_and_installs() {
    use operator_rs_runtime::testing::envtest::Envtest;
    if runs_elsewhere("generated_workflow") {
        return;
    }
    let _one_at_a_time = SHARED_TARGET.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::Builder::new()
        .prefix("operator-rs-test-")
        .tempdir()
        .unwrap();
    let dir = tmp.path().join("fleet-op");
    std::fs::create_dir(&dir).unwrap();
    ok(
        &dir,
        &words("init --domain example.com --repo github.com/acme/fleet-op"),
    );
    for command in [
        "create api --group ship --version v1 --kind Frigate",
        "create api --group ship --version v2 --kind Frigate --controller=false",
        "create webhook --group ship --version v1 --kind Frigate --defaulting --conversion --spoke v2",
        "edit --multigroup",
        "create api --group sea --version v1 --kind Frigate",
        "create webhook --group sea --version v1 --kind Frigate --defaulting --programmatic-validation",
    ] {
        ok(&dir, &words(command));
    }
    cargo(&dir, &["clippy", "--all-targets", "--", "-D", "warnings"]);
    let check = run(&dir, &words("generate manifests --check"));
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);

    if !Envtest::available() {
        eprintln!("SKIPPED the API server half of this test: KUBEBUILDER_ASSETS is not set");
        return;
    }
    let env = timed("a control plane", || Envtest::shared().expect("it starts"));
    let kubectl = |args: &[&str]| {
        let out = Command::new("kubectl")
            .arg(format!("--kubeconfig={}", env.kubeconfig().display()))
            .args(args)
            .current_dir(&dir)
            .output()
            .expect("kubectl runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "kubectl {args:?}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    kubectl(&["apply", "--server-side", "-f", "config/crd/bases"]);
    for group in ["ship", "sea"] {
        let crd = format!("crd/frigates.{group}.example.com");
        kubectl(&["wait", "--for=condition=Established", &crd, "--timeout=60s"]);
        let served = kubectl(&["get", &crd, "-o", "jsonpath={.spec.group}"]);
        assert_eq!(served, format!("{group}.example.com"));
        let sample = format!("config/samples/{group}_v1_frigate.yaml");
        let made = kubectl(&["create", "--dry-run=server", "-f", &sample, "-o", "json"]);
        let made: serde_json::Value = serde_json::from_str(&made).unwrap();
        assert_eq!(made["apiVersion"], format!("{group}.example.com/v1"));
    }
}
