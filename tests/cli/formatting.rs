//! Generated Rust is rustfmt-clean as rendered, whatever the names: short and very long project
//! names and kinds (up to the 63-character limit) move line breaks in naive templates, so the
//! templates keep every name-dependent token where rustfmt's layout cannot depend on its length.
//! Runs `rustfmt --check` (no build), so it is quick.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::*;

fn rust_files(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = snapshot(dir)
        .into_keys()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    files
}

fn assert_rustfmt_clean(dir: &Path) {
    let files = rust_files(dir);
    let out = Command::new("rustfmt")
        .args(["--edition", "2024", "--check"])
        .args(&files)
        .current_dir(dir)
        .output()
        .expect("rustfmt is installed with the toolchain");
    assert!(
        out.status.success(),
        "generated Rust in {} is not rustfmt-clean:\n{}{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn scaffold(project: &str, kinds: &[(&str, &str, &[&str])]) -> tempfile::TempDir {
    let tmp = init_project(project);
    let dir = project_dir(&tmp, project);
    for (group, kind, extra) in kinds {
        let mut args = vec![
            "create",
            "api",
            "--group",
            group,
            "--version",
            "v1",
            "--kind",
            kind,
        ];
        args.extend_from_slice(extra);
        ok(&dir, &args);
    }
    tmp
}

const LONG_KIND: &str = "RedisClusterWithAnExtraordinarilyLongKindNameForFormattingX";

#[test]
fn short_names_render_rustfmt_clean() {
    let tmp = scaffold(
        "a",
        &[
            ("b", "C", &[]),
            (
                "b",
                "D",
                &[
                    "--image",
                    "d:1",
                    "--image-container-port",
                    "80",
                    "--run-as-user",
                    "1",
                ],
            ),
            ("b", "E", &["--namespaced=false"]),
            ("apps", "Deployment", &["--resource=false"]),
        ],
    );
    assert_rustfmt_clean(&project_dir(&tmp, "a"));
}

#[test]
fn long_names_render_rustfmt_clean() {
    // 59 characters, the longest kind: its listKind (+"List") is the 63 of a DNS-1035 label.
    assert_eq!(LONG_KIND.len(), 59);
    // The longest project name init takes (28: `<name>-controller-manager-metrics-service` is a
    // 63-character DNS-1035 label).
    let project = "zz-operator-project-long-nam";
    assert_eq!(project.len(), 28);
    let tmp = scaffold(
        project,
        &[
            ("a-rather-long-api-group-name", LONG_KIND, &[]),
            (
                "a-rather-long-api-group-name",
                "MemcachedDeploymentWithAVeryLongNameToo",
                &[
                    "--image",
                    "registry.example.com/some/long/path/memcached:1.6.21",
                    "--image-container-port",
                    "11211",
                    "--image-container-command",
                    "memcached,--memory-limit=64,--threads=4",
                    "--run-as-user",
                    "1001",
                ],
            ),
            (
                "a-rather-long-api-group-name",
                "ClusterScopedKindWithALongName",
                &["--namespaced=false"],
            ),
            ("networking", "IngressClass", &["--resource=false"]),
        ],
    );
    assert_rustfmt_clean(&project_dir(&tmp, project));
}

/// The manager's settings change `src/main.rs`'s `Manager::new` chain: each combination of
/// `--namespaced` and `--sharded` renders rustfmt-clean (both at once break the chain as
/// rustfmt does).
#[test]
fn every_manager_setting_renders_rustfmt_clean() {
    for flags in [
        &["--namespaced"][..],
        &["--sharded"],
        &["--namespaced", "--sharded"],
    ] {
        let tmp = tempfile::Builder::new()
            .prefix("operator-rs-test-")
            .tempdir()
            .unwrap();
        let dir = tmp.path().join("settings-op");
        std::fs::create_dir(&dir).unwrap();
        let mut init = vec!["init", "--domain", "example.com"];
        init.extend_from_slice(flags);
        ok(&dir, &init);
        assert_rustfmt_clean(&dir);
    }
}
