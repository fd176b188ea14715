//! The folder `operator-rs envtest` installs runs a control plane: an envtest archive made from
//! the real etcd and kube-apiserver (those of $KUBEBUILDER_ASSETS), served by a local releases
//! server, installed by the CLI, then started by the runtime's envtest with KUBEBUILDER_ASSETS
//! set to the folder it printed. Its own test binary: the test sets KUBEBUILDER_ASSETS for the
//! process, which only one test at a time may do.

#[path = "envtest/server.rs"]
mod server;

use std::path::PathBuf;
use std::process::Command;

use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use operator_rs_runtime::testing::envtest::Envtest;
use server::{Reply, Server, archive_name, index, sha512};

#[test]
fn the_installed_folder_runs_a_control_plane() {
    if !Envtest::available() {
        return;
    }
    let source = PathBuf::from(std::env::var_os("KUBEBUILDER_ASSETS").unwrap());
    let tmp = tempfile::tempdir().unwrap();

    // envtest-v1.36.2-<os>-<arch>.tar.gz as controller-tools packs it (gzip -1: seconds, not minutes).
    let stage = tmp.path().join("stage/controller-tools/envtest");
    std::fs::create_dir_all(&stage).unwrap();
    for binary in ["etcd", "kube-apiserver"] {
        std::os::unix::fs::symlink(source.join(binary), stage.join(binary)).unwrap();
    }
    let name = archive_name("1.36.2");
    let archive = tmp.path().join(&name);
    let packed = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "tar -chf - -C '{}' controller-tools | gzip -1 > '{}'",
            tmp.path().join("stage").display(),
            archive.display()
        ))
        .status()
        .unwrap();
    assert!(packed.success(), "tar | gzip failed");
    let bytes = std::fs::read(&archive).unwrap();

    let server = Server::start();
    server.route(&format!("/{name}"), Reply::Body(bytes.clone()));
    let rows = index(&[(
        "1.36.2",
        &name,
        &sha512(&bytes),
        &server.url(&format!("/{name}")),
    )]);
    server.route("/envtest-releases.yaml", Reply::Body(rows.into_bytes()));

    let bin = tmp.path().join("bin");
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_operator-rs"))
        .args(["envtest", "1.36.x", "--bin-dir", bin.to_str().unwrap()])
        .args(["--index", &server.url("/envtest-releases.yaml")])
        .env_remove("KUBEBUILDER_ASSETS")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!(
        "installed {} MB of envtest archive in {:?}",
        bytes.len() / 1_000_000,
        started.elapsed()
    );
    let installed = String::from_utf8(out.stdout)
        .unwrap()
        .trim_end()
        .to_string();
    assert!(installed.starts_with(bin.to_str().unwrap()), "{installed}");

    // SAFETY: this test binary holds this one test, and nothing else runs on another thread yet.
    unsafe { std::env::set_var("KUBEBUILDER_ASSETS", &installed) };
    let env = Envtest::start().expect("the installed binaries start a control plane");
    assert!(
        !env.has_controller_manager(),
        "an envtest archive has no kube-controller-manager"
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let namespace = env.create_namespace("installed").await.unwrap();
        let namespaces: Api<Namespace> = Api::all(env.client().unwrap());
        let got = namespaces.get(&namespace).await.unwrap();
        assert_eq!(got.metadata.name.as_deref(), Some(namespace.as_str()));
    });
    env.stop();
}
