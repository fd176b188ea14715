//! The CLI's tests that take kube-apiserver's verdict drive it with kubectl: this is that
//! kubectl over the runtime's envtest (`Envtest::shared()`: one etcd and kube-apiserver from
//! `$KUBEBUILDER_ASSETS` per test binary, started by the first test that asks, stopped when the
//! binary exits). The only way these tests start a control plane.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use operator_rs_runtime::testing::envtest::{ASSETS_VAR, Envtest};

/// The test binary's control plane, as kubectl reaches it.
pub struct ControlPlane {
    /// An admin kubeconfig (group `system:masters`).
    pub kubeconfig: PathBuf,
    env: &'static Envtest,
}

impl ControlPlane {
    /// The envtest behind it, for a test that wants a `kube::Client`.
    pub fn envtest(&self) -> &'static Envtest {
        self.env
    }
}

/// The binary's shared control plane (started on first use; it waits until kube-apiserver is
/// ready). `assets` is what [`assets`] returned: envtest reads the same `$KUBEBUILDER_ASSETS`.
pub fn start(assets: &Path) -> ControlPlane {
    let env = Envtest::shared().unwrap_or_else(|err| {
        panic!(
            "the control plane from {} does not start: {err}",
            assets.display()
        )
    });
    ControlPlane {
        kubeconfig: env.kubeconfig().to_path_buf(),
        env,
    }
}

/// The assets folder, or None after printing a visible `SKIPPED` line for `test`.
pub fn assets(test: &str) -> Option<PathBuf> {
    let assets = std::env::var_os(ASSETS_VAR).filter(|dir| !dir.is_empty());
    if let Some(dir) = assets {
        return Some(PathBuf::from(dir));
    }
    eprintln!(
        "SKIPPED {test}: {ASSETS_VAR} is unset (export {ASSETS_VAR}=$(/work/shared/k8s/install.sh))"
    );
    None
}

/// `kubectl <args>` with `object` (JSON) on stdin: `Err` with kubectl's message when it fails.
pub fn kubectl_with(
    cp: &ControlPlane,
    args: &[&str],
    object: &serde_json::Value,
) -> Result<String, String> {
    let mut child = kubectl_command(cp, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(object.to_string().as_bytes())
        .unwrap();
    outcome(child.wait_with_output().unwrap())
}

/// Create `object` as a server-side dry run: `Err` with the API server's message when it refuses.
pub fn dry_run(cp: &ControlPlane, object: &serde_json::Value) -> Result<(), String> {
    kubectl_with(cp, &["create", "--dry-run=server", "-f", "-"], object).map(|_| ())
}

/// `kubectl <args>`: its stdout, or `Err` with its message.
pub fn kubectl(cp: &ControlPlane, args: &[&str]) -> Result<String, String> {
    outcome(kubectl_command(cp, args).output().expect("kubectl runs"))
}

fn kubectl_command(cp: &ControlPlane, args: &[&str]) -> Command {
    let mut command = Command::new("kubectl");
    command.arg("--kubeconfig").arg(&cp.kubeconfig).args(args);
    command
}

fn outcome(out: Output) -> Result<String, String> {
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}
