//! `operator-rs envtest`, the control-plane installer, end to end against a local releases
//! server (tests/envtest/server.rs): a good install from controller-tools' index format, the
//! cache that serves later runs without the network, and every refusal (a checksum mismatch, a
//! truncated download, a 404, an unknown version, an unreachable index with and without a
//! cache), each leaving nothing half-installed.

mod common;
#[path = "envtest/server.rs"]
mod server;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::{Run, run_env};
use server::{Reply, Server, archive_name, entries, fake_archive, index, sha512};

/// The versions the fixture server publishes, for this machine.
const VERSIONS: [&str; 3] = ["1.35.0", "1.36.1", "1.36.2"];

/// A server publishing `VERSIONS` as envtest archives, with its index at /envtest-releases.yaml.
fn releases() -> Server {
    let server = Server::start();
    let mut rows = Vec::new();
    let archives: Vec<(String, Vec<u8>)> = (VERSIONS.iter())
        .map(|v| (archive_name(v), fake_archive(v)))
        .collect();
    for (version, (name, bytes)) in VERSIONS.iter().zip(&archives) {
        server.route(&format!("/download/{name}"), Reply::Body(bytes.clone()));
        rows.push((
            *version,
            name.as_str(),
            sha512(bytes),
            server.url(&format!("/download/{name}")),
        ));
    }
    let rows: Vec<(&str, &str, &str, &str)> = (rows.iter())
        .map(|(v, n, h, l)| (*v, *n, h.as_str(), l.as_str()))
        .collect();
    server.route(
        "/envtest-releases.yaml",
        Reply::Body(index(&rows).into_bytes()),
    );
    server
}

/// `operator-rs envtest <args>` in `dir`, with `--bin-dir <bin>` and no inherited
/// KUBEBUILDER_ASSETS (some runs set it).
fn envtest(dir: &Path, bin: &Path, args: &[&str]) -> Run {
    let mut all = vec!["envtest", "--bin-dir", bin.to_str().unwrap()];
    all.extend_from_slice(args);
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_operator-rs"));
    command
        .args(&all)
        .current_dir(dir)
        .env_remove("KUBEBUILDER_ASSETS")
        .env_remove("OPERATOR_RS_ENVTEST_INDEX");
    command.output().expect("operator-rs runs").into()
}

/// The folder a version is installed in under `bin`.
fn version_dir(bin: &Path, version: &str) -> PathBuf {
    let (os, arch) = server::platform();
    bin.join("k8s").join(format!("{version}-{os}-{arch}"))
}

/// The run succeeded and printed `dir` alone.
fn assert_prints(run: &Run, dir: &Path) {
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, format!("{}\n", dir.display()), "{}", run.stderr);
}

fn assert_refused(run: &Run, says: &[&str]) {
    assert_ne!(run.code, 0, "succeeded: {}", run.stdout);
    assert!(run.stdout.is_empty(), "printed a folder: {}", run.stdout);
    for s in says {
        assert!(run.stderr.contains(s), "no `{s}` in:\n{}", run.stderr);
    }
}

/// Nothing at all, or only the versions named, in the store: no temporary file or folder left.
fn assert_store_holds(bin: &Path, versions: &[&str]) {
    let (os, arch) = server::platform();
    let expected: Vec<String> = (versions.iter())
        .map(|v| format!("{v}-{os}-{arch}"))
        .collect();
    assert_eq!(entries(&bin.join("k8s")), expected, "in {}", bin.display());
}

#[test]
fn installs_the_newest_matching_release_and_prints_its_folder() {
    let server = releases();
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let index = server.url("/envtest-releases.yaml");
    let run = envtest(tmp.path(), &bin, &["1.36.x", "--index", &index]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let dir = version_dir(&bin, "1.36.2");
    assert_eq!(run.stdout, format!("{}\n", dir.display()));
    for binary in ["etcd", "kube-apiserver", "kubectl"] {
        let path = dir.join(binary);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert!(mode & 0o111 != 0, "{binary} is not executable: {mode:o}");
        let out = std::process::Command::new(&path).output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{binary} 1.36.2\n")
        );
    }
    assert_store_holds(&bin, &["1.36.2"]);
    assert!(
        run.stderr.contains("installed envtest 1.36.2"),
        "{}",
        run.stderr
    );

    // A folder that lost a binary is no installed version: the next run installs it again.
    std::fs::remove_file(dir.join("etcd")).unwrap();
    let run = envtest(tmp.path(), &bin, &["1.36.x", "--index", &index]);
    assert_prints(&run, &dir);
    assert!(dir.join("etcd").is_file());
    assert_store_holds(&bin, &["1.36.2"]);

    // `-p env`, and an exact version beside it.
    let run = envtest(
        tmp.path(),
        &bin,
        &["1.35.0", "--index", &index, "-p", "env"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        format!(
            "export KUBEBUILDER_ASSETS={}\n",
            version_dir(&bin, "1.35.0").display()
        )
    );
    assert_store_holds(&bin, &["1.35.0", "1.36.2"]);
}

#[test]
fn the_default_folder_is_the_per_user_cache_and_a_relative_bin_dir_prints_absolute() {
    let server = releases();
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("xdg-cache");
    let index = server.url("/envtest-releases.yaml");
    let run = run_env(
        tmp.path(),
        &["envtest", "1.36.1", "--index", &index],
        &[
            ("XDG_CACHE_HOME", cache.to_str().unwrap()),
            ("KUBEBUILDER_ASSETS", ""),
        ],
    );
    let dir = version_dir(&cache.join("operator-rs/envtest"), "1.36.1");
    assert_prints(&run, &dir);
    assert!(dir.join("kube-apiserver").is_file());

    // -C and a relative --bin-dir: the folder printed is absolute, under -C's folder.
    let run = run_env(
        Path::new("/"),
        &[
            "-C",
            tmp.path().to_str().unwrap(),
            "envtest",
            "--bin-dir",
            "rel",
            "1.36.1",
            "--index",
            &index,
        ],
        &[("KUBEBUILDER_ASSETS", "")],
    );
    assert_prints(&run, &version_dir(&tmp.path().join("rel"), "1.36.1"));
}

#[test]
fn a_second_run_is_served_from_the_cache_without_the_network() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let index;
    let first = {
        let server = releases();
        index = server.url("/envtest-releases.yaml");
        let run = envtest(tmp.path(), &bin, &["1.36.x", "--index", &index]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let requested = server.requests();
        assert_eq!(
            requested,
            [
                "/envtest-releases.yaml".to_string(),
                format!("/download/{}", archive_name("1.36.2"))
            ]
        );
        run.stdout
    };
    // The server is gone: its port refuses connections.
    for args in [
        vec!["1.36.x", "--index", index.as_str()],
        vec!["1.36.2", "--index", index.as_str()],
        vec!["-i", "1.36"],
        vec!["-i"],
        vec!["latest", "--index", index.as_str()],
    ] {
        let run = envtest(tmp.path(), &bin, &args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, first, "{args:?}");
        assert!(
            !run.stderr.contains("installing"),
            "{args:?}: {}",
            run.stderr
        );
    }
    // `!` reads the index for a newer patch release: offline, it says so.
    let run = envtest(tmp.path(), &bin, &["1.36.x!", "--index", &index]);
    assert_refused(&run, &["could not read the envtest releases index", "-i"]);
}

#[test]
fn a_checksum_mismatch_installs_nothing() {
    let server = Server::start();
    let name = archive_name("1.36.2");
    server.route("/a.tar.gz", Reply::Body(fake_archive("1.36.2")));
    let wrong = sha512(b"another archive");
    let rows = index(&[("1.36.2", &name, &wrong, &server.url("/a.tar.gz"))]);
    server.route("/index.yaml", Reply::Body(rows.into_bytes()));
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let run = envtest(
        tmp.path(),
        &bin,
        &["1.36.2", "--index", &server.url("/index.yaml")],
    );
    assert_refused(
        &run,
        &[
            "has SHA-512",
            &wrong,
            "nothing was installed",
            "Run the command again",
        ],
    );
    assert_store_holds(&bin, &[]);
}

#[test]
fn a_truncated_download_installs_nothing() {
    let server = Server::start();
    let name = archive_name("1.36.2");
    let bytes = fake_archive("1.36.2");
    let sent = bytes.len() / 2;
    let hash = sha512(&bytes);
    server.route(
        "/a.tar.gz",
        Reply::Truncated {
            body: bytes.clone(),
            sent,
        },
    );
    let rows = index(&[("1.36.2", &name, &hash, &server.url("/a.tar.gz"))]);
    server.route("/index.yaml", Reply::Body(rows.into_bytes()));
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let run = envtest(
        tmp.path(),
        &bin,
        &["1.36.2", "--index", &server.url("/index.yaml")],
    );
    assert_refused(
        &run,
        &[
            "truncated",
            &format!("after {sent} of {} bytes", bytes.len()),
            "nothing was installed",
        ],
    );
    assert_store_holds(&bin, &[]);
}

#[test]
fn a_missing_archive_or_index_is_refused_with_the_status() {
    let server = Server::start();
    let name = archive_name("1.36.2");
    let hash = sha512(&fake_archive("1.36.2"));
    let rows = index(&[("1.36.2", &name, &hash, &server.url("/gone.tar.gz"))]);
    server.route("/index.yaml", Reply::Body(rows.into_bytes()));
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let run = envtest(
        tmp.path(),
        &bin,
        &["1.36.2", "--index", &server.url("/index.yaml")],
    );
    assert_refused(
        &run,
        &["/gone.tar.gz answered HTTP 404", "nothing was installed"],
    );
    assert_store_holds(&bin, &[]);

    let run = envtest(
        tmp.path(),
        &bin,
        &["1.36.2", "--index", &server.url("/nothing.yaml")],
    );
    assert_refused(
        &run,
        &[
            "could not read the envtest releases index",
            "HTTP 404",
            "operator-rs envtest -i",
        ],
    );
}

#[test]
fn a_redirected_download_is_followed() {
    let server = Server::start();
    let name = archive_name("1.36.2");
    let bytes = fake_archive("1.36.2");
    server.route(
        "/releases/a.tar.gz",
        Reply::Redirect("/objects/a.tar.gz".into()),
    );
    server.route("/objects/a.tar.gz", Reply::Body(bytes.clone()));
    let rows = index(&[(
        "1.36.2",
        &name,
        &sha512(&bytes),
        &server.url("/releases/a.tar.gz"),
    )]);
    server.route("/index.yaml", Reply::Body(rows.into_bytes()));
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let run = envtest(
        tmp.path(),
        &bin,
        &["1.36.2", "--index", &server.url("/index.yaml")],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_store_holds(&bin, &["1.36.2"]);
}

#[test]
fn an_unknown_or_malformed_version_is_refused_naming_what_exists() {
    let server = releases();
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let index = server.url("/envtest-releases.yaml");
    let (os, arch) = server::platform();
    let run = envtest(tmp.path(), &bin, &["1.99.x", "--index", &index]);
    assert_refused(
        &run,
        &[
            &format!("has no release matching 1.99.x for {os}/{arch}"),
            "newest first: 1.36.2, 1.36.1, 1.35.0",
            "e.g. operator-rs envtest 1.36.2",
        ],
    );
    for bad in ["one.two", "1", ">1.36"] {
        let run = envtest(tmp.path(), &bin, &[bad, "--index", &index]);
        assert_refused(
            &run,
            &[
                &format!("`{bad}` is not a Kubernetes version"),
                "1.36.x",
                "e.g. operator-rs envtest 1.36.x",
            ],
        );
    }
    assert_store_holds(&bin, &[]);

    // An archive without the binaries, its checksum right: not an envtest archive.
    let bytes = server::archive(&[("README", b"hello")]);
    server.route("/empty.tar.gz", Reply::Body(bytes.clone()));
    let rows = server::index(&[(
        "1.36.2",
        &archive_name("1.36.2"),
        &sha512(&bytes),
        &server.url("/empty.tar.gz"),
    )]);
    server.route("/empty.yaml", Reply::Body(rows.into_bytes()));
    let run = envtest(
        tmp.path(),
        &bin,
        &["1.36.2", "--index", &server.url("/empty.yaml")],
    );
    assert_refused(
        &run,
        &[
            "has no etcd nor kube-apiserver",
            "not an envtest archive",
            "nothing was installed",
        ],
    );
    // A file that is no index.
    server.route("/not-an-index", Reply::Body(b"<html>hello</html>".to_vec()));
    let run = envtest(
        tmp.path(),
        &bin,
        &["1.36.2", "--index", &server.url("/not-an-index")],
    );
    assert_refused(&run, &["not an envtest releases index"]);
    assert_store_holds(&bin, &[]);
}

#[test]
fn offline_without_a_cache_says_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    // A port nothing listens on.
    let index = {
        let server = Server::start();
        server.url("/envtest-releases.yaml")
    };
    let run = envtest(tmp.path(), &bin, &["1.36.x", "--index", &index]);
    assert_refused(
        &run,
        &[
            "could not read the envtest releases index",
            "offline? `operator-rs envtest -i`",
            "(installed: none)",
            "--index",
        ],
    );
    let run = envtest(tmp.path(), &bin, &["-i", "1.36.x"]);
    assert_refused(
        &run,
        &[
            "no installed envtest version matches 1.36.x",
            "installed: none",
            "without -i",
        ],
    );
    assert!(!bin.join("k8s").join("1.36.2").exists());
}

#[test]
fn an_index_file_may_name_archives_beside_it() {
    // What CI or a mirror uses: an index file whose selfLinks are paths relative to it.
    let tmp = tempfile::tempdir().unwrap();
    let mirror = tmp.path().join("mirror");
    std::fs::create_dir_all(&mirror).unwrap();
    let bytes = fake_archive("1.36.2");
    let name = archive_name("1.36.2");
    std::fs::write(mirror.join(&name), &bytes).unwrap();
    let file = mirror.join("envtest-releases.yaml");
    std::fs::write(&file, index(&[("1.36.2", &name, &sha512(&bytes), &name)])).unwrap();
    let bin = tmp.path().join("bin");
    let run = run_env(
        tmp.path(),
        &["envtest", "--bin-dir", bin.to_str().unwrap(), "1.36.x"],
        &[
            ("OPERATOR_RS_ENVTEST_INDEX", file.to_str().unwrap()),
            ("KUBEBUILDER_ASSETS", ""),
        ],
    );
    assert_prints(&run, &version_dir(&bin, "1.36.2"));
}

#[test]
fn use_env_prints_kubebuilder_assets_when_it_holds_a_control_plane() {
    let server = releases();
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let index = server.url("/envtest-releases.yaml");
    let installed = envtest(tmp.path(), &bin, &["1.35.0", "--index", &index]);
    assert_eq!(installed.code, 0, "{}", installed.stderr);
    let assets = installed.stdout.trim_end().to_string();
    let before = server.requests().len();
    let run = run_env(
        tmp.path(),
        &[
            "envtest",
            "--bin-dir",
            bin.to_str().unwrap(),
            "--use-env",
            "1.36.x",
            "--index",
            &index,
        ],
        &[("KUBEBUILDER_ASSETS", &assets)],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim_end(), assets);
    assert_eq!(server.requests().len(), before, "--use-env read the index");

    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let run = run_env(
        tmp.path(),
        &["envtest", "--bin-dir", bin.to_str().unwrap(), "--use-env"],
        &[("KUBEBUILDER_ASSETS", empty.to_str().unwrap())],
    );
    assert_refused(
        &run,
        &[
            "KUBEBUILDER_ASSETS=",
            "has no executable etcd nor kube-apiserver",
            "unset it",
        ],
    );

    // Unset (or empty), --use-env installs as without it.
    let run = run_env(
        tmp.path(),
        &[
            "envtest",
            "--bin-dir",
            bin.to_str().unwrap(),
            "--use-env",
            "1.36.x",
            "--index",
            &index,
        ],
        &[("KUBEBUILDER_ASSETS", "")],
    );
    assert_prints(&run, &version_dir(&bin, "1.36.2"));
}

#[test]
fn in_a_project_the_default_version_is_the_projects_kubernetes() {
    let server = releases();
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::write(tmp.path().join("PROJECT"), "domain: example.com\n").unwrap();
    std::fs::write(
        tmp.path().join("Cargo.toml"),
        "[package]\nname = \"p\"\n\n[dependencies]\nk8s-openapi = { version = \"0.29.0\", features = [\"std\", \"v1_35\"] }\n",
    )
    .unwrap();
    let index = server.url("/envtest-releases.yaml");
    let run = envtest(tmp.path(), &bin, &["--index", &index]);
    assert_prints(&run, &version_dir(&bin, "1.35.0"));

    // Outside a project: the latest installed one, else the index's latest (`latest!`: the
    // index's, installed or not).
    let outside = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    let run = envtest(&outside, &bin, &["--index", &index]);
    assert_prints(&run, &version_dir(&bin, "1.35.0"));
    let run = envtest(&outside, &bin, &["latest!", "--index", &index]);
    assert_prints(&run, &version_dir(&bin, "1.36.2"));
    let fresh = tmp.path().join("fresh");
    let run = envtest(&outside, &fresh, &["--index", &index]);
    assert_prints(&run, &version_dir(&fresh, "1.36.2"));
}
