//! A real control plane for the tests that take kube-apiserver's verdict: etcd and kube-apiserver
//! from `$KUBEBUILDER_ASSETS` (flags of /work/shared/k8s/README.md), driven with kubectl.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A process killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub struct ControlPlane {
    _etcd: Killed,
    _apiserver: Killed,
    pub kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

/// Start etcd and kube-apiserver and wait until the API server is ready.
pub fn start(assets: &Path) -> ControlPlane {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (p1, p2, p3) = (free_port(), free_port(), free_port());
    let log = |name: &str| std::fs::File::create(d.join(name)).unwrap();
    let etcd = Killed(
        Command::new(assets.join("etcd"))
            .args(["--data-dir", d.join("etcd").to_str().unwrap()])
            .args(["--listen-client-urls", &format!("http://127.0.0.1:{p1}")])
            .args(["--advertise-client-urls", &format!("http://127.0.0.1:{p1}")])
            .args(["--listen-peer-urls", &format!("http://127.0.0.1:{p2}")])
            .arg("--unsafe-no-fsync")
            .stdout(log("etcd.out"))
            .stderr(log("etcd.err"))
            .spawn()
            .expect("etcd starts"),
    );
    let status = Command::new("openssl")
        .args(["genrsa", "-out", d.join("sa.key").to_str().unwrap(), "2048"])
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "openssl genrsa");
    let status = Command::new("openssl")
        .args(["rsa", "-in", d.join("sa.key").to_str().unwrap(), "-pubout"])
        .args(["-out", d.join("sa.pub").to_str().unwrap()])
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "openssl rsa -pubout");
    std::fs::write(
        d.join("tokens.csv"),
        "admin-token,admin,1,\"system:masters\"\n",
    )
    .unwrap();
    let apiserver = Killed(
        Command::new(assets.join("kube-apiserver"))
            .args(["--etcd-servers", &format!("http://127.0.0.1:{p1}")])
            .args([
                "--bind-address",
                "127.0.0.1",
                "--advertise-address",
                "127.0.0.1",
            ])
            .args(["--secure-port", &p3.to_string()])
            .args(["--cert-dir", d.join("certs").to_str().unwrap()])
            .args(["--token-auth-file", d.join("tokens.csv").to_str().unwrap()])
            .args(["--authorization-mode", "RBAC"])
            .args(["--service-account-issuer", "https://kubernetes.default.svc"])
            .args([
                "--service-account-key-file",
                d.join("sa.pub").to_str().unwrap(),
            ])
            .args([
                "--service-account-signing-key-file",
                d.join("sa.key").to_str().unwrap(),
            ])
            .args(["--service-cluster-ip-range", "10.96.0.0/16"])
            .stdout(log("apiserver.out"))
            .stderr(log("apiserver.err"))
            .spawn()
            .expect("kube-apiserver starts"),
    );
    let kubeconfig = d.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: t\n  cluster:\n    server: https://127.0.0.1:{p3}\n    insecure-skip-tls-verify: true\nusers:\n- name: admin\n  user:\n    token: admin-token\ncontexts:\n- name: t\n  context:\n    cluster: t\n    user: admin\ncurrent-context: t\n"
        ),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let ready = Command::new("kubectl")
            .args(["--kubeconfig", kubeconfig.to_str().unwrap()])
            .args(["get", "--raw", "/readyz"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if ready {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "kube-apiserver not ready in 90 s: {}",
            std::fs::read_to_string(d.join("apiserver.err")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    ControlPlane {
        _etcd: etcd,
        _apiserver: apiserver,
        kubeconfig,
        _dir: dir,
    }
}

/// The assets folder, or None after printing a visible `SKIPPED` line for `test`.
pub fn assets(test: &str) -> Option<PathBuf> {
    match std::env::var_os("KUBEBUILDER_ASSETS") {
        Some(a) => Some(PathBuf::from(a)),
        None => {
            eprintln!(
                "SKIPPED {test}: KUBEBUILDER_ASSETS is unset (export KUBEBUILDER_ASSETS=$(/work/shared/k8s/install.sh))"
            );
            None
        }
    }
}

/// `kubectl <args>` with `object` (JSON) on stdin: `Err` with kubectl's message when it fails.
pub fn kubectl_with(
    cp: &ControlPlane,
    args: &[&str],
    object: &serde_json::Value,
) -> Result<String, String> {
    let mut child = Command::new("kubectl")
        .args(["--kubeconfig", cp.kubeconfig.to_str().unwrap()])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(object.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// Create `object` as a server-side dry run: `Err` with the API server's message when it refuses.
pub fn dry_run(cp: &ControlPlane, object: &serde_json::Value) -> Result<(), String> {
    kubectl_with(cp, &["create", "--dry-run=server", "-f", "-"], object).map(|_| ())
}

/// `kubectl <args>`: its stdout, or `Err` with its message.
pub fn kubectl(cp: &ControlPlane, args: &[&str]) -> Result<String, String> {
    let out = Command::new("kubectl")
        .args(["--kubeconfig", cp.kubeconfig.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}
