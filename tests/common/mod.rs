//! Helpers shared by the integration tests: run the real binary in temporary folders, and
//! snapshot a folder byte for byte to prove a refused command changed nothing.
#![allow(dead_code)]

pub mod readme;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The result of one run of the binary.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Self {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Run `operator-rs <args>` in `dir`.
pub fn run(dir: &Path, args: &[&str]) -> Run {
    as_user(&mut Command::new(env!("CARGO_BIN_EXE_operator-rs")))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the operator-rs binary runs")
        .into()
}

/// Run `operator-rs <args>` in `dir` with extra environment variables.
pub fn run_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    as_user(&mut Command::new(env!("CARGO_BIN_EXE_operator-rs")))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .output()
        .expect("the operator-rs binary runs")
        .into()
}

/// Copy the folder `from` to `to` (created), files and folders.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// Every folder below `dir`, relative (an all-or-nothing command leaves no new empty folder).
pub fn folders(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                out.push(e.path().strip_prefix(dir).unwrap().to_path_buf());
                stack.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// Run and require success, returning stderr (where progress is printed).
pub fn ok(dir: &Path, args: &[&str]) -> Run {
    let r = run(dir, args);
    assert_eq!(
        r.code, 0,
        "operator-rs {args:?} failed:\nstdout:\n{}\nstderr:\n{}",
        r.stdout, r.stderr
    );
    r
}

/// A fresh project folder with `init` already run.
pub fn init_project(name: &str) -> tempfile::TempDir {
    init_project_with(name, &[])
}

/// [`init_project`] with `init_flags` added to `init` (`--multigroup`).
pub fn init_project_with(name: &str, init_flags: &[&str]) -> tempfile::TempDir {
    let tmp = tempfile::Builder::new()
        .prefix("operator-rs-test-")
        .tempdir()
        .unwrap();
    let dir = tmp.path().join(name);
    std::fs::create_dir(&dir).unwrap();
    let repo = format!("github.com/acme/{name}");
    let mut init = vec!["init", "--domain", "example.com", "--repo", &repo];
    init.extend(init_flags);
    ok(&dir, &init);
    // Keep the TempDir alive; callers use `project_dir(&tmp, name)`.
    tmp
}

pub fn project_dir(tmp: &tempfile::TempDir, name: &str) -> PathBuf {
    tmp.path().join(name)
}

/// Every file below `dir` with its bytes, by relative path.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

/// `edit <flag>` (`--namespaced`, `--sharded`) in the project `dir`, once its src/main.rs no
/// longer holds the scaffolded `Manager::new` line as written: refused with and without
/// `--force` (a Rust file is never overwritten whole), naming src/main.rs and the `call` to add
/// by hand (`.namespaced()`), nothing written.
pub fn edit_refuses_rust_it_cannot_patch(dir: &Path, flag: &str, call: &str) {
    let main = dir.join("src/main.rs");
    let text = std::fs::read_to_string(&main).unwrap().replace(
        "let manager = Manager::new(NAME, cli.manager).await?;",
        "let manager = Manager::new(NAME, cli.manager)\n        .await?;",
    );
    std::fs::write(&main, &text).unwrap();
    // The project's files, but the lock and transaction folder operator-rs keeps.
    let files = || {
        let mut files = snapshot(dir);
        files.retain(|p, _| !p.starts_with(".operator-rs"));
        files
    };
    let before = files();
    for args in [&["edit", flag][..], &["edit", flag, "--force"]] {
        let r = run(dir, args);
        assert_ne!(r.code, 0, "{args:?}");
        assert!(
            r.stderr.contains("src/main.rs")
                && r.stderr.contains(call)
                && r.stderr.contains("Nothing was written"),
            "{args:?}: {}",
            r.stderr
        );
        assert_eq!(files(), before, "{args:?}: something was written");
    }
}

pub fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The kinds of the reference project the end-to-end tests scaffold: two kinds in one group (one
/// cluster-scoped), a deploy-image kind, a second version of one kind, a controller for a
/// built-in kind, and a two-version kind with webhooks.
pub const REFERENCE_APIS: &[&str] = &[
    "--group cache --version v1alpha1 --kind Memcached --image memcached:1.6 --image-container-port 11211 --run-as-user 1001",
    "--group webapp --version v1 --kind Guestbook",
    "--group webapp --version v1 --kind Admiral --namespaced=false",
    "--group webapp --version v2 --kind Guestbook --controller=false",
    "--group apps --version v1 --kind Deployment --resource=false --controller",
    "--group batch --version v1 --kind CronJob",
    "--group batch --version v2 --kind CronJob --controller=false",
];

/// The webhooks of the reference project: all three kinds on CronJob, whose hub is v1.
pub const REFERENCE_WEBHOOKS: &[&str] = &[
    "--group batch --version v1 --kind CronJob --defaulting --programmatic-validation",
    "--group batch --version v1 --kind CronJob --conversion --spoke v2",
];

/// The kinds of the variants project (tests/snapshots.rs, tests/release.rs): the flavours the
/// reference project does not take (a built-in kind of the core and of other groups, deploy-image
/// kinds with a command, a digest, no port, cluster scope; a controller added to an existing
/// kind; a plural of its own).
pub const VARIANT_APIS: &[&str] = &[
    "--group core --version v1 --kind ConfigMap --resource=false --controller",
    "--group batch --version v1 --kind Job --resource=false --controller",
    "--group web --version v1beta1 --kind Nginx --image nginx:1.27 --image-container-command nginx,-g,daemon_off",
    "--group web --version v1beta1 --kind Redis --namespaced=false --image registry.local:5000/redis@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef --image-container-port 6379",
    "--group web --version v1 --kind Moose --plural mooses",
    "--group web --version v2 --kind Moose --plural mooses --controller=false",
    "--group web --version v1 --kind Widget --controller=false",
    "--group web --version v1 --kind Widget --resource=false --controller",
    "--group web --version v1 --kind HTTPRoute --namespaced=false",
];

/// The webhooks of the variants project: each type alone, on a cluster-scoped and on a built-in kind.
pub const VARIANT_WEBHOOKS: &[&str] = &[
    "--group web --version v1 --kind Moose --defaulting",
    "--group web --version v1 --kind HTTPRoute --programmatic-validation",
    "--group web --version v1 --kind Moose --conversion --spoke v2",
    "--group core --version v1 --kind ConfigMap --programmatic-validation",
];

/// The build directory (cargo's `build.build-dir`: intermediate artifacts, not the final binaries)
/// every cargo build of a generated project shares: this workspace's target directory (or
/// $OPERATOR_RS_TEST_TARGET_DIR). With [`seed_lock`], a generated project builds the same
/// versions of the crates this workspace built for its tests, and every dependency with the same
/// features (tokio, hyper, rustls, serde, ...) is compiled once per run, for both. Each project's
/// binaries (its `manager`) stay in its own `target/`, so projects built by tests running at the
/// same time never replace each other's. Cargo holds the directory's lock only while it
/// compiles, not while tests run.
pub fn shared_build_dir() -> PathBuf {
    std::env::var_os("OPERATOR_RS_TEST_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            // CARGO_TARGET_TMPDIR is `<target dir>/tmp`, wherever the target dir is.
            Path::new(env!("CARGO_TARGET_TMPDIR"))
                .parent()
                .unwrap()
                .to_owned()
        })
}

/// Gives a generated project without a Cargo.lock this workspace's: its builds then take the
/// versions the workspace's tests were built with (no resolution against the registry at test
/// time, and the compiled crates shared in [`shared_build_dir`]). Cargo adds what is missing
/// and drops what the project does not use.
///
/// It also settles which compiled units of [`shared_build_dir`] the project's builds use
/// ([`share_units`]).
pub fn seed_lock(dir: &Path) {
    let lock = dir.join("Cargo.lock");
    if dir.join("Cargo.toml").exists() && !lock.exists() {
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock"),
            lock,
        )
        .unwrap();
    }
    share_units(dir);
}

/// Which of [`shared_build_dir`]'s units a generated project in `dir` builds with. Cargo names a
/// path package's units after its path relative to the project and its version, so every
/// generated project's crate of one name, and every project's vendored runtime, get the same
/// files; a project whose sources are newer rebuilds them, deleting the rlib that another
/// project's doc tests were reading ("extern location ... does not exist").
/// - The project's crate gets units of its own: a codegen-units setting unique to the project
///   (part of the metadata hash; the dev profile's 256 is a ceiling, not a count).
/// - A vendored runtime that is this operator-rs's copy byte for byte is compiled once for all
///   of them: its files get one fixed modification time, so a build finds the units another
///   project made fresh and never rebuilds them (the runtime compiled once, not once a project);
///   its codegen-units setting comes from its content, so the units of another runtime (a build
///   dir kept from before a runtime change) are never taken for its.
/// - Any other vendored runtime (an old operator-rs's, or one a test changed) gets units of its
///   own, as the crate does.
///
/// The settings go in a `.cargo/config.toml` in the project's parent folder, outside the
/// project (cargo reads it from every ancestor of the folder it runs in): a user's shell,
/// `make` and the CLI's own cargo runs all see it. Only below a temporary folder of the tests.
pub fn share_units(dir: &Path) {
    let Some(parent) = dir.parent() else { return };
    let temp = std::env::temp_dir();
    if !parent.starts_with(&temp) || parent == temp || !dir.join("Cargo.toml").is_file() {
        return;
    }
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let Some(name) = manifest.lines().find_map(|l| {
        let v = l.strip_prefix("name = \"")?;
        Some(v.trim_end_matches('"').to_owned())
    }) else {
        return;
    };
    use std::hash::{BuildHasher, DefaultHasher, Hash, Hasher, RandomState};
    // A codegen-units setting is part of a unit's metadata hash: one of its own per value.
    let units_of = |n: u64| 257 + n % (1 << 30);
    let unique = units_of(RandomState::new().hash_one(parent));
    let mut packages = vec![(name, unique)];
    let vendored = dir.join("vendor/operator-rs-runtime");
    if vendored.is_dir() {
        let files = snapshot(&vendored);
        if &files == pristine_runtime() {
            let pinned = std::time::UNIX_EPOCH + std::time::Duration::from_secs(946_684_800);
            for rel in files.keys() {
                std::fs::File::open(vendored.join(rel))
                    .and_then(|f| f.set_modified(pinned))
                    .unwrap();
            }
            // Pinned times never make a unit stale: units of their own per content keep a
            // build dir's units of an earlier runtime from passing for this one's.
            let mut content = DefaultHasher::new();
            files.hash(&mut content);
            packages.push(("operator-rs-runtime".to_owned(), units_of(content.finish())));
        } else {
            packages.push(("operator-rs-runtime".to_owned(), unique));
        }
    }
    let config = parent.join(".cargo/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap_or_default();
    let before = text.len();
    for (package, units) in packages {
        let section = format!("[profile.dev.package.{package}]");
        if !text.contains(&section) {
            text.push_str(&format!("{section}\ncodegen-units = {units}\n\n"));
        }
    }
    if text.len() != before {
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        std::fs::write(&config, text).unwrap();
    }
}

/// The runtime this operator-rs vendors into a project, file by file (made once per test
/// process, by `init` in a folder of its own).
fn pristine_runtime() -> &'static BTreeMap<PathBuf, Vec<u8>> {
    static RUNTIME: std::sync::OnceLock<BTreeMap<PathBuf, Vec<u8>>> = std::sync::OnceLock::new();
    RUNTIME.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("pristine");
        std::fs::create_dir(&dir).unwrap();
        ok(
            &dir,
            &[
                "init",
                "--domain",
                "example.com",
                "--repo",
                "github.com/acme/pristine",
            ],
        );
        snapshot(&dir.join("vendor/operator-rs-runtime"))
    })
}

/// `init` plus every reference API.
pub fn reference_project(name: &str) -> tempfile::TempDir {
    let tmp = init_project(name);
    let dir = project_dir(&tmp, name);
    for api in REFERENCE_APIS {
        ok(&dir, &words(&format!("create api {api}")));
    }
    for webhook in REFERENCE_WEBHOOKS {
        ok(&dir, &words(&format!("create webhook {webhook}")));
    }
    tmp
}

/// `kubectl kustomize <dir>/<rel>`, parsed into one JSON value per document.
pub fn kustomize(dir: &Path, rel: &str) -> Vec<serde_json::Value> {
    let out = Command::new("kubectl")
        .args(["kustomize", rel])
        .current_dir(dir)
        .output()
        .expect("kubectl is installed");
    assert!(
        out.status.success(),
        "kubectl kustomize {rel} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    serde_saphyr::from_multiple::<serde_json::Value>(&text).expect("kustomize output is YAML")
}

/// The documents of one kind, by `kind`.
pub fn of_kind<'a>(docs: &'a [serde_json::Value], kind: &str) -> Vec<&'a serde_json::Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

/// A command line written as one string: `words("create api --kind Memcached")`.
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// `cargo <args>` in a generated project, building in [`shared_build_dir`] (kube and
/// k8s-openapi compile once per run); fails the test with cargo's output when cargo fails.
pub fn cargo(dir: &Path, args: &[&str]) {
    cargo_with(dir, args, &[]);
}

/// [`cargo`] with extra environment variables.
pub fn cargo_with(dir: &Path, args: &[&str], envs: &[(&str, &str)]) {
    let out = cargo_output(dir, args, envs);
    assert!(
        out.success,
        "`cargo {}` failed in the generated project {}:\nstdout:\n{}\nstderr:\n{}",
        args.join(" "),
        dir.display(),
        out.stdout,
        out.stderr
    );
}

/// What a cargo command printed, and whether it succeeded.
pub struct CargoOutput {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Whether `test` runs in another job: `.ci/run` runs the slowest tests (they build generated
/// projects and old operator-rs binaries, and mostly wait on them and on control planes) in a
/// second `cargo test` beside the README's command, and names them in
/// `OPERATOR_RS_TESTS_ELSEWHERE` for the latter, where each says so in one line and returns.
/// Unset (the README's command on its own), every test runs here.
pub fn runs_elsewhere(test: &str) -> bool {
    let elsewhere = std::env::var("OPERATOR_RS_TESTS_ELSEWHERE").unwrap_or_default();
    let elsewhere = elsewhere.split(',').any(|t| t.trim() == test);
    if elsewhere {
        eprintln!(
            "SKIPPED here: {test} runs in .ci/run's parallel job (OPERATOR_RS_TESTS_ELSEWHERE)"
        );
    }
    elsewhere
}

/// Prints how long `what` took, for the step timeline of the slow tests (seen with
/// `--nocapture`; CI's wall time is read off it: BENCHMARKS.md, "CI wall time").
pub fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = std::time::Instant::now();
    let out = f();
    eprintln!("[step {:6.1}s] {what}", start.elapsed().as_secs_f64());
    out
}

/// `cmd` as a user's shell runs it: without the variables cargo sets for a test process
/// (`CARGO_PKG_*`, `CARGO_MANIFEST_*`, `OUT_DIR`, `CARGO_CRATE_NAME`, `CARGO_BIN_EXE_*`, ...),
/// which no user has. A build that inherits them re-runs each dependency build script that
/// watches one (ring's watches `CARGO_PKG_NAME` and `OUT_DIR`): ring, rustls, kube and the
/// runtime were compiled again in the shared build directory, while other tests linked them.
pub fn as_user(cmd: &mut Command) -> &mut Command {
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        if operator_rs::cargo_command::set_for_the_running_crate(key) {
            cmd.env_remove(key);
        }
    }
    cmd
}

/// `cargo <args>` in a generated project, as [`cargo`], returning what it printed.
pub fn cargo_output(dir: &Path, args: &[&str], envs: &[(&str, &str)]) -> CargoOutput {
    seed_lock(dir);
    let line = format!("cargo {}", args.join(" "));
    let out = timed(&line, || {
        as_user(&mut Command::new(env!("CARGO")))
            .args(args)
            .envs(envs.iter().copied())
            .current_dir(dir)
            .env("CARGO_BUILD_BUILD_DIR", shared_build_dir())
            .env_remove("CARGO_TARGET_DIR")
            // The generated project is its own workspace, not a member of ours.
            .env_remove("CARGO_MANIFEST_DIR")
            .env_remove("RUSTFLAGS")
            .output()
            .expect("cargo runs")
    });
    CargoOutput {
        success: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// CronJob in batch/v1 (the storage version: v2's types say `storage = false`) and batch/v2
/// without a controller, in a fresh project.
pub fn two_versions(name: &str) -> tempfile::TempDir {
    let tmp = init_project(name);
    let dir = project_dir(&tmp, name);
    ok(
        &dir,
        &words("create api --group batch --version v1 --kind CronJob"),
    );
    ok(
        &dir,
        &words("create api --group batch --version v2 --kind CronJob --controller=false"),
    );
    tmp
}

/// The one `if:` of the generated CI workflow: a step run on pull requests only.
pub const PULL_REQUEST: &str = "github.event_name == 'pull_request'";

/// What GitHub sets for a run on a pull request into `main` (see [`as_pull_request`]).
pub const PULL_REQUEST_ENV: [(&str, &str); 2] = [
    ("GITHUB_EVENT_NAME", "pull_request"),
    ("GITHUB_BASE_REF", "main"),
];

/// Run `git args` in `dir` (a fixed identity, no user configuration); panics when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=test", "-c", "user.email=test@example.com"])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `dir` as actions/checkout leaves it for a pull request into `main` with `fetch-depth: 0`: a
/// git repository whose `main` holds the project as it is, fetched as `origin/main`.
pub fn as_pull_request(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "the target branch"]);
    git(dir, &["remote", "add", "origin", "."]);
    git(dir, &["fetch", "-q", "origin"]);
}
