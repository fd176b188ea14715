//! Our verdict against the real kube-apiserver's: every case of `tests/crdgen_cases/` is generated
//! without our checks and created on a real API server (etcd + kube-apiserver started here, flags
//! of /work/shared/k8s/README.md); the API server must refuse exactly the CRDs we refuse.
//! Needs `KUBEBUILDER_ASSETS` (`export KUBEBUILDER_ASSETS=$(/work/shared/k8s/install.sh)`);
//! without it the test prints one line and is skipped.

mod crdgen_cases;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crdgen_cases::{cases, crate_of, project};
use operator_rs::crdgen;
use operator_rs::workspace::DiskTree;

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

struct ControlPlane {
    _etcd: Killed,
    _apiserver: Killed,
    kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

fn start(assets: &Path) -> ControlPlane {
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

#[test]
fn apiserver_refuses_what_we_refuse() {
    let Some(assets) = std::env::var_os("KUBEBUILDER_ASSETS") else {
        eprintln!(
            "SKIPPED crdgen_apiserver: KUBEBUILDER_ASSETS is unset (export KUBEBUILDER_ASSETS=$(/work/shared/k8s/install.sh))"
        );
        return;
    };
    let cp = start(Path::new(&assets));
    let mut disagreements = Vec::new();
    // The cases, then every fixture of the differential tests (each in its own crate).
    let mut crates: Vec<(String, tempfile::TempDir)> = cases()
        .into_iter()
        .map(|c| (c.name.to_string(), crate_of(&c.body)))
        .collect();
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/crdgen");
    for e in std::fs::read_dir(&fixtures).unwrap() {
        let p = e.unwrap().path();
        let Some(name) = p.file_stem().and_then(|n| n.to_str()) else {
            continue;
        };
        if p.extension().is_some_and(|x| x == "rs") {
            let dir = crate_of("");
            std::fs::write(dir.path().join("src/lib.rs"), format!("pub mod {name};\n")).unwrap();
            std::fs::copy(&p, dir.path().join(format!("src/{name}.rs"))).unwrap();
            crates.push((format!("fixture {name}"), dir));
        }
    }
    for (name, dir) in &crates {
        let tree = DiskTree::new(dir.path());
        let ours = crdgen::crds(&tree, &project());
        let Ok(unchecked) = crdgen::crds_unchecked(&tree, &project()) else {
            continue; // Refused before any check (a storage-version question, a too-large CRD...).
        };
        let file = dir.path().join("crd.yaml");
        let docs: Vec<String> = unchecked.iter().map(|k| crdgen::to_yaml(&k.crd)).collect();
        std::fs::write(&file, docs.join("---\n")).unwrap();
        let out = Command::new("kubectl")
            .args(["--kubeconfig", cp.kubeconfig.to_str().unwrap()])
            .args(["create", "-f", file.to_str().unwrap()])
            .output()
            .unwrap();
        let theirs = String::from_utf8_lossy(&out.stderr).to_string();
        eprintln!(
            "{name}: ours {}, kube-apiserver {}",
            match &ours {
                Ok(_) => "accepts".to_string(),
                Err(e) => format!("refuses ({e})"),
            },
            if out.status.success() {
                "accepts".to_string()
            } else {
                format!("refuses ({})", theirs.trim())
            }
        );
        if ours.is_ok() != out.status.success() {
            disagreements.push(name.clone());
        }
    }
    assert!(
        disagreements.is_empty(),
        "kube-apiserver and generate crds disagree on {disagreements:?}"
    );
}
