//! End to end: scaffold real projects and hold them to our own bar with cargo itself — build,
//! `clippy --all-targets -D warnings`, `fmt --check`, and their own tests — then render their
//! `config/default` with kubectl. Every generated build shares one target directory so kube and
//! k8s-openapi compile once per run (`target/generated-projects`, or $OPERATOR_RS_TEST_TARGET_DIR).
//!
//! The reference project's own end-to-end suite (`tests/e2e.rs`, manager binary included) then
//! runs against `scripts/fake-apiserver.py`, an in-memory stand-in for kube-apiserver: this
//! machine has no cluster. What it emulates, and what it does not, is written at its top.

mod common;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use std::sync::Mutex;

use common::*;

/// Cargo builds of generated projects run one at a time: they share a target directory.
static CARGO: Mutex<()> = Mutex::new(());

fn shared_target_dir() -> PathBuf {
    std::env::var_os("OPERATOR_RS_TEST_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/generated-projects"))
}

fn cargo(dir: &Path, args: &[&str]) {
    cargo_with(dir, args, &[]);
}

fn cargo_with(dir: &Path, args: &[&str], envs: &[(&str, &str)]) {
    let out = Command::new(env!("CARGO"))
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", shared_target_dir())
        // The generated project is its own workspace, not a member of ours.
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "`cargo {}` failed in the generated project {}:\nstdout:\n{}\nstderr:\n{}",
        args.join(" "),
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The bar every generated project is held to.
fn build_lint_test(dir: &Path) {
    let _guard = CARGO.lock().unwrap_or_else(|e| e.into_inner());
    cargo(dir, &["fmt", "--check"]);
    cargo(dir, &["build", "--all-targets"]);
    cargo(dir, &["clippy", "--all-targets", "--", "-D", "warnings"]);
    cargo(dir, &["test"]);
}

#[test]
fn a_project_with_no_api_builds_lints_and_passes_its_tests() {
    let tmp = init_project("bare-operator");
    let dir = project_dir(&tmp, "bare-operator");
    build_lint_test(&dir);
}

#[test]
fn the_reference_project_builds_lints_passes_its_tests_and_renders() {
    let tmp = reference_project("memcached-operator");
    let dir = project_dir(&tmp, "memcached-operator");
    // What create api wrote is what the generators produce.
    ok(&dir, &["generate", "manifests", "--check"]);
    build_lint_test(&dir);
    let docs = kustomize(&dir, "config/default");
    assert_eq!(of_kind(&docs, "CustomResourceDefinition").len(), 3);
    assert_eq!(of_kind(&docs, "Deployment").len(), 1);
    assert!(!of_kind(&docs, "ClusterRole").is_empty());

    // Its end-to-end suite, at-scale tests included (with few objects: this checks the
    // harness and the manager's behaviour, not figures).
    let server = FakeApiServer::start();
    let kubeconfig = server.kubeconfig.to_str().unwrap();
    let envs = [("KUBECONFIG", kubeconfig), ("E2E_OBJECTS", "40")];
    let _guard = CARGO.lock().unwrap_or_else(|e| e.into_inner());
    let e2e = ["test", "--test", "e2e", "--", "--ignored", "--test-threads=1"];
    cargo_with(&dir, &e2e, &envs);
}

/// `scripts/fake-apiserver.py` on a free port, with a kubeconfig for it; stopped on drop.
struct FakeApiServer {
    child: Child,
    kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

impl FakeApiServer {
    fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/fake-apiserver.py");
        let child = Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs scripts/fake-apiserver.py");
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        let config = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: fake\n\
             clusters: [{{name: fake, cluster: {{server: \"http://127.0.0.1:{port}\"}}}}]\n\
             contexts: [{{name: fake, context: {{cluster: fake, user: fake, namespace: default}}}}]\n\
             users: [{{name: fake, user: {{token: fake}}}}]\n"
        );
        std::fs::write(&kubeconfig, config).unwrap();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(addr).is_err() {
            assert!(Instant::now() < deadline, "the fake API server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self {
            child,
            kubeconfig,
            _dir: dir,
        }
    }
}

impl Drop for FakeApiServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
